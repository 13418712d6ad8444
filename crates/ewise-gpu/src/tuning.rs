//! Tuning constants of the kernels, overridable per device for measurements
//! (`ewise bench --device gpu --gpu-loads-in-flight N --gpu-min-row-units N`): not part
//! of the supported interface; the defaults are what every device uses otherwise.

use crate::error::{GpuError, Result};
use crate::operator::MIN_ROW_UNITS;
use crate::shader::LOADS_IN_FLIGHT;

/// Largest [`Tuning::loads_in_flight`] accepted (the unroll factor of a kernel with one
/// input vector per unit: 16 units per invocation).
pub const MAX_LOADS_IN_FLIGHT: u32 = 16;

/// The kernels' tuning constants. Operators take the tuning of their device when they
/// are compiled ([`crate::GpuDevice::set_tuning`]); results are the same bits under any
/// tuning, only the speed differs.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tuning {
    /// Input vectors (16 bytes each) one invocation of the vector and row kernels aims
    /// to have in flight: the unroll factor is this divided by the input vectors of a
    /// unit, at least 1. A power of two from 1 to [`MAX_LOADS_IN_FLIGHT`].
    pub loads_in_flight: u32,
    /// Units (16 bytes of output) a row's body needs for the row kernel; rows with fewer
    /// stay in the strided walk. At least 1.
    pub min_row_units: u64,
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            loads_in_flight: LOADS_IN_FLIGHT,
            min_row_units: MIN_ROW_UNITS,
        }
    }
}

impl Tuning {
    /// This tuning, or [`GpuError::InvalidTuning`] naming what is out of range.
    pub fn validated(self) -> Result<Tuning> {
        let loads = self.loads_in_flight;
        if !loads.is_power_of_two() || loads > MAX_LOADS_IN_FLIGHT {
            return Err(GpuError::InvalidTuning {
                reason: format!(
                    "loads_in_flight {loads} is not a power of two from 1 to {MAX_LOADS_IN_FLIGHT}"
                ),
            });
        }
        if self.min_row_units == 0 {
            return Err(GpuError::InvalidTuning {
                reason: "min_row_units 0 is below 1 (a row's body holds at least one unit)".into(),
            });
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_the_constants_and_out_of_range_values_are_refused() {
        let d = Tuning::default();
        assert_eq!(
            (d.loads_in_flight, d.min_row_units),
            (LOADS_IN_FLIGHT, MIN_ROW_UNITS)
        );
        assert_eq!(d.validated(), Ok(d));
        for loads in [1, 2, 4, 8, 16] {
            let t = Tuning {
                loads_in_flight: loads,
                min_row_units: 1 << 40,
            };
            assert_eq!(t.validated(), Ok(t));
        }
        for loads in [0, 3, 12, 32] {
            let t = Tuning {
                loads_in_flight: loads,
                ..d
            };
            let e = t.validated().unwrap_err();
            assert!(matches!(e, GpuError::InvalidTuning { .. }), "{e}");
            assert!(e.to_string().contains("loads_in_flight"), "{e}");
        }
        let e = Tuning {
            min_row_units: 0,
            ..d
        }
        .validated()
        .unwrap_err();
        assert!(e.to_string().contains("min_row_units"), "{e}");
    }
}
