//! Blanks that are not ASCII (NBSP, U+3000, the other `White_Space`
//! characters, a BOM, zero-width spaces) are blanks wherever ASCII blanks
//! are, and a tool name holds a name character: after `<tool_call>` one of
//! them (or a stray byte) became the tool name of a call whose real name
//! and arguments were then its arguments.

mod common;

use toolstream::{Config, Dialect};

const BLANKS: &[&str] = &[
    "\u{a0}", "\u{85}", "\u{1680}", "\u{2000}", "\u{2007}", "\u{200a}", "\u{200b}", "\u{200c}",
    "\u{200d}", "\u{2028}", "\u{2029}", "\u{202f}", "\u{205f}", "\u{2060}", "\u{3000}", "\u{feff}",
];

fn configs() -> [Config; 3] {
    [
        Config::default(),
        Config::default().with_dialects(vec![Dialect::Hermes, Dialect::Glm]),
        Config::default().with_dialects(vec![Dialect::Glm]),
    ]
}

#[test]
fn a_unicode_blank_after_the_tag_is_a_blank() {
    for blank in BLANKS {
        for input in [
            format!("<tool_call>{blank}{{\"name\":\"f\",\"arguments\":{{\"a\":1}}}}</tool_call>"),
            format!("<tool_call>\n{blank}{blank} {{\"name\":\"f\",\"arguments\":{{\"a\":1}}}}{blank}\n</tool_call>"),
        ] {
            let parsed = common::check_all(input.as_bytes(), &Config::default());
            assert_eq!(parsed.calls.len(), 1, "{input:?}: {:?}", parsed.calls);
            let c = &parsed.calls[0];
            assert_eq!((c.name.as_str(), c.arguments.as_str()), ("f", r#"{"a":1}"#), "{input:?}");
            assert!(c.repairs.is_empty() && !c.truncated, "{input:?}: {c:?}");
            assert_eq!(parsed.text, "", "{input:?}");
        }
    }
}

/// The GLM form: blanks before and after the name are not part of it.
#[test]
fn glm_names_are_trimmed_of_unicode_blanks() {
    for blank in BLANKS {
        let input = format!(
            "<tool_call>{blank}get_weather{blank}\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"
        );
        for cfg in configs() {
            let parsed = common::check_all(input.as_bytes(), &cfg);
            assert_eq!(parsed.calls.len(), 1, "{input:?}");
            assert_eq!(parsed.calls[0].name, "get_weather", "{input:?}");
            assert_eq!(parsed.calls[0].arguments, r#"{"city": "Paris"}"#);
        }
    }
}

/// A name must hold a name character: a stray byte, a symbol or a blank
/// alone is never a tool name; a letter that is not ASCII starts one.
#[test]
fn only_a_name_character_starts_a_name() {
    for lead in [
        &b"\xff"[..],
        b"\xfe\xff",
        "\u{2022}".as_bytes(),
        "\u{201c}".as_bytes(),
        b"\xc2",
    ] {
        let mut input = b"<tool_call>".to_vec();
        input.extend_from_slice(lead);
        input.extend_from_slice(br#"{"name":"f","arguments":{}}</tool_call>"#);
        for cfg in configs() {
            let parsed = common::check_all(&input, &cfg);
            for c in &parsed.calls {
                assert!(
                    c.name.chars().any(|ch| ch.is_alphanumeric() || ch == '_'),
                    "{:?}: name {:?}",
                    String::from_utf8_lossy(&input),
                    c.name
                );
            }
        }
    }
    let input = "<tool_call>天气\n<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>";
    for cfg in configs() {
        let parsed = common::check_all(input.as_bytes(), &cfg);
        assert_eq!(parsed.calls[0].name, "天气");
    }
}
