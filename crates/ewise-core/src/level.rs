//! DirectML feature levels (`DML_FEATURE_LEVEL`).

use std::fmt;
use std::str::FromStr;

/// A DirectML feature level. Each level is a strict superset of the ones below it, so
/// levels compare by their numeric value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum FeatureLevel {
    /// `DML_FEATURE_LEVEL_1_0` (0x1000).
    L1_0 = 0x1000,
    /// `DML_FEATURE_LEVEL_2_0` (0x2000).
    L2_0 = 0x2000,
    /// `DML_FEATURE_LEVEL_2_1` (0x2100).
    L2_1 = 0x2100,
    /// `DML_FEATURE_LEVEL_3_0` (0x3000).
    L3_0 = 0x3000,
    /// `DML_FEATURE_LEVEL_3_1` (0x3100).
    L3_1 = 0x3100,
    /// `DML_FEATURE_LEVEL_4_0` (0x4000).
    L4_0 = 0x4000,
    /// `DML_FEATURE_LEVEL_4_1` (0x4100).
    L4_1 = 0x4100,
    /// `DML_FEATURE_LEVEL_5_0` (0x5000).
    L5_0 = 0x5000,
    /// `DML_FEATURE_LEVEL_5_1` (0x5100).
    L5_1 = 0x5100,
    /// `DML_FEATURE_LEVEL_5_2` (0x5200).
    L5_2 = 0x5200,
    /// `DML_FEATURE_LEVEL_6_0` (0x6000).
    L6_0 = 0x6000,
    /// `DML_FEATURE_LEVEL_6_1` (0x6100).
    L6_1 = 0x6100,
    /// `DML_FEATURE_LEVEL_6_2` (0x6200).
    L6_2 = 0x6200,
    /// `DML_FEATURE_LEVEL_6_3` (0x6300).
    L6_3 = 0x6300,
    /// `DML_FEATURE_LEVEL_6_4` (0x6400), the latest.
    L6_4 = 0x6400,
}

impl FeatureLevel {
    /// Every level, lowest first.
    pub const ALL: [FeatureLevel; 15] = [
        FeatureLevel::L1_0,
        FeatureLevel::L2_0,
        FeatureLevel::L2_1,
        FeatureLevel::L3_0,
        FeatureLevel::L3_1,
        FeatureLevel::L4_0,
        FeatureLevel::L4_1,
        FeatureLevel::L5_0,
        FeatureLevel::L5_1,
        FeatureLevel::L5_2,
        FeatureLevel::L6_0,
        FeatureLevel::L6_1,
        FeatureLevel::L6_2,
        FeatureLevel::L6_3,
        FeatureLevel::L6_4,
    ];

    /// The highest level ewise knows.
    pub const LATEST: FeatureLevel = FeatureLevel::L6_4;

    /// DirectML's numeric value (`0x6400` for 6_4).
    pub const fn raw(self) -> u32 {
        self as u32
    }

    /// The level with this numeric value, if any.
    pub fn from_raw(value: u32) -> Option<FeatureLevel> {
        FeatureLevel::ALL.into_iter().find(|l| l.raw() == value)
    }

    /// Major version (6 for 6_4).
    pub const fn major(self) -> u32 {
        self.raw() >> 12
    }

    /// Minor version (4 for 6_4).
    pub const fn minor(self) -> u32 {
        (self.raw() >> 8) & 0xF
    }
}

impl Default for FeatureLevel {
    fn default() -> Self {
        FeatureLevel::LATEST
    }
}

impl fmt::Display for FeatureLevel {
    /// Formats as DirectML's suffix: `6_4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.major(), self.minor())
    }
}

/// The text given was not a feature level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown feature level '{}' (accepted: 1_0, 2_0, 2_1, 3_0, 3_1, 4_0, 4_1, 5_0, 5_1, 5_2, 6_0, 6_1, 6_2, 6_3, 6_4, also written 6.4 or 0x6400)", crate::text::clip(.given))]
pub struct ParseFeatureLevelError {
    /// The text that was given.
    pub given: String,
}

impl FromStr for FeatureLevel {
    type Err = ParseFeatureLevelError;

    /// Accepts `6_4`, `6.4`, `DML_FEATURE_LEVEL_6_4` and `0x6400`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseFeatureLevelError {
            given: s.to_string(),
        };
        let t = s.trim();
        let t = t.strip_prefix("DML_FEATURE_LEVEL_").unwrap_or(t);
        if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            let v = u32::from_str_radix(hex, 16).map_err(|_| err())?;
            return FeatureLevel::from_raw(v).ok_or_else(err);
        }
        let (major, minor) = t
            .split_once('_')
            .or_else(|| t.split_once('.'))
            .ok_or_else(err)?;
        let major: u32 = major.parse().map_err(|_| err())?;
        let minor: u32 = minor.parse().map_err(|_| err())?;
        FeatureLevel::ALL
            .into_iter()
            .find(|l| l.major() == major && l.minor() == minor)
            .ok_or_else(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_names() {
        assert_eq!(FeatureLevel::L6_4.raw(), 0x6400);
        assert_eq!(FeatureLevel::L2_1.to_string(), "2_1");
        for l in FeatureLevel::ALL {
            assert_eq!(l.to_string().parse::<FeatureLevel>(), Ok(l));
            assert_eq!(format!("0x{:x}", l.raw()).parse::<FeatureLevel>(), Ok(l));
            assert_eq!(FeatureLevel::from_raw(l.raw()), Some(l));
        }
        assert_eq!("5.2".parse::<FeatureLevel>(), Ok(FeatureLevel::L5_2));
        assert_eq!(
            "DML_FEATURE_LEVEL_3_0".parse::<FeatureLevel>(),
            Ok(FeatureLevel::L3_0)
        );
        assert!("7_0".parse::<FeatureLevel>().is_err());
        assert!("abc".parse::<FeatureLevel>().is_err());
        assert!(FeatureLevel::ALL.windows(2).all(|w| w[0] < w[1]));
    }
}
