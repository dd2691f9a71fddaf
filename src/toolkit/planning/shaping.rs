//! Result shaping (RFC-136 §11): a tool result capped to a token budget,
//! cut at a line boundary, with a marker saying how much was cut and a
//! hint; lists capped with "showing N of M".
//!
//! ```
//! use toolstream::toolkit::planning::shaping::{cap_result, ShapeOptions};
//! let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
//! let r = cap_result(&text, &ShapeOptions { budget_tokens: 100, ..ShapeOptions::default() });
//! assert!(r.truncated && r.text.contains("lines cut"));
//! assert!(r.text.starts_with("line 0\n"));
//! ```

use serde::Serialize;

use super::super::estimate_tokens;

/// Limits for results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ShapeOptions {
    /// The most tokens of a result (RFC-136: 25,000).
    pub budget_tokens: usize,
    /// Keep the end of the result too: this share (percent) of the budget
    /// goes to the last lines (logs and test output end with the verdict).
    pub tail_percent: usize,
    /// The hint after the marker.
    pub hint: String,
    /// The most list items (RFC-136: 10).
    pub max_items: usize,
}

impl Default for ShapeOptions {
    fn default() -> Self {
        ShapeOptions {
            budget_tokens: 25_000,
            tail_percent: 20,
            hint: "Narrow the request (a more specific query, a line range, a filter, or pagination) to see the rest.".into(),
            max_items: 10,
        }
    }
}

/// A shaped result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Shaped {
    /// The text to send.
    pub text: String,
    /// Whether anything was cut.
    pub truncated: bool,
    /// Lines cut.
    pub cut_lines: usize,
    /// Bytes cut.
    pub cut_bytes: usize,
}

/// Caps `text` to the budget: the first lines and (with `tail_percent`)
/// the last ones, whole lines only, and a marker between them.
pub fn cap_result(text: &str, opts: &ShapeOptions) -> Shaped {
    if estimate_tokens(text) <= opts.budget_tokens {
        return Shaped {
            text: text.to_owned(),
            truncated: false,
            cut_lines: 0,
            cut_bytes: 0,
        };
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let marker_room = 60;
    let budget = opts.budget_tokens.saturating_sub(marker_room);
    let tail_budget = budget * opts.tail_percent.min(90) / 100;
    let head_budget = budget - tail_budget;
    let mut head = 0;
    let mut used = 0;
    while head < lines.len() {
        let t = estimate_tokens(lines[head]);
        if used + t > head_budget {
            break;
        }
        used += t;
        head += 1;
    }
    let mut tail = lines.len();
    let mut used_tail = 0;
    while tail > head {
        let t = estimate_tokens(lines[tail - 1]);
        if used_tail + t > tail_budget {
            break;
        }
        used_tail += t;
        tail -= 1;
    }
    // A first line longer than the whole budget: cut inside it, at a char.
    let mut out = String::new();
    let mut cut_bytes: usize = lines[head..tail].iter().map(|l| l.len()).sum();
    if head == 0 && tail == lines.len() {
        let keep = head_budget * 4;
        let mut end = keep.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        out.push_str(&text[..end]);
        out.push('\n');
        cut_bytes = text.len() - end;
    } else {
        for l in &lines[..head] {
            out.push_str(l);
        }
        if !out.ends_with('\n') && !out.is_empty() {
            out.push('\n');
        }
    }
    let cut_lines = (tail - head).max(1);
    out.push_str(&format!(
        "[… {cut_lines} lines cut ({cut_bytes} bytes) to fit {} tokens. {}]\n",
        opts.budget_tokens, opts.hint
    ));
    for l in &lines[tail..] {
        out.push_str(l);
    }
    Shaped {
        text: out,
        truncated: true,
        cut_lines,
        cut_bytes,
    }
}

/// Caps a list: the first `max_items` lines and "showing N of M".
pub fn cap_list<S: AsRef<str>>(items: &[S], opts: &ShapeOptions) -> String {
    let mut out = String::new();
    for i in items.iter().take(opts.max_items) {
        out.push_str("- ");
        out.push_str(i.as_ref());
        out.push('\n');
    }
    if items.len() > opts.max_items {
        out.push_str(&format!(
            "[showing {} of {} items. {}]\n",
            opts.max_items,
            items.len(),
            opts.hint
        ));
    } else if items.is_empty() {
        out.push_str("No items.\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_lines_whole() {
        let text: String = (0..5000).map(|i| format!("row {i}\n")).collect();
        let r = cap_result(
            &text,
            &ShapeOptions {
                budget_tokens: 500,
                ..ShapeOptions::default()
            },
        );
        assert!(
            estimate_tokens(&r.text) <= 500,
            "{}",
            estimate_tokens(&r.text)
        );
        assert!(r.text.ends_with("row 4999\n"));
        for l in r.text.lines().filter(|l| !l.starts_with('[')) {
            assert!(l.starts_with("row "), "{l}");
        }
        assert_eq!(
            r.cut_bytes
                + r.text
                    .lines()
                    .filter(|l| l.starts_with("row"))
                    .map(|l| l.len() + 1)
                    .sum::<usize>(),
            text.len()
        );
    }

    #[test]
    fn one_huge_line_is_cut_at_a_char_boundary() {
        let text = "é".repeat(100_000);
        let r = cap_result(
            &text,
            &ShapeOptions {
                budget_tokens: 1000,
                ..ShapeOptions::default()
            },
        );
        assert!(r.truncated && r.text.len() < 10_000);
    }

    #[test]
    fn lists() {
        let items: Vec<String> = (0..25).map(|i| format!("f{i}")).collect();
        let s = cap_list(&items, &ShapeOptions::default());
        assert!(s.contains("showing 10 of 25"));
        assert_eq!(s.lines().count(), 11);
    }
}
