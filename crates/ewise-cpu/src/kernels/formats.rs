//! Bit-level facts about each floating-point format (docs/SEMANTICS.md section 2).

use bytemuck::Pod;

/// An unsigned integer word holding one element's bits.
pub(crate) trait Word: Pod + Eq + Ord + Send + Sync + 'static {
    const ZERO: Self;
    /// The integer 1.
    const UNIT: Self;
    fn and(self, other: Self) -> Self;
    fn or(self, other: Self) -> Self;
    fn wrapping_sub(self, other: Self) -> Self;
    /// Whether the top bit (a float's sign bit) is set.
    fn top_bit(self) -> bool;
}

macro_rules! word {
    ($($t:ty => $s:ty),*) => {$(
        impl Word for $t {
            const ZERO: Self = 0;
            const UNIT: Self = 1;
            #[inline(always)]
            fn and(self, other: Self) -> Self { self & other }
            #[inline(always)]
            fn or(self, other: Self) -> Self { self | other }
            #[inline(always)]
            fn wrapping_sub(self, other: Self) -> Self { <$t>::wrapping_sub(self, other) }
            #[inline(always)]
            fn top_bit(self) -> bool { (self as $s) < 0 }
        }
    )*};
}
word!(u8 => i8, u16 => i16, u32 => i32, u64 => i64);

/// The layout of an IEEE-like binary floating-point format.
pub(crate) trait FloatFormat: Send + Sync + 'static {
    /// The word holding one element.
    type Bits: Word;
    /// Every bit but the sign bit.
    const MAGNITUDE: Self::Bits;
    /// The sign bit.
    const SIGN: Self::Bits;
    /// +infinity: exponent all ones, mantissa zero. Magnitudes above it are NaN.
    const INFINITY: Self::Bits;
    /// +1.
    const ONE: Self::Bits;
}

macro_rules! format {
    ($name:ident, $bits:ty, $sign:expr, $inf:expr, $one:expr) => {
        pub(crate) struct $name;
        impl FloatFormat for $name {
            type Bits = $bits;
            const MAGNITUDE: $bits = !$sign;
            const SIGN: $bits = $sign;
            const INFINITY: $bits = $inf;
            const ONE: $bits = $one;
        }
    };
}

format!(
    F64,
    u64, 0x8000_0000_0000_0000, 0x7FF0_0000_0000_0000, 0x3FF0_0000_0000_0000
);
format!(F32, u32, 0x8000_0000, 0x7F80_0000, 0x3F80_0000);
format!(F16, u16, 0x8000, 0x7C00, 0x3C00);
format!(BF16, u16, 0x8000, 0x7F80, 0x3F80);
format!(F8E5M2, u8, 0x80, 0x7C, 0x3C);
