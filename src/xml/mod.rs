//! Streaming lexing of the XML-ish markup tool-call dialects use.
//!
//! The XML dialects (Qwen3-Coder, GLM, MiniMax, DeepSeek DSML, Step-3, …)
//! are not XML: values are raw text in which `<`, `&` and even the dialect's
//! own closing tags may appear, names may hold spaces (`<function=get
//! weather>`) and special-token names hold full-width bars (`<｜DSML｜invoke
//! name="f">`). This module has the small pieces their parsers share:
//!
//! * [`TagScanner`]: a resumable scanner of one tag, fed a window that starts
//!   at the `<`. When the window ends inside the tag it says so
//!   ([`TagScan::NeedMore`]) and remembers how far it got, so when it is fed
//!   the same window again, extended, it continues where it stopped: no byte
//!   is scanned twice.
//! * [`Tag`]: a borrowed view of a complete tag, with its name, its
//!   `=value` (`<parameter=city>`) and its attributes (`name="city"`).
//! * a prefix matcher telling whether a window can still become a given tag
//!   (used to hold back only the bytes that might be a closing tag).
//! * [`decode_entity`]: XML character and entity references (`&lt;`,
//!   `&#x41;`), for the opt-in [`crate::Config::decode_entities`].
//! * [`CDATA_OPEN`] / [`CDATA_CLOSE`]: the CDATA markers.
//!
//! Text between tags is found with `memchr` by the callers; tags are short
//! and bounded by [`crate::Limits::max_tag_bytes`].
//!
//! ```
//! use toolstream::xml::{Tag, TagScan, TagScanner};
//!
//! let mut scanner = TagScanner::new(256);
//! // The window ends inside the tag: feed it again once more bytes arrived.
//! assert_eq!(scanner.feed(b"<invoke na"), TagScan::NeedMore);
//! let window = b"<invoke name=\"get_weather\">\n<parameter";
//! let TagScan::Complete(len) = scanner.feed(window) else { panic!() };
//! let tag = Tag::new(&window[..len]);
//! assert_eq!(tag.name(), b"invoke");
//! assert_eq!(tag.attr(b"name"), Some(&b"get_weather"[..]));
//! ```

use crate::scan::Match;

/// Opening marker of a CDATA section.
pub const CDATA_OPEN: &[u8] = b"<![CDATA[";
/// Closing marker of a CDATA section.
pub const CDATA_CLOSE: &[u8] = b"]]>";

/// What [`TagScanner::feed`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagScan {
    /// The window holds a complete tag of this many bytes (`<` to `>` included).
    Complete(usize),
    /// The window ended inside what may still be a tag.
    NeedMore,
    /// The `<` does not start a tag (`a < b`, `<<`, an over-long run).
    NotTag,
}

/// Where the scanner is inside a tag.
///
/// | state   | on a name byte | on blank / `=` / `/` | on `"` `'` after `=` | on `>` | on `<` |
/// |---------|----------------|----------------------|----------------------|--------|--------|
/// | `Lt`    | → `Name`       | `/` → `Slash`, else not a tag | not a tag   | not a tag | not a tag |
/// | `Slash` | → `Name`       | not a tag            | not a tag            | not a tag | not a tag |
/// | `Name`  | stay           | → `Rest`             | → `Rest`             | complete | not a tag |
/// | `Rest`  | stay           | stay (`=` arms quotes) | → `Quoted`         | complete | not a tag |
/// | `Quoted`| stay           | stay                 | closing quote → `Rest` | stay | stay |
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ScanState {
    /// Only the `<` has been seen.
    Lt,
    /// `</`.
    Slash,
    /// Inside the tag name.
    Name,
    /// After the name; `eq` is true right after an `=` (blanks allowed), where a quote opens a value.
    Rest { eq: bool },
    /// Inside a quoted attribute value.
    Quoted(u8),
}

/// A resumable scanner of one tag.
///
/// Feed it a window that starts at the tag's `<`; when it answers
/// [`TagScan::NeedMore`], feed it the same window again once it has grown.
/// It resumes at the first byte it has not seen. [`TagScanner::reset`]
/// prepares it for the next tag.
#[derive(Clone, Debug)]
pub struct TagScanner {
    state: ScanState,
    scanned: usize,
    max: usize,
    /// `|` may start a name ([`TagScanner::bar_names`]).
    bars: bool,
}

impl TagScanner {
    /// A scanner that gives up (answers [`TagScan::NotTag`]) after `max` bytes.
    pub fn new(max: usize) -> Self {
        TagScanner {
            state: ScanState::Lt,
            scanned: 0,
            max: max.max(8),
            bars: false,
        }
    }

