//! A trace under any settings a permalink can set: the first line is `k=v&k=v` pairs (the
//! lab's permalink keys), the rest a trace in any format we read.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (pairs, rest) = text.split_once('\n').unwrap_or((text, ""));
    if let Ok(imported) = tracelab_peers::import::load_any("fuzz", rest) {
        for t in &imported.traces {
            let settings = tracelab_fuzz::settings_for(&t.trace, pairs);
            tracelab_fuzz::exercise(&t.trace, &settings);
        }
    }
});
