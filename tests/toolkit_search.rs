//! Tool search on a realistic scale: 100 tools give a prompt under 10k
//! tokens (seed 004's target), the tool the query names is kept, and the
//! budget (a fifth of the context window) holds.
#![cfg(feature = "toolkit")]

use serde_json::json;
use toolstream::toolkit::estimate_tokens;
use toolstream::toolkit::prompt::{render, PromptOptions};
use toolstream::toolkit::search::{select, SearchOptions};
use toolstream::toolkit::{EmulationFormat, SizeClass, Tool};

fn tools(n: usize) -> Vec<Tool> {
    let services = ["github", "slack", "jira", "gmail", "drive"];
    let verbs = [
        "get", "list", "create", "update", "delete", "search", "send", "archive", "export", "share",
    ];
    let nouns = ["issue", "message", "file", "event", "user"];
    (0..n)
        .map(|i| {
            let s = services[i % 5];
            let v = verbs[(i / 5) % 10];
            let o = nouns[(i / 50) % 5];
            Tool::new(
                format!("{s}_{v}_{o}_{i}"),
                format!("{v} a {o} in {s}. Returns the {o} with its id, title and timestamps. Note: needs the {s} connection; use the id with the other {s} tools."),
                json!({"type": "object", "properties": {
                    "id": {"type": "string", "description": format!("The {o} id as returned by the {s} list tools")},
                    "limit": {"type": "integer", "description": "Maximum number of results to return"}
                }, "required": ["id"]}),
            )
        })
        .collect()
}

#[test]
fn a_hundred_tools_fit_in_ten_thousand_tokens() {
    let ts = tools(100);
    let opts = SearchOptions::default().with_context_window(32_768);
    let s = select(&ts, "send a slack message", &[], None, &opts);
    assert!(s.tools.len() <= 20);
    assert!(s.tokens <= 32_768 / 5);
    assert!(s.tools.iter().any(|t| t.name.starts_with("slack_send")));
    for f in EmulationFormat::ALL {
        let p = render(&s.tools, &PromptOptions::new(f, SizeClass::Medium));
        assert!(estimate_tokens(&p) < 10_000, "{f}: {}", estimate_tokens(&p));
    }
}

#[test]
fn a_small_window_drops_tools_and_reports_them() {
    let ts = tools(100);
    let opts = SearchOptions::default().with_context_window(4_096);
    let s = select(
        &ts,
        "archive the github issue",
        &[],
        Some("jira_get_issue_2"),
        &opts,
    );
    assert!(s.tokens <= 4_096 / 5, "{} tokens", s.tokens);
    assert_eq!(s.tools.len() + s.dropped.len(), 100);
    assert!(!s.dropped.is_empty() && !s.shortened.is_empty());
    assert!(s.ranked[0].0.starts_with("github_archive_issue"));
    assert!(s.tools.iter().any(|t| t.name == "jira_get_issue_2"));
    assert_eq!(s.pinned, ["jira_get_issue_2"]);
}
