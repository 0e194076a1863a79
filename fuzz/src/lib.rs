//! What every fuzz target does with a trace it managed to read: the whole one-way flow
//! (Index → Metrics → card → every export), checking the core's promises on the way — no
//! panic, no infinite or NaN figure, and the trace written as JSON Lines reads back.

use tracelab_core::export::{attempts_csv, card_json, card_markdown, peer_rows, perfetto};
use tracelab_core::parse::parse_trace;
use tracelab_core::write::{to_csv, to_jsonl};
use tracelab_core::{card, tally, Index, Lang, Metrics, Settings, Trace};
use tracelab_course::MetricCard;

/// Runs `trace` through everything under `settings` and checks the promises.
pub fn exercise(trace: &Trace, settings: &Settings) {
    let index = Index::build(&trace.attempts, settings.population);
    let metrics = Metrics::compute(&index, settings);
    for f in card::figures(&metrics) {
        assert!(
            f.value.is_none_or(f64::is_finite),
            "{} is {:?}",
            f.key,
            f.value
        );
    }
    let _ = metrics.summary_json(settings);
    for lang in [Lang::En, Lang::Zh] {
        let _ = card::render_text("fuzz", trace, settings, &metrics, lang);
        let _ = card_markdown("fuzz", trace, settings, &metrics, lang);
        let _ = card_json("fuzz", trace, settings, &metrics, lang);
        let _ = MetricCard::prefill("fuzz", trace, settings, &metrics, lang);
    }
    let _ = tally(&trace.attempts, settings, trace.attempts.len());
    let _ = peer_rows(trace, settings);
    let _ = perfetto(trace, settings);
    let _ = attempts_csv(trace, settings);
    let _ = to_csv(trace);
    // Our own writer's output must read back: the same attempts, ids and outcomes (times may
    // move by the microsecond rounding an imported trace had not had yet).
    let text = to_jsonl(trace);
    let again = parse_trace("again.jsonl", &text)
        .unwrap_or_else(|e| panic!("written trace does not read back: {e}"));
    let key = |t: &Trace| {
        t.attempts
            .iter()
            .map(|a| (a.id.clone(), a.outcome, a.ttft_ms.is_some()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        key(&again),
        key(trace),
        "JSON Lines round trip changed the attempts"
    );
}

/// The settings a trace opens with, then the ones a permalink in `pairs` sets (`k=v&k=v`).
pub fn settings_for(trace: &Trace, pairs: &str) -> Settings {
    let mut s = Settings::from_header(&trace.header);
    s.apply_pairs(pairs.split('&').filter_map(|kv| kv.split_once('=')));
    s
}
