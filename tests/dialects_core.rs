//! Scenario tests of the JSON and Hermes dialects and reasoning, each checked
//! whole and at several chunk sizes against every contract.

mod common;

use common::{calls, check_all, kinds};
use serde_json::{json, Value};
use toolstream::{Config, Dialect, RepairKind, Tools};

fn cfg() -> Config {
    Config::default()
}

/// The default configuration with the tools of an OpenAI-format list offered.
fn offering(tools: &str) -> Config {
    cfg().with_tools(Tools::from_json(tools).expect("a tool list"))
}

fn args(p: &toolstream::Parsed, i: usize) -> Value {
    serde_json::from_str(&p.calls[i].arguments).unwrap()
}

#[test]
fn hermes_basic() {
    let p = check_all(
        b"Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}\n</tool_call>",
        &cfg(),
    );
    assert_eq!(p.text, "Let me check.\n");
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.calls[0].name, "get_weather");
    assert_eq!(p.calls[0].arguments, r#"{"city": "Tokyo"}"#);
    assert_eq!(p.calls[0].id, "call_0");
    assert!(p.calls[0].repairs.is_empty());
    assert!(!p.calls[0].truncated);
}

#[test]
fn hermes_several_blocks_and_text_between() {
    let p = check_all(
        b"<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\nand\n<tool_call>\n{\"name\": \"b\", \"arguments\": {\"x\": [1, 2]}}\n</tool_call>\nDone.",
        &cfg(),
    );
    assert_eq!(p.calls.len(), 2);
    assert_eq!(p.calls[1].name, "b");
    assert_eq!(p.calls[1].index, 1);
    assert_eq!(p.text, "\nand\n\nDone.");
}

#[test]
fn hermes_missing_close_tag_and_truncation() {
    let p = check_all(
        b"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\nOK",
        &cfg(),
    );
    assert_eq!(p.calls.len(), 1);
    assert!(!p.calls[0].truncated);
    assert!(p.calls[0]
        .repairs
        .iter()
        .any(|r| r.kind == RepairKind::MissingCloseTag));
    assert_eq!(p.text, "OK");

    let p = check_all(
        b"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": \"hel",
        &cfg(),
    );
    assert_eq!(p.calls.len(), 1);
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p, 0), json!({"a": "hel"}));
}

#[test]
fn hermes_close_tag_inside_object() {
    let p = check_all(
        b"<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1</tool_call> after",
        &cfg(),
    );
    assert_eq!(args(&p, 0), json!({"a": 1}));
    assert!(!p.calls[0].truncated);
    assert_eq!(p.text, " after");
}

#[test]
fn hermes_array_and_tag_variants() {
    let p = check_all(
        b"<tool_calls>[{\"name\": \"a\", \"arguments\": {\"q\": 1}}, {\"name\": \"b\", \"arguments\": {}}]</tool_calls>",
        &cfg(),
    );
    assert_eq!(p.calls.len(), 2);
    let p = check_all(
        b"<tool_use>{\"name\": \"read\", \"input\": {\"path\": \"/etc\"}}</tool_use>",
        &cfg(),
    );
    assert_eq!(args(&p, 0), json!({"path": "/etc"}));
    let p = check_all(b"<function_call>{\"function\": {\"name\": \"f\", \"arguments\": \"{\\\"k\\\": 2}\"}}</function_call>", &cfg());
    assert_eq!(p.calls[0].name, "f");
    assert_eq!(args(&p, 0), json!({"k": 2}));
}

#[test]
fn tag_with_prose_is_text() {
    let input = b"Use the <tool_call> tag to call tools.";
    let p = check_all(input, &cfg());
    assert!(p.calls.is_empty());
    assert_eq!(p.text.as_bytes(), input);
}

#[test]
fn bare_json_and_fences() {
    let p = check_all(b"I'll check.\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}\n```", &cfg());
    assert_eq!(p.text, "I'll check.\n");
    assert_eq!(p.calls[0].name, "get_weather");

    let p = check_all(b"{\"tool\": \"f\", \"parameters\": {\"a\": True}}", &cfg());
    assert_eq!(args(&p, 0), json!({"a": true}));

    let p = check_all(b"[{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"y\": 2}}] done", &cfg());
    assert_eq!(p.calls.len(), 2);
    assert_eq!(p.text, " done");

    let p = check_all(
        b"```tool_call\n{\"type\": \"function\", \"name\": \"f\", \"parameters\": {}}\n```",
        &cfg(),
    );
    assert_eq!(p.calls[0].name, "f");
}

/// BFCL's Java and JavaScript answers come in ```` ```java ```` (or
/// ```` ```typescript ````) fences: read like ```` ```javascript ````, so a
/// call of an offered tool is a call there, and plain code stays text.
#[test]
fn java_and_typescript_fences() {
    let with = offering(
        r#"[{"name": "MethodInvokeTest.checkInjectedInvoker", "parameters": {"type": "object", "properties": {"csm": {"type": "string"}, "expectedClass": {"type": "string"}}, "required": ["csm", "expectedClass"]}}]"#,
    );
    for lang in ["java", "typescript", "ts", "javascript"] {
        let input = format!(
            "```{lang}\nMethodInvokeTest.checkInjectedInvoker(\"csmInstance\", \"MyExpectedClass.class\");\n```"
        );
        let p = check_all(input.as_bytes(), &with);
        assert_eq!(p.calls.len(), 1, "{input}");
        assert_eq!(p.calls[0].name, "MethodInvokeTest.checkInjectedInvoker");
        assert_eq!(
            args(&p, 0),
            json!({"csm": "csmInstance", "expectedClass": "MyExpectedClass.class"})
        );
        // Code that calls no offered tool is a code sample.
        let code = format!("```{lang}\nSystem.out.println(\"hi\");\nlist.add(1, 2);\n```\n");
        let p = check_all(code.as_bytes(), &with);
        assert!(p.calls.is_empty(), "{code}");
        assert_eq!(p.text, code);
    }
}

