//! What operators are measured against: WGSL kernels that copy or only read 16-byte
//! vectors, and wgpu's own buffer-to-buffer copy, with the same typed errors as the
//! operators.

use std::fmt;

use wgpu::util::DeviceExt;

use crate::buffer::GpuBuffer;
use crate::device::{self, GpuDevice};
use crate::error::{GpuError, Result};
use crate::shader::WORKGROUP;

/// Bytes of the unit baseline kernels move: one `vec4<u32>` per invocation.
pub const BASELINE_VECTOR: u64 = 16;

/// The vector whose presence in a [`BaselineKind::Read`] source makes the kernel write it
/// to the destination (reads that write nothing could be dropped by a compiler).
pub const READ_SENTINEL: [u32; 4] = [0x7FC0_0001, 0xFFFF_FFFE, 0x0000_0001, 0x7F80_0001];

/// What a [`BaselineKernel`] does with each 16-byte vector of its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BaselineKind {
    /// Writes it to the same place in the destination: reads and writes as many bytes.
    Copy,
    /// Only reads it: the destination's first vector is written only by a source vector
    /// equal to [`READ_SENTINEL`].
    Read,
}

impl BaselineKind {
    /// `copy` or `read`.
    pub fn name(self) -> &'static str {
        match self {
            BaselineKind::Copy => "copy",
            BaselineKind::Read => "read",
        }
    }
}

impl fmt::Display for BaselineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The WGSL of both baseline kernels, labelled.
pub(crate) fn sources() -> Vec<(String, String)> {
    [BaselineKind::Copy, BaselineKind::Read]
        .into_iter()
        .map(|k| (format!("baseline {k}"), source(k)))
        .collect()
}

fn source(kind: BaselineKind) -> String {
    let body = match kind {
        BaselineKind::Copy => "    dst[p.dst_base + i] = src[p.src_base + i];\n".to_string(),
        BaselineKind::Read => {
            let [a, b, c, d] = READ_SENTINEL;
            format!(
                "    let v = src[p.src_base + i];\n    if (all(v == vec4<u32>(0x{a:X}u, 0x{b:X}u, 0x{c:X}u, 0x{d:X}u))) {{ dst[p.dst_base] = v; }}\n"
            )
        }
    };
    format!(
        "struct Params {{\n    count: u32,\n    grid_x: u32,\n    src_base: u32,\n    dst_base: u32,\n}};\n\
         @group(0) @binding(0) var<uniform> p: Params;\n\
         @group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;\n\
         @group(0) @binding(2) var<storage, read> src: array<vec4<u32>>;\n\
         @compute @workgroup_size({WORKGROUP})\n\
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n    let i = gid.x + gid.y * p.grid_x;\n    if (i >= p.count) {{ return; }}\n{body}}}\n"
    )
}

/// A WGSL kernel that copies (or only reads) 16-byte vectors, one per invocation, on a
/// 2-D grid: the memory-bound limit that operators are compared with.
#[derive(Debug, Clone)]
pub struct BaselineKernel {
    device: GpuDevice,
    kind: BaselineKind,
    pipeline: wgpu::ComputePipeline,
}

impl Drop for BaselineKernel {
    fn drop(&mut self) {
        if device::forked(self.device.shared.pid) {
            std::mem::forget(self.pipeline.clone());
        }
    }
}

