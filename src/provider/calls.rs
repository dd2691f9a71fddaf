//! The calls of one provider stream: index assignment, argument streaming
//! through the repairer, and the `ToolStart` / `ToolArgs` / `ToolEnd` events.

use std::collections::VecDeque;

use crate::config::{IdGenerator, Limits};
use crate::event::{Delta, DiagnosticKind, Event, Repair, RepairKind, Span, ToolCall};
use crate::json::{Mark, Repairer, Sink, Status, ValueKind};

/// How the arguments value is being normalised to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// No value yet.
    Start,
    /// An object: bytes pass through.
    Pass,
    /// A non-object value, written as `{"value": …}`.
    Wrap,
    /// A literal, held until it shows whether it is `null`.
    Literal,
    /// Complete.
    Done,
}

/// Receives the repairer's output and makes it an object.
#[derive(Debug)]
struct ObjectSink {
    out: Vec<u8>,
    depth: usize,
    mode: Mode,
    hold: Vec<u8>,
    /// A `NonObjectArguments` repair is due.
    wrapped: bool,
}

impl Sink for ObjectSink {
    fn write(&mut self, bytes: &[u8]) {
        match self.mode {
            Mode::Pass | Mode::Wrap => self.out.extend_from_slice(bytes),
            Mode::Literal => self.hold.extend_from_slice(bytes),
            Mode::Start | Mode::Done => {}
        }
    }

    fn last_byte(&self) -> Option<u8> {
        match self.mode {
            Mode::Pass | Mode::Wrap => self.out.last().copied(),
            _ => None,
        }
    }

