//! The `ewise` command: SIGN and IS_INFINITY over `.npy` files, the support tables,
//! a demonstration, and ONNX models with their conformance tests. Run `ewise --help`.

mod apply;
mod cli;
mod commands;
mod gpu;
mod gpu_stream;
mod input;
mod interrupt;
mod job;
mod json;
mod output;
mod paths;
mod positioned;
mod progress;
mod stream;
mod table;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

use cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(&err),
    };
    interrupt::install();
    let result = match &cli.command {
        Command::Sign(args) => commands::sign::run(args),
        Command::IsInfinity(args) => commands::is_infinity::run(args),
        Command::Support(args) => print(&commands::support::render(args)),
        Command::Demo => commands::demo::render().and_then(|text| print(&text)),
        Command::Run(args) => commands::run::run(args),
        Command::OnnxTest(args) => commands::onnx_test::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::Devices(args) => commands::devices::render(args).and_then(|text| print(&text)),
        Command::Completions(args) => print(&commands::completions::render(args.shell)),
        Command::Man => commands::man::render().and_then(|text| print(&text)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let message = format!("{err:#}").replace('\n', " ");
            let _ = writeln!(io::stderr(), "ewise: error: {message}");
            if interrupt::requested() {
                ExitCode::from(interrupt::EXIT_CODE)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// Reports a command-line error: `--help`, `--version` and the help shown for a missing
/// subcommand print as clap prints them, with clap's exit status; any other error is
/// one line, `ewise: error: ...`, naming the option and what it accepts, with exit
/// status 2.
fn usage_error(err: &clap::Error) -> ExitCode {
    let status = |code: i32| ExitCode::from(u8::try_from(code).unwrap_or(2));
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            status(err.exit_code())
        }
        _ => {
            let _ = writeln!(io::stderr(), "ewise: error: {}", cli::one_line_error(err));
            status(2)
        }
    }
}

/// Writes `text` to standard output; a reader that went away (`ewise demo | head`) is
/// not an error.
fn print(text: &str) -> anyhow::Result<()> {
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(anyhow::anyhow!("cannot write to standard output: {e}"))
        }
        _ => Ok(()),
    }
}
