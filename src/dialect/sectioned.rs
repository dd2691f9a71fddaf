//! Sections of calls delimited by special tokens, each call a head (the
//! tool name, or an id naming it), a separator token and JSON arguments:
//! DeepSeek V3 / V3.1 and Kimi K2 share this reader.

use super::args::{match_any, ArgsJson};
use super::{Block, BlockArgs, Cx, Flow, LaneHost, Resume};
use crate::config::Config;
use crate::event::{Repair, RepairKind, Span};
use crate::json::Status;
use crate::scan::{match_lit, Match};

/// The tokens of one sectioned dialect.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SectionSpec {
    pub section_begin: &'static [&'static [u8]],
    pub call_begin: &'static [&'static [u8]],
    pub sep: &'static [&'static [u8]],
    pub call_end: &'static [&'static [u8]],
    pub section_end: &'static [&'static [u8]],
    /// DeepSeek V3: a `function` head, then the name on the separator's
    /// line and the arguments in a ```` ```json ```` fence.
    pub v3_function: bool,
    /// Kimi: the head is the call id `functions.NAME:IDX`.
    pub head_is_id: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Section,
    Head,
    V3Name,
    Fence,
    Args,
    /// The arguments of a call whose name is blank: no call, read over up
    /// to the call's end token.
    Skip,
    AfterArgs,
}

const MAX_HEAD: usize = 512;

/// The block.
pub(crate) struct Sectioned {
    spec: SectionSpec,
    st: St,
    head: Vec<u8>,
    local: Option<usize>,
    args: Option<ArgsJson>,
    /// A finished call not ended yet (its end offset and repairs).
    done_call: Option<(usize, ArgsJson, u64, Vec<Repair>)>,
    repairs: Vec<Repair>,
    calls: usize,
    /// Call tokens seen (a call whose name turned out blank counts).
    heads: usize,
    cfg: Config,
}

impl Sectioned {
    /// A block opened by a section token (`in_call`: by a call token).
    pub(crate) fn new(spec: SectionSpec, a: &BlockArgs<'_>, in_call: bool) -> Self {
        Sectioned {
            spec,
            st: if in_call { St::Head } else { St::Section },
            head: Vec::new(),
            local: None,
            args: None,
            done_call: None,
            repairs: Vec::new(),
            calls: 0,
            heads: usize::from(in_call),
            cfg: a.cfg.clone(),
        }
    }

    /// Opens a block whose trigger is either a section or a call token.
    pub(crate) fn open(spec: SectionSpec, a: &BlockArgs<'_>) -> Self {
        let in_call = spec.call_begin.contains(&a.trigger);
        Sectioned::new(spec, a, in_call)
    }

    fn flush_done(&mut self, cx: &mut Cx<'_>, extra: Vec<Repair>) {
        if let Some((local, mut args, end, mut reps)) = self.done_call.take() {
            reps.extend(extra);
            args.end(cx, local, end, reps);
        }
    }

    /// Starts the call `head` names, its arguments next; false when the
    /// name is blank (`functions.:0`, an empty line): that is no call, and
    /// what follows up to the call's end token is read over.
    fn start_call(&mut self, cx: &mut Cx<'_>, head: &[u8], at: u64) -> bool {
        let head = String::from_utf8_lossy(head.trim_ascii()).into_owned();
        let (name, id) = if self.spec.head_is_id {
            let mut name = head.as_str();
            if let Some(rest) = name.strip_prefix("functions.") {
                name = rest;
            }
            if let Some(p) = name.rfind(':') {
                if name[p + 1..].bytes().all(|b| b.is_ascii_digit()) {
                    name = &name[..p];
                }
            }
            (name.to_owned(), Some(head.clone()))
        } else {
            (head, None)
        };
        if name.trim().is_empty() {
            return false;
        }
        self.flush_done(cx, Vec::new());
        self.local = Some(cx.start(name, id, Span::new(at, at)));
        self.args = Some(ArgsJson::new(&self.cfg.limits, true));
        self.calls += 1;
        cx.commit();
        true
    }

