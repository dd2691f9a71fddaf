//! Replays of fuzz inputs through the assertions of the fuzz targets.
//!
//! `fuzz/src/lib.rs` (the properties every target asserts) is included as
//! a module (`common::fuzz_checks`), so a crash replays through exactly the checks that found it,
//! without cargo-fuzz or a nightly toolchain. Each crash found by fuzzing gets
//! a named test below reading its minimized input from
//! `fuzz/regressions/<target>-<n>.bin` (see `fuzz/README.md`).

mod common;

use common::fuzz_checks;

use std::fs;
use std::path::{Path, PathBuf};

use toolstream::Config;

fn files(dir: impl AsRef<Path>) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut v: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|x| x != "md"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no files in {}", dir.display());
    v
}

/// Every split the fuzz targets' seeds use: whole, bytes, 7-byte chunks, and
/// a few irregular cuts.
fn splittings(len: usize) -> Vec<Vec<usize>> {
    vec![
        vec![],
        (1..len).collect(),
        (1..).map(|i| i * 7).take_while(|&s| s < len).collect(),
        vec![1, 2, 5, 13, 14, 40, 41, 42, 100],
    ]
}

/// Replays one fuzz-target input file (header bytes included) by target name.
fn replay(target: &str, data: &[u8]) {
    match target {
        "content_split" => {
            let (input, splits) = fuzz_checks::split(data);
            fuzz_checks::check_content(input, &splits, &Config::default());
        }
        "pythonic" => {
            let (input, splits) = fuzz_checks::split(data);
            fuzz_checks::check_content(input, &splits, &fuzz_checks::pythonic_config());
        }
        "json_repair" => {
            let (input, splits) = fuzz_checks::split(data);
            fuzz_checks::check_json_repair(input, &splits);
        }
        "sse" => {
            let (opt, input, splits) = fuzz_checks::split_opt(data);
            fuzz_checks::check_sse(input, &splits, opt);
        }
        "ndjson" => {
            let (opt, input, splits) = fuzz_checks::split_opt(data);
            fuzz_checks::check_ndjson(input, &splits, opt);
        }
        "provider" => {
            let (opt, input, splits) = fuzz_checks::split_opt(data);
            fuzz_checks::check_provider(input, &splits, opt);
        }
        "limits" => {
            let (opt, input, splits) = fuzz_checks::split_opt(data);
            fuzz_checks::check_limits(input, &splits, opt);
        }
        "limits_any" => fuzz_checks::check_limits_any(data),
        _ => panic!("unknown fuzz target {target}"),
    }
}

/// Replays `fuzz/regressions/<name>.bin` through its target's assertions.
#[allow(dead_code)]
fn regression(name: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(format!("{name}.bin"));
    let data = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let target = name.rsplit_once('-').map_or(name, |(t, _)| t);
    replay(target, &data);
}

#[test]
fn seeds_content_split() {
    for f in files("fuzz/seeds/content")
        .into_iter()
        .chain(files("fuzz/seeds/pythonic"))
    {
        let input = fs::read(&f).expect("seed");
        // The tests' own contract check (whole, 1, 2, 3, 7, 64-byte chunks) …
        common::check_all(&input, &Config::default());
        // … and the fuzz target's, with its splits.
        for splits in splittings(input.len()) {
            fuzz_checks::check_content(&input, &splits, &Config::default());
        }
    }
}

#[test]
fn seeds_pythonic() {
    let cfg = fuzz_checks::pythonic_config();
    for f in files("fuzz/seeds/pythonic")
        .into_iter()
        .chain(files("fuzz/seeds/content"))
    {
        let input = fs::read(&f).expect("seed");
        common::check_all(&input, &cfg);
        for splits in splittings(input.len()) {
            fuzz_checks::check_content(&input, &splits, &cfg);
        }
    }
}

#[test]
fn seeds_json_repair() {
    for f in files("fuzz/seeds/json") {
        let input = fs::read(&f).expect("seed");
        for splits in splittings(input.len()) {
            fuzz_checks::check_json_repair(&input, &splits);
        }
    }
}

