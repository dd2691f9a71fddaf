//! Property tests of the JSON repairer against serde_json: valid JSON comes
//! back byte for byte with no repair; any input gives valid JSON; the result
//! does not depend on chunking.

mod common;

use common::cases;
use proptest::prelude::*;
use serde_json::Value;
use toolstream::json::{repair, Repairer, Status};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e12f64..1e12)
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".*".prop_map(Value::String),
        "[a-z\"\\\\/\u{0}-\u{1f}é日😀]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((".{0,8}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn feed_split(input: &[u8], cuts: &[usize]) -> (Vec<u8>, usize) {
    let mut r = Repairer::new();
    let mut out = Vec::new();
    let mut last = 0;
    let mut done = false;
    for &c in cuts.iter().chain(std::iter::once(&input.len())) {
        let c = c.min(input.len());
        if c <= last || done {
            continue;
        }
        let p = r.feed(&input[last..c], &mut out);
        last = c;
        if p.status != Status::NeedMore {
            done = true;
        }
    }
    r.finish(&mut out);
    (out, r.repairs().len())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1024), ..ProptestConfig::default() })]

    #[test]
    fn valid_json_is_unchanged(v in arb_json(), pretty in any::<bool>(), cuts in prop::collection::vec(0usize..2000, 0..8)) {
        let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { serde_json::to_string(&v).unwrap() };
        let r = repair(text.as_bytes()).unwrap();
        prop_assert_eq!(&r.json, &text);
        prop_assert!(r.repairs.is_empty(), "repairs on valid JSON: {:?}", r.repairs);
        let mut cuts = cuts;
        cuts.sort_unstable();
        let (out, n) = feed_split(text.as_bytes(), &cuts);
        prop_assert_eq!(String::from_utf8(out).unwrap(), text);
        prop_assert_eq!(n, 0);
    }

    #[test]
    fn any_input_gives_valid_json(input in prop::collection::vec(any::<u8>(), 0..200), cuts in prop::collection::vec(0usize..200, 0..8)) {
        let mut cuts = cuts;
        cuts.sort_unstable();
        let (whole, nw) = feed_split(&input, &[]);
        if !whole.is_empty() {
            prop_assert!(serde_json::from_slice::<Value>(&whole).is_ok(), "invalid: {:?}", String::from_utf8_lossy(&whole));
        }
        let (split, ns) = feed_split(&input, &cuts);
        prop_assert_eq!(&whole, &split);
        prop_assert_eq!(nw, ns);
    }

    #[test]
    fn every_prefix_repairs_to_valid_json(v in arb_json(), cut in 0usize..400) {
        // Truncation at any byte gives valid JSON (the streaming case).
        let text = serde_json::to_string(&v).unwrap();
        let mut cut = cut.min(text.len());
        while !text.is_char_boundary(cut) { cut -= 1; }
        if let Some(r) = repair(&text.as_bytes()[..cut]) {
            prop_assert!(serde_json::from_str::<Value>(&r.json).is_ok(), "invalid: {:?} from {:?}", r.json, &text[..cut]);
        }
    }
}
