//! ONNX front end for ewise (work in progress).
