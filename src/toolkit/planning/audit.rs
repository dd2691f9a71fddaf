//! Tool description audit (RFC-136 §8): the RFC's five checks and score,
//! plus parameters without a type or description, near-duplicate tool
//! names, and too many tools for the model's size class — each finding
//! with a fix.
//!
//! ```
//! use serde_json::json;
//! use toolstream::toolkit::planning::audit::audit;
//! use toolstream::toolkit::Tool;
//! let t = Tool::new("search", "Search.", json!({"type": "object", "properties": {"q": {}}}));
//! let r = audit(&[t], None);
//! assert!(r.tools[0].score < 0.6);
//! assert!(r.findings.iter().any(|f| f.check == "param_type"));
//! ```

use serde::Serialize;
use serde_json::Value;

use super::super::registry::{ModelInfo, SizeClass};
use super::super::Tool;

/// RFC-136's five checks for one tool.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Quality {
    /// The tool.
    pub tool: String,
    /// The description shows an example (`e.g.`, `example`, `such as`).
    pub has_example_usage: bool,
    /// It names edge cases or warnings (`note:`, `warning:`, …).
    pub has_edge_cases: bool,
    /// It says what input it expects (`must be`, `format:`, …).
    pub has_input_format: bool,
    /// It says when not to use it (`do not use`, `instead`, …).
    pub has_clear_boundaries: bool,
    /// No parameter has an ambiguous name (`user`, `file`, `id`, `data`…).
    pub params_unambiguous: bool,
    /// The share of checks passed (0 … 1).
    pub score: f64,
}

/// One problem and its fix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The tool (empty for findings about the whole list).
    pub tool: String,
    /// The check (`example`, `edge_cases`, `input_format`, `boundaries`,
    /// `ambiguous_param`, `param_type`, `param_description`,
    /// `no_description`, `near_duplicate`, `too_many_tools`).
    pub check: &'static str,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

/// The audit of a tool list.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// Per tool, in order.
    pub tools: Vec<Quality>,
    /// The mean score.
    pub mean_score: f64,
    /// Every finding.
    pub findings: Vec<Finding>,
}

const AMBIGUOUS: &[&str] = &[
    "user", "file", "path", "id", "name", "data", "value", "input",
];

/// The most tools a model of each size class handles well (small: 5,
/// medium: 20 — seed 004's threshold —, large: 128, OpenAI's limit).
pub fn max_tools(size: SizeClass) -> usize {
    match size {
        SizeClass::Small => 5,
        SizeClass::Medium => 20,
        SizeClass::Large => 128,
    }
}

