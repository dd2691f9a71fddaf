//! [`DocumentRepairer`]: the JSON in a piece of text, repaired as the text
//! streams in, in memory bounded by the [`Limits`].

use crate::config::{LimitKind, Limits};
use crate::event::{Repair, RepairKind};

use super::repair::{ends_in_blank_line, Repairer, Sink, Status};
use super::{closing_fence, completion, incomplete_utf8_tail};
use crate::scan::{match_lit, Match};

/// The literals a document may be alone (`true`, Python's `None`, …).
const LITERALS: [&[u8]; 6] = [b"true", b"false", b"null", b"True", b"False", b"None"];

/// Finds and repairs the JSON in a piece of text fed in chunks: a value
/// possibly inside prose or a code fence, possibly truncated or malformed.
/// Several top-level values make one JSON array. The output is written as
/// values complete: the first once a second one completes (it then opens
/// the array) or the input ends, each later one at once, so at most two
/// values' output is held, each bounded by [`Limits::max_args_bytes`].
///
/// A value the text left unclosed ends where the text plainly moved on:
/// at the closing fence of a value that an opening fence (an odd number of
/// ```` ``` ```` before it) put in a code block — ```` ``` ```` where JSON
/// syntax belongs, or a line of up to three blanks and ```` ``` ```` in a
/// string — and at prose after a blank line (a letter where the value
/// could only go on with a comma, a closer, or a key or element after a
/// comma). The value is closed there (not `truncated`), and the fence or
/// the prose is not read as a key or a string of it. Deciding whether a
/// line is a closing fence takes at most 8 bytes after the line break:
/// those are held across chunks until it is decided (or the input ends,
/// where a fence cut short is one), so the result does not depend on how
/// the input was split.
///
/// Every value is repaired under the limits: [`Limits::max_depth`] and
/// [`Limits::max_token_bytes`] bound what the repairer holds,
/// [`Limits::max_args_bytes`] the output of one value, and
/// [`Limits::max_repairs`] the repairs listed (more are made). A value cut
/// by a limit is closed where it was cut, and the document ends there
/// (what follows is not read as more values); [`DocumentEnd::limit`] says
/// which limit and where. Valid JSON within the limits comes out unchanged.
///
/// ```
/// use toolstream::json::DocumentRepairer;
/// use toolstream::Limits;
/// let mut doc = DocumentRepairer::new(&Limits::default());
/// let mut out = Vec::new();
/// doc.feed(b"Sure!\n```json\n{'a': 1,", &mut out);
/// doc.feed(b"}\n```\nDone.", &mut out);
/// let end = doc.finish(&mut out).unwrap();
/// assert_eq!(out, br#"{"a": 1}"#);
/// assert!(end.limit.is_none() && !end.truncated);
/// ```
#[derive(Debug)]
pub struct DocumentRepairer {
    limits: Limits,
    state: State,
    /// Absolute offset of the next input byte.
    offset: u64,
    /// The literal a document that is one would be (its first bytes, at
    /// most a literal's length), and the blanks seen after it.
    lit: Vec<u8>,
    /// Where the document's first non-blank byte is.
    lead: u64,
    /// The first value's output, held until a second one completes or the
    /// input ends.
    first: Option<Vec<u8>>,
    values: usize,
    repairs: Vec<Repair>,
    truncated: bool,
    limit: Option<LimitHit>,
    /// The bytes from a stop of the open value's repairer (a backtick or a
    /// line break that may begin a closing fence) that cannot be decided
    /// yet: at most [`FENCE_LOOKAHEAD`], not yet read.
    held: Vec<u8>,
    /// An odd number of ```` ``` ```` were read so far (runs of backticks
    /// count one per three, as a left-to-right search finds them).
    fence_odd: bool,
    /// Backticks at the end of what was read, modulo three.
    ticks: u8,
}

/// The most bytes a closing fence needs to be told from content: a line
/// break, three blanks, three backticks and the byte after them.
const FENCE_LOOKAHEAD: usize = 8;

#[derive(Debug)]
enum State {
    /// Before the first non-blank byte.
    Lead,
    /// The document so far is blanks and a start of a literal.
    Literal,
    /// Looking for the next `{` or `[`.
    Scan,
    /// Inside a value.
    Value(Box<Open>),
    /// A document that is one scalar ended, or a limit was reached: the
    /// rest of the input is not read.
    Over,
}

#[derive(Debug)]
struct Open {
    repairer: Repairer,
    out: Capped,
    /// Where the value began.
    start: u64,
    /// A document that is this one value (a scalar).
    scalar: bool,
}

