//! Scanning text for the places where a call or a reasoning block could begin.
//!
//! A [`ByteFinder`] knows the first bytes of every trigger of the active
//! dialects and jumps between occurrences of those bytes with `memchr`
//! (`memchr3` per group of three bytes, each group's next hit cached so no
//! byte is scanned twice). At a candidate it asks each trigger whether the
//! bytes there match it fully, could still match it (the input ended inside
//! it: hold those bytes back), or cannot.

/// The result of matching a trigger at a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Match {
    /// Cannot match here.
    No,
    /// The input ended while the bytes still matched a prefix.
    Partial,
    /// Matched; the trigger is this many bytes long.
    Full(usize),
}

/// How a trigger recognises itself.
#[derive(Clone, Copy)]
pub(crate) enum Pattern {
    /// A literal byte string.
    Lit(&'static [u8]),
    /// A matcher function over the bytes at the candidate position.
    Custom {
        /// The bytes the trigger can start with.
        first: &'static [u8],
        /// The matcher.
        matches: fn(&[u8]) -> Match,
    },
    /// A matcher applied at the start of a line: at the start of the output
    /// (or of the text after a reasoning block), and after every `\n`. It
    /// is given the bytes after the line break; the line break itself stays
    /// text.
    Line {
        /// The matcher.
        matches: fn(&[u8]) -> Match,
    },
    /// A matcher applied right after one of the `first` bytes, which stays
    /// text (GLM-4's `sentence.NAME⏎{…}`, where the `.` ends the sentence).
    After {
        /// The bytes the trigger follows.
        first: &'static [u8],
        /// The matcher, given the bytes after that byte.
        matches: fn(&[u8]) -> Match,
    },
}

impl Pattern {
    pub(crate) fn first_bytes(&self) -> &'static [u8] {
        match self {
            Pattern::Lit(l) => &l[..1],
            Pattern::Custom { first, .. } => first,
            Pattern::Line { .. } => b"\n",
            Pattern::After { first, .. } => first,
        }
    }

    /// Matches at `at`; for [`Pattern::Line`], `at` starts with the line
    /// break and a full match counts it.
    pub(crate) fn matches(&self, at: &[u8]) -> Match {
        match self {
            Pattern::Lit(l) => match_lit(l, at),
            Pattern::Custom { matches, .. } => matches(at),
            Pattern::Line { matches } => match at.split_first() {
                Some((b'\n', rest)) => match matches(rest) {
                    Match::Full(n) => Match::Full(n + 1),
                    m => m,
                },
                _ => Match::No,
            },
            Pattern::After { matches, .. } => match at.split_first() {
                Some((_, rest)) => match matches(rest) {
                    Match::Full(n) => Match::Full(n + 1),
                    m => m,
                },
                None => Match::Partial,
            },
        }
    }
}

/// Matches a literal at the start of `at`.
#[inline]
pub(crate) fn match_lit(lit: &[u8], at: &[u8]) -> Match {
    let n = lit.len().min(at.len());
    // Candidates share their first byte with the literal: most differ at
    // the second, decided here without a call to `memcmp`.
    if n >= 2 && lit[1] != at[1] {
        return Match::No;
    }
    if lit[..n] != at[..n] {
        Match::No
    } else if n == lit.len() {
        Match::Full(n)
    } else {
        Match::Partial
    }
}

/// Most groups of three bytes a [`ByteFinder`] searches with `memchr3`;
/// beyond that it scans with a byte table.
const MAX_GROUPS: usize = 12;

/// Up to this many bytes are scanned with the byte table rather than with
/// `memchr` (whose set-up, once per group and again after every candidate,
/// costs more than the table on a short input: model replies of a few
/// hundred bytes have a candidate every few dozen bytes). Measured on the
/// corpus replies (in-process, 48 → 256): 190 → 205 MiB/s whole, 138 → 157
/// MiB/s in 64-byte chunks; a megabyte of prose unchanged. Raised to 4 KiB
/// (callgrind, the harness on the corpus fed whole): 9,374,307 → 8,937,422
/// instructions (the replies' first bytes no longer set up a `memchr3` per
/// group); a megabyte of prose 10,719,386 → 10,718,403, 8 KiB 75,149 →
/// 74,100.
const SHORT_SCAN: usize = 4096;

/// Sets of up to this many bytes are searched 16 bytes at a time by
/// comparing each byte with every one of the set (vectorised), not a byte at
/// a time through the table.
const SMALL_SET: usize = 8;