#[test]
fn seeds_limits() {
    // Every field of the options byte takes each of its values at least once.
    let opts = [0x00u8, 0x25, 0x4a, 0x6f, 0x92, 0xaa, 0xb7, 0xdc, 0xff];
    for f in files("fuzz/seeds/content")
        .into_iter()
        .chain(files("fuzz/seeds/pythonic"))
        .chain(files("fuzz/seeds/json"))
    {
        let input = fs::read(&f).expect("seed");
        for opt in opts {
            for splits in splittings(input.len()) {
                fuzz_checks::check_limits(&input, &splits, opt);
            }
        }
    }
}

/// The seeds under the limit sets `fuzz/seed.sh` gives `limits_any`
/// (every field at 0, at 1, at `usize::MAX`; nothing held; mixed), through
/// that target's checks, with its splits.
#[test]
fn seeds_limits_any() {
    let heads: [&[u8]; 5] = [
        &[0, 0, 0, 0, 0, 0, 0],
        &[1, 1, 1, 1, 1, 1, 1],
        &[2, 2, 2, 2, 2, 2, 2],
        &[3, 3, 0, 3, 3, 3, 3],
        &[0x2c, 1, 2, 0x24, 0, 0x0c, 0x54],
    ];
    for f in files("fuzz/seeds/content")
        .into_iter()
        .chain(files("fuzz/seeds/pythonic"))
    {
        let input = fs::read(&f).expect("seed");
        for head in heads {
            for split in [0x00u8, 0x40, 0x82] {
                let mut data = head.to_vec();
                data.push(split);
                data.extend_from_slice(&input);
                fuzz_checks::check_limits_any(&data);
            }
        }
    }
}

/// The real model outputs of `corpus/real` under the same tight limits.
#[test]
fn real_corpus_under_tight_limits() {
    let opts = [0x00u8, 0x25, 0x4a, 0x6f, 0x92, 0xaa, 0xb7, 0xdc, 0xff];
    let mut entries = 0;
    for f in files("corpus/real") {
        let text = fs::read_to_string(&f).expect("corpus file");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let e: serde_json::Value = serde_json::from_str(line).expect("corpus entry");
            let input = e["text"].as_str().expect("text").as_bytes();
            for (k, opt) in opts.into_iter().enumerate() {
                // Whole and byte by byte for every options byte, 7-byte
                // chunks for one in three (the run stays short).
                let mut cuts = vec![Vec::new(), (1..input.len()).collect()];
                if (entries + k) % 3 == 0 {
                    cuts.push(
                        (1..)
                            .map(|i| i * 7)
                            .take_while(|&s| s < input.len())
                            .collect(),
                    );
                }
                for splits in cuts {
                    fuzz_checks::check_limits(input, &splits, opt);
                }
            }
            entries += 1;
        }
    }
    assert!(entries >= 300, "{entries} corpus entries");
}

/// The public raw model outputs of `../shared/corpus/public` under tight
/// limits: whole, byte by byte and in 7-byte chunks. Skipped, with a
/// message, where `../shared` is absent.
#[test]
fn public_corpus_under_tight_limits() {
    let Some(dir) = common::shared::path("corpus/public") else {
        return;
    };
    let mut outputs = 0;
    for f in files(&dir) {
        let name = f
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if !name.ends_with(".jsonl") || name.contains("ground_truth") {
            continue;
        }
        let text = fs::read_to_string(&f).expect("public corpus file");
        for line in text.lines() {
            let Ok(row) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let Some(raw) = row["raw_output"].as_str().or(row["text"].as_str()) else {
                continue;
            };
            let input = raw.as_bytes();
            for opt in [0x00u8, 0x4a, 0xaa, 0xdd] {
                let bytes = (1..input.len()).collect();
                let sevens = (1..)
                    .map(|i| i * 7)
                    .take_while(|&s| s < input.len())
                    .collect();
                for splits in [Vec::new(), bytes, sevens] {
                    fuzz_checks::check_limits(input, &splits, opt);
                }
            }
            outputs += 1;
        }
    }
    assert!(outputs > 1000, "{outputs} public outputs");
}

