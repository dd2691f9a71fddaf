//! Tool-name resolution: the name a model wrote → the offered tool it meant.
//!
//! In order: exact; case- and separator-insensitive (`Get_Weather`,
//! `get-weather`, `getWeather`); namespace prefixes (`functions.`,
//! `default_api.`, `tools.`, `mcp__server__`, and an offered prefixed name
//! called by its bare form); a small edit distance with a unique best
//! candidate. A placeholder copied from a format example (`tool_name`,
//! `<function-name>`, …) is recognised here and resolved by the caller from
//! the arguments. Two candidates that tie resolve to neither.

use super::error::{Fix, FixKind};
use super::options::Options;

/// The outcome of resolving one name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// The offered tool at this position, with the repair when the name was not exact.
    Tool(usize, Option<Fix>),
    /// A placeholder name: the tool must be found from the arguments.
    Placeholder,
    /// No offered tool.
    Unknown,
}

/// Names resolved before, each with its resolution and (once asked) its
/// closest offered names: at most `size`, the oldest replaced first. Shared
/// by the calls of a [`super::Catalog`] (behind a lock held only to look up
/// or insert).
#[derive(Debug, Default)]
pub(crate) struct Memo {
    list: std::sync::Mutex<MemoList>,
}

#[derive(Debug, Default)]
struct MemoList {
    entries: Vec<MemoEntry>,
    /// The entry replaced next once the list is full.
    next: usize,
}

#[derive(Debug)]
struct MemoEntry {
    name: Box<str>,
    resolution: Option<Resolution>,
    closest: Option<Vec<String>>,
}

impl Memo {
    /// The remembered resolution of `name`, or `compute`'s (remembered).
    pub(crate) fn resolution(
        &self,
        size: usize,
        name: &str,
        compute: impl FnOnce() -> Resolution,
    ) -> Resolution {
        if let Some(r) = self.with(name, |e| e.resolution.clone()) {
            return r;
        }
        let r = compute();
        self.put(size, name, |e| e.resolution = Some(r.clone()));
        r
    }

    /// The remembered closest names of `name`, or `compute`'s (remembered).
    pub(crate) fn closest(
        &self,
        size: usize,
        name: &str,
        compute: impl FnOnce() -> Vec<String>,
    ) -> Vec<String> {
        if let Some(c) = self.with(name, |e| e.closest.clone()) {
            return c;
        }
        let c = compute();
        self.put(size, name, |e| e.closest = Some(c.clone()));
        c
    }

    fn with<T>(&self, name: &str, f: impl Fn(&MemoEntry) -> Option<T>) -> Option<T> {
        let list = self.list.lock().ok()?;
        list.entries.iter().find(|e| &*e.name == name).and_then(f)
    }

    fn put(&self, size: usize, name: &str, f: impl FnOnce(&mut MemoEntry)) {
        if size == 0 {
            return;
        }
        let Ok(mut list) = self.list.lock() else {
            return;
        };
        let list = &mut *list;
        if let Some(e) = list.entries.iter_mut().find(|e| &*e.name == name) {
            return f(e);
        }
        let mut e = MemoEntry {
            name: name.into(),
            resolution: None,
            closest: None,
        };
        f(&mut e);
        if list.entries.len() < size {
            list.entries.push(e);
        } else {
            let at = list.next % list.entries.len();
            list.entries[at] = e;
            list.next = at + 1;
        }
    }
}

/// Namespace prefixes models put before a tool name.
const PREFIXES: &[&str] = &[
    "functions.",
    "function.",
    "default_api.",
    "tools.",
    "tool.",
    "api.",
    "functions:",
    "functions/",
];

/// Names copied from format examples, compared in [`fold`]ed form.
const PLACEHOLDERS: &[&str] = &[
    "toolname",
    "functionname",
    "funcname",
    "name",
    "tool",
    "function",
    "func",
    "yourtoolname",
    "yourfunctionname",
    "nameofthetool",
    "nameofthefunction",
    "toolcall",
    "functioncall",
    "fnname",
    "methodname",
    "action",
    "actionname",
];