/// The searcher of a set of one to three bytes (padded with its first),
/// made once with the finder.
///
/// `memchr::memchr3` picks its vector code through a function pointer and
/// broadcasts the three bytes into vectors on every call: on a streamed
/// chunk (16 to 64 bytes: the common input here) that set-up was half of
/// the search (3.1 ns against 6.1 ns a 64-byte search, 1.6 against 4.9 a
/// 16-byte one; one core of the 2-core benchmark machine, best of 15).
/// Kept made, the search is one direct call. (Boxed: its vectors would
/// make the finder, and the parser's table that holds it, 32-byte aligned.)
#[derive(Clone, Copy, Debug)]
enum Few {
    /// AVX2 (with SSE2 for inputs under 32 bytes), when the CPU has it.
    #[cfg(target_arch = "x86_64")]
    Avx2(memchr::arch::x86_64::avx2::memchr::Three),
    /// SSE2 (always there on x86-64).
    #[cfg(target_arch = "x86_64")]
    Sse2(memchr::arch::x86_64::sse2::memchr::Three),
    /// Elsewhere, `memchr3` as it is.
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    Any([u8; 3]),
}

impl Few {
    fn new(set: [u8; 3]) -> Few {
        let [a, b, c] = set;
        #[cfg(target_arch = "x86_64")]
        {
            use memchr::arch::x86_64::{avx2, sse2};
            if let Some(t) = avx2::memchr::Three::new(a, b, c) {
                return Few::Avx2(t);
            }
            if let Some(t) = sse2::memchr::Three::new(a, b, c) {
                return Few::Sse2(t);
            }
        }
        Few::Any([a, b, c])
    }

    #[inline]
    fn find(&self, hay: &[u8]) -> Option<usize> {
        match self {
            #[cfg(target_arch = "x86_64")]
            Few::Avx2(t) => t.find(hay),
            #[cfg(target_arch = "x86_64")]
            Few::Sse2(t) => t.find(hay),
            Few::Any([a, b, c]) => memchr::memchr3(*a, *b, *c, hay),
        }
    }
}

/// Finds the next candidate position of any trigger in a buffer.
#[derive(Clone, Debug)]
pub(crate) struct ByteFinder {
    groups: Vec<Vec<u8>>,
    table: [bool; 256],
    /// A set of at most [`SMALL_SET`] bytes, padded with its first one
    /// (None: a larger or empty set).
    small: Option<[u8; SMALL_SET]>,
    /// A set of one to three bytes, its searcher made once (see [`Few`]).
    few: Option<Box<Few>>,
    /// `small` or `few` is set: [`ByteFinder::set_find`] searches inputs
    /// of 16 bytes or more.
    vector: bool,
}

impl ByteFinder {
    pub(crate) fn new(bytes: &[u8]) -> Self {
        let mut set: Vec<u8> = bytes.to_vec();
        set.sort_unstable();
        set.dedup();
        let mut table = [false; 256];
        for &b in &set {
            table[b as usize] = true;
        }
        let small = (!set.is_empty() && set.len() <= SMALL_SET).then(|| {
            let mut small = [set[0]; SMALL_SET];
            small[..set.len()].copy_from_slice(&set);
            small
        });
        ByteFinder {
            groups: set.chunks(3).map(<[u8]>::to_vec).collect(),
            table,
            vector: small.is_some(),
            small,
            few: (!set.is_empty() && set.len() <= 3).then(|| {
                let mut few = [set[0]; 3];
                few[..set.len()].copy_from_slice(&set);
                Box::new(Few::new(few))
            }),
        }
    }

    /// [`ByteFinder::find`] with the byte table alone (one pass): for a
    /// short input, searched once.
    ///
    /// In line: the byte loop, which is all a short input (a chunk of a few
    /// bytes, the prose before a call) or a large set (the default table:
    /// every dialect) needs; a longer input searched for a small set goes
    /// to [`ByteFinder::set_find`], out of line (in line, its `memchr`
    /// paths had kept this function out of line, some 45 instructions a
    /// search on the default table: callgrind, the 100 B matrix cells).
    #[inline]
    pub(crate) fn table_find(&self, hay: &[u8], from: usize) -> Option<usize> {
        let rest = hay.get(from..)?;
        // (Not on a short input: there the set-up costs more than the table.)
        if self.vector && rest.len() >= 16 {
            return self.set_find(rest).map(|p| p + from);
        }
        let t = &self.table;
        rest.iter().position(|&b| t[b as usize]).map(|p| p + from)
    }