    /// Lets a tag name start with an ASCII `|` (`<|DSML|invoke name="f">`,
    /// DeepSeek's DSML tags written with ASCII bars instead of the
    /// template's full-width ones). Off by default: elsewhere `<|` begins
    /// a special token, not a tag.
    pub fn bar_names(mut self, yes: bool) -> Self {
        self.bars = yes;
        self
    }

    /// Forgets the tag scanned so far.
    pub fn reset(&mut self) {
        self.state = ScanState::Lt;
        self.scanned = 0;
    }

    /// How many bytes of the window have been scanned.
    pub fn scanned(&self) -> usize {
        self.scanned
    }

    /// Scans `window` (which starts at `<`) from where the last call stopped.
    pub fn feed(&mut self, window: &[u8]) -> TagScan {
        if self.scanned == 0 {
            if window.first() != Some(&b'<') {
                return if window.is_empty() {
                    TagScan::NeedMore
                } else {
                    TagScan::NotTag
                };
            }
            self.scanned = 1;
            self.state = ScanState::Lt;
        }
        let mut i = self.scanned;
        let end = window.len().min(self.max);
        while i < end {
            let b = window[i];
            match self.state {
                ScanState::Lt => {
                    if b == b'/' {
                        self.state = ScanState::Slash;
                    } else if is_name_start(b) || (self.bars && b == b'|') {
                        self.state = ScanState::Name;
                    } else {
                        return self.not_tag();
                    }
                }
                ScanState::Slash => {
                    if is_name_start(b) || (self.bars && b == b'|') {
                        self.state = ScanState::Name;
                    } else {
                        return self.not_tag();
                    }
                }
                ScanState::Name => match b {
                    b'>' => return self.complete(i + 1),
                    b'<' => return self.not_tag(),
                    b'=' => self.state = ScanState::Rest { eq: true },
                    b' ' | b'\t' | b'\n' | b'\r' | b'/' => {
                        self.state = ScanState::Rest { eq: false }
                    }
                    _ => {}
                },
                ScanState::Rest { eq } => match b {
                    b'>' => return self.complete(i + 1),
                    b'<' => return self.not_tag(),
                    b'=' => self.state = ScanState::Rest { eq: true },
                    b'"' | b'\'' if eq => self.state = ScanState::Quoted(b),
                    b' ' | b'\t' | b'\n' | b'\r' => {}
                    _ => self.state = ScanState::Rest { eq: false },
                },
                ScanState::Quoted(q) => {
                    // Jump to the closing quote.
                    match memchr::memchr(q, &window[i..end]) {
                        Some(p) => {
                            i += p;
                            self.state = ScanState::Rest { eq: false };
                        }
                        None => {
                            i = end;
                            continue;
                        }
                    }
                }
            }
            i += 1;
        }
        self.scanned = i;
        if i >= self.max {
            return self.not_tag();
        }
        TagScan::NeedMore
    }

    fn complete(&mut self, len: usize) -> TagScan {
        self.scanned = len;
        TagScan::Complete(len)
    }

    fn not_tag(&mut self) -> TagScan {
        self.reset();
        TagScan::NotTag
    }
}

/// Bytes a tag name can start with: ASCII letters, `_`, `:`, `!`, `?`, and
/// any non-ASCII byte (full-width `｜` of special tokens, CJK names).
#[inline]
pub fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || matches!(b, b'_' | b':' | b'!' | b'?') || b >= 0x80
}

#[inline]
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A complete tag, borrowed from the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag<'a> {
    raw: &'a [u8],
}

impl<'a> Tag<'a> {
    /// Wraps the bytes of a complete tag (from `<` to `>`, as
    /// [`TagScanner`] delimited it).
    pub fn new(raw: &'a [u8]) -> Self {
        Tag { raw }
    }

    /// The tag's bytes.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// True for a closing tag (`</…>`).
    pub fn is_close(&self) -> bool {
        self.raw.get(1) == Some(&b'/')
    }

    /// True for a self-closing tag (`<…/>`).
    pub fn is_self_closing(&self) -> bool {
        self.raw.ends_with(b"/>")
    }

    fn name_start(&self) -> usize {
        if self.is_close() {
            2
        } else {
            1
        }
    }

    fn name_end(&self) -> usize {
        let s = self.name_start();
        let body = &self.raw[s..self.raw.len().saturating_sub(1).max(s)];
        s + body
            .iter()
            .position(|&b| is_blank(b) || b == b'=' || b == b'/' || b == b'>')
            .unwrap_or(body.len())
    }