#[test]
fn split_header_layout() {
    // Header 0x02: two chunk lengths (3, 0) follow, then the input.
    let (input, splits) = fuzz_checks::split(b"\x02\x03\x00abcdef");
    assert_eq!((input, &splits[..]), (&b"abcdef"[..], &[3, 3][..]));
    assert_eq!(fuzz_checks::chunks(input, &splits), [&b"abc"[..], b"def"]);
    // 0x40: one byte at a time; 0x81: 2-byte chunks.
    assert_eq!(fuzz_checks::split(b"\x40abc").1, [1, 2]);
    assert_eq!(fuzz_checks::split(b"\x81abcde").1, [2, 4]);
    // Every target name dispatches.
    for t in [
        "content_split",
        "pythonic",
        "json_repair",
        "sse",
        "ndjson",
        "provider",
    ] {
        replay(t, b"\x00\x00{\"a\": 1}\n\n");
    }
}

// Crashes found by fuzzing (fuzz/regressions/README.md describes each).

/// `\x5f` (feed byte by byte) + `w(i='P\xff`: auto-detection, a pythonic call
/// truncated inside a string holding an invalid UTF-8 byte. Whole vs split
/// give the same arguments but different `InvalidUtf8` repairs (offsets and
/// count): "calls differ whole vs split".
#[test]
fn content_split_1() {
    regression("content_split-1");
}

/// `\x5b` (byte by byte) + `[f(a=\xb3'\xb3`: pythonic dialect, invalid UTF-8
/// in an unquoted value then a truncated string. "calls differ whole vs split":
/// the `InvalidUtf8` repairs differ.
#[test]
fn pythonic_1() {
    regression("pythonic-1");
}

/// `\x40` (byte by byte; the whole input fails the same way) +
/// `<|python_tag|>{"name": "f", "parameters": {"a": 1}}; {"nam1e": "g", "parameters": {}}`:
/// Llama 3 JSON, the second object has no name key. "tiling spans do not cover
/// the input" (53 vs 85): the bytes after the first call are not in any event.
#[test]
fn content_split_2() {
    regression("content_split-2");
}

/// Options `\x74` (frame limit 464 bytes, no EOF dispatch), 10 chunk lengths,
/// then an OpenAI-style SSE capture: the decoder, fed whole, delivers an
/// event whose data is 588 bytes. "SSE event of 588 bytes over the 464-byte
/// limit". Not minimized.
#[test]
fn sse_1() {
    regression("sse-1");
}

/// 136 `(` then `"@a":\xb2.6e-e,}`: the repairer turns each `(` into `[`
/// and closes them all; nested past serde_json's recursion limit (128), the
/// output "is not JSON" for serde_json.
#[test]
fn json_repair_1() {
    regression("json_repair-1");
}

/// An object literal inside a string (`…"b": "…{"c,…`, quotes unescaped)
/// among invalid UTF-8: its braces were counted in runs of ASCII content but
/// not in the runs of valid multi-byte text that can hold them too, so where
/// the literal closed depended on how the input was cut.
#[test]
fn json_repair_2() {
    regression("json_repair-2");
}

/// Auto mode, 7-byte chunks: text with multi-byte characters, then a
/// `<tool_>c\ll{"name": …, "arguments"@[ge(_weather-city=~…` soup with
/// invalid UTF-8 and repeated fragments: "calls differ whole vs split".
#[test]
fn content_split_3() {
    regression("content_split-3");
}

/// Pythonic dialect, byte by byte: `[f(a=True, b=[THFalse\0a < b and
/// <tool_call> is not JSON \xb4\xb4, c=None, …)]` then invalid bytes:
/// "calls differ whole vs split".
#[test]
fn pythonic_2() {
    regression("pythonic-2");
}

/// Byte by byte (whole too): `<|python_tag|>{"name": "f", "parameters":
/// {"a": 1}}; {"name": "g", "parameters": {}}d ` — the input ends while the
/// wrapper waits to see whether `d ` starts another value: "tiling spans do
/// not cover the input" (the last two bytes were in no event).
#[test]
fn content_split_4() {
    regression("content_split-4");
}

