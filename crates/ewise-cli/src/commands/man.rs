//! `ewise man`: the man page ewise(1), in roff. One page holds every subcommand: its
//! synopsis, description, options and examples, under COMMANDS.

use anyhow::Result;
use clap::CommandFactory;
use clap_mangen::Man;
use roff::{bold, roman, Roff};

use crate::cli::Cli;

/// The man page.
pub fn render() -> Result<String> {
    let mut cmd = Cli::command();
    cmd.build();
    let man = Man::new(cmd.clone()).title("ewise").section("1");
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;

    let mut commands = Roff::default();
    commands.control("SH", ["COMMANDS"]);
    commands.text([roman(
        "Each command's options follow it; ewise COMMAND --help prints the same text.",
    )]);
    page.extend(commands.render().into_bytes());
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = sub.get_bin_name().unwrap_or(sub.get_name()).to_string();
        let mut heading = Roff::default();
        heading.control("SS", [name.as_str()]);
        page.extend(heading.render().into_bytes());
        let sub_man = Man::new(sub.clone());
        page.extend(body(|w| sub_man.render_description_section(w))?);
        page.extend(paragraph());
        page.extend(body(|w| sub_man.render_synopsis_section(w))?);
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            page.extend(body(|w| sub_man.render_options_section(w))?);
        }
        if let Some(after) = sub.get_after_help() {
            page.extend(preformatted(&after.to_string()).into_bytes());
        }
    }

    let mut tail = Roff::default();
    if let Some(after) = cmd.get_after_help() {
        tail.control("SH", ["EXAMPLES"]);
        page.extend(tail.render().into_bytes());
        let examples = after.to_string();
        let examples = examples.strip_prefix("Examples:\n").unwrap_or(&examples);
        page.extend(preformatted(examples).into_bytes());
        tail = Roff::default();
    }
    tail.control("SH", ["ENVIRONMENT"]);
    for (var, what) in ENVIRONMENT {
        tail.control("TP", []);
        tail.text([bold(*var)]);
        tail.text([roman(*what)]);
    }
    tail.control("SH", ["SEE ALSO"]);
    tail.text([roman(
        "ewise COMMAND --help; the project's README.md and docs/SEMANTICS.md (what each \
         operator gives, bit by bit).",
    )]);
    page.extend(tail.render().into_bytes());
    man.render_version_section(&mut page)?;
    Ok(once_defined(&String::from_utf8_lossy(&page)))
}

/// `page` with the string definitions that every rendered piece begins with (roff's
/// `Aq`, the apostrophe) kept only where they first appear.
fn once_defined(page: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = String::with_capacity(page.len());
    for line in page.lines() {
        let definition = line.starts_with(".ie ") || line.starts_with(".el ");
        if definition && seen.contains(&line) {
            continue;
        }
        if definition {
            seen.push(line);
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The environment variables ewise reads, and what each does.
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        crate::cli::DEVICE_ENV,
        "cpu or gpu: the --device of sign, is-infinity, run and onnx-test when the option is not given.",
    ),
    (
        ewise_gpu::BACKEND_ENV,
        "A comma list of vulkan, metal, dx12: the graphics APIs --device gpu searches.",
    ),
    (
        ewise_gpu::ADAPTER_ENV,
        "Part of the name of the GPU adapter --device gpu picks (case-insensitive); naming a software renderer (llvmpipe) selects it without a warning.",
    ),
];

/// A section rendered by `render` without its `.SH` heading line, so that it reads as
/// part of the subsection before it.
fn body(render: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    render(&mut out)?;
    let text = String::from_utf8_lossy(&out);
    let kept: String = text
        .lines()
        .filter(|line| !line.starts_with(".SH "))
        .map(|line| format!("{line}\n"))
        .collect();
    Ok(kept.into_bytes())
}

/// A paragraph break.
fn paragraph() -> Vec<u8> {
    let mut roff = Roff::default();
    roff.control("PP", []);
    roff.render().into_bytes()
}

/// `text` as lines set as they are (examples aligned in columns).
fn preformatted(text: &str) -> String {
    let mut roff = Roff::default();
    roff.control("PP", []);
    roff.control("nf", []);
    for line in text.lines() {
        roff.text([roman(line)]);
    }
    roff.control("fi", []);
    roff.render()
}
