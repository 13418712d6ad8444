//! One module per subcommand.

pub mod bench;
pub mod demo;
pub mod devices;
pub mod is_infinity;
pub mod onnx_test;
pub mod run;
pub mod sign;
pub mod support;
