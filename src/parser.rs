//! The push parser: bytes in, [`Event`]s out.

use std::sync::{Arc, Mutex, OnceLock};

use bytes::{Bytes, BytesMut};

use crate::config::Config;
use crate::dialect::{
    self, reasoning, Action, Block, BlockArgs, Cx, Dialect, Emitter, Flow, Resume, Trigger,
};
use crate::event::{Delta, DiagnosticKind, Event, Repair, RepairKind, Span, ToolCall};
use crate::json::Lane;
use crate::scan::{ByteFinder, Match, Pattern, ScanState};

/// What the parser is in the middle of.
enum Mode {
    /// Prose: scanning for triggers.
    Text,
    /// Inside a reasoning block that ends at `close`; the pending Thinking
    /// span began at `span_start`.
    Reasoning {
        close: &'static [u8],
        span_start: u64,
    },
    /// Inside a block (a call or a candidate call).
    Block(Box<dyn Block>),
    /// Inside a code fence that holds no call: text up to the closing fence.
    FenceText,
}

/// The incremental parser of model output.
///
/// Feed it chunks as they arrive; it appends the events each chunk completes.
/// Work per chunk is proportional to the chunk (plus the few bytes held back
/// from the previous one), text is released as soon as it cannot be the
/// start of a call, and the events do not depend on where the chunks were
/// split (except for how text and argument deltas are divided into events).
///
/// ```
/// use toolstream::{Config, Event, Parser};
///
/// let mut parser = Parser::new(Config::default());
/// let mut events = Vec::new();
/// for chunk in ["Let me check.\n<tool_call>\n{\"name\": \"get_wea", "ther\", \"arguments\": {\"city\": \"Tok", "yo\"}}\n</tool_call>"] {
///     parser.feed(chunk.as_bytes(), &mut events);
/// }
/// parser.finish(&mut events);
///
/// let call = events.iter().find_map(|e| match e {
///     Event::ToolEnd { call, .. } => Some(call),
///     _ => None,
/// }).unwrap();
/// assert_eq!(call.name, "get_weather");
/// assert_eq!(call.arguments, r#"{"city": "Tokyo"}"#);
/// assert!(call.repairs.is_empty() && !call.truncated);
/// ```
pub struct Parser {
    cfg: Config,
    /// The triggers of the configured dialects (shared, see [`Table`]).
    table: Arc<Table>,
    /// The finder's cached hits in the buffer being processed: kept across
    /// the texts between blocks, so no trigger byte is searched for twice.
    scan: ScanState,
    /// Absolute offset of `carry[0]` (the first byte not yet processed).
    offset: u64,
    /// Bytes received but not processed yet (a partial trigger or tag).
    carry: Vec<u8>,
    /// Where held-back bytes and the next chunk are joined (kept for its capacity).
    joined: Vec<u8>,
    mode: Mode,
    em: Emitter,
    /// Raw bytes of an uncommitted block, from its start.
    held: BytesMut,
    block_start: u64,
    /// The next text position starts the output (or the text after a
    /// reasoning block): line triggers apply there.
    bol: bool,
    /// Only blank text was released since the last call ended: a closing
    /// tag here is that call's markup ([`Action::Closer`]).
    after_call: bool,
    /// Just after a reasoning block's closing tag: the line breaks the chat
    /// template puts there (`</think>\n\n`) are markup, not text.
    after_think: bool,
    /// Reads the chunks of a streamed call's arguments while armed.
    lane: Lane,
    /// Where the lane was last armed (absolute offset).
    lane_armed_at: u64,
    /// The lane is not armed before this offset (see [`LANE_SHORT_RUN`]).
    lane_resume: u64,
    /// The distance to wait after the next short run (0: none so far).
    lane_backoff: u64,
    /// Bytes fed in this stream (for [`crate::Limits::max_input_bytes`]).
    fed: u64,
    /// [`crate::Limits::max_input_bytes`] was reached: the stream ended
    /// there and later bytes are passed through as text.
    capped: bool,
}

/// A lane run that stops within this many bytes of where it was armed,
/// anywhere but at the end of the arguments, has met input only the
/// repairer reads (malformed JSON, as a rule): arming again at once would
/// cost a take-over and a hand-back per chunk for nothing. The parser then
/// waits [`LANE_BACKOFF_MIN`] bytes before it arms the lane again, twice as
/// long after each further short run, at most [`LANE_BACKOFF_MAX`]; a
/// longer run, or one that reaches the end of the arguments, ends the
/// backoff. The lane never changes what is parsed, only how fast.
const LANE_SHORT_RUN: u64 = 64;
/// See [`LANE_SHORT_RUN`].
const LANE_BACKOFF_MIN: u64 = 64;
/// See [`LANE_SHORT_RUN`].
const LANE_BACKOFF_MAX: u64 = 4096;

/// What a dialect list compiles to: its triggers in match order, indexed by
/// first byte, and the byte finder over those first bytes.
///
/// It depends on nothing but the dialect list, and building it (sorting some
/// hundred triggers) cost more than parsing a short reply, so tables are
/// built once per dialect list and shared by every parser ([`Table::get`]).
struct Table {
    triggers: Vec<Trigger>,
    /// Trigger indices by first byte.
    by_first: Vec<Vec<u16>>,
    /// The triggers to try at a candidate whose first two bytes are known:
    /// `pair_lists[by_pair[pair_slot[first] * 256 + second]]`, the triggers
    /// of `by_first` less those the two bytes rule out, in the same order.
    /// `<` starts some seventy literals, most of which the second byte rules
    /// out, and prose rules out most line triggers at its first letter.
    by_pair: Vec<u16>,
    /// See `by_pair`.
    pair_lists: Vec<Vec<u16>>,
    /// Row of each first byte in `by_pair` (`u8::MAX`: no trigger starts with it).
    pair_slot: [u8; 256],
    finder: ByteFinder,
    /// The line triggers to try at the start of a line, by its first byte
    /// (an index into `pair_lists`).
    line_first: Vec<u16>,
    /// Per trigger, the first (up to) eight bytes of a literal and the mask
    /// of those bytes, little-endian (mask 0: not a literal). Candidates
    /// after the pair filter share two bytes (`<t` starts eleven literals
    /// of the default table); one word compare rules most of them out
    /// without a call to `memcmp` ([`Table::ruled_out_early`]).
    lit_head: Vec<(u64, u64)>,
}

/// Most dialect lists kept by [`Table::get`] besides the default one (a
/// process uses a handful; beyond this the oldest is dropped).
const TABLE_CACHE: usize = 16;

impl Table {
    /// The triggers to try at a candidate whose bytes are `at` (`at[0]` is
    /// one of the finder's bytes).
    #[inline]
    fn candidates(&self, at: &[u8]) -> &[u16] {
        match at {
            [b, second, ..] => {
                let row = self.pair_slot[*b as usize] as usize * 256;
                &self.pair_lists[self.by_pair[row + *second as usize] as usize]
            }
            [b] => &self.by_first[*b as usize],
            [] => &[],
        }
    }

    /// True when the literal trigger `t` cannot match at `at`, told from
    /// the first eight bytes alone (false: it may, or `at` is shorter or
    /// `t` is not a literal; [`Pattern::matches`] decides). A literal that
    /// differs from `at` within their common length answers [`Match::No`].
    ///
    /// A shorter `at` (a chunk's last bytes, as 1- and 4-byte chunks give
    /// at every `<`) is compared on its own length: the literals of the
    /// pair list that differ from it within that length are ruled out
    /// without a call.
    #[inline]
    fn ruled_out_early(&self, t: u16, at: &[u8]) -> bool {
        let (head, mask) = self.lit_head[t as usize];
        match at.first_chunk::<8>() {
            Some(w) => (u64::from_le_bytes(*w) ^ head) & mask != 0,
            None => {
                // (`at` is never empty here; 0 would rule nothing out.)
                let mut w = 0u64;
                for (k, &b) in at.iter().enumerate() {
                    w |= u64::from(b) << (8 * k);
                }
                let len_mask = (1u64 << (8 * at.len())) - 1;
                (w ^ head) & mask & len_mask != 0
            }
        }
    }