/// Byte by byte: `[f(a\\\0rue, c=None, d={'e'\x8d ''', b''@```…`: an empty
/// string with a prefix (`b''`) left the prefix token open, so the bytes
/// after it were written raw into the arguments: "deltas do not add up".
#[test]
fn pythonic_3() {
    regression("pythonic-3");
}

/// Whole: `<|python_start|>[f(a=1)]n_en` — the Llama 4 wrapper ended its
/// pythonic call when `n` came, then waited to learn whether `n_en` starts
/// another call; at the end of input the last four bytes were in no event.
#[test]
fn content_split_5() {
    regression("content_split-5");
}

/// Byte by byte: `[f(a=True, …, d={'e':\xb4 , cTrue, b=F, d={'e':\xb4 , cTrue, ]]]]…`:
/// a dict closed by a mismatched `]` right after a trailing comma was taken
/// for a key of the enclosing dict (`{…}: null`), invalid JSON that the
/// final arguments then re-repaired: "deltas do not add up".
#[test]
fn pythonic_4() {
    regression("pythonic-4");
}

/// Pythonic dialect: an argument `888…8.5e888…8`, a number no double holds:
/// "arguments not JSON (number out of range)" for serde_json.
#[test]
fn pythonic_5() {
    regression("pythonic-5");
}

/// Auto mode, 7-byte chunks: a GLM block `<tool_call>get_weather\n<arg_key>city<"arguments": {…` whose key is
/// never closed, followed by ~1 KB of fenced JSON calls and prose: whole and
/// 7-byte feeding end the GLM block at different places ("text differs
/// whole vs split"). A key longer than `max_tag_bytes` ended the block at
/// the start of the current feed.
#[test]
fn content_split_6() {
    regression("content_split-6");
}

/// Byte by byte vs whole (513 bytes, one more than Harmony's 512-byte
/// header bound): `<|channel|>sistant<|channel|>comma<|channel|>aaaa…` with
/// invalid UTF-8, `to=\x07functions.get_nnel|>commentary …` and a JSON list
/// of calls: whole input reads a Harmony call, byte by byte does not
/// ("text differs whole vs split"). With the whole input the header's last
/// segment ran past the bound (no header); fed in pieces, its recipient was
/// certain before the bound was reached (a call).
#[test]
fn content_split_7() {
    regression("content_split-7");
}

/// Byte by byte vs whole: `<|channel|>` then ~490 bytes of junk and
/// `…analysis<|message|>` ending past Harmony's 512-byte header bound:
/// whole input read a header, byte by byte reached the bound inside
/// `<|message|>` and did not ("text differs whole vs split").
#[test]
fn content_split_8() {
    regression("content_split-8");
}

/// 7-byte chunks: `[web_search({"x": 1}query="tokio tutori…` — a positional
/// dict is the whole arguments object; a keyword argument after it without
/// a comma was written after the closed object ("deltas do not add up").
#[test]
fn content_split_9() {
    regression("content_split-9");
}

/// Byte by byte, minimized: `[{name"",parameters""}{"","argument" {name:3"]`
/// — whole input read a second call named `3"`, byte by byte did not
/// ("calls differ whole vs split"): a name found inside a nameless call's
/// arguments was moved out only while no earlier call had committed the
/// block, and when that happened depended on chunking. Fixed by dropping that
/// rescue (corpus/POLICY.md P7: a `name` inside the arguments is no name).
#[test]
fn content_split_10() {
    regression("content_split-10");
}

/// Byte by byte: "calls differ whole vs split", found by a parallel run at
/// the same time as `content_split-10`; same cause, same fix.
#[test]
fn content_split_11() {
    regression("content_split-11");
}

/// Byte by byte: a Harmony header (`<|channel|>… to=…`) that runs past its
/// 512-byte bound with no `<` in the rest of the chunk was rejected at the
/// end of the chunk, so a call starting right after the bound was read only
/// when the bytes came one by one ("text differs whole vs split").
#[test]
fn content_split_12() {
    regression("content_split-12");
}

