//! `<tool_call>` is shared by Hermes (JSON), Qwen3-Coder, GLM and the XML
//! emulation: the content decides, within the enabled dialects. Also dialect
//! names, and prose/HTML that must stay text in auto mode.

use crate::common::check_all;
use crate::util::{args, auto, diagnostics, weather_tools};
use serde_json::json;
use toolstream::{Config, DiagnosticKind, Dialect};

const QWEN: &[u8] =
    b"<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>";
const GLM: &[u8] = b"<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>";
const PLAIN: &[u8] = b"<tool_call><name>f</name><arguments><a>1</a></arguments></tool_call>";
const JSON: &[u8] = b"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>";

fn only(d: Dialect) -> Config {
    Config::default().with_dialects(vec![d])
}

#[test]
fn content_decides_the_reading() {
    for input in [QWEN, GLM, PLAIN, JSON] {
        let p = check_all(input, &auto());
        assert_eq!(p.calls.len(), 1, "{:?}", String::from_utf8_lossy(input));
        assert_eq!(p.calls[0].name, "f");
        assert_eq!(args(&p, 0), json!({"a": 1}));
        assert!(p.calls[0].repairs.is_empty());
    }
}

#[test]
fn readings_follow_the_enabled_dialects() {
    let cases: [(&[u8], Dialect); 3] = [
        (QWEN, Dialect::Qwen3Coder),
        (GLM, Dialect::Glm),
        (PLAIN, Dialect::XmlEmulation),
    ];
    for (input, d) in cases {
        assert_eq!(check_all(input, &only(d)).calls.len(), 1, "{d}");
        // Hermes alone reads only JSON: the XML block is text, with a diagnostic.
        let p = check_all(input, &only(Dialect::Hermes));
        assert!(p.calls.is_empty(), "{d} read with hermes only");
        assert_eq!(p.text.as_bytes(), input);
        // Another XML dialect alone does not read it either.
        let other = if d == Dialect::Glm {
            Dialect::Qwen3Coder
        } else {
            Dialect::Glm
        };
        assert!(
            check_all(input, &only(other)).calls.is_empty(),
            "{d} read with {other}"
        );
    }
    let p = check_all(QWEN, &only(Dialect::Hermes));
    assert_eq!(diagnostics(&p), vec![DiagnosticKind::UnparseableBlock]);
    // JSON content is read whichever `<tool_call>` dialect is enabled.
    assert_eq!(check_all(JSON, &only(Dialect::Glm)).calls.len(), 1);
}

#[test]
fn mixed_dialects_in_one_stream() {
    let input = b"A <tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call> B <tool_call>b<arg_key>k</arg_key><arg_value>v</arg_value></tool_call> C <minimax:tool_call><invoke name=\"c\"></invoke></minimax:tool_call> D <function=d>\n</function> E";
    let p = check_all(input, &auto());
    let names: Vec<&str> = p.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    assert_eq!(p.text, "A  B  C  D  E");
}

#[test]
fn prose_and_html_stay_text() {
    let inputs: [&[u8]; 8] = [
        b"<html><head><title>x</title></head><body><name>Alice</name><p>a < b & c</p></body></html>",
        b"Use <invoke name=\"x\"> and <parameter name=\"y\"> inside <minimax:tool_call> blocks.",
        b"XML like <arguments><city>Paris</city></arguments> is common.",
        b"Qwen writes <parameter=city> lines; GLM writes <arg_key>k</arg_key>.",
        b"The <tool_call> tag, the </tool_call> tag and <function=NAME> are markup.",
        b"<seed:tool_call> alone, then prose.",
        "Tokens: <｜DSML｜invoke name=\"f\"> and <｜tool_calls_begin｜> in prose.".as_bytes(),
        b"<get_weather> is a tool; <set_flag/> too.",
    ];
    for cfg in [auto(), weather_tools()] {
        for input in inputs {
            let p = check_all(input, &cfg);
            assert!(
                p.calls.is_empty(),
                "false positive in {:?}",
                String::from_utf8_lossy(input)
            );
            assert_eq!(p.text.as_bytes(), input);
        }
    }
}