/// YAML's flow style is JSON: a call object in a `yaml` fence (Gemma 3
/// labels its JSON so) is read as in a `json` one; YAML that is not a call
/// object stays text.
#[test]
fn yaml_fences_hold_json() {
    for lang in ["yaml", "yml", "YAML"] {
        let input = format!(
            "```{lang}\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Cairo\"}}}}\n```"
        );
        let p = check_all(input.as_bytes(), &cfg());
        assert_eq!(names(&p), vec!["get_weather"], "{input}");
        assert_eq!(args(&p, 0), json!({"city": "Cairo"}));
        assert_eq!(p.text, "");
    }
    for input in [
        "```yaml\nname: get_weather\narguments:\n  city: Cairo\n```\n",
        "```yaml\n{\"debug\": true}\n```\n",
    ] {
        let p = check_all(input.as_bytes(), &cfg());
        assert!(p.calls.is_empty(), "{input}");
        assert_eq!(p.text, input);
    }
}

/// After a `#` comment line a fence's call must be of an offered tool; a
/// tool `game.save_progress` written `game_save_progress` (the OpenAI
/// spelling, no dots) is that tool. The call keeps the written name.
#[test]
fn offered_tool_in_its_openai_spelling() {
    let with = offering(
        r#"[{"name": "game.save_progress", "parameters": {"type": "object", "properties": {"stage": {"type": "integer"}, "mode": {"type": "string"}}}}]"#,
    );
    let input = b"```python\n# Save progress for easy mode at stage 7\ngame_save_progress(stage=7, mode='easy')\n\n# and hard mode\ngame_save_progress(stage=3, mode='hard')\n```\n";
    let p = check_all(input, &with);
    assert_eq!(p.calls.len(), 2);
    assert_eq!(p.calls[0].name, "game_save_progress");
    assert_eq!(args(&p, 1), json!({"stage": 3, "mode": "hard"}));
    // Another name after the comment is example code.
    let other = b"```python\n# Define it\ngame_load(stage=7)\n```\n";
    assert!(check_all(other, &with).calls.is_empty());
}

/// `{"get_weather": {…}}` (BFCL's own answer format, written by some
/// models) is a call when the key is an offered tool, in a tag, a fence or
/// bare; without the tool list, or for another key, it stays what it was.
#[test]
fn tool_name_as_the_key() {
    let with = offering(
        r#"[{"name": "hotel_booking.book", "parameters": {"type": "object", "properties": {"hotel_name": {"type": "string"}}}}]"#,
    );
    for input in [
        &br#"[{"hotel_booking.book": {"hotel_name": "Sheraton"}}, {"hotel_booking.book": {"hotel_name": "Hilton"}}]"#[..],
        b"```json\n[{'hotel_booking.book': {'hotel_name': 'Sheraton'}}, {'hotel_booking.book': {'hotel_name': 'Hilton'}}]\n```",
        br#"<tool_call>{"hotel_booking.book": {"hotel_name": "Sheraton"}}</tool_call><tool_call>{"hotel_booking.book": {"hotel_name": "Hilton"}}</tool_call>"#,
    ] {
        let p = check_all(input, &with);
        assert_eq!(p.calls.len(), 2, "{}", String::from_utf8_lossy(input));
        assert_eq!(p.calls[0].name, "hotel_booking.book");
        assert_eq!(args(&p, 1), json!({"hotel_name": "Hilton"}));
        assert!(p.text.is_empty());
        // Without the tool list it is data, not a call.
        let p = check_all(input, &cfg());
        assert!(p.calls.is_empty(), "{}", String::from_utf8_lossy(input));
    }
    let p = check_all(br#"{"other": {"hotel_name": "X"}}"#, &with);
    assert!(p.calls.is_empty());
}

#[test]
fn name_after_arguments() {
    let p = check_all(
        b"{\"arguments\": {\"city\": \"Paris\"}, \"name\": \"get_weather\"}",
        &cfg(),
    );
    assert_eq!(p.calls[0].name, "get_weather");
    assert_eq!(args(&p, 0), json!({"city": "Paris"}));
}

/// corpus/POLICY.md P7: a `name` inside the arguments is an argument, not
/// the tool's name — in a Hermes block, bare, and as a later element of a
/// list whose first call is complete (where, before, whether it was moved out
/// depended on chunking: fuzz finding `content_split-10`).
#[test]
fn name_inside_arguments_is_no_name() {
    let p = check_all(
        b"<tool_call>\n{\"arguments\": {\"command\": \"pwd\", \"name\": \"run_shell\"}}\n</tool_call>",
        &cfg(),
    );
    assert!(p.calls.is_empty());
    let p = check_all(
        br#"[{"name":"f","arguments":{}},{"argument" {"name":"g"}}]"#,
        &cfg(),
    );
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.calls[0].name, "f");
    assert_eq!(args(&p, 0), json!({}));
}

#[test]
fn no_false_positives() {
    for input in [
        &b"Config:\n```json\n{\"debug\": true}\n```\nthat's it"[..],
        b"Braces {like this} in prose, and {\"a\": 1}.",
        b"A list [1, 2, 3] and [{\"x\": 1}] here.",
        b"```python\nprint({\"name\": \"x\", \"arguments\": {}})\n```",
        b"{\"name\": \"Alice\", \"age\": 30}",
    ] {
        let p = check_all(input, &cfg());
        assert!(
            p.calls.is_empty(),
            "false positive in {:?}",
            String::from_utf8_lossy(input)
        );
        assert_eq!(p.text.as_bytes(), input);
    }
}