/// Byte by byte, minimized: `h(q:')        ]` (pythonic dialect) — whole
/// input closed the unclosed string before `)` (a lost quote: `)`, blanks,
/// `]`), byte by byte it did not ("text differs whole vs split"): after
/// exactly eight blanks the lookahead gave up when the next byte had not
/// arrived yet, instead of waiting for the byte it was going to look at.
#[test]
fn pythonic_6() {
    regression("pythonic-6");
}

/// Byte by byte (whole fails too), minimized: `<|python_start|>f(a=1)[1]`
/// — "tiling spans do not cover the input": after a pythonic value the
/// wrapper read `[1]` as a JSON value; it held no call, and only a JSON
/// value chains a call-less successor into its last call's span, so `[1]`
/// and what followed were in no event. JSON after a pythonic value now ends
/// the wrapper and is text.
#[test]
fn content_split_13() {
    regression("content_split-13");
}

/// Byte by byte, minimized: `<｜tool▁call▁begin｜><｜tool▁sep｜>\0 i`
/// (DeepSeek V3.1, empty name) — "calls differ whole vs split": the
/// `unquoted_string` repair was at the `i` whole and at the blank before it
/// byte by byte. The block skipped blanks before the arguments until the
/// repairer had seen a *value*; after the garbage `\0` had reached the
/// repairer, a blank arriving in its own chunk was skipped without it, so
/// its offsets fell one byte behind. Blanks are now skipped only before the
/// repairer has had any byte.
#[test]
fn content_split_14() {
    regression("content_split-14");
}

/// Byte by byte, minimized: `final to=[ f(X= ]` — "text differs whole vs
/// split": the bare Harmony header test said "call" at `final to=[` (the
/// recipient is certain) and "no header" once the words after it came, so
/// byte by byte a Harmony block was opened (and later given back as text,
/// `[` included) while the whole input read `[ f(X= ]` as a pythonic call.
/// A bare header's first segment is now judged only once it is complete.
#[test]
fn content_split_15() {
    regression("content_split-15");
}

/// Whole input, minimized: `<tools><name>a</name><args/><name>` — "tiling
/// spans do not cover the input" (a lossless break): the input ended inside
/// the `<name>` that would start a second call of the container; the block
/// had committed (call `a`), so its bytes went to no event. A committed
/// block's bytes after its last call are now reported as markup, with a
/// `skipped_content` diagnostic.
#[test]
fn content_split_16() {
    regression("content_split-16");
}

/// Byte by byte, minimized: `["c",⏎` + 15 blanks + `{[THINK]` (pythonic
/// dialect) — "text differs whole vs split": the `'name', {…}` call head
/// looks at most 16 blanks past the comma; input cut exactly at that bound
/// said "no" instead of waiting for the byte there, so byte by byte the
/// block was given back early and `[THINK]` opened reasoning, while the whole
/// input read the head and kept `[THINK]` inside the rejected block's text.
#[test]
fn pythonic_7() {
    regression("pythonic-7");
}

/// Byte by byte, minimized: `call:_{<|"|>\xc2]:` (Gemma) — "calls differ
/// whole vs split": the `invalid_utf8` repair was at the bad lead byte whole
/// and one byte later byte by byte. A delimited string holds trailing
/// closers (`]`, `}`) back; when they were released, their offset was taken
/// as the offset of the bytes after them.
#[test]
fn content_split_17() {
    regression("content_split-17");
}

/// Byte by byte: 1,049 bytes of `<tool_call><name>…` soup whose name runs
/// past `max_tag_bytes` (1,024) with multi-byte characters at the limit —
/// "text differs whole vs split": the cut backed off to the start of the
/// character holding the limit byte, which byte-by-byte feeding had already
/// read, so the block ended at different bytes and a fence trigger after it
/// was read whole but not split. The block now ends exactly at the byte
/// that crosses the limit (`tests/limit_props.rs` checks every alignment).
#[test]
fn content_split_18() {
    regression("content_split-18");
}

