//! Rule-by-rule tests of the normalizer on real schemas: the tool list
//! Claude Code sends (`corpus/tools/claude_code.json`) and hand-picked
//! parts of BFCL's.

use std::sync::Arc;

use serde_json::{json, Value};

use super::*;
use crate::{Event, Span, ToolCall, Tools};

fn claude_code() -> Tools {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/tools/claude_code.json");
    let text = std::fs::read_to_string(path).expect("corpus/tools/claude_code.json");
    read_tools(&text).expect("Claude Code tool list").0
}

fn tools(v: Value) -> Tools {
    read_tools_value(&v).expect("tools").0
}

/// BFCL schemas (as BFCL writes them: `dict`, `float`).
fn bfcl() -> Tools {
    tools(json!([
        {"name": "calculate_triangle_area", "parameters": {"type": "dict", "properties": {
            "base": {"type": "integer"}, "height": {"type": "integer"},
            "unit": {"type": "string", "description": "default cm"}}, "required": ["base", "height"]}},
        {"name": "math.hypot", "parameters": {"type": "dict", "properties": {
            "x": {"type": "float"}, "y": {"type": "float"}, "z": {"type": "float"}}, "required": ["x", "y"]}},
        {"name": "get_stock_info", "parameters": {"type": "dict", "properties": {
            "company_name": {"type": "string"},
            "detail_level": {"type": "string", "enum": ["summary", "detailed"]},
            "market": {"type": "string"}}, "required": ["company_name", "detail_level"]}},
        {"name": "sort_list", "parameters": {"type": "dict", "properties": {
            "elements": {"type": "array", "items": {"type": "integer"}},
            "ascending": {"type": "boolean"}}, "required": ["elements"]}}
    ]))
}

fn kinds(o: &Outcome) -> Vec<FixKind> {
    o.report.fixes.iter().map(|f| f.kind).collect()
}

fn error_kinds(o: &Outcome) -> Vec<(ErrorKind, String)> {
    o.report
        .errors
        .iter()
        .map(|e| (e.kind, e.path.clone()))
        .collect()
}