#[test]
fn reasoning() {
    let p = check_all(
        b"<think>Maybe <tool_call>{\"name\":\"x\",\"arguments\":{}}</tool_call>?</think>Answer.",
        &cfg(),
    );
    assert!(p.calls.is_empty(), "never extract a call from reasoning");
    assert_eq!(
        p.thinking,
        "Maybe <tool_call>{\"name\":\"x\",\"arguments\":{}}</tool_call>?"
    );
    assert_eq!(p.text, "Answer.");

    let c = cfg().with_prefill("<|im_start|>assistant\n<think>\n");
    let p = check_all(
        b"I should call it.</think>\n<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
        &c,
    );
    assert_eq!(p.thinking, "I should call it.");
    assert_eq!(p.calls.len(), 1);

    let p = check_all(b"<thinking>hmm</thinking>ok", &cfg());
    assert_eq!(p.thinking, "hmm");
}

#[test]
fn dialect_restriction() {
    let c = cfg().with_dialects(vec![Dialect::Hermes]);
    let p = check_all(b"{\"name\": \"f\", \"arguments\": {}}", &c);
    assert!(p.calls.is_empty());
    let c = cfg().with_dialects(vec![Dialect::Json]);
    let p = check_all(
        b"<tool_call>x</tool_call>{\"name\": \"f\", \"arguments\": {}}",
        &c,
    );
    assert_eq!(p.calls.len(), 1);
}

#[test]
fn known_tools_allow_missing_arguments() {
    let c = offering(r#"[{"type":"function","function":{"name":"get_time","parameters":{}}}]"#);
    let p = check_all(b"{\"name\": \"get_time\"}", &c);
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.calls[0].arguments, "{}");
    // Cut short before its arguments, still a (truncated) call.
    let p = check_all(b"{\"name\": \"get_time\", \"argu", &c);
    assert_eq!(p.calls.len(), 1);
    assert!(p.calls[0].truncated);
}

/// A tool definition the model echoes is no call, also when it is cut off
/// before its parameters (`max_tokens` in the middle of the tool list, as in
/// gemma3-xml-search-000 of corpus/): its `description` shows what it is,
/// though its name is an offered tool's (POLICY.md, P4).
#[test]
fn a_definition_cut_before_its_parameters_is_no_call() {
    let c = offering(r#"[{"type":"function","function":{"name":"get_time","parameters":{}}}]"#);
    for input in [
        &b"[\n  {\n    \"type\": \"function\",\n    \"function\": {\n      \"name\": \"get_time\",\n      \"description\": \"Tell the ti"[..],
        b"{\"name\": \"get_time\", \"description\": \"Tell the time.\"}",
    ] {
        let p = check_all(input, &c);
        assert!(p.calls.is_empty(), "{}", String::from_utf8_lossy(input));
        assert_eq!(p.text.as_bytes(), input);
    }
}

#[test]
fn repairs_inside_calls() {
    let p = check_all(
        b"<tool_call>{'name': 'f', 'arguments': {'path': 'C:\\Users\\bob', 'n': 007, 'ok': None,}}</tool_call>",
        &cfg(),
    );
    // `\U` is an invalid escape (backslash kept); `\b` is valid JSON (a backspace) and is kept as is.
    assert_eq!(
        args(&p, 0),
        json!({"path": "C:\\Users\u{8}ob", "n": "007", "ok": null})
    );
    let kinds = kinds(&p.calls[0]);
    assert!(kinds.contains(&RepairKind::SingleQuotes));
    assert!(kinds.contains(&RepairKind::InvalidEscape));
    assert!(kinds.contains(&RepairKind::LeadingZeros));
    assert!(kinds.contains(&RepairKind::PythonLiteral));
    assert!(kinds.contains(&RepairKind::TrailingComma));
}

#[test]
fn model_ids_are_kept() {
    let p = check_all(
        b"<tool_call>{\"id\": \"call_abc\", \"name\": \"f\", \"arguments\": {}}</tool_call>",
        &cfg(),
    );
    assert_eq!(p.calls[0].id, "call_abc");
}

#[test]
fn utf8_split_everywhere() {
    let p = check_all("Voilà 日本 <tool_call>{\"name\": \"é\", \"arguments\": {\"q\": \"日本語 ✓\"}}</tool_call> fin ✓".as_bytes(), &cfg());
    assert_eq!(p.calls[0].name, "é");
    assert_eq!(args(&p, 0), json!({"q": "日本語 ✓"}));
}

/// A list of call objects assigned to a name, or after one (`requests = [`,
/// `functionCall[`), is read inside a fence as it is in text (BFCL rows of
/// Mistral models); an assigned list that holds no call stays code.
#[test]
fn named_list_of_calls_in_a_fence() {
    let cases: [(&str, &[&str]); 3] = [
        (
            "Here is the request:\n\n```python\nrequests = [\n    {\"name\": \"get_temp\", \"arguments\": {\"location\": \"Seattle\", \"hours\": 3}},\n    {\"name\": \"get_temp\", \"arguments\": {\"location\": \"LA\", \"hours\": 3}}\n]\n```\n\nSend it.",
            &["get_temp", "get_temp"],
        ),
        (
            "```java\nfunctionCall[{\n  \"name\": \"Plugin_fullMaster\",\n  \"arguments\": {\"term\": \"42\"}\n}]\n```\n",
            &["Plugin_fullMaster"],
        ),
        ("```python\ncalls =[{\"name\": \"f\", \"arguments\": {}}]\n```", &["f"]),
    ];
    for (input, names) in cases {
        let p = check_all(input.as_bytes(), &cfg());
        let got: Vec<&str> = p.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(got, names, "{input}");
    }
    let p = check_all(
        b"Here is the request:\n\n```python\nrequests = [\n    {\"name\": \"get_temp\", \"arguments\": {\"location\": \"Seattle\", \"hours\": 3}}]\n```\n\nSend it.",
        &cfg(),
    );
    assert_eq!(args(&p, 0), json!({"location": "Seattle", "hours": 3}));
    assert_eq!(p.text, "Here is the request:\n\n\n\nSend it.");
    // Data, not calls: the fence stays text, whole.
    for code in [
        "```python\nrows = [{\"id\": 1, \"label\": \"a\"}]\nprint(rows)\n```\n",
        "```python\nx = [1, 2]\n```\n",
        "```js\nconst items = [{ a: 1 }];\n```\n",
    ] {
        let p = check_all(code.as_bytes(), &cfg());
        assert!(p.calls.is_empty(), "{code}");
        assert_eq!(p.text, code);
    }
}

/// A call written with its arguments but no name
/// (`<tool_call>{"arguments": {…}}</tool_call>`, Hermes-2-Pro on BFCL) is
/// the offered tool whose schema alone accepts those arguments — every
/// required parameter given, every key a declared one — with an
/// `inferred_name` repair. No tool list, two tools that fit, or none: it
/// stays what it was (text).
#[test]
fn name_inferred_from_the_only_fitting_schema() {
    let with = offering(
        r#"[{"name": "db_fetch_records", "parameters": {"type": "object", "properties": {"database_name": {"type": "string"}, "table_name": {"type": "string"}, "conditions": {"type": "object"}, "fetch_limit": {"type": "integer"}}, "required": ["database_name", "table_name"]}},
            {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}, "required": ["city"]}},
            {"name": "get_time", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]"#,
    );
    let input = b"<tool_call>\n{\"arguments\": {\"database_name\": \"StudentDB\", \"table_name\": \"students\", \"conditions\": {\"school\": \"Bluebird\"}}, \"fetch_limit\": 0}\n</tool_call>\n";
    let p = check_all(input, &with);
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.calls[0].name, "db_fetch_records");
    assert_eq!(
        args(&p, 0),
        json!({"database_name": "StudentDB", "table_name": "students", "conditions": {"school": "Bluebird"}})
    );
    let kinds = kinds(&p.calls[0]);
    assert_eq!(kinds, vec![RepairKind::InferredName]);
    assert_eq!(
        p.calls[0].repairs[0].offset, 12,
        "where the envelope begins"
    );
    assert_eq!(p.text, "\n");

    // Bare, several calls, in one array; the unit makes the first one
    // `get_weather`'s alone.
    let bare = br#"[{"arguments": {"city": "Paris", "unit": "C"}}, {"parameters": {"table_name": "t", "database_name": "d"}}]"#;
    let p = check_all(bare, &with);
    let names: Vec<_> = p.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["get_weather", "db_fetch_records"]);

    for (what, input) in [
        (
            "two tools fit",
            &br#"<tool_call>{"arguments": {"city": "Paris"}}</tool_call>"#[..],
        ),
        (
            "an undeclared key",
            br#"<tool_call>{"arguments": {"city": "Paris", "days": 3}}</tool_call>"#,
        ),
        (
            "a required parameter missing",
            br#"<tool_call>{"arguments": {"table_name": "t"}}</tool_call>"#,
        ),
        (
            "no arguments key",
            br#"<tool_call>{"city": "Paris", "unit": "C"}</tool_call>"#,
        ),
    ] {
        let p = check_all(input, &with);
        assert!(p.calls.is_empty(), "{what}");
        assert_eq!(p.text.as_bytes(), input, "{what}");
    }
    // Without the tool list there is nothing to infer from.
    let p = check_all(input, &cfg());
    assert!(p.calls.is_empty());
    assert_eq!(p.text.as_bytes(), &input[..]);
}

