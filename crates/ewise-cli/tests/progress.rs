//! The progress bar: documented in the `--help` of each command that draws one, drawn on
//! a terminal for 256 MiB of data or more, and never with `--no-progress`.

mod common;

use common::*;

#[test]
fn the_commands_that_draw_a_bar_say_when_and_how_to_turn_it_off() {
    for command in ["sign", "is-infinity", "run"] {
        let out = ewise([command, "--help"]);
        assert_ok(&out);
        let help = String::from_utf8_lossy(&out.stdout).into_owned();
        for words in ["--no-progress", "256 MiB", "standard error is a terminal"] {
            assert!(
                help.contains(words),
                "`ewise {command} --help` lacks {words:?}:\n{help}"
            );
        }
    }
    for command in ["support", "devices", "demo"] {
        let out = ewise([command, "--help"]);
        assert_ok(&out);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            !help.contains("--no-progress"),
            "`ewise {command} --help`:\n{help}"
        );
    }
}

/// Runs `ewise sign` over a 256 MiB float32 file with standard error on a terminal (a
/// pseudo-terminal that util-linux's `script` opens): the bar is drawn, and with
/// `--no-progress` nothing is.
#[cfg(target_os = "linux")]
#[test]
fn a_terminal_shows_the_bar_for_256_mib_and_no_progress_hides_it() {
    use std::process::{Command, Stdio};

    let script_works = Command::new("script")
        .args(["-q", "-e", "-c", "true", "/dev/null"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !script_works || std::env::var_os(RUNNER_ENV).is_some() {
        assert!(
            std::env::var("CI").is_err() || std::env::var_os(RUNNER_ENV).is_some(),
            "CI=true, and util-linux's script does not run"
        );
        eprintln!("skipping: util-linux's script (a pseudo-terminal) is not available");
        return;
    }
    let dir = temp_dir();
    let input = path(&dir, "big.npy");
    let elements = (256u64 << 20) / 4;
    let header = f32_header(elements);
    std::fs::write(&input, &header).unwrap();
    // Sparse: zeros that take no disk space and read fast.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&input)
        .unwrap()
        .set_len(header.len() as u64 + elements * 4)
        .unwrap();
    // Written straight through, as devices are: no 256 MiB file on disk.
    let output = "/dev/null";
    let on_a_terminal = |extra: &str| {
        let line = format!(
            "'{}' sign '{}' '{}' {extra}",
            env!("CARGO_BIN_EXE_ewise"),
            input.display(),
            output
        );
        let out = Command::new("script")
            .args(["-q", "-e", "-c", &line, "/dev/null"])
            .env_remove("EWISE_DEVICE")
            .env("TERM", "xterm")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{line}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let shown = on_a_terminal("");
    assert!(
        shown.contains("sign big.npy ["),
        "no bar on a terminal: {shown:?}"
    );
    let hidden = on_a_terminal("--no-progress");
    assert!(hidden.is_empty(), "--no-progress, yet: {hidden:?}");
}
