//! toolstream side by side with the Rust tool-call parsers, in one release
//! binary, on the same inputs (see README.md next to this crate):
//!
//! * `tool-parser` 1.10.0 (SGLang's model gateway): `QwenParser`,
//!   `parse_incremental` per chunk then `get_unstreamed_tool_args`, or
//!   `parse_complete` for the whole input;
//! * `dynamo-parsers` 11.0.1 (NVIDIA Dynamo): `JailedStream` with the
//!   `hermes` parser over a stream of chat-completion chunks, or
//!   `detect_and_parse_tool_call(text, Some("hermes"), tools)` whole;
//! * `vllm-tool-parser` (vLLM's own crate, vendored read-only at
//!   `../shared/peers/rust/vllm-tool-parser`): `HermesToolParser::create`,
//!   `parse_into` per chunk and `finish`, or `parse_complete` whole — as its
//!   own tests call it.
//!
//! Every (peer, cell) is run once first and checked: the calls (names and
//! arguments as JSON values) and the exact text outside them. Wrong results
//! are still timed and shown as such; an error is shown as the error.
//!
//! Run: `cargo run --release --manifest-path benches/rust_peers/Cargo.toml -- [--quick] [--out FILE] [FILTER]`

mod inputs;

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use dynamo_parsers::tool_calling::jail::{Annotated, JailedStream};
use dynamo_parsers::tool_calling::ToolDefinition;
use dynamo_protocols::types::{
    ChatChoiceStream, ChatCompletionMessageContent, ChatCompletionStreamResponseDelta,
    CreateChatCompletionStreamResponse, FinishReason, Role,
};
use futures::StreamExt;
use inputs::{pieces, Call, Case};
use serde_json::Value;
use tool_parser::{QwenParser, ToolParser as _};
use toolstream::{Config, Dialect, Event, Parser, Tools};
use vllm_tool_parser::{HermesToolParser, ToolParseResult, ToolParser as _};

/// What a parser returned: calls (name, arguments text), the text outside
/// them, and the error it reported, if any.
#[derive(Default, Debug)]
struct Got {
    calls: Vec<(String, String)>,
    text: String,
    error: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Peer {
    Toolstream,
    ToolParser,
    Dynamo,
    Vllm,
}

const PEERS: [Peer; 4] = [Peer::Toolstream, Peer::ToolParser, Peer::Dynamo, Peer::Vllm];

impl Peer {
    fn name(self) -> &'static str {
        match self {
            Peer::Toolstream => "toolstream",
            Peer::ToolParser => "tool-parser",
            Peer::Dynamo => "dynamo",
            Peer::Vllm => "vLLM",
        }
    }
}

/// The tool lists in each peer's type.
struct Env {
    ts: Config,
    smg: Vec<openai_protocol::common::Tool>,
    dyn_tools: Vec<ToolDefinition>,
    vllm: Vec<vllm_tool_parser::Tool>,
    rt: tokio::runtime::Runtime,
}

impl Env {
    fn new(tools: &Value) -> Env {
        let ts = Config::default().with_tools(Tools::from_value(tools).expect("tools"));
        // The hermes dialect only, as the peers are told the format (the
        // corpus row also reports toolstream's default, auto-detection).
        let ts = if std::env::var_os("TOOLSTREAM_AUTO").is_some() {
            ts
        } else {
            ts.with_dialects(vec![Dialect::Hermes])
        };
        let smg = serde_json::from_value(tools.clone()).expect("tool-parser tools");
        let fns: Vec<&Value> = tools
            .as_array()
            .expect("array")
            .iter()
            .map(|t| &t["function"])
            .collect();
        let dyn_tools = fns
            .iter()
            .map(|f| ToolDefinition {
                name: f["name"].as_str().unwrap_or_default().to_owned(),
                parameters: f.get("parameters").cloned(),
                strict: None,
            })
            .collect();
        let vllm = fns
            .iter()
            .map(|f| vllm_tool_parser::Tool {
                name: f["name"].as_str().unwrap_or_default().to_owned(),
                description: f["description"].as_str().map(str::to_owned),
                parameters: f.get("parameters").cloned().unwrap_or(Value::Null),
                strict: None,
            })
            .collect();
        Env {
            ts,
            smg,
            dyn_tools,
            vllm,
            rt: tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("runtime"),
        }
    }
}

