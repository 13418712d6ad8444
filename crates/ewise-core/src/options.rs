//! The options every device takes, whichever backend runs it.

use crate::error::{Error, Result};
use crate::level::FeatureLevel;
use crate::operator::NanPolicy;
use crate::validate::Extensions;

/// What a device is asked to be: its DirectML feature level, the minimum level the caller
/// needs, whether the ewise extensions are accepted, and the NaN policy of new SIGN
/// operators. The CPU and GPU device builders both take one.
///
/// The default is a strict DirectML device at the latest level (6_4), accepting any level
/// from 1_0, with [`NanPolicy::Zero`].
///
/// ```
/// use ewise_core::{DeviceOptions, Error, FeatureLevel};
///
/// let options = DeviceOptions::default()
///     .feature_level(FeatureLevel::L3_0)
///     .min_feature_level(FeatureLevel::L4_1);
/// assert_eq!(
///     options.check(),
///     Err(Error::FeatureLevelUnavailable {
///         requested: FeatureLevel::L4_1,
///         supported: FeatureLevel::L3_0,
///     })
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceOptions {
    /// The highest feature level the device supports: operators are validated against it.
    pub level: FeatureLevel,
    /// The minimum level the caller needs (`DMLCreateDevice1`'s `minimumFeatureLevel`).
    pub min_level: FeatureLevel,
    /// Whether operators may use the ewise extensions.
    pub extensions: Extensions,
    /// The NaN policy new SIGN operators start with.
    pub nan_policy: NanPolicy,
}

impl Default for DeviceOptions {
    fn default() -> Self {
        DeviceOptions {
            level: FeatureLevel::LATEST,
            min_level: FeatureLevel::L1_0,
            extensions: Extensions::Disabled,
            nan_policy: NanPolicy::Zero,
        }
    }
}

impl DeviceOptions {
    /// The highest feature level the device supports (default 6_4): operators are
    /// validated against it.
    pub fn feature_level(mut self, level: FeatureLevel) -> Self {
        self.level = level;
        self
    }

    /// The minimum level the caller needs (`DMLCreateDevice1`'s `minimumFeatureLevel`,
    /// default 1_0); [`DeviceOptions::check`], and so device creation, fails if the
    /// device's level is below it.
    pub fn min_feature_level(mut self, level: FeatureLevel) -> Self {
        self.min_level = level;
        self
    }

    /// Whether operators may use the ewise extensions (see [`Extensions`]; default
    /// [`Extensions::Disabled`], the strict DirectML rules).
    pub fn extensions(mut self, extensions: Extensions) -> Self {
        self.extensions = extensions;
        self
    }

    /// The NaN policy new SIGN operators start with (default [`NanPolicy::Zero`]).
    pub fn nan_policy(mut self, policy: NanPolicy) -> Self {
        self.nan_policy = policy;
        self
    }

    /// Checks the options as device creation does: [`Error::FeatureLevelUnavailable`]
    /// when the feature level is below the minimum level; a level equal to the minimum
    /// is accepted.
    pub fn check(&self) -> Result<()> {
        if self.level < self.min_level {
            return Err(Error::FeatureLevelUnavailable {
                requested: self.min_level,
                supported: self.level,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_a_strict_device_at_the_latest_level() {
        let o = DeviceOptions::default();
        assert_eq!(o.level, FeatureLevel::L6_4);
        assert_eq!(o.min_level, FeatureLevel::L1_0);
        assert_eq!(o.extensions, Extensions::Disabled);
        assert_eq!(o.nan_policy, NanPolicy::Zero);
        assert_eq!(o.check(), Ok(()));
    }

    #[test]
    fn setters_set_one_field_each() {
        let o = DeviceOptions::default()
            .feature_level(FeatureLevel::L3_1)
            .min_feature_level(FeatureLevel::L2_0)
            .extensions(Extensions::Enabled)
            .nan_policy(NanPolicy::Propagate);
        assert_eq!(
            (o.level, o.min_level, o.extensions, o.nan_policy),
            (
                FeatureLevel::L3_1,
                FeatureLevel::L2_0,
                Extensions::Enabled,
                NanPolicy::Propagate
            )
        );
        assert_eq!(
            DeviceOptions::default().feature_level(FeatureLevel::L2_1),
            DeviceOptions {
                level: FeatureLevel::L2_1,
                ..DeviceOptions::default()
            }
        );
    }

    #[test]
    fn check_accepts_a_level_at_or_above_the_minimum() {
        for level in FeatureLevel::ALL {
            for min in FeatureLevel::ALL.into_iter().filter(|&m| m <= level) {
                let o = DeviceOptions::default()
                    .feature_level(level)
                    .min_feature_level(min);
                assert_eq!(o.check(), Ok(()), "{level} with minimum {min}");
            }
        }
    }

    #[test]
    fn check_refuses_a_minimum_above_the_level() {
        let err = DeviceOptions::default()
            .feature_level(FeatureLevel::L3_0)
            .min_feature_level(FeatureLevel::L4_1)
            .check()
            .unwrap_err();
        assert_eq!(
            err,
            Error::FeatureLevelUnavailable {
                requested: FeatureLevel::L4_1,
                supported: FeatureLevel::L3_0,
            }
        );
        assert_eq!(
            err.to_string(),
            "device creation failed: minimum feature level 4_1 is above the highest this device supports (3_0)"
        );
    }
}
