//! The peer-file loader (detection, every importer, the summary readers), from raw bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracelab_peers::import;

fuzz_target!(|data: &[u8]| {
    if let Ok(imported) = import::load_any_bytes("fuzz", data) {
        for t in &imported.traces {
            tracelab_fuzz::exercise(&t.trace, &tracelab_fuzz::settings_for(&t.trace, ""));
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = import::detect(text);
        if let Ok(import::Loaded::Summary(s)) = import::load_upload("fuzz", text) {
            let _ = import::peer_figures_from_aggregate("fuzz", text);
            let _ = s.figures.len();
        }
    }
});