#[test]
fn dialect_names() {
    let cases = [
        (
            Dialect::Qwen3Coder,
            "qwen3_coder",
            &["qwen3-coder", "qwen3_xml", "QWEN35", "step3p5"][..],
        ),
        (Dialect::SeedOss, "seed_oss", &["seed-oss", "seed"]),
        (
            Dialect::XmlEmulation,
            "xml",
            &["xml_emulation", "plain-xml"],
        ),
        (Dialect::Glm, "glm", &["glm45", "glm47", "glm4_moe", "glm5"]),
        (
            Dialect::MiniMaxM2,
            "minimax_m2",
            &["minimax", "minimax-m2.5"],
        ),
        (
            Dialect::DeepSeekDsml,
            "deepseek_dsml",
            &["deepseek_v32", "deepseek-v4", "dsml"],
        ),
        (Dialect::Step3, "step3", &["steptml"]),
        (Dialect::MorphXml, "morph_xml", &["morph-xml", "morphxml"]),
    ];
    for (d, name, aliases) in cases {
        assert!(Dialect::ALL.contains(&d));
        assert_eq!(d.name(), name);
        assert_eq!(Dialect::from_name(name).unwrap(), d);
        assert_eq!(d.to_string().parse::<Dialect>().unwrap(), d);
        for a in aliases {
            assert_eq!(Dialect::from_name(a).unwrap(), d, "{a}");
        }
    }
    assert!(Dialect::from_name("no_such_dialect").is_err());
}

#[test]
fn limits_are_config() {
    // A tag longer than `max_tag_bytes` is not markup.
    let mut cfg = auto();
    cfg.limits.max_tag_bytes = 32;
    let long = format!(
        "<minimax:tool_call><invoke name=\"{}\"></invoke></minimax:tool_call>",
        "x".repeat(40)
    );
    let p = check_all(long.as_bytes(), &cfg);
    assert!(p.calls.is_empty());
    assert_eq!(p.text, long);
    assert_eq!(check_all(long.as_bytes(), &auto()).calls.len(), 1);
    // An undecided block longer than `max_held_bytes` is text, with a diagnostic.
    let mut cfg = auto();
    cfg.limits.max_held_bytes = 64;
    let input = format!("<function=f>{}", " ".repeat(100));
    let p = check_all(input.as_bytes(), &cfg);
    assert!(p.calls.is_empty());
    assert_eq!(p.text, input);
    assert!(diagnostics(&p).contains(&DiagnosticKind::LimitExceeded));
    // An untyped value held past `max_token_bytes` while still valid JSON is committed to JSON.
    let mut cfg = auto();
    cfg.limits.max_token_bytes = 16;
    let p = check_all(
        b"<function=f>\n<parameter=a>\n[1, 2, 3, 4, 5, 6, 7, 8, 9]\n</parameter>\n<parameter=b>\n[1, 2, 3, 4, 5, 6, 7 x\n</parameter>\n</function>",
        &cfg,
    );
    assert_eq!(
        args(&p, 0),
        json!({"a": [1, 2, 3, 4, 5, 6, 7, 8, 9], "b": [1, 2, 3, 4, 5, 6, 7, "x"]})
    );
}

#[test]
fn a_trailing_value_without_a_call_stays_in_the_calls_span() {
    // Found by the markup-soup property: the bytes of a second value that
    // names no call were covered by no event.
    for input in [
        &b"<tool_call>{\"name\": \"f\", \"arguments\": {}}[1, 2]</tool_call> after"[..],
        b"```json\n{\"name\": \"f\", \"arguments\": {}}\n[1, 2]\n```\nafter",
        b"<tool_call>{\"name\": \"f\", \"arguments\": {}}{\"name\": \"g\", \"arguments\": {}}</tool_call>",
    ] {
        let p = check_all(input, &auto());
        assert!(!p.calls.is_empty());
        assert!(p.text.is_empty() || p.text.ends_with("after"), "{:?}", p.text);
    }
}