    fn build(dialects: &[Dialect]) -> Table {
        let triggers = dialect::triggers_for(dialects);
        let lit_head = triggers
            .iter()
            .map(|t| match t.pattern {
                Pattern::Lit(l) => {
                    let n = l.len().min(8);
                    let mut w = [0u8; 8];
                    w[..n].copy_from_slice(&l[..n]);
                    let mask = if n == 8 {
                        u64::MAX
                    } else {
                        (1u64 << (8 * n)) - 1
                    };
                    (u64::from_le_bytes(w), mask)
                }
                _ => (0, 0),
            })
            .collect();
        let mut by_first: Vec<Vec<u16>> = vec![Vec::new(); 256];
        let mut firsts = Vec::new();
        for (i, t) in triggers.iter().enumerate() {
            for &b in t.pattern.first_bytes() {
                by_first[b as usize].push(i as u16);
                firsts.push(b);
            }
        }
        let finder = ByteFinder::new(&firsts);
        // `by_pair`: for each first byte and each second byte, the triggers
        // that do not rule themselves out on those two bytes. A trigger that
        // answers No to a prefix answers No to every longer input (the
        // prefix stability `trigger_answers_are_prefix_stable` checks, which
        // chunk invariance needs anyway), so leaving it out changes nothing.
        // Equal lists are stored once.
        let mut lists: Vec<Vec<u16>> = Vec::new();
        let mut index: std::collections::HashMap<Vec<u16>, u16> = Default::default();
        let mut intern = |list: Vec<u16>| -> u16 {
            *index.entry(list).or_insert_with_key(|l| {
                lists.push(l.clone());
                (lists.len() - 1) as u16
            })
        };
        let ruled_out = |t: u16, at: &[u8]| match triggers[t as usize].pattern {
            // (Literals answer for themselves without a call.)
            Pattern::Lit(l) => l.len() >= 2 && l[1] != at[1],
            ref p => p.matches(at) == Match::No,
        };
        let mut pair_slot = [u8::MAX; 256];
        let mut by_pair: Vec<u16> = Vec::new();
        for (b, list) in by_first.iter().enumerate() {
            if list.is_empty() {
                continue;
            }
            pair_slot[b] = (by_pair.len() / 256) as u8;
            for second in 0..=255u8 {
                let at = [b as u8, second];
                let keep = list
                    .iter()
                    .copied()
                    .filter(|&t| !ruled_out(t, &at))
                    .collect();
                by_pair.push(intern(keep));
            }
        }
        // At the start of a line the line triggers' matchers are given the
        // line itself (no line break before it): the same filter on its
        // first byte.
        let line_triggers: Vec<u16> = (0..triggers.len())
            .filter(|&i| matches!(triggers[i].pattern, Pattern::Line { .. }))
            .map(|i| i as u16)
            .collect();
        let line_first: Vec<u16> = (0..=255u8)
            .map(|c| {
                let keep = line_triggers
                    .iter()
                    .copied()
                    .filter(|&t| !ruled_out(t, &[b'\n', c]))
                    .collect();
                intern(keep)
            })
            .collect();
        let pair_lists = lists;
        Table {
            triggers,
            by_first,
            by_pair,
            pair_lists,
            pair_slot,
            finder,
            line_first,
            lit_head,
        }
    }

    /// The table of `dialects`: the default list (empty = every dialect)
    /// without locking, others from a small process-wide cache.
    fn get(dialects: &[Dialect]) -> Arc<Table> {
        static DEFAULT: OnceLock<Arc<Table>> = OnceLock::new();
        static OTHERS: Mutex<Vec<(Vec<Dialect>, Arc<Table>)>> = Mutex::new(Vec::new());
        if dialects.is_empty() {
            return Arc::clone(DEFAULT.get_or_init(|| Arc::new(Table::build(&[]))));
        }
        // A poisoned lock only means another thread panicked while holding
        // it; the list itself is always consistent.
        let mut cache = OTHERS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, t)) = cache.iter().find(|(d, _)| d == dialects) {
            return Arc::clone(t);
        }
        let t = Arc::new(Table::build(dialects));
        if cache.len() >= TABLE_CACHE {
            cache.remove(0);
        }
        cache.push((dialects.to_vec(), Arc::clone(&t)));
        t
    }
}

impl std::fmt::Debug for Parser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parser")
            .field("offset", &self.offset)
            .field("carry", &self.carry.len())
            .field("held", &self.held.len())
            .finish_non_exhaustive()
    }
}

/// Chunks up to this length are tried on the plain-text shortcut
/// ([`Parser::plain_text`]) before the general loop. (32 → 64, callgrind,
/// `hermes` only: 64 small Hermes calls in 64-byte chunks −1.4 %, a
/// megabyte of prose in 64-byte chunks −17.5 %, −10 % with every dialect;
/// the tool-dense Hermes input at 48 and 64 bytes unchanged.)
const SHORT_TEXT: usize = 64;

/// The join buffer is kept between feeds up to this capacity (a huge chunk
/// fed after held-back bytes does not pin its size).
const JOIN_KEEP: usize = 64 << 10;