/// Audits tools, optionally for a model.
pub fn audit(tools: &[Tool], model: Option<&ModelInfo>) -> Report {
    let mut findings = Vec::new();
    let mut qs = Vec::new();
    for t in tools {
        let d = t.description().to_ascii_lowercase();
        let any = |ws: &[&str]| ws.iter().any(|w| d.contains(w));
        let ambiguous: Vec<&String> = t
            .properties()
            .map(|(n, _)| n)
            .filter(|n| AMBIGUOUS.contains(&n.to_ascii_lowercase().as_str()))
            .collect();
        let q = Quality {
            tool: t.name.clone(),
            has_example_usage: any(&["example", "e.g.", "for instance", "such as", "like:"]),
            has_edge_cases: any(&[
                "note:",
                "warning:",
                "caution:",
                "important:",
                "edge case",
                "fails if",
                "if the",
            ]),
            has_input_format: any(&[
                "format:",
                "must be",
                "should be",
                "expects",
                "accepts",
                "absolute path",
                "in the form",
            ]),
            has_clear_boundaries: any(&[
                "do not use",
                "don't use",
                "instead use",
                "use instead",
                "not for",
                "instead of",
                "only for",
            ]),
            params_unambiguous: ambiguous.is_empty(),
            score: 0.0,
        };
        let checks = [
            q.has_example_usage,
            q.has_edge_cases,
            q.has_input_format,
            q.has_clear_boundaries,
            q.params_unambiguous,
        ];
        let score = checks.iter().filter(|c| **c).count() as f64 / checks.len() as f64;
        let q = Quality { score, ..q };
        let mut f = |check: &'static str, message: String, fix: String| {
            findings.push(Finding {
                tool: t.name.clone(),
                check,
                message,
                fix,
            })
        };
        if t.description().trim().is_empty() {
            f(
                "no_description",
                "the tool has no description".into(),
                "Say in one sentence what it does and what it returns.".into(),
            );
        }
        if !q.has_example_usage {
            f(
                "example",
                "no usage example".into(),
                format!("Add an example, e.g. \"Example: {}(…) for …\".", t.name),
            );
        }
        if !q.has_edge_cases {
            f(
                "edge_cases",
                "no edge cases or warnings".into(),
                "Add a \"Note:\" on what happens with missing inputs, empty results or errors."
                    .into(),
            );
        }
        if !q.has_input_format {
            f("input_format", "the expected input format is not stated".into(), "Say what the arguments must look like (\"path must be absolute\", \"date in YYYY-MM-DD format\").".into());
        }
        if !q.has_clear_boundaries {
            f(
                "boundaries",
                "no word on when not to use it".into(),
                "Add \"Do not use for …; use … instead.\"".into(),
            );
        }
        for n in &ambiguous {
            f(
                "ambiguous_param",
                format!("parameter `{n}` is ambiguous"),
                format!(
                    "Rename it to say what it holds (`{n}` → e.g. `{}_{n}`).",
                    t.name.split(['_', '-']).next_back().unwrap_or("target")
                ),
            );
        }
        for (n, p) in t.properties() {
            let has_type = ["type", "enum", "const", "anyOf", "oneOf", "$ref", "allOf"]
                .iter()
                .any(|k| p.get(*k).is_some());
            if !has_type {
                f(
                    "param_type",
                    format!("parameter `{n}` has no type"),
                    format!(
                        "Give `{n}` a `type` (string, integer, number, boolean, array, object)."
                    ),
                );
            }
            if p.get("description")
                .and_then(Value::as_str)
                .is_none_or(|d| d.trim().is_empty())
            {
                f(
                    "param_description",
                    format!("parameter `{n}` has no description"),
                    format!("Describe `{n}`: what it is, its unit or format, an example value."),
                );
            }
        }
        qs.push(q);
    }
    // Near-duplicate names.
    for (i, a) in tools.iter().enumerate() {
        for b in &tools[i + 1..] {
            let (x, y) = (norm(&a.name), norm(&b.name));
            if x == y || (x.len() > 3 && edit_distance(&x, &y) <= 1) {
                findings.push(Finding {
                    tool: b.name.clone(),
                    check: "near_duplicate",
                    message: format!("`{}` and `{}` are near-identical names", a.name, b.name),
                    fix:
                        "Rename one so the names say how they differ, or namespace them by server."
                            .into(),
                });
            }
        }
    }
    if let Some(m) = model {
        let max = max_tools(m.size_class);
        if tools.len() > max {
            findings.push(Finding {
                tool: String::new(),
                check: "too_many_tools",
                message: format!(
                    "{} tools for a {} model ({}); it handles about {max} well",
                    tools.len(),
                    m.size_class,
                    m.id
                ),
                fix: format!("Send the {max} most relevant tools (`toolstream tools search`)."),
            });
        }
    }
    let mean_score = if qs.is_empty() {
        0.0
    } else {
        qs.iter().map(|q| q.score).sum::<f64>() / qs.len() as f64
    };
    Report {
        tools: qs,
        mean_score,
        findings,
    }
}

fn norm(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .flat_map(|c| c.to_lowercase())
        .collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + usize::from(ca != cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_good_description_scores_high() {
        let t = Tool::new(
            "read_file",
            "Read a text file. The path must be absolute, e.g. /home/u/a.txt. Note: binary files are refused. Do not use it for directories; use list_dir instead.",
            json!({"type": "object", "properties": {"file_path": {"type": "string", "description": "Absolute path"}}}),
        );
        let r = audit(&[t], None);
        assert_eq!(r.tools[0].score, 1.0);
        assert!(r.findings.is_empty(), "{:?}", r.findings);
    }

    #[test]
    fn duplicates_and_size() {
        let t = |n: &str| Tool::new(n, "x", json!({"type": "object"}));
        let tools: Vec<Tool> = ["send_email", "sendEmail", "send_emails", "a", "b", "c"]
            .iter()
            .map(|n| t(n))
            .collect();
        let m = crate::toolkit::Registry::builtin().lookup("gemma3:270m");
        let r = audit(&tools, Some(&m));
        assert_eq!(
            r.findings
                .iter()
                .filter(|f| f.check == "near_duplicate")
                .count(),
            3
        );
        assert!(r.findings.iter().any(|f| f.check == "too_many_tools"));
    }
}