    /// The tag name (`parameter` in `<parameter=city>`, `｜DSML｜invoke`).
    pub fn name(&self) -> &'a [u8] {
        &self.raw[self.name_start()..self.name_end()]
    }

    /// The text after `=` that directly follows the name, up to `>`,
    /// trimmed and without one pair of surrounding quotes:
    /// `get weather` in `<function=get weather>`, `city` in `<parameter="city">`.
    pub fn eq_value(&self) -> Option<&'a [u8]> {
        let e = self.name_end();
        if self.raw.get(e) != Some(&b'=') {
            return None;
        }
        let mut end = self.raw.len() - 1;
        if self.raw[..end].ends_with(b"/") && self.raw.len() >= 2 {
            end -= 1;
        }
        let v = self.raw[e + 1..end.max(e + 1)].trim_ascii();
        Some(unquote(v))
    }

    /// The value of attribute `key` (`name="f"`, `name='f'` or `name=f`), raw.
    pub fn attr(&self, key: &[u8]) -> Option<&'a [u8]> {
        let body_end = self.raw.len().saturating_sub(1);
        let mut i = self.name_end();
        let raw = self.raw;
        while i < body_end {
            while i < body_end && (is_blank(raw[i]) || raw[i] == b'/') {
                i += 1;
            }
            let ks = i;
            while i < body_end && !is_blank(raw[i]) && raw[i] != b'=' && raw[i] != b'/' {
                i += 1;
            }
            let k = &raw[ks..i];
            while i < body_end && is_blank(raw[i]) {
                i += 1;
            }
            if i >= body_end || raw[i] != b'=' {
                if k.is_empty() {
                    i += 1;
                }
                continue;
            }
            i += 1;
            while i < body_end && is_blank(raw[i]) {
                i += 1;
            }
            let v = match raw.get(i) {
                Some(&q) if q == b'"' || q == b'\'' => {
                    let vs = i + 1;
                    let ve = memchr::memchr(q, &raw[vs..body_end]).map_or(body_end, |p| vs + p);
                    i = ve + 1;
                    &raw[vs..ve]
                }
                _ => {
                    let vs = i;
                    while i < body_end
                        && !is_blank(raw[i])
                        && !(raw[i] == b'/' && i + 1 == body_end)
                    {
                        i += 1;
                    }
                    &raw[vs..i]
                }
            };
            if k == key {
                return Some(v);
            }
        }
        None
    }
}

