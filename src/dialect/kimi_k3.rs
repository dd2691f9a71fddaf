//! Kimi K3 sectioned markup.
//!
//! ```text
//! <|open|>think<|sep|>Need the file.<|close|>think<|sep|>
//! <|open|>response<|sep|>Reading it.<|close|>response<|sep|>
//! <|open|>tools<|sep|>
//! <|open|>call tool="read" index="1"<|sep|>
//! <|open|>argument key="path" type="string"<|sep|>/app/a.txt<|close|>argument<|sep|>
//! <|open|>argument key="lines" type="integer"<|sep|>20<|close|>argument<|sep|>
//! <|close|>call<|sep|>
//! <|close|>tools<|sep|>
//! <|close|>message<|sep|>
//! ```
//!
//! Only the four markers `<|open|>`, `<|close|>`, `<|sep|>` and
//! `<|end_of_msg|>` are special tokens; an element is
//! `<|open|>NAME k="v"…<|sep|>` … `<|close|>NAME<|sep|>`. The `think`
//! section is reasoning (the chat template's generation prompt usually
//! opens it: give `<|open|>think<|sep|>` as the prefill), `response` is
//! text, and its markers, `message`'s close and `<|end_of_msg|>` are
//! [markup](crate::Event::Markup). Each `call` in the `tools` section is a
//! call of `tool`; each `argument` a parameter `key` whose value is the
//! raw text up to its close, typed by its `type` attribute (`string` is a
//! string, streamed as it arrives; `integer`, `number`, `boolean`, `null`
//! are coerced; `object` / `array` go through the JSON repairer; any other
//! type is read as untyped XML values are, see [`super::xmlcalls`]).
//! Values are kept exactly as written. A call the output ends inside is
//! `truncated`; a tools section with no call in it is markup.
//!
//! A call's `index` is its 1-based place in the message (the template
//! writes `loop.index`, and numbers tool results the same way, linking
//! them to calls by `tool_call_id`): it restarts at 1 every turn, so it is
//! no id. Call ids come from [`crate::Config::ids`], unique across turns,
//! as vLLM's `kimi_k3` parser (a generated id), SGLang's (the emission
//! order) and llama.cpp's (the attribute skipped) do.

use super::xmlcalls::value::{Ty, Value, Ws};
use super::{Action, Block, BlockArgs, Cx, Flow, Trigger};
use crate::config::Config;
use crate::event::{Repair, RepairKind, Span};
use crate::scan::{match_lit, Match, Pattern};

const OPEN: &[u8] = b"<|open|>";
const CLOSE: &[u8] = b"<|close|>";
const SEP: &[u8] = b"<|sep|>";

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Lit(b"<|open|>tools<|sep|>"),
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<|open|>response<|sep|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|close|>response<|sep|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|close|>message<|sep|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|close|>tools<|sep|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|end_of_msg|>"),
        action: Action::Markup,
    },
    // The think section's close when the prompt's opening of it was not
    // given as the prefill: the marker never leaks into the text.
    Trigger {
        pattern: Pattern::Lit(b"<|close|>think<|sep|>"),
        action: Action::Markup,
    },
];

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(K3Block {
        st: St::Between,
        header: Vec::new(),
        seen: 0,
        call: None,
        value: None,
        calls: 0,
        out: Vec::new(),
        cfg: a.cfg.clone(),
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    /// Between elements: blanks, then a marker.
    Between,
    /// Reading an opening element's header up to `<|sep|>`.
    Header,
    /// An argument's value, up to `<|close|>`.
    Value,
}

/// The open call.
struct Call {
    local: usize,
    args: Vec<u8>,
    n: usize,
    repairs: Vec<Repair>,
}

struct K3Block {
    st: St,
    header: Vec<u8>,
    /// While a header waits for its `<|sep|>`: how much of it (from its
    /// first byte, where the next feed starts again) was searched already.
    seen: usize,
    call: Option<Call>,
    value: Option<Value>,
    calls: usize,
    /// Scratch for the JSON a step writes.
    out: Vec<u8>,
    cfg: Config,
}

/// The value of attribute `key` in a header (`tool="read"`, `key=path`).
fn attr<'h>(header: &'h [u8], key: &[u8]) -> Option<&'h [u8]> {
    let mut i = 0;
    while i < header.len() {
        while i < header.len() && header[i].is_ascii_whitespace() {
            i += 1;
        }
        let ks = i;
        while i < header.len() && !header[i].is_ascii_whitespace() && header[i] != b'=' {
            i += 1;
        }
        let k = &header[ks..i];
        if header.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        let (vs, ve) = match header.get(i) {
            Some(&q @ (b'"' | b'\'')) => {
                let s = i + 1;
                let e = header[s..]
                    .iter()
                    .position(|&b| b == q)
                    .map_or(header.len(), |p| s + p);
                i = (e + 1).min(header.len());
                (s, e)
            }
            _ => {
                let s = i;
                while i < header.len() && !header[i].is_ascii_whitespace() {
                    i += 1;
                }
                (s, i)
            }
        };
        if k == key {
            return Some(&header[vs..ve]);
        }
    }
    None
}

