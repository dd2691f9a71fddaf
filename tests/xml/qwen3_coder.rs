//! Qwen3-Coder / Qwen3.5+ XML.

use crate::common::{check_all, run_chunked};
use crate::util::{args, auto, deltas, kinds, weather_tools};
use serde_json::json;
use toolstream::{Config, Dialect, Parsed, RepairKind};

const CATALOGUE: &str = "<tool_call>\n<function=get_weather>\n<parameter=location>\nHangzhou\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";

#[test]
fn catalogue_example() {
    for cfg in [
        auto(),
        Config::default().with_dialects(vec![Dialect::Qwen3Coder]),
        weather_tools(),
    ] {
        let p = check_all(CATALOGUE.as_bytes(), &cfg);
        assert_eq!(p.calls.len(), 1);
        assert_eq!(p.calls[0].name, "get_weather");
        assert_eq!(
            p.calls[0].arguments,
            r#"{"location": "Hangzhou", "days": 3}"#
        );
        assert!(p.calls[0].repairs.is_empty(), "{:?}", p.calls[0].repairs);
        assert!(!p.calls[0].truncated);
        assert_eq!(p.text, "");
    }
}

#[test]
fn catalogue_example_byte_by_byte_streams_strings() {
    let ev = run_chunked(CATALOGUE.as_bytes(), 1, &auto());
    let p = Parsed::from_events(ev);
    let d = deltas(&p, 0);
    // The string value streams as it arrives, a byte at a time, before its closing tag.
    let h = d
        .iter()
        .position(|x| x.ends_with("\"H"))
        .expect("opening quote with the first byte");
    assert_eq!(&d[h + 1..h + 4], ["a", "n", "g"], "{d:?}");
    assert_eq!(d.concat(), r#"{"location": "Hangzhou", "days": 3}"#);
    // The number is written in one piece once it is known.
    assert_eq!(d.last().map(String::as_str), Some("3}"), "{d:?}");
}

#[test]
fn string_schema_keeps_numbers_as_strings() {
    let p = check_all(
        b"<tool_call>\n<function=set_flag>\n<parameter=code>\n0042\n</parameter>\n<parameter=on>\nTrue\n</parameter>\n<parameter=ratio>\n\"0.5\"\n</parameter>\n<parameter=tags>\n['a', 'b']\n</parameter>\n</function>\n</tool_call>",
        &weather_tools(),
    );
    assert_eq!(
        args(&p, 0),
        json!({"code": "0042", "on": true, "ratio": 0.5, "tags": ["a", "b"]})
    );
    let k = kinds(&p, 0);
    assert_eq!(
        k.iter().filter(|k| **k == RepairKind::TypeCoercion).count(),
        2,
        "{k:?}"
    );
    assert!(k.contains(&RepairKind::SingleQuotes));
}

#[test]
fn untyped_values() {
    let p = check_all(
        b"<function=calculate>\n<parameter=x>\n2.75\n</parameter>\n<parameter=y>\n42\n</parameter>\n<parameter=enabled>\ntrue\n</parameter>\n<parameter=items>\n[\"a\", \"b\", \"c\"]\n</parameter>\n<parameter=s>\n3 apples\n</parameter>\n</function>",
        &auto(),
    );
    assert_eq!(
        args(&p, 0),
        json!({"x": 2.75, "y": 42, "enabled": true, "items": ["a", "b", "c"], "s": "3 apples"})
    );
    assert!(p.calls[0].repairs.is_empty());
}

#[test]
fn bare_function_without_wrapper() {
    let p = check_all(
        b"Sure.\n<function=get_current_temperature>\n<parameter=location>\nSan Francisco\n</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n</function>\nDone.",
        &auto(),
    );
    assert_eq!(p.calls.len(), 1);
    assert_eq!(
        args(&p, 0),
        json!({"location": "San Francisco", "unit": "celsius"})
    );
    assert_eq!(p.text, "Sure.\n\nDone.");
}

#[test]
fn bare_function_with_the_wrappers_close() {
    // The `<tool_call>` opener omitted, its close written (ggml-org/llama.cpp PR #16755).
    let p = check_all(
        b"<function=f>\n<parameter=a>\nx\n</parameter>\n</function>\n</tool_call>\nDone.",
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"a": "x"}));
    assert!(p.calls[0].repairs.is_empty());
    assert_eq!(p.text, "\nDone.");
    // At the end of the input, after `</function>`: complete.
    let p = check_all(b"<function=f>\n</function>\n", &auto());
    assert!(!p.calls[0].truncated);
    assert!(p.calls[0].repairs.is_empty());
    assert_eq!(p.text, "");
}