    /// [`ByteFinder::table_find`] for a small set (`vector`) in `rest` of
    /// 16 bytes or more: the first position holding one of the set's
    /// bytes.
    ///
    /// A small set (the triggers of one or two dialects) skips 16 bytes at
    /// a time that hold none of its bytes: a branch-free compare of each
    /// with every byte of the set, which the compiler vectorises (the table
    /// costs some seven instructions a byte; callgrind, a megabyte of prose
    /// in 64-byte chunks, `hermes` only: the finder was 46 % of the work).
    #[inline(never)]
    fn set_find(&self, rest: &[u8]) -> Option<usize> {
        // Up to three bytes (one dialect's triggers, `<`, and the
        // reasoning markup's `[`): `memchr3`'s vectors (callgrind, 64
        // small Hermes calls in 64-byte chunks, `hermes` only: the
        // compare below cost some 250 instructions a chunk of text).
        if let Some(few) = &self.few {
            return few.find(rest);
        }
        let mut skip = 0;
        if let Some(set) = self.small.as_ref().filter(|_| rest.len() >= 32) {
            while let Some(Ok(block)) = rest.get(skip..skip + 16).map(<&[u8; 16]>::try_from) {
                let hit = block.iter().fold(false, |acc, &c| {
                    acc | set.iter().fold(false, |a, &s| a | (c == s))
                });
                if hit {
                    break;
                }
                skip += 16;
            }
        }
        let t = &self.table;
        rest[skip..]
            .iter()
            .position(|&b| t[b as usize])
            .map(|p| p + skip)
    }

    /// First position ≥ `from` of `hay` holding one of the finder's bytes.
    /// `state` caches each group's next hit: keep it for every search of
    /// the same buffer ([`ScanState::reset`] for a new one), so that each
    /// group scans each byte at most once however many searches there are.
    pub(crate) fn find(&self, state: &mut ScanState, hay: &[u8], from: usize) -> Option<usize> {
        if from >= hay.len() {
            return None;
        }
        let groups = &self.groups;
        if groups.len() > MAX_GROUPS || hay.len() - from <= SHORT_SCAN {
            // Many groups, or a few bytes left (a streamed chunk's tail):
            // one pass with the byte table costs less than a memchr per group.
            return self.table_find(hay, from);
        }
        state.used = true;
        let mut best: Option<usize> = None;
        for (g, bytes) in groups.iter().enumerate() {
            let cached_ok = state.valid_from[g] != usize::MAX
                && state.valid_from[g] <= from
                && state.next[g].is_none_or(|p| p >= from);
            if !cached_ok {
                let rest = &hay[from..];
                let hit = match bytes.len() {
                    1 => memchr::memchr(bytes[0], rest),
                    2 => memchr::memchr2(bytes[0], bytes[1], rest),
                    _ => memchr::memchr3(bytes[0], bytes[1], bytes[2], rest),
                };
                state.next[g] = hit.map(|p| p + from);
                state.valid_from[g] = from;
            }
            if let Some(p) = state.next[g] {
                best = Some(best.map_or(p, |b: usize| b.min(p)));
            }
        }
        best
    }
}

/// Candidate search state over one buffer: each group's next hit (or that
/// it has none) from some position on.
#[derive(Clone, Debug)]
pub(crate) struct ScanState {
    next: [Option<usize>; MAX_GROUPS],
    valid_from: [usize; MAX_GROUPS],
    /// Something is cached.
    used: bool,
}

impl Default for ScanState {
    fn default() -> Self {
        ScanState {
            next: [None; MAX_GROUPS],
            valid_from: [usize::MAX; MAX_GROUPS],
            used: false,
        }
    }
}

