//! Rows of a strided walk in 16-byte units ([`Walk::Rows`]).
//!
//! Where the walk's innermost dimension is contiguous in both tensors and every outer
//! stride is a whole number of 16-byte vectors in both, every row of a chunk has the
//! same phase, so the same columns form each row's body ([`Body`]). The bodies run in
//! the row kernel; the columns before them and after them run as two strided walks over
//! those columns alone. A body starts and ends on 16 bytes of output, so no output word
//! of the strided walks lies in a body: the row kernel writes its words whole, the
//! strided walks write 8- and 16-bit outputs with atomics.

use std::sync::Arc;

use ewise_core::layout::Dim;

use super::{Body, Dispatch, GpuCompiledOperator, Source, Units};
use crate::chunk::Chunk;
use crate::device::GpuDevice;
use crate::error::Result;
use crate::shader::{KernelKey, Walk, UNIT_BYTES};

/// Units a row's body needs for the row kernel by default (the device's
/// [`crate::Tuning`] sets it per operator); rows with fewer stay in the strided walk. One
/// unit already moves 16 bytes per invocation where the strided walk moves one element.
pub(crate) const MIN_ROW_UNITS: u64 = 1;

/// A kernel and its pipeline.
type Kernel = (KernelKey, Arc<wgpu::ComputePipeline>);

/// The row kernel of a walk and the strided kernel of its rows' edge columns.
#[derive(Debug, Clone)]
pub(super) struct RowKernels {
    rows: Kernel,
    edges: Kernel,
}

impl RowKernels {
    /// The row kernels of `key`'s walk over `dims` (outermost first); `None` where its
    /// rows cannot run in 16-byte units: a kernel without a vector form, fewer than two
    /// dimensions, an innermost dimension not contiguous in both tensors, or an outer
    /// stride that is not a multiple of 16 bytes in either tensor.
    pub(super) fn of(
        device: &GpuDevice,
        key: &KernelKey,
        dims: &[Dim],
    ) -> Result<Option<RowKernels>> {
        let (Some(rows), Some((inner, outer))) = (key.rows(), dims.split_last()) else {
            return Ok(None);
        };
        let (is, os) = (u64::from(key.in_size), u64::from(key.out_size));
        let aligned = inner.in_stride == 1
            && inner.out_stride == 1
            && outer.iter().all(|d| {
                (d.in_stride * is).is_multiple_of(UNIT_BYTES)
                    && (d.out_stride * os).is_multiple_of(UNIT_BYTES)
            });
        if !aligned {
            return Ok(None);
        }
        let edges = KernelKey {
            walk: Walk::Strided {
                dims: dims.len() as u32,
            },
            ..*key
        };
        Ok(Some(RowKernels {
            rows: (rows, device.pipeline(&rows)?),
            edges: (edges, device.pipeline(&edges)?),
        }))
    }

    /// These kernels, reading the input through the output's binding when `shared`.
    pub(super) fn with_source(&self, device: &GpuDevice, shared: bool) -> Result<RowKernels> {
        if !shared {
            return Ok(self.clone());
        }
        let share = |(key, _): &Kernel| -> Result<Kernel> {
            let key = KernelKey {
                shared: true,
                ..*key
            };
            Ok((key, device.pipeline(&key)?))
        };
        Ok(RowKernels {
            rows: share(&self.rows)?,
            edges: share(&self.edges)?,
        })
    }
}

impl GpuCompiledOperator {
    /// The body of every row of `chunk` (whose rows share their phase) with the input
    /// read from `source` and the output at `out_offset` of its buffer; `None` where the
    /// phases never meet or the body is shorter than the operator's minimum
    /// ([`MIN_ROW_UNITS`] unless its device's tuning says otherwise).
    pub(super) fn row_body(&self, chunk: &Chunk, source: &Source, out_offset: u64) -> Option<Body> {
        let row = chunk.dims.last()?;
        let sizes = (u64::from(self.key.in_size), u64::from(self.key.out_size));
        let in_at = source.offset + chunk.in_first * sizes.0;
        let out_at = out_offset + chunk.out_first * sizes.1;
        Body::of(in_at, out_at, row.size, sizes).filter(|b| b.units >= self.min_row_units)
    }

