//! Content parser restricted to the pythonic dialect: whole vs split agree and
//! both keep the contracts.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (input, splits) = toolstream_fuzz::split(data);
    toolstream_fuzz::check_content(input, &splits, &toolstream_fuzz::pythonic_config());
});
