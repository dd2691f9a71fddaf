//! Tight, fuzzer-chosen limits (token, depth, argument size, held bytes; see
//! `limits_from`): the repairer's output is valid JSON and its fast, unit and
//! slow paths agree whole and split; the content parser keeps its contracts
//! and is chunk-invariant when limits cut calls short.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (opt, input, splits) = toolstream_fuzz::split_opt(data);
    toolstream_fuzz::check_limits(input, &splits, opt);
});