impl ScanState {
    /// Forgets the cached hits: the next search is of another buffer.
    pub(crate) fn reset(&mut self) {
        if self.used {
            *self = ScanState::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_in_order() {
        let f = ByteFinder::new(b"<{[`");
        let hay = b"ab<cd{ef[gh`ij";
        let mut st = ScanState::default();
        let mut found = Vec::new();
        let mut from = 0;
        while let Some(p) = f.find(&mut st, hay, from) {
            found.push(p);
            from = p + 1;
        }
        assert_eq!(found, vec![2, 5, 8, 11]);
    }

    #[test]
    fn small_sets_agree_with_a_plain_scan() {
        for bytes in [
            &b"<"[..],
            b"<[",
            b"<[\xe2",
            b"<{[`|\n\x01\xff",
            b"<{[`|\n\x01\xff\x02",
        ] {
            let f = ByteFinder::new(bytes);
            assert_eq!(f.small.is_some(), bytes.len() <= SMALL_SET);
            for len in [0usize, 1, 15, 16, 17, 31, 32, 33, 100] {
                for at in 0..=len {
                    let mut hay = vec![b'a'; len];
                    if at < len {
                        hay[at] = bytes[at % bytes.len()];
                    }
                    for from in 0..=len + 1 {
                        let naive = (from..len).find(|&i| bytes.contains(&hay[i]));
                        assert_eq!(
                            f.table_find(&hay, from),
                            naive,
                            "{bytes:?} {len} {at} {from}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_few_searcher_agrees_with_a_plain_scan() {
        // Each searcher of a set of up to three bytes ([`Few`]: the one
        // the CPU gets, and the others), on short inputs (a streamed
        // chunk) and long ones (past the vectors' unrolled loops), with the
        // hit at every place and none.
        let mut searchers = Vec::new();
        for set in [*b"<<<", *b"<[<", *b"<[\xe2"] {
            searchers.push((set, Few::Any(set)));
            #[cfg(target_arch = "x86_64")]
            {
                use memchr::arch::x86_64::{avx2, sse2};
                let [a, b, c] = set;
                searchers.push((set, Few::Sse2(sse2::memchr::Three::new(a, b, c).unwrap())));
                if let Some(t) = avx2::memchr::Three::new(a, b, c) {
                    searchers.push((set, Few::Avx2(t)));
                }
            }
            assert!(matches!(
                (Few::new(set), cfg!(target_arch = "x86_64")),
                (Few::Any(_), false) | (Few::Avx2(_) | Few::Sse2(_), true)
            ));
        }
        for (set, few) in &searchers {
            for len in [
                0usize, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 200, 5000,
            ] {
                let ats = (0..len).step_by(len / 40 + 1).chain([len]);
                for at in ats {
                    let mut hay = vec![b'a'; len];
                    if at < len {
                        hay[at] = set[at % 3];
                    }
                    let naive = hay.iter().position(|b| set.contains(b));
                    assert_eq!(few.find(&hay), naive, "{few:?} {len} {at}");
                }
            }
        }
    }

    #[test]
    fn cached_state_agrees_with_a_plain_scan() {
        // One state for many searches of one buffer, skipping ahead by
        // various steps (as the parser does between blocks).
        let bytes = b"<{[`|\xe2\xef\x01\x02\x03\x04\x05\x06";
        let f = ByteFinder::new(bytes);
        let mut hay = vec![b'a'; 5000];
        for (i, at) in [3usize, 300, 301, 900, 2500, 4999].into_iter().enumerate() {
            hay[at] = bytes[i % bytes.len()];
        }
        let naive = |from: usize| (from..hay.len()).find(|&i| bytes.contains(&hay[i]));
        for step in [1usize, 7, 250, 1000] {
            let mut st = ScanState::default();
            let mut from = 0;
            while from < hay.len() {
                assert_eq!(f.find(&mut st, &hay, from), naive(from), "from {from}");
                from += step;
            }
            st.reset();
            assert_eq!(f.find(&mut st, b"xx{", 0), Some(2));
        }
    }

    #[test]
    fn literal_matching() {
        assert_eq!(match_lit(b"<tool_call>", b"<tool_call>x"), Match::Full(11));
        assert_eq!(match_lit(b"<tool_call>", b"<tool_"), Match::Partial);
        assert_eq!(match_lit(b"<tool_call>", b"<tools>"), Match::No);
        assert_eq!(match_lit(b"<tool_call>", b"<think>"), Match::No);
        assert_eq!(match_lit(b"<tool_call>", b"<x"), Match::No);
        assert_eq!(match_lit(b"<tool_call>", b"<"), Match::Partial);
        assert_eq!(match_lit(b"<tool_call>", b""), Match::Partial);
        assert_eq!(match_lit(b"<t", b"<t"), Match::Full(2));
        assert_eq!(match_lit(b"<", b"<t"), Match::Full(1));
    }
}
