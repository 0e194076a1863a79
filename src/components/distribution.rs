//! The whole distribution, at any size: a latency heat map (run clock × TTFT or E2E on a log
//! scale, colour = attempts per cell, failures in a band of their own, the threshold line, the
//! selected attempt outlined) and a histogram (the threshold, P50 and the tail with their
//! intervals). The core counts every cell and bin (`tracelab_core::distribution`); the charts
//! bundle (`pages/charts`, loaded the first time these views open, so the lab's first download
//! carries neither `plotters` nor these views' words) paints them on `<canvas>` with their
//! legends and tables. Open by itself for a trace too big for a bar per attempt.

use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_core::distribution::{sample, DistributionView, HeatMap, HeatMapPaint, Histogram, HistogramPaint, Marker, Measure};
use tracelab_core::{units, Figure};

use super::charts::{use_width, BARS_FIT};
use crate::convert::{call_in, Bundle};
use crate::i18n::tr;
use crate::state::use_lab;

/// The painter (`pages/charts`).
pub(super) const CHARTS: Bundle = Bundle { module: "charts/charts.js", what_en: "the heat map and the histogram", what_zh: "热力图与直方图模块" };

/// Rows of the heat map's latency axis and bins of the histogram; pixels per heat-map column.
const ROWS: usize = 32;
const BINS: usize = 40;
const COLUMN_PX: f64 = 8.0;

/// A figure's value and 95 % interval, in ms, as a marker on the histogram.
fn marker(label: String, f: &Figure, interval: Option<&tracelab_core::compare::FigureInterval>) -> Option<Marker> {
    Some(Marker {
        label,
        value_ms: units::ms_from_s(f.value?),
        lo_ms: interval.and_then(|i| i.bounds.lo).map(units::ms_from_s),
        hi_ms: interval.and_then(|i| i.bounds.hi).map(units::ms_from_s),
    })
}

#[component]
pub fn Distribution(resized: RwSignal<u32>) -> impl IntoView {
    let lab = use_lab();
    let holder = NodeRef::<leptos::html::Div>::new();
    let width = use_width(holder, resized);
    let open = RwSignal::new(false);
    // Opens by itself for a big trace; the learner's toggle holds until the next trace.
    Effect::new(move |_| open.set(lab.row_count() > BARS_FIT));
    let measure = RwSignal::new(Measure::Ttft);
    let population = Memo::new(move |_| lab.settings.with(|s| s.population));
    let heat = Memo::new(move |_| {
        let columns = ((width.get() - 90.0) / COLUMN_PX).clamp(10.0, 180.0) as usize;
        open.get().then(|| lab.working.with(|w| w.as_ref().and_then(|w| HeatMap::build(&w.attempts, population.get(), measure.get(), columns, ROWS)))).flatten()
    });
    let hist = Memo::new(move |_| open.get().then(|| lab.working.with(|w| w.as_ref().map(|w| Histogram::build(&sample(&w.attempts, population.get(), measure.get()), BINS)))).flatten());
    let error = RwSignal::new(None::<String>);
    // Each time what the views show changes (a threshold edit moves a line; a population change
    // recounts the cells), the bundle redraws them. Calls into it run in order.
    Effect::new(move |_| {
        let Some(histogram) = hist.get() else { return };
        let (s, m) = (lab.settings.get(), lab.metrics.get());
        let threshold_ms = (measure.get() == Measure::Ttft).then(|| units::ms_from_s(s.ttft_threshold_s));
        let selected = lab.selected.get();
        let heat = heat.get().map(|map| {
            let selected = lab.working.with(|w| w.as_ref().and_then(|w| w.attempts.get(selected)).and_then(|a| map.selected(a, &s.population)));
            HeatMapPaint { map, threshold_ms, selected, band: String::new() }
        });
        let markers = lab.intervals.with(|iv| {
            let Some(m) = m.as_ref() else { return Vec::new() };
            let (p50, tail) = if measure.get() == Measure::Ttft { (&m.ttft_p50, &m.ttft_tail) } else { (&m.e2e_p50, &m.e2e_tail) };
            let get = |f: &Figure| iv.as_ref().and_then(|iv| iv.get(&f.key));
            [marker("P50".into(), p50, get(p50)), marker(tracelab_core::format::percentile_label(s.p), tail, get(tail))].into_iter().flatten().collect()
        });
        let view = DistributionView {
            lang: lab.lang.get(),
            measure: measure.get(),
            heat,
            histogram: HistogramPaint { histogram, threshold_ms, markers },
            comparison: s.comparison,
            threshold_s: s.ttft_threshold_s,
            failures: m.map_or(0, |m| m.failures as u64),
        };
        let Ok(json) = serde_json::to_string(&view) else { return };
        width.track();
        spawn_local(async move { error.set(call_in(&CHARTS, "show_distribution", &["dist-box", &json]).await.err()) });
    });
    // The box the width is read from holds the details, closed or open.
    view! {
        <div node_ref=holder>
        <details class="distribution" data-testid="distribution" prop:open=move || open.get()
            on:toggle=move |e| open.set(event_target::<web_sys::Element>(&e).has_attribute("open"))>
            <summary>{move || tr(lab.lang.get(), "dist_title")}</summary>
            <div class="measure" role="radiogroup" aria-label=move || tr(lab.lang.get(), "dist_measure")>
                <label><input type="radio" name="dist-measure" data-testid="measure-ttft" prop:checked=move || measure.get() == Measure::Ttft on:change=move |_| measure.set(Measure::Ttft) />" TTFT"</label>
                <label><input type="radio" name="dist-measure" data-testid="measure-e2e" prop:checked=move || measure.get() == Measure::E2e on:change=move |_| measure.set(Measure::E2e) />" E2E"</label>
            </div>
            {move || error.get().map(|e| view! { <p class="error" role="alert" data-testid="dist-error">{e}</p> })}
            <div id="dist-box"></div>
        </details>
        </div>
    }
}
