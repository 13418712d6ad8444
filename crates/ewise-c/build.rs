//! Gives the Linux shared library the SONAME it installs under (`libewise.so.0`), so
//! programs linked with `-lewise` find it whatever cargo named the file.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libewise.so.0");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