    /// Adds the dispatches of `chunk` in rows to `dispatches`: the rows' bodies in the
    /// row kernel, then the columns before the bodies and those after them, where there
    /// are any, in the strided kernel.
    pub(super) fn row_dispatches(
        &self,
        kernels: &RowKernels,
        chunk: &Chunk,
        body: Body,
        source: &Source,
        (dst, dst_offset): (&wgpu::Buffer, u64),
        dispatches: &mut Vec<Dispatch>,
    ) {
        let (key, _) = &kernels.rows;
        let (is, os) = (u64::from(key.in_size), u64::from(key.out_size));
        let bodies = chunk.columns(body.head, body.elements());
        let run = Units {
            in_first: source.offset + bodies.in_first * is,
            in_bytes: bodies.in_span * is,
            out_first: dst_offset + bodies.out_first * os,
            out_bytes: bodies.out_span * os,
            units: bodies.count / body.per,
        };
        let outer = &chunk.dims[..chunk.dims.len() - 1];
        let vectors = |stride: u64, size: u64| (stride * size / UNIT_BYTES) as u32;
        let mut params = Vec::with_capacity(outer.len() * 4);
        for d in outer {
            params.extend([
                d.size as u32,
                vectors(d.in_stride, is),
                vectors(d.out_stride, os),
                0,
            ]);
        }
        dispatches.push(self.units_dispatch(
            &kernels.rows,
            source,
            dst,
            run,
            Some((body.units as u32, params)),
        ));
        let row = chunk.dims[chunk.dims.len() - 1].size;
        let tail = body.head + body.elements();
        for (from, len) in [(0, body.head), (tail, row - tail)] {
            if len > 0 {
                dispatches.extend(self.chunk_dispatch_with(
                    kernels.edges.0,
                    &chunk.columns(from, len),
                    &kernels.edges.1,
                    source,
                    (dst, dst_offset),
                    None,
                ));
            }
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::super::tests::{walks, walks_on};
    use super::*;
    use crate::Tuning;
    use ewise_core::{DataType, InfinityMode, OperatorDesc, TensorDesc};

    use DataType::*;

    fn t(data_type: DataType, sizes: &[u32], strides: &[u32]) -> TensorDesc {
        let size = data_type.size_in_bytes().unwrap() as u32;
        TensorDesc::strided(data_type, sizes, strides).with_alignment(size)
    }

    fn sign(data_type: DataType, sizes: &[u32], (a, b): (&[u32], &[u32])) -> OperatorDesc {
        OperatorDesc::sign(t(data_type, sizes, a), t(data_type, sizes, b))
    }

    fn is_inf(data_type: DataType, sizes: &[u32], (a, b): (&[u32], &[u32])) -> OperatorDesc {
        OperatorDesc::is_infinity(
            t(data_type, sizes, a),
            t(Uint8, sizes, b),
            InfinityMode::Either,
        )
    }

    #[test]
    fn rows_on_16_byte_pitches_run_their_bodies_in_units_and_edges_strided() {
        let rows = |dims| Walk::Rows { dims };
        let strided = |dims| Walk::Strided { dims };
        let cases = [
            // float32 rows of 2 units on a 48-byte pitch: the row kernel alone.
            (
                sign(Float32, &[3, 8], (&[12, 1], &[12, 1])),
                (0, 0),
                vec![rows(1)],
            ),
            // A tail of 2 elements; a head of 3 and a tail of 3.
            (
                sign(Float32, &[3, 10], (&[12, 1], &[12, 1])),
                (0, 0),
                vec![rows(1), strided(2)],
            ),
            (
                sign(Float32, &[3, 10], (&[12, 1], &[12, 1])),
                (4, 4),
                vec![rows(1), strided(2), strided(2)],
            ),
            // int8, 3-D, both tensors 5 bytes into a vector: head 11, one unit, tail 13.
            (
                sign(Int8, &[2, 3, 40], (&[160, 48, 1], &[160, 48, 1])),
                (5, 21),
                vec![rows(2), strided(3), strided(3)],
            ),
            // A broadcast row.
            (
                sign(Float32, &[4, 16], (&[0, 1], &[16, 1])),
                (0, 0),
                vec![rows(1)],
            ),
            // float32 -> uint8: 4 input vectors per unit.
            (
                is_inf(Float32, &[3, 40], (&[40, 1], &[48, 1])),
                (0, 0),
                vec![rows(1), strided(2)],
            ),
            // A packed byte output (the strided-words walk otherwise): the output one
            // byte into a vector needs 15 elements of head, which the input meets at 4.
            (
                is_inf(Float16, &[3, 64], (&[72, 1], &[64, 1])),
                (2, 1),
                vec![rows(1), strided(2), strided(2)],
            ),
        ];
        for (desc, offsets, want) in cases {
            let Some(got) = walks(&desc, offsets) else {
                return;
            };
            assert_eq!(got, want, "{desc:?} {offsets:?}");
        }
    }

    #[test]
    fn rows_whose_phases_never_meet_or_hold_no_unit_stay_strided() {
        let cases = [
            // Phases that differ by 4 bytes.
            (
                sign(Float32, &[3, 8], (&[12, 1], &[12, 1])),
                (4, 0),
                Walk::Strided { dims: 2 },
            ),
            // An input pitch of 36 bytes: each row at another phase.
            (
                sign(Float32, &[3, 8], (&[9, 1], &[12, 1])),
                (0, 0),
                Walk::Strided { dims: 2 },
            ),
            // Rows of 12 bytes.
            (
                sign(Float32, &[3, 3], (&[4, 1], &[4, 1])),
                (0, 0),
                Walk::Strided { dims: 2 },
            ),
            // A head of 15 bytes leaves no whole unit in 30 bytes.
            (
                sign(Uint8, &[3, 30], (&[32, 1], &[32, 1])),
                (1, 1),
                Walk::Strided { dims: 2 },
            ),
            // float16 -> uint8 whose input never reaches 16 bytes with the output.
            (
                is_inf(Float16, &[3, 64], (&[72, 1], &[64, 1])),
                (0, 1),
                Walk::StridedWords { dims: 2 },
            ),
        ];
        for (desc, offsets, want) in cases {
            let Some(got) = walks(&desc, offsets) else {
                return;
            };
            assert_eq!(got, vec![want], "{desc:?} {offsets:?}");
        }
    }

    /// The layout `ewise bench --layout rows` times: rows of `units` 16-byte units of
    /// output, the input's rows one vector apart (a strided view), the output packed.
    fn bench_rows(sign_op: bool, data_type: DataType, units: u32) -> OperatorDesc {
        let is = data_type.size_in_bytes().unwrap() as u32;
        let os = if sign_op { is } else { 1 };
        let cols = units * 16 / os;
        let sizes = [8, cols];
        let strides = (&[cols + 16 / is, 1][..], &[cols, 1][..]);
        if sign_op {
            sign(data_type, &sizes, strides)
        } else {
            is_inf(data_type, &sizes, strides)
        }
    }

    #[test]
    fn the_bench_rows_layout_takes_the_row_kernel_unless_rows_are_below_the_minimum() {
        let cases = [
            (true, Float32),
            (true, Int8),
            (true, Float16),
            (true, Float64),
            (false, Float32),
            (false, Float16),
        ];
        // One device for the whole test, its tuning set before each compilation.
        let Some(device) = crate::device::tests::any_device() else {
            return;
        };
        let tuning = |min_row_units| Tuning {
            min_row_units,
            ..Tuning::default()
        };
        for (sign_op, data_type) in cases {
            for units in [1, 2, 32, 256] {
                let desc = bench_rows(sign_op, data_type, units);
                device.set_tuning(Tuning::default()).unwrap();
                let got = walks_on(&device, &desc, (0, 0));
                assert_eq!(got, vec![Walk::Rows { dims: 1 }], "{desc:?}");
                device.set_tuning(tuning(u64::from(units))).unwrap();
                let at_minimum = walks_on(&device, &desc, (0, 0));
                assert_eq!(at_minimum, vec![Walk::Rows { dims: 1 }], "{desc:?}");
                device.set_tuning(tuning(u64::from(units) + 1)).unwrap();
                let below = walks_on(&device, &desc, (0, 0));
                assert_eq!(below.len(), 1, "{desc:?}");
                assert!(
                    matches!(below[0], Walk::Strided { .. } | Walk::StridedWords { .. }),
                    "{desc:?}: {below:?}"
                );
            }
        }
    }
}