    /// The current call's arguments are complete; it ends at `end` (later).
    fn finish_call(&mut self, end: u64) {
        if let (Some(local), Some(args)) = (self.local.take(), self.args.take()) {
            let reps = std::mem::take(&mut self.repairs);
            self.done_call = Some((local, args, end, reps));
        }
    }

    /// A section token with no call after it (an empty section, or one
    /// followed by noise, Kimi K2's habit): the tokens up to `at` are
    /// markup, never text; what follows is read again as text.
    fn empty_section(&mut self, cx: &mut Cx<'_>, at: usize) -> Flow {
        cx.commit();
        Flow::Done(at)
    }

    /// The block ends at `at` (a closing token included, or missing).
    fn done(&mut self, cx: &mut Cx<'_>, at: usize, missing: bool) -> Flow {
        if self.calls == 0 {
            return Flow::Reject {
                at,
                then: Resume::Text,
            };
        }
        let end = cx.abs(at);
        if let (Some(local), Some(args)) = (self.local, self.args.as_mut()) {
            args.close(cx, local, false);
            self.finish_call(end);
        }
        if let Some(d) = self.done_call.as_mut() {
            d.2 = end;
        }
        let extra = if missing {
            vec![Repair {
                kind: RepairKind::MissingCloseTag,
                offset: end,
            }]
        } else {
            Vec::new()
        };
        self.flush_done(cx, extra);
        Flow::Done(at)
    }
}

/// Blanks looked through after a call for the next call or the section's
/// end.
const SECTION_BLANKS: usize = 64;

