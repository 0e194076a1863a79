//! Trace format v1 (JSON Lines) and the classroom CSV, from raw bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(trace) = tracelab_core::parse::parse_trace_bytes("fuzz", data) {
        tracelab_fuzz::exercise(&trace, &tracelab_fuzz::settings_for(&trace, ""));
    }
});
