//! Any limits (each field 0, 1, `usize::MAX`, its default or a small value,
//! drawn by `limits_any` from the first seven bytes), then the split layout:
//! the repairer, the content parser (without and with tools) and the
//! provider decoder keep their properties; nothing panics or hangs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    toolstream_fuzz::check_limits_any(data);
});