/// A panic (483 bytes, Gemini stream): a `partialArgs` `jsonPath` like
/// `$.operations["numbe…"� […` — a quoted key not followed by `]` — put
/// the next segment's start inside a multi-byte character, and slicing the
/// `str` there panicked ("not a char boundary"). Path segments are now cut
/// from the bytes and decoded lossily (`gemini.rs`, `parse_path`, with a
/// property test that any path text parses).
#[test]
fn provider_1() {
    regression("provider-1");
}

/// 7-byte chunks, minimized: `<tools><name>r</name><args></args><name></name>`
/// — "gap or overlap" (lossless and chunk invariance): the empty second
/// `<name>` made the committed block reject itself. Whole input dropped the
/// call `r` with it (all text); in 7-byte chunks `r` had been reported, and
/// the text event then overlapped it. A committed XML block now ends instead
/// of rejecting, and a block's bytes after its last call are `Markup`.
#[test]
fn content_split_19() {
    regression("content_split-19");
}

/// Byte by byte, minimized: `<|tool▁call▁begin|>\x04<｜tool▁call▁end｜>`,
/// 77 blanks (`\r`, form feeds), `<` — "text differs whole vs split": after
/// a call, a DeepSeek section looks through at most 64 blanks for the next
/// token, but only when no other byte had arrived; whole input saw the `<`
/// (a possible token) and waited, so the blanks went into the call's span,
/// while byte by byte they became text. The 64th blank now decides,
/// whatever follows it.
#[test]
fn content_split_20() {
    regression("content_split-20");
}

/// Byte by byte, minimized: `lC\n{`, 8 spaces, `\f\f\r\f\f\f\f"` — "text
/// differs whole vs split": the GLM `name\n{` trigger looks through at most
/// 16 blanks after the brace for `"` or `}`; input cut exactly at that bound
/// was judged "no call" instead of waiting for the byte there, which the
/// whole input had (a `"`: a call).
#[test]
fn content_split_21() {
    regression("content_split-21");
}

/// Byte by byte, minimized: ```` ```json\n[t r```</s> ```` — "text differs
/// whole vs split": the blanks in `t r` make the bare token an unquoted
/// string, and the router (an array of calls holds no strings) halts on
/// that mark; the repairer's step then went on to take a run of token bytes
/// up to the chunk's end, so the fence was rejected after `r```` whole
/// (its `</s>` then fence text) but after `r` byte by byte (`</s>` markup).
/// The switch now ends the step.
#[test]
fn content_split_22() {
    regression("content_split-22");
}

/// Byte by byte, minimized: `functools[{"name"\t*]`, 63 blanks, `*` — "text
/// differs whole vs split": whole input ended the Phi-4 block at the `]`,
/// byte by byte the wrapper held the blank run up to its 64-byte bound and
/// then took it into the call's span. A run that long now ends the block
/// before it however the input is cut.
#[test]
fn content_split_23() {
    regression("content_split-23");
}

/// 7-byte chunks, minimized to 56 bytes: a bare call object in text,
/// `{"name": "w." "params": {type":e": …, "\n<on":ts"}` then `\na`
/// (found by CI's fuzz smoke). Whole input ended the call before the `a` as
/// prose after a blank line, though only one line break preceded it: the
/// envelope's count of trailing line breaks was not reset by arguments
/// written straight to their writer (an opaque run), so a line break
/// inside the arguments counted with the one after them. In 7-byte chunks
/// the run began later and the count was right. Every write now keeps it.
#[test]
fn content_split_24() {
    regression("content_split-24");
}

/// Options `\xaa` (token limit 16), whole: `<tool_call>é{"input"```\ud83d"say "hi" now"`.
/// A key cut by the token limit kept the first half of a lone surrogate's
/// escape, which escaped the key's closing quote: "arguments not JSON".
#[test]
fn limits_1() {
    regression("limits-1");
}

/// Options `\xdd` (arguments 200 bytes), 3-byte chunks: `<|python_tag|>`,
/// 61 NUL bytes, then JSON. Llama's raw code argument checked the limit
/// against the raw bytes of each run of text as it arrived, so the cut (and
/// its `LimitExceeded` offset) depended on the chunks: "calls differ whole
/// vs split".
#[test]
fn limits_2() {
    regression("limits-2");
}

