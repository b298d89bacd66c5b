//! Sixteen bytes at a time in an SSE2 register (x86-64 only; every x86-64 CPU has SSE2, so
//! nothing is detected at run time).
//!
//! The intrinsics come through `safe_arch`, which compiles them only where the target has
//! the feature: this crate reads untrusted text and has no `unsafe` of its own.

use safe_arch::{
    bitor_m128i, cmp_eq_mask_i8_m128i, load_unaligned_m128i, m128i, move_mask_i8_m128i,
    set_splat_i8_m128i,
};

use super::LONG_SPAN;

/// Sixteen bytes.
pub(super) type Lanes = m128i;

/// Bytes a lane search reads at once.
pub(super) const LANE: usize = 16;

/// The sixteen bytes at the start of `chunk` (which has at least sixteen).
#[inline(always)]
pub(super) fn load(chunk: &[u8]) -> Lanes {
    let sixteen: &[u8; LANE] = chunk[..LANE].try_into().expect("a lane's bytes");
    load_unaligned_m128i(sixteen)
}

/// 0xff in every byte of `lanes` that is `target`, 0 in the others.
#[inline(always)]
pub(super) fn equal(lanes: Lanes, target: u8) -> Lanes {
    cmp_eq_mask_i8_m128i(lanes, set_splat_i8_m128i(target as i8))
}

#[inline(always)]
pub(super) fn or(first: Lanes, second: Lanes) -> Lanes {
    bitor_m128i(first, second)
}

/// One bit per byte of `lanes`, set where its high bit is (the first byte is bit 0; the
/// bits above the sixteenth are zero).
#[inline(always)]
pub(super) fn bits(lanes: Lanes) -> u32 {
    move_mask_i8_m128i(lanes) as u32
}

/// The first byte of `bytes` that `marks` flags in its lane, within its first
/// [`LONG_SPAN`] bytes; `Err` when it has fewer than a lane's bytes (the word search reads
/// those).
///
/// The last lane is read where it overlaps the one before: the bytes they share hold no
/// flag, so its first flag is the first byte found.
#[inline(always)]
pub(super) fn first_marked(
    bytes: &[u8],
    marks: impl Fn(Lanes) -> u32,
) -> Result<Option<usize>, ()> {
    let head = &bytes[..bytes.len().min(LONG_SPAN)];
    if head.len() < LANE {
        return Err(());
    }
    let mut lanes = head.chunks_exact(LANE);
    let mut at = 0;
    for chunk in &mut lanes {
        let found = marks(load(chunk));
        if found != 0 {
            return Ok(Some(at + found.trailing_zeros() as usize));
        }
        at += LANE;
    }
    if !lanes.remainder().is_empty() {
        let last = head.len() - LANE;
        let found = marks(load(&head[last..]));
        if found != 0 {
            return Ok(Some(last + found.trailing_zeros() as usize));
        }
    }
    Ok(None)
}
