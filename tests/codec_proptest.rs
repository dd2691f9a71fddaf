//! Property tests: every decoder is chunk-invariant at arbitrary split
//! points (spans included); the SSE decoder agrees with a naive reference
//! implementation of the WHATWG rules on arbitrary line soups; arbitrary
//! bytes never break the event contracts.

mod codec_support;

use codec_support::*;
use proptest::prelude::*;
use toolstream::frame::FrameLimits;
use toolstream::ndjson::NdjsonDecoder;
use toolstream::provider::{DecodeOptions, EventStreamDecoder, Provider};
use toolstream::sse::SseDecoder;
use toolstream::Config;

/// One capture per decoder (and framing).
const SAMPLES: &[&str] = &[
    "openai_chat_gpt4o_parallel_tools.openai-python.sse",
    "llamacpp_two_tools.rig.sse",
    "mistral_tool_no_index.vercel.jsonl",
    "openrouter_parallel_comment_line.rig.sse",
    "anthropic_tool_use_truncated_max_tokens.anthropic-sdk-python.sse",
    "anthropic_thinking_text_tool.rig.sse",
    "openai_responses_reasoning_tools.rust-genai.sse",
    "lmstudio_responses_done_only_args.vercel.jsonl",
    "ollama_native_same_tool_4x.rig.ndjson",
    "gemini_tool_stream_crlf.rust-genai.sse",
    "vertex_gemini_partial_args_nested.vercel.jsonl",
    "cohere_v2_reasoning_then_tool.rig.sse",
    "bedrock_converse_two_tools.rig.eventstream",
];

fn sample(name: &str) -> Option<Vec<u8>> {
    capture_bytes(name)
}