impl Parser {
    /// A parser for one output stream.
    pub fn new(cfg: Config) -> Parser {
        let table = Table::get(&cfg.dialects);
        let mode = Parser::start_mode(&cfg);
        Parser {
            cfg,
            table,
            scan: ScanState::default(),
            offset: 0,
            carry: Vec::new(),
            joined: Vec::new(),
            mode,
            em: Emitter::default(),
            held: BytesMut::new(),
            block_start: 0,
            bol: true,
            after_call: false,
            after_think: false,
            lane: Lane::default(),
            lane_armed_at: 0,
            lane_resume: 0,
            lane_backoff: 0,
            fed: 0,
            capped: false,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Number of input bytes consumed so far (including held-back ones).
    pub fn position(&self) -> u64 {
        self.offset + self.carry.len() as u64
    }

    /// Feeds the next chunk, appending the events it completes to `out`.
    /// `Text` and `Thinking` events copy their own bytes of it; call bytes
    /// are not copied (see [`Parser::feed_bytes`] for events that share the
    /// chunk instead).
    #[inline(always)]
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Event>) {
        if !(self.lane.armed() && self.lane_string(chunk, out)) {
            self.feed_slow(chunk, out);
        }
    }

    /// [`Parser::feed`] but for the chunk [`Parser::lane_string`] takes.
    #[inline(never)]
    fn feed_slow(&mut self, chunk: &[u8], out: &mut Vec<Event>) {
        if chunk.is_empty() {
            return;
        }
        if self.over_cap(chunk.len()) {
            return self.feed_capped(Data::borrowed(chunk), out);
        }
        let mut chunk = chunk;
        if self.lane.armed() {
            match self.lane_feed(chunk, out) {
                None => return,
                Some(p) => chunk = &chunk[p..],
            }
        }
        if !chunk.is_empty() {
            self.feed_chunk(chunk, out);
        }
        self.try_arm();
    }

    /// [`Parser::feed`] without the lane.
    #[inline(always)]
    fn feed_chunk(&mut self, chunk: &[u8], out: &mut Vec<Event>) {
        if self.carry.is_empty() {
            if chunk.len() <= SHORT_TEXT && self.plain_text(chunk, out) {
                return;
            }
            let data = Data::borrowed(chunk);
            if !self.in_call(&data, out) {
                self.process(&data, out);
            }
        } else {
            let joined = self.join(chunk);
            self.process(&Data::borrowed(&joined), out);
            if joined.capacity() <= JOIN_KEEP {
                self.joined = joined;
            }
        }
    }

    /// Feeds the next chunk without copying it: `Text` and `Thinking` events
    /// are slices of `chunk` wherever they do not straddle chunks.
    #[inline(always)]
    pub fn feed_bytes(&mut self, chunk: Bytes, out: &mut Vec<Event>) {
        if !(self.lane.armed() && self.lane_string(&chunk, out)) {
            self.feed_bytes_slow(&chunk, out);
        }
    }

    /// [`Parser::feed_bytes`] but for the chunk [`Parser::lane_string`]
    /// takes.
    ///
    /// (The chunk by reference: moved, it was copied to a new place on the
    /// caller's stack before every call.)
    #[inline(never)]
    fn feed_bytes_slow(&mut self, chunk: &Bytes, out: &mut Vec<Event>) {
        if chunk.is_empty() {
            return;
        }
        if self.over_cap(chunk.len()) {
            return self.feed_capped(Data::owned(chunk), out);
        }
        let mut from = 0;
        if self.lane.armed() {
            match self.lane_feed(chunk, out) {
                None => return,
                Some(p) => from = p,
            }
        }
        if from < chunk.len() {
            let rest;
            let chunk = if from == 0 {
                chunk
            } else {
                rest = chunk.slice(from..);
                &rest
            };
            self.feed_bytes_chunk(chunk, out);
        }
        self.try_arm();
    }

    /// [`Parser::feed_bytes`] without the lane.
    #[inline(always)]
    fn feed_bytes_chunk(&mut self, chunk: &Bytes, out: &mut Vec<Event>) {
        if self.carry.is_empty() {
            let data = Data::owned(chunk);
            if !self.in_call(&data, out) {
                self.process(&data, out);
            }
            return;
        }
        // Held-back bytes (a few) joined with the chunk, shared by the
        // events of this feed.
        let mut joined = BytesMut::with_capacity(self.carry.len() + chunk.len());
        joined.extend_from_slice(&self.carry);
        joined.extend_from_slice(chunk);
        self.carry.clear();
        self.process(&Data::owned(&joined.freeze()), out);
    }

    /// The commonest chunk of a streamed call, taken whole before anything
    /// else is looked at (the lane armed): a few plain bytes inside a string
    /// value ([`Lane::feed_string`]), the chunk's event made from
    /// a word. In line in [`Parser::feed`] and [`Parser::feed_bytes`], which
    /// call their out-of-line rest for any other chunk (callgrind, a 10 KB
    /// string fed a byte at a time: the frame of the full path was some 20
    /// instructions a chunk). False: nothing was done.
    #[inline(always)]
    fn lane_string(&mut self, chunk: &[u8], out: &mut Vec<Event>) -> bool {
        // (The cap ends the stream, which disarms the lane.)
        debug_assert!(self.lane.armed() && !self.capped);
        let n = chunk.len();
        let fed = self.fed.saturating_add(n as u64);
        if fed > self.cfg.limits.max_input_bytes as u64 {
            return false;
        }
        let Some(w) = self.lane.feed_string(chunk) else {
            return false;
        };
        self.fed = fed;
        let start = self.offset;
        let end = start + n as u64;
        let index = self.lane.index();
        self.em
            .arena
            .push_word(out, index, w, n, Span::new(start, end));
        self.offset = end;
        true
    }

    /// A chunk read by the lane (armed: see [`Lane`]): its delta, if it
    /// committed any. None: the lane took all of it. `Some(p)`: the lane
    /// stopped before `chunk[p]` and is disarmed; the bytes it held (the
    /// start of a unit) have been fed as a chunk of their own, and the rest
    /// of the chunk is for the caller.
    #[inline(always)]
    fn lane_feed(&mut self, chunk: &[u8], out: &mut Vec<Event>) -> Option<usize> {
        let start = self.offset;
        let stop = self.lane.feed(chunk);
        let end = start + stop.unwrap_or(chunk.len()) as u64;
        let index = self.lane.index();
        let delta = self.lane.take_delta();
        if !delta.is_empty() {
            self.em
                .arena
                .push_args(out, index, delta, Span::new(start, end));
        }
        self.offset = end;
        let p = stop?;
        self.disarm(out);
        debug_assert_eq!(self.position(), end);
        Some(p)
    }

    /// Disarms the lane: the block takes back its state, and the bytes the
    /// lane held (read, not committed) are fed again as a chunk.
    #[inline(never)]
    fn disarm(&mut self, out: &mut Vec<Event>) {
        if self.lane.stopped_at_end() || self.offset - self.lane_armed_at >= LANE_SHORT_RUN {
            self.lane_backoff = 0;
        } else {
            self.lane_backoff = (self.lane_backoff * 2).clamp(LANE_BACKOFF_MIN, LANE_BACKOFF_MAX);
            self.lane_resume = self.offset + self.lane_backoff;
        }
        let held = self.lane.take_held();
        let Mode::Block(block) = &mut self.mode else {
            unreachable!("the lane is armed in a block only");
        };
        let Some(host) = block.lane_host() else {
            unreachable!("the lane's block still reads JSON");
        };
        host.disarm(&mut self.lane);
        self.offset -= held.len() as u64;
        if !held.is_empty() {
            self.feed_chunk(&held, out);
        }
        self.lane.give_held(held);
    }

    /// Arms the lane when the block is streaming a call's arguments in a
    /// plain state (see [`crate::dialect::json::JsonCalls::lane_arm`]).
    #[inline]
    fn try_arm(&mut self) {
        let Mode::Block(block) = &mut self.mode else {
            return;
        };
        if !self.em.committed
            || !self.em.pending.is_empty()
            || !self.carry.is_empty()
            || self.offset < self.lane_resume
        {
            return;
        }
        if let Some(host) = block.lane_host() {
            if host.arm(&mut self.lane, &self.em) {
                self.lane_armed_at = self.offset;
            }
        }
    }

    /// A chunk that continues a committed block (the steady state of a
    /// streamed call): fed to the block directly, its events straight into
    /// `out`; what the block did next is handled as [`Parser::process`]
    /// would, which then goes on with the rest. False: not in such a block.
    #[inline]
    fn in_call(&mut self, data: &Data<'_>, out: &mut Vec<Event>) -> bool {
        let Mode::Block(block) = &mut self.mode else {
            return false;
        };
        if !self.em.committed || !self.em.pending.is_empty() {
            return false;
        }
        // The block's events go straight to `out` (see `Parser::block`):
        // first as a chunk it may take whole ([`Block::plain_chunk`]), else
        // fed as usual, in one context.
        let flow = in_context(&mut self.em, &self.cfg, self.offset, true, out, |cx| {
            if block.plain_chunk(data, cx) {
                None
            } else {
                Some(block.feed(data, cx))
            }
        });
        let Some(flow) = flow else {
            self.offset += data.len() as u64;
            return true;
        };
        if flow == Flow::More {
            self.offset += data.len() as u64;
            return true;
        }
        match self.after_block(flow, data, 0, data.len(), true, out) {
            Next::At(n) => self.process_from(data, n, out),
            Next::Carry(n) => self.carry_from(data, n),
        }
        true
    }

    /// Offers `chunk` to the committed block as a chunk it may take whole
    /// ([`Block::plain_chunk`]), its events into `out`; false: not taken,
    /// nothing done (the first half of [`Parser::in_call`], for tests).
    #[cfg(test)]
    fn plain_chunk(&mut self, chunk: &[u8], out: &mut Vec<Event>) -> bool {
        let Mode::Block(block) = &mut self.mode else {
            return false;
        };
        let took = in_context(&mut self.em, &self.cfg, self.offset, true, out, |cx| {
            block.plain_chunk(chunk, cx)
        });
        if took {
            self.offset += chunk.len() as u64;
        }
        took
    }

    /// Keeps `data[n..]` for the next feed; the bytes before it are done.
    fn carry_from(&mut self, data: &[u8], n: usize) {
        self.carry.extend_from_slice(&data[n..]);
        self.offset += n as u64;
    }

    /// A short chunk of text in which no trigger can start, ending on a
    /// character boundary (the steady state of streamed prose): its text
    /// event, without the general loop. False leaves the chunk untouched.
    ///
    /// A candidate byte whose next byte is in the chunk and rules out every
    /// trigger it starts (the `f` of "of", the `.` ending a sentence) is no
    /// candidate: the general loop would find no trigger there either.
    #[inline]
    fn plain_text(&mut self, chunk: &[u8], out: &mut Vec<Event>) -> bool {
        if !matches!(self.mode, Mode::Text) || self.bol {
            return false;
        }
        let t = &self.table;
        let mut from = 0;
        while let Some(p) = t.finder.table_find(chunk, from) {
            if p + 1 == chunk.len() || !t.candidates(&chunk[p..]).is_empty() {
                return false;
            }
            from = p + 1;
        }
        if utf8_cut(chunk, 0) != chunk.len() {
            return false;
        }
        self.text_released(chunk);
        let start = self.offset;
        self.offset += chunk.len() as u64;
        let span = Span::new(start, self.offset);
        if out.len() == out.capacity() {
            out.reserve(1);
        }
        // As in `Arena::push_args`: with room known to be there, `push`
        // has no growth path that needs the event as a value first, and the
        // event is written in place from registers (see `Delta::copied`).
        match Delta::inline(chunk) {
            Some(text) => out.push(Event::Text { text, span }),
            None if out.len() < out.capacity() => out.push(Event::Text {
                text: Delta::copied(chunk),
                span,
            }),
            None => out.push(Event::Text {
                text: Delta::copy_from_slice(chunk),
                span,
            }),
        }
        true
    }

    /// The held-back bytes followed by `chunk`, in the reused join buffer
    /// (taken out of `self` while it is processed).
    fn join(&mut self, chunk: &[u8]) -> Vec<u8> {
        let mut joined = std::mem::take(&mut self.joined);
        joined.clear();
        joined.extend_from_slice(&self.carry);
        joined.extend_from_slice(chunk);
        self.carry.clear();
        joined
    }

    /// Counts `len` more bytes fed; true when they would go past
    /// [`crate::Limits::max_input_bytes`] (or it was reached before).
    #[inline]
    fn over_cap(&mut self, len: usize) -> bool {
        let fed = self.fed.saturating_add(len as u64);
        if self.capped || fed > self.cfg.limits.max_input_bytes as u64 {
            return true;
        }
        self.fed = fed;
        false
    }

    /// A chunk that reaches [`crate::Limits::max_input_bytes`]: its bytes
    /// up to the cap are parsed, the stream ends there as
    /// [`Parser::finish`] would end it (an open call is cut, with a
    /// `limit_exceeded` repair), one diagnostic says so, and the bytes past
    /// the cap are text, not looked at.
    #[cold]
    #[inline(never)]
    fn feed_capped(&mut self, data: Data<'_>, out: &mut Vec<Event>) {
        let mut from = 0;
        if !self.capped {
            let cap = self.cfg.limits.max_input_bytes as u64;
            // `over_cap` said the chunk crosses the cap: `room < data.len()`.
            let room = (cap - self.fed) as usize;
            if room > 0 {
                // Counted by that feed: it reaches the cap, not past it.
                match data.shared {
                    Some(b) => self.feed_bytes(b.slice(..room), out),
                    None => self.feed(&data[..room], out),
                }
            }
            let before = out.len();
            self.end_stream(out);
            for e in &mut out[before..] {
                if let Event::ToolEnd { call, .. } = e {
                    if call.truncated && call.repairs.len() < self.cfg.limits.max_repairs {
                        call.repairs.push(Repair {
                            kind: RepairKind::LimitExceeded,
                            offset: cap,
                        });
                    }
                }
            }
            out.push(Event::Diagnostic {
                kind: DiagnosticKind::LimitExceeded,
                message: format!(
                    "input past {cap} bytes (max_input_bytes) is not parsed; kept as text"
                ),
                span: Span::new(cap, cap),
            });
            self.capped = true;
            from = room;
        }
        if from < data.len() {
            out.push(Event::Text {
                text: data.slice(from..data.len()),
                span: Span::new(self.fed, self.fed + (data.len() - from) as u64),
            });
            self.fed += (data.len() - from) as u64;
        }
    }

    /// Ends the stream: flushes held-back bytes and closes any open call (with
    /// `truncated: true`). The parser is then reset for a new stream (with
    /// the same configuration, keeping its buffers).
    pub fn finish(&mut self, out: &mut Vec<Event>) {
        if !self.capped {
            self.end_stream(out);
        }
        self.reset();
    }

    /// [`Parser::finish`] without the reset.
    fn end_stream(&mut self, out: &mut Vec<Event>) {
        if self.lane.armed() {
            self.disarm(out);
        }
        let tail = Delta::from(Bytes::from(std::mem::take(&mut self.carry)));
        let end = self.offset + tail.len() as u64;
        let mode = std::mem::replace(&mut self.mode, Mode::Text);
        match mode {
            Mode::Text | Mode::FenceText => {
                if !tail.is_empty() {
                    out.push(Event::Text {
                        text: tail,
                        span: Span::new(self.offset, end),
                    });
                }
            }
            Mode::Reasoning { span_start, .. } => {
                if end > span_start {
                    out.push(Event::Thinking {
                        text: tail,
                        span: Span::new(span_start, end),
                    });
                }
            }
            Mode::Block(mut block) => {
                let mut cx = Cx {
                    base: end,
                    em: &mut self.em,
                    cfg: &self.cfg,
                };
                let committed = block.finish(&mut cx);
                if committed || self.em.committed {
                    out.append(&mut self.em.pending);
                    // The input ended inside something that had not become
                    // a call yet (`<name>` of a next call in a container):
                    // its bytes belong to no call. They were read as
                    // markup, so they are reported as such, never dropped.
                    self.cover_tail(end, out);
                } else {
                    self.em.reject();
                    out.append(&mut self.em.pending);
                    self.held.extend_from_slice(&tail);
                    let text = Delta::from(self.held.split().freeze());
                    if !text.is_empty() {
                        out.push(Event::Text {
                            text,
                            span: Span::new(self.block_start, end),
                        });
                    }
                }
                self.held.clear();
                block.recycle(&self.em.spares);
            }
        }
        self.offset = end;
    }

    /// Back to the state of a new parser, keeping the buffers (a parser
    /// reused for many streams allocates nothing more for them).
    fn reset(&mut self) {
        self.mode = Parser::start_mode(&self.cfg);
        self.scan = ScanState::default();
        self.offset = 0;
        self.carry.clear();
        self.held.clear();
        self.block_start = 0;
        self.bol = true;
        self.after_call = false;
        self.after_think = false;
        self.lane_resume = 0;
        self.lane_backoff = 0;
        self.fed = 0;
        self.capped = false;
        self.em.reset();
    }

    /// The mode a stream starts in: inside reasoning when the prefill opened it.
    fn start_mode(cfg: &Config) -> Mode {
        match cfg
            .prefill
            .as_deref()
            .and_then(|p| reasoning::open_in_prefill(p.as_bytes()))
        {
            Some(close) => Mode::Reasoning {
                close,
                span_start: 0,
            },
            None => Mode::Text,
        }
    }

    fn process(&mut self, data: &Data<'_>, out: &mut Vec<Event>) {
        self.process_from(data, 0, out);
    }

    /// Processes `data` from byte `i` on (the bytes before it are done).
    fn process_from(&mut self, data: &Data<'_>, mut i: usize, out: &mut Vec<Event>) {
        self.scan.reset();
        while i < data.len() {
            let step = match self.mode {
                Mode::Text => self.text(data, i, out),
                Mode::Reasoning { .. } => self.reasoning(data, i, out),
                Mode::FenceText => self.fence_text(data, i, out),
                Mode::Block(_) => self.block(data, i, out),
            };
            match step {
                Next::At(n) => i = n,
                Next::Carry(n) => {
                    self.carry_from(data, n);
                    return;
                }
            }
        }
        self.offset += data.len() as u64;
    }

    #[inline]
    fn abs(&self, i: usize) -> u64 {
        self.offset + i as u64
    }

    /// Text goes out: after a call, anything but blanks ends the place
    /// where a closing tag is that call's markup ([`Action::Closer`]).
    #[inline]
    fn text_released(&mut self, text: &[u8]) {
        if self.after_call && !text.iter().all(u8::is_ascii_whitespace) {
            self.after_call = false;
        }
    }

    fn push_text(&mut self, data: &Data<'_>, from: usize, to: usize, out: &mut Vec<Event>) {
        if to > from {
            self.text_released(&data[from..to]);
            out.push(Event::Text {
                text: data.slice(from..to),
                span: Span::new(self.abs(from), self.abs(to)),
            });
        }
    }

    /// Text mode: release text up to the next trigger, then enter it.
    fn text(&mut self, data: &Data<'_>, mut i: usize, out: &mut Vec<Event>) -> Next {
        if self.after_think {
            // `</think>\n\nAnswer`: the template's line breaks are markup.
            let n = data[i..]
                .iter()
                .take_while(|&&b| b == b'\n' || b == b'\r')
                .count();
            if n > 0 {
                out.push(Event::Markup {
                    span: Span::new(self.abs(i), self.abs(i + n)),
                });
                i += n;
                if i == data.len() {
                    return Next::At(i);
                }
            }
            self.after_think = false;
        }
        if self.bol {
            let mut partial = false;
            let mut full: Option<(usize, usize)> = None;
            let first = self.table.line_first[data[i] as usize];
            for &t in &self.table.pair_lists[first as usize] {
                if let Pattern::Line { matches } = self.table.triggers[t as usize].pattern {
                    match matches(&data[i..]) {
                        Match::Full(n) => {
                            if full.is_none() {
                                full = Some((t as usize, n));
                            }
                        }
                        // (Held back whatever the others say.)
                        Match::Partial => {
                            partial = true;
                            break;
                        }
                        Match::No => {}
                    }
                }
            }
            if partial {
                return Next::Carry(i);
            }
            self.bol = false;
            if let Some((t, n)) = full {
                return self.enter(t, data, i, n, out);
            }
        }
        let bytes: &[u8] = data;
        let mut from = i;
        // Where the text from `i` stops being blank, while a closing tag
        // may still be a call's markup ([`Action::Closer`]); found once.
        let mut blank_to: Option<usize> = None;
        loop {
            let Some(p) = self.table.finder.find(&mut self.scan, bytes, from) else {
                // Release everything but an unfinished UTF-8 character.
                let cut = utf8_cut(data, i);
                self.push_text(data, i, cut, out);
                return if cut == data.len() {
                    Next::At(cut)
                } else {
                    Next::Carry(cut)
                };
            };
            let at = &bytes[p..];
            let mut partial = false;
            let mut full: Option<(usize, usize)> = None;
            for &t in self.table.candidates(at) {
                if self.table.ruled_out_early(t, at) {
                    continue;
                }
                let trigger = &self.table.triggers[t as usize];
                if matches!(trigger.action, Action::Closer) {
                    if !self.after_call {
                        continue;
                    }
                    let to = *blank_to.get_or_insert_with(|| {
                        i + bytes[i..]
                            .iter()
                            .position(|b| !b.is_ascii_whitespace())
                            .unwrap_or(bytes.len() - i)
                    });
                    if p > to {
                        continue;
                    }
                }
                match trigger.pattern.matches(at) {
                    Match::Full(n) => {
                        if full.is_none() {
                            full = Some((t as usize, n));
                        }
                    }
                    // A trigger may still start here: the bytes are held
                    // back whatever the other candidates say.
                    Match::Partial => {
                        partial = true;
                        break;
                    }
                    Match::No => {}
                }
            }
            if partial {
                // Hold back only the bytes that could still start a trigger.
                self.push_text(data, i, p, out);
                return Next::Carry(p);
            }
            if let Some((t, n)) = full {
                // A line trigger leaves its line break as text.
                let skip = usize::from(matches!(
                    self.table.triggers[t].pattern,
                    Pattern::Line { .. } | Pattern::After { .. }
                ));
                self.push_text(data, i, p + skip, out);
                return self.enter(t, data, p + skip, n - skip, out);
            }
            from = p + 1;
        }
    }

    fn enter(
        &mut self,
        t: usize,
        data: &Data<'_>,
        p: usize,
        n: usize,
        out: &mut Vec<Event>,
    ) -> Next {
        if !matches!(
            self.table.triggers[t].action,
            Action::Markup | Action::Closer
        ) {
            self.after_call = false;
        }
        match self.table.triggers[t].action {
            Action::Markup | Action::Closer => {
                out.push(Event::Markup {
                    span: Span::new(self.abs(p), self.abs(p + n)),
                });
                Next::At(p + n)
            }
            Action::Reasoning { close } => {
                self.mode = Mode::Reasoning {
                    close,
                    span_start: self.abs(p),
                };
                Next::At(p + n)
            }
            Action::Block { open, consume } => {
                let block = open(&BlockArgs {
                    trigger: &data[p..p + n],
                    cfg: &self.cfg,
                    spares: &self.em.spares,
                });
                self.block_start = self.abs(p);
                self.em.begin_block(self.block_start);
                self.held.clear();
                self.mode = Mode::Block(block);
                if consume {
                    self.held.extend_from_slice(&data[p..p + n]);
                    Next::At(p + n)
                } else {
                    Next::At(p)
                }
            }
        }
    }

    fn reasoning(&mut self, data: &Data<'_>, i: usize, out: &mut Vec<Event>) -> Next {
        let Mode::Reasoning { close, span_start } = self.mode else {
            return Next::At(i);
        };
        let rest = &data[i..];
        let found = memchr::memmem::find(rest, close);
        let mut keep_call = 0;
        if self.cfg.calls_in_reasoning {
            // A call written in the reasoning ends it (a family policy).
            let (call, keep) = reasoning::call_opener(close, &rest[..found.unwrap_or(rest.len())]);
            if let Some(k) = call {
                if self.abs(i + k) > span_start {
                    out.push(Event::Thinking {
                        text: data.slice(i..i + k),
                        span: Span::new(span_start, self.abs(i + k)),
                    });
                }
                self.em.reasoning_exit = Some(self.abs(i + k));
                self.mode = Mode::Text;
                return Next::At(i + k);
            }
            keep_call = keep;
        }
        if let Some(k) = found {
            let end = i + k + close.len();
            out.push(Event::Thinking {
                text: data.slice(i..i + k),
                span: Span::new(span_start, self.abs(end)),
            });
            self.mode = Mode::Text;
            self.bol = true;
            self.after_think = true;
            return Next::At(end);
        }
        // Hold back a suffix that could be the start of the closing tag.
        let keep = (1..close.len().min(rest.len() + 1))
            .rev()
            .find(|&m| rest.ends_with(&close[..m]))
            .unwrap_or(0)
            .max(keep_call);
        let safe = utf8_cut(&data[..data.len() - keep], i);
        if safe > i {
            out.push(Event::Thinking {
                text: data.slice(i..safe),
                span: Span::new(span_start, self.abs(safe)),
            });
            self.mode = Mode::Reasoning {
                close,
                span_start: self.abs(safe),
            };
        }
        Next::Carry(safe)
    }

    fn fence_text(&mut self, data: &Data<'_>, i: usize, out: &mut Vec<Event>) -> Next {
        let rest = &data[i..];
        if let Some(k) = memchr::memmem::find(rest, b"```") {
            let end = i + k + 3;
            self.push_text(data, i, end, out);
            self.mode = Mode::Text;
            return Next::At(end);
        }
        let keep = if rest.ends_with(b"``") {
            2
        } else if rest.ends_with(b"`") {
            1
        } else {
            0
        };
        let safe = utf8_cut(&data[..data.len() - keep], i);
        self.push_text(data, i, safe, out);
        Next::Carry(safe)
    }

    fn block(&mut self, data: &Data<'_>, i: usize, out: &mut Vec<Event>) -> Next {
        if !matches!(self.mode, Mode::Block(_)) {
            return Next::At(i);
        }
        let committed = self.em.committed;
        let max_held = self.cfg.limits.max_held_bytes;
        let limit = if committed {
            data.len()
        } else {
            // Saturating: `max_held_bytes` may be `usize::MAX`.
            data.len()
                .min(i.saturating_add(max_held.saturating_sub(self.held.len())))
        };
        // A committed block's events go straight to `out` (its pending list
        // is empty then): the caller's list stands in for it during the feed,
        // so each event is written once, not pushed and then moved.
        let direct = committed && self.em.pending.is_empty();
        // An undecided block is fed at most `max_held_bytes` at once: what
        // is left of the data is more than its input (see `Emitter::data_end`).
        self.em.data_end = self.offset + data.len() as u64;
        let flow = self.feed_block(&data[i..limit], i, direct, out);
        self.after_block(flow, data, i, limit, direct, out)
    }

    /// Feeds `input` (from byte `i` of this feed's data) to the current
    /// block; with `direct`, its events go straight to `out` (the pending
    /// list must be empty).
    #[inline]
    fn feed_block(&mut self, input: &[u8], i: usize, direct: bool, out: &mut Vec<Event>) -> Flow {
        let Mode::Block(block) = &mut self.mode else {
            return Flow::More;
        };
        let base = self.offset + i as u64;
        in_context(&mut self.em, &self.cfg, base, direct, out, |cx| {
            block.feed(input, cx)
        })
    }

    /// What follows a block's feed of `data[i..limit]` (`direct`: its events
    /// went straight to `out`).
    fn after_block(
        &mut self,
        flow: Flow,
        data: &Data<'_>,
        i: usize,
        limit: usize,
        direct: bool,
        out: &mut Vec<Event>,
    ) -> Next {
        let max_held = self.cfg.limits.max_held_bytes;
        let next = match flow {
            Flow::More => {
                if !self.em.committed {
                    if self.held.len() + (limit - i) >= max_held {
                        // Undecided for too long: give the bytes back as text
                        // (`reject` joins the held bytes and `data[i..limit]`).
                        // With nothing held (`max_held_bytes` 0), that is
                        // the block's first character: scanning goes on past
                        // it, or the same block would open there forever.
                        let to = self.past_block_start(data, limit);
                        let span = Span::new(self.block_start, self.abs(to));
                        self.reject(data, i, to, Resume::Text, out);
                        out.push(Event::Diagnostic {
                            kind: DiagnosticKind::LimitExceeded,
                            message: format!("candidate call undecided after {max_held} bytes (max_held_bytes); kept as text"),
                            span,
                        });
                        return Next::At(to);
                    }
                    self.held.extend_from_slice(&data[i..limit]);
                }
                Next::At(limit)
            }
            Flow::Partial(n) => {
                if !self.em.committed {
                    self.held.extend_from_slice(&data[i..i + n]);
                }
                if limit == data.len() {
                    // Wait for more input to decide.
                    Next::Carry(i + n)
                } else if self.em.committed {
                    // Committed during this feed: the rest of the input is fed next.
                    Next::At(i + n)
                } else {
                    // The undecided bytes straddle the hold limit (only an
                    // uncommitted block is given less than all the input).
                    let to = self.past_block_start(data, i + n);
                    let span = Span::new(self.block_start, self.abs(to));
                    self.reject(data, i + n, to, Resume::Text, out);
                    out.push(Event::Diagnostic {
                        kind: DiagnosticKind::LimitExceeded,
                        message: format!("candidate call undecided after {max_held} bytes (max_held_bytes); kept as text"),
                        span,
                    });
                    return Next::At(to);
                }
            }
            Flow::Done(n) => {
                self.held.clear();
                self.set_mode(Mode::Text);
                self.after_call = true;
                // The block's bytes after its last call (a container's
                // element that started no call) are in no call's span:
                // markup, reported after the block's events.
                let end = self.abs(i + n);
                out.append(&mut self.em.pending);
                self.cover_tail(end, out);
                Next::At(i + n)
            }
            Flow::Reject { at, then } => {
                // Only an undecided block may turn out not to be a call (its
                // events, if any, were never in `out`).
                debug_assert!(!direct, "a committed block rejected its bytes");
                let to = self.past_block_start(data, i + at);
                self.reject(data, i, to, then, out);
                return Next::At(to);
            }
        };
        if self.em.committed {
            self.held.clear();
            out.append(&mut self.em.pending);
        }
        next
    }

    /// Where scanning resumes after an uncommitted block gives its bytes back
    /// up to `to`: `to`, or, when that gives back nothing (nothing held, `to`
    /// at the block's start), past the block's first character, which would
    /// otherwise start the same block again, forever.
    fn past_block_start(&self, data: &Data<'_>, to: usize) -> usize {
        if !self.held.is_empty() || self.abs(to) != self.block_start || to >= data.len() {
            return to;
        }
        let len = crate::json::utf8_len(data[to]).max(1);
        (to + len).min(data.len())
    }

    /// A committed block ended at `end`: bytes it read after its last call
    /// (markup that started no call: an empty `<name></name>`, or the input
    /// ending inside the next call's tag) are reported as [`Event::Markup`]
    /// with a diagnostic, so that no byte is in no event.
    fn cover_tail(&mut self, end: u64, out: &mut Vec<Event>) {
        let cursor = self.em.span_cursor();
        if self.em.committed && cursor < end {
            let span = Span::new(cursor, end);
            out.push(Event::Diagnostic {
                kind: DiagnosticKind::SkippedContent,
                message: "markup in a call block that started no call; kept as markup".to_owned(),
                span,
            });
            out.push(Event::Markup { span });
        }
    }

    /// The current block is not a call: its bytes up to `to` become text.
    fn reject(
        &mut self,
        data: &Data<'_>,
        from: usize,
        to: usize,
        then: Resume,
        out: &mut Vec<Event>,
    ) {
        self.em.reject();
        out.append(&mut self.em.pending);
        let text = if self.held.is_empty() {
            data.slice(from..to)
        } else {
            self.held.extend_from_slice(&data[from..to]);
            Delta::from(self.held.split().freeze())
        };
        self.held.clear();
        if !text.is_empty() {
            out.push(Event::Text {
                text,
                span: Span::new(self.block_start, self.abs(to)),
            });
        }
        self.set_mode(match then {
            Resume::Text => Mode::Text,
            Resume::FenceText => Mode::FenceText,
        });
    }

    /// Goes on in `mode`; a block that ends so leaves its readers for the
    /// next one ([`Block::recycle`]).
    fn set_mode(&mut self, mode: Mode) {
        if let Mode::Block(block) = std::mem::replace(&mut self.mode, mode) {
            block.recycle(&self.em.spares);
        }
    }
}

/// The bytes of one feed: a fed [`Bytes`] (events share it) or a borrowed
/// chunk (events copy their ranges of it).
struct Data<'a> {
    raw: &'a [u8],
    shared: Option<&'a Bytes>,
}

