//! One module per subcommand.

pub mod bench;
pub mod completions;
pub mod demo;
pub mod devices;
pub mod is_infinity;
pub mod man;
pub mod onnx_test;
pub mod run;
pub mod sign;
pub mod support;