fn unquote(v: &[u8]) -> &[u8] {
    if v.len() >= 2 && (v[0] == b'"' || v[0] == b'\'') && v[v.len() - 1] == v[0] {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

/// Whether `window` (starting at `<`) is, or may still become, the start of
/// the tag `<name` (`</name` when `close`) followed by a byte that ends a
/// tag name (`>`, a blank, `=` or `/`). [`Match::Full`] carries the length
/// of `<name` / `</name`.
pub(crate) fn match_tag_start(window: &[u8], close: bool, name: &[u8]) -> Match {
    let mut want: [&[u8]; 3] = [b"<", b"", name];
    if close {
        want[1] = b"/";
    }
    let mut i = 0;
    for part in want {
        for &b in part {
            match window.get(i) {
                None => return Match::Partial,
                Some(&c) if c == b => i += 1,
                Some(_) => return Match::No,
            }
        }
    }
    match window.get(i) {
        None => Match::Partial,
        Some(&c) if is_blank(c) || c == b'>' || c == b'=' || c == b'/' => Match::Full(i),
        Some(_) => Match::No,
    }
}

/// Decodes one XML reference at the start of `s` (which starts with `&`):
/// the five predefined entities and decimal or hexadecimal character
/// references. Returns the decoded character and the reference's length;
/// `Err(true)` when `s` ends before the reference could be complete,
/// `Err(false)` when it is not a reference (the `&` is literal).
///
/// ```
/// use toolstream::xml::decode_entity;
/// assert_eq!(decode_entity(b"&lt;/p&gt;"), Ok(('<', 4)));
/// assert_eq!(decode_entity(b"&#x1F600; ok"), Ok(('😀', 9)));
/// assert_eq!(decode_entity(b"&am"), Err(true));
/// assert_eq!(decode_entity(b"& b"), Err(false));
/// ```
pub fn decode_entity(s: &[u8]) -> Result<(char, usize), bool> {
    const MAX: usize = 12;
    let end = match memchr::memchr(b';', &s[..s.len().min(MAX)]) {
        Some(p) => p,
        None => {
            // Could it still become a reference?
            let body = &s[1..s.len().min(MAX)];
            let plausible = body.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'#');
            return Err(s.len() < MAX && plausible);
        }
    };
    let body = &s[1..end];
    let c = match body {
        b"lt" => '<',
        b"gt" => '>',
        b"amp" => '&',
        b"quot" => '"',
        b"apos" => '\'',
        [b'#', b'x' | b'X', hex @ ..] if !hex.is_empty() => {
            let v = std::str::from_utf8(hex)
                .ok()
                .and_then(|h| u32::from_str_radix(h, 16).ok());
            match v.and_then(char::from_u32) {
                Some(c) => c,
                None => return Err(false),
            }
        }
        [b'#', dec @ ..] if !dec.is_empty() && dec.iter().all(u8::is_ascii_digit) => {
            let v = std::str::from_utf8(dec)
                .ok()
                .and_then(|d| d.parse::<u32>().ok());
            match v.and_then(char::from_u32) {
                Some(c) => c,
                None => return Err(false),
            }
        }
        _ => return Err(false),
    };
    Ok((c, end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_all(s: &[u8]) -> TagScan {
        TagScanner::new(1024).feed(s)
    }

    #[test]
    fn scans_tags() {
        assert_eq!(scan_all(b"<tool_call>x"), TagScan::Complete(11));
        assert_eq!(scan_all(b"</parameter>\n"), TagScan::Complete(12));
        assert_eq!(scan_all(b"<function=get weather>"), TagScan::Complete(22));
        assert_eq!(scan_all(b"<invoke name=\"a>b\">"), TagScan::Complete(19));
        assert_eq!(
            scan_all("<｜DSML｜invoke name=\"f\">".as_bytes()),
            TagScan::Complete(27)
        );
        assert_eq!(scan_all(b"< b"), TagScan::NotTag);
        assert_eq!(scan_all(b"<1>"), TagScan::NotTag);
        assert_eq!(scan_all(b"<a <b>"), TagScan::NotTag);
        assert_eq!(scan_all(b"<a"), TagScan::NeedMore);
        assert_eq!(scan_all(b"<"), TagScan::NeedMore);
        assert_eq!(TagScanner::new(8).feed(b"<abcdefghijkl>"), TagScan::NotTag);
        // A quote that does not follow `=` is an ordinary byte.
        assert_eq!(scan_all(b"<function=it's>"), TagScan::Complete(15));
    }

    #[test]
    fn resumes_without_rescanning() {
        let full = b"<parameter name=\"x y\" string=\"true\">v";
        let mut s = TagScanner::new(1024);
        for n in 1..full.len() {
            match s.feed(&full[..n]) {
                TagScan::NeedMore => assert!(s.scanned() <= n),
                TagScan::Complete(len) => {
                    assert_eq!(len, full.len() - 1);
                    let t = Tag::new(&full[..len]);
                    assert_eq!(t.attr(b"name"), Some(&b"x y"[..]));
                    assert_eq!(t.attr(b"string"), Some(&b"true"[..]));
                    return;
                }
                TagScan::NotTag => panic!("not a tag at {n}"),
            }
        }
        panic!("never complete");
    }

    #[test]
    fn tag_views() {
        let t = Tag::new(b"<function=get_weather>");
        assert_eq!(t.name(), b"function");
        assert_eq!(t.eq_value(), Some(&b"get_weather"[..]));
        assert!(!t.is_close());
        let t = Tag::new(b"<parameter=\"unit with spaces\">");
        assert_eq!(t.eq_value(), Some(&b"unit with spaces"[..]));
        let t = Tag::new(b"</parameter>");
        assert!(t.is_close());
        assert_eq!(t.name(), b"parameter");
        assert_eq!(t.eq_value(), None);
        let t = Tag::new(b"<arguments/>");
        assert!(t.is_self_closing());
        assert_eq!(t.name(), b"arguments");
        let t = Tag::new(b"<invoke name=get_time/>");
        assert_eq!(t.attr(b"name"), Some(&b"get_time"[..]));
        let t = Tag::new(b"<x a='1' b = \"2\" c>");
        assert_eq!(t.attr(b"b"), Some(&b"2"[..]));
        assert_eq!(t.attr(b"a"), Some(&b"1"[..]));
        assert_eq!(t.attr(b"c"), None);
    }

    #[test]
    fn tag_start_matching() {
        assert_eq!(
            match_tag_start(b"</parameter>", true, b"parameter"),
            Match::Full(11)
        );
        assert_eq!(
            match_tag_start(b"</param", true, b"parameter"),
            Match::Partial
        );
        assert_eq!(
            match_tag_start(b"<parameter=x>", false, b"parameter"),
            Match::Full(10)
        );
        assert_eq!(
            match_tag_start(b"<parameters>", false, b"parameter"),
            Match::No
        );
        assert_eq!(match_tag_start(b"<b>", true, b"parameter"), Match::No);
    }

    #[test]
    fn entities() {
        assert_eq!(decode_entity(b"&amp;&lt;"), Ok(('&', 5)));
        assert_eq!(decode_entity(b"&#65;"), Ok(('A', 5)));
        assert_eq!(decode_entity(b"&nbsp;"), Err(false));
        assert_eq!(decode_entity(b"&#xD800;"), Err(false));
        assert_eq!(decode_entity(b"&"), Err(true));
        assert_eq!(decode_entity(b"&&"), Err(false));
    }
}
