//! GPT-OSS Harmony messages.
//!
//! ```text
//! <|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"SF"}<|call|>
//! <|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>
//! ```
//!
//! A message header — `<|start|>ROLE`, `<|channel|>CHANNEL`, an optional
//! `<|constrain|>FORMAT`, then `<|message|>` — decides what its content is:
//!
//! * a recipient `to=functions.NAME` (before or after `<|channel|>`, on any
//!   channel) makes the message a call of `NAME` (other recipients such as
//!   `browser.search` name the tool as written); its content is the
//!   arguments JSON, ended by `<|call|>`, `<|end|>` or `<|return|>`. Content
//!   that is not JSON becomes `{"code": …}` for the `python` tool and
//!   `{"value": …}` otherwise ([`RepairKind::NonObjectArguments`]);
//! * the `analysis` channel is reasoning, up to `<|end|>`;
//! * `final`, `commentary` without a recipient, and messages of other roles
//!   are text.
//!
//! **Headers without their opening token.** Servers and templates often
//! drop the first message's `<|start|>assistant` (the prompt ends with it),
//! and sometimes its `<|channel|>` too, so the output begins
//! `analysis<|message|>…`, `assistant<|channel|>commentary to=functions.f …`
//! or `commentary to=functions.f <|constrain|>json<|message|>…`. At the
//! start of a line such a header is read when it is one: its first word is
//! `assistant` or a channel (`analysis`, `commentary`, `final`), or it is
//! `to=RECIPIENT` (after at most two spaces: a prompt that ends with
//! `<|start|>assistant` leaves ` to=functions.f <|constrain|>json<|message|>…`
//! to the output) followed by a Harmony token; then an optional `to=…` word
//! and at most one more word, and a Harmony token. Prose is not a header
//! (`analysis shows …` fails at its second word).
//!
//! A message becomes a call as soon as its recipient is certain (the role
//! is the assistant's and the recipient's name cannot be `user`, `all` or
//! `assistant` any more), so a header cut off by the end of the output
//! before `<|message|>` still yields the call, `truncated`, with `{}`.
//!
//! Channel markup belongs to the span of the event it delimits: the header
//! and end token of an analysis message are in its `Thinking` span, those of
//! a call in its `ToolEnd` span; the header of a text message and the end
//! tokens after text are [`crate::Event::Markup`].

use super::args::{find_any, match_any, ArgsJson, RawArgs};
use super::{Action, Block, BlockArgs, Cx, Flow, LaneHost, Resume, Trigger};
use crate::config::Config;
use crate::event::{Repair, RepairKind, Span};
use crate::scan::{match_lit, Match, Pattern};

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Custom {
            first: b"<",
            matches: call_header,
        },
        action: Action::Block {
            open,
            consume: false,
        },
    },
    Trigger {
        pattern: Pattern::Custom {
            first: b"<",
            matches: analysis_header,
        },
        action: Action::Reasoning { close: b"<|end|>" },
    },
    Trigger {
        pattern: Pattern::Custom {
            first: b"<",
            matches: text_header,
        },
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Line {
            matches: bare_call_header,
        },
        action: Action::Block {
            open: open_bare,
            consume: false,
        },
    },
    Trigger {
        pattern: Pattern::Line {
            matches: bare_analysis_header,
        },
        action: Action::Reasoning { close: b"<|end|>" },
    },
    Trigger {
        pattern: Pattern::Line {
            matches: bare_text_header,
        },
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|end|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|return|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|call|>"),
        action: Action::Markup,
    },
];

const START: &[u8] = b"<|start|>";
const CHANNEL: &[u8] = b"<|channel|>";
const CONSTRAIN: &[u8] = b"<|constrain|>";
const MESSAGE: &[u8] = b"<|message|>";
const ENDS: &[&[u8]] = &[b"<|call|>", b"<|end|>", b"<|return|>"];
/// The tokens inside a header, in [`Seg`] order.
const HEADER_TOKENS: &[&[u8]] = &[CHANNEL, CONSTRAIN, MESSAGE];
const MAX_HEADER: usize = 512;
/// Recipients that are not tools.
const NOT_TOOLS: &[&[u8]] = &[b"user", b"all", b"assistant"];
/// First words of a header without its `<|start|>` / `<|channel|>` token.
const BARE_FIRST: &[&[u8]] = &[b"assistant", b"analysis", b"commentary", b"final"];
const REASONING: &[&[u8]] = &[b"analysis", b"thinking", b"thought"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Analysis,
    Text,
}