impl<'a> Data<'a> {
    fn borrowed(raw: &'a [u8]) -> Self {
        Data { raw, shared: None }
    }

    fn owned(bytes: &'a Bytes) -> Self {
        Data {
            raw: bytes,
            shared: Some(bytes),
        }
    }

    /// The bytes of `range`: a shared slice of a fed `Bytes`, or a copy of
    /// just that range of a borrowed chunk (inline when short, else one
    /// allocation, no reference counting; the chunk's call bytes are never
    /// copied). A copy costs less than a cut from a shared buffer (see
    /// [`crate::arena`]) for the short text of a streamed chunk: the two
    /// reference-count updates of a shared cut are dearer than a small
    /// allocation and its free, and an inline copy costs neither.
    fn slice(&self, range: std::ops::Range<usize>) -> Delta {
        match self.shared {
            Some(b) => Delta::from(b.slice(range)),
            None => Delta::copy_from_slice(&self.raw[range]),
        }
    }
}

impl std::ops::Deref for Data<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.raw
    }
}

/// Runs `f` with a block's context at absolute offset `base`. `direct`: the
/// block's events go straight into `out` (the event lists are swapped
/// around the call), else into the emitter's pending list.
#[inline(always)]
fn in_context<R>(
    em: &mut Emitter,
    cfg: &Config,
    base: u64,
    direct: bool,
    out: &mut Vec<Event>,
    f: impl FnOnce(&mut Cx<'_>) -> R,
) -> R {
    if direct {
        std::mem::swap(&mut em.pending, out);
    }
    let r = f(&mut Cx { base, em, cfg });
    if direct {
        std::mem::swap(&mut em.pending, out);
    }
    r
}

/// The end of `data` not counting an unfinished UTF-8 character at its end
/// (never before `from`), so text events do not split characters.
fn utf8_cut(data: &[u8], from: usize) -> usize {
    data.len() - crate::json::incomplete_utf8_tail(&data[from..])
}

enum Next {
    /// Continue at this index.
    At(usize),
    /// Stop; bytes from this index are kept for the next chunk.
    Carry(usize),
}

/// Everything one stream held, accumulated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// All text, joined.
    pub text: String,
    /// All reasoning, joined.
    pub thinking: String,
    /// The calls, in order.
    pub calls: Vec<ToolCall>,
    /// Every event, in order.
    pub events: Vec<Event>,
}