/// Polls a future that never waits (tool-parser's) to completion.
fn now<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    match f.as_mut().poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("tool-parser future did not complete synchronously"),
    }
}

fn run_ts(env: &Env, chunks: &[&str], events: &mut Vec<Event>) -> Got {
    let mut p = Parser::new(env.ts.clone());
    let mut got = Got::default();
    let take = |events: &mut Vec<Event>, got: &mut Got| {
        for e in events.drain(..) {
            match e {
                // The first text is taken as the result's `String` (no copy
                // where its `Bytes` is not shared), as the other peers hand
                // over the `String` they made; later ones are appended.
                Event::Text { text, .. } if got.text.is_empty() => {
                    got.text = String::from_utf8(Vec::from(bytes::Bytes::from(text))).expect("UTF-8 text")
                }
                Event::Text { text, .. } => got
                    .text
                    .push_str(std::str::from_utf8(&text).expect("UTF-8 text")),
                Event::ToolEnd { call, .. } => got.calls.push((call.name.to_string(), call.arguments)),
                _ => {}
            }
        }
    };
    for c in chunks {
        p.feed(c.as_bytes(), events);
        take(events, &mut got);
    }
    p.finish(events);
    take(events, &mut got);
    got
}

fn run_smg(env: &Env, chunks: &[&str]) -> Got {
    let mut p = QwenParser::new();
    let mut got = Got::default();
    if chunks.len() == 1 {
        match now(p.parse_complete(chunks[0])) {
            Ok((text, calls)) => {
                got.text = text;
                got.calls = calls
                    .into_iter()
                    .map(|c| (c.function.name, c.function.arguments))
                    .collect();
            }
            Err(e) => got.error = Some(e.to_string()),
        }
        return got;
    }
    let add = |calls: &mut Vec<(String, String)>, index: usize, name: Option<String>, a: &str| {
        if calls.len() <= index {
            calls.resize(index + 1, (String::new(), String::new()));
        }
        if let Some(n) = name {
            calls[index].0.push_str(&n);
        }
        calls[index].1.push_str(a);
    };
    for c in chunks {
        match now(p.parse_incremental(c, &env.smg)) {
            Ok(r) => {
                got.text.push_str(&r.normal_text);
                for item in r.calls {
                    add(&mut got.calls, item.tool_index, item.name, &item.parameters);
                }
            }
            Err(e) => {
                got.error.get_or_insert(e.to_string());
            }
        }
    }
    for item in p.get_unstreamed_tool_args().unwrap_or_default() {
        add(&mut got.calls, item.tool_index, item.name, &item.parameters);
    }
    got
}

/// One chat-completion chunk carrying `content` (Dynamo's stream item), as
/// Dynamo's own jail recorder (`src/bin/record_dynamo_jail_stream.rs`) builds it.
fn dyn_chunk(
    content: Option<String>,
    finish: bool,
) -> Annotated<CreateChatCompletionStreamResponse> {
    #[allow(deprecated)]
    let choice = ChatChoiceStream {
        index: 0,
        delta: ChatCompletionStreamResponseDelta {
            role: Some(Role::Assistant),
            content: content.map(ChatCompletionMessageContent::Text),
            tool_calls: None,
            function_call: None,
            refusal: None,
            reasoning_content: None,
        },
        finish_reason: finish.then_some(FinishReason::Stop),
        logprobs: None,
    };
    Annotated {
        data: Some(CreateChatCompletionStreamResponse {
            id: "bench".to_string(),
            choices: vec![choice],
            created: 0,
            model: "bench".to_string(),
            system_fingerprint: None,
            object: "chat.completion.chunk".to_string(),
            usage: None,
            service_tier: None,
        }),
        id: None,
        event: None,
        comment: None,
        error: None,
    }
}

type DynIn = Vec<Annotated<CreateChatCompletionStreamResponse>>;

fn dyn_prep(chunks: &[&str]) -> DynIn {
    let mut v: DynIn = chunks
        .iter()
        .map(|c| dyn_chunk(Some((*c).to_owned()), false))
        .collect();
    v.push(dyn_chunk(None, true));
    v
}