/// A model repeating a tool's definition (corpus policy P8) is not calling
/// it: in JSON written without call markup — a bare object, a fence, the
/// OpenAI tool list — arguments that are a JSON schema make no call, and the
/// bytes stay text. Arguments that only look a little like one, or whose
/// keys the offered tool declares, are a call as before. Inside call markup
/// (`<tool_call>`) the model said it is calling, and the call starts at its
/// name: it stays a call.
#[test]
fn schema_echo_is_no_call() {
    let schema = r#"{"type": "object", "properties": {"city": {"type": "string", "description": "City name"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}"#;
    let tools = offering(&format!(
        r#"[{{"name": "get_weather", "parameters": {schema}}}]"#
    ));
    let echoes = [
        format!("```json\n{{\"name\": \"get_weather\", \"description\": \"Get the weather.\", \"parameters\": {schema}}}\n```"),
        format!("Here: {{\"name\": \"get_weather\", \"parameters\": {schema}}}"),
        format!("[\n  {{\"type\": \"function\", \"function\": {{\"name\": \"get_weather\", \"description\": \"Get the weather.\", \"parameters\": {schema}}}}}\n]"),
        // No parameters at all; and a cut-off echo (closed at the end).
        r#"{"name": "list_files", "parameters": {"type": "object", "properties": {}}}"#.to_owned(),
        format!("{{\"name\": \"get_weather\", \"arguments\": {}", &schema[..schema.len() - 30]),
    ];
    for input in &echoes {
        for cfg in [cfg(), tools.clone()] {
            let p = check_all(input.as_bytes(), &cfg);
            assert!(p.calls.is_empty(), "{input}: {:?}", p.calls);
            assert_eq!(p.text, *input);
        }
    }

    // A real call after an echo in one list is still read.
    let input = format!("[{{\"name\": \"get_weather\", \"parameters\": {schema}}}, {{\"name\": \"get_weather\", \"parameters\": {{\"city\": \"Paris\"}}}}]");
    let p = check_all(input.as_bytes(), &cfg());
    assert_eq!(p.calls.len(), 1);
    assert_eq!(args(&p, 0), json!({"city": "Paris"}));

    // Inside call markup it is a call, as the model wrote it.
    let input = format!(
        "<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {schema}}}\n</tool_call>"
    );
    let p = check_all(input.as_bytes(), &cfg());
    assert_eq!(p.calls.len(), 1);
    assert_eq!(args(&p, 0), serde_json::from_str::<Value>(schema).unwrap());

    // Not schemas: arguments as the model wrote them (P9).
    for (what, arguments) in [
        (
            "properties that are no property schemas",
            r#"{"type": "object", "properties": {"title": "Launch review"}}"#,
        ),
        (
            "another type",
            r#"{"type": "celsius", "properties": {"city": {"type": "string"}}}"#,
        ),
        (
            "a key no schema has",
            r#"{"type": "object", "properties": {"city": {"type": "string"}}, "city": "Paris"}"#,
        ),
        (
            "type not first",
            r#"{"city": "Paris", "type": "object", "properties": {}}"#,
        ),
        ("no properties", r#"{"type": "object"}"#),
    ] {
        let input = format!("{{\"name\": \"f\", \"arguments\": {arguments}}}");
        let p = check_all(input.as_bytes(), &cfg());
        assert_eq!(p.calls.len(), 1, "{what}");
        assert_eq!(
            args(&p, 0),
            serde_json::from_str::<Value>(arguments).unwrap(),
            "{what}"
        );
    }
    // A tool that takes a schema: its call is a call.
    let with = offering(
        r#"[{"name": "create_form", "parameters": {"type": "object", "properties": {"type": {"type": "string"}, "properties": {"type": "object"}}}}]"#,
    );
    let input = r#"{"name": "create_form", "arguments": {"type": "object", "properties": {"email": {"type": "string"}}}}"#;
    let p = check_all(input.as_bytes(), &with);
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.calls[0].name, "create_form");
}