/// What the bytes at a position hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scan {
    /// Not a header.
    No,
    /// The bytes end before it is decided.
    Partial,
    /// A message to a tool, certain after `len` bytes; the recipient's name
    /// starts at byte `to`.
    Call { len: usize, to: usize },
    /// The complete `len`-byte header of a message that is not a call.
    Other { len: usize, kind: Kind },
}

/// The header segments: the text after `<|start|>` (or at the start of a
/// bare header), after `<|channel|>`, after `<|constrain|>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seg {
    None,
    Role,
    Channel,
    Constrain,
}

/// What a segment says about the recipient.
enum Recip {
    /// No `to=` word.
    None,
    /// Undecided: the bytes end inside it.
    Open,
    /// A recipient that is not a tool.
    NotTool,
    /// A tool, certain after `certain` bytes; its name starts at `to`.
    Tool { to: usize, certain: usize },
}

fn is_blank(b: u8) -> bool {
    b.is_ascii_whitespace()
}

/// The words of `text` (split at whitespace) as `(start, end)`, with
/// whether each is known to be complete (`complete`: the text is).
fn words(text: &[u8], complete: bool) -> impl Iterator<Item = (usize, usize, bool)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < text.len() && is_blank(text[i]) {
            i += 1;
        }
        if i >= text.len() {
            return None;
        }
        let s = i;
        while i < text.len() && !is_blank(text[i]) {
            i += 1;
        }
        Some((s, i, i < text.len() || complete))
    })
}

/// The first `to=` word of `text` (at absolute offset `base` of the
/// header) from word `skip` on.
fn recipient(text: &[u8], base: usize, complete: bool, skip: usize) -> Recip {
    for (s, e, done) in words(text, complete).skip(skip) {
        let w = &text[s..e];
        if !w.starts_with(b"to=") {
            if !done && b"to=".starts_with(w) {
                return Recip::Open;
            }
            continue;
        }
        let r = &w[3..];
        let to = base + s + 3;
        for k in 0..r.len() {
            if !NOT_TOOLS.iter().any(|n| n.starts_with(&r[..=k])) {
                return Recip::Tool {
                    to,
                    certain: to + k + 1,
                };
            }
        }
        if !done {
            return Recip::Open;
        }
        if r.is_empty() {
            continue;
        }
        if NOT_TOOLS.contains(&r) {
            return Recip::NotTool;
        }
        // A strict prefix of a non-tool (`to=us`): known at its end.
        return Recip::Tool {
            to,
            certain: to + r.len(),
        };
    }
    Recip::None
}

/// Whether the text before the first token of a bare header can be one:
/// `WORD [to=R [WORD]]` or `to=R [WORD]`, WORD from [`BARE_FIRST`].
/// A quick necessary test for a bare header at `at` (a line start): it
/// begins with one of [`BARE_FIRST`] or `to=`, or with a prefix of one where
/// the input is cut. Prose lines fail here, before [`scan`] looks for the
/// header's end (up to [`MAX_HEADER`] bytes ahead); [`bare_ok`] decides.
/// The blanks (spaces, at most [`MAX_LEAD`]) before a bare `to=` header.
fn lead_blanks(at: &[u8]) -> usize {
    let n = at
        .iter()
        .take(MAX_LEAD + 1)
        .take_while(|&&b| b == b' ')
        .count();
    if n > MAX_LEAD {
        return 0;
    }
    n
}

/// Spaces a bare `to=` header may start with.
const MAX_LEAD: usize = 2;

fn bare_start(at: &[u8]) -> bool {
    let lead = lead_blanks(at);
    if lead > 0 {
        let r = &at[lead..];
        return r.starts_with(b"to=") || b"to=".starts_with(r);
    }
    if at.first() == Some(&b' ') {
        return false;
    }
    // Most lines are prose: their first byte already rules out every word
    // (`assistant`, `analysis`, `commentary`, `final`, `to=`).
    if !matches!(at.first(), None | Some(b'<' | b'a' | b'c' | b'f' | b't')) {
        return false;
    }
    // A header token (`<|channel|>` …) right at the line start.
    if at.first() == Some(&b'<') {
        return at.get(1).is_none_or(|&b| b == b'|');
    }
    BARE_FIRST
        .iter()
        .chain(std::iter::once(&&b"to="[..]))
        .any(|f| at.starts_with(f) || f.starts_with(at))
}

