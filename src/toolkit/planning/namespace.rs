//! Namespacing several servers' tools (RFC-136 §12, seed 004): tool `t`
//! of server `s` becomes `mcp__s__t` — the names Claude Code and other MCP
//! clients use — or `{prefix}{sep}{s}{sep}{t}` with a chosen prefix and
//! separator. Names are cleaned to `[A-Za-z0-9_-]` and cut to 64 bytes (the
//! providers' limit); collisions get `_2`, `_3`, … in input order, so the
//! result is deterministic. [`Namespaced::resolve`] maps a called name back
//! to its server and original tool.
//!
//! ```
//! use serde_json::json;
//! use toolstream::toolkit::planning::namespace::{namespace, NamespaceOptions};
//! use toolstream::toolkit::Tool;
//! let gh = vec![Tool::new("search", "Search issues.", json!({"type": "object"}))];
//! let jira = vec![Tool::new("search", "Search tickets.", json!({"type": "object"}))];
//! let ns = namespace(&[("github", gh), ("jira", jira)], &NamespaceOptions::default());
//! assert_eq!(ns.tools[0].name, "mcp__github__search");
//! assert_eq!(ns.resolve("mcp__jira__search"), Some(("jira", "search")));
//! ```

use serde::Serialize;

use super::super::Tool;

/// How names are built.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NamespaceOptions {
    /// The prefix (`mcp`); empty for none.
    pub prefix: String,
    /// The separator (`__`).
    pub separator: String,
    /// The longest name in bytes (64).
    pub max_len: usize,
    /// Put `[server] ` before each description.
    pub tag_descriptions: bool,
}

impl Default for NamespaceOptions {
    fn default() -> Self {
        NamespaceOptions {
            prefix: "mcp".into(),
            separator: "__".into(),
            max_len: 64,
            tag_descriptions: false,
        }
    }
}

/// Namespaced tools and the way back.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Namespaced {
    /// The tools, renamed, in input order.
    pub tools: Vec<Tool>,
    /// `(new name, server, original name)` per tool.
    pub map: Vec<(String, String, String)>,
}

impl Namespaced {
    /// The server and original name of a namespaced tool.
    pub fn resolve(&self, name: &str) -> Option<(&str, &str)> {
        self.map
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, s, t)| (s.as_str(), t.as_str()))
    }
}

fn clean(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn cut(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// Namespaces the tools of several servers.
pub fn namespace(servers: &[(&str, Vec<Tool>)], opts: &NamespaceOptions) -> Namespaced {
    let mut tools = Vec::new();
    let mut map: Vec<(String, String, String)> = Vec::new();
    for (server, list) in servers {
        for t in list {
            let mut base = String::new();
            if !opts.prefix.is_empty() {
                base.push_str(&clean(&opts.prefix));
                base.push_str(&opts.separator);
            }
            base.push_str(&clean(server));
            base.push_str(&opts.separator);
            base.push_str(&clean(&t.name));
            let mut name = cut(&base, opts.max_len);
            let mut k = 2;
            while map.iter().any(|(n, _, _)| *n == name) {
                let suffix = format!("_{k}");
                name = format!(
                    "{}{suffix}",
                    cut(&base, opts.max_len.saturating_sub(suffix.len()))
                );
                k += 1;
            }
            let mut nt = t.clone();
            nt.name = name.clone();
            if opts.tag_descriptions {
                nt.description = Some(format!("[{server}] {}", t.description()));
            }
            map.push((name, (*server).to_owned(), t.name.clone()));
            tools.push(nt);
        }
    }
    Namespaced { tools, map }
}

/// Splits a `mcp__server__tool`-style name without a map: `(server, tool)`
/// when it has the prefix (if any) and the separator.
pub fn split_name<'a>(name: &'a str, opts: &NamespaceOptions) -> Option<(&'a str, &'a str)> {
    let rest = if opts.prefix.is_empty() {
        name
    } else {
        name.strip_prefix(opts.prefix.as_str())?
            .strip_prefix(opts.separator.as_str())?
    };
    rest.split_once(opts.separator.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn collisions_and_cleaning() {
        let t = |n: &str| Tool::new(n, "", json!({"type": "object"}));
        let ns = namespace(
            &[("a.b", vec![t("x y"), t("x_y")])],
            &NamespaceOptions::default(),
        );
        assert_eq!(ns.tools[0].name, "mcp__a_b__x_y");
        assert_eq!(ns.tools[1].name, "mcp__a_b__x_y_2");
        assert_eq!(ns.resolve("mcp__a_b__x_y_2"), Some(("a.b", "x_y")));
        let long = namespace(
            &[("s", vec![t(&"n".repeat(100)), t(&"n".repeat(90))])],
            &NamespaceOptions::default(),
        );
        assert!(long.tools.iter().all(|t| t.name.len() <= 64));
        assert_ne!(long.tools[0].name, long.tools[1].name);
        assert_eq!(
            split_name("mcp__github__create_issue", &NamespaceOptions::default()),
            Some(("github", "create_issue"))
        );
    }
}