/// A limit that cut the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitHit {
    /// Which limit.
    pub limit: LimitKind,
    /// The input offset where it was reached (for `max_args_bytes`, where
    /// the value that outgrew it began).
    pub offset: u64,
}

/// What a [`DocumentRepairer`] found, once the input ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentEnd {
    /// How many top-level values were written (two or more make an array).
    pub values: usize,
    /// The repairs made, at most [`Limits::max_repairs`] of them (then one
    /// [`RepairKind::RepairsOmitted`]), lowest offsets first.
    pub repairs: Vec<Repair>,
    /// True when the input ended (or a limit cut it) inside a value.
    pub truncated: bool,
    /// The first limit reached, if one was: the output is closed where it
    /// cut, and nothing after it was read.
    pub limit: Option<LimitHit>,
}

/// Output bytes up to `max`, the rest dropped (`over` set): the repairer's
/// output does not depend on chunking, so neither does the cut.
#[derive(Debug, Default)]
struct Capped {
    buf: Vec<u8>,
    max: usize,
    over: bool,
}

impl Sink for Capped {
    fn write(&mut self, bytes: &[u8]) {
        if self.over {
            return;
        }
        let room = self.max - self.buf.len();
        if bytes.len() <= room {
            self.buf.extend_from_slice(bytes);
        } else {
            self.buf.extend_from_slice(&bytes[..room]);
            self.over = true;
        }
    }
    fn last_byte(&self) -> Option<u8> {
        self.buf.last().copied()
    }
    fn blank_line_tail(&self) -> bool {
        ends_in_blank_line(&self.buf)
    }
    fn opaque(&self) -> bool {
        true
    }
    fn opaque_closable(&self) -> usize {
        usize::MAX
    }
}

impl DocumentRepairer {
    /// A repairer for one document under `limits`.
    pub fn new(limits: &Limits) -> Self {
        DocumentRepairer {
            limits: limits.clone(),
            state: State::Lead,
            offset: 0,
            lit: Vec::new(),
            lead: 0,
            first: None,
            values: 0,
            repairs: Vec::new(),
            truncated: false,
            limit: None,
            held: Vec::new(),
            fence_odd: false,
            ticks: 0,
        }
    }

    /// The first limit reached so far, if any (the document ends there).
    pub fn limit(&self) -> Option<LimitHit> {
        self.limit
    }

