//! One module per subcommand.

pub mod demo;
pub mod is_infinity;
pub mod sign;
pub mod support;
