//! MiniMax-M2.

use crate::common::check_all;
use crate::util::{args, auto, diagnostics, kinds, weather_tools};
use serde_json::json;
use toolstream::{Config, DiagnosticKind, Dialect, RepairKind};

const CATALOGUE: &str = "<minimax:tool_call>\n<invoke name=\"bash\">\n<parameter name=\"command\">ls -la</parameter>\n</invoke>\n</minimax:tool_call>";

#[test]
fn catalogue_example() {
    for cfg in [
        auto(),
        Config::default().with_dialects(vec![Dialect::MiniMaxM2]),
    ] {
        let p = check_all(CATALOGUE.as_bytes(), &cfg);
        assert_eq!(p.calls.len(), 1);
        assert_eq!(p.calls[0].name, "bash");
        assert_eq!(p.calls[0].arguments, r#"{"command": "ls -la"}"#);
        assert!(p.calls[0].repairs.is_empty());
        assert!(!p.calls[0].truncated);
    }
}

#[test]
fn several_invokes_per_block() {
    let input = "Let me search for that.\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Beijing</parameter>\n<parameter name=\"days\">3</parameter>\n</invoke>\n<invoke name=\"search_web\">\n<parameter name=\"query_tag\">[\"technology\", \"events\"]</parameter>\n<parameter name=\"query_list\">[\"\\\"OpenAI\\\" \\\"latest\\\"\"]</parameter>\n</invoke>\n</minimax:tool_call>\nThe weather will be...";
    let p = check_all(input.as_bytes(), &weather_tools());
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p, 0), json!({"city": "Beijing", "days": 3}));
    assert_eq!(p.calls[1].name, "search_web");
    assert_eq!(
        args(&p, 1),
        json!({"query_tag": ["technology", "events"], "query_list": ["\"OpenAI\" \"latest\""]})
    );
    assert_eq!(p.text, "Let me search for that.\n\nThe weather will be...");
}

#[test]
fn values_are_trimmed() {
    let p = check_all(
        b"<minimax:tool_call>\n<invoke name=\"write\">\n<parameter name=\"content\">\n  def f():\n      return 1\n</parameter>\n</invoke>\n</minimax:tool_call>",
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"content": "def f():\n      return 1"}));
}

#[test]
fn literal_parameter_close_in_file_body() {
    // vllm-project/vllm#44060: a file body that contains `</parameter>`.
    let input = "<minimax:tool_call>\n<invoke name=\"write_file\">\n<parameter name=\"path\">t.xml</parameter>\n<parameter name=\"content\"><parameter name=\"x\">1</parameter>\nmore</parameter>\n</invoke>\n</minimax:tool_call>";
    let p = check_all(input.as_bytes(), &weather_tools());
    assert_eq!(
        args(&p, 0),
        json!({"path": "t.xml", "content": "<parameter name=\"x\">1</parameter>\nmore"})
    );
    // The literal close read as content is recorded (#42 §3).
    assert_eq!(kinds(&p, 0), vec![RepairKind::CloseTagInValue]);
}

#[test]
fn truncated_variants() {
    let p = check_all(
        b"<minimax:tool_call>\n<invoke name=\"bash\">\n<parameter name=\"command\">ls -l",
        &auto(),
    );
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p, 0), json!({"command": "ls -l"}));
    let p = check_all(b"<minimax:tool_call>\n<invoke name=\"a\">\n</invoke>\n<invoke name=\"b\">\n<parameter name=\"x\">1", &auto());
    assert_eq!(p.calls.len(), 2);
    assert!(!p.calls[0].truncated);
    assert!(p.calls[1].truncated);
    let p = check_all(
        b"<minimax:tool_call>\n<invoke name=\"a\">\n</invoke>\n",
        &auto(),
    );
    assert!(!p.calls[0].truncated);
    assert!(kinds(&p, 0).contains(&RepairKind::MissingCloseTag));
    for k in 0..CATALOGUE.len() {
        check_all(&CATALOGUE.as_bytes()[..k], &auto());
    }
}

#[test]
fn unparseable_block_is_text_with_a_diagnostic() {
    let input = b"The <minimax:tool_call> tag wraps calls.";
    let p = check_all(input, &auto());
    assert!(p.calls.is_empty());
    assert_eq!(p.text.as_bytes(), input);
    assert_eq!(diagnostics(&p), vec![DiagnosticKind::UnparseableBlock]);
    // Parsing resumes: a later block is read.
    let p = check_all(
        b"<minimax:tool_call>oops</minimax:tool_call> then <minimax:tool_call><invoke name=\"f\"></invoke></minimax:tool_call>",
        &auto(),
    );
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.text, "<minimax:tool_call>oops</minimax:tool_call> then ");
}

#[test]
fn inside_a_hermes_style_wrapper() {
    // Claude-style `<function_calls><invoke>` is read with the MiniMax syntax.
    let p = check_all(
        b"<function_calls>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n</function_calls>",
        &auto(),
    );
    assert_eq!(p.calls.len(), 1);
    assert_eq!(args(&p, 0), json!({"city": "Paris"}));
}

#[test]
fn trimmed_strings_stream_without_their_trailing_blanks() {
    let input = b"<minimax:tool_call>\n<invoke name=\"bash\">\n<parameter name=\"command\">\n  ls -la  \n</parameter>\n</invoke>\n</minimax:tool_call>";
    let p = toolstream::Parsed::from_events(crate::common::run_chunked(input, 1, &auto()));
    let d = crate::util::deltas(&p, 0);
    assert_eq!(d.concat(), r#"{"command": "ls -la"}"#);
    // The value streams a byte at a time; a blank is held until a non-blank
    // shows it is not trailing, and the trailing blanks are never emitted.
    assert_eq!(d, ["{\"command\": ", "\"l", "s", " -", "l", "a", "\"}"]);
}
