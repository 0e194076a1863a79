//! The big-trace views on `<canvas>`, painted by the lab's second bundle (`pages/convert`,
//! `canvas.rs`, loaded after the first paint, so the lab's first download carries neither
//! `plotters`, nor their counting, nor their words): beyond a few hundred attempts the run in time
//! buckets (share qualified and failed, starts against the schedule, client lag, requests in
//! flight) above the run chart; and, when opened (by itself for a big trace), the whole
//! distribution: a latency heat map (run clock × TTFT or E2E on a log scale, failures in a band
//! of their own, the threshold line, the selected attempt outlined) and a histogram (the
//! threshold, P50 and the tail with their intervals). The bundle holds the open trace already
//! (it is sent once per trace and set of edits, `crate::convert::call_on_trace`) and counts every
//! cell, bin and bucket there with the core (`tracelab_core::distribution`); an edit sends only
//! the settings.

use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_core::distribution::{DistributionRequest, Marker, Measure, RunRequest};
use tracelab_core::{units, Figure};

use super::chart_frame::{use_width, RunAxis, BARS_FIT};
use crate::convert::Call;
use crate::i18n::tr;
use crate::state::use_lab;

/// Pixels per heat-map column and per run bucket.
const COLUMN_PX: f64 = 8.0;
const BUCKET_PX: f64 = 4.0;

/// A figure's value and 95 % interval, in ms, as a marker on the histogram.
fn marker(
    label: String,
    f: &Figure,
    interval: Option<&tracelab_core::compare::FigureInterval>,
) -> Option<Marker> {
    Some(Marker {
        label,
        value_ms: units::ms_from_s(f.value?),
        lo_ms: interval.and_then(|i| i.bounds.lo).map(units::ms_from_s),
        hi_ms: interval.and_then(|i| i.bounds.hi).map(units::ms_from_s),
    })
}

#[component]
pub fn Distribution(
    resized: RwSignal<u32>,
    run_axis: RwSignal<RunAxis>,
    big: Memo<bool>,
) -> impl IntoView {
    let lab = use_lab();
    let holder = NodeRef::<leptos::html::Div>::new();
    let width = use_width(holder, resized);
    let open = RwSignal::new(false);
    // Opens by itself for a big trace; the learner's toggle holds until the next trace.
    Effect::new(move |_| open.set(lab.row_count() > BARS_FIT));
    let measure = RwSignal::new(Measure::Ttft);
    let error = RwSignal::new(None::<String>);
    // Which request is the latest, so an older request's error arriving late does not replace
    // the newest one's answer.
    let latest = StoredValue::new(0u64);
    // Every edit: the bundle redraws what is shown (a threshold edit moves lines and recounts
    // the qualified per bucket there; a population change counts the columns afresh). The
    // calls run in order, one task.
    Effect::new(move |_| {
        let (show_run, show_dist) = (big.get(), open.get());
        let (Some(loaded), Some(working)) = (lab.loaded.get(), lab.working.get()) else {
            return;
        };
        if !show_run && !show_dist {
            return;
        }
        let (s, m, l) = (lab.settings.get(), lab.metrics.get(), lab.lang.get());
        let run =
            run_axis
                .get()
                .filter(|_| show_run)
                .map(|(w, left, right, start_ms, _, span_ms)| RunRequest {
                    lang: l,
                    settings: s.clone(),
                    buckets: ((w - 60.0) / BUCKET_PX).clamp(20.0, 400.0) as usize,
                    width_px: w as u32,
                    left_px: left,
                    right_px: right,
                    start_ms,
                    span_ms,
                });
        let dist = show_dist.then(|| {
            let markers = lab.intervals.with(|iv| {
                let Some(m) = m.as_ref() else {
                    return Vec::new();
                };
                let (p50, tail) = if measure.get() == Measure::Ttft {
                    (&m.ttft_p50, &m.ttft_tail)
                } else {
                    (&m.e2e_p50, &m.e2e_tail)
                };
                let get = |f: &Figure| iv.as_ref().and_then(|iv| iv.get(&f.key));
                [
                    marker("P50".into(), p50, get(p50)),
                    marker(
                        tracelab_core::format::percentile_label(s.p),
                        tail,
                        get(tail),
                    ),
                ]
                .into_iter()
                .flatten()
                .collect()
            });
            DistributionRequest {
                lang: l,
                measure: measure.get(),
                settings: s.clone(),
                columns: ((width.get() - 90.0) / COLUMN_PX).clamp(10.0, 180.0) as usize,
                width_px: width.get() as u32,
                selected: Some(lab.selected.get()),
                markers,
                failures: m.as_ref().map_or(0, |m| m.failures as u64),
            }
        });
        let (run, dist) = (
            run.and_then(|r| serde_json::to_string(&r).ok()),
            dist.and_then(|d| serde_json::to_string(&d).ok()),
        );
        latest.update_value(|n| *n += 1);
        let mine = latest.get_value();
        spawn_local(async move {
            let result = async {
                if let Some(r) = run {
                    let (key, working_text) = lab.sent(loaded.clone(), &working);
                    crate::convert::call_on_trace(
                        Call::ShowRun,
                        key,
                        working_text,
                        &["run-lanes-box", &r],
                    )
                    .await?;
                }
                if let Some(d) = dist {
                    let (key, working_text) = lab.sent(loaded, &working);
                    crate::convert::call_on_trace(
                        Call::ShowDistribution,
                        key,
                        working_text,
                        &["dist-box", &d],
                    )
                    .await?;
                }
                Ok::<(), String>(())
            };
            let result = result.await;
            // The views may be gone by now (a new trace lays the page out afresh).
            if latest.try_get_value() == Some(mine) {
                error.try_set(result.err());
            }
        });
    });
    // The box the width is read from holds the details, closed or open.
    view! {
        {move || error.get().map(|e| view! { <p class="error" role="alert" data-testid="dist-error">{e}</p> })}
        <div node_ref=holder>
        <details class="distribution" data-testid="distribution" prop:open=move || open.get()
            on:toggle=move |e| open.set(event_target::<web_sys::Element>(&e).has_attribute("open"))>
            <summary>{move || tr(lab.lang.get(), "dist_title")}</summary>
            <div class="measure" role="radiogroup" aria-label=move || tr(lab.lang.get(), "dist_measure")>
                <label><input type="radio" name="dist-measure" data-testid="measure-ttft" prop:checked=move || measure.get() == Measure::Ttft on:change=move |_| measure.set(Measure::Ttft) />" TTFT"</label>
                <label><input type="radio" name="dist-measure" data-testid="measure-e2e" prop:checked=move || measure.get() == Measure::E2e on:change=move |_| measure.set(Measure::E2e) />" E2E"</label>
            </div>
            <div id="dist-box"></div>
        </details>
        </div>
    }
}
