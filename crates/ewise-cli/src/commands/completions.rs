//! `ewise completions SHELL`: the shell's completion script, from the command line's
//! own definition.

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

/// The completion script for `shell`, completing the command `ewise`.
pub fn render(shell: Shell) -> String {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "ewise", &mut script);
    String::from_utf8_lossy(&script).into_owned()
}
