//! Throughput of the special-token and pythonic dialects, whole and in
//! small chunks (the parser's work must stay linear in the input).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use toolstream::{Config, Parser};

fn inputs() -> Vec<(&'static str, Vec<u8>)> {
    let body = "x".repeat(64 << 10);
    vec![
        (
            "pythonic",
            format!("[write_file(path='/tmp/a.txt', content='{body}', mode=\"w\"), get_time()]").into_bytes(),
        ),
        (
            "deepseek",
            format!(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>write<｜tool▁sep｜>{{\"content\": \"{body}\"}}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
            )
            .into_bytes(),
        ),
        (
            "harmony",
            format!(
                "<|channel|>analysis<|message|>{body}<|end|><|start|>assistant<|channel|>commentary to=functions.write <|constrain|>json<|message|>{{\"content\": \"{body}\"}}<|call|>"
            )
            .into_bytes(),
        ),
        (
            "gemma4",
            format!("<|tool_call>call:write{{content:<|\"|>{body}<|\"|>,n:1}}<tool_call|>").into_bytes(),
        ),
        ("prose", format!("Some text (with a call-like name(x) and [brackets]) {body}\n").repeat(2).into_bytes()),
    ]
}

fn parse(input: &[u8], chunk: usize) -> usize {
    let mut p = Parser::new(Config::default());
    let mut out = Vec::new();
    for c in input.chunks(chunk) {
        p.feed(c, &mut out);
    }
    p.finish(&mut out);
    out.len()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("dialects");
    for (name, input) in inputs() {
        g.throughput(Throughput::Bytes(input.len() as u64));
        for chunk in [7, 4096] {
            g.bench_with_input(BenchmarkId::new(name, chunk), &input, |b, i| {
                b.iter(|| parse(i, chunk))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