/// A copy of a prompt's format example (corpus policy P5) is no call when
/// written without call markup: arguments that make no object (a
/// description in words, `[...]`, a number) or an object of ellipses only
/// (`{...}`). `null`, `""` and a string of JSON still make a call, and
/// placeholder-like values inside real arguments stay as written.
#[test]
fn placeholder_is_no_call() {
    let placeholders = [
        r#"[{"name": "first_tool", "arguments": {...}}, {"name": "second_tool", "arguments": {...}}]"#,
        "```json\n{\"name\": \"tool_name\", \"arguments\": { \u{2026} }}\n```",
        r#"Call: {"name": function name, "parameters": dictionary of argument name and its value}"#,
        r#"{"name": "get_weather", "arguments": "<args-dict>"}"#,
        r#"[{"name": "first_tool", "arguments": [...]}]"#,
        r#"{"name": "get_weather", "arguments": 3}"#,
        r#"{"name": "get_weather", "arguments": true}"#,
        r#"{"name": "get_weather", "arguments": "[\"Paris\"]"}"#,
        r#"{"name": "get_weather", "arguments": {"...": "...", "\u2026": null}}"#,
    ];
    for input in &placeholders {
        let p = check_all(input.as_bytes(), &cfg());
        assert!(p.calls.is_empty(), "{input}: {:?}", p.calls);
        assert_eq!(p.text, *input);
    }

    // Calls: arguments that make an object.
    for (input, want) in [
        (r#"{"name": "get_time", "arguments": null}"#, json!({})),
        (r#"{"name": "get_time", "arguments": ""}"#, json!({})),
        (r#"{"name": "get_time", "arguments": "  "}"#, json!({})),
        (
            r#"{"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}"#,
            json!({"city": "Paris"}),
        ),
        (
            r#"{"name": "get_weather", "arguments": {"city": "..."}}"#,
            json!({"city": "..."}),
        ),
        (
            r#"{"name": "get_weather", "arguments": {"city": "Paris", "...": null}}"#,
            json!({"city": "Paris", "...": null}),
        ),
    ] {
        let p = check_all(input.as_bytes(), &cfg());
        assert_eq!(p.calls.len(), 1, "{input}");
        assert_eq!(args(&p, 0), want, "{input}");
    }

    // A real call after a placeholder in one list is still read.
    let input = r#"[{"name": "first_tool", "arguments": {...}}, {"name": "get_weather", "arguments": {"city": "Paris"}}]"#;
    let p = check_all(input.as_bytes(), &cfg());
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.calls[0].name, "get_weather");

    // Inside call markup the model said it is calling: the value is wrapped.
    let p = check_all(
        br#"<tool_call>{"name": "run_shell", "arguments": "ls -l"}</tool_call>"#,
        &cfg(),
    );
    assert_eq!(p.calls.len(), 1);
    assert_eq!(args(&p, 0), json!({"value": "ls -l"}));
    assert_eq!(kinds(&p.calls[0]), vec![RepairKind::NonObjectArguments]);
}

fn started(events: &[toolstream::Event]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, toolstream::Event::ToolStart { .. }))
}

