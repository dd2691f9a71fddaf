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

/// True for a placeholder name copied from a prompt's format example.
pub(crate) fn is_placeholder(name: &str) -> bool {
    let inner = name
        .trim()
        .trim_start_matches(['<', '{', '['])
        .trim_end_matches(['>', '}', ']']);
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

/// Resolves `name` against the offered `names`.
pub(crate) fn resolve(names: &[String], name: &str, opts: &Options) -> Resolution {
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
        let hit = unique(names, |n| bare_offered(n) == Some(name)).or_else(|| {
            opts.name_case
                .then(|| {
                    unique(names, |n| {
                        bare_offered(n).is_some_and(|b| folds_to(b, &folded))
                    })
                })
                .flatten()
        });
        if let Some(i) = hit {
            return Resolution::Tool(i, fix(FixKind::NameNamespace, i));
        }
    }
    if is_placeholder(name) {
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
            for (i, n) in names.iter().enumerate() {
                let Some(d) = distance(&folded, &fold(n), max) else {
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

/// The offered names closest to `name`, closest first, at most `n`.
pub(crate) fn closest(names: &[String], name: &str, n: usize) -> Vec<String> {
    let folded = fold(name);
    let mut scored: Vec<(usize, &String)> = names
        .iter()
        .map(|o| {
            let d = distance(&folded, &fold(o), usize::MAX).unwrap_or(usize::MAX);
            (d, o)
        })
        .collect();
    scored.sort_by_key(|(d, _)| *d);
    let mut out: Vec<String> = Vec::new();
    for (_, o) in scored {
        if out.len() >= n {
            break;
        }
        if !out.contains(o) {
            out.push(o.clone());
        }
    }
    out
}

/// Longest name compared by edit distance (longer ones compare only exactly).
const MAX_FUZZY_CHARS: usize = 128;

/// Optimal-string-alignment distance (an adjacent transposition is one
/// edit) between `a` and `b`, if it is at most `max`.
pub(crate) fn distance(a: &str, b: &str, max: usize) -> Option<usize> {
    if a.is_ascii() && b.is_ascii() {
        return osa(a.as_bytes(), b.as_bytes(), max);
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    osa(&a, &b, max)
}

fn osa<T: PartialEq>(a: &[T], b: &[T], max: usize) -> Option<usize> {
    if a.len() > MAX_FUZZY_CHARS || b.len() > MAX_FUZZY_CHARS {
        return (a == b).then_some(0);
    }
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let w = b.len() + 1;
    let mut prev2 = vec![0usize; w];
    let mut prev: Vec<usize> = (0..w).collect();
    let mut cur = vec![0usize; w];
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

    fn resolved(list: &[&str], name: &str) -> Option<(String, Option<FixKind>)> {
        let names = names(list);
        match resolve(&names, name, &Options::default()) {
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
                resolve(&n, p, &Options::default()),
                Resolution::Placeholder,
                "{p}"
            );
        }
        let off = Options {
            placeholder_names: false,
            ..Options::default()
        };
        assert_eq!(resolve(&n, "tool_name", &off), Resolution::Unknown);
    }

    #[test]
    fn switches_turn_steps_off() {
        let n = names(OFFERED);
        let strict = Options::strict();
        for name in ["Get_Weather", "functions.get_weather", "get_wether"] {
            assert_eq!(resolve(&n, name, &strict), Resolution::Unknown, "{name}");
        }
    }

    #[test]
    fn closest_lists_nearest_first() {
        assert_eq!(
            closest(&names(OFFERED), "get_wheather", 2)[0],
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
