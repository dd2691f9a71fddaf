//! Text-intent fallback (seed 003 approach 4, seed 001 priority 4):
//! **opt-in, off by default**. A reply that made no call but holds exactly
//! one fenced shell block, or an unambiguous "run `…`", becomes a call of
//! the offered shell tool; "read FILE" / "open FILE" / "look at FILE"
//! becomes a call of the offered file-reading tool. Each inferred call is
//! flagged ([`Inferred::reason`]) so the caller can show it as a guess.
//! Anything ambiguous — two shell blocks, two shell tools, no parameter
//! that fits — infers nothing.
//!
//! ```
//! use serde_json::json;
//! use toolstream::toolkit::planning::intent::{infer, IntentOptions};
//! use toolstream::toolkit::Tool;
//! let tools = [Tool::new("Bash", "Run a command.", json!({"type": "object",
//!     "properties": {"command": {"type": "string"}}, "required": ["command"]}))];
//! let text = "Let me check:\n```bash\ngit status\n```";
//! assert!(infer(text, &tools, &IntentOptions::default()).is_none()); // off by default
//! let on = IntentOptions { enabled: true };
//! let call = infer(text, &tools, &on).unwrap();
//! assert_eq!((call.name.as_str(), call.arguments.clone()), ("Bash", json!({"command": "git status"})));
//! ```

use serde::Serialize;
use serde_json::{Map, Value};

use super::super::search::terms;
use super::super::Tool;

/// Whether to infer calls from text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IntentOptions {
    /// Off by default.
    pub enabled: bool,
}

/// A call inferred from text.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Inferred {
    /// The tool.
    pub name: String,
    /// The arguments.
    pub arguments: Value,
    /// What it was inferred from (`fenced shell block`, `"run `…`"`, `"read FILE"`).
    pub reason: &'static str,
}

const SHELL_NAMES: &[&str] = &[
    "bash", "shell", "sh", "terminal", "exec", "execute", "run", "command", "cmd",
];
const SHELL_PARAMS: &[&str] = &["command", "cmd", "script", "commands"];
const READ_NAMES: &[&str] = &["read", "view", "cat", "open"];
const READ_PARAMS: &[&str] = &["file_path", "path", "file", "filename", "filepath"];

fn tool_with<'a>(tools: &'a [Tool], names: &[&str], params: &[&str]) -> Option<(&'a Tool, String)> {
    let fits: Vec<(&Tool, String)> = tools
        .iter()
        .filter(|t| terms(&t.name).iter().any(|w| names.contains(&w.as_str())))
        .filter_map(|t| {
            let p = t
                .properties()
                .map(|(n, _)| n)
                .find(|n| params.contains(&n.to_ascii_lowercase().as_str()))?;
            Some((t, p.clone()))
        })
        .collect();
    match fits.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

fn call(t: &Tool, param: &str, value: &str, reason: &'static str) -> Inferred {
    let mut args = Map::new();
    args.insert(param.to_owned(), Value::String(value.to_owned()));
    // Claude Code's Bash also takes a `description`: fill it when required.
    if t.is_required("description") && param != "description" {
        args.insert(
            "description".into(),
            Value::String(format!("Run {}", value.lines().next().unwrap_or(value))),
        );
    }
    Inferred {
        name: t.name.clone(),
        arguments: Value::Object(args),
        reason,
    }
}

/// Infers a call from a reply's text, if enabled and unambiguous.
pub fn infer(text: &str, tools: &[Tool], opts: &IntentOptions) -> Option<Inferred> {
    if !opts.enabled {
        return None;
    }
    // 1. Exactly one fenced shell block.
    let blocks = shell_blocks(text);
    if blocks.len() == 1 {
        let (t, p) = tool_with(tools, SHELL_NAMES, SHELL_PARAMS)?;
        return Some(call(t, &p, &blocks[0], "fenced shell block"));
    }
    if blocks.len() > 1 {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    // 2. "run `cmd`" / "execute `cmd`".
    let runs: Vec<String> = ["run `", "execute `", "running `", "run the command `"]
        .iter()
        .flat_map(|pre| {
            lower.match_indices(pre).filter_map(|(i, m)| {
                let start = i + m.len();
                let end = text[start..].find('`')?;
                let cmd = text[start..start + end].trim();
                (!cmd.is_empty() && !cmd.contains('\n')).then(|| cmd.to_owned())
            })
        })
        .collect();
    let mut uniq = runs.clone();
    uniq.sort();
    uniq.dedup();
    if uniq.len() == 1 {
        if let Some((t, p)) = tool_with(tools, SHELL_NAMES, SHELL_PARAMS) {
            return Some(call(t, &p, &uniq[0], "\"run `…`\""));
        }
    }
    // 3. "read FILE".
    for pre in ["read ", "open ", "look at ", "let me read ", "i'll read "] {
        if let Some(i) = lower.find(pre) {
            let rest = &text[i + pre.len()..];
            let rest = rest
                .trim_start_matches("the file ")
                .trim_start_matches("file ");
            let word: String = rest
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != ',' && *c != ')')
                .collect();
            let word = word
                .trim_matches(['`', '"', '\''])
                .trim_end_matches(['.', ':', ';']);
            let pathlike = word.contains('/')
                || word.rsplit_once('.').is_some_and(|(a, e)| {
                    !a.is_empty()
                        && (1..=5).contains(&e.len())
                        && e.chars().all(|c| c.is_ascii_alphanumeric())
                });
            if pathlike {
                let (t, p) = tool_with(tools, READ_NAMES, READ_PARAMS)?;
                return Some(call(t, &p, word, "\"read FILE\""));
            }
        }
    }
    None
}

fn shell_blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("```") {
        let after = &rest[i + 3..];
        let Some(nl) = after.find('\n') else { break };
        let lang = after[..nl].trim().to_ascii_lowercase();
        let body = &after[nl + 1..];
        let Some(end) = body.find("```") else { break };
        if matches!(lang.as_str(), "bash" | "sh" | "shell" | "console" | "zsh") {
            let cmd: Vec<&str> = body[..end]
                .lines()
                .map(|l| l.trim_start_matches("$ "))
                .collect();
            let cmd = cmd.join("\n").trim().to_owned();
            if !cmd.is_empty() {
                out.push(cmd);
            }
        }
        rest = &body[end + 3..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<Tool> {
        vec![
            Tool::new(
                "Bash",
                "",
                json!({"type": "object", "properties": {"command": {"type": "string"}, "description": {"type": "string"}}, "required": ["command", "description"]}),
            ),
            Tool::new(
                "Read",
                "",
                json!({"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}),
            ),
        ]
    }

    #[test]
    fn patterns() {
        let on = IntentOptions { enabled: true };
        let c = infer("I'll run `cargo test` now.", &tools(), &on).unwrap();
        assert_eq!(
            c.arguments,
            json!({"command": "cargo test", "description": "Run cargo test"})
        );
        let c = infer("Let me read src/main.rs first.", &tools(), &on).unwrap();
        assert_eq!(
            (c.name.as_str(), c.arguments.clone()),
            ("Read", json!({"file_path": "src/main.rs"}))
        );
        assert!(infer("```bash\nls\n```\n```sh\npwd\n```", &tools(), &on).is_none());
        assert!(infer("I read the docs and it is fine.", &tools(), &on).is_none());
        assert!(infer("run `a` or run `b`", &tools(), &on).is_none());
    }
}
