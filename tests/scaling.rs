//! Work stays linear in the input: a call whose argument grows 16× (or a
//! block whose number of calls grows 16×) costs about 16× to parse, not
//! 256×, whole or in 7-byte chunks, in every reader that streams long
//! values. The bound is loose (64×) so that noise does not make the test
//! fail while quadratic work still would; wall-clock time on a loaded
//! shared machine is still too noisy for every run, so the tests are
//! ignored by default: `cargo test --release --test scaling -- --ignored`.

use std::time::{Duration, Instant};

use toolstream::{Config, Event, Parser};

fn run(input: &[u8], chunk: usize) -> Duration {
    let start = Instant::now();
    let mut p = Parser::new(Config::default());
    let mut out: Vec<Event> = Vec::new();
    for c in input.chunks(chunk) {
        p.feed(c, &mut out);
        out.clear();
    }
    p.finish(&mut out);
    start.elapsed()
}

fn assert_linear(name: &str, make: impl Fn(usize) -> String) {
    let small = make(4 << 10);
    let large = make(64 << 10);
    for chunk in [7, 4096] {
        let (mut a, mut b) = (Duration::MAX, Duration::MAX);
        // Interleaved, best of five: noise only ever adds time.
        for _ in 0..5 {
            a = a.min(run(small.as_bytes(), chunk));
            b = b.min(run(large.as_bytes(), chunk));
        }
        let ratio = b.as_secs_f64() / a.as_secs_f64().max(1e-7);
        assert!(
            ratio < 64.0,
            "{name}, {chunk}-byte chunks: 16x input took {ratio:.1}x time ({a:?} -> {b:?})"
        );
    }
}

#[test]
#[ignore = "timing-sensitive: cargo test --release --test scaling -- --ignored"]
fn long_arguments_are_linear() {
    assert_linear("pythonic string", |n| {
        format!("[write(path='a', body='{}')]", "ab\\n".repeat(n / 4))
    });
    assert_linear("pythonic expression", |n| {
        format!("[write(body={})]", "x+".repeat(n / 2) + "y")
    });
    assert_linear("pythonic list", |n| {
        format!("[write(v=[{}])]", "1, ".repeat(n / 3))
    });
    assert_linear("gemma string", |n| {
        format!(
            "<|tool_call>call:w{{b:<|\"|>{}<|\"|>}}<tool_call|>",
            "a<b ".repeat(n / 4)
        )
    });
    assert_linear("deepseek", |n| {
        format!(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>w<｜tool▁sep｜>{{\"b\": \"{}\"}}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            "x".repeat(n)
        )
    });
    assert_linear("harmony code", |n| {
        format!(
            "<|start|>assistant<|channel|>commentary to=python<|message|>{}<|call|>",
            "print(1)\n".repeat(n / 9)
        )
    });
}

#[test]
#[ignore = "timing-sensitive: cargo test --release --test scaling -- --ignored"]
fn many_calls_are_linear() {
    assert_linear("pythonic calls", |n| {
        format!("[{}]", "f(a=1), ".repeat(n / 8))
    });
    assert_linear("json array", |n| {
        format!(
            "[{}]",
            "{\"name\": \"f\", \"arguments\": {}}, ".repeat(n / 34)
        )
    });
    assert_linear("mistral", |n| {
        "[TOOL_CALLS]f[ARGS]{\"a\": 1}".repeat(n / 26)
    });
    assert_linear("kimi", |n| {
        format!(
            "<|tool_calls_section_begin|>{}<|tool_calls_section_end|>",
            "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|>"
                .repeat(n / 80)
        )
    });
}