impl Parsed {
    /// Accumulates a list of events.
    pub fn from_events(events: Vec<Event>) -> Parsed {
        let mut text = Vec::new();
        let mut thinking = Vec::new();
        let mut calls = Vec::new();
        for e in &events {
            match e {
                Event::Text { text: t, .. } => text.extend_from_slice(t),
                Event::Thinking { text: t, .. } => thinking.extend_from_slice(t),
                Event::ToolEnd { call, .. } => calls.push((**call).clone()),
                _ => {}
            }
        }
        Parsed {
            text: String::from_utf8_lossy(&text).into_owned(),
            thinking: String::from_utf8_lossy(&thinking).into_owned(),
            calls,
            events,
        }
    }
}

/// Parses a whole output at once.
///
/// ```
/// use toolstream::{parse, Config};
/// let out = parse(b"<think>Need weather.</think>```json\n{\"tool\": \"get_weather\", \"parameters\": {\"city\": 'Paris',}}\n```", &Config::default());
/// assert_eq!(out.thinking, "Need weather.");
/// assert_eq!(out.calls[0].name, "get_weather");
/// assert_eq!(out.calls[0].arguments, r#"{"city": "Paris"}"#);
/// assert_eq!(out.calls[0].repairs.len(), 2); // single quotes, trailing comma
/// ```
pub fn parse(input: &[u8], cfg: &Config) -> Parsed {
    parse_chunks(std::iter::once(input), cfg)
}

