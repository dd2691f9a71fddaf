//! JSON repairer, differential against serde_json: valid JSON passes through
//! byte for byte with no repair; any output is valid JSON; `json::repair`
//! equals the streaming `Repairer`; whole vs split feeding give the same output,
//! repairs and truncation flag.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (input, splits) = toolstream_fuzz::split(data);
    toolstream_fuzz::check_json_repair(input, &splits);
});
