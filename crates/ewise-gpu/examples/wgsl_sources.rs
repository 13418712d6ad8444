//! Writes the WGSL of every kernel ewise-gpu can compile into DIR (`0000.wgsl`, ...)
//! with `index.txt`, one line per file: its name, a tab, and the kernel's label. The
//! browser tests compile them all with the browser's own WGSL compiler.
//!
//! Usage: cargo run -p ewise-gpu --example wgsl_sources -- DIR

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: wgsl_sources DIR");
        return ExitCode::from(2);
    };
    match write_all(&dir) {
        Ok(n) => {
            println!("{n} kernels into {}", dir.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("wgsl_sources: {}: {e}", dir.display());
            ExitCode::FAILURE
        }
    }
}

fn write_all(dir: &std::path::Path) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    let sources = ewise_gpu::kernel_sources();
    let mut index = std::fs::File::create(dir.join("index.txt"))?;
    for (i, (label, wgsl)) in sources.iter().enumerate() {
        let name = format!("{i:04}.wgsl");
        std::fs::write(dir.join(&name), wgsl)?;
        writeln!(index, "{name}\t{label}")?;
    }
    Ok(sources.len())
}
