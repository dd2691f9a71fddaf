//! SSE framing: whole vs split give identical frames and errors (spans
//! included); frames respect the fuzzer-chosen frame limit.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (opt, input, splits) = toolstream_fuzz::split_opt(data);
    toolstream_fuzz::check_sse(input, &splits, opt);
});
