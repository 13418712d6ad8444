//! Slice loops over one [`Map`], and their byte-level entry points.
//!
//! The byte entry points take element-aligned byte ranges when they can (a zero-copy
//! cast) and otherwise bounce the data through aligned stack chunks, so callers may hand
//! any byte slice whose length is a whole number of elements. The streaming variants, for
//! outputs too large to stay in cache, compute blocks into a cache-resident buffer and
//! write them out with non-temporal stores on x86-64; targets without such stores write
//! the output directly.

use bytemuck::Zeroable;

use super::ops::Map;
use super::stream;

/// Elements per bounce chunk.
const CHUNK: usize = 512;

/// Output bytes per streaming block: small enough to stay in L1.
const STREAM_BLOCK: usize = 8192;

/// Applies `M` to each element of `src`, writing `dst`; both have the same length.
#[inline(always)]
pub(crate) fn map<M: Map>(src: &[M::In], dst: &mut [M::Out]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = M::apply(s);
    }
}

/// Applies `M` to each element of `data` in place.
#[inline(always)]
pub(crate) fn map_in_place<M: Map<Out = <M as Map>::In>>(data: &mut [M::In]) {
    for x in data.iter_mut() {
        *x = M::apply(*x);
    }
}

/// [`map`] over byte slices holding `n` input and `n` output elements, with `map` as the
/// slice loop: `map` applies `M` to each element of its first slice, writing the second
/// (same length).
pub(crate) fn map_bytes_with<M: Map>(
    src: &[u8],
    dst: &mut [u8],
    map: impl Fn(&[M::In], &mut [M::Out]),
) {
    match (
        bytemuck::try_cast_slice::<u8, M::In>(src),
        bytemuck::try_cast_slice_mut::<u8, M::Out>(dst),
    ) {
        (Ok(s), Ok(d)) => map(s, d),
        _ => bounce::<M>(src, dst, map),
    }
}

/// [`map_in_place`] over a byte slice, with `map_in_place` as the slice loop: it applies
/// `M` to each element of its slice in place.
pub(crate) fn map_bytes_in_place_with<M: Map<Out = <M as Map>::In>>(
    data: &mut [u8],
    map_in_place: impl Fn(&mut [M::In]),
) {
    match bytemuck::try_cast_slice_mut::<u8, M::In>(data) {
        Ok(d) => map_in_place(d),
        Err(_) => {
            let size = std::mem::size_of::<M::In>();
            let mut tmp = [M::In::zeroed(); CHUNK];
            for chunk in data.chunks_mut(CHUNK * size) {
                let n = chunk.len() / size;
                let t = &mut tmp[..n];
                bytemuck::cast_slice_mut::<M::In, u8>(t).copy_from_slice(chunk);
                map_in_place(t);
                chunk.copy_from_slice(bytemuck::cast_slice::<M::In, u8>(t));
            }
        }
    }
}

/// [`map_bytes_with`] with streaming stores: `map_stream` is `map`'s streaming form,
/// which like [`super::isa::Isa::map_stream`] returns `false`, having done nothing,
/// where it has no loop of its own; element-misaligned slices and that case stream in
/// blocks computed by `map`. Targets without non-temporal stores
/// ([`stream::NON_TEMPORAL`]) map straight into `dst`.
pub(crate) fn map_bytes_stream_with<M: Map>(
    src: &[u8],
    dst: &mut [u8],
    map: impl Fn(&[M::In], &mut [M::Out]) + Copy,
    map_stream: impl Fn(&[M::In], &mut [M::Out]) -> bool,
) {
    if !stream::NON_TEMPORAL {
        return map_bytes_with::<M>(src, dst, map);
    }
    if let (Ok(s), Ok(d)) = (
        bytemuck::try_cast_slice::<u8, M::In>(src),
        bytemuck::try_cast_slice_mut::<u8, M::Out>(dst),
    ) {
        if map_stream(s, d) {
            return;
        }
    }
    let (in_size, out_size) = (std::mem::size_of::<M::In>(), std::mem::size_of::<M::Out>());
    let per_block = STREAM_BLOCK / out_size;
    let mut block = [0u64; STREAM_BLOCK / 8];
    let block = bytemuck::cast_slice_mut::<u64, u8>(&mut block);
    for (s, d) in src
        .chunks(per_block * in_size)
        .zip(dst.chunks_mut(per_block * out_size))
    {
        let b = &mut block[..d.len()];
        map_bytes_with::<M>(s, b, map);
        stream::copy(d, b);
    }
    stream::fence();
}

/// [`map_bytes_in_place_with`] with streaming stores: `map_in_place_stream` is
/// `map_in_place`'s streaming form, `false` (nothing done) where it has none; then, and
/// for element-misaligned data, blocks computed by `map` (as in [`map_bytes_with`]) are
/// streamed back. Targets without non-temporal stores ([`stream::NON_TEMPORAL`]) map
/// in place with `map_in_place`.
pub(crate) fn map_bytes_in_place_stream_with<M: Map<Out = <M as Map>::In>>(
    data: &mut [u8],
    map: impl Fn(&[M::In], &mut [M::In]) + Copy,
    map_in_place: impl Fn(&mut [M::In]),
    map_in_place_stream: impl Fn(&mut [M::In]) -> bool,
) {
    if !stream::NON_TEMPORAL {
        return map_bytes_in_place_with::<M>(data, map_in_place);
    }
    if let Ok(d) = bytemuck::try_cast_slice_mut::<u8, M::In>(data) {
        if map_in_place_stream(d) {
            return;
        }
    }
    let size = std::mem::size_of::<M::In>();
    let per_block = STREAM_BLOCK / size;
    let mut block = [0u64; STREAM_BLOCK / 8];
    let block = bytemuck::cast_slice_mut::<u64, u8>(&mut block);
    for chunk in data.chunks_mut(per_block * size) {
        let b = &mut block[..chunk.len()];
        map_bytes_with::<M>(chunk, b, map);
        stream::copy(chunk, b);
    }
    stream::fence();
}

fn bounce<M: Map>(src: &[u8], dst: &mut [u8], map: impl Fn(&[M::In], &mut [M::Out])) {
    let in_size = std::mem::size_of::<M::In>();
    let out_size = std::mem::size_of::<M::Out>();
    let mut tmp_in = [M::In::zeroed(); CHUNK];
    let mut tmp_out = [M::Out::zeroed(); CHUNK];
    for (s, d) in src
        .chunks(CHUNK * in_size)
        .zip(dst.chunks_mut(CHUNK * out_size))
    {
        let n = s.len() / in_size;
        bytemuck::cast_slice_mut::<M::In, u8>(&mut tmp_in[..n]).copy_from_slice(s);
        map(&tmp_in[..n], &mut tmp_out[..n]);
        d.copy_from_slice(bytemuck::cast_slice::<M::Out, u8>(&tmp_out[..n]));
    }
}
