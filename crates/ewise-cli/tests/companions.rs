//! `ewise completions SHELL` and `ewise man`, which the release tarballs ship: the bash
//! script parses and completes subcommands and options; the man page is ewise(1), holds
//! every subcommand and renders without warnings where groff or man is installed.

mod common;

#[cfg(unix)]
use std::process::{Command, Stdio};

use common::*;

/// The subcommands `ewise --help` lists (the clap-made `help` left out).
fn subcommands() -> Vec<String> {
    let out = ewise(["--help"]);
    assert_ok(&out);
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let names: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|name| name != "help")
        .collect();
    for expected in ["sign", "is-infinity", "completions", "man"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not in: {help}"
        );
    }
    names
}

fn stdout_of(args: &[&str]) -> String {
    let out = ewise(args);
    assert_ok(&out);
    assert!(out.stderr.is_empty(), "{args:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Whether `program` runs here (`program --version` starts).
#[cfg(unix)]
fn installed(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

#[test]
fn every_shell_gets_a_script_and_an_unknown_one_is_refused_with_the_list() {
    for (shell, marker) in [
        ("bash", "complete -F _ewise"),
        ("zsh", "#compdef ewise"),
        ("fish", "complete -c ewise"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion:arg-completer[ewise]"),
    ] {
        let script = stdout_of(&["completions", shell]);
        assert!(
            script.contains(marker),
            "{shell}: no {marker:?} in its script"
        );
        assert!(
            script.contains("is-infinity"),
            "{shell}: no subcommand in its script"
        );
    }
    let out = ewise(["completions", "tcsh"]);
    assert_error_exit(
        out.status,
        2,
        &stderr(&out),
        &[
            "invalid value 'tcsh' for '<SHELL>'",
            "[possible values: bash, elvish, fish, powershell, zsh]",
        ],
    );
}

#[cfg(unix)]
#[test]
fn the_bash_script_parses_and_completes_subcommands_and_options() {
    if !installed("bash") {
        assert!(
            std::env::var("CI").is_err(),
            "CI=true, and bash is not installed"
        );
        eprintln!("skipping: bash is not installed");
        return;
    }
    let dir = temp_dir();
    let script = path(&dir, "ewise.bash");
    std::fs::write(&script, stdout_of(&["completions", "bash"])).unwrap();
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        syntax.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );

    // What bash's completion would do for each line: the function `complete -p` names,
    // called with COMP_WORDS and COMP_CWORD as bash sets them.
    let probe = r#"
        source "$1"
        spec=$(complete -p ewise) || exit 3
        function=$(printf '%s\n' "$spec" | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
        [ -n "$function" ] || exit 4
        complete_line() {
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
            COMPREPLY=()
            "$function" ewise "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
            echo "$*: ${COMPREPLY[*]}"
        }
        complete_line ewise si
        complete_line ewise is-
        complete_line ewise is-infinity --mo
        complete_line ewise is-infinity --mode ne
        complete_line ewise completions p
        complete_line ewise sign --no-pro
    "#;
    let out = Command::new("bash")
        .args(["-c", probe, "probe"])
        .arg(&script)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "ewise si: sign",
        "ewise is-: is-infinity",
        "ewise is-infinity --mo: --mode",
        "ewise is-infinity --mode ne: negative neither",
        "ewise completions p: powershell",
        "ewise sign --no-pro: --no-progress",
    ] {
        assert!(
            text.lines().any(|l| l.trim_end() == line),
            "no {line:?} in:\n{text}"
        );
    }
}

#[test]
fn the_man_page_is_ewise_1_with_every_subcommand() {
    let page = stdout_of(&["man"]);
    let th = page
        .lines()
        .find(|l| l.starts_with(".TH "))
        .expect("a .TH line");
    assert!(th.starts_with(".TH ewise 1 "), "{th}");
    for section in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH DESCRIPTION",
        ".SH COMMANDS",
        ".SH EXAMPLES",
        ".SH ENVIRONMENT",
    ] {
        assert_eq!(
            page.lines().filter(|l| *l == section).count(),
            1,
            "{section}"
        );
    }
    for name in subcommands() {
        let heading = format!(".SS \"ewise {name}\"");
        assert!(
            page.lines().any(|l| l == heading),
            "no {heading} in the man page"
        );
    }
    for option in [
        r"\-\-feature\-level",
        r"\-\-no\-progress",
        r"\-\-chunk\-size",
    ] {
        assert!(page.contains(option), "no {option} in the man page");
    }
    assert!(page.contains("EWISE_GPU_ADAPTER"));
}

#[cfg(unix)]
#[test]
fn the_man_page_renders_without_warnings() {
    let dir = temp_dir();
    let file = path(&dir, "ewise.1");
    std::fs::write(&file, stdout_of(&["man"])).unwrap();
    let rendered = if installed("groff") {
        Command::new("groff")
            .args(["-man", "-Tutf8", "-ww"])
            .arg(&file)
            .output()
            .unwrap()
    } else if installed("man") {
        Command::new("man")
            .arg("-l")
            .arg(&file)
            .env("MANPAGER", "cat")
            .env("MAN_KEEP_FORMATTING", "0")
            .output()
            .unwrap()
    } else {
        eprintln!("skipping the rendering: neither groff nor man is installed (the structure is checked by another test)");
        return;
    };
    let warnings = String::from_utf8_lossy(&rendered.stderr);
    assert!(
        rendered.status.success() && warnings.trim().is_empty(),
        "{warnings}"
    );
    // Overstrikes (bold as c\bc) and hyphenation aside, the text as a reader sees it.
    let text: String = String::from_utf8_lossy(&rendered.stdout)
        .split('\n')
        .map(|l| {
            let mut out = String::new();
            for c in l.chars() {
                if c == '\u{8}' {
                    out.pop();
                } else {
                    out.push(c);
                }
            }
            out
        })
        .collect::<Vec<_>>()
        .join("\n");
    for name in subcommands() {
        assert!(
            text.contains(&format!("ewise {name}")),
            "no 'ewise {name}' in:\n{text}"
        );
    }
    assert!(text.contains("--no-progress"), "{text}");
}