impl Block for Sectioned {
    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            match self.st {
                St::Section => {
                    // Blanks, then a call, the end of the section, or text.
                    // At most 64 blanks are looked through: a longer run
                    // ends the section (as text would), decided at its 64th
                    // blank whatever follows, so the answer does not
                    // depend on whether that byte has arrived (fuzz finding
                    // `content_split-20`).
                    let missing = self.spec.section_begin.is_empty() || self.calls > 0;
                    let p = input[i..]
                        .iter()
                        .take(SECTION_BLANKS)
                        .position(|b| !b.is_ascii_whitespace());
                    let Some(p) = p else {
                        if input.len() - i < SECTION_BLANKS {
                            return Flow::Partial(i);
                        }
                        if self.heads == 0 {
                            return self.empty_section(cx, i);
                        }
                        return self.done(cx, i, missing);
                    };
                    let at = &input[i + p..];
                    match match_any(self.spec.call_begin, at) {
                        (Match::Full(n), _) => {
                            self.heads += 1;
                            i += p + n;
                            self.head.clear();
                            self.st = St::Head;
                            continue;
                        }
                        (Match::Partial, _) => return Flow::Partial(i),
                        (Match::No, _) => {}
                    }
                    match match_any(self.spec.section_end, at) {
                        (Match::Full(n), _) if self.heads == 0 => {
                            return self.empty_section(cx, i + p + n)
                        }
                        (Match::Full(n), _) => return self.done(cx, i + p + n, false),
                        (Match::Partial, _) => return Flow::Partial(i),
                        (Match::No, _) => {}
                    }
                    if self.heads == 0 {
                        return self.empty_section(cx, i + p);
                    }
                    return self.done(cx, i, missing);
                }
                St::Head => {
                    if b == b'<' {
                        match match_any(self.spec.sep, &input[i..]) {
                            (Match::Full(n), _) => {
                                i += n;
                                let head = std::mem::take(&mut self.head);
                                if self.spec.v3_function && head.trim_ascii() == b"function" {
                                    self.st = St::V3Name;
                                } else if self.start_call(cx, &head, cx.abs(i)) {
                                    self.st = St::Args;
                                } else {
                                    self.st = St::Skip;
                                }
                                continue;
                            }
                            (Match::Partial, _) => return Flow::Partial(i),
                            (Match::No, _) => {}
                        }
                        match match_any(self.spec.call_end, &input[i..]) {
                            (Match::Full(_), _) if !self.head.trim_ascii().is_empty() => {
                                // A call without arguments.
                                let head = std::mem::take(&mut self.head);
                                self.start_call(cx, &head, cx.abs(i));
                                self.st = St::AfterArgs;
                                continue;
                            }
                            (Match::Partial, _) => return Flow::Partial(i),
                            _ => {}
                        }
                        return self.done(cx, i, true);
                    }
                    if b == b'{' && !self.head.trim_ascii().is_empty() {
                        // `name{…}`: the separator is missing.
                        let head = std::mem::take(&mut self.head);
                        if self.start_call(cx, &head, cx.abs(i)) {
                            self.repairs.push(Repair {
                                kind: RepairKind::SyntaxFix,
                                offset: cx.abs(i),
                            });
                            self.st = St::Args;
                        } else {
                            self.st = St::Skip;
                        }
                        continue;
                    }
                    if self.head.len() >= MAX_HEAD {
                        return self.done(cx, i, true);
                    }
                    self.head.push(b);
                    i += 1;
                }
                St::V3Name => {
                    if b == b'\n' || b == b'`' || b == b'{' {
                        let name = std::mem::take(&mut self.head);
                        self.st = if self.start_call(cx, &name, cx.abs(i)) {
                            St::Fence
                        } else {
                            St::Skip
                        };
                        continue;
                    }
                    if b == b'<' {
                        match match_any(self.spec.call_end, &input[i..]) {
                            (Match::Partial, _) => return Flow::Partial(i),
                            (Match::Full(_), _) => {
                                let name = std::mem::take(&mut self.head);
                                self.start_call(cx, &name, cx.abs(i));
                                self.st = St::AfterArgs;
                                continue;
                            }
                            (Match::No, _) => {}
                        }
                    }
                    if self.head.len() >= MAX_HEAD {
                        return self.done(cx, i, true);
                    }
                    self.head.push(b);
                    i += 1;
                }
                St::Fence => {
                    if b.is_ascii_whitespace() {
                        i += 1;
                    } else if b == b'`' {
                        match match_lit(b"```", &input[i..]) {
                            Match::Full(n) => {
                                // Skip the info string up to the line break.
                                match memchr::memchr(b'\n', &input[i + n..]) {
                                    Some(p) if p < 32 => {
                                        i += n + p + 1;
                                        self.st = St::Args;
                                    }
                                    None if input.len() - i - n < 32 => return Flow::Partial(i),
                                    _ => {
                                        i += n;
                                        self.st = St::Args;
                                    }
                                }
                            }
                            Match::Partial => return Flow::Partial(i),
                            Match::No => self.st = St::Args,
                        }
                    } else {
                        self.st = St::Args;
                    }
                }
                St::Args => {
                    let (Some(local), Some(args)) = (self.local, self.args.as_mut()) else {
                        self.st = St::AfterArgs;
                        continue;
                    };
                    // Blanks before the value are skipped, but only before
                    // the repairer has had any byte (garbage included): from
                    // then on it must see them, or its offsets would depend
                    // on where the chunks were cut.
                    if !args.fed() && b.is_ascii_whitespace() {
                        i += 1;
                        continue;
                    }
                    let mut sub = cx.at(i);
                    let p = args.feed(&input[i..], &mut sub, local);
                    i += p.consumed;
                    match p.status {
                        Status::NeedMore => return Flow::More,
                        Status::Limit => {
                            args.close(&mut sub, local, true);
                            self.st = St::AfterArgs;
                        }
                        _ => self.st = St::AfterArgs,
                    }
                }
                St::Skip => {
                    // Up to the call's end token (or the section's end, or
                    // the next call: then the end token is missing).
                    let Some(p) = memchr::memchr(b'<', &input[i..]) else {
                        return Flow::More;
                    };
                    i += p;
                    let at = &input[i..];
                    let ends = [
                        self.spec.call_end,
                        self.spec.section_end,
                        self.spec.call_begin,
                    ];
                    match ends.map(|t| match_any(t, at).0) {
                        [Match::Full(n), ..] => {
                            i += n;
                            self.st = St::Section;
                        }
                        [_, Match::Full(n), _] => return self.done(cx, i + n, false),
                        [_, _, Match::Full(n)] => {
                            i += n;
                            self.head.clear();
                            self.st = St::Head;
                        }
                        m if m.contains(&Match::Partial) => return Flow::Partial(i),
                        _ => i += 1,
                    }
                }
                St::AfterArgs => {
                    if b.is_ascii_whitespace() {
                        i += 1;
                        continue;
                    }
                    if b == b'`' {
                        match match_lit(b"```", &input[i..]) {
                            Match::Full(n) => {
                                i += n;
                                continue;
                            }
                            Match::Partial => return Flow::Partial(i),
                            Match::No => return self.done(cx, i, true),
                        }
                    }
                    match match_any(self.spec.call_end, &input[i..]) {
                        (Match::Full(n), _) => {
                            i += n;
                            if let (Some(local), Some(args)) = (self.local, self.args.as_mut()) {
                                args.close(cx, local, false);
                            }
                            self.finish_call(cx.abs(i));
                            self.st = St::Section;
                            continue;
                        }
                        (Match::Partial, _) => return Flow::Partial(i),
                        (Match::No, _) => {}
                    }
                    match match_any(self.spec.section_end, &input[i..]) {
                        (Match::Full(n), _) => {
                            self.repairs.push(Repair {
                                kind: RepairKind::MissingCloseTag,
                                offset: cx.abs(i),
                            });
                            return self.done(cx, i + n, false);
                        }
                        (Match::Partial, _) => return Flow::Partial(i),
                        (Match::No, _) => {}
                    }
                    match match_any(self.spec.call_begin, &input[i..]) {
                        (Match::Full(n), _) => {
                            self.repairs.push(Repair {
                                kind: RepairKind::MissingCloseTag,
                                offset: cx.abs(i),
                            });
                            if let (Some(local), Some(args)) = (self.local, self.args.as_mut()) {
                                args.close(cx, local, false);
                            }
                            self.finish_call(cx.abs(i));
                            i += n;
                            self.st = St::Head;
                            continue;
                        }
                        (Match::Partial, _) => return Flow::Partial(i),
                        (Match::No, _) => {}
                    }
                    return self.done(cx, i, true);
                }
            }
        }
        Flow::More
    }

    fn lane_host(&mut self) -> Option<LaneHost<'_>> {
        // Once the arguments reader has had a byte, every byte goes to it.
        match (self.st, self.local, self.args.as_mut()) {
            (St::Args, Some(local), Some(args)) if args.fed() => Some(LaneHost::Args(args, local)),
            _ => None,
        }
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        match self.st {
            // A head the input ends inside is cut: no call (its name may
            // be the start of another).
            St::Fence | St::Args | St::AfterArgs => {
                if let (Some(local), Some(args)) = (self.local, self.args.as_mut()) {
                    args.close(cx, local, true);
                }
            }
            _ => {}
        }
        if self.calls == 0 {
            // A section token the output ended with (blanks at most after
            // it) is markup.
            if self.st == St::Section && self.heads == 0 {
                cx.commit();
                return true;
            }
            return false;
        }
        let end = cx.base;
        self.finish_call(end);
        if let Some(d) = self.done_call.as_mut() {
            d.2 = end;
        }
        self.flush_done(
            cx,
            vec![Repair {
                kind: RepairKind::MissingCloseTag,
                offset: end,
            }],
        );
        true
    }
}
