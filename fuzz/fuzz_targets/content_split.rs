//! Content parser, auto-detection over every dialect: whole vs split give the
//! same text, thinking and calls; both keep the contracts (lossless tiling,
//! text = input bytes, deltas add up to JSON-object arguments, indexes count up);
//! without tools and with tools offered.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolstream::Config;

fuzz_target!(|data: &[u8]| {
    let (input, splits) = toolstream_fuzz::split(data);
    toolstream_fuzz::check_content(input, &splits, &Config::default());
    toolstream_fuzz::check_content(input, &splits, &toolstream_fuzz::tools_config());
});