impl BaselineKernel {
    /// Builds the kernel's pipeline on `device`.
    pub fn new(device: &GpuDevice, kind: BaselineKind) -> Result<BaselineKernel> {
        device.check_process()?;
        let wgpu_device = device.wgpu_device();
        let pipeline = device.catch("building a baseline kernel", || {
            let module = wgpu_device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("ewise baseline"),
                source: wgpu::ShaderSource::Wgsl(source(kind).into()),
            });
            wgpu_device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("ewise baseline"),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            })
        })?;
        Ok(BaselineKernel {
            device: device.clone(),
            kind,
            pipeline,
        })
    }

    /// What the kernel does.
    pub fn kind(&self) -> BaselineKind {
        self.kind
    }

    /// Binds the kernel to `len` bytes of `src` from `src_offset` and, for
    /// [`BaselineKind::Copy`], as many bytes of `dst` from `dst_offset` ([`BaselineKind::Read`]
    /// needs 16). Offsets and `len` must be multiples of [`BASELINE_VECTOR`], the ranges
    /// inside their buffers, and `src` and `dst` different buffers. Ranges larger than one
    /// binding window are split into several dispatches.
    pub fn bind(
        &self,
        (src, src_offset): (&GpuBuffer, u64),
        (dst, dst_offset): (&GpuBuffer, u64),
        len: u64,
    ) -> Result<BoundBaseline> {
        self.device.check_process()?;
        src.check_process()?;
        dst.check_process()?;
        let what = match self.kind {
            BaselineKind::Copy => "a copy kernel",
            BaselineKind::Read => "a read kernel",
        };
        let dst_len = match self.kind {
            BaselineKind::Copy => len,
            BaselineKind::Read => BASELINE_VECTOR,
        };
        let refuse = |reason| GpuError::Baseline {
            what,
            len,
            src_offset,
            src_len: src.len(),
            dst_offset,
            dst_len: dst.len(),
            reason,
        };
        if [src_offset, dst_offset, len]
            .iter()
            .any(|v| !v.is_multiple_of(BASELINE_VECTOR))
        {
            return Err(refuse("offsets and length must be multiples of 16 bytes"));
        }
        let inside = |offset: u64, n: u64, buffer: &GpuBuffer| {
            offset.checked_add(n).is_some_and(|end| end <= buffer.len())
        };
        if !inside(src_offset, len, src) || !inside(dst_offset, dst_len, dst) {
            return Err(refuse("the range does not fit in its buffer"));
        }
        if src.wgpu_buffer() == dst.wgpu_buffer() {
            return Err(refuse("source and destination must be different buffers"));
        }
        let limits = self.device.shared.limits;
        let align = limits.storage_alignment.max(BASELINE_VECTOR);
        let most = (limits.binding - align) / BASELINE_VECTOR * BASELINE_VECTOR;
        let grid = u64::from(limits.workgroups).pow(2) * u64::from(WORKGROUP) * BASELINE_VECTOR;
        let chunk = most.min(grid).min((u64::from(u32::MAX) / 2) & !15);
        let window = |first: u64, bytes: u64| {
            let start = first - first % align;
            (
                start,
                first + bytes - start,
                (first - start) / BASELINE_VECTOR,
            )
        };
        let mut pieces = Vec::new();
        let mut done = 0;
        while done < len {
            let bytes = chunk.min(len - done);
            let (s, d) = (src_offset + done, dst_offset + done);
            let src_window = window(s, bytes);
            let dst_window = match self.kind {
                BaselineKind::Copy => window(d, bytes),
                BaselineKind::Read => window(dst_offset, BASELINE_VECTOR),
            };
            let count = bytes / BASELINE_VECTOR;
            let groups = count.div_ceil(u64::from(WORKGROUP));
            let gx = groups.clamp(1, u64::from(limits.workgroups));
            let gy = groups.div_ceil(gx).max(1);
            let params = [
                count as u32,
                (gx * u64::from(WORKGROUP)) as u32,
                src_window.2 as u32,
                dst_window.2 as u32,
            ];
            pieces.push((params, src_window, dst_window, (gx as u32, gy as u32)));
            done += bytes;
        }
        let slot = 16u64.div_ceil(limits.uniform_alignment) * limits.uniform_alignment;
        let mut bytes = vec![0u8; (slot as usize * pieces.len()).max(16)];
        for (k, piece) in pieces.iter().enumerate() {
            let at = k * slot as usize;
            bytes[at..at + 16].copy_from_slice(bytemuck::cast_slice(&piece.0));
        }
        let wgpu_device = self.device.wgpu_device();
        let layout = self.pipeline.get_bind_group_layout(0);
        let (uniforms, groups) = self.device.catch("binding a baseline kernel", || {
            let uniforms = wgpu_device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("ewise baseline parameters"),
                contents: &bytes,
                usage: wgpu::BufferUsages::UNIFORM,
            });
            fn range(
                buffer: &GpuBuffer,
                (offset, size, _): (u64, u64, u64),
            ) -> wgpu::BindingResource<'_> {
                wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: buffer.wgpu_buffer(),
                    offset,
                    size: wgpu::BufferSize::new(size),
                })
            }
            let groups: Vec<(wgpu::BindGroup, (u32, u32))> = pieces
                .iter()
                .enumerate()
                .map(|(k, &(_, src_window, dst_window, grid))| {
                    let group = wgpu_device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("ewise baseline bindings"),
                        layout: &layout,
                        entries: &[
                            wgpu::BindGroupEntry {
                                binding: 0,
                                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                    buffer: &uniforms,
                                    offset: k as u64 * slot,
                                    size: wgpu::BufferSize::new(16),
                                }),
                            },
                            wgpu::BindGroupEntry {
                                binding: 1,
                                resource: range(dst, dst_window),
                            },
                            wgpu::BindGroupEntry {
                                binding: 2,
                                resource: range(src, src_window),
                            },
                        ],
                    });
                    (group, grid)
                })
                .collect();
            (uniforms, groups)
        })?;
        Ok(BoundBaseline {
            device: self.device.clone(),
            pipeline: self.pipeline.clone(),
            groups,
            _uniforms: uniforms,
        })
    }
}

