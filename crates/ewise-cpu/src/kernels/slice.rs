//! Slice loops over one [`Map`], and their byte-level entry points.
//!
//! The byte entry points take element-aligned byte ranges when they can (a zero-copy
//! cast) and otherwise bounce the data through aligned stack chunks, so callers may hand
//! any byte slice whose length is a whole number of elements.

use bytemuck::Zeroable;

use super::ops::Map;

/// Elements per bounce chunk.
const CHUNK: usize = 512;

/// Applies `M` to each element of `src`, writing `dst`; both have the same length.
#[inline]
pub(crate) fn map<M: Map>(src: &[M::In], dst: &mut [M::Out]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = M::apply(s);
    }
}

/// Applies `M` to each element of `data` in place.
#[inline]
pub(crate) fn map_in_place<M: Map<Out = <M as Map>::In>>(data: &mut [M::In]) {
    for x in data.iter_mut() {
        *x = M::apply(*x);
    }
}

/// [`map`] over byte slices holding `n` input and `n` output elements.
pub(crate) fn map_bytes<M: Map>(src: &[u8], dst: &mut [u8]) {
    match (
        bytemuck::try_cast_slice::<u8, M::In>(src),
        bytemuck::try_cast_slice_mut::<u8, M::Out>(dst),
    ) {
        (Ok(s), Ok(d)) => map::<M>(s, d),
        _ => bounce::<M>(src, dst),
    }
}

/// [`map_in_place`] over a byte slice.
pub(crate) fn map_bytes_in_place<M: Map<Out = <M as Map>::In>>(data: &mut [u8]) {
    match bytemuck::try_cast_slice_mut::<u8, M::In>(data) {
        Ok(d) => map_in_place::<M>(d),
        Err(_) => {
            let size = std::mem::size_of::<M::In>();
            let mut tmp = [M::In::zeroed(); CHUNK];
            for chunk in data.chunks_mut(CHUNK * size) {
                let n = chunk.len() / size;
                let t = &mut tmp[..n];
                bytemuck::cast_slice_mut::<M::In, u8>(t).copy_from_slice(chunk);
                map_in_place::<M>(t);
                chunk.copy_from_slice(bytemuck::cast_slice::<M::In, u8>(t));
            }
        }
    }
}

fn bounce<M: Map>(src: &[u8], dst: &mut [u8]) {
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
        map::<M>(&tmp_in[..n], &mut tmp_out[..n]);
        d.copy_from_slice(bytemuck::cast_slice::<M::Out, u8>(&tmp_out[..n]));
    }
}
