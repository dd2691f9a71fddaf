//! NDJSON framing: whole vs split give identical lines and errors; lines
//! respect the fuzzer-chosen frame limit and are the input bytes at their span.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (opt, input, splits) = toolstream_fuzz::split_opt(data);
    toolstream_fuzz::check_ndjson(input, &splits, opt);
});
