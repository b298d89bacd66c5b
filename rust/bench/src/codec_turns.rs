//! The TOON codec's time against `serde_json`'s measured in turns, for the codec section:
//! short batches of our encode and `serde_json::to_string` (and of our decode and
//! `serde_json::from_str`) on the same value take turns, and the ratio is the median of the
//! rounds' ratios.
//!
//! Why beside criterion's times: criterion measures each function for its own seconds, one
//! after the other, so a change in the machine's speed between them (other work, the host of
//! a virtual machine) moves the ratio; the codec's decode of payload (d) read 0.72× to 1.15×
//! of `serde_json`'s in five runs of one hour on one machine, while its instruction count
//! stayed at 0.99×. Two batches a few milliseconds apart see the same machine.

use std::hint::black_box;
use std::time::{Duration, Instant};

use ide_mcp_protocol::toon::{self, DecodeOptions, EncodeOptions};
use serde_json::Value;

#[path = "../../protocol/benches/payloads/mod.rs"]
mod payloads;

/// Rounds per payload: each is one batch of ours and one of `serde_json`'s, per direction.
pub const ROUNDS: usize = 41;

/// About how long one batch runs (at least one call).
pub const BATCH_TIME: Duration = Duration::from_millis(4);

/// One payload's ratios: our time over `serde_json`'s, the median of the rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TurnRatios {
    /// Our encode over `serde_json::to_string`.
    pub encode: f64,
    /// Our decode over `serde_json::from_str`.
    pub decode: f64,
}

/// Every payload of the codec bench (by its criterion group), measured in `rounds` rounds of
/// batches of about `batch_time`.
pub fn measure_all(rounds: usize, batch_time: Duration) -> Vec<(String, TurnRatios)> {
    payloads::payloads()
        .into_iter()
        .map(|(name, value)| (name.to_string(), measure(&value, rounds, batch_time)))
        .collect()
}

/// The ratios for one value.
pub fn measure(value: &Value, rounds: usize, batch_time: Duration) -> TurnRatios {
    let encode_options = EncodeOptions::default();
    let decode_options = DecodeOptions::default();
    let toon_text = toon::encode(value, &encode_options);
    let json_text = serde_json::to_string(value).expect("a Value serialises");
    let mut ours_encode = Op::new(|| {
        black_box(toon::encode(black_box(value), &encode_options));
    });
    let mut json_encode = Op::new(|| {
        black_box(serde_json::to_string(black_box(value)).expect("a Value serialises"));
    });
    let mut ours_decode = Op::new(|| {
        black_box(toon::decode(black_box(&toon_text), &decode_options).expect("our text decodes"));
    });
    let mut json_decode = Op::new(|| {
        black_box(serde_json::from_str::<Value>(black_box(&json_text)).expect("valid JSON"));
    });
    ours_encode.size_batch(batch_time);
    json_encode.size_batch(batch_time);
    ours_decode.size_batch(batch_time);
    json_decode.size_batch(batch_time);
    let mut encode_ratios = Vec::with_capacity(rounds);
    let mut decode_ratios = Vec::with_capacity(rounds);
    for round in 0..rounds {
        // Which of the two goes first alternates, so that neither always follows the other;
        // encode and decode start on opposite sides.
        encode_ratios.push(in_turn(round % 2 == 0, &mut ours_encode, &mut json_encode));
        decode_ratios.push(in_turn(round % 2 == 1, &mut ours_decode, &mut json_decode));
    }
    TurnRatios {
        encode: median(&mut encode_ratios).unwrap_or(f64::NAN),
        decode: median(&mut decode_ratios).unwrap_or(f64::NAN),
    }
}

/// One batch of each, ours first or not: ours over theirs, per call.
fn in_turn(ours_first: bool, ours: &mut Op<impl FnMut()>, theirs: &mut Op<impl FnMut()>) -> f64 {
    if ours_first {
        let ours = ours.batch();
        ours / theirs.batch()
    } else {
        let theirs = theirs.batch();
        ours.batch() / theirs
    }
}

/// One operation and the calls of its batch.
struct Op<F> {
    call: F,
    calls_per_batch: u32,
}

impl<F: FnMut()> Op<F> {
    fn new(call: F) -> Op<F> {
        Op {
            call,
            calls_per_batch: 1,
        }
    }

    /// Warms the operation up and sets its batch to about `batch_time`.
    fn size_batch(&mut self, batch_time: Duration) {
        self.batch();
        let one = self.batch().max(1.0);
        let calls = (batch_time.as_nanos() as f64 / one).clamp(1.0, 1_000_000.0);
        self.calls_per_batch = calls as u32;
    }

    /// Nanoseconds per call over one batch.
    fn batch(&mut self) -> f64 {
        let started = Instant::now();
        for _ in 0..self.calls_per_batch {
            (self.call)();
        }
        started.elapsed().as_nanos() as f64 / f64::from(self.calls_per_batch)
    }
}

/// The median of `values` (the lower middle one of an even count); `None` when empty or
/// when a value is not a number.
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.iter().any(|value| value.is_nan()) {
        return None;
    }
    values.sort_by(f64::total_cmp);
    values.get(values.len().checked_sub(1)? / 2).copied()
}

/// The lines `toon-report --turns` reads: `payload<TAB>encode|decode<TAB>ratio`.
pub fn to_tsv(measured: &[(String, TurnRatios)]) -> String {
    measured
        .iter()
        .map(|(payload, ratios)| {
            format!(
                "{payload}\tencode\t{:.4}\n{payload}\tdecode\t{:.4}\n",
                ratios.encode, ratios.decode
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_round() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [1.0, f64::NAN]), None);
    }

    /// Every payload gets both ratios, as positive finite numbers, in the lines the report
    /// reads (`toon_report::attach_turns`).
    #[test]
    fn every_payload_is_measured_in_both_directions() {
        let measured = measure_all(3, Duration::from_micros(200));
        let names: Vec<&str> = measured.iter().map(|(name, _)| name.as_str()).collect();
        let groups: Vec<&str> = crate::toon_report::PAYLOADS
            .iter()
            .map(|(group, _, _)| *group)
            .collect();
        assert_eq!(names, groups);
        for (name, ratios) in &measured {
            for ratio in [ratios.encode, ratios.decode] {
                assert!(ratio.is_finite() && ratio > 0.0, "{name}: {ratios:?}");
            }
        }
        let mut results = crate::toon_report::tests::results_of_equal_times();
        crate::toon_report::attach_turns(&mut results, &to_tsv(&measured)).expect("attached");
        assert!(results.iter().all(|result| result.turns.is_some()));
    }
}
