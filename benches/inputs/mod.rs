//! Inputs shared by `benches/parse.rs` and `benches/profile.rs` (the
//! profiling driver must parse exactly what the bench measures).

use toolstream::{Config, Event, Parser};

/// One parse as the benches time it: a new parser (on a clone of `cfg`), `input` fed in
/// `chunk`-byte pieces (0: whole), `finish`; `each` sees the events of
/// every feed, which are then dropped (as a streaming consumer does).
pub(crate) fn parse_with(
    cfg: &Config,
    input: &[u8],
    chunk: usize,
    events: &mut Vec<Event>,
    mut each: impl FnMut(&[Event]),
) {
    let mut p = Parser::new(cfg.clone());
    let chunk = if chunk == 0 {
        input.len().max(1)
    } else {
        chunk
    };
    for c in input.chunks(chunk) {
        p.feed(c, events);
        each(events);
        events.clear();
    }
    p.finish(events);
    each(events);
    events.clear();
}

/// Prose without any call, `len` bytes.
pub(crate) fn prose(len: usize) -> Vec<u8> {
    let base = "The quick brown fox jumps over the lazy dog; it was a bright cold day in April, and the clocks were striking thirteen. ";
    base.as_bytes().iter().copied().cycle().take(len).collect()
}

/// Hermes calls with ~10 KB of arguments each, about `total` bytes.
pub(crate) fn hermes_calls(total: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < total {
        let items: Vec<String> = (0..180)
            .map(|k| format!("{{\"id\": {k}, \"label\": \"item {i}-{k}\", \"ok\": true}}"))
            .collect();
        out.extend_from_slice(
            format!(
                "Calling the tool.\n<tool_call>\n{{\"name\": \"store_{i}\", \"arguments\": {{\"items\": [{}], \"note\": \"batch\"}}}}\n</tool_call>\n",
                items.join(", ")
            )
            .as_bytes(),
        );
        i += 1;
    }
    out
}

/// One call whose one string argument is `len` bytes of prose.
pub(crate) fn string_arg(len: usize) -> Vec<u8> {
    let mut out = b"<tool_call>{\"name\": \"write_file\", \"arguments\": {\"path\": \"/tmp/x\", \"content\": \"".to_vec();
    out.extend(
        prose(len)
            .into_iter()
            .map(|b| if b == b';' { b'.' } else { b }),
    );
    out.extend_from_slice(b"\"}}</tool_call>");
    out
}
