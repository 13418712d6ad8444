//! Timing GPU work: timestamp queries around what a caller records, or, on devices
//! without them, the wall time of submitting it and waiting for it.

use std::fmt;
use std::time::{Duration, Instant};

use ewise_core::BufferBinding;

use crate::buffer::GpuBuffer;
use crate::device::{self, GpuDevice};
use crate::error::{GpuError, Result};
use crate::operator::GpuCompiledOperator;

/// How a [`GpuTimer`] measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimerKind {
    /// GPU time between two timestamp queries written around the recorded commands.
    Timestamps,
    /// Wall time from the submission to the end of the wait for it (recording excluded):
    /// includes the submission's and the wait's overhead.
    Wall,
}

impl TimerKind {
    /// `timestamps` or `wall`.
    pub fn name(self) -> &'static str {
        match self {
            TimerKind::Timestamps => "timestamps",
            TimerKind::Wall => "wall",
        }
    }
}

impl fmt::Display for TimerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The query set and buffers one timestamp measurement uses.
#[derive(Debug)]
struct Queries {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period: f64,
}

/// Bytes of two resolved timestamps.
const RESOLVED: u64 = 16;

/// Measures how long the GPU takes for recorded work: with timestamp queries where the
/// device has them ([`GpuDevice::has_timestamps`]), else with the wall time of submit
/// and wait. Each measurement is one submission, waited for.
#[derive(Debug)]
pub struct GpuTimer {
    device: GpuDevice,
    queries: Option<Queries>,
}

impl Drop for GpuTimer {
    fn drop(&mut self) {
        if let Some(q) = &self.queries {
            if device::forked(self.device.shared.pid) {
                std::mem::forget((q.set.clone(), q.resolve.clone(), q.readback.clone()));
            }
        }
    }
}

impl GpuTimer {
    /// A timer on `device`: [`TimerKind::Timestamps`] where the device has timestamp
    /// queries, else [`TimerKind::Wall`].
    pub fn new(device: &GpuDevice) -> Result<GpuTimer> {
        device.check_process()?;
        if !device.has_timestamps() {
            return Ok(GpuTimer::wall(device));
        }
        let wgpu_device = device.wgpu_device();
        let queries = device.catch("creating timestamp queries", || {
            let buffer = |label, usage| {
                wgpu_device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size: RESOLVED,
                    usage,
                    mapped_at_creation: false,
                })
            };
            Queries {
                set: wgpu_device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("ewise timer"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2,
                }),
                resolve: buffer(
                    "ewise timestamps",
                    wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                ),
                readback: buffer(
                    "ewise timestamp readback",
                    wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                ),
                period: f64::from(device.wgpu_queue().get_timestamp_period()),
            }
        })?;
        Ok(GpuTimer {
            device: device.clone(),
            queries: Some(queries),
        })
    }

    /// A timer on `device` that measures wall time even where timestamps exist.
    pub fn wall(device: &GpuDevice) -> GpuTimer {
        GpuTimer {
            device: device.clone(),
            queries: None,
        }
    }

    /// How this timer measures.
    pub fn kind(&self) -> TimerKind {
        match self.queries {
            Some(_) => TimerKind::Timestamps,
            None => TimerKind::Wall,
        }
    }

    /// Records what `record` records into a new encoder, submits it to the device's
    /// queue, waits for it, and returns how long it took. With timestamps, that is the
    /// GPU time from a timestamp written in an empty compute pass before the recorded
    /// commands to one written in an empty pass after them; otherwise the wall time from
    /// the submission to the end of the wait. An error of `record` is returned as it is
    /// and nothing is submitted; wgpu errors of the recorded commands are
    /// [`GpuError::Wgpu`].
    pub fn time(
        &mut self,
        record: impl FnOnce(&mut wgpu::CommandEncoder) -> Result<()>,
    ) -> Result<Duration> {
        let during = "running timed work";
        self.device.check_process()?;
        let wgpu_device = self.device.wgpu_device();
        let mut encoder = wgpu_device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("ewise timed"),
        });
        let mark = |encoder: &mut wgpu::CommandEncoder, q: &Queries, index: u32| {
            let first = index == 0;
            encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("ewise timestamp"),
                timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                    query_set: &q.set,
                    beginning_of_pass_write_index: first.then_some(index),
                    end_of_pass_write_index: (!first).then_some(index),
                }),
            });
        };
        if let Some(q) = &self.queries {
            mark(&mut encoder, q, 0);
        }
        record(&mut encoder)?;
        if let Some(q) = &self.queries {
            mark(&mut encoder, q, 1);
            encoder.resolve_query_set(&q.set, 0..2, &q.resolve, 0);
            encoder.copy_buffer_to_buffer(&q.resolve, 0, &q.readback, 0, RESOLVED);
        }
        let queue = self.device.wgpu_queue();
        let start = Instant::now();
        self.device.catch(during, || {
            queue.submit([encoder.finish()]);
        })?;
        let Some(q) = &self.queries else {
            self.device.wait(during)?;
            return Ok(start.elapsed());
        };
        let (sender, receiver) = std::sync::mpsc::channel();
        q.readback.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = sender.send(r);
        });
        self.device.wait(during)?;
        let failed = |message: String| GpuError::Wgpu {
            during: "reading timestamps",
            message,
        };
        receiver
            .recv()
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()))
            .map_err(failed)?;
        let ticks = {
            let view = q
                .readback
                .get_mapped_range(..)
                .map_err(|e| failed(e.to_string()))?;
            let mut words = [0u64; 2];
            for (word, bytes) in words.iter_mut().zip(view.chunks_exact(8)) {
                let mut b = [0u8; 8];
                b.copy_from_slice(bytes);
                *word = u64::from_le_bytes(b);
            }
            words
        };
        q.readback.unmap();
        let elapsed = ticks[1].checked_sub(ticks[0]).ok_or_else(|| {
            failed(format!(
                "the end timestamp {} precedes the start {}",
                ticks[1], ticks[0]
            ))
        })?;
        Ok(Duration::from_nanos(
            (elapsed as f64 * q.period).round() as u64
        ))
    }

    /// Times one recording of `operator` with these bindings (as
    /// [`GpuCompiledOperator::record`] takes them), alone in its submission.
    pub fn time_operator(
        &mut self,
        operator: &GpuCompiledOperator,
        buffers: &[&GpuBuffer],
        inputs: &[BufferBinding],
        outputs: &[BufferBinding],
    ) -> Result<Duration> {
        self.time(|encoder| operator.record(encoder, buffers, inputs, outputs))
    }
}