fn run_dynamo(env: &Env, chunks: &[&str], prepared: DynIn) -> Got {
    let mut got = Got::default();
    if chunks.len() == 1 {
        let r = env
            .rt
            .block_on(dynamo_parsers::tool_calling::detect_and_parse_tool_call(
                chunks[0],
                Some("hermes"),
                Some(&env.dyn_tools),
            ));
        match r {
            Ok((calls, text)) => {
                got.text = text.unwrap_or_default();
                got.calls = calls
                    .into_iter()
                    .map(|c| (c.function.name, c.function.arguments))
                    .collect();
            }
            Err(e) => got.error = Some(e.to_string()),
        }
        return got;
    }
    let jail = JailedStream::builder()
        .tool_call_parser("hermes")
        .tool_definitions(env.dyn_tools.clone())
        .build();
    let out: Vec<_> = env.rt.block_on(
        jail.apply(futures::stream::iter(prepared))
            .collect::<Vec<_>>(),
    );
    let mut calls: Vec<(String, String)> = Vec::new();
    for a in out {
        if let Some(e) = a.error {
            got.error.get_or_insert(format!("{e:?}"));
        }
        let Some(resp) = a.data else { continue };
        let Some(choice) = resp.choices.into_iter().next() else {
            continue;
        };
        if let Some(ChatCompletionMessageContent::Text(t)) = &choice.delta.content {
            got.text.push_str(t);
        }
        for tc in choice.delta.tool_calls.unwrap_or_default() {
            let i = tc.index as usize;
            if calls.len() <= i {
                calls.resize(i + 1, (String::new(), String::new()));
            }
            if let Some(f) = tc.function {
                if let Some(n) = f.name {
                    calls[i].0.push_str(&n);
                }
                if let Some(a) = f.arguments {
                    calls[i].1.push_str(&a);
                }
            }
        }
    }
    got.calls = calls;
    got
}

fn run_vllm(env: &Env, chunks: &[&str]) -> Got {
    let mut p = HermesToolParser::create(&env.vllm).expect("vLLM parser");
    let mut got = Got::default();
    let r = if chunks.len() == 1 {
        p.parse_complete(chunks[0])
    } else {
        let mut r = ToolParseResult::default();
        let mut res = Ok(());
        for c in chunks {
            res = p.parse_into(c, &mut r);
            if res.is_err() {
                break;
            }
        }
        res.and_then(|()| {
            let f = p.finish()?;
            r.normal_text.push_str(&f.normal_text);
            r.calls.extend(f.calls);
            Ok(r)
        })
    };
    match r {
        Ok(r) => {
            got.text = r.normal_text;
            for d in r.calls {
                if got.calls.len() <= d.tool_index {
                    got.calls
                        .resize(d.tool_index + 1, (String::new(), String::new()));
                }
                if let Some(n) = d.name {
                    got.calls[d.tool_index].0.push_str(&n);
                }
                got.calls[d.tool_index].1.push_str(&d.arguments);
            }
        }
        Err(e) => got.error = Some(e.to_string()),
    }
    got
}

/// CPU time of this thread (not counting the time it waits for a core on
/// a busy machine).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for clock_gettime to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// One run of `peer` on `chunks`, and the time of that run alone.
fn run_once(env: &Env, peer: Peer, chunks: &[&str], events: &mut Vec<Event>) -> (Got, Duration) {
    match peer {
        Peer::Dynamo => {
            let prepared = dyn_prep(chunks);
            let t = Instant::now();
            let g = run_dynamo(env, black_box(chunks), prepared);
            (g, t.elapsed())
        }
        _ => {
            let t = Instant::now();
            let g = match peer {
                Peer::Toolstream => run_ts(env, black_box(chunks), events),
                Peer::ToolParser => run_smg(env, black_box(chunks)),
                _ => run_vllm(env, black_box(chunks)),
            };
            (g, t.elapsed())
        }
    }
}

/// The verdict on one result.
struct Check {
    calls_ok: bool,
    text_ok: bool,
    /// Bytes of the expected text (not counting blanks) missing from the result.
    lost: usize,
    /// Bytes (not counting blanks) in the result's text that are not expected.
    extra: usize,
    error: Option<String>,
}

