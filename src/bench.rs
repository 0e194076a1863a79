//! The browser benchmark page (`?bench=1&n=1000000`): generates a large trace in the page,
//! then measures with `performance.now()` what a learner waits for — parsing the file, building
//! the index, and recomputing every figure after a threshold edit through the lab's own state.
//! The numbers are written into the page for the end-to-end benchmark run to read.

use leptos::prelude::*;
use tracelab_core::{parse::parse_trace, write, Attempt, Header, Lang, Outcome, Quality, StreamEvent, Trace};
use tracelab_core::trace::Window;

use crate::state::{Lab, Loaded, Origin};

/// Whether the page was opened as the benchmark.
pub fn requested() -> bool {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .map(|s| s.split(['?', '&']).any(|kv| kv == "bench=1"))
        .unwrap_or(false)
}

fn param_n() -> usize {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .and_then(|s| s.split(['?', '&']).find_map(|kv| kv.strip_prefix("n=").and_then(|v| v.parse().ok())))
        .unwrap_or(1_000_000)
}

fn now() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map(|p| p.now()).unwrap_or(0.0)
}

/// A deterministic synthetic trace: mostly successes, some failures, a spread of TTFTs.
pub fn synthetic(n: usize) -> Trace {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as f64 / (1u64 << 31) as f64
    };
    let mut attempts = Vec::with_capacity(n);
    for i in 0..n {
        let r = next();
        let outcome = if r < 0.03 { Outcome::TimeoutBeforeFirstToken } else if r < 0.05 { Outcome::HttpError { status: 429 } } else { Outcome::Success };
        let ttft = (!matches!(outcome, Outcome::TimeoutBeforeFirstToken | Outcome::HttpError { .. })).then(|| 50.0 + (next() * next()) * 3000.0);
        let mut a = Attempt::new(format!("a{i}"), outcome, ttft.map(|t| (t * 1000.0).round() / 1000.0), if next() < 0.9 { Quality::Pass } else { Quality::Fail });
        a.start_ms = Some(i as f64 * 2.0);
        a.e2e_ms = Some(ttft.map_or(30_000.0, |t| (t + 400.0).round()));
        if let Some(t) = a.ttft_ms {
            a.events = vec![StreamEvent { at_ms: t, tokens: 1 }, StreamEvent { at_ms: t + 200.0, tokens: 4 }];
        }
        if !outcome.is_success() {
            a.quality = Quality::NotEvaluated;
        }
        attempts.push(a);
    }
    let mut header = Header::default();
    header.window = Some(Window { start_ms: 0.0, length_s: n as f64 * 2.0 / 1000.0 });
    Trace { header, attempts, gpu: Vec::new(), footer: None, warnings: Vec::new() }
}

#[component]
pub fn BenchPage() -> impl IntoView {
    let result = RwSignal::new(String::from("running…"));
    let n = param_n();
    // Let the page paint "running…" before the long synchronous work.
    set_timeout(
        move || {
            let text = write::to_jsonl(&synthetic(n));
            let mb = text.len() as f64 / 1e6;
            let t0 = now();
            let trace = match parse_trace("bench.jsonl", &text) {
                Ok(t) => t,
                Err(e) => {
                    result.set(format!("{{\"error\": {:?}}}", e.to_string()));
                    return;
                }
            };
            let parse_ms = now() - t0;
            drop(text);
            let lab = Lab::new(Lang::En);
            let t1 = now();
            lab.load(Loaded::new(Origin::Uploaded("bench.jsonl".into()), trace), &[]);
            let first = lab.metrics.with_untracked(|m| m.as_ref().map(|m| m.qualified));
            let index_ms = now() - t1;
            // Threshold edits through the lab's state, as the slider makes them.
            let edits = 50;
            let mut worst: f64 = 0.0;
            let t2 = now();
            for k in 0..edits {
                let e0 = now();
                lab.settings.update(|s| s.ttft_threshold_s = 0.2 + k as f64 * 0.05);
                let _ = lab.metrics.with_untracked(|m| m.as_ref().map(|m| m.qualified));
                worst = worst.max(now() - e0);
            }
            let recompute_ms = (now() - t2) / edits as f64;
            result.set(
                serde_json::json!({
                    "attempts": n,
                    "file_mb": mb,
                    "parse_ms": parse_ms,
                    "parse_mb_per_s": mb / (parse_ms / 1000.0),
                    "load_index_metrics_ms": index_ms,
                    "recompute_mean_ms": recompute_ms,
                    "recompute_worst_ms": worst,
                    "qualified_at_1s": first,
                })
                .to_string(),
            );
        },
        std::time::Duration::from_millis(50),
    );
    let _ = Attempt::new("", Outcome::Success, None, Quality::Pass);
    view! {
        <main>
            <h1>"Trace Lab — browser benchmark"</h1>
            <p>{format!("{n} synthetic attempts: parse, load, and threshold recompute, timed with performance.now().")}</p>
            <pre data-testid="bench-result">{move || result.get()}</pre>
        </main>
    }
}