/// A bare call whose `</parameter>` is missing: `</function>` closes the
/// value (a repair) and ends the call, whatever follows; the prose after it
/// is text, at every split.
#[test]
fn bare_function_missing_parameter_close_then_prose() {
    let input = "<function=get_weather>\n<parameter=location>\nParis\n</function>\nThe weather in Paris is mild </function> today.";
    for cfg in [
        auto(),
        Config::default().with_dialects(vec![Dialect::Qwen3Coder]),
        weather_tools(),
    ] {
        let p = check_all(input.as_bytes(), &cfg);
        assert_eq!(p.calls.len(), 1);
        assert_eq!(args(&p, 0), json!({"location": "Paris"}));
        assert_eq!(kinds(&p, 0), [RepairKind::MissingCloseTag]);
        assert!(!p.calls[0].truncated);
        assert_eq!(p.text, "\nThe weather in Paris is mild </function> today.");
        // The repair is recorded where `</function>` begins.
        let at = input.find("</function>").unwrap() as u64;
        assert_eq!(p.calls[0].repairs[0].offset, at);
    }
    // Several parameters, the last one unclosed; then another bare call.
    let input = "Sure.\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=b>\ntwo words\n</function>\nthen\n<function=g>\n<parameter=c>\nx\n</parameter>\n</function>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p, 0), json!({"a": 1, "b": "two words"}));
    assert_eq!(kinds(&p, 0), [RepairKind::MissingCloseTag]);
    assert_eq!(args(&p, 1), json!({"c": "x"}));
    assert!(p.calls[1].repairs.is_empty());
    assert_eq!(p.text, "Sure.\n\nthen\n");
    // Inside `<tool_call>` a `</function>` followed by prose stays content
    // (the container's close decides), as before.
    let input = "<tool_call>\n<function=write_file>\n<parameter=content>\nend with </function> and more\n</parameter>\n</function>\n</tool_call>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(
        args(&p, 0),
        json!({"content": "end with </function> and more"})
    );
    // A nested example invoke inside a bare call's value is still content.
    let input = "<function=w>\n<parameter=b>\n<function=inner>\n</function>\nz\n</parameter>\n</function>\nAfter.";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(
        args(&p, 0),
        json!({"b": "<function=inner>\n</function>\nz"})
    );
    assert_eq!(p.text, "\nAfter.");
}

#[test]
fn names_with_spaces_and_quotes() {
    let p = check_all(
        b"<function=\"get current temperature\">\n<parameter=\"location with spaces\">\nSan Francisco\n</parameter>\n</function>",
        &auto(),
    );
    assert_eq!(p.calls[0].name, "get current temperature");
    assert_eq!(
        args(&p, 0),
        json!({"location with spaces": "San Francisco"})
    );
}

#[test]
fn parallel_calls() {
    let input = "<tool_call>\n<function=get_weather>\n<parameter=city>\nMontréal\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=set_uv_threshold>\n<parameter=index>\n5\n</parameter>\n</function>\n</tool_call>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(p.calls.len(), 2);
    assert_eq!(p.calls[1].index, 1);
    assert_eq!(args(&p, 0), json!({"city": "Montréal"}));
    assert_eq!(args(&p, 1), json!({"index": 5}));
    assert_eq!(p.text, "\n");
    // Several functions in one wrapper.
    let p = check_all(
        b"<tool_call><function=a><parameter=x>1</parameter></function><function=b></function></tool_call>",
        &auto(),
    );
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p, 1), json!({}));
}