fn nonblank(s: &str) -> Vec<u8> {
    s.bytes().filter(|b| !b.is_ascii_whitespace()).collect()
}

fn calls_match(got: &[(String, String)], want: &[Call]) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|((n, a), w)| {
            *n == w.name && serde_json::from_str::<Value>(a).ok().as_ref() == Some(&w.args)
        })
}

fn check(got: &Got, case: &Case) -> Check {
    let calls_ok = if case.cut {
        // A cut call may be repaired or dropped; nothing else may appear.
        got.calls.is_empty() || (got.calls.len() == 1 && got.calls[0].0 == case.calls[0].name)
    } else {
        calls_match(&got.calls, &case.calls)
    };
    let (g, w) = (nonblank(&got.text), nonblank(&case.prose));
    // Longest common prefix and suffix: what is outside them is lost or extra.
    let pre = g.iter().zip(&w).take_while(|(a, b)| a == b).count();
    let suf = g[pre..]
        .iter()
        .rev()
        .zip(w[pre..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    Check {
        calls_ok,
        text_ok: got.text == case.prose,
        lost: w.len() - pre - suf,
        extra: g.len() - pre - suf,
        error: got.error.clone(),
    }
}

/// Median time of one run, or None when one run exceeds `budget`.
fn measure(
    env: &Env,
    peer: Peer,
    chunks: &[&str],
    events: &mut Vec<Event>,
    first: Duration,
    budget: Duration,
    target: Duration,
) -> Option<(Duration, Duration)> {
    if first > budget {
        return None;
    }
    let mut times = vec![first];
    let mut cpu = Vec::new();
    let start = Instant::now();
    while (start.elapsed() < target || times.len() < 5) && times.len() < 100_000 {
        let c = thread_cpu();
        let (g, t) = run_once(env, peer, chunks, events);
        cpu.push(thread_cpu() - c);
        black_box(g);
        times.push(t);
    }
    times.sort();
    cpu.sort();
    Some((times[times.len() / 2], cpu[cpu.len() / 2]))
}

struct Cell {
    label: String,
    case: Case,
    chunk: usize,
    /// A cell where a peer breaks (reported in its own table).
    break_cell: bool,
}

fn cells() -> Vec<Cell> {
    use inputs::*;
    let mut v = Vec::new();
    let mut add = |label: &str, case: fn() -> Case, chunks: &[usize], break_cell: bool| {
        for &chunk in chunks {
            let mode = if chunk == 0 {
                "whole".to_owned()
            } else {
                format!("{chunk} B")
            };
            v.push(Cell {
                label: format!("{label}, {mode}"),
                case: case(),
                chunk,
                break_cell,
            });
        }
    };
    add(
        "one 10 KB call",
        || one_call(10_000, true),
        &[16, 64, 0],
        false,
    );
    add(
        "one 10 KB call, compact",
        || one_call(10_000, false),
        &[0],
        false,
    );
    add(
        "one 100 KB call",
        || one_call(100_000, true),
        &[16, 0],
        false,
    );
    add(
        "one 100 KB call, compact",
        || one_call(100_000, false),
        &[0],
        false,
    );
    add("one 1 MB call", || one_call(1_000_000, true), &[0], false);
    add("one 10 MB call", || one_call(10_000_000, true), &[0], false);
    add("64 calls", || small_calls(64), &[4, 16, 64, 0], false);
    add("1 MB prose", || prose_only(1_000_000), &[64, 0], false);
    add("640 calls", || small_calls(640), &[0], true);
    add("6,400 calls", || small_calls(6_400), &[0], true);
    add("pretty-printed call", pretty_call, &[16, 0], true);
    add("keys out of order", keys_out_of_order, &[16, 0], true);
    add("call cut at end of stream", cut_at_end, &[16, 0], true);
    v
}

fn mbps(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e6
}

fn fmt_rate(r: Option<f64>) -> String {
    match r {
        None => "> budget".into(),
        Some(r) if r >= 100.0 => format!("{r:.0}"),
        Some(r) if r >= 1.0 => format!("{r:.1}"),
        Some(r) => format!("{r:.3}"),
    }
}

fn verdict(c: &Check) -> String {
    let mut v = Vec::new();
    if let Some(e) = &c.error {
        let e: String = e.chars().take(60).collect();
        v.push(format!("error: {}", e.replace('\n', " ").replace('|', "/")));
    }
    if !c.calls_ok {
        v.push("wrong calls".into());
    }
    if !c.text_ok {
        if c.lost == 0 && c.extra == 0 {
            v.push("text blanks differ".into());
        } else {
            if c.lost > 0 {
                v.push(format!("text: {} B lost", c.lost));
            }
            if c.extra > 0 {
                v.push(format!("text: {} B extra", c.extra));
            }
        }
    }
    if v.is_empty() {
        "ok".into()
    } else {
        v.join("; ")
    }
}

/// The corpus's real replies to the Hermes prompt, with their labels and tools.
struct Entry {
    id: String,
    text: String,
    chunks: Vec<String>,
    tools: Value,
    want: Vec<Call>,
}

fn corpus() -> Vec<Entry> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus");
    let mut labels = std::collections::HashMap::new();
    for l in std::fs::read_to_string(format!("{root}/expected.jsonl"))
        .expect("corpus/expected.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
    {
        let v: Value = serde_json::from_str(l).expect("label");
        let calls: Vec<Call> = v["calls"]
            .as_array()
            .expect("calls")
            .iter()
            .map(|c| Call {
                name: c["name"].as_str().expect("name").to_owned(),
                args: c["arguments"].clone(),
            })
            .collect();
        labels.insert(v["id"].as_str().expect("id").to_owned(), calls);
    }
    let mut out = Vec::new();
    for f in ["smollm2-135m.jsonl", "gemma3-270m.jsonl"] {
        for l in std::fs::read_to_string(format!("{root}/real/{f}"))
            .expect("corpus/real")
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            let v: Value = serde_json::from_str(l).expect("entry");
            if v["prompt_style"] != "hermes" {
                continue;
            }
            let id = v["id"].as_str().expect("id").to_owned();
            out.push(Entry {
                want: labels.get(&id).cloned().unwrap_or_default(),
                id,
                text: v["text"].as_str().expect("text").to_owned(),
                chunks: v["chunks"]
                    .as_array()
                    .expect("chunks")
                    .iter()
                    .map(|c| c.as_str().expect("chunk").to_owned())
                    .collect(),
                tools: v["tools"].clone(),
            });
        }
    }
    out
}

/// Labelled calls matched exactly (as a multiset, no extra call).
fn corpus_right(got: &Got, want: &[Call]) -> bool {
    let mut pool: Vec<(String, Option<Value>)> = got
        .calls
        .iter()
        .map(|(n, a)| (n.clone(), serde_json::from_str(a).ok()))
        .collect();
    for w in want {
        let Some(k) = pool
            .iter()
            .position(|(n, a)| *n == w.name && a.as_ref() == Some(&w.args))
        else {
            return false;
        };
        pool.swap_remove(k);
    }
    pool.is_empty()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let out_file = args
        .iter()
        .position(|a| a == "--out")
        .and_then(|i| args.get(i + 1).cloned());
    let only_ts = args.iter().any(|a| a == "--toolstream-only");
    let filter: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && !(i > &0 && args[i - 1] == "--out"))
        .map(|(_, a)| a)
        .collect();
    let budget = Duration::from_secs(if quick { 2 } else { 8 });
    let target = Duration::from_millis(if quick { 300 } else { 1500 });
    let peers: Vec<Peer> = if only_ts {
        vec![Peer::Toolstream]
    } else {
        PEERS.to_vec()
    };

    let env = Env::new(&inputs::tools());
    let mut events = Vec::with_capacity(1 << 12);
    let mut main_rows = Vec::new();
    let mut break_rows = Vec::new();
    let mut scaling = Vec::new();
    for cell in cells() {
        if !filter.is_empty() && !filter.iter().any(|f| cell.label.contains(f.as_str())) {
            continue;
        }
        let chunks = pieces(&cell.case.text, cell.chunk);
        let bytes = cell.case.text.len();
        let mut rates = Vec::new();
        let mut checks = Vec::new();
        for &peer in &peers {
            let (got, first) = run_once(&env, peer, &chunks, &mut events);
            let c = check(&got, &cell.case);
            let t = measure(&env, peer, &chunks, &mut events, first, budget, target);
            let rate = t.map(|t| mbps(bytes, t.0));
            if peer == Peer::Toolstream && cell.label.starts_with("one ") && cell.chunk == 0 {
                if let Some((wall, cpu)) = t {
                    scaling.push(format!(
                        "| {} | {} | {:.0} | {:.0} |",
                        cell.label,
                        bytes,
                        mbps(bytes, wall),
                        mbps(bytes, cpu)
                    ));
                }
            }
            eprintln!(
                "{:<40} {:<12} {:>10} MB/s  {}",
                cell.label,
                peer.name(),
                fmt_rate(rate),
                verdict(&c)
            );
            rates.push(rate);
            checks.push(c);
        }
        let ts = rates[0];
        let mut row = format!("| {} | {} |", cell.label, fmt_rate(ts));
        for k in 1..peers.len() {
            let ratio = match (ts, rates[k]) {
                (Some(a), Some(b)) => format!("{:.2}×", a / b),
                (Some(_), None) => "peer > budget".into(),
                _ => "-".into(),
            };
            row.push_str(&format!(" {} ({}) |", ratio, fmt_rate(rates[k])));
        }
        for c in &checks {
            row.push_str(&format!(" {} |", verdict(c)));
        }
        if cell.break_cell {
            break_rows.push(row);
        } else {
            main_rows.push(row);
        }
    }

    // The corpus: real replies to the Hermes prompt, whole and as streamed.
    let entries = corpus();
    let mut corpus_row = format!("| {} real Hermes-prompt replies |", entries.len());
    let want_corpus = filter.is_empty() || filter.iter().any(|f| f.as_str() == "corpus");
    if want_corpus {
        for &peer in &peers {
            let mut right = [0usize; 2];
            for e in &entries {
                let env = Env::new(&e.tools);
                let streamed: Vec<&str> = e.chunks.iter().map(String::as_str).collect();
                for (k, chunks) in [vec![e.text.as_str()], streamed].iter().enumerate() {
                    let (got, _) = run_once(&env, peer, chunks, &mut events);
                    if corpus_right(&got, &e.want) {
                        right[k] += 1;
                    } else if k == 0 && std::env::var_os("SHOW_MISSES").is_some() {
                        eprintln!("{} misses {}: {:?}", peer.name(), e.id, got);
                    }
                }
            }
            eprintln!(
                "corpus {:<12} whole {} streamed {}",
                peer.name(),
                right[0],
                right[1]
            );
            corpus_row.push_str(&format!(" {} / {} |", right[0], right[1]));
        }
    }

    let head: String = peers
        .iter()
        .skip(1)
        .map(|p| format!(" ts / {} ({} MB/s) |", p.name(), p.name()))
        .collect();
    let checks_head: String = peers
        .iter()
        .map(|p| format!(" {} check |", p.name()))
        .collect();
    let sep = "---|".repeat(2 + 2 * (peers.len() - 1) + 1);
    let mut md = String::new();
    md.push_str(&format!(
        "| case | toolstream MB/s |{head}{checks_head}\n|{sep}\n"
    ));
    for r in &main_rows {
        md.push_str(r);
        md.push('\n');
    }
    md.push_str(&format!(
        "\nWhere peers break:\n\n| case | toolstream MB/s |{head}{checks_head}\n|{sep}\n"
    ));
    for r in &break_rows {
        md.push_str(r);
        md.push('\n');
    }
    if !scaling.is_empty() {
        md.push_str(
            "\ntoolstream's rate fed whole, by argument size (median wall clock; median thread CPU time, which leaves out the time the thread waited for a core):\n\n| input | bytes | MB/s wall | MB/s CPU |\n|---|---:|---:|---:|\n",
        );
        for r in &scaling {
            md.push_str(r);
            md.push('\n');
        }
    }
    if want_corpus {
        let names: String = peers.iter().map(|p| format!(" {} |", p.name())).collect();
        md.push_str(&format!(
            "\nCorpus (entries whose calls all match the label, whole / as streamed):\n\n| input |{names}\n|{}\n{corpus_row}\n",
            "---|".repeat(peers.len() + 1)
        ));
    }
    println!("{md}");
    if let Some(f) = out_file {
        std::fs::write(&f, &md).expect("write --out");
    }
}