/// Lower-cases and drops separators: `Get_Weather`, `get-weather`,
/// `getWeather` and `get.weather` all become `getweather`.
pub(crate) fn fold(s: &str) -> String {
    if s.is_ascii() {
        let mut out = String::with_capacity(s.len());
        for b in s.bytes() {
            if !matches!(b, b'_' | b'-' | b'.' | b' ' | b':' | b'/') {
                out.push(char::from(b.to_ascii_lowercase()));
            }
        }
        return out;
    }
    s.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' ' | ':' | '/'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// `fold(s) == folded`, without building `fold(s)` when `s` is ASCII.
pub(crate) fn folds_to(s: &str, folded: &str) -> bool {
    if !s.is_ascii() {
        return fold(s) == folded;
    }
    let mut want = folded.bytes();
    for b in s.bytes() {
        if matches!(b, b'_' | b'-' | b'.' | b' ' | b':' | b'/') {
            continue;
        }
        if want.next() != Some(b.to_ascii_lowercase()) {
            return false;
        }
    }
    want.next().is_none()
}

/// True for a placeholder name copied from a prompt's format example
/// (`folded`: `fold(name)`, used when nothing is trimmed around it).
fn is_placeholder_folded(name: &str, folded: &str) -> bool {
    let inner = name
        .trim()
        .trim_start_matches(['<', '{', '['])
        .trim_end_matches(['>', '}', ']']);
    if inner.len() == name.len() {
        return PLACEHOLDERS.contains(&folded);
    }
    PLACEHOLDERS.contains(&fold(inner).as_str())
}

/// `name` without a namespace prefix or a `:N` call-index suffix, if it had one.
fn strip_namespace(name: &str) -> Option<&str> {
    let mut s = name;
    if let Some((head, tail)) = s.rsplit_once(':') {
        if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) {
            s = head;
        }
    }
    for p in PREFIXES {
        if let Some(rest) = s.strip_prefix(p) {
            s = rest;
            break;
        }
    }
    if let Some(rest) = s.strip_prefix("mcp__") {
        s = rest.split_once("__").map_or(rest, |(_, r)| r);
    }
    (s.len() != name.len() && !s.is_empty()).then_some(s)
}

/// The bare form of an offered name that carries a namespace prefix
/// (`mcp__fs__read_file` → `read_file`).
fn bare_offered(name: &str) -> Option<&str> {
    strip_namespace(name)
}

/// The only distinct name in `names` (by position) that `pred` accepts.
fn unique(names: &[String], pred: impl Fn(&str) -> bool) -> Option<usize> {
    let mut found: Option<usize> = None;
    for (i, n) in names.iter().enumerate() {
        if pred(n) {
            match found {
                Some(j) if names[j] != *n => return None,
                Some(_) => {}
                None => found = Some(i),
            }
        }
    }
    found
}

/// Resolves `name` against the offered `names` (`folded`: each of them
/// [`fold`]ed, in the same order, computed once per catalog).
#[cfg(test)]
pub(crate) fn resolve(
    names: &[String],
    folded_names: &[String],
    name: &str,
    opts: &Options,
) -> Resolution {
    resolve_in(names, folded_names, any_namespaced(names), name, opts)
}

/// True when an offered name carries a namespace prefix (`mcp__fs__read_file`):
/// only then can a bare name written by the model resolve to one.
pub(crate) fn any_namespaced(names: &[String]) -> bool {
    names.iter().any(|n| bare_offered(n).is_some())
}

/// [`resolve`], told whether [`any_namespaced`] holds for `names`
/// (computed once per catalog).
pub(crate) fn resolve_in(
    names: &[String],
    folded_names: &[String],
    namespaced: bool,
    name: &str,
    opts: &Options,
) -> Resolution {
    let fix = |kind, i: usize| {
        Some(Fix {
            kind,
            path: String::new(),
            from: Some(name.to_owned()),
            to: Some(names[i].clone()),
        })
    };
    if let Some(i) = names.iter().position(|n| n == name) {
        return Resolution::Tool(i, None);
    }
    let folded = fold(name);
    if opts.name_case && !folded.is_empty() {
        if let Some(i) = unique(names, |n| folds_to(n, &folded)) {
            return Resolution::Tool(i, fix(FixKind::NameCase, i));
        }
    }
    if opts.name_namespaces {
        if let Some(bare) = strip_namespace(name) {
            let fb = fold(bare);
            let hit = unique(names, |n| n == bare).or_else(|| {
                opts.name_case
                    .then(|| unique(names, |n| folds_to(n, &fb)))
                    .flatten()
            });
            if let Some(i) = hit {
                return Resolution::Tool(i, fix(FixKind::NameNamespace, i));
            }
        }
        let hit = namespaced
            .then(|| {
                unique(names, |n| bare_offered(n) == Some(name)).or_else(|| {
                    opts.name_case
                        .then(|| {
                            unique(names, |n| {
                                bare_offered(n).is_some_and(|b| folds_to(b, &folded))
                            })
                        })
                        .flatten()
                })
            })
            .flatten();
        if let Some(i) = hit {
            return Resolution::Tool(i, fix(FixKind::NameNamespace, i));
        }
    }
    if is_placeholder_folded(name, &folded) {
        return if opts.placeholder_names {
            Resolution::Placeholder
        } else {
            Resolution::Unknown
        };
    }
    if opts.fuzzy_names {
        let max = opts
            .limits
            .max_name_distance
            .min(folded.chars().count() / 3);
        if max > 0 {
            let mut best: Option<(usize, usize)> = None;
            let mut tie = false;
            let mut rows = Vec::new();
            for (i, (n, fnm)) in names.iter().zip(folded_names).enumerate() {
                let Some(d) = distance_in(&folded, fnm, max, &mut rows) else {
                    continue;
                };
                match best {
                    Some((bd, j)) if d == bd && names[j] != *n => tie = true,
                    Some((bd, _)) if d < bd => {
                        best = Some((d, i));
                        tie = false;
                    }
                    None => best = Some((d, i)),
                    _ => {}
                }
            }
            if let (Some((_, i)), false) = (best, tie) {
                return Resolution::Tool(i, fix(FixKind::NameEdit, i));
            }
        }
    }
    Resolution::Unknown
}