fn splits(len: usize) -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(0..len.max(1), 0..40).prop_map(|mut v| {
        v.sort_unstable();
        v.dedup();
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn every_decoder_is_chunk_invariant(which in 0..SAMPLES.len(), seed in any::<u64>(), reparse in any::<bool>()) {
        let Some(bytes) = sample(SAMPLES[which]) else {
            return Ok(());
        };
        let mut opts = DecodeOptions::default();
        if reparse {
            opts = opts.with_reparse(Config::default());
        }
        let whole = decode_chunked(&bytes, bytes.len(), &opts);
        // Derive split points from the seed so that every sample gets its own.
        let mut rng = seed;
        let mut cuts = Vec::new();
        let mut pos = 0usize;
        while pos < bytes.len() {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            pos += 1 + (rng >> 33) as usize % 200;
            cuts.push(pos);
        }
        let got = decode_split(&bytes, &cuts, &opts);
        prop_assert_eq!(&got, &whole, "{}", SAMPLES[which]);
        check_contracts(&got);
    }

    #[test]
    fn small_streams_any_split(which in 0..SAMPLES.len(), cuts in splits(4096)) {
        let Some(bytes) = sample(SAMPLES[which]) else {
            return Ok(());
        };
        let bytes = &bytes[..bytes.len().min(4096)];
        let opts = DecodeOptions::default();
        let whole = decode_chunked(bytes, bytes.len(), &opts);
        prop_assert_eq!(decode_split(bytes, &cuts, &opts), whole);
    }

    #[test]
    fn sse_matches_the_reference(lines in proptest::collection::vec(sse_line(), 0..30), eols in proptest::collection::vec(0u8..3, 30), bom in any::<bool>(), cuts in splits(600)) {
        let mut input = Vec::new();
        if bom {
            input.extend_from_slice("\u{feff}".as_bytes());
        }
        for (i, l) in lines.iter().enumerate() {
            input.extend_from_slice(l.as_bytes());
            input.extend_from_slice(match eols[i % eols.len()] { 0 => b"\n", 1 => b"\r", _ => b"\r\n" });
        }
        let want = reference_sse(&input);
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        let mut last = 0;
        for &c in &cuts {
            let c = c.min(input.len());
            if c > last {
                d.feed(&input[last..c], &mut out);
                last = c;
            }
        }
        d.feed(&input[last..], &mut out);
        d.finish(&mut out);
        let got: Vec<(String, String, Option<String>)> = out
            .iter()
            .filter_map(|e| e.as_ref().ok())
            .map(|e| (e.event_type().to_string(), e.data_str().to_string(), e.id.as_ref().map(|b| String::from_utf8_lossy(b).into_owned())))
            .collect();
        prop_assert_eq!(got, want);
        // With a small frame limit, the output (errors included) still does
        // not depend on the splits.
        let small = |cuts: &[usize]| {
            let mut d = SseDecoder::with_limits(FrameLimits { max_frame_bytes: 24 });
            let mut out = Vec::new();
            let mut last = 0;
            for &c in cuts {
                let c = c.min(input.len());
                if c > last { d.feed(&input[last..c], &mut out); last = c; }
            }
            d.feed(&input[last..], &mut out);
            d.finish(&mut out);
            out
        };
        prop_assert_eq!(small(&cuts), small(&[]));
    }

    #[test]
    fn ndjson_and_eventstream_split_invariance(data in proptest::collection::vec(any::<u8>(), 0..400), cuts in splits(400), max in 8usize..64) {
        let limits = FrameLimits { max_frame_bytes: max };
        let run_nd = |cuts: &[usize]| {
            let mut d = NdjsonDecoder::with_limits(limits.clone());
            let mut out = Vec::new();
            let mut last = 0;
            for &c in cuts {
                let c = c.min(data.len());
                if c > last { d.feed(&data[last..c], &mut out); last = c; }
            }
            d.feed(&data[last..], &mut out);
            d.finish(&mut out);
            out
        };
        prop_assert_eq!(run_nd(&cuts), run_nd(&[]));
        let run_es = |cuts: &[usize]| {
            let mut d = EventStreamDecoder::with_limits(limits.clone());
            let mut out = Vec::new();
            let mut last = 0;
            for &c in cuts {
                let c = c.min(data.len());
                if c > last { d.feed(&data[last..c], &mut out); last = c; }
            }
            d.feed(&data[last..], &mut out);
            d.finish(&mut out);
            out
        };
        prop_assert_eq!(run_es(&cuts), run_es(&[]));
    }

    #[test]
    fn arbitrary_bytes_keep_the_contracts(data in proptest::collection::vec(any::<u8>(), 0..600), which in 0..8usize, cuts in splits(600)) {
        let opts = match which {
            0 => DecodeOptions::default(),
            1 => DecodeOptions::default().with_reparse(Config::default()),
            n => DecodeOptions::default().with_provider(Provider::ALL[(n - 2) % Provider::ALL.len()]),
        };
        let whole = decode_chunked(&data, data.len().max(1), &opts);
        check_contracts(&whole);
        prop_assert_eq!(decode_split(&data, &cuts, &opts), whole);
    }

    #[test]
    fn mutated_captures_keep_the_contracts(which in 0..SAMPLES.len(), flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let Some(mut bytes) = sample(SAMPLES[which]) else {
            return Ok(());
        };
        for (i, b) in flips {
            let i = i.index(bytes.len());
            bytes[i] = b;
        }
        let opts = DecodeOptions::default();
        let events = decode_chunked(&bytes, 64, &opts);
        check_contracts(&events);
        prop_assert_eq!(decode_chunked(&bytes, bytes.len(), &opts), events);
    }
}

/// Lines over a small alphabet that hits every SSE rule.
fn sse_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(String::new()),
        "(data|event|id|retry|foo)(:( )?[a-z0-9 :é]{0,6})?",
        ":[a-z ]{0,5}",
        Just("data".to_string()),
        Just("id: 1\u{0}2".to_string()),
    ]
}

/// A direct transcription of the WHATWG event stream interpretation, run
/// on the whole input (no incremental state).
fn reference_sse(input: &[u8]) -> Vec<(String, String, Option<String>)> {
    let text = String::from_utf8_lossy(input);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    // Split into lines; a last line without a line end is incomplete.
    let mut lines = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines.push(std::mem::take(&mut cur));
            }
            '\n' => lines.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    let mut out = Vec::new();
    let (mut data, mut event, mut last_id): (String, String, Option<String>) =
        (String::new(), String::new(), None);
    for line in lines {
        if line.is_empty() {
            if data.is_empty() {
                event.clear();
                continue;
            }
            if data.ends_with('\n') {
                data.pop();
            }
            let ty = if event.is_empty() {
                "message".to_string()
            } else {
                std::mem::take(&mut event)
            };
            out.push((ty, std::mem::take(&mut data), last_id.clone()));
            event.clear();
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (name, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line.as_str(), ""),
        };
        match name {
            "event" => event = value.to_string(),
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            "id" if !value.contains('\0') => {
                last_id = if value.is_empty() {
                    None
                } else {
                    Some(value.to_string())
                }
            }
            _ => {}
        }
    }
    out
}
