//! One chart with both TTFT distributions as ECDFs (SVG, no plotting library), the threshold, and
//! each run's tail percentile with its 95 % interval as a bar — open-ended where the core says no
//! bound exists. The points are the core's sorted samples; nothing is computed here but positions.

use leptos::prelude::*;
use tracelab_core::format::{percentile_label, round_to};
use tracelab_core::units;

use crate::page::{Compared, Page};
use crate::words::w;

const W: f64 = 640.0;
const H: f64 = 316.0;
const LEFT: f64 = 48.0;
const RIGHT: f64 = 16.0;
/// Room above the plot for the threshold's label: nothing else is drawn there, so it can
/// collide with no bar, curve or label (a tail bar's "no upper bound" sits at most 20 px above
/// the plot; the label's baseline is 22 px above it).
const TOP: f64 = 34.0;
const LABEL_Y: f64 = TOP - 22.0;
const BOTTOM: f64 = 40.0;

/// The ECDF as an SVG path of steps: y = i / n after the i-th smallest value.
fn ecdf_path(sorted_ms: &[f64], x: &impl Fn(f64) -> f64, y: &impl Fn(f64) -> f64) -> String {
    let n = sorted_ms.len() as f64;
    let mut d = format!("M{:.1},{:.1}", x(0.0), y(0.0));
    for (i, v) in sorted_ms.iter().enumerate() {
        let s = units::s_from_ms(*v);
        d.push_str(&format!(" H{:.1} V{:.1}", x(s), y((i + 1) as f64 / n)));
    }
    d.push_str(&format!(" H{:.1}", x(f64::MAX)));
    d
}

#[component]
pub fn TtftChart(compared: Compared) -> impl IntoView {
    let page = expect_context::<Page>();
    let pair = &compared.report.pairs[0];
    let tail = pair.rows.iter().find(|r| r.key == "ttft_tail").cloned();
    let p = compared.settings.p;
    let threshold = compared.settings.ttft_threshold_s;
    let largest = compared
        .base_ttft_ms
        .iter()
        .chain(compared.new_ttft_ms.iter())
        .map(|v| units::s_from_ms(*v))
        .fold(threshold, f64::max)
        .max(1e-3);
    // Round ticks (1, 2 or 5 × 10ⁿ apart); the axis ends at the last one.
    let ticks = tracelab_web::ticks(largest * 1.02, 5);
    let max_s = ticks
        .last()
        .copied()
        .filter(|m| *m > 0.0)
        .unwrap_or(largest);
    let x = move |s: f64| LEFT + (s.min(max_s) / max_s) * (W - LEFT - RIGHT);
    let y = move |f: f64| TOP + (1.0 - f) * (H - TOP - BOTTOM);
    // The threshold's label above the plot, on the side of its line with room for it.
    let (label_x, label_anchor) = if x(threshold) > W / 2.0 {
        (x(threshold) - 4.0, "end")
    } else {
        (x(threshold) + 4.0, "start")
    };
    let q = units::share_from_percent(p);
    // Each run's tail percentile and interval, drawn at the height of the percentile.
    let bars = tail.map(|r| {
        [("base", r.base, r.base_interval.clone(), -7.0), ("new", r.new, r.new_interval.clone(), 7.0)]
            .into_iter()
            .filter_map(|(who, v, iv, dy)| {
                let v = v?;
                let b = iv.map(|i| i.bounds);
                let lo = b.and_then(|b| b.lo).unwrap_or(0.0);
                let hi = b.and_then(|b| b.hi);
                let yy = y(q) + dy;
                Some(view! {
                    <g class=format!("tail {who}") data-testid=format!("tail-{who}")>
                        <line x1=format!("{:.1}", x(lo)) x2=format!("{:.1}", hi.map(x).unwrap_or(W - RIGHT)) y1=format!("{yy:.1}") y2=format!("{yy:.1}")
                            class=if hi.is_some() { "interval" } else { "interval open" } />
                        <circle cx=format!("{:.1}", x(v)) cy=format!("{yy:.1}") r="4" />
                        {hi.is_none().then(|| view! {
                            <text x=format!("{:.1}", W - RIGHT - 2.0) y=format!("{:.1}", yy - 4.0) text-anchor="end" class="open-label">
                                {move || format!("{} → {}", percentile_label(p), w(page.lang.get(), "open_above"))}
                            </text>
                        })}
                    </g>
                })
            })
            .collect_view()
    });
    let base_path = ecdf_path(&compared.base_ttft_ms, &x, &y);
    let new_path = ecdf_path(&compared.new_ttft_ms, &x, &y);
    let (base_name, new_name) = (pair.base.clone(), pair.new.clone());
    view! {
        <figure class="compare-chart" data-testid="compare-chart">
            <figcaption>
                <strong>{move || w(page.lang.get(), "chart_title")}</strong>
                <span class="legend"><span class="swatch base"></span>{base_name}<span class="swatch new"></span>{new_name}</span>
            </figcaption>
            <svg viewBox=format!("0 0 {W} {H}") role="img" aria-label=move || w(page.lang.get(), "chart_desc")>
                <line class="axis" x1=LEFT x2=W - RIGHT y1=y(0.0) y2=y(0.0) />
                <line class="axis" x1=LEFT x2=LEFT y1=y(0.0) y2=y(1.0) />
                {ticks.into_iter().map(|t| view! {
                    // The last tick is at the plot's right edge: its label ends there, inside the chart.
                    <text class="tick x-tick" x=format!("{:.1}", x(t)) y=H - BOTTOM + 16.0 text-anchor={if t >= max_s { "end" } else { "middle" }}>{format!("{} s", round_to(t, 3))}</text>
                }).collect_view()}
                {[0.0, 0.5, 1.0].into_iter().map(|f| view! {
                    <text class="tick" x=LEFT - 6.0 y=format!("{:.1}", y(f) + 4.0) text-anchor="end">{format!("{}%", round_to(units::percent_from_share(f), 0))}</text>
                }).collect_view()}
                <line class="threshold" data-testid="threshold" x1=format!("{:.1}", x(threshold)) x2=format!("{:.1}", x(threshold)) y1=y(0.0) y2=y(1.0) />
                <line class="threshold-tab" x1=format!("{:.1}", x(threshold)) x2=format!("{:.1}", x(threshold)) y1=LABEL_Y - 9.0 y2=y(1.0) />
                <text class="tick threshold-label" data-testid="threshold-label" x=format!("{label_x:.1}") y=LABEL_Y text-anchor=label_anchor>{move || format!("{} {} s", w(page.lang.get(), "threshold"), tracelab_core::format::trim_num(threshold))}</text>
                <line class="quantile" x1=LEFT x2=W - RIGHT y1=y(q) y2=y(q) />
                <path class="ecdf base" data-testid="ecdf-base" d=base_path />
                <path class="ecdf new" data-testid="ecdf-new" d=new_path />
                {bars}
            </svg>
            <p class="chart-desc">{move || w(page.lang.get(), "chart_desc")}</p>
        </figure>
    }
}
