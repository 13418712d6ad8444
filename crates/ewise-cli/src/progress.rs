//! A progress bar on a terminal, for large inputs only, unless `--no-progress`.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Inputs smaller than this many bytes of data show no progress bar.
pub const PROGRESS_THRESHOLD_BYTES: u64 = 256 << 20;

/// Progress over a number of bytes; draws nothing unless it is enabled, stderr is a
/// terminal and the total reaches [`PROGRESS_THRESHOLD_BYTES`].
pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// Progress over `total` bytes, labelled `label`; `enabled` false (`--no-progress`)
    /// draws nothing.
    pub fn new(total: u64, label: &str, enabled: bool) -> Progress {
        if !enabled || total < PROGRESS_THRESHOLD_BYTES || !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let style = ProgressStyle::with_template(
            "{msg} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
            .with_style(style)
            .with_message(label.to_string());
        Progress(Some(bar))
    }

    /// `bytes` more are done.
    pub fn advance(&self, bytes: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(bytes);
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