#[test]
fn truncated_variants() {
    // Cut inside a string value: the value so far, truncated.
    let p = check_all(
        b"<tool_call>\n<function=write_file>\n<parameter=content>\nhello wor",
        &auto(),
    );
    assert_eq!(p.calls.len(), 1);
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p, 0), json!({"content": "hello wor"}));
    // Cut inside the closing tag: the partial tag is not content.
    let p = check_all(
        b"<tool_call>\n<function=write_file>\n<parameter=content>\nhello\n</param",
        &auto(),
    );
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p, 0), json!({"content": "hello"}));
    // Cut after a parameter, before `</function>`.
    let p = check_all(
        b"<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n",
        &auto(),
    );
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p, 0), json!({"a": 1}));
    // Cut inside a number: held until the end, then a number.
    let p = check_all(b"<tool_call>\n<function=f>\n<parameter=a>\n12", &auto());
    assert_eq!(args(&p, 0), json!({"a": 12}));
    // Cut right after the name.
    let p = check_all(b"<tool_call>\n<function=get_weather>", &auto());
    assert!(p.calls[0].truncated);
    assert_eq!(p.calls[0].arguments, "{}");
    // `</function>` seen, `</tool_call>` missing: complete, with a repair.
    let p = check_all(
        b"<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n</function>\n",
        &auto(),
    );
    assert!(!p.calls[0].truncated);
    assert!(kinds(&p, 0).contains(&RepairKind::MissingCloseTag));
    // A bare `<function=` alone at the end is text.
    let p = check_all(b"Plan: <function=get_weather>", &auto());
    assert!(p.calls.is_empty());
    assert_eq!(p.text, "Plan: <function=get_weather>");
    // Truncated at every byte: never a panic, always the contracts.
    for k in 0..CATALOGUE.len() {
        if CATALOGUE.is_char_boundary(k) {
            check_all(&CATALOGUE.as_bytes()[..k], &auto());
        }
    }
}

#[test]
fn literal_closing_tag_inside_value() {
    // `</parameter>` followed by something that cannot follow it: content.
    let input = "<tool_call>\n<function=write_file>\n<parameter=path>\nx.py\n</parameter>\n<parameter=content>\ns = \"</parameter>\"\nprint(s)\n</parameter>\n</function>\n</tool_call>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(
        args(&p, 0),
        json!({"path": "x.py", "content": "s = \"</parameter>\"\nprint(s)"})
    );
    // Reading the closing tag as content is recorded (#42 §3).
    assert_eq!(kinds(&p, 0), vec![RepairKind::CloseTagInValue]);
    // `</function>` and `</tool_call>` in a value, not followed by what closes a call.
    let input = "<tool_call>\n<function=write_file>\n<parameter=content>\nend with </function> and </tool_call> here\n</parameter>\n</function>\n</tool_call>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(
        args(&p, 0),
        json!({"content": "end with </function> and </tool_call> here"})
    );
    // A nested example call inside a value.
    let input = "<tool_call>\n<function=write_file>\n<parameter=content>\nExample:\n<tool_call>\n<function=x>\n<parameter=y>\n1\n</parameter>\n</function>\n</tool_call>\ndone\n</parameter>\n</function>\n</tool_call>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(p.calls.len(), 1);
    assert_eq!(
        args(&p, 0),
        json!({"content": "Example:\n<tool_call>\n<function=x>\n<parameter=y>\n1\n</parameter>\n</function>\n</tool_call>\ndone"})
    );
    // `<` and `&` in values; entities stay literal by default.
    let input = "<function=exec>\n<parameter=command>\nls && echo \"a > b and a < b\" &lt;x&gt;\n</parameter>\n</function>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(
        args(&p, 0),
        json!({"command": "ls && echo \"a > b and a < b\" &lt;x&gt;"})
    );
}

