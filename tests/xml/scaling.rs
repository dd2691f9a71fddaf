//! Work grows linearly with the input: a value streamed in small chunks
//! costs about the same per byte at 256 KiB as at 1 MiB (a re-scanning
//! parser costs 4× more per byte for each doubling).

use std::time::Instant;

use toolstream::{Config, Event, Parser};

fn time_per_byte(input: &[u8], chunk: usize) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut calls = 0;
    for _ in 0..3 {
        let mut p = Parser::new(Config::default());
        let mut events = Vec::new();
        let t = Instant::now();
        for c in input.chunks(chunk) {
            p.feed(c, &mut events);
        }
        p.finish(&mut events);
        best = best.min(t.elapsed().as_secs_f64() / input.len() as f64);
        calls = events
            .iter()
            .filter(|e| matches!(e, Event::ToolEnd { .. }))
            .count();
    }
    (best, calls)
}

fn qwen_call(value_len: usize) -> Vec<u8> {
    let line = "let x = a < b && c > d; // </param> \"q\" \\ é\n";
    let mut v = String::new();
    while v.len() < value_len {
        v.push_str(line);
    }
    format!("<tool_call>\n<function=write_file>\n<parameter=content>\n{v}\n</parameter>\n</function>\n</tool_call>")
        .into_bytes()
}

#[test]
fn long_values_scale_linearly() {
    for chunk in [7, 30] {
        let (small, n1) = time_per_byte(&qwen_call(256 << 10), chunk);
        let (large, n2) = time_per_byte(&qwen_call(1 << 20), chunk);
        assert_eq!((n1, n2), (1, 1));
        eprintln!(
            "{chunk}-byte chunks: {:.0} MB/s at 256 KiB, {:.0} MB/s at 1 MiB",
            1e-6 / small,
            1e-6 / large
        );
        // Quadratic work would be 4× per byte here; allow noise on shared machines.
        assert!(
            large < small * 2.5,
            "per-byte time grew from {small:e} to {large:e} s with {chunk}-byte chunks"
        );
    }
}