#[test]
fn a_valid_call_is_unchanged_to_the_byte() {
    let cat = Catalog::new(&claude_code());
    for (name, args) in [
        ("Read", r#"{"file_path": "/etc/hosts", "limit": 20}"#),
        (
            "Bash",
            r#"{ "command" : "ls -la", "description":"List files" }"#,
        ),
        (
            "Edit",
            r#"{"file_path":"/a.rs","old_string":"a","new_string":"b","replace_all":false}"#,
        ),
        ("TaskGet", r#"{"taskId": "1"}"#),
        ("Skill", r#"{"skill": "pdf", "args": "--fast"}"#),
    ] {
        let o = cat.normalize(name, args);
        assert!(o.report.is_ok(), "{name}: {:?}", o.report.errors);
        assert_eq!(o.report.fixes, vec![], "{name}");
        assert_eq!(o.arguments, args.trim(), "{name}");
    }
}

#[test]
fn tool_names_resolve_with_their_repair() {
    let cat = Catalog::new(&claude_code());
    for (written, want, kind) in [
        ("read", "Read", FixKind::NameCase),
        ("functions.Bash", "Bash", FixKind::NameNamespace),
        ("default_api.task_get", "TaskGet", FixKind::NameNamespace),
        ("Raed", "Read", FixKind::NameEdit),
    ] {
        let o = cat.normalize(
            written,
            r#"{"file_path": "/x", "command": "ls", "taskId": "1"}"#,
        );
        assert_eq!(o.name, want, "{written}");
        assert_eq!(o.report.fixes[0].kind, kind, "{written}");
    }
    let o = cat.normalize("delete_everything", "{}");
    assert_eq!(error_kinds(&o), [(ErrorKind::UnknownTool, String::new())]);
    assert!(!o.report.errors[0].candidates.is_empty());
}

#[test]
fn a_placeholder_name_takes_the_one_tool_that_fits() {
    let cat = Catalog::new(&bfcl());
    let o = cat.normalize(
        "tool_name",
        r#"{"company_name": "Apple", "detail_level": "summary"}"#,
    );
    assert_eq!(o.name, "get_stock_info");
    assert_eq!(kinds(&o), [FixKind::NamePlaceholder]);
    // Arguments two tools accept (or none): no guess.
    let o = cat.normalize("function_name", r#"{"nothing": 1}"#);
    assert_eq!(o.report.errors[0].kind, ErrorKind::UnknownTool);
    let strict = Catalog::with_options(
        &bfcl(),
        Options {
            placeholder_names: false,
            ..Options::default()
        },
    );
    let o = strict.normalize(
        "tool_name",
        r#"{"company_name": "Apple", "detail_level": "summary"}"#,
    );
    assert_eq!(o.report.errors[0].kind, ErrorKind::UnknownTool);
}

#[test]
fn parameter_names_resolve_against_properties() {
    let cat = Catalog::new(&claude_code());
    let o = cat.normalize("Read", r#"{"filePath": "/etc/hosts", "Limit": 5}"#);
    assert!(o.report.is_ok(), "{:?}", o.report.errors);
    assert_eq!(o.arguments, r#"{"file_path": "/etc/hosts", "limit": 5}"#);
    assert_eq!(kinds(&o), [FixKind::ParameterName, FixKind::ParameterName]);
    assert_eq!(o.report.fixes[0].path, "/file_path");
}

#[test]
fn undeclared_keys_follow_additional_properties() {
    // Claude Code's schemas say `additionalProperties: false`: dropped.
    let cat = Catalog::new(&claude_code());
    let o = cat.normalize("Bash", r#"{"command": "ls", "cwd": "/tmp"}"#);
    assert_eq!(o.arguments, r#"{"command": "ls"}"#);
    assert_eq!(kinds(&o), [FixKind::DroppedParameter]);
    assert!(o.report.is_ok());
    // With dropping off, reported.
    let keep = Catalog::with_options(
        &claude_code(),
        Options {
            drop_unknown: false,
            ..Options::default()
        },
    );
    let o = keep.normalize("Bash", r#"{"command": "ls", "cwd": "/tmp"}"#);
    assert_eq!(
        error_kinds(&o),
        [(ErrorKind::UnknownParameter, "/cwd".into())]
    );
    // BFCL's schemas do not say it: kept, valid.
    let o = Catalog::new(&bfcl()).normalize("sort_list", r#"{"elements": [3, 1], "order": "asc"}"#);
    assert_eq!(o.arguments, r#"{"elements": [3, 1], "order": "asc"}"#);
    assert!(o.report.is_ok() && o.report.fixes.is_empty());
}

#[test]
fn structural_fixes() {
    let cat = Catalog::new(&claude_code());
    let cases = [
        // Stringified, once and twice.
        (
            Value::String(r#"{"command": "ls"}"#.into()),
            vec![FixKind::StringifiedArguments],
        ),
        (
            Value::String(serde_json::to_string(r#"{"command": "ls"}"#).unwrap()),
            vec![FixKind::StringifiedArguments],
        ),
        (
            json!({"arguments": {"command": "ls"}}),
            vec![FixKind::UnwrappedArguments],
        ),
        (
            json!({"input": {"command": "ls"}}),
            vec![FixKind::UnwrappedArguments],
        ),
        (
            json!({"Bash": {"command": "ls"}}),
            vec![FixKind::UnwrappedArguments],
        ),
        (
            json!({"parameters": {"arguments": {"command": "ls"}}}),
            vec![FixKind::UnwrappedArguments, FixKind::UnwrappedArguments],
        ),
        (
            json!({"arguments": r#"{"command": "ls"}"#}),
            vec![FixKind::UnwrappedArguments],
        ),
        // Values in a schema's shell (Gemma-3-270M in corpus/real/).
        (
            json!({"type": "object", "properties": {"command": "ls"}}),
            vec![FixKind::UnwrappedArguments],
        ),
        // A bare value for the one required parameter.
        (json!("ls"), vec![FixKind::BareValue]),
    ];
    for (args, want) in cases {
        let o = cat.normalize_value("Bash", &args);
        assert_eq!(o.arguments_value(), json!({"command": "ls"}), "{args}");
        assert_eq!(kinds(&o), want, "{args}");
        assert!(o.report.is_ok(), "{args}: {:?}", o.report.errors);
    }
    // `input` declared by the tool is a parameter, not a wrapper.
    let t = tools(json!([{"name": "t", "parameters": {"type": "object",
        "properties": {"input": {"type": "object"}}}}]));
    let o = Catalog::new(&t).normalize("t", r#"{"input": {"a": 1}}"#);
    assert_eq!(o.arguments, r#"{"input": {"a": 1}}"#);
    assert!(o.report.fixes.is_empty());
    // Not an object and not fixable.
    let o = cat.normalize_value("Edit", &json!(42));
    assert_eq!(o.report.errors[0].kind, ErrorKind::InvalidArguments);
    assert_eq!(o.report.errors[0].reason, Some(InvalidReason::NotAnObject));
}

#[test]
fn scalar_coercions() {
    let cat = Catalog::new(&bfcl());
    let o = cat.normalize(
        "calculate_triangle_area",
        r#"{"base": "10", "height": 5.0, "unit": 7}"#,
    );
    assert_eq!(o.arguments, r#"{"base": 10, "height": 5, "unit": "7"}"#);
    assert_eq!(
        kinds(&o),
        [
            FixKind::StringToInteger,
            FixKind::FloatToInteger,
            FixKind::NumberToString
        ]
    );
    assert!(o.report.is_ok());
    let o = cat.normalize("math.hypot", r#"{"x": "3.5", "y": "4e0"}"#);
    assert_eq!(o.arguments_value(), json!({"x": 3.5, "y": 4.0}));
    // Only exact literals: no trimming, no words.
    let o = cat.normalize(
        "calculate_triangle_area",
        r#"{"base": " 10", "height": "ten"}"#,
    );
    assert_eq!(
        error_kinds(&o),
        [
            (ErrorKind::TypeMismatch, "/base".into()),
            (ErrorKind::TypeMismatch, "/height".into())
        ]
    );
    let o = cat.normalize(
        "sort_list",
        r#"{"elements": "[3, 1, 2]", "ascending": "true"}"#,
    );
    assert_eq!(o.arguments, r#"{"elements": [3,1,2], "ascending": true}"#);
    assert_eq!(
        kinds(&o),
        [FixKind::StringifiedValue, FixKind::StringToBoolean]
    );
    let o = cat.normalize("sort_list", r#"{"elements": "7"}"#);
    assert_eq!(o.arguments_value(), json!({"elements": [7]}));
    assert_eq!(
        kinds(&o),
        [FixKind::ScalarToArray, FixKind::StringToInteger]
    );
    assert_eq!(o.report.fixes[1].path, "/elements/0");
}

#[test]
fn enums_match_case_and_whitespace_insensitively_when_unique() {
    let cat = Catalog::new(&bfcl());
    let o = cat.normalize(
        "get_stock_info",
        r#"{"company_name": "X", "detail_level": " Summary "}"#,
    );
    assert_eq!(o.arguments_value()["detail_level"], "summary");
    assert_eq!(kinds(&o), [FixKind::EnumValue]);
    let o = cat.normalize(
        "get_stock_info",
        r#"{"company_name": "X", "detail_level": "brief"}"#,
    );
    assert_eq!(
        error_kinds(&o),
        [(ErrorKind::InvalidValue, "/detail_level".into())]
    );
    let two = tools(
        json!([{"name": "t", "parameters": {"type": "object", "properties": {
        "m": {"enum": ["Fast", "FAST"]}}}}]),
    );
    let o = Catalog::new(&two).normalize("t", r#"{"m": "fast"}"#);
    assert!(o.report.fixes.is_empty());
    assert_eq!(o.report.errors[0].kind, ErrorKind::InvalidValue);
}

#[test]
fn nested_objects_arrays_and_refs() {
    // Claude Code's ReportFindings: an array of objects with enums and integers.
    let cat = Catalog::new(&claude_code());
    let o = cat.normalize(
        "ReportFindings",
        r#"{"findings": [{"file": "a.rs", "line": "12", "summary": "s", "failure_scenario": "f", "verdict": "confirmed"}]}"#,
    );
    assert_eq!(kinds(&o), [FixKind::StringToInteger, FixKind::EnumValue]);
    assert_eq!(o.report.fixes[0].path, "/findings/0/line");
    assert_eq!(o.report.fixes[1].path, "/findings/0/verdict");
    assert!(o.report.is_ok(), "{:?}", o.report.errors);
    // One finding given bare: wrapped into the array.
    let o = cat.normalize(
        "ReportFindings",
        r#"{"findings": {"file": "a.rs", "summary": "s", "failure_scenario": "f"}}"#,
    );
    assert_eq!(kinds(&o), [FixKind::ScalarToArray]);
    assert!(o.report.is_ok(), "{:?}", o.report.errors);
    // TaskUpdate: `status` is a union of an enum and a const.
    let o = cat.normalize(
        "TaskUpdate",
        r#"{"taskId": 7, "status": "Completed", "addBlocks": "3"}"#,
    );
    assert_eq!(
        o.arguments,
        r#"{"taskId": "7", "status": "completed", "addBlocks": ["3"]}"#
    );
    assert_eq!(
        kinds(&o),
        [
            FixKind::NumberToString,
            FixKind::EnumValue,
            FixKind::ScalarToArray
        ]
    );
    let t = tools(json!([{"name": "order", "parameters": {"type": "object",
        "$defs": {"item": {"type": "object", "properties": {"qty": {"type": "integer"}, "sku": {"type": "string"}},
                           "required": ["sku"]}},
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/item"}}}}}]));
    let o = Catalog::new(&t).normalize(
        "order",
        r#"{"items": [{"SKU": "a1", "qty": "2"}, {"sku": 5}]}"#,
    );
    assert_eq!(
        o.arguments_value(),
        json!({"items": [{"sku": "a1", "qty": 2}, {"sku": "5"}]})
    );
    let paths: Vec<&str> = o.report.fixes.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["/items/0/sku", "/items/0/qty", "/items/1/sku"]);
}

#[test]
fn unions_take_the_first_valid_member_or_the_cheapest_coercion() {
    let t = tools(
        json!([{"name": "u", "parameters": {"type": "object", "properties": {
        "a": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "b": {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "boolean"}]},
        "c": {"type": ["integer", "boolean"]},
        "d": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}}}]),
    );
    let cat = Catalog::new(&t);
    // Valid as it is: untouched, even where another member would also take a coercion.
    let o = cat.normalize("u", r#"{"a": "5"}"#);
    assert!(o.report.fixes.is_empty());
    // None valid as it is: the member that takes a coercion.
    let o = cat.normalize("u", r#"{"b": "true"}"#);
    assert_eq!(o.arguments_value(), json!({"b": true}));
    let o = cat.normalize("u", r#"{"b": 7}"#);
    assert_eq!(o.arguments_value(), json!({"b": [7]}));
    let o = cat.normalize("u", r#"{"c": "false"}"#);
    assert_eq!(o.arguments_value(), json!({"c": false}));
    // A tie (same cost, different results) is not guessed.
    // (`"3"` as integer or as number is one value: no tie there.)
    let tie = tools(
        json!([{"name": "t", "parameters": {"type": "object", "properties": {
        "x": {"anyOf": [{"type": "string"}, {"type": "array"}]}}}}]),
    );
    let o = Catalog::new(&tie).normalize("t", r#"{"x": true}"#);
    assert!(o.report.fixes.is_empty(), "{:?}", o.report.fixes);
    assert_eq!(o.report.errors[0].kind, ErrorKind::TypeMismatch);
}

#[test]
fn null_for_an_optional_parameter_is_removed() {
    let cat = Catalog::new(&claude_code());
    let o = cat.normalize("Read", r#"{"file_path": "/x", "offset": null, "limit": 3}"#);
    assert_eq!(o.arguments, r#"{"file_path": "/x", "limit": 3}"#);
    assert_eq!(kinds(&o), [FixKind::NullRemoved]);
    let o = cat.normalize("Read", r#"{"offset": null, "file_path": "/x"}"#);
    assert_eq!(o.arguments, r#"{ "file_path": "/x"}"#);
    // A required one is reported, not removed.
    let o = cat.normalize("Read", r#"{"file_path": null}"#);
    assert_eq!(
        error_kinds(&o),
        [(ErrorKind::TypeMismatch, "/file_path".into())]
    );
}

#[test]
fn validation_errors_are_typed_with_pointers_and_feedback() {
    let cat = Catalog::new(&claude_code());
    let o = cat.normalize("Edit", r#"{"file_path": "/a", "old_string": ["x"]}"#);
    let errs = error_kinds(&o);
    assert!(
        errs.contains(&(ErrorKind::MissingRequired, "/new_string".into())),
        "{errs:?}"
    );
    assert!(
        errs.contains(&(ErrorKind::TypeMismatch, "/old_string".into())),
        "{errs:?}"
    );
    let fb = o.feedback().unwrap();
    assert!(fb.starts_with(feedback::HEADER));
    assert!(
        fb.contains("• Edit.new_string: missing required parameter `new_string`"),
        "{fb}"
    );
    assert!(fb.contains("(expected: string, got: [\"x\"])"), "{fb}");
    assert!(fb.lines().count() <= 10, "{fb}");
}

#[test]
fn copied_templates_are_invalid_arguments_with_a_reason() {
    let cat = Catalog::new(&claude_code());
    for (args, reason) in [
        (
            r#"{"type": "object", "properties": {"command": {"type": "string"}}}"#,
            InvalidReason::SchemaCopy,
        ),
        (
            r#"{"command": {"type": "string", "description": "The command"}}"#,
            InvalidReason::SchemaCopy,
        ),
        (r#""<args-json-object>""#, InvalidReason::Placeholder),
        (r#"{"arg1": "value1"}"#, InvalidReason::Placeholder),
    ] {
        let o = cat.normalize("Bash", args);
        assert_eq!(o.report.errors.len(), 1, "{args}: {:?}", o.report.errors);
        assert_eq!(
            o.report.errors[0].kind,
            ErrorKind::InvalidArguments,
            "{args}"
        );
        assert_eq!(o.report.errors[0].reason, Some(reason), "{args}");
        assert!(o.feedback().unwrap().contains("real values"));
    }
}

#[test]
fn strict_mode_reports_instead_of_fixing() {
    let cat = Catalog::with_options(&bfcl(), Options::strict());
    let o = cat.normalize("calculate_triangle_area", r#"{"Base": "10", "height": 5}"#);
    assert!(o.report.fixes.is_empty());
    assert_eq!(o.arguments, r#"{"Base": "10", "height": 5}"#);
    assert_eq!(
        error_kinds(&o),
        [(ErrorKind::MissingRequired, "/base".into())]
    );
}

#[test]
fn normalizing_twice_equals_once() {
    let cat = Catalog::new(&claude_code());
    for (name, args) in [
        (
            "read",
            r#"{"filePath": "/x", "limit": "3", "offset": null}"#,
        ),
        (
            "Bash",
            r#"{"arguments": "{\"command\": \"ls\", \"timeout\": \"100\"}"}"#,
        ),
        (
            "TaskUpdate",
            r#"{"taskId": 3, "status": "In_Progress", "addBlocks": "4"}"#,
        ),
    ] {
        let once = cat.normalize(name, args);
        let twice = cat.normalize(&once.name, &once.arguments);
        assert_eq!(twice.arguments, once.arguments, "{name}");
        assert!(
            twice.report.fixes.is_empty(),
            "{name}: {:?}",
            twice.report.fixes
        );
        assert_eq!(twice.report.errors, once.report.errors, "{name}");
    }
}

fn stream(
    cat: &Arc<Catalog>,
    name: &str,
    args: &str,
    chunk: usize,
) -> (Vec<Normalized>, ToolCall, Report) {
    let mut n = Normalizer::new(cat.clone());
    let mut out = n.push(Event::ToolStart {
        index: 0,
        id: "c0".into(),
        name: name.into(),
        span: Span::new(0, 1),
    });
    for (k, piece) in args.as_bytes().chunks(chunk.max(1)).enumerate() {
        out.extend(n.push(Event::ToolArgs {
            index: 0,
            delta: piece.into(),
            span: Span::new(k as u64, k as u64 + 1),
        }));
    }
    out.extend(n.push(Event::ToolEnd {
        call: Box::new(ToolCall {
            index: 0,
            id: "c0".into(),
            name: name.into(),
            arguments: args.into(),
            repairs: Vec::new(),
            truncated: false,
        }),
        span: Span::new(0, 9),
    }));
    out.extend(n.finish());
    let end = out.iter().find_map(|e| match &e.event {
        Event::ToolEnd { call, .. } => {
            Some(((**call).clone(), (**e.report.as_ref().unwrap()).clone()))
        }
        _ => None,
    });
    let (call, report) = end.expect("a ToolEnd");
    (out, call, report)
}

fn deltas(out: &[Normalized]) -> String {
    out.iter()
        .filter_map(|e| match &e.event {
            Event::ToolArgs { delta, .. } => Some(String::from_utf8_lossy(delta).into_owned()),
            _ => None,
        })
        .collect()
}

#[test]
fn streaming_equals_one_shot_at_every_chunk_size() {
    let cat = Arc::new(Catalog::new(&claude_code()));
    for (name, args) in [
        (
            "read",
            r#"{"filePath": "/x", "limit": "3", "offset": null, "zzz": [1, {"a": "}"}]}"#,
        ),
        (
            "Bash",
            r#"{"arguments": "{\"command\": \"ls\", \"timeout\": \"100\"}"}"#,
        ),
        ("Bash", r#" "echo \"hi\"" "#),
        (
            "tool_name",
            r#"{"notebook_path": "/n.ipynb", "new_source": "x", "cell_type": "Code"}"#,
        ),
        ("nope", r#"{"a": 1}"#),
        (
            "Edit",
            r#"{"file_path": "/a", "old_string": "\u00e9\\\"", "new_string": 5, "replace_all": "false"}"#,
        ),
    ] {
        let one = cat.normalize(name, args);
        for chunk in 1..=args.len() {
            let (out, call, report) = stream(&cat, name, args, chunk);
            assert_eq!(deltas(&out), call.arguments, "{name} {args} @{chunk}");
            assert_eq!(call.arguments, one.arguments, "{name} {args} @{chunk}");
            assert_eq!(call.name, one.name, "{name} @{chunk}");
            assert_eq!(report, one.report, "{name} {args} @{chunk}");
        }
    }
}

#[test]
fn a_long_string_argument_streams_through() {
    let cat = Arc::new(Catalog::new(&claude_code()));
    let body = "x".repeat(1 << 20);
    let args = format!(r#"{{"file_path": "/big", "content": "{body}"}}"#);
    let mut n = Normalizer::new(cat.clone());
    n.push(Event::ToolStart {
        index: 0,
        id: "c".into(),
        name: "Write".into(),
        span: Span::default(),
    });
    let mut streamed = 0usize;
    let chunks: Vec<&[u8]> = args.as_bytes().chunks(4096).collect();
    for (k, c) in chunks.iter().enumerate() {
        let out = n.push(Event::ToolArgs {
            index: 0,
            delta: (*c).into(),
            span: Span::default(),
        });
        let got: usize = out
            .iter()
            .map(|e| match &e.event {
                Event::ToolArgs { delta, .. } => delta.len(),
                _ => 0,
            })
            .sum();
        // Each chunk of the string comes out as soon as it goes in.
        if k > 0 && k + 1 < chunks.len() {
            assert_eq!(got, c.len(), "chunk {k}");
        }
        streamed += got;
    }
    assert!(
        streamed >= args.len() - 2,
        "held back {} bytes",
        args.len() - streamed
    );
}

#[test]
fn a_catalog_and_a_normalizer_can_be_shared_across_threads() {
    fn shared<T: Send + Sync>() {}
    fn sent<T: Send>() {}
    shared::<Catalog>();
    sent::<Normalizer>();
}

#[test]
fn repair_lists_are_capped_and_the_rest_counted() {
    let t = bfcl();
    let args = r#"{"elements": ["1", "2", "3", "4", "5"], "ascending": "true"}"#;
    let want = r#"{"elements": [1,2,3,4,5], "ascending": true}"#;
    for (max, listed) in [(0, 0), (1, 1), (3, 3), (usize::MAX, 7)] {
        let cat = Catalog::with_options(
            &t,
            Options {
                limits: NormalizeLimits {
                    max_repairs: max,
                    ..NormalizeLimits::default()
                },
                ..Options::default()
            },
        );
        let o = cat.normalize("Sort_List", args);
        // The repairs are all made; only the list is cut (the name's first).
        assert_eq!(o.arguments, want, "max {max}");
        assert!(o.report.is_ok());
        assert_eq!(o.report.fixes.len(), listed, "max {max}");
        assert_eq!(o.report.fixes_omitted, 7 - listed, "max {max}");
        assert!(!o.report.unrepaired());
        if listed > 0 {
            assert_eq!(o.report.fixes[0].kind, FixKind::NameCase);
        }
        // Streaming agrees at every chunking.
        let cat = Arc::new(cat);
        for chunk in [1, 5, args.len()] {
            let (_, call, report) = stream(&cat, "Sort_List", args, chunk);
            assert_eq!(call.arguments, want);
            assert_eq!(report, o.report, "max {max} @{chunk}");
        }
    }
    // A union's choice counts the repairs it made even when none is listed.
    let u = tools(
        json!([{"name": "u", "parameters": {"type": "object", "properties": {
        "b": {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "boolean"}]}}}}]),
    );
    let cat = Catalog::with_options(
        &u,
        Options {
            limits: NormalizeLimits {
                max_repairs: 0,
                ..NormalizeLimits::default()
            },
            ..Options::default()
        },
    );
    let o = cat.normalize("u", r#"{"b": "true"}"#);
    assert_eq!(o.arguments_value(), json!({"b": true}));
    assert_eq!((o.report.fixes.len(), o.report.fixes_omitted), (0, 1));
}

/// Every call of `corpus/real/` (both models) with the catalog of the
/// tools its request offered: (catalog, name, arguments).
fn corpus_real_calls() -> Vec<(Arc<Catalog>, String, String)> {
    let mut cases = Vec::new();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/real");
    for f in ["smollm2-135m.jsonl", "gemma3-270m.jsonl"] {
        let text = std::fs::read_to_string(format!("{dir}/{f}")).expect("corpus/real");
        for line in text.lines() {
            let row: Value = serde_json::from_str(line).unwrap();
            let Ok((t, _)) = read_tools_value(&row["tools"]) else {
                continue;
            };
            let cat = Arc::new(Catalog::new(&t));
            let parsed = crate::parse(
                row["text"].as_str().unwrap_or_default().as_bytes(),
                &crate::Config::default().with_tools(t.clone()),
            );
            for c in parsed.calls {
                cases.push((cat.clone(), c.name.to_string(), c.arguments.clone()));
            }
        }
    }
    cases
}

/// The fast path never vouches for a call the full check rejects: every
/// call of `corpus/real/` (with its tools) and of the rule tests' schemas,
/// as written and with its arguments cut short or altered.
#[test]
fn the_fast_path_agrees_with_the_full_check() {
    let mut cases = corpus_real_calls();
    let cc = Arc::new(Catalog::new(&claude_code()));
    let b = Arc::new(Catalog::new(&bfcl()));
    for (cat, name, args) in [
        (&cc, "Read", r#"{"file_path": "/etc/hosts", "limit": 20}"#),
        (&cc, "Read", r#"{"file_path": "/etc/hosts", "limit": 2.0}"#),
        (&cc, "Read", r#"{"file_path": "a\u0001", "limit": 2}"#),
        (&cc, "Read", r#"{"file_path": "\ud800", "limit": 2}"#),
        (&cc, "Read", r#"{"file_path": "\q"}"#),
        (&cc, "Read", r#"{"file_path": "a" "limit": 2}"#),
        (&cc, "Read", r#"{"file_path": "a",, "limit": 2}"#),
        (&cc, "Read", r#"{"file_path": "a", "file_path": "<path>"}"#),
        (&cc, "Read", r#"{"file_path": "<file-path>"}"#),
        (&cc, "Bash", r#"{"command": "ls", "timeout": 5}"#),
        (&cc, "Read", r#"{"file_path": "/a", "limit": 0}"#),
        (&cc, "Read", r#"{"limit": 1}"#),
        (&cc, "Edit", r#"{"replace_all": true}"#),
        (&cc, "Edit", r#"{}"#),
        (&cc, "Read", r#"{"file_path": "/a", "offset": -1}"#),
        (
            &cc,
            "Read",
            r#"{"file_path": "/a", "offset": 9007199254740993}"#,
        ),
        (&cc, "WebSearch", r#"{"query": "a"}"#),
        (
            &cc,
            "WebSearch",
            r#"{"query": "é
"}"#,
        ),
        (&cc, "WebSearch", r#"{"query": "é"}"#),
        (
            &cc,
            "SendMessage",
            r#"{"to": "a", "summary": "x", "message": "m"}"#,
        ),
        (
            &cc,
            "Edit",
            r#"{"file_path": "/a", "old_string": "a", "new_string": "b"}"#,
        ),
        (
            &b,
            "sort_list",
            r#"{"elements": [1, 2], "ascending": true}"#,
        ),
        (&b, "sort_list", r#"{"elements": [1, "2"]}"#),
        (
            &b,
            "get_stock_info",
            r#"{"company_name": "X", "detail_level": "summary"}"#,
        ),
        (
            &b,
            "get_stock_info",
            r#"{"company_name": "X", "detail_level": "Summary"}"#,
        ),
        (&b, "math.hypot", r#"{"x": 1, "y": 2e400}"#),
    ] {
        cases.push((cat.clone(), name.into(), args.into()));
    }
    let (mut fast, mut total, mut missing, mut held) = (0, 0, 0, 0);
    for (cat, name, args) in &cases {
        let Resolution::Tool(i, _) = cat.resolve(name) else {
            continue;
        };
        let variants = [
            args.clone(),
            args[..args.len() / 2].to_owned(),
            args.replacen(':', ": \"", 1),
            args.replacen(", \"", ", \"x", 1),
            // Undeclared keys (a string value, another value).
            args.replacen('{', "{\"zz_extra\": \"q\", ", 1),
            args.replacen('{', "{\"zz_extra\": 5, \"zz_extra\": \"q\", ", 1),
            args.replacen('{', "{\"zz_extra\": \"q\", \"zz_extra\": \"r\", ", 1),
            // Held whole and decoded (a JSON string of the arguments).
            serde_json::to_string(args).unwrap(),
            serde_json::to_string(&args.replacen(':', ": \"", 1)).unwrap(),
        ];
        for a in variants {
            let mut rw = Rewriter::new(i, 1000);
            rw.feed(cat, a.as_bytes());
            rw.finish(cat);
            total += 1;
            // The fast path (taken or not) always agrees with the full check.
            assert_eq!(cat.check(&rw), cat.check_full(&rw), "{name} {a}");
            held += usize::from(rw.decoded.is_some() && rw.vouched_output(cat.tool(i)).is_some());
            if rw.fits(cat.tool(i)) {
                fast += 1;
                assert_eq!(cat.check_full(&rw), vec![], "{name} {a}");
            }
            if rw.vouched(cat.tool(i)).is_some() {
                // Required keys missing, told without `jsonschema`.
                assert_eq!(cat.check(&rw), cat.check_full(&rw), "{name} {a}");
                missing += usize::from(!rw.fits(cat.tool(i)));
            }
        }
    }
    println!("fast path taken for {fast} of {total} calls, {missing} more missing required keys");
    assert!(missing > 20, "{missing}");
    assert!(held > 20, "held and vouched for: {held}");
    assert!(fast * 2 > total / 4, "{fast} of {total}");
}

/// The whole-object shortcut of the rewriter ends in the state `run`
/// ends in, byte for byte, on every call of `corpus/real/`, the fast-path
/// cases and variants built to fall just inside or outside it — and
/// after further pieces and `finish`, the same output, repairs and verdict.
#[test]
fn the_whole_object_shortcut_ends_as_run_does() {
    let mut cases = corpus_real_calls();
    let cc = claude_code();
    let b = bfcl();
    let shapes = tools(
        json!([{"name": "f", "parameters": {"type": "object", "properties": {
        "s": {"type": "string"}, "n": {"type": "integer", "minimum": 0}, "x": {"type": "number"},
        "b": {"type": "boolean"}, "e": {"enum": ["red", "green"]}, "l": {"type": "string", "maxLength": 3},
        "a": {"type": "array", "items": {"type": "string"}}, "z": {"type": "null"}, "any": {},
        "é": {"type": "string"}}, "required": ["s"]}}]),
    );
    let mut catalogs = vec![
        Arc::new(Catalog::new(&cc)),
        Arc::new(Catalog::new(&b)),
        Arc::new(Catalog::new(&shapes)),
    ];
    for max_held_bytes in [0, 1, 3, usize::MAX] {
        catalogs.push(with_limits(
            &shapes,
            NormalizeLimits {
                max_held_bytes,
                ..NormalizeLimits::default()
            },
        ));
    }
    catalogs.push(Arc::new(Catalog::with_options(&shapes, Options::strict())));
    for cat in &catalogs[2..] {
        for a in [
            r#"{"s": "a"}"#,
            r#"  {"s": "a"}  "#,
            "\n{\"s\":\"a\"}\n",
            "{\"s\": \"a\"}\u{c}",
            "{\u{c}\"s\": \"a\"}",
            r#"{"s": "a",}"#,
            r#"{, "s": "a"}"#,
            r#"{"s": "a",, "n": 1}"#,
            r#"{"s": "a" "n": 1}"#,
            r#"{"s": "a", "s": "b"}"#,
            r#"{"s": "a", "n": 1}"#,
            r#"{"s": "a", "n": 1 }"#,
            r#"{"s": "a", "n": -1}"#,
            r#"{"s": "a", "n": 1.0}"#,
            r#"{"s": "a", "n": "1"}"#,
            r#"{"s": "a", "n": 01}"#,
            r#"{"s": "a", "x": 1e5, "b": true}"#,
            r#"{"s": "a", "b": tru}"#,
            r#"{"s": "a", "z": null}"#,
            r#"{"s": "a", "e": "red"}"#,
            r#"{"s": "a", "e": "Red"}"#,
            r#"{"s": "a", "l": "abc"}"#,
            r#"{"s": "a", "l": "abcd"}"#,
            r#"{"s": "a", "a": ["x"]}"#,
            r#"{"s": "a", "any": 1}"#,
            r#"{"s": "a", "any": "q"}"#,
            r#"{"s": "a\n"}"#,
            "{\"s\": \"a\u{1}\"}",
            r#"{"s": "é", "é": "x"}"#,
            r#"{"\u0073": "a"}"#,
            r#"{"S": "a"}"#,
            r#"{"s": "a", "extra": "b"}"#,
            r#"{"s": "<value>"}"#,
            r#"{"s": "<value>", "e": "red"}"#,
            r#"{"s": "a"} x"#,
            r#"{"s": "a"}}"#,
            r#"{"s": "a", "n": 1"#,
            r#"{"s": "a", "n": 1"#,
            r#"{"s": "a"#,
            r#"{"s""#,
            r#"{}"#,
            r#"{ }"#,
            r#""{\"s\": \"a\"}""#,
            r#"{"arguments": {"s": "a"}}"#,
            r#"[]"#,
            "",
        ] {
            cases.push((cat.clone(), "f".into(), a.into()));
        }
    }
    let (mut taken, mut total) = (0, 0);
    for (cat, name, args) in &cases {
        let Resolution::Tool(i, _) = cat.resolve(name) else {
            continue;
        };
        let trimmed = args.trim_end_matches(|c: char| c.is_ascii_whitespace());
        let variants = [
            args.clone(),
            format!(" {args}\n"),
            args.replacen(": ", ":", 1),
            args.replacen('{', "{ ", 1),
            trimmed
                .strip_suffix('}')
                .map(|a| format!("{a}, }}"))
                .unwrap_or_default(),
            args.replacen('"', "\"\\u0041", 1),
        ];
        for a in variants {
            total += 1;
            taken += usize::from(Rewriter::takes_shortcut(cat, i, a.as_bytes()));
            for split in [a.len(), a.len() / 2] {
                let (head, tail) = a.as_bytes().split_at(split);
                let (mut x, mut y) = (Rewriter::new(i, 1000), Rewriter::new(i, 1000));
                let ox = x.feed(cat, head).to_vec();
                let oy = y.feed_by_run(cat, head);
                assert_eq!(ox, oy, "{name} {a:?}");
                assert_eq!(x.observable(), y.observable(), "{name} {a:?}");
                let (ox, oy) = (x.feed(cat, tail).to_vec(), y.feed(cat, tail).to_vec());
                assert_eq!(ox, oy, "{name} {a:?}");
                let (ox, oy) = (x.finish(cat).to_vec(), y.finish(cat).to_vec());
                assert_eq!(ox, oy, "{name} {a:?}");
                assert_eq!(x.observable(), y.observable(), "{name} {a:?}");
                assert_eq!(cat.check(&x), cat.check(&y), "{name} {a:?}");
            }
        }
    }
    println!("shortcut taken for {taken} of {total} first pieces");
    assert!(taken * 3 > total, "{taken} of {total}");
}

fn with_limits(t: &Tools, limits: NormalizeLimits) -> Arc<Catalog> {
    Arc::new(Catalog::with_options(
        t,
        Options {
            limits,
            ..Options::default()
        },
    ))
}

/// Wrappers stream once known to be alone; what is held whole is bounded
/// by `max_held_call_bytes`; streaming equals one-shot at every split on
/// both sides of the bound, and the deltas add up to valid JSON.
#[test]
fn wrappers_stream_and_holds_are_bounded() {
    let cc = claude_code();
    let small = with_limits(
        &cc,
        NormalizeLimits {
            max_held_call_bytes: 24,
            ..NormalizeLimits::default()
        },
    );
    let big = Arc::new(Catalog::new(&cc));
    let cases = [
        r#"{"arguments": {"command": "ls", "timeout": "100"}}"#,
        r#"{"arguments": {"command": "ls"}, "timeout": 5}"#,
        r#"{"parameters": {"arguments": {"command": "ls"}}}"#,
        r#""{\"command\": \"ls -la /tmp/some/long/path\"}""#,
        r#"{"type": "object", "properties": {"command": "ls"}}"#,
        r#"{"Bash": {"command": "ls"}} "#,
    ];
    for cat in [&small, &big] {
        for args in cases {
            let one = cat.normalize("Bash", args);
            let v: Value = serde_json::from_str(&one.arguments).expect(&one.arguments);
            assert!(v.is_object() || !one.report.is_ok(), "{args}");
            for chunk in 1..=args.len() {
                let (out, call, report) = stream(cat, "Bash", args, chunk);
                assert_eq!(deltas(&out), call.arguments, "{args} @{chunk}");
                assert_eq!(call.arguments, one.arguments, "{args} @{chunk}");
                assert_eq!(report, one.report, "{args} @{chunk}");
            }
        }
    }
    let run = |cat: &Catalog, args: &str| {
        let o = cat.normalize("Bash", args);
        (o.arguments_value(), kinds(&o), o.report.is_ok())
    };
    let unwrapped = (
        json!({"command": "ls", "timeout": 100}),
        vec![FixKind::UnwrappedArguments, FixKind::StringToNumber],
        true,
    );
    assert_eq!(run(&big, cases[0]), unwrapped);
    assert_eq!(run(&small, cases[0]), unwrapped);
    // Not alone: not a wrapper (dropped, as Bash declares no `arguments`)…
    let (_, k, ok) = run(&big, cases[1]);
    assert_eq!((k, ok), (vec![FixKind::DroppedParameter], false));
    // … unless its members streamed already (past the hold): joined.
    assert_eq!(
        run(&small, cases[1]),
        (
            json!({"command": "ls", "timeout": 5}),
            vec![FixKind::UnwrappedArguments],
            true
        )
    );
    assert_eq!(
        run(&big, cases[2]).1,
        [FixKind::UnwrappedArguments, FixKind::UnwrappedArguments]
    );
    assert_eq!(run(&big, cases[5]).1, [FixKind::UnwrappedArguments]);
    // A stringified call past the hold passes through, reported.
    assert!(run(&big, cases[3]).2);
    let o = small.normalize("Bash", cases[3]);
    assert_eq!(o.arguments, cases[3]);
    assert_eq!(o.report.errors[0].reason, Some(InvalidReason::NotAnObject));
    // A placeholder name past the hold: no tool is guessed, nothing is lost.
    let args = r#"{"notebook_path": "/n.ipynb", "new_source": "x", "cell_type": "code"}"#;
    assert_eq!(big.normalize("tool_name", args).name, "NotebookEdit");
    let o = small.normalize("tool_name", args);
    assert_eq!((o.name.as_str(), o.arguments.as_str()), ("tool_name", args));
    assert_eq!(o.report.errors[0].kind, ErrorKind::UnknownTool);
    for chunk in [1, 7, args.len()] {
        let (out, call, report) = stream(&small, "tool_name", args, chunk);
        assert_eq!(deltas(&out), args);
        assert_eq!((call.arguments.as_str(), report), (args, o.report.clone()));
    }
}

/// A wrapped 1 MB `Write` streams: held only until `max_held_call_bytes`.
#[test]
fn a_wrapped_long_call_streams_past_the_hold() {
    let cat = Arc::new(Catalog::new(&claude_code()));
    let body = "x".repeat(1 << 20);
    let args = format!(r#"{{"arguments": {{"file_path": "/big", "content": "{body}"}}}}"#);
    let mut n = Normalizer::new(cat.clone());
    n.push(Event::ToolStart {
        index: 0,
        id: "c".into(),
        name: "Write".into(),
        span: Span::default(),
    });
    let mut streamed = 0usize;
    for c in args.as_bytes().chunks(4096) {
        for e in n.push(Event::ToolArgs {
            index: 0,
            delta: c.into(),
            span: Span::default(),
        }) {
            if let Event::ToolArgs { delta, .. } = &e.event {
                streamed += delta.len();
            }
        }
    }
    let hold = cat.options().limits.max_held_call_bytes;
    assert!(
        streamed + hold + 4096 >= body.len(),
        "held back {} bytes",
        args.len() - streamed
    );
    let end = n.push(Event::ToolEnd {
        call: Box::new(ToolCall {
            index: 0,
            id: "c".into(),
            name: "Write".into(),
            arguments: args.clone(),
            repairs: Vec::new(),
            truncated: false,
        }),
        span: Span::default(),
    });
    let last = end.last().unwrap();
    let report = last.report.as_ref().unwrap();
    assert!(report.is_ok(), "{:?}", report.errors);
    assert_eq!(
        report.fixes.iter().map(|f| f.kind).collect::<Vec<_>>(),
        [FixKind::UnwrappedArguments]
    );
}

/// The rest of the issue's list, rule by rule: placeholder ties, the
/// `unknown_tool` feedback, the scalar coercions not shown above, `allOf`,
/// `oneOf` and stringified objects.
#[test]
fn remaining_rules_of_the_issue() {
    // Two tools accept the arguments of a placeholder name: no guess.
    let two = tools(json!([
        {"name": "a", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
        {"name": "b", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}
    ]));
    let o = Catalog::new(&two).normalize("tool_name", r#"{"q": "x"}"#);
    assert_eq!(o.name, "tool_name");
    assert_eq!(error_kinds(&o), [(ErrorKind::UnknownTool, String::new())]);
    // An unknown tool: the feedback lists the closest offered names.
    let cat = Catalog::new(&claude_code());
    let o = cat.normalize("ReadFileContents", r#"{"path": "/x"}"#);
    let near = &o.report.errors[0].candidates;
    assert_eq!(near.len(), cat.options().limits.max_suggestions);
    assert_eq!(
        near[..],
        names::closest(
            cat.names(),
            &cat.names()
                .iter()
                .map(|n| names::fold(n))
                .collect::<Vec<_>>(),
            "ReadFileContents",
            near.len()
        )[..]
    );
    let fb = o.feedback().unwrap();
    assert!(
        fb.contains("• ReadFileContents: unknown tool `ReadFileContents`"),
        "{fb}"
    );
    assert!(
        fb.contains(&format!("→ use one of: {}", near.join(", "))),
        "{fb}"
    );
    assert!(fb.ends_with(feedback::CLOSING));
    let openai = feedback::openai_tool_message("call_1", &fb);
    assert_eq!(
        (openai["role"].as_str(), openai["tool_call_id"].as_str()),
        (Some("tool"), Some("call_1"))
    );
    let anthropic = feedback::anthropic_tool_result("toolu_1", &fb);
    assert_eq!(anthropic["is_error"], true);
    // Scalars: "null" for null, a boolean for a string, a stringified object.
    let t = tools(
        json!([{"name": "s", "parameters": {"type": "object", "properties": {
        "n": {"type": "null"}, "s": {"type": "string"},
        "o": {"type": "object", "properties": {"k": {"type": "integer"}}},
        "all": {"allOf": [{"type": "integer"}, {"minimum": 0}]},
        "one": {"oneOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "string"}}]}}}}]),
    );
    let o = Catalog::new(&t).normalize(
        "s",
        r#"{"n": "null", "s": true, "o": "{\"k\": \"2\"}", "all": "4", "one": "yes"}"#,
    );
    assert_eq!(
        o.arguments_value(),
        json!({"n": null, "s": "true", "o": {"k": 2}, "all": 4, "one": ["yes"]})
    );
    assert_eq!(
        kinds(&o),
        [
            FixKind::StringToNull,
            FixKind::BooleanToString,
            FixKind::StringifiedValue,
            FixKind::StringToInteger,
            FixKind::StringToInteger,
            FixKind::ScalarToArray
        ]
    );
    assert!(o.report.is_ok(), "{:?}", o.report.errors);
    // `allOf`'s range is still checked after the coercion.
    let o = Catalog::new(&t).normalize("s", r#"{"all": "-4"}"#);
    assert_eq!(error_kinds(&o), [(ErrorKind::InvalidValue, "/all".into())]);
}

/// Every limit at 0, 1 and `usize::MAX`: no panic, valid JSON out,
/// streaming equal to one-shot.
#[test]
fn limits_at_their_extremes() {
    let cc = claude_code();
    let args = [
        r#"{"filePath": "/x", "limit": "3", "offset": null}"#,
        r#"{"arguments": {"command": "ls", "timeout": "5"}}"#,
        r#""{\"command\": \"ls\"}""#,
        r#"{"file_path": "/a", "content": "a long string of text"}"#,
    ];
    for n in [0, 1, usize::MAX] {
        let cat = with_limits(
            &cc,
            NormalizeLimits {
                max_name_distance: n,
                max_held_bytes: n,
                max_depth: n,
                max_errors: n,
                max_suggestions: n,
                max_repairs: n,
                max_held_call_bytes: n,
                max_remembered_names: n,
            },
        );
        for (name, a) in ["read", "Bash", "Bash", "Write"].into_iter().zip(args) {
            let one = cat.normalize(name, a);
            assert!(one.report.fixes.len() <= n);
            assert!(one.report.errors.len() <= n.max(1), "{n} {a}");
            for chunk in [1, 3, a.len()] {
                let (out, call, report) = stream(&cat, name, a, chunk);
                assert_eq!(deltas(&out), call.arguments, "{n} {a} @{chunk}");
                assert_eq!(
                    (call.arguments, report),
                    (one.arguments.clone(), one.report.clone()),
                    "{n} {a} @{chunk}"
                );
            }
        }
    }
}

/// A wrapper inside a wrapper whose value is not an object: a JSON string
/// of the arguments is decoded, a scalar stays a member — and the output is
/// JSON either way (it once lost the member's colon: `{"arguments"5}`),
/// streamed or not, on both sides of the hold.
#[test]
fn a_nested_wrapper_holding_a_string_or_a_scalar() {
    let t = bfcl();
    let big = Arc::new(Catalog::new(&t));
    let small = with_limits(
        &t,
        NormalizeLimits {
            max_held_call_bytes: 16,
            ..NormalizeLimits::default()
        },
    );
    let cases = [
        r#"{"arguments": {"input": "{\"base\": 1, \"height\": 2}"}}"#,
        r#" {"params": {"args": "{\"base\": \"1\", \"height\": 2}"}} "#,
        r#"{"arguments": {"arguments": 5}}"#,
        r#"{"arguments": {"params": "x", "base": 1}}"#,
    ];
    for cat in [&big, &small] {
        for args in cases {
            let one = cat.normalize("calculate_triangle_area", args);
            assert!(
                serde_json::from_str::<Value>(&one.arguments).is_ok(),
                "{args} -> {}",
                one.arguments
            );
            for chunk in 1..=args.len() {
                let (out, call, report) = stream(cat, "calculate_triangle_area", args, chunk);
                assert_eq!(deltas(&out), call.arguments, "{args} @{chunk}");
                assert_eq!(call.arguments, one.arguments, "{args} @{chunk}");
                assert_eq!(report, one.report, "{args} @{chunk}");
            }
        }
    }
    let o = big.normalize("calculate_triangle_area", cases[0]);
    assert!(o.report.is_ok(), "{:?}", o.report);
    assert_eq!(o.arguments_value(), json!({"base": 1, "height": 2}));
    assert_eq!(
        kinds(&o),
        [FixKind::UnwrappedArguments, FixKind::UnwrappedArguments]
    );
    let o = big.normalize("calculate_triangle_area", cases[1]);
    assert!(o.report.is_ok(), "{:?}", o.report);
    assert_eq!(o.arguments_value(), json!({"base": 1, "height": 2}));
    assert_eq!(
        kinds(&o),
        [
            FixKind::UnwrappedArguments,
            FixKind::UnwrappedArguments,
            FixKind::StringToInteger
        ]
    );
    let o = big.normalize("calculate_triangle_area", cases[2]);
    assert_eq!(o.arguments_value(), json!({"arguments": 5}));
    assert_eq!(
        error_kinds(&o),
        [
            (ErrorKind::MissingRequired, "/base".into()),
            (ErrorKind::MissingRequired, "/height".into())
        ]
    );
    // Past a 16-byte hold the inner members streamed: the scalar is a member.
    let o = small.normalize("calculate_triangle_area", cases[2]);
    assert_eq!(o.arguments_value(), json!({"arguments": 5}));
}