/// The offered names closest to `name`, closest first (ties in offered
/// order), at most `n` (`folded_names`: the offered names [`fold`]ed).
pub(crate) fn closest(
    names: &[String],
    folded_names: &[String],
    name: &str,
    n: usize,
) -> Vec<String> {
    let folded = fold(name);
    let mut rows = Vec::new();
    // The `n` best distinct names so far, as (distance, position), sorted;
    // a candidate enters only if strictly closer than the worst kept (an
    // equal one comes later in offered order), so that bound is passed to
    // the distance, which gives up as soon as it is exceeded.
    let mut best: Vec<(usize, usize)> = Vec::with_capacity(n.min(names.len()) + 1);
    if n == 0 {
        return Vec::new();
    }
    for (i, (o, fo)) in names.iter().zip(folded_names).enumerate() {
        if best.iter().any(|&(_, j)| names[j] == *o) {
            continue;
        }
        let bound = if best.len() >= n {
            match best[best.len() - 1].0.checked_sub(1) {
                Some(b) => b,
                None => continue,
            }
        } else {
            usize::MAX
        };
        let Some(d) = distance_in(&folded, fo, bound, &mut rows) else {
            if bound == usize::MAX {
                // Too long to compare: ranked last, as before.
                best.push((usize::MAX, i));
                best.truncate(n);
            }
            continue;
        };
        let at = best.partition_point(|&(bd, _)| bd <= d);
        best.insert(at, (d, i));
        best.truncate(n);
    }
    best.into_iter().map(|(_, i)| names[i].clone()).collect()
}

/// Longest name compared by edit distance (longer ones compare only exactly).
const MAX_FUZZY_CHARS: usize = 128;

/// Optimal-string-alignment distance (an adjacent transposition is one
/// edit) between `a` and `b`, if it is at most `max`.
pub(crate) fn distance(a: &str, b: &str, max: usize) -> Option<usize> {
    distance_in(a, b, max, &mut Vec::new())
}