/// Parses an output given as a sequence of chunks.
pub fn parse_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>, cfg: &Config) -> Parsed {
    let mut p = Parser::new(cfg.clone());
    let mut events = Vec::new();
    for c in chunks {
        p.feed(c, &mut events);
    }
    p.finish(&mut events);
    Parsed::from_events(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_after_others_reads_as_the_first_would() {
        // Blocks pass their readers' buffers on (`Block::recycle`): what an
        // earlier block left, however it ended (a call, a rejection, a
        // repair, a long value, several values), must not change how the
        // next block reads. Each block, after each other one, gives the
        // calls it gives alone (offsets aside), whole and byte by byte.
        let long = "x".repeat(6000);
        let blocks = [
            r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#.to_owned(),
            "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, 2]}}\n</tool_call>".to_owned(),
            "```json\n{'name': 'g', 'arguments': {'b': True, 'c': None,}}\n```".to_owned(),
            r#"{"debug": true, "level": 3}"#.to_owned(),
            r#"{"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}}"#.to_owned(),
            format!(r#"{{"name": "w", "arguments": {{"text": "{long}", "n": 1}}}}"#),
            r#"[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"k": "v"}}]"#.to_owned(),
            "<tool_call>\n{name: h, arguments: {q: 'it''s', }".to_owned() + "\n</tool_call>",
            "<tool_call>\n{\"name\": \"s\", \"arguments\": \"{\\\"a\\\": 1}\"}\n</tool_call>".to_owned(),
        ];
        let key = |c: &ToolCall| {
            let kinds: Vec<_> = c.repairs.iter().map(|r| r.kind).collect();
            (c.name.clone(), c.arguments.clone(), kinds, c.truncated)
        };
        let cfg = Config::default();
        for b in &blocks {
            let alone: Vec<_> = parse(b.as_bytes(), &cfg).calls.iter().map(key).collect();
            for a in &blocks {
                let input = format!("{a}\nNext.\n{b}");
                let bytes = input.as_bytes();
                for parsed in [parse(bytes, &cfg), parse_chunks(bytes.chunks(1), &cfg)] {
                    let calls: Vec<_> = parsed.calls.iter().map(key).collect();
                    assert!(calls.len() >= alone.len(), "{input}");
                    assert_eq!(&calls[calls.len() - alone.len()..], &alone[..], "{input}");
                }
            }
        }
    }

    #[test]
    fn early_literal_check_only_rules_out_what_matching_rules_out() {
        let t = Table::build(&[]);
        // Every literal of the table, whole, cut and changed at each byte,
        // as the bytes at a candidate: the word compare may say "ruled out"
        // only where matching says `No`, and it does for most of them.
        let lits: Vec<&[u8]> = t
            .triggers
            .iter()
            .filter_map(|tr| match tr.pattern {
                Pattern::Lit(l) => Some(l),
                _ => None,
            })
            .collect();
        let mut inputs: Vec<Vec<u8>> = Vec::new();
        for l in &lits {
            for n in 0..=l.len() {
                let mut v = l[..n].to_vec();
                v.extend_from_slice(b"> and some text after");
                inputs.push(v);
                if n < l.len() {
                    let mut w = l.to_vec();
                    w[n] ^= 0x20;
                    // (And cut short: a chunk's last bytes, under 8.)
                    inputs.push(w[..(n + 1).min(7)].to_vec());
                    inputs.push(w);
                }
                if (1..8).contains(&n) {
                    inputs.push(l[..n].to_vec());
                }
            }
        }
        let (mut early, mut no) = (0usize, 0usize);
        for at in &inputs {
            for i in 0..t.triggers.len() as u16 {
                let m = t.triggers[i as usize].pattern.matches(at);
                if t.ruled_out_early(i, at) {
                    assert_eq!(m, Match::No, "{:?}", String::from_utf8_lossy(at));
                    early += 1;
                }
                no += usize::from(m == Match::No);
            }
        }
        assert!(early * 2 > no, "{early} of {no}");
        // Short input is compared on its own length: `<|c` is no
        // `<|python_tag|>`, `<|p` may be.
        let py = t
            .triggers
            .iter()
            .position(|tr| matches!(tr.pattern, Pattern::Lit(l) if l == b"<|python_tag|>"))
            .expect("Llama's tag") as u16;
        assert!(t.ruled_out_early(py, b"<|c"));
        assert!(!t.ruled_out_early(py, b"<|p"));
        assert!(!t.ruled_out_early(py, b""));
    }

    #[test]
    fn pair_index_keeps_every_trigger_two_bytes_allow() {
        for dialects in [
            &[][..],
            &[Dialect::Hermes],
            &[Dialect::Harmony, Dialect::Qwen3Coder],
        ] {
            let t = Table::build(dialects);
            for first in 0..=255u8 {
                let all = &t.by_first[first as usize];
                if all.is_empty() {
                    continue;
                }
                for second in 0..=255u8 {
                    let at = [first, second];
                    let want: Vec<u16> = all
                        .iter()
                        .copied()
                        .filter(|&i| t.triggers[i as usize].pattern.matches(&at) != Match::No)
                        .collect();
                    assert_eq!(t.candidates(&at), &want[..], "{first} {second}");
                }
                assert_eq!(t.candidates(&[first]), &all[..]);
            }
            // At the start of a line: the line triggers its first byte allows.
            for c in 0..=255u8 {
                let want: Vec<u16> = (0..t.triggers.len() as u16)
                    .filter(|&i| match t.triggers[i as usize].pattern {
                        Pattern::Line { matches } => matches(&[c]) != Match::No,
                        _ => false,
                    })
                    .collect();
                assert_eq!(t.pair_lists[t.line_first[c as usize] as usize], want, "{c}");
            }
        }
    }

    #[test]
    fn a_finished_parser_parses_the_next_stream_like_a_new_one() {
        let streams: [&[u8]; 5] = [
            b"Sure.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>",
            // Ends inside a call, a reasoning block, a held trigger.
            b"<tool_call>{\"name\": \"g\", \"arguments\": {\"b\": [1, 2",
            b"<think>hmm",
            b"text then <tool_",
            b"[f(a=1), g(b='x')] and {\"name\": \"h\", \"arguments\": {}}",
        ];
        for cfg in [
            Config::default(),
            Config::default().with_prefill("<think>\n"),
        ] {
            let fresh = |input: &[u8], chunk: usize| {
                let mut p = Parser::new(cfg.clone());
                let mut events = Vec::new();
                for c in input.chunks(chunk) {
                    p.feed(c, &mut events);
                }
                p.finish(&mut events);
                events
            };
            let mut reused = Parser::new(cfg.clone());
            for (k, input) in streams.iter().cycle().take(12).enumerate() {
                let chunk = [1, 3, 64][k % 3];
                let mut events = Vec::new();
                for c in input.chunks(chunk) {
                    reused.feed(c, &mut events);
                }
                reused.finish(&mut events);
                assert_eq!(events, fresh(input, chunk), "stream {k}");
            }
        }
    }

    /// Feeds `input` in `chunk`-byte pieces; returns the events and, per
    /// piece, its end offset and whether the lane was armed after it.
    fn feed_watching_lane(input: &[u8], chunk: usize) -> (Vec<Event>, Vec<(usize, bool)>) {
        let mut p = Parser::new(Config::default());
        let (mut events, mut armed, mut at) = (Vec::new(), Vec::new(), 0);
        for c in input.chunks(chunk) {
            p.feed(c, &mut events);
            at += c.len();
            armed.push((at, p.lane.armed()));
        }
        p.finish(&mut events);
        (events, armed)
    }

    use crate::event::ended_calls as calls;

    #[test]
    fn the_lane_backs_off_on_malformed_arguments_and_comes_back() {
        // Single-quoted items (each a repair the lane stops at), then clean ones.
        let broken = "{'k': 'v'}, ".repeat(100);
        let clean = r#"{"k": "v"}, "#.repeat(400);
        let input = format!(
            "<tool_call>{{\"name\": \"f\", \"arguments\": {{\"a\": [{broken}{clean}1]}}}}</tool_call>"
        );
        let (events, armed) = feed_watching_lane(input.as_bytes(), 4);
        let (whole, _) = feed_watching_lane(input.as_bytes(), input.len());
        assert_eq!(calls(&events), calls(&whole));
        assert_eq!(
            calls(&events)[0].repairs.len(),
            calls(&whole)[0].repairs.len()
        );
        let broken_end = input.find(r#"{"k""#).unwrap();
        let arms = |from: usize, to: usize| {
            let w: Vec<bool> = armed
                .iter()
                .filter(|(at, _)| (from..to).contains(at))
                .map(|&(_, a)| a)
                .collect();
            let starts = w.windows(2).filter(|p| !p[0] && p[1]).count();
            (starts, w.iter().filter(|&&a| a).count(), w.len())
        };
        // 1,200 malformed bytes, about 150 chunks ending where the lane could
        // be armed: armed a handful of times (64, 128, 256, 512 bytes apart),
        // not once per item.
        let (starts, _, _) = arms(0, broken_end);
        assert!(
            (1..=6).contains(&starts),
            "{starts} arms in the malformed part"
        );
        // Once the arguments are clean the lane takes them again (within
        // the longest backoff) and keeps them.
        let (_, on, n) = arms(broken_end + LANE_BACKOFF_MAX as usize, input.len() - 20);
        assert_eq!(on, n, "the lane reads every clean chunk");
    }

    #[test]
    fn the_end_of_short_arguments_is_no_reason_to_back_off() {
        // The repairer's path (the lane armed on the repairer), and the
        // streaming fast path's (`dialect::fastcall::Stream`, which arms
        // the lane inside a string value: with a number alone it reads
        // the short arguments itself, and the lane is never armed).
        for (repairer_only, args) in [
            (true, r#"{"a": 1}"#),
            (true, r#"{"a": "xyz", "b": 2}"#),
            (false, r#"{"a": "xyz", "b": 2}"#),
        ] {
            let input =
                format!("<tool_call>{{\"name\": \"f\", \"arguments\": {args}}}</tool_call>\n")
                    .repeat(20);
            let mut p = Parser::new(Config::default().with_repairer_only(repairer_only));
            let (mut events, mut armed) = (Vec::new(), 0);
            for c in input.as_bytes().chunks(4) {
                p.feed(c, &mut events);
                armed += usize::from(p.lane.armed());
                assert_eq!(p.lane_backoff, 0, "{args} ({repairer_only})");
            }
            p.finish(&mut events);
            let calls = calls(&events);
            assert_eq!(calls.len(), 20);
            assert!(calls.iter().all(|c| c.arguments == args));
            assert!(
                armed >= 20,
                "armed after {armed} chunks ({args}, {repairer_only})"
            );
        }
    }

    #[test]
    fn plain_string_chunks_of_pythonic_calls_are_taken_whole() {
        let mut p = Parser::new(Config::default());
        let mut events = Vec::new();
        // (A quote alone is held: it might open `'''`.)
        p.feed(b"[write_file(path='/tmp/x', content='S", &mut events);
        events.clear();
        assert!(p.plain_chunk(b"some text", &mut events));
        match &events[..] {
            [Event::ToolArgs { delta, span, .. }] => {
                // The writer hands out up to its last cut, before the last
                // character (so the `S` held by the last feed comes now).
                assert_eq!(&delta[..], b"Ssome tex");
                assert_eq!(span.end - span.start, 9);
            }
            other => panic!("{other:?}"),
        }
        // Escaped on: the other quote, non-ASCII, a tab.
        for c in [&b" \"q\""[..], " é".as_bytes(), b"\t"] {
            assert!(p.plain_chunk(c, &mut events), "{c:?}");
        }
        // What the block must read: its quote, an escape, a parenthesis, a
        // line break.
        for c in [&b"a'"[..], b"\\n", b"(", b")", b"\n"] {
            assert!(!p.plain_chunk(c, &mut events), "{c:?}");
        }
        // Part of a character is taken (and held by the escaper); the chunk
        // that completes it is the block's.
        assert!(p.plain_chunk(b" \xc3", &mut events));
        assert!(!p.plain_chunk(b"\xa9", &mut events));
        p.feed(b"\xa9 more')]", &mut events);
        p.finish(&mut events);
        let calls = calls(&events);
        assert_eq!(
            calls[0].arguments,
            r#"{"path": "/tmp/x", "content": "Ssome text \"q\" é\t é more"}"#
        );
    }

    #[test]
    fn plain_text_chunks_are_one_event_each_whatever_the_room_in_out() {
        // The shortcut writes a chunk's text event in place when `out` has
        // room for it (after making room): short chunks inline, longer ones
        // copied. Whatever the room, each chunk is one `Text` event with
        // its bytes and span, owned, and nothing is held back.
        let prose = "The quick brown fox jumps over the lazy dog; it was a bright cold day.\n";
        let input = prose.repeat(20);
        for chunk in [1usize, 7, 23, 24, 40, 64] {
            for room in [0usize, 1, 3] {
                let mut p = Parser::new(Config::default().with_dialects(vec![Dialect::Hermes]));
                let mut events: Vec<Event> = Vec::new();
                let mut at = 0u64;
                for c in input.as_bytes().chunks(chunk) {
                    // No spare room, or a little (the taken path differs).
                    events.clear();
                    events.shrink_to(0);
                    events.reserve_exact(room);
                    let mut copy = c.to_vec();
                    p.feed(&copy, &mut events);
                    copy.fill(b'#');
                    match &events[..] {
                        [Event::Text { text, span }] => {
                            assert_eq!(&text[..], c, "{chunk} {room}");
                            assert_eq!((span.start, span.end), (at, at + c.len() as u64));
                        }
                        other => panic!("{chunk} {room}: {other:?}"),
                    }
                    at += c.len() as u64;
                    assert_eq!(p.position(), at);
                }
                events.clear();
                p.finish(&mut events);
                assert!(events.iter().all(|e| !matches!(e, Event::Text { .. })));
            }
        }
    }

    #[test]
    fn tables_are_built_once_per_dialect_list() {
        let a = Table::get(&[]);
        assert!(Arc::ptr_eq(&a, &Table::get(&[])));
        let h = [Dialect::Hermes];
        let b = Table::get(&h);
        assert!(Arc::ptr_eq(&b, &Table::get(&h)));
        assert!(!Arc::ptr_eq(&a, &b));
        // The hermes-only table has fewer triggers than the default one, and
        // a parser made from a config uses the table of its list.
        assert!(b.triggers.len() < a.triggers.len());
        let p = Parser::new(Config::default().with_dialects(h.to_vec()));
        assert!(Arc::ptr_eq(&p.table, &b));
        // More lists than the cache keeps: the oldest is rebuilt, and every
        // table still matches its list.
        for d in Dialect::ALL.iter().take(TABLE_CACHE + 2) {
            let t = Table::get(std::slice::from_ref(d));
            assert_eq!(
                t.triggers.len(),
                Table::build(std::slice::from_ref(d)).triggers.len()
            );
        }
    }
}
