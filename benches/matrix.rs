//! The throughput matrix: dialect × chunk size × argument size.
//!
//! Every input is a short sentence of prose followed by one tool call whose
//! arguments are `{"path": …, "content": <string of N bytes>, "n": 3}` written
//! the way the dialect writes them (JSON inside the markers, XML parameters,
//! Python keyword arguments, Gemma's `<|"|>` strings). N is 100 B, 10 KB and
//! 1 MB; the content is realistic text with quotes, braces, non-ASCII and
//! newlines (escaped where the dialect escapes). Each input is fed whole and
//! in 1, 4, 16 and 64-byte chunks (as `Bytes`, the zero-copy path) to a
//! parser in auto mode, every dialect active.
//!
//! Criterion reports bytes per second. `benches/matrix_report.py` turns the
//! estimates into the tables of BENCHMARKS.md (MB/s and ns per chunk).
//! Each timed closure checks the call it got, so a broken parser cannot
//! look fast.
//!
//! Run: `cargo bench --bench matrix` (about 6 minutes); filter with
//! `cargo bench --bench matrix -- 'matrix/hermes'`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

// The inputs, shared with `benches/profile.rs` (`matrix:DIALECT`), which
// runs one cell under callgrind.
#[path = "inputs/matrix.rs"]
mod matrix_inputs;
use matrix_inputs::{inputs, run, ARG_SIZES};

/// Chunk sizes (0 = whole input in one feed).
const CHUNKS: &[usize] = &[1, 4, 16, 64, 0];

fn matrix(c: &mut Criterion) {
    let mut events = Vec::with_capacity(1 << 16);
    for &(size_label, len) in ARG_SIZES {
        let mut g = c.benchmark_group(format!("matrix_{size_label}"));
        // Small inputs get more samples; the 1 MB inputs in 1-byte chunks
        // take ~0.1 s per iteration.
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_millis(if len > 100_000 {
                2000
            } else {
                700
            }));
        for (dialect, input) in inputs(len) {
            // Sanity: whole and 7-byte chunks agree before timing anything.
            let whole = run(&input, 0, &mut events);
            assert_eq!(whole, run(&input, 7, &mut events), "{dialect}");
            g.throughput(Throughput::Bytes(input.len() as u64));
            for &chunk in CHUNKS {
                let id = if chunk == 0 {
                    "whole".to_owned()
                } else {
                    format!("{chunk}B")
                };
                g.bench_with_input(BenchmarkId::new(dialect, id), &input, |b, i| {
                    b.iter(|| run(i, chunk, &mut events))
                });
            }
        }
        g.finish();
    }
}

criterion_group!(benches, matrix);
criterion_main!(benches);