#[test]
fn schema_disambiguates_parameter_tags() {
    // With the schema, `</parameter>` followed by an undeclared `<parameter=…>` is content.
    let input = "<tool_call>\n<function=write_file>\n<parameter=content>\nA</parameter>\n<parameter=note>\nB\n</parameter>\n<parameter=path>\nf.txt\n</parameter>\n</function>\n</tool_call>";
    let p = check_all(input.as_bytes(), &weather_tools());
    assert_eq!(
        args(&p, 0),
        json!({"content": "A</parameter>\n<parameter=note>\nB", "path": "f.txt"})
    );
    // Without it, the tags are structure.
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(
        args(&p, 0),
        json!({"content": "A", "note": "B", "path": "f.txt"})
    );
    // A value the schema types as a number, a boolean or JSON cannot hold
    // the tags: an undeclared parameter after it is one the model added
    // (it used to swallow the parameter: `"days": "3</parameter>\n<par…"`).
    let input = "<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n<parameter=detail>\nfull\n</parameter>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>";
    let p = check_all(input.as_bytes(), &weather_tools());
    assert_eq!(
        args(&p, 0),
        json!({"days": 3, "detail": "full", "city": "Paris"})
    );
    let input = "<tool_call>\n<function=set_flag>\n<parameter=on>\ntrue\n</parameter>\n<parameter=why>\nx\n</parameter>\n<parameter=tags>\n[\"a\"]\n</parameter>\n<parameter=also>\ny\n</parameter>\n</function>\n</tool_call>";
    let p = check_all(input.as_bytes(), &weather_tools());
    assert_eq!(
        args(&p, 0),
        json!({"on": true, "why": "x", "tags": ["a"], "also": "y"})
    );
    // A parameter it already had is still content of a typed value.
    let input = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3</parameter>\n<parameter=city>\n</parameter>\n</function>\n</tool_call>";
    let p = check_all(input.as_bytes(), &weather_tools());
    assert_eq!(args(&p, 0)["city"], json!("Paris"));
}

#[test]
fn missing_closing_tags() {
    // A missing `</parameter>` before the next parameter on its own line.
    let p = check_all(
        b"<tool_call>\n<function=f>\n<parameter=a>\nx\n<parameter=b>\ny\n</parameter>\n</function>\n</tool_call>",
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"a": "x", "b": "y"}));
    assert!(kinds(&p, 0).contains(&RepairKind::MissingCloseTag));
    // A missing `</parameter>` before `</function>`.
    let p = check_all(
        b"<tool_call>\n<function=f>\n<parameter=a>\nx\n</function>\n</tool_call>",
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"a": "x"}));
    assert!(!p.calls[0].truncated);
    // Both missing before `</tool_call>` at the end: one repair each.
    for tail in ["", "\n", " \n"] {
        let input = format!("<tool_call>\n<function=f>\n<parameter=a>\nx\n</tool_call>{tail}");
        let p = check_all(input.as_bytes(), &auto());
        assert_eq!(args(&p, 0), json!({"a": "x"}));
        assert!(!p.calls[0].truncated);
        assert_eq!(
            kinds(&p, 0),
            [RepairKind::MissingCloseTag, RepairKind::MissingCloseTag],
            "{tail:?}"
        );
    }
    // Missing `</tool_call>`, prose after: the call ends, the prose is text.
    let p = check_all(
        b"<tool_call>\n<function=f>\n</function>\nAll done.",
        &auto(),
    );
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.text, "All done.");
}

#[test]
fn duplicate_parameter_keeps_the_first() {
    let p = check_all(
        b"<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=a>\n2\n</parameter>\n</function>",
        &auto(),
    );
    assert_eq!(p.calls[0].arguments, r#"{"a": 1}"#);
    assert!(kinds(&p, 0).contains(&RepairKind::DuplicateKey));
}

#[test]
fn json_body_functionary_style() {
    let p = check_all(
        b"<function=get_weather>{\"location\": \"Paris\"}</function> ok",
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"location": "Paris"}));
    assert_eq!(p.text, " ok");
}