/// When a call's `ToolStart` goes out: inside call markup at its name; as
/// bare JSON once its arguments cannot be a tool definition — at their first
/// key, or at their end when they begin like a schema.
#[test]
fn when_calls_start() {
    let mut events = Vec::new();
    let mut parser = toolstream::Parser::new(cfg());
    parser.feed(br#"<tool_call>{"name": "get_weather", "#, &mut events);
    assert!(started(&events), "{events:?}");

    let mut events = Vec::new();
    let mut parser = toolstream::Parser::new(cfg());
    parser.feed(br#"{"name": "get_weather", "arguments": {"#, &mut events);
    assert!(!started(&events), "{events:?}");
    parser.feed(br#""city": "Par"#, &mut events);
    assert!(started(&events), "{events:?}");

    let mut events = Vec::new();
    let mut parser = toolstream::Parser::new(cfg());
    parser.feed(
        br#"{"name": "get_weather", "arguments": {"type": "object", "properties": {"#,
        &mut events,
    );
    assert!(!started(&events), "{events:?}");
    parser.feed(
        br#""city": {"type": "string"}}, "city": "Paris"}}"#,
        &mut events,
    );
    assert!(started(&events), "{events:?}");
    parser.finish(&mut events);
    assert_eq!(calls(&events).len(), 1);

    // Arguments given as a string: once it shows it holds JSON.
    let mut events = Vec::new();
    let mut parser = toolstream::Parser::new(cfg());
    parser.feed(br#"{"name": "get_weather", "arguments": ""#, &mut events);
    assert!(!started(&events), "{events:?}");
    parser.feed(br#"{\"ci"#, &mut events);
    assert!(started(&events), "{events:?}");

    // `null`: once the literal is complete.
    let mut events = Vec::new();
    let mut parser = toolstream::Parser::new(cfg());
    parser.feed(br#"{"name": "get_time", "arguments": nul"#, &mut events);
    assert!(!started(&events), "{events:?}");
    parser.feed(b"l}", &mut events);
    assert!(started(&events), "{events:?}");
}

/// A call needs a whole, non-blank name (corpus policy P4; USER-ISSUES 2.9:
/// an empty name must never create a call). A name string the input ends
/// inside is cut — `get_wea` may be the start of `get_weather` or of
/// `get_weekday` — and a blank one names nothing: either way the object is
/// no call, as a nameless one is. Inside call markup the markup is then text
/// (no call was started), and a cut or blank successor in a block that
/// already made a call is part of that block.
#[test]
fn a_call_needs_a_whole_name() {
    // The input ends inside the name: no call, all text.
    for input in [
        r#"<tool_call>{"name": "get_wea"#,
        r#"<tool_call>{"name": ""#,
        r#"<tool_call>{"arguments": {"city": "Paris"}, "name": "get_wea"#,
        r#"<function_call>{"name": "get_wea"#,
        r#"<tool_call>{"function": {"name": "get_wea"#,
        r#"<tool_call>[{"name": "get_wea"#,
        r#"{"arguments": {"city": "Paris"}, "name": "get_wea"#,
        "```json\n{\"arguments\": {\"city\": \"Paris\"}, \"name\": \"get_wea",
    ] {
        let p = check_all(input.as_bytes(), &cfg());
        assert!(p.calls.is_empty(), "{input}: {:?}", p.calls);
        assert_eq!(p.text, input);
    }

    // A blank name: no call, all text.
    for input in [
        r#"<tool_call>{"name": "", "arguments": {}}</tool_call>"#,
        r#"<tool_call>{"name": " ", "arguments": {"city": "Paris"}}</tool_call>"#,
        r#"{"name": "", "arguments": {"city": "Paris"}}"#,
        r#"[{"name": "\t", "arguments": {}}]"#,
        r#"[TOOL_CALLS][{"name": "", "arguments": {}}]"#,
        r#"<|python_tag|>{"name": "", "parameters": {}}"#,
        r#"{"function": {"name": "", "arguments": {}}}"#,
    ] {
        let p = check_all(input.as_bytes(), &cfg());
        assert!(p.calls.is_empty(), "{input}: {:?}", p.calls);
        assert_eq!(p.text, input);
    }

    // After a call in the same block, a cut or blank one is part of the block.
    for input in [
        r#"<tool_call>[{"name": "a", "arguments": {}}, {"name": "get_wea"#,
        r#"[{"name": "a", "arguments": {}}, {"name": "", "arguments": {"x": 1}}]"#,
        r#"<tool_call>[{"name": "a", "arguments": {}}, {"arguments": {"x": 1}, "name": "b"#,
    ] {
        let p = check_all(input.as_bytes(), &cfg());
        assert_eq!(names(&p), vec!["a"], "{input}");
        assert_eq!(p.text, "", "{input}");
    }
    // A separate block cut in its name is text; the calls before it stand.
    let input =
        r#"<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "list_fi"#;
    let p = check_all(input.as_bytes(), &cfg());
    assert_eq!(names(&p), vec!["a"]);
    assert_eq!(p.text, r#"<tool_call>{"name": "list_fi"#);

    // The name's closing quote was written: the name is whole, the call cut.
    let p = check_all(br#"<tool_call>{"name": "get_weather""#, &cfg());
    assert_eq!(names(&p), vec!["get_weather"]);
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p, 0), json!({}));
    // A cut argument does not make a cut name.
    let p = check_all(
        br#"<tool_call>{"name": "get_weather", "arguments": {"city": "Pa"#,
        &cfg(),
    );
    assert_eq!(names(&p), vec!["get_weather"]);
    assert_eq!(args(&p, 0), json!({"city": "Pa"}));

    // With tools offered, a blank name is a missing one: arguments that fit
    // one tool name it (a recorded repair); a cut name names nothing.
    let tools = r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]"#;
    let p = check_all(
        br#"<tool_call>{"name": "", "arguments": {"city": "Paris"}}</tool_call>"#,
        &offering(tools),
    );
    assert_eq!(names(&p), vec!["get_weather"]);
    assert_eq!(kinds(&p.calls[0]), vec![RepairKind::InferredName]);
    let input = r#"<tool_call>{"arguments": {"city": "Paris"}, "name": "get_wea"#;
    let p = check_all(input.as_bytes(), &offering(tools));
    assert!(p.calls.is_empty(), "{:?}", p.calls);
    assert_eq!(p.text, input);
}

/// A stutter of small Hermes models (30 of the public BFCL outputs, e.g.
/// `<tool_call>\n<tool_call>\n{…}</tool_call>`): the opening tag written
/// again before the call's content is markup of that call, not text with a
/// tag in it (USER-ISSUES 2.2). Without a call after it, all is text still.
#[test]
fn repeated_opening_tag_is_the_calls_markup() {
    let call = r#"{"name": "get_time", "arguments": {"tz": "UTC"}}"#;
    for (input, repeats) in [
        (format!("<tool_call>\n<tool_call>\n{call}\n</tool_call>"), 1),
        (format!("<tool_call><tool_call>{call}</tool_call>"), 1),
        (format!("<tool_call>\n\n<tool_call> \n<tool_call>\n{call}"), 2),
        (format!("<tool_use>\n<tool_use>\n[{call}]</tool_use>"), 1),
        (
            "<tool_call>\n<tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n</parameter>\n</function>\n</tool_call>"
                .to_string(),
            1,
        ),
    ] {
        let p = check_all(input.as_bytes(), &cfg());
        assert_eq!(names(&p), vec!["get_time"], "{input}");
        assert_eq!(args(&p, 0), json!({"tz": "UTC"}), "{input}");
        assert_eq!(p.text, "", "{input}");
        let n = kinds(&p.calls[0])
            .iter()
            .filter(|k| **k == RepairKind::RepeatedOpenTag)
            .count();
        assert_eq!(n, repeats, "{input}");
    }
    // Text before, a call before: only the repeat is absorbed.
    let input = format!("Sure.\n<tool_call>{call}</tool_call>\n<tool_call>\n<tool_call>\n{call}\n</tool_call>\nDone.");
    let p = check_all(input.as_bytes(), &cfg());
    assert_eq!(names(&p), vec!["get_time", "get_time"]);
    assert_eq!(p.text, "Sure.\n\n\nDone.");
    assert_eq!(kinds(&p.calls[0]), vec![]);
    assert_eq!(kinds(&p.calls[1]), vec![RepairKind::RepeatedOpenTag]);
    // No call follows: text, as a lone tag is.
    for input in [
        "<tool_call>\n<tool_call>\n",
        "<tool_call>\n<tool_call>\nNo tool needed.",
        "<tool_call><tool_call>{'output': 42}",
        "<tool_call>\n<tool_call>\n</tool_call>",
    ] {
        let p = check_all(input.as_bytes(), &cfg());
        assert!(p.calls.is_empty(), "{input}: {:?}", p.calls);
        assert_eq!(p.text, input);
    }
    // A different tag is not a repeat: the first block holds nothing.
    let input = format!("<tool_use>\n<tool_call>{call}</tool_call>");
    let p = check_all(input.as_bytes(), &cfg());
    assert_eq!(names(&p), vec!["get_time"]);
    assert_eq!(p.text, "<tool_use>\n");
}

/// A closing tag right after a call — written twice, or after a call whose
/// opening tag the model left out (`{…}\n</tool_call>`; 7 public BFCL Hermes
/// outputs, a Gemma 3 corpus entry) — is that call's markup, reported as
/// [`Event::Markup`](toolstream::Event::Markup), not text (USER-ISSUES 2.2).
/// Anywhere else a closing tag is text.
#[test]
fn a_closing_tag_after_its_call_is_markup() {
    let call = r#"{"name": "get_time", "arguments": {}}"#;
    let markups = |p: &toolstream::Parsed| {
        p.events
            .iter()
            .filter(|e| matches!(e, toolstream::Event::Markup { .. }))
            .count()
    };
    for (input, text, n) in [
        (
            format!("<tool_call>\n{call}\n</tool_call>\n</tool_call>\nDone."),
            "\n\nDone.",
            1,
        ),
        (
            format!("<tool_call>\n<tool_call>\n{call}\n</tool_call>\n</tool_call>\n"),
            "\n\n",
            1,
        ),
        (format!("{call}\n</tool_call>"), "\n", 1),
        (format!("```json\n{call}\n```\n</tool_call>"), "\n", 1),
        (
            format!("<tool_use>{call}</tool_use></tool_use> </tool_use>"),
            " ",
            2,
        ),
        (
            format!("<tool_call>{call}</tool_call>\n</tool_call>\n{call}\n</tool_call>"),
            "\n\n\n",
            2,
        ),
    ] {
        let p = check_all(input.as_bytes(), &cfg());
        assert!(!p.calls.is_empty(), "{input}");
        assert_eq!(p.text, text, "{input}");
        assert_eq!(markups(&p), n, "{input}");
    }
    // Not right after a call: text.
    for (input, text) in [
        (
            "Close a call with </tool_call>.".to_string(),
            "Close a call with </tool_call>.",
        ),
        ("</tool_call>\nHello".to_string(), "</tool_call>\nHello"),
        (
            format!("<tool_call>{call}</tool_call> ok </tool_call>"),
            " ok </tool_call>",
        ),
        (
            format!("<tool_call>{call}</tool_call><think>x</think></tool_call>"),
            "</tool_call>",
        ),
    ] {
        let p = check_all(input.as_bytes(), &cfg());
        assert_eq!(p.text, text, "{input}");
        assert_eq!(markups(&p), 0, "{input}");
    }
}

fn names(p: &toolstream::Parsed) -> Vec<&str> {
    p.calls.iter().map(|c| c.name.as_str()).collect()
}

/// `"arguments": "null"` — Groq's zero-argument calls, and models that copy
/// it — is no arguments, `{}`, as `null` and `""` are (USER-ISSUES 2.9); a
/// string that only starts like it (`"nu"`, `"nullify"`, `"null x"`) is text
/// kept as `{"value": …}`. Without call markup, `"null"` makes a call and
/// those others do not (placeholders, P5).
#[test]
fn stringified_null_is_no_arguments() {
    for input in [
        r#"<tool_call>{"name": "get_time", "arguments": "null"}</tool_call>"#,
        r#"<tool_call>{"name": "get_time", "arguments": " null  "}</tool_call>"#,
        r#"<tool_call>{"name": "get_time", "arguments": "\u006eull"}</tool_call>"#,
        r#"{"name": "get_time", "arguments": "null"}"#,
        r#"[{"name": "get_time", "arguments": "null"}, {"name": "get_date", "arguments": "null"}]"#,
    ] {
        let p = check_all(input.as_bytes(), &cfg());
        assert!(!p.calls.is_empty(), "{input}");
        for c in &p.calls {
            assert_eq!(c.arguments, "{}", "{input}");
            assert_eq!(kinds(c), vec![RepairKind::NonObjectArguments], "{input}");
        }
        assert_eq!(p.text, "", "{input}");
    }
    for (value, want) in [
        ("nu", "nu"),
        ("nullify", "nullify"),
        ("null x", "null x"),
        ("none", "none"),
    ] {
        let input = format!(r#"<tool_call>{{"name": "f", "arguments": "{value}"}}</tool_call>"#);
        let p = check_all(input.as_bytes(), &cfg());
        assert_eq!(args(&p, 0), json!({ "value": want }), "{input}");
        let bare = format!(r#"{{"name": "f", "arguments": "{value}"}}"#);
        let p = check_all(bare.as_bytes(), &cfg());
        assert!(p.calls.is_empty(), "{bare}");
        assert_eq!(p.text, bare);
    }
    // Cut inside: what was written, kept as text.
    let p = check_all(br#"<tool_call>{"name": "f", "arguments": "nul"#, &cfg());
    assert_eq!(args(&p, 0), json!({"value": "nul"}));
    assert!(p.calls[0].truncated);
}

/// A model writing a JSON file (or a command that prints JSON) often leaves
/// the quotes of the JSON inside the string argument unescaped. The object
/// literal stays the argument's content, in every chunking — the lane, which
/// streams plain arguments, must not take such a string over.
#[test]
fn json_written_unescaped_inside_a_string_argument() {
    // A long plain stretch inside the literal's own strings: long enough for
    // the parser to hand the chunks to the lane again.
    let long = "a description of the package that runs on for a while, ".repeat(4);
    let body = format!(
        "{{\"name\": \"demo\", \"about\": \"{long}\", \"deps\": [\"a\", \"b\"], \"n\": 1}} and a tail"
    );
    let body = body.as_str();
    for wrap in [
        "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"p.json\", \"content\": \"BODY\", \"mode\": 420}}\n</tool_call>",
        "```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"p.json\", \"content\": \"BODY\", \"mode\": 420}}\n```",
    ] {
        let input = wrap.replace("BODY", body);
        let p = check_all(input.as_bytes(), &Config::default());
        let c = &p.calls[0];
        assert_eq!(c.name, "write_file");
        assert_eq!(
            c.arguments_value().unwrap(),
            json!({"path": "p.json", "content": body, "mode": 420})
        );
        assert!(kinds(c).iter().all(|k| *k == RepairKind::UnescapedQuote));
        assert!(!c.truncated);
    }
}

/// Hermes 2 Pro writes the name after the arguments but inside them, often
/// leaving the outer object unclosed: `{"arguments": {…, "name": "f"}`
/// (10 outputs of the public BFCL rows). With the tool offered, that last
/// member is the call's name, not an argument; otherwise (not an offered
/// tool, no tools, or a member after the arguments) nothing is made up.
#[test]
fn a_name_written_as_the_last_argument() {
    let tools = Tools::from_json(
        r#"[{"type": "function", "function": {"name": "requests_get", "parameters": {"type": "object",
            "properties": {"url": {"type": "string"}, "params": {"type": "object"}}}}}]"#,
    )
    .unwrap();
    let cfg = Config::default().with_tools(tools);
    for input in [
        "<tool_call>\n{\"arguments\": {\"url\": \"http://x\", \"params\": {\"t\": \"B, \\\"c\\\"\"}, \"name\": \"requests_get\"}\n</tool_call>",
        "<tool_call>\n{\"arguments\": {\"url\": \"http://x\", \"params\": {\"t\": \"B, \\\"c\\\"\"}, \"name\": \"requests_get\"}}\n</tool_call>",
    ] {
        let p = check_all(input.as_bytes(), &cfg);
        assert_eq!(p.calls.len(), 1, "{input}");
        let c = &p.calls[0];
        assert_eq!(c.name, "requests_get");
        assert_eq!(
            c.arguments_value().unwrap(),
            json!({"url": "http://x", "params": {"t": "B, \"c\""}})
        );
        assert!(kinds(c).contains(&RepairKind::SyntaxFix));
        assert!(p.text.is_empty());
    }
    // Only a trailing member naming an offered tool.
    for input in [
        "<tool_call>\n{\"arguments\": {\"url\": \"http://x\", \"name\": \"Bob\"}\n</tool_call>",
        "<tool_call>\n{\"arguments\": {\"name\": \"requests_get\", \"url\": \"http://x\"}\n</tool_call>",
    ] {
        let p = check_all(input.as_bytes(), &cfg);
        assert!(p.calls.is_empty(), "{input}");
    }
    // A member after the arguments: their brace closed where the model meant
    // it, and the `name` inside is theirs (gemma3-hermes-shell-001 in corpus/).
    for input in [
        "<tool_call>\n{\"arguments\": {\"name\": \"requests_get\"}, \"type\": \"object\"}\n</tool_call>",
        "<tool_call>\n{\"arguments\": {\"url\": \"http://x\", \"name\": \"requests_get\"}, \"extra\": 1\n</tool_call>",
    ] {
        let p = check_all(input.as_bytes(), &cfg);
        assert!(p.calls.is_empty(), "{input}");
    }
    // A member before them does not move their brace.
    let input = "<tool_call>\n{\"type\": \"function\", \"arguments\": {\"url\": \"http://x\", \"name\": \"requests_get\"}}\n</tool_call>";
    let p = check_all(input.as_bytes(), &cfg);
    assert_eq!(p.calls.len(), 1, "{input}");
    assert_eq!(p.calls[0].name, "requests_get");
    assert_eq!(
        p.calls[0].arguments_value().unwrap(),
        json!({"url": "http://x"})
    );
    let input = "<tool_call>\n{\"arguments\": {\"url\": \"http://x\", \"name\": \"requests_get\"}\n</tool_call>";
    assert!(check_all(input.as_bytes(), &Config::default())
        .calls
        .is_empty());
}