/// Options `\xdd` (token limit 8), 3-byte chunks: an unquoted key of
/// invalid UTF-8 and NUL bytes longer than the limit. The key's cut backed
/// off over a stray continuation byte as if it ended a character, and was
/// made again with every later piece of the key, so where it fell depended
/// on the chunks: "whole vs split differ" (repairer).
#[test]
fn limits_3() {
    regression("limits-3");
}

/// Options `\x00` (held bytes 16), 3-byte chunks: pythonic lines, then
/// `['` and invalid bytes. A candidate call that read nothing and was still
/// undecided at `max_held_bytes` gave back no bytes and was opened again at
/// the same place, forever, pushing a diagnostic each time: out of memory.
#[test]
fn limits_4() {
    regression("limits-4");
}

/// Options `\xaa` (arguments 40 bytes), whole: a call whose arguments are a
/// JSON string holding a cut object. The stringified value's own writer was
/// cut inside a key at the limit; the outer arguments were closed by the
/// repairer, which drops a cut key: the final `{}` did not extend the
/// deltas already handed out.
#[test]
fn limits_5() {
    regression("limits-5");
}

/// Options `\xb1` (arguments 40 bytes), 50-byte chunks: `<tool_call>` and a
/// 63-byte GLM name of invalid bytes, then `{`. The limit (counted from the
/// name's start) was reached at the JSON body's `{`, before its repairer
/// read anything: the arguments were empty, not JSON.
#[test]
fn limits_6() {
    regression("limits-6");
}

/// Options `\xea` (depth 3), byte by byte: a Qwen3-Coder parameter whose
/// JSON value nests past the depth limit at the end of the input. Each
/// later chunk moved the stopped repairer's offset, where its closing
/// repairs are recorded: "calls differ whole vs split" (offsets 281 vs 283).
#[test]
fn limits_7() {
    regression("limits-7");
}

/// Options `\xdd` (depth 8, token 8), byte by byte: the same class, found
/// by a parallel run.
#[test]
fn limits_8() {
    regression("limits-8");
}

/// Options `\xdd` (token 8), 3-byte chunks; minimized to
/// `{name"","parameters":"        {`. Whether a string argument holds JSON
/// was decided on its leading blanks as held raw bytes: fed whole, the `{`
/// after them was seen (stringified JSON); in pieces, the blanks passed the
/// token limit first (plain text).
#[test]
fn limits_9() {
    regression("limits-9");
}

/// A pythonic call with an argument cut by the limit and one repair allowed
/// (`max_repairs` 1): the list was cut as its repairs were made, and the
/// order they were made in (the cut's repair is recorded at the offset where
/// the arguments began, after later ones) depended on the chunks; the list
/// is now cut once, at the lowest offsets.
#[test]
fn limits_10() {
    regression("limits-10");
}

/// A Hermes-like call whose key is held at the token limit (a small limit
/// the fuzzer chose), then blanks. The lane reads a run of blanks in one
/// step, assuming the count was within the limit when the run began; a key's
/// closing quote can take it one past, and the step's subtraction
/// underflowed (a panic with overflow checks, a slice past the input
/// without). Found on the first campaign after that change.
#[test]
fn limits_11() {
    regression("limits-11");
}

/// The same object-literal brace count as `json_repair_2`, found under tight
/// limits in 3-byte chunks (`{"a": [1, "2.5"a": [1 …<ｂ{"a": …`).
#[test]
fn limits_12() {
    regression("limits-12");
}

/// Split header, then `{city: {"a"` (truncated after a key in a nested
/// object): "json::repair and the streaming Repairer disagree" — one wrote
/// `"a": null` (missing value), the other dropped the key.
#[test]
fn json_repair_3() {
    regression("json_repair-3");
}

/// Tight limits; `[f(a='''tri\nple''', b=r…raw…")]` with invalid UTF-8 in
/// a raw string: "repair past the end of the input" (an `InvalidUtf8`
/// repair at offset 44 of 43 bytes).
#[test]
fn limits_13() {
    regression("limits-13");
}