#[test]
fn cdata_and_entity_decoding() {
    let input = b"<function=f>\n<parameter=a>\n<![CDATA[x </parameter> y]]>\n</parameter>\n<parameter=b>\n&lt;b&gt; &amp;\n</parameter>\n</function>";
    let p = check_all(input, &auto());
    assert_eq!(
        args(&p, 0),
        json!({"a": "<![CDATA[x </parameter> y]]>", "b": "&lt;b&gt; &amp;"})
    );
    let p = check_all(input, &auto().with_decode_entities(true));
    assert_eq!(args(&p, 0), json!({"a": "x </parameter> y", "b": "<b> &"}));
    assert_eq!(
        kinds(&p, 0)
            .iter()
            .filter(|k| **k == RepairKind::EntityDecoded)
            .count(),
        4
    );
}

#[test]
fn prose_mentions_are_text() {
    for input in [
        &b"Write <function=NAME> then the parameters."[..],
        b"<function=a b c",
        b"The tag <tool_call> opens a call.",
        b"<tool_call>\n<function=f>", // incomplete but wrapped: a call (checked below)
    ] {
        let p = check_all(input, &auto());
        if input.starts_with(b"<tool_call>\n<function") {
            assert_eq!(p.calls.len(), 1);
        } else {
            assert!(p.calls.is_empty(), "{:?}", String::from_utf8_lossy(input));
            assert_eq!(p.text.as_bytes(), input);
        }
    }
}

#[test]
fn limits_cut_at_a_fixed_byte() {
    let mut cfg = auto();
    cfg.limits.max_args_bytes = 40;
    let input = format!(
        "<function=f>\n<parameter=a>\n{}\n</parameter>\n</function> tail",
        "x".repeat(100)
    );
    let p = check_all(input.as_bytes(), &cfg);
    assert_eq!(p.calls.len(), 1);
    assert!(p.calls[0].truncated);
    assert!(kinds(&p, 0).contains(&RepairKind::LimitExceeded));
    assert!(p.text.ends_with("</function> tail"));
}

/// #42 §3: HTML and code that hold the dialect's own closing tags, decided
/// by what follows each one, with the decision recorded; a value `null` of
/// a parameter that is not a string is JSON null.
#[test]
fn literal_markup_in_values_and_typed_null() {
    let input = "<tool_call>\n<function=write_file>\n<parameter=path>\nindex.html\n</parameter>\n<parameter=content>\n<p>a</parameter></p>\n<p>b</function>\n</p>\n</parameter>\n</function>\n</tool_call>";
    for cfg in [auto(), weather_tools()] {
        let p = check_all(input.as_bytes(), &cfg);
        assert_eq!(p.calls.len(), 1);
        assert_eq!(
            args(&p, 0),
            json!({"path": "index.html", "content": "<p>a</parameter></p>\n<p>b</function>\n</p>"})
        );
        let k = kinds(&p, 0);
        assert_eq!(
            k.iter()
                .filter(|k| **k == RepairKind::CloseTagInValue)
                .count(),
            2,
            "{k:?}"
        );
        assert!(!p.calls[0].truncated);
        assert_eq!(p.text, "");
    }
    // `</parameter>` then the next parameter: a real close, no record.
    let p = check_all(CATALOGUE.as_bytes(), &weather_tools());
    assert!(kinds(&p, 0).is_empty());
    // `null` for an integer, boolean or array parameter is JSON null; for a
    // string parameter it stays the text "null".
    let input = "<tool_call>\n<function=set_flag>\n<parameter=on>\nnull\n</parameter>\n<parameter=tags>\nnull\n</parameter>\n<parameter=code>\nnull\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n<parameter=days>\nnull\n</parameter>\n</function>\n</tool_call>";
    let p = check_all(input.as_bytes(), &weather_tools());
    assert_eq!(
        args(&p, 0),
        json!({"on": null, "tags": null, "code": "null"})
    );
    assert_eq!(args(&p, 1), json!({"days": null}));
    assert!(kinds(&p, 0).is_empty(), "{:?}", kinds(&p, 0));
}
