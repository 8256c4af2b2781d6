//! libFuzzer entry point of [`authcore_fuzz::targets::callback_url`] (the properties are documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| authcore_fuzz::targets::callback_url::run(data));
