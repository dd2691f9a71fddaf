//! Tool search at scale (seed 004's target: under 100 ms at 1,000 tools):
//! building the BM25 index and selecting under a budget, for 100 and 1,000
//! generated tools.
//!
//! Run: `cargo bench --bench toolkit_search`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use serde_json::json;
use std::hint::black_box;
use toolstream::toolkit::search::{select, Index, SearchOptions};
use toolstream::toolkit::Tool;

const VERBS: &[&str] = &[
    "get", "list", "create", "update", "delete", "search", "send", "read", "write", "sync",
];
const NOUNS: &[&str] = &[
    "issue", "message", "file", "event", "user", "channel", "invoice", "ticket", "branch", "page",
    "contact", "order", "report", "image", "comment", "label", "project", "task", "note", "alert",
];
const SERVICES: &[&str] = &[
    "github", "slack", "jira", "gmail", "drive", "stripe", "notion", "linear", "calendar", "s3",
];

fn tools(n: usize) -> Vec<Tool> {
    (0..n)
        .map(|i| {
            let v = VERBS[i % VERBS.len()];
            let o = NOUNS[(i / VERBS.len()) % NOUNS.len()];
            let s = SERVICES[(i / (VERBS.len() * NOUNS.len())) % SERVICES.len()];
            Tool::new(
                format!("{s}_{v}_{o}_{i}"),
                format!("{v} a {o} in {s}. Returns the {o} with its id, title and timestamps; use the id with the other {s} tools."),
                json!({"type": "object", "properties": {
                    format!("{o}_id"): {"type": "string", "description": format!("The {o} id")},
                    "limit": {"type": "integer", "description": "Maximum results"},
                    "query": {"type": "string", "description": format!("Text to match in the {o}")}
                }, "required": [format!("{o}_id")]}),
            )
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("toolkit_search");
    for n in [100usize, 1_000] {
        let ts = tools(n);
        g.bench_with_input(BenchmarkId::new("index", n), &ts, |b, ts| {
            b.iter(|| Index::new(black_box(ts), 1.2, 0.75))
        });
        let opts = SearchOptions::default().with_context_window(32_768);
        g.bench_with_input(BenchmarkId::new("select", n), &ts, |b, ts| {
            b.iter(|| {
                select(
                    black_box(ts),
                    "send a slack message to the engineering channel about the failing build",
                    &["github_list_issue_0".to_owned()],
                    None,
                    &opts,
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