    fn mark(&mut self, mark: Mark<'_>, _offset: u64) {
        if let (Mode::Start, Mark::Begin(kind)) = (self.mode, mark) {
            self.mode = match kind {
                ValueKind::Object => Mode::Pass,
                ValueKind::Literal => Mode::Literal,
                _ => {
                    self.wrapped = true;
                    self.out.extend_from_slice(br#"{"value":"#);
                    Mode::Wrap
                }
            };
        }
        match mark {
            Mark::Begin(ValueKind::Object | ValueKind::Array) => self.depth += 1,
            Mark::End(ValueKind::Object | ValueKind::Array) => {
                self.depth = self.depth.saturating_sub(1)
            }
            _ => {}
        }
        if matches!(mark, Mark::End(_)) && self.depth == 0 {
            match self.mode {
                Mode::Wrap => self.out.push(b'}'),
                Mode::Literal => {
                    self.wrapped = true;
                    if self.hold == b"null" {
                        self.out.extend_from_slice(b"{}");
                    } else {
                        self.out.extend_from_slice(br#"{"value":"#);
                        self.out.extend_from_slice(&self.hold);
                        self.out.push(b'}');
                    }
                }
                _ => {}
            }
            self.mode = Mode::Done;
        }
    }
}

/// One call's arguments: provider fragments in, append-only valid JSON
/// object text out.
#[derive(Debug)]
pub(crate) struct ArgsStream {
    rep: Repairer,
    sink: ObjectSink,
    emitted: usize,
    repairs: Vec<Repair>,
    /// [`Limits::max_repairs`]: the repairs kept (see [`Repair::push_bounded`]).
    max_repairs: usize,
    max_bytes: usize,
    limited: bool,
    /// Trailing bytes after the value were reported.
    garbage: bool,
    /// Any fragment byte seen.
    any: bool,
    /// The offset of the first fragment that carried an argument byte:
    /// where a `max_args_bytes` cut is reported, as the content parser
    /// reports it (where the value holding the arguments began), so that
    /// the offset does not depend on which frame the limit fell in.
    first_at: Option<u64>,
}

impl ArgsStream {
    pub(crate) fn new(limits: &Limits) -> Self {
        ArgsStream {
            rep: Repairer::with_limits(limits),
            sink: ObjectSink {
                out: Vec::new(),
                depth: 0,
                mode: Mode::Start,
                hold: Vec::new(),
                wrapped: false,
            },
            emitted: 0,
            repairs: Vec::new(),
            max_repairs: limits.max_repairs,
            max_bytes: limits.max_args_bytes,
            limited: false,
            garbage: false,
            any: false,
            first_at: None,
        }
    }

    /// Feeds a fragment; repairs it triggers are recorded at offset `at`.
    pub(crate) fn feed(&mut self, frag: &[u8], at: u64) {
        if frag.is_empty() || self.limited {
            return;
        }
        self.any = true;
        let first_at = *self.first_at.get_or_insert(at);
        // Never feed more than the limit leaves room for.
        let budget = self.max_bytes.saturating_sub(self.sink.out.len());
        let over = frag.len() > budget;
        let frag = if over { &frag[..budget] } else { frag };
        let done_before = self.rep.is_done();
        let p = if done_before {
            crate::json::Progress {
                consumed: 0,
                status: Status::Done,
            }
        } else {
            self.feed_pieces(frag, at)
        };
        let over = over && p.status != Status::Done;
        if p.status == Status::Done
            && !self.garbage
            && frag[p.consumed..].iter().any(|c| !c.is_ascii_whitespace())
        {
            self.garbage = true;
            self.repairs.push(Repair {
                kind: RepairKind::TrailingGarbage,
                offset: at,
            });
        }
        if over || p.status == Status::Limit || self.sink.out.len() > self.max_bytes {
            self.limited = true;
            self.rep.finish(&mut self.sink);
            // `max_depth` (Status::Limit): the repairer recorded it at the
            // opener past the limit, filed at this fragment's frame by
            // `collect`. `max_args_bytes`: where the arguments began.
            if p.status != Status::Limit {
                self.repairs.push(Repair {
                    kind: RepairKind::LimitExceeded,
                    offset: first_at,
                });
            }
        }
        self.collect(at);
    }

    /// Feeds the repairer `frag` in pieces, its repairs collected after
    /// each, so that a huge fragment's repairs are bounded as they come.
    fn feed_pieces(&mut self, frag: &[u8], at: u64) -> crate::json::Progress {
        crate::json::in_pieces(frag, |piece, _| {
            self.collect(at);
            self.rep.feed(piece, &mut self.sink)
        })
    }

    fn collect(&mut self, at: u64) {
        // Filed at the fragment's offset, the call's list bounded as it grows.
        for r in self.rep.drain_repairs() {
            let r = Repair {
                kind: r.kind,
                offset: at,
            };
            Repair::push_bounded(&mut self.repairs, r, self.max_repairs);
        }
        if self.sink.wrapped {
            self.sink.wrapped = false;
            self.repairs.push(Repair {
                kind: RepairKind::NonObjectArguments,
                offset: at,
            });
        }
    }

    /// True once the arguments value is complete.
    pub(crate) fn is_complete(&self) -> bool {
        self.sink.mode == Mode::Done
    }

    /// True once any argument byte arrived.
    pub(crate) fn has_input(&self) -> bool {
        self.any
    }

    /// The output not handed out yet.
    pub(crate) fn take_delta(&mut self) -> Option<Delta> {
        if self.emitted == self.sink.out.len() {
            return None;
        }
        let d = Delta::copy_from_slice(&self.sink.out[self.emitted..]);
        self.emitted = self.sink.out.len();
        Some(d)
    }

    /// Completes the value. `empty_ok`: no arguments at all is the protocol's
    /// way of saying `{}` (no repair recorded). Returns `truncated`.
    pub(crate) fn finish(&mut self, at: u64, empty_ok: bool) -> bool {
        let mut truncated = self.limited;
        if self.sink.mode != Mode::Done && !self.limited {
            // A value the repairer had to complete is truncated; a bare
            // top-level token that was merely waiting for its end (`null`,
            // `42`) is not: finishing it records no repair.
            let before = self.rep.repairs().len();
            let completed = self.rep.finish(&mut self.sink);
            truncated |= completed && self.rep.repairs().len() > before;
            self.collect(at);
        }
        if self.sink.mode == Mode::Start {
            // No value at all (empty or blank arguments).
            self.sink.out.extend_from_slice(b"{}");
            self.sink.mode = Mode::Done;
            if !empty_ok || self.any {
                self.repairs.push(Repair {
                    kind: RepairKind::MissingArguments,
                    offset: at,
                });
            }
        } else if self.sink.mode != Mode::Done {
            // Only reachable if a limit stopped the repairer mid-value: close
            // what is open by appending (emitted bytes are never retracted).
            let mut fixed = Repairer::new();
            let mut tail = Vec::new();
            fixed.feed(&self.sink.out, &mut tail);
            let mut closing = Vec::new();
            fixed.finish(&mut closing);
            self.sink.out.extend_from_slice(&closing);
            if self.sink.mode == Mode::Wrap {
                self.sink.out.push(b'}');
            }
            self.sink.mode = Mode::Done;
            truncated = true;
        }
        truncated
    }

    pub(crate) fn output(&self) -> &[u8] {
        &self.sink.out
    }

    pub(crate) fn take_repairs(&mut self) -> Vec<Repair> {
        std::mem::take(&mut self.repairs)
    }
}

/// One open call.
#[derive(Debug)]
struct Open {
    /// The decoder's handle for the call.
    handle: usize,
    id: String,
    name: String,
    /// The public index, assigned when `ToolStart` goes out.
    index: Option<usize>,
    args: ArgsStream,
    /// Arguments text given whole at the start (Anthropic `input`), used when
    /// no fragment arrives.
    fallback: Option<String>,
}

/// The calls of one stream.
///
/// Decoders refer to calls by a *handle* (returned by [`Calls::begin`]);
/// the public index, which counts 0, 1, 2… in `ToolStart` order, is given
/// when the call's name is known and its `ToolStart` goes out.
#[derive(Debug)]
pub(crate) struct Calls {
    limits: Limits,
    ids: IdGenerator,
    next_handle: usize,
    next_index: usize,
    /// The open calls, oldest (lowest handle) first: found by binary search,
    /// ended from the front, so that a stream of many calls costs linear time.
    open: VecDeque<Open>,
    /// Open calls whose arguments became complete, in the order they did
    /// (see [`Calls::take_completed`]).
    completed: Vec<usize>,
    /// Public index by handle (for calls that have started).
    indexes: Vec<Option<usize>>,
    /// Calls begun in the current response.
    pub(crate) in_response: usize,
    /// An empty argument string is the protocol's `{}` (Anthropic, Bedrock).
    pub(crate) empty_ok: bool,
    /// A call the stream cuts off is truncated even when its arguments
    /// happen to be complete (protocols with an explicit end-of-call event).
    /// When false, only incomplete arguments make a call truncated.
    pub(crate) cut_marks_truncated: bool,
}

impl Calls {
    pub(crate) fn new(limits: &Limits, ids: &IdGenerator) -> Self {
        Calls {
            limits: limits.clone(),
            ids: ids.clone(),
            next_handle: 0,
            next_index: 0,
            open: VecDeque::new(),
            completed: Vec::new(),
            indexes: Vec::new(),
            in_response: 0,
            empty_ok: false,
            cut_marks_truncated: true,
        }
    }

    /// Where the open call `handle` is in `open`.
    fn pos(&self, handle: usize) -> Option<usize> {
        self.open.binary_search_by_key(&handle, |c| c.handle).ok()
    }

    fn find(&mut self, handle: usize) -> Option<&mut Open> {
        let pos = self.pos(handle)?;
        self.open.get_mut(pos)
    }

    fn get(&self, handle: usize) -> Option<&Open> {
        self.open.get(self.pos(handle)?)
    }

    /// The public index of a call, once its `ToolStart` is out.
    pub(crate) fn index_of(&self, handle: usize) -> Option<usize> {
        self.indexes.get(handle).copied().flatten()
    }

    /// True while the call is open.
    pub(crate) fn is_open(&self, handle: usize) -> bool {
        self.get(handle).is_some()
    }

    /// Handles of the open calls whose arguments are complete, oldest first
    /// (each call once: the ones that completed since the last time).
    pub(crate) fn take_completed(&mut self) -> Vec<usize> {
        let mut done = std::mem::take(&mut self.completed);
        done.retain(|&h| self.is_complete(h));
        done.sort_unstable();
        done
    }

    /// Handles of the open calls, oldest first.
    pub(crate) fn open_handles(&self) -> Vec<usize> {
        self.open.iter().map(|c| c.handle).collect()
    }

    /// The most recently begun open call.
    pub(crate) fn last_open(&self) -> Option<usize> {
        self.open.back().map(|c| c.handle)
    }

    /// The id of an open call (empty while unknown).
    pub(crate) fn id(&self, handle: usize) -> Option<&str> {
        self.get(handle).map(|c| c.id.as_str())
    }

    /// The name of an open call (empty while unknown).
    pub(crate) fn name(&self, handle: usize) -> Option<&str> {
        self.get(handle).map(|c| c.name.as_str())
    }

    /// True when the open call's arguments are a complete value.
    pub(crate) fn is_complete(&self, handle: usize) -> bool {
        self.get(handle).is_some_and(|c| c.args.is_complete())
    }

    /// Begins a call and returns its handle; `ToolStart` goes out as soon as
    /// the name is known.
    pub(crate) fn begin(
        &mut self,
        id: Option<&str>,
        name: Option<&str>,
        span: Span,
        out: &mut Vec<Event>,
    ) -> usize {
        let handle = self.next_handle;
        self.next_handle += 1;
        self.indexes.push(None);
        self.in_response += 1;
        self.open.push_back(Open {
            handle,
            id: id.unwrap_or_default().to_owned(),
            name: String::new(),
            index: None,
            args: ArgsStream::new(&self.limits),
            fallback: None,
        });
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            self.set_name(handle, name, span, out);
        }
        handle
    }

    /// Sets the id of a call whose `ToolStart` is not out yet.
    pub(crate) fn set_id(&mut self, handle: usize, id: &str) {
        if let Some(c) = self.find(handle) {
            if c.index.is_none() && c.id.is_empty() {
                c.id = id.to_owned();
            }
        }
    }

    /// Sets the name (first non-empty one wins) and starts the call.
    pub(crate) fn set_name(&mut self, handle: usize, name: &str, span: Span, out: &mut Vec<Event>) {
        let Some(pos) = self.pos(handle) else {
            return;
        };
        if self.open[pos].index.is_some() || name.is_empty() {
            return;
        }
        self.open[pos].name = name.to_owned();
        self.start(pos, span, out);
    }

    /// Gives the call at `open[pos]` its index and emits `ToolStart` (and the
    /// arguments received so far).
    fn start(&mut self, pos: usize, span: Span, out: &mut Vec<Event>) {
        let index = self.next_index;
        self.next_index += 1;
        let c = &mut self.open[pos];
        c.index = Some(index);
        self.indexes[c.handle] = Some(index);
        if c.id.is_empty() {
            c.id = self.ids.id(index).to_string();
        }
        out.push(Event::ToolStart {
            index,
            id: c.id.clone().into(),
            name: c.name.clone().into(),
            span,
        });
        if let Some(delta) = c.args.take_delta() {
            out.push(Event::ToolArgs { index, delta, span });
        }
    }

    /// Sets arguments given whole at the start, used if no fragment arrives.
    pub(crate) fn set_fallback(&mut self, handle: usize, json: String) {
        if let Some(c) = self.find(handle) {
            c.fallback = Some(json);
        }
    }

    /// Appends an argument fragment.
    pub(crate) fn args(&mut self, handle: usize, frag: &[u8], span: Span, out: &mut Vec<Event>) {
        let Some(pos) = self.pos(handle) else { return };
        let c = &mut self.open[pos];
        let was_complete = c.args.is_complete();
        c.args.feed(frag, span.start);
        if !was_complete && c.args.is_complete() {
            self.completed.push(handle);
        }
        if let Some(index) = c.index {
            if let Some(delta) = c.args.take_delta() {
                out.push(Event::ToolArgs { index, delta, span });
            }
        }
    }

    /// Ends a call. `cut`: the stream cut it off (see
    /// [`Calls::cut_marks_truncated`]).
    pub(crate) fn end(&mut self, handle: usize, cut: bool, span: Span, out: &mut Vec<Event>) {
        let Some(mut pos) = self.pos(handle) else {
            return;
        };
        // A call whose name never came (null or `""` only: sglang#23071's
        // `name: null` entry) is no call (USER-ISSUES 2.9); a diagnostic
        // keeps what it carried.
        let nameless = self.open[pos].index.is_none();
        let empty_ok = self.empty_ok;
        let cut_marks = self.cut_marks_truncated;
        let Some(mut c) = self.open.remove(pos) else {
            return;
        };
        // Entries of ended calls are dropped once they are half of the list.
        if self.completed.len() > 2 * self.open.len() + 16 {
            let open = &self.open;
            self.completed
                .retain(|&h| open.binary_search_by_key(&h, |c| c.handle).is_ok());
        }
        pos = c.index.unwrap_or_default();
        if !c.args.has_input() {
            if let Some(fb) = c.fallback.take() {
                c.args.feed(fb.as_bytes(), span.start);
            }
        }
        let truncated = c.args.finish(span.start, empty_ok) || (cut && cut_marks);
        if nameless {
            out.push(Event::Diagnostic {
                kind: DiagnosticKind::DroppedCall,
                message: format!(
                    "a call without a tool name is no call (id {:?}, arguments {})",
                    c.id,
                    String::from_utf8_lossy(c.args.output())
                ),
                span,
            });
            return;
        }
        if let Some(delta) = c.args.take_delta() {
            out.push(Event::ToolArgs {
                index: pos,
                delta,
                span,
            });
        }
        let arguments = String::from_utf8_lossy(c.args.output()).into_owned();
        let mut repairs = c.args.take_repairs();
        Repair::cap(&mut repairs, self.limits.max_repairs);
        out.push(Event::ToolEnd {
            call: Box::new(ToolCall {
                index: pos,
                id: c.id.into(),
                name: c.name.into(),
                arguments,
                repairs,
                truncated,
            }),
            span,
        });
    }

    /// A frame of the stream was lost at `offset`: every open call gets a
    /// [`RepairKind::LostFrame`] repair (its arguments may miss a fragment).
    pub(crate) fn frame_lost(&mut self, offset: u64) {
        let max = self.limits.max_repairs;
        for c in &mut self.open {
            Repair::push_bounded(
                &mut c.args.repairs,
                Repair {
                    kind: RepairKind::LostFrame,
                    offset,
                },
                max,
            );
        }
    }

    /// Ends every open call, oldest first.
    pub(crate) fn end_all(&mut self, cut: bool, span: Span, out: &mut Vec<Event>) {
        for handle in self.open_handles() {
            self.end(handle, cut, span, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(frags: &[&str], empty_ok: bool) -> (String, Vec<RepairKind>, bool, String) {
        let mut a = ArgsStream::new(&Limits::default());
        let mut deltas = String::new();
        for f in frags {
            a.feed(f.as_bytes(), 0);
            if let Some(d) = a.take_delta() {
                deltas.push_str(std::str::from_utf8(&d).unwrap());
            }
        }
        let t = a.finish(0, empty_ok);
        if let Some(d) = a.take_delta() {
            deltas.push_str(std::str::from_utf8(&d).unwrap());
        }
        let out = String::from_utf8(a.output().to_vec()).unwrap();
        assert_eq!(deltas, out, "deltas add up");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(v.is_object());
        (
            out,
            a.take_repairs().iter().map(|r| r.kind).collect(),
            t,
            deltas,
        )
    }

    #[test]
    fn normalises_to_objects() {
        assert_eq!(args(&["{\"a\": ", "1}"], false).0, "{\"a\": 1}");
        assert!(args(&["{\"a\": ", "1}"], false).1.is_empty());
        assert_eq!(
            args(&["null"], false),
            (
                "{}".into(),
                vec![RepairKind::NonObjectArguments],
                false,
                "{}".into()
            )
        );
        assert!(!args(&["42"], false).2);
        assert!(args(&["{\"a\": 4"], false).2);
        assert_eq!(args(&[], false).1, vec![RepairKind::MissingArguments]);
        assert!(args(&[], true).1.is_empty());
        assert_eq!(args(&["  "], true).1, vec![RepairKind::MissingArguments]);
        assert_eq!(args(&["[1,2]"], false).0, "{\"value\":[1,2]}");
        assert_eq!(args(&["\"x\""], false).0, "{\"value\":\"x\"}");
        assert_eq!(args(&["true"], false).0, "{\"value\":true}");
        let (o, r, t, _) = args(&["{\"note\": \"The"], false);
        assert_eq!(o, "{\"note\": \"The\"}");
        assert!(t);
        assert!(r.contains(&RepairKind::UnclosedString));
        let (o, r, t, _) = args(&["{\"a\":1}", "{\"a\":1}"], false);
        assert_eq!(o, "{\"a\":1}");
        assert_eq!(r, vec![RepairKind::TrailingGarbage]);
        assert!(!t);
        assert_eq!(args(&["{'a': 1,}"], false).0, "{\"a\": 1}");
    }

    #[test]
    fn limit_cuts_and_closes() {
        let limits = Limits {
            max_args_bytes: 20,
            ..Limits::default()
        };
        let mut a = ArgsStream::new(&limits);
        a.feed(b"{\"a\": \"0123456789", 0);
        a.feed(b"0123456789\", \"b\": 1}", 50);
        assert!(a.finish(90, false));
        let out = String::from_utf8(a.output().to_vec()).unwrap();
        assert!(serde_json::from_str::<serde_json::Value>(&out)
            .unwrap()
            .is_object());
        // Where the arguments began, not in the fragment the cut fell in.
        let cuts: Vec<u64> = a
            .take_repairs()
            .iter()
            .filter(|r| r.kind == RepairKind::LimitExceeded)
            .map(|r| r.offset)
            .collect();
        assert_eq!(cuts, [0]);
    }
}
