//! Scenario text in, as a user would write it: the input bytes are the TOML file (inputs that
//! are not UTF-8 are skipped). See `src/lib.rs` for what is checked.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        aiccsim_fuzz::check(text);
    }
});