    /// Feeds the next chunk, appending the output it completes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        let mut rest = chunk;
        // An undecided stop takes the chunk's bytes one at a time until it
        // is decided (at most FENCE_LOOKAHEAD of them), then is read again.
        while !self.held.is_empty() {
            let Some((&b, tail)) = rest.split_first() else {
                return;
            };
            self.held.push(b);
            rest = tail;
            // (A stop still undecided at the bound would be read as at the
            // end of the input; a closing fence never needs more.)
            let full = self.held.len() >= FENCE_LOOKAHEAD;
            if full || stop_at(&self.held) != Match::Partial {
                let held = std::mem::take(&mut self.held);
                self.run(&held, full, out);
            }
        }
        self.run(rest, false, out);
    }

    /// Reads `chunk` (`eof`: the input ends after it). A stop that cannot
    /// be decided within it is left in `held`, its bytes not yet read.
    fn run(&mut self, chunk: &[u8], eof: bool, out: &mut Vec<u8>) {
        let mut i = 0;
        while i < chunk.len() {
            let next = match &mut self.state {
                State::Over => chunk.len(),
                State::Lead => match chunk[i..].iter().position(|b| !b.is_ascii_whitespace()) {
                    None => chunk.len(),
                    Some(k) => {
                        let at = i + k;
                        self.lead = self.abs(at);
                        match chunk[at] {
                            b'"' | b'\'' | b'-' | b'0'..=b'9' => {
                                self.open(self.lead, true);
                            }
                            b't' | b'f' | b'n' | b'T' | b'F' | b'N' => self.state = State::Literal,
                            _ => self.state = State::Scan,
                        }
                        at
                    }
                },
                State::Literal => self.literal(chunk, i),
                State::Scan => match memchr::memchr2(b'{', b'[', &chunk[i..]) {
                    None => chunk.len(),
                    // Opened once the bytes before it are counted (fences).
                    Some(0) => {
                        self.open(self.abs(i), false);
                        i
                    }
                    Some(k) => i + k,
                },
                State::Value(open) => {
                    let p = open.repairer.feed(&chunk[i..], &mut open.out);
                    let at = i + p.consumed;
                    if open.out.over {
                        self.close(LimitKind::MaxArgsBytes, out);
                        chunk.len()
                    } else {
                        match p.status {
                            Status::NeedMore => at,
                            Status::Stop => match stop_at(&chunk[at..]) {
                                // Not a closing fence: that byte is JSON.
                                Match::No => {
                                    open.repairer.accept_stop();
                                    at
                                }
                                Match::Partial if !eof && chunk.len() - at < FENCE_LOOKAHEAD => {
                                    self.held.extend_from_slice(&chunk[at..]);
                                    self.count_fences(&chunk[i..at]);
                                    self.offset += at as u64;
                                    return;
                                }
                                // A closing fence (one cut short by the end
                                // of the input too) or prose: the value
                                // ends, closed; the rest is read as text.
                                _ => {
                                    self.end_value(End::Stop, out);
                                    at
                                }
                            },
                            Status::Done => {
                                // A value that took nothing is skipped by its first byte.
                                let start = open.start;
                                self.end_value(End::Done, out);
                                if self.abs(at) == start {
                                    at + 1
                                } else {
                                    at
                                }
                            }
                            _ => {
                                self.close(LimitKind::MaxDepth, out);
                                chunk.len()
                            }
                        }
                    }
                }
            };
            // Once over, no value opens again: what is left needs no count.
            if !matches!(self.state, State::Over) {
                self.count_fences(&chunk[i..next]);
            }
            i = next;
        }
        self.offset += chunk.len() as u64;
    }

    /// Counts the fences in `bytes`, read after what was counted before.
    fn count_fences(&mut self, bytes: &[u8]) {
        let mut last = None;
        for p in memchr::memchr_iter(b'`', bytes) {
            // A backtick after another (or first, after one that ended the
            // last bytes) adds to the run; any other byte starts a new one.
            if p > 0 && last != Some(p - 1) {
                self.ticks = 0;
            }
            self.ticks += 1;
            if self.ticks == 3 {
                self.ticks = 0;
                self.fence_odd = !self.fence_odd;
            }
            last = Some(p);
        }
        if !bytes.is_empty() && last != Some(bytes.len() - 1) {
            self.ticks = 0;
        }
    }

    /// Ends the document: closes a value the input left open and writes
    /// what is still held. `Err` when the input held no JSON value (and no
    /// limit was reached).
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<DocumentEnd, crate::error::NoJson> {
        if !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            self.run(&held, true, out);
        }
        match std::mem::replace(&mut self.state, State::Over) {
            State::Literal => {
                // The literal and at most one blank after it (a blank ends
                // it as the others would).
                let lit = std::mem::take(&mut self.lit);
                if LITERALS.contains(&lit.trim_ascii_end()) {
                    self.open(self.lead, true);
                    let mut done = false;
                    if let State::Value(open) = &mut self.state {
                        done = open.repairer.feed(&lit, &mut open.out).status == Status::Done;
                    }
                    self.end_value(if done { End::Done } else { End::Input }, out);
                }
            }
            State::Value(open) => {
                self.state = State::Value(open);
                self.end_value(End::Input, out);
            }
            _ => {}
        }
        self.state = State::Over;
        match (self.values, self.first.take()) {
            (0, _) => {}
            (1, Some(first)) => out.extend_from_slice(&first),
            _ => out.push(b']'),
        }
        Repair::cap(&mut self.repairs, self.limits.max_repairs);
        if self.values == 0 && self.limit.is_none() {
            return Err(crate::error::NoJson);
        }
        Ok(DocumentEnd {
            values: self.values,
            repairs: std::mem::take(&mut self.repairs),
            truncated: self.truncated,
            limit: self.limit,
        })
    }

    fn abs(&self, i: usize) -> u64 {
        self.offset + i as u64
    }

    /// The document so far is blanks and `lit`: is it one literal?
    fn literal(&mut self, chunk: &[u8], i: usize) -> usize {
        for (k, &b) in chunk[i..].iter().enumerate() {
            let word = self.lit.trim_ascii_end();
            let blanks = self.lit.len() - word.len();
            let fits = if b.is_ascii_whitespace() {
                !word.is_empty()
            } else {
                blanks == 0
                    && LITERALS
                        .iter()
                        .any(|l| l.len() > word.len() && l.starts_with(word) && l[word.len()] == b)
            };
            if !fits {
                // Not a literal alone: its bytes hold no `{` or `[`.
                self.lit.clear();
                self.state = State::Scan;
                return i + k;
            }
            // Trailing blanks are counted by one, not kept.
            if !(b.is_ascii_whitespace() && blanks > 0) {
                self.lit.push(b);
            }
        }
        chunk.len()
    }

    fn open(&mut self, start: u64, scalar: bool) {
        let mut repairer = Repairer::with_limits(&self.limits)
            .document(true)
            .one_call(self.limits.max_repairs);
        repairer.set_offset(start);
        repairer.set_stop_on_fence(self.fence_odd);
        repairer.set_stop_on_prose(true);
        self.state = State::Value(Box::new(Open {
            repairer,
            out: Capped {
                buf: Vec::new(),
                max: self.limits.max_args_bytes,
                over: false,
            },
            start,
            scalar,
        }));
    }

    /// The value ends: the repairer closes what is open unless it was complete.
    fn end_value(&mut self, end: End, out: &mut Vec<u8>) {
        let State::Value(mut open) = std::mem::replace(&mut self.state, State::Scan) else {
            return;
        };
        match end {
            End::Done => {}
            End::Input => self.truncated |= open.repairer.finish(&mut open.out),
            End::Stop => {
                open.repairer.finish(&mut open.out);
            }
        }
        if open.out.over {
            let start = open.start;
            self.cut(&mut open, LimitKind::MaxArgsBytes, start);
        } else if self.limit.is_none() {
            if let Some(offset) = open.repairer.token_cut() {
                self.limit = Some(LimitHit {
                    limit: LimitKind::MaxTokenBytes,
                    offset,
                });
            }
        }
        self.take_repairs(&mut open.repairer);
        if open.scalar || self.limit.is_some() {
            self.state = State::Over;
        }
        let value = std::mem::take(&mut open.out.buf);
        if !value.is_empty() {
            self.push_value(value, out);
        }
    }

    /// A limit was reached inside the open value: it is closed there and
    /// the document ends.
    fn close(&mut self, kind: LimitKind, out: &mut Vec<u8>) {
        let State::Value(mut open) = std::mem::replace(&mut self.state, State::Over) else {
            return;
        };
        let at = match kind {
            LimitKind::MaxArgsBytes => open.start,
            _ => open.repairer.offset(),
        };
        if kind != LimitKind::MaxArgsBytes {
            open.repairer.finish(&mut open.out);
        }
        self.truncated = true;
        self.cut(&mut open, kind, at);
        self.take_repairs(&mut open.repairer);
        let value = std::mem::take(&mut open.out.buf);
        if !value.is_empty() {
            self.push_value(value, out);
        }
        self.state = State::Over;
    }

    /// Records the limit; an output cut by `max_args_bytes` is closed.
    fn cut(&mut self, open: &mut Open, kind: LimitKind, at: u64) {
        if self.limit.is_none() {
            self.limit = Some(LimitHit {
                limit: kind,
                offset: at,
            });
        }
        Repair::push_bounded(
            &mut self.repairs,
            Repair {
                kind: RepairKind::LimitExceeded,
                offset: at,
            },
            self.limits.max_repairs,
        );
        if open.out.over {
            self.truncated = true;
            let buf = &mut open.out.buf;
            let whole = buf.len() - incomplete_utf8_tail(buf);
            buf.truncate(whole);
            if !buf.is_empty() {
                let tail = completion(buf);
                buf.extend_from_slice(&tail);
            }
        }
    }

    fn take_repairs(&mut self, r: &mut Repairer) {
        let max = self.limits.max_repairs;
        for rep in r.drain_repairs() {
            Repair::push_bounded(&mut self.repairs, rep, max);
        }
    }

    fn push_value(&mut self, value: Vec<u8>, out: &mut Vec<u8>) {
        self.values += 1;
        match self.values {
            1 => self.first = Some(value),
            2 => {
                out.push(b'[');
                out.extend_from_slice(&self.first.take().unwrap_or_default());
                out.push(b',');
                out.extend_from_slice(&value);
            }
            _ => {
                out.push(b',');
                out.extend_from_slice(&value);
            }
        }
    }
}

/// How a value ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// Complete.
    Done,
    /// Cut off by the end of the input.
    Input,
    /// At a closing fence or prose: closed, not cut off.
    Stop,
}

/// At a stop of the repairer (`at[0]`, not read): `No` when it is no
/// closing fence (the byte is read as JSON), `Partial` while that cannot
/// be told from `at`, otherwise the value ends there.
fn stop_at(at: &[u8]) -> Match {
    match at.first() {
        Some(b'`') => match_lit(b"```", at),
        Some(b'\n') => closing_fence(at),
        _ => Match::Full(0),
    }
}
