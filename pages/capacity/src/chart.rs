//! One chart (SVG, no plotting library): the joint qualification rate of each step (left axis)
//! with its 95 % interval as a bar, the P95 TTFT of successes (right axis) with its interval,
//! the target line, the TTFT threshold and the knee, against offered load. Every value is the
//! core's; nothing is computed here but positions.

use leptos::prelude::*;
use tracelab_core::capacity::{Capacity, Measure};
use tracelab_core::format::{round_to, trim_num};
use tracelab_core::units;

use crate::page::Page;
use crate::words::w;

const W: f64 = 640.0;
const H: f64 = 320.0;
const LEFT: f64 = 48.0;
const RIGHT: f64 = 56.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;

#[component]
pub fn CapacityChart(cap: Capacity) -> impl IntoView {
    let page = expect_context::<Page>();
    let max_load = cap
        .steps
        .iter()
        .map(|s| s.load)
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.08;
    let ttft_target = (cap.target.measure == Measure::TtftP95).then_some(cap.target.value);
    let max_ttft = cap
        .steps
        .iter()
        .flat_map(|s| [s.ttft_p95.value, s.ttft_p95.interval.and_then(|b| b.hi)])
        .flatten()
        .chain([cap.threshold_s, ttft_target.unwrap_or(0.0)])
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.1;
    let x = move |l: f64| LEFT + (l / max_load) * (W - LEFT - RIGHT);
    let y = move |f: f64| TOP + (1.0 - f.clamp(0.0, 1.0)) * (H - TOP - BOTTOM);
    let yt = move |s: f64| y(s / max_ttft);
    let f1 = |v: f64| format!("{v:.1}");
    let joint_path: String = cap
        .steps
        .iter()
        .filter_map(|s| s.joint_rate.value.map(|v| (s.load, v)))
        .enumerate()
        .map(|(i, (l, v))| format!("{}{:.1},{:.1}", if i == 0 { "M" } else { " L" }, x(l), y(v)))
        .collect();
    let ttft_path: String = cap
        .steps
        .iter()
        .filter_map(|s| s.ttft_p95.value.map(|v| (s.load, v)))
        .enumerate()
        .map(|(i, (l, v))| {
            format!(
                "{}{:.1},{:.1}",
                if i == 0 { "M" } else { " L" },
                x(l),
                yt(v)
            )
        })
        .collect();
    let points = cap
        .steps
        .iter()
        .map(|s| {
            let xx = x(s.load);
            let joint = s.joint_rate.value.map(|v| {
                let (lo, hi) = s.joint_rate.interval.map_or((v, v), |b| (b.lo.unwrap_or(0.0), b.hi.unwrap_or(1.0)));
                view! {
                    <g class="joint" data-testid="joint-point">
                        <line class="bar" x1=f1(xx - 4.0) x2=f1(xx - 4.0) y1=f1(y(lo)) y2=f1(y(hi)) />
                        <circle cx=f1(xx - 4.0) cy=f1(y(v)) r="4" />
                    </g>
                }
            });
            let ttft = s.ttft_p95.value.map(|v| {
                let lo = s.ttft_p95.interval.and_then(|b| b.lo).unwrap_or(v);
                let hi = s.ttft_p95.interval.and_then(|b| b.hi);
                view! {
                    <g class="ttft" data-testid="ttft-point">
                        <line class=if hi.is_some() { "bar" } else { "bar open" } x1=f1(xx + 4.0) x2=f1(xx + 4.0) y1=f1(yt(lo)) y2=f1(hi.map(yt).unwrap_or(TOP)) />
                        <rect x=f1(xx + 1.0) y=f1(yt(v) - 3.0) width="6" height="6" />
                    </g>
                }
            });
            let label = trim_num(s.load);
            view! {
                {joint}
                {ttft}
                <text class="tick" x=f1(xx) y=H - BOTTOM + 16.0 text-anchor="middle">{label}</text>
            }
        })
        .collect_view();
    let target_line = match cap.target.measure {
        Measure::JointRate => Some(y(cap.target.value)),
        Measure::TtftP95 => Some(yt(cap.target.value)),
        // Goodput has no axis here, and the plotted rate is the attempts', not the sessions'.
        Measure::Goodput | Measure::SessionShare | Measure::SessionGoodput => None,
    };
    let knee = cap.knee.map(|k| {
        let xx = x(k);
        view! {
            <line class="knee" data-testid="knee-line" x1=f1(xx) x2=f1(xx) y1=TOP y2=H - BOTTOM />
            <text class="tick knee-label" x=f1(xx + 3.0) y=TOP + 10.0>{move || w(page.lang.get(), "knee_mark")}</text>
        }
    });
    let kind_label = move || {
        cap.kind
            .describe(0.0, page.lang.get())
            .replace(" 0", "")
            .replace("0", "")
    };
    view! {
        <figure class="cap-chart" data-testid="cap-chart">
            <figcaption><strong>{move || w(page.lang.get(), "chart_title")}</strong></figcaption>
            <svg viewBox=format!("0 0 {W} {H}") role="img" aria-label=move || w(page.lang.get(), "chart_desc")>
                <line class="axis" x1=LEFT x2=W - RIGHT y1=y(0.0) y2=y(0.0) />
                <line class="axis" x1=LEFT x2=LEFT y1=y(0.0) y2=y(1.0) />
                <line class="axis" x1=W - RIGHT x2=W - RIGHT y1=y(0.0) y2=y(1.0) />
                {[0.0, 0.5, 1.0].into_iter().map(|f| view! {
                    <text class="tick joint-tick" x=LEFT - 6.0 y=f1(y(f) + 4.0) text-anchor="end">{format!("{}%", round_to(units::percent_from_share(f), 0))}</text>
                    <text class="tick ttft-tick" x=W - RIGHT + 6.0 y=f1(y(f) + 4.0)>{format!("{} s", round_to(max_ttft * f, 2))}</text>
                }).collect_view()}
                <line class="threshold" data-testid="threshold-line" x1=LEFT x2=W - RIGHT y1=f1(yt(cap.threshold_s)) y2=f1(yt(cap.threshold_s)) />
                {target_line.map(|ty| view! { <line class="target" data-testid="target-line" x1=LEFT x2=W - RIGHT y1=f1(ty) y2=f1(ty) /> })}
                {knee}
                <path class="line joint" d=joint_path />
                <path class="line ttft" d=ttft_path />
                {points}
                <text class="tick" x=f1((LEFT + W - RIGHT) / 2.0) y=H - 6.0 text-anchor="middle">{kind_label}</text>
            </svg>
            <p class="chart-desc">{move || w(page.lang.get(), "chart_desc")}</p>
            {(cap.target.measure == Measure::Goodput).then(|| view! { <p class="chart-desc">{move || w(page.lang.get(), "goodput_no_line")}</p> })}
            {matches!(cap.target.measure, Measure::SessionShare | Measure::SessionGoodput).then(|| view! { <p class="chart-desc">{move || w(page.lang.get(), "session_no_line")}</p> })}
        </figure>
    }
}
