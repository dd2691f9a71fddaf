//! The proxy's added cost, against the scripted upstream of the tests
//! (`tests/proxy_support`, no pacing) on loopback, side by side in one run:
//!
//! * `direct`: the client reads the upstream's reply itself (SmolLM2's
//!   257-chunk reply of `corpus/real`, as llama-cpp-python frames it);
//! * `proxy_chat`: the same reply through `/v1/chat/completions`, no tools
//!   (decode + encode);
//! * `proxy_messages_tools`: through `/v1/messages` with tools offered
//!   (decode + in-content parser + normalizer + Anthropic encoder).
//!
//! Per-chunk delay percentiles, time to first chunk, 1,000 concurrent
//! streams, memory per stream and LiteLLM side by side: `benches/proxy_load.sh`.
//!
//! Each iteration is one whole streamed request; the added time per chunk
//! is (proxy − direct) / 257.
//!
//! ```sh
//! cargo bench --features proxy --bench proxy
//! ```

#[path = "../tests/proxy_support/mod.rs"]
#[allow(unreachable_pub)]
mod proxy_support;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use futures_util::StreamExt;
use serde_json::{json, Value};

async fn read(client: &reqwest::Client, url: &str, body: &Value) -> usize {
    let r = client.post(url).json(body).send().await.unwrap();
    let mut s = r.bytes_stream();
    let mut n = 0;
    while let Some(Ok(c)) = s.next().await {
        n += c.len();
    }
    n
}

fn bench_proxy(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (up, proxy) = rt.block_on(async {
        let up = proxy_support::start_upstream(Duration::ZERO).await;
        let proxy = proxy_support::start_proxy(&up.url(), |_| {}).await;
        (up, proxy)
    });
    let client = reqwest::Client::new();
    let chat = json!({"model": "m", "stream": true,
                      "messages": [{"role": "user", "content": "scenario:real:smollm2-hermes-weather-000"}]});
    let messages = json!({"model": "m", "max_tokens": 300, "stream": true, "tools": proxy_support::weather_tools_anthropic(),
                          "messages": [{"role": "user", "content": "scenario:real:smollm2-hermes-weather-000"}]});
    let mut g = c.benchmark_group("proxy");
    g.sample_size(50);
    let direct = format!("{}/v1/chat/completions", up.url());
    g.bench_function("direct", |b| {
        b.iter(|| rt.block_on(read(&client, &direct, &chat)))
    });
    let via = format!("{proxy}/v1/chat/completions");
    g.bench_function("proxy_chat", |b| {
        b.iter(|| rt.block_on(read(&client, &via, &chat)))
    });
    let via = format!("{proxy}/v1/messages");
    g.bench_function("proxy_messages_tools", |b| {
        b.iter(|| rt.block_on(read(&client, &via, &messages)))
    });
    g.finish();
}

criterion_group!(benches, bench_proxy);
criterion_main!(benches);