/// A [`BaselineKernel`] bound to its ranges: recording it costs no allocation.
#[derive(Debug, Clone)]
pub struct BoundBaseline {
    device: GpuDevice,
    pipeline: wgpu::ComputePipeline,
    groups: Vec<(wgpu::BindGroup, (u32, u32))>,
    _uniforms: wgpu::Buffer,
}

impl Drop for BoundBaseline {
    fn drop(&mut self) {
        if device::forked(self.device.shared.pid) {
            std::mem::forget((
                self.pipeline.clone(),
                self.groups.clone(),
                self._uniforms.clone(),
            ));
        }
    }
}

impl BoundBaseline {
    /// How many dispatches one recording holds (0 for an empty range).
    pub fn dispatches(&self) -> usize {
        self.groups.len()
    }

    /// Records the dispatches into `encoder`, in one compute pass.
    pub fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        if self.groups.is_empty() {
            return;
        }
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("ewise baseline"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&self.pipeline);
        for (group, (gx, gy)) in &self.groups {
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(*gx, *gy, 1);
        }
    }

    /// Records the dispatches alone into a new encoder, submits it and waits for it,
    /// with no error scope around the submission: the floor of what
    /// [`crate::GpuCompiledOperator::execute`] can cost. Native only.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn submit_and_wait(&self) -> Result<()> {
        self.device.check_process()?;
        let wgpu_device = self.device.wgpu_device();
        let mut encoder = wgpu_device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("ewise baseline"),
        });
        self.record(&mut encoder);
        self.device.wgpu_queue().submit([encoder.finish()]);
        self.device.wait("running a baseline kernel")
    }
}

/// Records wgpu's `copy_buffer_to_buffer` of `len` bytes from `src` at `src_offset` to
/// `dst` at `dst_offset` into `encoder`, after checking what wgpu requires (offsets and
/// length multiples of 4 bytes, ranges inside the buffers, different buffers) so that
/// mistakes are typed errors.
pub fn record_buffer_copy(
    encoder: &mut wgpu::CommandEncoder,
    (src, src_offset): (&GpuBuffer, u64),
    (dst, dst_offset): (&GpuBuffer, u64),
    len: u64,
) -> Result<()> {
    src.check_process()?;
    dst.check_process()?;
    let refuse = |reason| GpuError::Baseline {
        what: "copy_buffer_to_buffer",
        len,
        src_offset,
        src_len: src.len(),
        dst_offset,
        dst_len: dst.len(),
        reason,
    };
    if [src_offset, dst_offset, len]
        .iter()
        .any(|v| !v.is_multiple_of(4))
    {
        return Err(refuse("offsets and length must be multiples of 4 bytes"));
    }
    let inside = |offset: u64, buffer: &GpuBuffer| {
        offset
            .checked_add(len)
            .is_some_and(|end| end <= buffer.len().div_ceil(4) * 4)
    };
    if !inside(src_offset, src) || !inside(dst_offset, dst) {
        return Err(refuse("the range does not fit in its buffer"));
    }
    if src.wgpu_buffer() == dst.wgpu_buffer() {
        return Err(refuse("source and destination must be different buffers"));
    }
    if len > 0 {
        encoder.copy_buffer_to_buffer(
            src.wgpu_buffer(),
            src_offset,
            dst.wgpu_buffer(),
            dst_offset,
            len,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_index_vectors_on_a_2d_grid() {
        let copy = source(BaselineKind::Copy);
        assert!(copy.contains("gid.x + gid.y * p.grid_x"), "{copy}");
        assert!(copy.contains("array<vec4<u32>>"), "{copy}");
        assert!(source(BaselineKind::Read).contains("0x7FC00001u"));
    }
}
