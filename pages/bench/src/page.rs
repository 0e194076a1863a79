//! The browser benchmark page (`/bench/?file=NAME`, its own bundle `pages/bench`, so none of
//! it is in a learner's download): fetches a large trace, then measures with
//! `performance.now()` what a learner waits for — parsing the file, building the index, and
//! recomputing every figure after a threshold edit through the lab's own state. The numbers are
//! written into the page for the end-to-end benchmark run to read. (The trace is made natively
//! by the test, so the generator is not in every learner's download.)

use leptos::prelude::*;
use trace_lab::state::{HeldText, Lab, Loaded, Origin};
use tracelab_core::{units, Lang};

fn param_file() -> String {
    tracelab_web::query("file")
        .filter(|f| is_file_name(f))
        .unwrap_or_else(|| "bench.jsonl".into())
}

/// A plain file name beside the page (no path, no `..`).
fn is_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() < 80
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

#[component]
pub fn BenchPage() -> impl IntoView {
    let result = RwSignal::new(String::from("running…"));
    let file = param_file();
    let name = file.clone();
    leptos::task::spawn_local(async move {
        let text = match tracelab_web::fetch_text(&name).await {
            Ok(t) => t,
            Err(e) => return result.set(serde_json::json!({ "error": e }).to_string()),
        };
        let mb = units::megabytes(text.len());
        // As the lab reads an upload: from the JavaScript string the browser read the file into,
        // in pieces, the string kept beside the trace.
        let text = js_sys::JsString::from(text);
        let t0 = now();
        let trace = match tracelab_web::js_text::read_trace(&name, &text) {
            Ok(t) => t,
            Err(e) => return result.set(serde_json::json!({ "error": e.to_string() }).to_string()),
        };
        let text = HeldText::uploaded(&name, text);
        let parse_ms = now() - t0;
        let n = trace.attempts.len();
        let lab = Lab::new(Lang::En);
        let t1 = now();
        lab.load(
            Loaded::new(Origin::Uploaded(name.clone()), trace, text),
            &[],
        );
        let first = lab
            .metrics
            .with_untracked(|m| m.as_ref().map(|m| m.qualified));
        let index_ms = now() - t1;
        // Threshold edits through the lab's state, as the slider makes them.
        let edits = 50;
        let mut worst: f64 = 0.0;
        let t2 = now();
        for k in 0..edits {
            let e0 = now();
            lab.settings
                .update(|s| s.ttft_threshold_s = 0.2 + k as f64 * 0.05);
            let _ = lab
                .metrics
                .with_untracked(|m| m.as_ref().map(|m| m.qualified));
            worst = worst.max(now() - e0);
        }
        let recompute_ms = (now() - t2) / edits as f64;
        result.set(
            serde_json::json!({
                "attempts": n,
                "file_mb": mb,
                "parse_ms": parse_ms,
                "parse_mb_per_s": mb / units::s_from_ms(parse_ms),
                "load_index_metrics_ms": index_ms,
                "recompute_mean_ms": recompute_ms,
                "recompute_worst_ms": worst,
                "qualified_at_1s": first,
            })
            .to_string(),
        );
    });
    view! {
        <main>
            <h1>"Trace Lab — browser benchmark"</h1>
            <p>{format!("{file}: parse, load, and threshold recompute, timed with performance.now().")}</p>
            <pre data-testid="bench-result">{move || result.get()}</pre>
        </main>
    }
}