/// The element name a header starts with.
fn element(header: &[u8]) -> &[u8] {
    let h = header.trim_ascii_start();
    let e = h
        .iter()
        .position(u8::is_ascii_whitespace)
        .unwrap_or(h.len());
    &h[..e]
}

impl K3Block {
    /// The longest element header read (`call tool="…" index="…"`): a
    /// tag's bound, [`crate::Limits::max_tag_bytes`].
    fn max_header(&self) -> usize {
        self.cfg.limits.max_tag_bytes.max(16)
    }

    fn emit(&mut self, cx: &mut Cx<'_>, span: Span) {
        if self.out.is_empty() {
            return;
        }
        if let Some(c) = self.call.as_mut() {
            c.args.extend_from_slice(&self.out);
            cx.args(c.local, &self.out, span);
        }
        self.out.clear();
    }

    /// An opening element's header is complete (`at`: just past `<|sep|>`).
    fn opened(&mut self, cx: &mut Cx<'_>, at: u64) {
        let header = std::mem::take(&mut self.header);
        match element(&header) {
            b"call" => {
                self.end_call(cx, at, true);
                let name = attr(&header, b"tool")
                    .or_else(|| attr(&header, b"name"))
                    .unwrap_or_default();
                let name = String::from_utf8_lossy(name.trim_ascii()).into_owned();
                if name.is_empty() {
                    return;
                }
                let local = cx.start(name, None, Span::new(at, at));
                cx.commit();
                self.calls += 1;
                self.call = Some(Call {
                    local,
                    args: Vec::new(),
                    n: 0,
                    repairs: Vec::new(),
                });
                self.out.push(b'{');
                self.emit(cx, Span::new(at, at));
            }
            b"argument" if self.call.is_some() => {
                let key = attr(&header, b"key")
                    .or_else(|| attr(&header, b"name"))
                    .unwrap_or_default();
                let key = String::from_utf8_lossy(key).into_owned();
                let ty = match attr(&header, b"type") {
                    Some(b"string" | b"str") => Ty::Str,
                    Some(t) => Ty::from_schema(std::str::from_utf8(t).ok()),
                    None => Ty::Auto,
                };
                let n = self.call.as_ref().map_or(0, |c| c.n);
                if n > 0 {
                    self.out.extend_from_slice(b", ");
                }
                self.out.extend_from_slice(&super::args::json_string(&key));
                self.out.extend_from_slice(b": ");
                let mut v = Value::new(ty, Ws::Exact, self.cfg.decode_entities, &self.cfg.limits);
                v.begin(&mut self.out);
                self.emit(cx, Span::new(at, at));
                self.value = Some(v);
                self.st = St::Value;
                return;
            }
            // `tools` again, or an element this reader does not know: markup.
            _ => {}
        }
        self.st = St::Between;
    }

    /// The open value ends at `at`.
    fn end_value(&mut self, cx: &mut Cx<'_>, at: u64) {
        if let Some(mut v) = self.value.take() {
            v.finish(&mut self.out);
            self.emit(cx, Span::new(at, at));
            if let Some(c) = self.call.as_mut() {
                c.repairs.append(&mut v.repairs);
                c.n += 1;
            }
        }
    }

    /// Ends the open call at `end`; `missing`: its close was not seen.
    fn end_call(&mut self, cx: &mut Cx<'_>, end: u64, missing: bool) {
        self.end_value(cx, end);
        if self.call.is_none() {
            return;
        }
        self.out.push(b'}');
        self.emit(cx, Span::new(end, end));
        if let Some(mut c) = self.call.take() {
            if missing {
                c.repairs.push(Repair {
                    offset: end,
                    kind: RepairKind::MissingCloseTag,
                });
            }
            let args = String::from_utf8_lossy(&c.args).into_owned();
            cx.end(c.local, end, args, c.repairs, false);
        }
    }

    /// The block ends at byte `at` of the input.
    fn done(&mut self, cx: &mut Cx<'_>, at: usize, missing: bool) -> Flow {
        self.end_call(cx, cx.abs(at), missing);
        cx.commit();
        Flow::Done(at)
    }
}