/// [`distance`], with `rows` as scratch space (reused across calls).
pub(crate) fn distance_in(a: &str, b: &str, max: usize, rows: &mut Vec<usize>) -> Option<usize> {
    if a.is_ascii() && b.is_ascii() {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len().abs_diff(b.len()) > max {
            return None;
        }
        let (p, t) = if a.len() <= b.len() { (a, b) } else { (b, a) };
        if p.len() <= 64 && t.len() <= MAX_FUZZY_CHARS {
            let d = osa_bits(p, t);
            return (d <= max).then_some(d);
        }
        return osa(a, b, max, rows);
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    osa(&a, &b, max, rows)
}

/// The optimal-string-alignment distance of ASCII `p` (at most 64 bytes)
/// and `t`, bit-parallel (Hyyrö 2003: Myers' algorithm with the
/// transposition term): one pass over `t`, a few word operations a byte.
fn osa_bits(p: &[u8], t: &[u8]) -> usize {
    let m = p.len();
    if m == 0 {
        return t.len();
    }
    let mut peq = [0u64; 128];
    for (i, &c) in p.iter().enumerate() {
        peq[usize::from(c & 0x7f)] |= 1 << i;
    }
    let last = 1u64 << (m - 1);
    let mask = if m == 64 { u64::MAX } else { (1u64 << m) - 1 };
    let (mut vp, mut vn, mut d0, mut pm_prev) = (mask, 0u64, 0u64, 0u64);
    let mut score = m;
    for &c in t {
        let pm = peq[usize::from(c & 0x7f)];
        let tr = (((!d0) & pm) << 1) & pm_prev;
        d0 = ((((pm & vp).wrapping_add(vp)) ^ vp) | pm | vn | tr) & mask;
        let hp = (vn | !(d0 | vp)) & mask;
        let hn = d0 & vp;
        if hp & last != 0 {
            score += 1;
        } else if hn & last != 0 {
            score -= 1;
        }
        let x = (hp << 1) | 1;
        vn = x & d0;
        vp = ((hn << 1) | !(x | d0)) & mask;
        pm_prev = pm;
    }
    score
}

fn osa<T: PartialEq>(a: &[T], b: &[T], max: usize, rows: &mut Vec<usize>) -> Option<usize> {
    if a.len() > MAX_FUZZY_CHARS || b.len() > MAX_FUZZY_CHARS {
        return (a == b).then_some(0);
    }
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let w = b.len() + 1;
    rows.clear();
    rows.resize(3 * w, 0);
    let (prev2, rest) = rows.split_at_mut(w);
    let (prev, cur) = rest.split_at_mut(w);
    let (mut prev2, mut prev, mut cur) = (prev2, prev, cur);
    for (j, p) in prev.iter_mut().enumerate() {
        *p = j;
    }
    // Minimum of the row before `prev`: once it and `prev`'s both exceed
    // `max`, every later cell does (each comes from one of them, plus 0 or 1).
    let mut prev_min = usize::MAX;
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(prev2[j - 2] + 1);
            }
            cur[j] = v;
        }
        let cur_min = cur.iter().copied().min().unwrap_or(0);
        if cur_min > max && prev_min > max {
            return None;
        }
        prev_min = cur_min;
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[b.len()];
    (d <= max).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_memo_remembers_at_most_its_size() {
        let memo = Memo::default();
        let calls = std::cell::Cell::new(0);
        let unknown = || {
            calls.set(calls.get() + 1);
            Resolution::Unknown
        };
        for name in ["a", "b", "a", "b"] {
            assert_eq!(memo.resolution(2, name, unknown), Resolution::Unknown);
        }
        assert_eq!(calls.get(), 2);
        // Full: `c` replaces the oldest (`a`), which is computed again.
        memo.resolution(2, "c", unknown);
        memo.resolution(2, "b", unknown);
        assert_eq!(calls.get(), 3);
        memo.resolution(2, "a", unknown);
        assert_eq!(calls.get(), 4);
        // Size 0: nothing is remembered.
        let none = Memo::default();
        none.closest(0, "x", Vec::new);
        assert!(none.list.lock().unwrap().entries.is_empty());
        assert_eq!(memo.closest(2, "a", || vec!["z".into()]), ["z"]);
        assert_eq!(memo.closest(2, "a", Vec::new), ["z"]);
    }

    #[test]
    fn bit_parallel_distance_matches_the_table() {
        // Deterministic pseudo-random ASCII strings over a small alphabet
        // (so transpositions and repeats are common), lengths 0..=70.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut rows = Vec::new();
        for _ in 0..20_000 {
            let la = (next() % 71) as usize;
            let lb = (next() % 71) as usize;
            let alpha = 2 + (next() % 5) as u8;
            let a: Vec<u8> = (0..la)
                .map(|_| b'a' + (next() % u64::from(alpha)) as u8)
                .collect();
            let b: Vec<u8> = (0..lb)
                .map(|_| b'a' + (next() % u64::from(alpha)) as u8)
                .collect();
            let table = osa(&a, &b, usize::MAX, &mut rows).unwrap();
            let (p, t) = if a.len() <= b.len() {
                (&a, &b)
            } else {
                (&b, &a)
            };
            if p.len() <= 64 {
                assert_eq!(osa_bits(p, t), table, "{a:?} {b:?}");
            }
            for max in [0, 1, 2, 5] {
                let (sa, sb) = (
                    std::str::from_utf8(&a).unwrap(),
                    std::str::from_utf8(&b).unwrap(),
                );
                assert_eq!(distance(sa, sb, max), (table <= max).then_some(table));
            }
        }
        assert_eq!(distance("ab", "ba", 5), Some(1));
        assert_eq!(distance("ca", "abc", 5), Some(3));
    }

    fn folds(list: &[String]) -> Vec<String> {
        list.iter().map(|n| fold(n)).collect()
    }

    fn resolved(list: &[&str], name: &str) -> Option<(String, Option<FixKind>)> {
        let names = names(list);
        match resolve(&names, &folds(&names), name, &Options::default()) {
            Resolution::Tool(i, fix) => Some((names[i].clone(), fix.map(|f| f.kind))),
            _ => None,
        }
    }

    const OFFERED: &[&str] = &["get_weather", "read_file", "mcp__fs__write_file", "Bash"];

    #[test]
    fn exact_names_need_no_repair() {
        assert_eq!(
            resolved(OFFERED, "get_weather"),
            Some(("get_weather".into(), None))
        );
    }

    #[test]
    fn case_and_separators() {
        for n in [
            "Get_Weather",
            "get-weather",
            "getWeather",
            "GET_WEATHER",
            "bash",
        ] {
            let (got, kind) = resolved(OFFERED, n).expect(n);
            assert!(got == "get_weather" || got == "Bash", "{n} -> {got}");
            assert_eq!(kind, Some(FixKind::NameCase));
        }
    }

    #[test]
    fn namespaces_both_ways() {
        for (n, want) in [
            ("functions.get_weather", "get_weather"),
            ("default_api.read_file", "read_file"),
            ("tools.getWeather", "get_weather"),
            ("functions.read_file:0", "read_file"),
            ("mcp__other__read_file", "read_file"),
            ("write_file", "mcp__fs__write_file"),
        ] {
            assert_eq!(
                resolved(OFFERED, n),
                Some((want.into(), Some(FixKind::NameNamespace))),
                "{n}"
            );
        }
    }

    #[test]
    fn typos_resolve_only_to_a_unique_best() {
        assert_eq!(
            resolved(OFFERED, "get_wether"),
            Some(("get_weather".into(), Some(FixKind::NameEdit)))
        );
        assert_eq!(
            resolved(OFFERED, "raed_file"),
            Some(("read_file".into(), Some(FixKind::NameEdit)))
        );
        // Two candidates at the same distance: no guess.
        assert_eq!(resolved(&["get_cat", "get_car"], "get_cap"), None);
        // Too far, or too short to guess.
        assert_eq!(resolved(OFFERED, "delete_everything"), None);
        assert_eq!(resolved(&["ls", "cd"], "rm"), None);
    }

    #[test]
    fn placeholders_are_left_to_the_arguments() {
        let n = names(OFFERED);
        for p in [
            "tool_name",
            "ToolName",
            "func_name",
            "<function-name>",
            "name",
            "function_name",
        ] {
            assert_eq!(
                resolve(&n, &folds(&n), p, &Options::default()),
                Resolution::Placeholder,
                "{p}"
            );
        }
        let off = Options {
            placeholder_names: false,
            ..Options::default()
        };
        assert_eq!(
            resolve(&n, &folds(&n), "tool_name", &off),
            Resolution::Unknown
        );
    }

    #[test]
    fn switches_turn_steps_off() {
        let n = names(OFFERED);
        let strict = Options::strict();
        for name in ["Get_Weather", "functions.get_weather", "get_wether"] {
            assert_eq!(
                resolve(&n, &folds(&n), name, &strict),
                Resolution::Unknown,
                "{name}"
            );
        }
    }

    #[test]
    fn closest_lists_nearest_first() {
        assert_eq!(
            closest(&names(OFFERED), &folds(&names(OFFERED)), "get_wheather", 2)[0],
            "get_weather"
        );
    }

    #[test]
    fn folds_to_agrees_with_fold() {
        for (a, b) in [
            ("Get_Weather", "get-weather"),
            ("getWeather", "GET.WEATHER"),
            ("get_weathe", "getweather"),
            ("Ünïcode_X", "ünïcodex"),
            ("", "_"),
            ("a", ""),
        ] {
            assert_eq!(folds_to(a, &fold(b)), fold(a) == fold(b), "{a} {b}");
        }
    }

    #[test]
    fn distance_counts_transpositions_once() {
        assert_eq!(distance("abcd", "abdc", 3), Some(1));
        assert_eq!(distance("kitten", "sitting", 3), Some(3));
        assert_eq!(distance("kitten", "sitting", 2), None);
    }
}
