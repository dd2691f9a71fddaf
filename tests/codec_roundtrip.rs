//! Round trips: every capture decoded, encoded to each target, decoded
//! again, gives the same events under `toolstream::encode::normalize`
//! (which documents exactly what is compared).

mod codec_support;

use codec_support::*;
use toolstream::encode::{encode, normalize, EncodeOptions, Target};
use toolstream::provider::{decode, DecodeOptions, Provider};
use toolstream::Event;

fn provider(t: Target) -> Provider {
    match t {
        Target::OpenAi => Provider::OpenAi,
        Target::Anthropic => Provider::Anthropic,
        Target::Responses => Provider::Responses,
        _ => unreachable!(),
    }
}

const TARGETS: [Target; 3] = [Target::OpenAi, Target::Anthropic, Target::Responses];

fn round_trip(events: &[Event], t: Target) -> Vec<Event> {
    let wire = encode(events, t, &EncodeOptions::default());
    // Both with the provider given and auto-detected.
    let given = decode(&wire, &DecodeOptions::default().with_provider(provider(t)));
    let auto = decode(&wire, &DecodeOptions::default());
    assert_eq!(given, auto, "auto-detection of {t} output");
    // The encoder's own output is clean: no diagnostics or malformed frames.
    for e in &given {
        assert!(
            !matches!(
                e,
                Event::Diagnostic { .. }
                    | Event::Error {
                        kind: toolstream::ErrorKind::Malformed,
                        ..
                    }
            ),
            "{t}: {e:?}\n{}",
            String::from_utf8_lossy(&wire)
        );
    }
    given
}

#[test]
fn every_capture_round_trips_through_every_target() {
    let mut failures = Vec::new();
    let Some(caps) = captures() else {
        return;
    };
    for (file, bytes, _) in caps {
        let events = decode(&bytes, &DecodeOptions::default());
        for t in TARGETS {
            let back = round_trip(&events, t);
            check_contracts(&back);
            let want = normalize(&events, t, None);
            let got = normalize(&back, t, Some(&events));
            if want != got {
                failures.push(format!("{file} via {t}:\n  want {want:?}\n  got  {got:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} round trips differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn re_encoding_is_a_fixed_point() {
    // Encoding what was decoded from our own output gives the same bytes.
    let Some(caps) = captures() else {
        return;
    };
    for (file, bytes, _) in caps {
        let events = decode(&bytes, &DecodeOptions::default());
        for t in TARGETS {
            let wire = encode(&events, t, &EncodeOptions::default());
            let again = encode(
                &decode(&wire, &DecodeOptions::default()),
                t,
                &EncodeOptions::default(),
            );
            let wire2 = encode(
                &decode(&again, &DecodeOptions::default()),
                t,
                &EncodeOptions::default(),
            );
            assert_eq!(
                String::from_utf8_lossy(&again),
                String::from_utf8_lossy(&wire2),
                "{file} via {t}"
            );
        }
    }
}
