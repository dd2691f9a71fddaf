//! Repairs point at the bytes they are about, the same at every chunking:
//! never past the end of the input, one offset per bad byte, and bytes
//! that are not UTF-8 in XML names and keys are reported like those in
//! values.

mod common;

use toolstream::{Config, RepairKind};

fn repairs(input: &[u8]) -> Vec<(RepairKind, u64)> {
    let parsed = common::check_all(input, &Config::default());
    assert_eq!(
        parsed.calls.len(),
        1,
        "{:?}",
        String::from_utf8_lossy(input)
    );
    parsed.calls[0]
        .repairs
        .iter()
        .map(|r| (r.kind, r.offset))
        .collect()
}

/// `<tool_call>{"name": "f"` (23 bytes): the closing brace the end of the
/// input supplies is at byte 23; `missing_arguments` was filed at 24.
#[test]
fn missing_arguments_is_inside_the_input() {
    for input in [
        &br#"<tool_call>{"name": "f""#[..],
        br#"<tool_call>{"name": "f", "#,
    ] {
        for (kind, offset) in repairs(input) {
            assert!(
                offset <= input.len() as u64,
                "{kind:?} at {offset} of {}",
                input.len()
            );
        }
        assert!(repairs(input).contains(&(RepairKind::MissingArguments, input.len() as u64)));
    }
}

/// Two bad bytes in one XML value: two repairs, each at its byte (both
/// were filed at the value's start).
#[test]
fn each_bad_byte_of_an_xml_value_has_its_offset() {
    let input = b"<tool_call>\n<function=f>\n<parameter=a>\nx\xffy\xfez\n</parameter>\n</function>\n</tool_call>";
    assert_eq!(
        repairs(input),
        [(RepairKind::InvalidUtf8, 40), (RepairKind::InvalidUtf8, 42)]
    );
    // A character cut by the end of the value.
    let input = b"<tool_call>\n<function=f>\n<parameter=a>\nabc\xe6\x97\n</parameter>\n</function>\n</tool_call>";
    assert_eq!(repairs(input), [(RepairKind::InvalidUtf8, 42)]);
}

/// Names and keys that are not UTF-8 are read with U+FFFD, as values are,
/// and say so (they recorded nothing).
#[test]
fn bad_bytes_in_xml_names_and_keys_are_repairs() {
    let input = b"<tool_call>\n<function=f\xff>\n<parameter=a\xfe>\n1\n</parameter>\n</function>\n</tool_call>";
    let r = repairs(input);
    assert_eq!(
        r.iter()
            .filter(|(k, _)| *k == RepairKind::InvalidUtf8)
            .count(),
        2,
        "{r:?}"
    );
    let input = b"<tool_call>f\n<arg_key>k\xff</arg_key><arg_value>v</arg_value></tool_call>";
    assert_eq!(repairs(input), [(RepairKind::InvalidUtf8, 22)]);
    let input = b"<tool_call>g\xff\n<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>";
    assert_eq!(repairs(input), [(RepairKind::InvalidUtf8, 11)]);
}