fn bare_ok(text: &[u8], complete: bool) -> bool {
    if text.first().is_some_and(|&b| is_blank(b)) || text.contains(&b'\n') || text.contains(&b'\r')
    {
        return false;
    }
    let mut after_to = None;
    for (n, (s, e, done)) in words(text, complete).enumerate() {
        let w = &text[s..e];
        let ok = match (n, after_to) {
            (0, _) if w.starts_with(b"to=") => {
                after_to = Some(0);
                true
            }
            (0, _) => {
                if done {
                    BARE_FIRST.contains(&w)
                } else {
                    BARE_FIRST.iter().any(|f| f.starts_with(w)) || b"to=".starts_with(w)
                }
            }
            (1, None) if w.starts_with(b"to=") => {
                after_to = Some(1);
                true
            }
            (1, None) => !done && b"to=".starts_with(w),
            (_, Some(t)) => n == t + 1,
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

fn word_at(at: &[u8], s: usize) -> &[u8] {
    let e = at[s..]
        .iter()
        .position(|&b| is_blank(b) || b == b'<')
        .map_or(at.len(), |p| s + p);
    &at[s..e]
}

/// Reads the message header at the start of `at`: with `bare`, one without
/// its opening token (see the module docs); with `eof`, `at` is all there
/// is, and a header cut short is read as far as it goes.
fn scan(at: &[u8], bare: bool, eof: bool) -> Scan {
    let more = |at: &[u8]| {
        if eof || at.len() >= MAX_HEADER {
            Scan::No
        } else {
            Scan::Partial
        }
    };
    if bare && !bare_start(at) {
        return Scan::No;
    }
    let (mut i, started) = if bare {
        // ` to=functions.f …`: a prompt that ended with `<|start|>assistant`
        // leaves the blank before the recipient to the output.
        (lead_blanks(at), false)
    } else {
        match match_lit(START, at) {
            Match::Full(n) => (n, true),
            Match::Partial => return more(at),
            Match::No => match match_lit(CHANNEL, at) {
                Match::Full(_) => (0, false),
                Match::Partial => return more(at),
                Match::No => return Scan::No,
            },
        }
    };
    let mut seg = if started || bare {
        Seg::Role
    } else {
        Seg::None
    };
    let mut assistant = !started;
    let mut channel: &[u8] = &[];
    let mut has_channel = false;
    // A recipient that is not a tool came first: the message is no call.
    let mut settled = false;
    // A bare `to=R` header waits for `<|channel|>` as evidence.
    let mut pending: Option<usize> = None;
    let mut role_is_to = false;
    loop {
        let seg_start = i;
        let (end, complete) = match memchr::memchr(b'<', &at[i..]) {
            Some(p) => (i + p, true),
            None => (at.len(), eof),
        };
        // A header is read within its first MAX_HEADER bytes only, so the
        // answer never depends on how much input happens to be there: past
        // the bound the segment is seen as cut, exactly as a shorter input
        // would show it.
        let (end, complete) = if end > MAX_HEADER {
            (MAX_HEADER.max(seg_start), false)
        } else {
            (end, complete)
        };
        let text = &at[seg_start..end];
        let mut skip = 0;
        match seg {
            Seg::None => {}
            Seg::Role => {
                if bare && !bare_ok(text, complete) {
                    return Scan::No;
                }
                // A bare header's first segment is judged whole: words
                // after the recipient can still make it prose (`final
                // to=x and more words`), so a call it names is not reported
                // before the segment ends, or the answer would depend on
                // how much input had come.
                if bare && !complete {
                    return more(at);
                }
                let w0_end = text.iter().position(|&b| is_blank(b));
                if w0_end.is_none() && !complete {
                    return more(at);
                }
                let w0 = &text[..w0_end.unwrap_or(text.len())];
                let w0 = if bare { w0 } else { w0.trim_ascii() };
                role_is_to = w0.starts_with(b"to=");
                if started {
                    assistant = w0.is_empty() || w0 == b"assistant" || role_is_to;
                } else if BARE_FIRST.contains(&w0) && w0 != b"assistant" {
                    channel = w0;
                }
                if !role_is_to {
                    skip = 1;
                }
            }
            Seg::Channel => {
                channel = words(text, complete)
                    .next()
                    .map_or(&[][..], |(s, e, _)| &text[s..e]);
            }
            Seg::Constrain => {}
        }
        if seg != Seg::None && assistant && !settled && pending.is_none() {
            match recipient(text, seg_start, complete, skip) {
                Recip::None => {}
                Recip::Open => return more(at),
                Recip::NotTool => settled = true,
                Recip::Tool { to, certain } => {
                    if bare && seg == Seg::Role && role_is_to {
                        pending = Some(to);
                    } else {
                        return Scan::Call { len: certain, to };
                    }
                }
            }
        }
        if !complete {
            return more(at);
        }
        if end == at.len() {
            // `eof` inside the last segment.
            return Scan::No;
        }
        let (m, k) = match_any(HEADER_TOKENS, &at[end..]);
        let n = match m {
            Match::Full(n) => n,
            Match::Partial => return more(at),
            Match::No => return Scan::No,
        };
        i = end + n;
        if i > MAX_HEADER {
            // The token ends past the bound: no header, as a shorter input
            // (cut inside the token at the bound) would say.
            return Scan::No;
        }
        // A bare `to=R` header is a call once `<|channel|>` or
        // `<|constrain|>` follows it, or `<|message|>` when `R` is a
        // `functions.` tool (the header of a prompt that ended with
        // `<|start|>assistant`).
        if let Some(to) = pending {
            if k < 2 || at[to..].starts_with(b"functions.") {
                return Scan::Call { len: i, to };
            }
        }
        match k {
            0 => {
                has_channel = true;
                seg = Seg::Channel;
            }
            1 => seg = Seg::Constrain,
            _ => break,
        }
    }
    if bare && role_is_to && !has_channel {
        return Scan::No;
    }
    let kind = if assistant && REASONING.contains(&channel) {
        Kind::Analysis
    } else {
        Kind::Text
    };
    Scan::Other { len: i, kind }
}

fn header_of(kind: Option<Kind>, at: &[u8], bare: bool) -> Match {
    match scan(at, bare, false) {
        Scan::Call { len, .. } if kind.is_none() => Match::Full(len),
        Scan::Other { len, kind: k } if kind == Some(k) => Match::Full(len),
        Scan::Partial => Match::Partial,
        _ => Match::No,
    }
}

fn call_header(at: &[u8]) -> Match {
    header_of(None, at, false)
}

fn analysis_header(at: &[u8]) -> Match {
    header_of(Some(Kind::Analysis), at, false)
}

fn text_header(at: &[u8]) -> Match {
    header_of(Some(Kind::Text), at, false)
}

fn bare_call_header(at: &[u8]) -> Match {
    header_of(None, at, true)
}

fn bare_analysis_header(at: &[u8]) -> Match {
    header_of(Some(Kind::Analysis), at, true)
}

fn bare_text_header(at: &[u8]) -> Match {
    header_of(Some(Kind::Text), at, true)
}

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(HarmonyCall::new(false, a.cfg))
}

fn open_bare(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(HarmonyCall::new(true, a.cfg))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Header,
    Lead,
    Json,
    Raw,
    After,
}

/// A message addressed to a tool, read from its header on.
struct HarmonyCall {
    bare: bool,
    /// The header's bytes, while it is read.
    header: Vec<u8>,
    name: String,
    st: St,
    local: Option<usize>,
    json: Option<ArgsJson>,
    raw: Option<RawArgs>,
    cfg: Config,
}

impl HarmonyCall {
    fn new(bare: bool, cfg: &Config) -> Self {
        HarmonyCall {
            bare,
            header: Vec::new(),
            name: String::new(),
            st: St::Header,
            local: None,
            json: None,
            raw: None,
            cfg: cfg.clone(),
        }
    }

    /// The tool named by the header read so far (`eof`: all of it there is).
    /// False when the header names no tool, or names it with a blank
    /// (`to=functions.`), or the input ends inside the name (it may be the
    /// start of another): no call.
    fn name_from_header(&mut self, eof: bool) -> bool {
        let Scan::Call { to, .. } = scan(&self.header, self.bare, eof) else {
            return false;
        };
        let word = word_at(&self.header, to);
        if eof && to + word.len() == self.header.len() {
            return false;
        }
        let r = String::from_utf8_lossy(word).into_owned();
        let name = r.strip_prefix("functions.").unwrap_or(&r);
        if name.trim().is_empty() {
            return false;
        }
        self.name = name.to_owned();
        self.header = Vec::new();
        true
    }

    fn start(&mut self, cx: &mut Cx<'_>, at: u64) -> usize {
        let local = cx.start(self.name.clone(), None, Span::new(at, at));
        self.local = Some(local);
        cx.commit();
        local
    }

    fn done(&mut self, cx: &mut Cx<'_>, at: usize, missing: bool) -> Flow {
        let end = cx.abs(at);
        let local = match self.local {
            Some(l) => l,
            None => {
                let l = self.start(cx, end);
                self.json = Some(ArgsJson::new(&self.cfg.limits, true));
                l
            }
        };
        let extra = if missing {
            vec![Repair {
                kind: RepairKind::MissingCloseTag,
                offset: end,
            }]
        } else {
            Vec::new()
        };
        if let Some(j) = self.json.as_mut() {
            j.end(cx, local, end, extra);
        } else if let Some(r) = self.raw.as_mut() {
            r.end(cx, local, end, extra);
        }
        Flow::Done(at)
    }
}

impl HarmonyCall {
    /// Appends header text that starts at `input[i]`. A header is at most
    /// [`MAX_HEADER`] bytes: when `text` goes past that, nothing is appended
    /// and the answer is the end of the byte that crossed the bound, the
    /// same input position however the input was chunked.
    fn header_text(&mut self, text: &[u8], i: usize) -> Option<usize> {
        let room = MAX_HEADER.saturating_sub(self.header.len());
        if text.len() > room {
            return Some(i + room + 1);
        }
        self.header.extend_from_slice(text);
        None
    }
}

impl Block for HarmonyCall {
    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        let mut i = 0;
        while i < input.len() {
            match self.st {
                St::Header => {
                    let rest = &input[i..];
                    let p = memchr::memchr(b'<', rest);
                    if let Some(at) = self.header_text(&rest[..p.unwrap_or(rest.len())], i) {
                        return Flow::Reject {
                            at,
                            then: Resume::Text,
                        };
                    }
                    let Some(p) = p else {
                        return Flow::More;
                    };
                    i += p;
                    let toks: &[&[u8]] = if self.header.is_empty() && !self.bare {
                        &[START, CHANNEL]
                    } else {
                        HEADER_TOKENS
                    };
                    let n = match match_any(toks, &input[i..]) {
                        (Match::Full(n), _) => n,
                        (Match::Partial, _) => return Flow::Partial(i),
                        (Match::No, _) => {
                            return Flow::Reject {
                                at: i,
                                then: Resume::Text,
                            }
                        }
                    };
                    self.header.extend_from_slice(&input[i..i + n]);
                    i += n;
                    if self.header.len() > MAX_HEADER {
                        return Flow::Reject {
                            at: i,
                            then: Resume::Text,
                        };
                    }
                    if self.header.ends_with(MESSAGE) {
                        if !self.name_from_header(false) {
                            return Flow::Reject {
                                at: i,
                                then: Resume::Text,
                            };
                        }
                        self.st = St::Lead;
                    }
                }
                St::Lead => {
                    let b = input[i];
                    if b.is_ascii_whitespace() {
                        i += 1;
                        continue;
                    }
                    if b == b'<' {
                        match match_any(ENDS, &input[i..]) {
                            (Match::Full(n), _) => return self.done(cx, i + n, false),
                            (Match::Partial, _) => return Flow::Partial(i),
                            (Match::No, _) => {}
                        }
                    }
                    let local = self.start(cx, cx.abs(i));
                    if b == b'{' || b == b'[' {
                        self.json = Some(ArgsJson::new(&self.cfg.limits, true));
                        self.st = St::Json;
                    } else {
                        let key = if self.name == "python" {
                            "code"
                        } else {
                            "value"
                        };
                        let mut raw = RawArgs::new(key, &self.cfg.limits);
                        if key == "value" {
                            // Not JSON: kept as a string.
                            raw.note(RepairKind::NonObjectArguments, cx.abs(i));
                        }
                        self.raw = Some(raw);
                        self.st = St::Raw;
                        let _ = local;
                    }
                }
                St::Json => {
                    let (Some(j), Some(local)) = (self.json.as_mut(), self.local) else {
                        return Flow::Done(i);
                    };
                    let Some(n) = j.feed_value(&input[i..], &mut cx.at(i), local) else {
                        return Flow::More;
                    };
                    i += n;
                    self.st = St::After;
                }
                St::Raw => {
                    let (Some(r), Some(local)) = (self.raw.as_mut(), self.local) else {
                        return Flow::Done(i);
                    };
                    let rest = &input[i..];
                    let base = cx.abs(i);
                    let stops: &[&[u8]] = &[b"<|call|>", b"<|end|>", b"<|return|>", START];
                    match find_any(stops, rest) {
                        Some((p, k, full)) => {
                            r.push(&rest[..p], base);
                            r.flush(cx, local, Span::new(base, base + p as u64));
                            if !full {
                                return Flow::Partial(i + p);
                            }
                            if k == 3 {
                                return self.done(cx, i + p, true);
                            }
                            return self.done(cx, i + p + stops[k].len(), false);
                        }
                        None => {
                            r.push(rest, base);
                            r.flush(cx, local, Span::new(base, base + rest.len() as u64));
                            return Flow::More;
                        }
                    }
                }
                St::After => {
                    let b = input[i];
                    if b.is_ascii_whitespace() {
                        i += 1;
                        continue;
                    }
                    return match match_any(ENDS, &input[i..]) {
                        (Match::Full(n), _) => self.done(cx, i + n, false),
                        (Match::Partial, _) => Flow::Partial(i),
                        (Match::No, _) => self.done(cx, i, true),
                    };
                }
            }
        }
        Flow::More
    }

    fn lane_host(&mut self) -> Option<LaneHost<'_>> {
        // Every byte goes to the arguments reader while it reads.
        match (self.st, self.local, self.json.as_mut()) {
            (St::Json, Some(local), Some(j)) => Some(LaneHost::Args(j, local)),
            _ => None,
        }
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        if self.st == St::Header && !self.name_from_header(true) {
            return false;
        }
        let end = cx.base;
        let local = match self.local {
            Some(l) => l,
            None => {
                let l = self.start(cx, end);
                self.json = Some(ArgsJson::new(&self.cfg.limits, true));
                l
            }
        };
        let extra = vec![Repair {
            kind: RepairKind::MissingCloseTag,
            offset: end,
        }];
        if let Some(j) = self.json.as_mut() {
            j.close(cx, local, true);
            j.end(cx, local, end, extra);
        } else if let Some(r) = self.raw.as_mut() {
            r.set_truncated();
            r.end(cx, local, end, extra);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recipient of a call header, or the kind of another one.
    fn read(h: &[u8], bare: bool) -> Option<Result<String, Kind>> {
        match scan(h, bare, false) {
            Scan::Call { to, .. } => Some(Ok(String::from_utf8_lossy(word_at(h, to)).into_owned())),
            Scan::Other { kind, len } => {
                assert_eq!(len, h.len());
                Some(Err(kind))
            }
            _ => None,
        }
    }

    fn call(r: &str) -> Option<Result<String, Kind>> {
        Some(Ok(r.into()))
    }

    #[test]
    fn headers() {
        assert_eq!(
            read(b"<|channel|>analysis<|message|>", false),
            Some(Err(Kind::Analysis))
        );
        assert_eq!(
            read(b"<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>", false),
            call("functions.get_weather")
        );
        assert_eq!(
            read(b"<|start|>assistant to=functions.f<|channel|>commentary<|constrain|>json<|message|>", false),
            call("functions.f")
        );
        assert_eq!(
            read(b"<|start|>assistant<|channel|>final<|message|>", false),
            Some(Err(Kind::Text))
        );
        assert_eq!(
            read(b"<|start|>user<|message|>", false),
            Some(Err(Kind::Text))
        );
        assert_eq!(
            read(
                b"<|start|>functions.get_weather to=assistant<|message|>",
                false
            ),
            Some(Err(Kind::Text))
        );
        assert_eq!(
            read(
                b"<|start|>assistant to=user<|channel|>analysis<|message|>",
                false
            ),
            Some(Err(Kind::Analysis))
        );
        assert_eq!(
            scan(b"<|start|>assistant<|chan", false, false),
            Scan::Partial
        );
        assert_eq!(scan(b"<|start|>assistant<|foo|>", false, false), Scan::No);
    }

    #[test]
    fn a_call_is_known_at_its_recipient() {
        let h = b"<|start|>assistant<|channel|>commentary to=functions.get_weather";
        let at = h.len() - "unctions.get_weather".len();
        // `to=f` cannot be `user`, `all` or `assistant` any more.
        for n in at..=h.len() {
            assert_eq!(
                scan(&h[..n], false, false),
                Scan::Call {
                    len: at,
                    to: at - 1
                }
            );
        }
        for n in 0..at {
            assert_eq!(scan(&h[..n], false, false), Scan::Partial, "{n}");
        }
        // `to=us` is a tool once it ends.
        assert_eq!(
            scan(b"<|start|>assistant to=us", false, false),
            Scan::Partial
        );
        assert!(matches!(
            scan(b"<|start|>assistant to=us ", false, false),
            Scan::Call { .. }
        ));
        assert_eq!(
            scan(b"<|start|>assistant to=assistant", false, false),
            Scan::Partial
        );
        // Cut off by the end of the input.
        assert!(matches!(
            scan(b"<|start|>assistant to=us", false, true),
            Scan::Call { .. }
        ));
        assert_eq!(scan(b"<|start|>assistant to=user", false, true), Scan::No);
    }

    #[test]
    fn bare_headers() {
        assert_eq!(
            read(b"analysis<|message|>", true),
            Some(Err(Kind::Analysis))
        );
        assert_eq!(read(b"final<|message|>", true), Some(Err(Kind::Text)));
        assert_eq!(read(b"assistant<|message|>", true), Some(Err(Kind::Text)));
        assert_eq!(
            read(b"assistant<|channel|>analysis<|message|>", true),
            Some(Err(Kind::Analysis))
        );
        for h in [
            &b"assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"[..],
            b"assistant to=functions.get_weather<|channel|>commentary<|message|>",
            b"assistant to=functions.get_weather abc<|channel|>analysis<|message|>",
            b"commentary to=functions.get_weather <|constrain|>json<|message|>",
            b"to=functions.get_weather<|channel|>analysis<|message|>",
        ] {
            assert_eq!(read(h, true), call("functions.get_weather"), "{:?}", String::from_utf8_lossy(h));
        }
        // Without `<|channel|>`, a bare `to=R` is not enough.
        assert_eq!(scan(b"to=get_weather<|message|>{}", true, false), Scan::No);
        assert_eq!(scan(b" to=user<|message|>", true, false), Scan::No);
        assert_eq!(scan(b"to=user<|message|>Hi", true, false), Scan::No);
        // Prose is decided within its first two words.
        for p in [
            &b"analysis shows that"[..],
            b"final answer",
            b"assistant told me",
            b"commentary to=x and more words",
            b"read<|message|>",
            b"keep <|message|> literal",
            b"assistants",
            b"Analysis<|message|>",
        ] {
            assert_eq!(
                scan(p, true, false),
                Scan::No,
                "{:?}",
                String::from_utf8_lossy(p)
            );
        }
        // The first segment of a bare header is judged whole: a certain
        // recipient waits for the segment's end, since more words make the
        // line prose (the answer must not depend on where input stops).
        assert_eq!(scan(b"final to=x", true, false), Scan::Partial);
        assert_eq!(scan(b"final to=x ", true, false), Scan::Partial);
        assert_eq!(scan(b"final to=x y z", true, false), Scan::No);
        assert_eq!(
            scan(b"final to=x y<|message|>", true, false),
            Scan::Call { len: 10, to: 9 }
        );
        assert_eq!(scan(b"analy", true, false), Scan::Partial);
        assert_eq!(scan(b"analysis to", true, false), Scan::Partial);
    }
}