impl Block for K3Block {
    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        // `<|open|>tools<|sep|>` is made of special tokens: the section is
        // markup whatever follows, so nothing is held undecided.
        cx.commit();
        let mut i = 0;
        while i < input.len() {
            match self.st {
                St::Between => {
                    let b = input[i];
                    if b.is_ascii_whitespace() {
                        i += 1;
                        continue;
                    }
                    if b != b'<' {
                        // Text after the section without its close.
                        return self.done(cx, i, true);
                    }
                    match match_lit(OPEN, &input[i..]) {
                        Match::Full(n) => {
                            i += n;
                            self.header.clear();
                            self.seen = 0;
                            self.st = St::Header;
                            continue;
                        }
                        Match::Partial => return Flow::Partial(i),
                        Match::No => {}
                    }
                    match match_lit(CLOSE, &input[i..]) {
                        Match::Full(_) => {
                            // The close's name decides; read it whole.
                            let rest = &input[i + CLOSE.len()..];
                            let Some(p) = memchr::memmem::find(rest, SEP) else {
                                if rest.len() > self.max_header().saturating_add(SEP.len()) {
                                    return self.done(cx, i, true);
                                }
                                return Flow::Partial(i);
                            };
                            if p > self.max_header() {
                                return self.done(cx, i, true);
                            }
                            let name = rest[..p].trim_ascii();
                            let end = i + CLOSE.len() + p + SEP.len();
                            match name {
                                b"call" => {
                                    self.end_call(cx, cx.abs(end), false);
                                    i = end;
                                }
                                // The value before it has ended already.
                                b"argument" if self.call.is_some() => i = end,
                                b"tools" => {
                                    self.end_call(cx, cx.abs(i), true);
                                    cx.commit();
                                    return Flow::Done(end);
                                }
                                // `message`, `argument` out of place, …:
                                // the section is over.
                                _ => return self.done(cx, i, true),
                            }
                        }
                        Match::Partial => return Flow::Partial(i),
                        Match::No => return self.done(cx, i, true),
                    }
                }
                St::Header => {
                    // The header is read whole, within the tag bound: past
                    // it the section ends at that fixed byte, however the
                    // input was cut. A header cut by a chunk's end is held
                    // and fed again with the next chunk; the search for its
                    // `<|sep|>` goes on where it stopped (`seen`), so no
                    // byte is searched twice.
                    let rest = &input[i..];
                    // Saturating: `max_tag_bytes` may be anything up to `usize::MAX`.
                    let room = self.max_header().saturating_add(1);
                    let from = self.seen.min(rest.len());
                    match memchr::memmem::find(&rest[from..], SEP).map(|p| p + from) {
                        Some(p) if p < room => {
                            self.seen = 0;
                            self.header.clear();
                            self.header.extend_from_slice(&rest[..p]);
                            i += p + SEP.len();
                            self.opened(cx, cx.abs(i));
                        }
                        _ if rest.len() >= room.saturating_add(SEP.len() - 1) => {
                            self.seen = 0;
                            return self.done(cx, i + room, true);
                        }
                        _ => {
                            // A `<|sep|>` may begin in the last bytes.
                            self.seen = rest.len().saturating_sub(SEP.len() - 1);
                            return Flow::Partial(i);
                        }
                    }
                }
                St::Value => {
                    let rest = &input[i..];
                    let stop = memchr::memchr(b'<', rest).unwrap_or(rest.len());
                    if stop > 0 {
                        if let Some(v) = self.value.as_mut() {
                            v.push(&rest[..stop], cx.abs(i), &mut self.out);
                        }
                        self.emit(cx, Span::new(cx.abs(i), cx.abs(i + stop)));
                        i += stop;
                        continue;
                    }
                    match match_lit(CLOSE, rest) {
                        Match::Full(_) => {
                            self.end_value(cx, cx.abs(i));
                            self.st = St::Between;
                        }
                        Match::Partial => return Flow::Partial(i),
                        Match::No => match match_lit(OPEN, rest) {
                            // A new element: this value's close is missing.
                            Match::Full(_) => {
                                if let Some(c) = self.call.as_mut() {
                                    c.repairs.push(Repair {
                                        offset: cx.abs(i),
                                        kind: RepairKind::MissingCloseTag,
                                    });
                                }
                                self.end_value(cx, cx.abs(i));
                                self.st = St::Between;
                            }
                            Match::Partial => return Flow::Partial(i),
                            Match::No => {
                                if let Some(v) = self.value.as_mut() {
                                    v.push(b"<", cx.abs(i), &mut self.out);
                                }
                                self.emit(cx, Span::new(cx.abs(i), cx.abs(i + 1)));
                                i += 1;
                            }
                        },
                    }
                }
            }
        }
        Flow::More
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        let end = cx.base;
        if let Some(c) = self.call.as_ref() {
            let local = c.local;
            self.end_value(cx, end);
            self.out.push(b'}');
            self.emit(cx, Span::new(end, end));
            if let Some(c) = self.call.take() {
                let args = String::from_utf8_lossy(&c.args).into_owned();
                cx.end(local, end, args, c.repairs, true);
            }
        }
        // A tools section the output ended in: its markers are markup.
        cx.commit();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes() {
        let h = br#"call tool="str_replace" index="1""#;
        assert_eq!(element(h), b"call");
        assert_eq!(attr(h, b"tool"), Some(&b"str_replace"[..]));
        assert_eq!(attr(h, b"index"), Some(&b"1"[..]));
        assert_eq!(
            attr(b"argument key=path type=string", b"type"),
            Some(&b"string"[..])
        );
        assert_eq!(attr(b"argument key=\"a b\"", b"key"), Some(&b"a b"[..]));
        assert_eq!(attr(b"call", b"tool"), None);
    }
}
