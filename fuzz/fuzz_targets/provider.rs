//! Provider stream decoder (provider chosen by the options byte, or
//! auto-detected; content re-parsing optional): whole vs split give the same
//! text, thinking and calls; every call's deltas add up to JSON-object
//! arguments.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (opt, input, splits) = toolstream_fuzz::split_opt(data);
    toolstream_fuzz::check_provider(input, &splits, opt);
});
