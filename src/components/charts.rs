//! Charts as inline SVG: the success-TTFT sample with the threshold and the tail marker, the
//! selected attempt's timeline, and the run — each attempt waiting then streaming, requests in
//! flight, GPU lanes on the same time axis. One colour meaning everywhere (green qualified,
//! amber a success that is too slow or failed quality, red failed, grey warm-up), told by one
//! legend. SVG text is real text: it scales with the page and a test can read where it lies.
//! Every number placed here comes from the core (`timeline`, `Index`, `Metrics`).

use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use tracelab_core::format::{self, axis_label as label, trim_num};
use tracelab_core::timeline::{in_flight, ttft_points};
use tracelab_core::{
    trace::GPU_UNSUPPORTED, units, verdict, Attempt, Phase, Settings, Verdict, WarmupPolicy,
};

use super::chart_frame::{use_width, RunAxis, BARS_FIT};
use crate::i18n::tr;
use crate::state::use_lab;
use tracelab_web::ticks;

/// At most this many points or bars are drawn; beyond it the chart shows evenly spaced ranks.
const MAX_MARKS: usize = 2000;

/// What a mark's colour means, the same in every chart.
#[derive(Clone, Copy, PartialEq)]
enum Mark {
    Qualified,
    /// A complete success that was too slow or failed quality.
    NotQualified,
    Failed,
    WarmUp,
}

impl Mark {
    fn of(a: &Attempt, v: &Verdict, s: &Settings) -> Mark {
        if a.phase == Phase::Warmup && s.population.warmup == WarmupPolicy::Exclude {
            Mark::WarmUp
        } else if v.qualified {
            Mark::Qualified
        } else if v.complete_success {
            Mark::NotQualified
        } else {
            Mark::Failed
        }
    }

    fn class(self) -> &'static str {
        match self {
            Mark::Qualified => "m-qualified",
            Mark::NotQualified => "m-not-qualified",
            Mark::Failed => "m-failed",
            Mark::WarmUp => "m-warmup",
        }
    }
}

#[component]
pub fn Charts() -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let resized = RwSignal::new(0u32);
    let listener = window_event_listener(ev::resize, move |_| resized.update(|n| *n += 1));
    on_cleanup(move || listener.remove());
    let run_axis = RwSignal::new(None);
    let lab = use_lab();
    // The run's clock from the working attempts alone (a settings edit moves none of it): how
    // many have a start, the first start (or intended start) and the last end. Counted once per
    // trace for the run chart and the canvas views both.
    let clock: Memo<RunClock> = Memo::new(move |_| {
        lab.working.with(|w| {
            let timed: Vec<&Attempt> = w
                .as_ref()?
                .attempts
                .iter()
                .filter(|a| a.start_ms.is_some())
                .collect();
            if timed.is_empty() {
                return None;
            }
            let end = timed.iter().map(|a| end_of(a)).fold(0.0, f64::max);
            let start = timed
                .iter()
                .map(|a| a.start_ms.unwrap_or(0.0))
                .chain(timed.iter().filter_map(|a| a.intended_start_ms))
                .fold(0.0, f64::min);
            Some((timed.len(), start, end))
        })
    });
    // Too many timed attempts for a bar each: the run is drawn in time buckets.
    let big = Memo::new(move |_| clock.with(|c| c.is_some_and(|(n, _, _)| n > BARS_FIT)));
    view! {
        <section class="charts" aria-labelledby="charts-h">
            <h2 id="charts-h">{move || tr(lang.get(), "charts")}</h2>
            <Legend />
            <div class="chart-grid">
                <TtftChart resized=resized />
                <RequestTimeline resized=resized />
            </div>
            <RunTimeline resized=resized run_axis=run_axis clock=clock big=big />
            <super::distribution::Distribution resized=resized run_axis=run_axis big=big />
        </section>
    }
}

/// The one key to the colours of every chart.
#[component]
fn Legend() -> impl IntoView {
    let lab = use_lab();
    view! {
        <ul class="legend" data-testid="chart-legend">
            {move || {
                let l = lab.lang.get();
                [("m-qualified", "lg_qualified"), ("m-not-qualified", "lg_not_qualified"), ("m-failed", "lg_failed"), ("m-warmup", "lg_warmup"), ("m-selected", "lg_selected")]
                    .into_iter()
                    .map(|(class, key)| view! { <li><span class=format!("swatch {class}") aria-hidden="true"></span>{tr(l, key)}</li> })
                    .collect_view()
            }}
        </ul>
    }
}

#[component]
fn TtftChart(resized: RwSignal<u32>) -> impl IntoView {
    let lab = use_lab();
    let holder = NodeRef::<leptos::html::Div>::new();
    let width = use_width(holder, resized);
    // The sample is ranked once per trace and population: a threshold edit moves no point, so
    // it never sorts again (each drawn dot is judged under the current settings instead). It is
    // shared, not copied, by each drawing: at 1,000,000 attempts a copy per edit was 50 MB.
    let population = Memo::new(move |_| lab.settings.with(|s| s.population));
    let points = Memo::new(move |_| {
        let population = population.get();
        lab.working
            .with(|w| {
                w.as_ref().map(|w| {
                    lab.settings.with_untracked(|s| {
                        ttft_points(
                            &w.attempts,
                            &Settings {
                                population,
                                ..s.clone()
                            },
                        )
                    })
                })
            })
            .map(Arc::new)
            .unwrap_or_default()
    });
    let svg = move || {
        let l = lab.lang.get();
        let w = width.get();
        let (Some(m), s) = (lab.metrics.get(), lab.settings.get()) else {
            return None;
        };
        if w <= 0.0 {
            return None;
        }
        let pts = points.get();
        let selected = lab.selected.get();
        let failures = if s.population.missing_ttft == tracelab_core::MissingTtft::TreatAsZero {
            0
        } else {
            m.failures
        };
        let h = 250.0;
        let (left, top, bottom) = (46.0, 26.0, 40.0);
        // The failures' strip is as wide as its longest line ("9,981 failures" at 100 k attempts).
        let strip_lines = [
            tr(l, "no_ttft").to_string(),
            format::count(failures, tr(l, "failure_one"), tr(l, "failure_many")),
            tr(l, "not_plotted").to_string(),
        ];
        // The count is written larger and bold (15 px against 11.5 px): about 1.4 times as wide.
        let strip = if failures > 0 {
            [
                text_width(&strip_lines[0]) * 1.1,
                text_width(&strip_lines[1]) * 1.4,
                text_width(&strip_lines[2]),
            ]
            .into_iter()
            .fold(96.0, f64::max)
                + 10.0
        } else {
            0.0
        };
        let right = w - 12.0 - strip;
        let n = pts.len();
        let max_s = pts
            .last()
            .map_or(0.0, |p| units::s_from_ms(p.ttft_ms))
            .max(s.ttft_threshold_s)
            .max(0.1);
        let yt = ticks(max_s * 1.05, 5);
        let ymax = *yt.last().unwrap_or(&1.0);
        let y = move |v: f64| top + (h - top - bottom) * (1.0 - v / ymax);
        let x = move |rank: f64| left + (right - left) * (rank - 0.5) / n.max(1) as f64;
        // As many rank ticks as their labels have room for ("80,000" is about 40 px wide).
        let room = ((right - left) / (text_width(&format::integer(n as u64)) + 16.0))
            .floor()
            .clamp(2.0, 6.0) as usize;
        let xt: Vec<usize> = if n <= 10 {
            (1..=n).collect()
        } else {
            ticks(n as f64, room)
                .into_iter()
                .map(|v| v as usize)
                .filter(|v| *v >= 1 && *v <= n)
                .collect()
        };
        let threshold = s.ttft_threshold_s;
        let tail = m.ttft_tail.value;
        let tail_name = tracelab_core::format::percentile_label(s.p);
        // The two line labels sit above their lines, at opposite ends; when the lines are close
        // the tail's label goes below its line so neither strikes the other.
        let ty = y(threshold);
        let tail_label_y = tail.map(|t| {
            if (y(t) - ty).abs() < 16.0 && y(t) >= ty {
                y(t) + 14.0
            } else {
                y(t) - 5.0
            }
        });
        let step = n.div_ceil(MAX_MARKS).max(1);
        let dots = working_rows(lab, &pts, step, selected, &s);
        let many = n > BARS_FIT;
        Some(view! {
            <svg class="chart-svg" width=w height=h viewBox=format!("0 0 {w} {h}") role="img" data-testid="ttft-chart"
                aria-label=tr(l, "ttft_chart_alt")>
                <text class="axis-title" x=4 y=14>{tr(l, "ttft_axis")}</text>
                {yt.iter().map(|v| view! {
                    <line class="grid" x1=left x2=right y1=y(*v) y2=y(*v) />
                    <text class="tick" x=left - 6.0 y=y(*v) + 4.0 text-anchor="end">{label(*v)}</text>
                }).collect_view()}
                {xt.iter().map(|r| view! {
                    <text class="tick" x=x(*r as f64) y=h - bottom + 16.0 text-anchor="middle">{format::integer(*r as u64)}</text>
                }).collect_view()}
                <text class="axis-title" x=right y=h - 6.0 text-anchor="end">{tr(l, "rank_axis")}</text>
                <line class="threshold" x1=left x2=right y1=ty y2=ty />
                {tail.map(|t| view! { <line class="tail" x1=left x2=right y1=y(t) y2=y(t) /> })}
                {(!many).then(|| dots.iter().map(|(rank, p, mark, is_selected)| view! {
                    <circle class=format!("dot {}", mark.class()) class:selected=*is_selected data-testid="ttft-dot"
                        data-row=p.row + 1 cx=x(*rank as f64) cy=y(units::s_from_ms(p.ttft_ms)) r={if *is_selected { 6.5 } else if n > 200 { 2.0 } else { 4.5 }} />
                }).collect_view())}
                // Beyond BARS_FIT the dots of one colour are one path: thousands of circles, each
                // with its own attributes, were rebuilt on every edit (30 ms at 100,000 attempts).
                {many.then(|| [Mark::Qualified, Mark::NotQualified, Mark::Failed, Mark::WarmUp].into_iter().map(|m| {
                    let d: String = dots.iter().filter(|(_, _, mark, _)| *mark == m).map(|(rank, p, _, _)| {
                        let (cx, cy) = (x(*rank as f64), y(units::s_from_ms(p.ttft_ms)));
                        format!("M{:.1} {:.1}h0", cx, cy)
                    }).collect();
                    view! { <path class=format!("dots {}-stroke", m.class()) data-testid="ttft-dots" data-mark=m.class() d=d /> }
                }).collect_view())}
                {many.then(|| dots.iter().find(|d| d.3).map(|(rank, p, mark, _)| view! {
                    <circle class=format!("dot {} selected", mark.class()) data-testid="ttft-dot"
                        data-row=p.row + 1 cx=x(*rank as f64) cy=y(units::s_from_ms(p.ttft_ms)) r=6.5 />
                }))}
                // The lines' labels come after the dots, so their halo keeps them readable where
                // the dots crowd (the tail at 100,000 attempts, at 360 px).
                <text class="line-label threshold-label" data-testid="threshold-label" x=left + 4.0 y=ty - 5.0>
                    {format!("{} {} {} s", tr(l, "threshold_short"), s.comparison.symbol(), trim_num(threshold))}
                </text>
                {tail.zip(tail_label_y).map(|(t, ly)| view! {
                    <text class="line-label tail-label" data-testid="tail-label" x=right - 4.0 y=ly text-anchor="end">
                        {format!("{tail_name} = {}", format::duration(t))}
                    </text>
                })}
                {(failures > 0).then(|| view! {
                    <g data-testid="no-ttft">
                        <rect class="strip" x=w - strip - 4.0 y=top width=strip height=h - top - bottom />
                        <text class="strip-title" x=w - strip + 4.0 y=top + 18.0>{strip_lines[0].clone()}</text>
                        <text class="strip-count m-failed-text" data-testid="no-ttft-count" x=w - strip + 4.0 y=top + 44.0>{strip_lines[1].clone()}</text>
                        <text class="strip-note" x=w - strip + 4.0 y=top + 64.0>{strip_lines[2].clone()}</text>
                    </g>
                })}
            </svg>
        })
    };
    view! {
        <figure class="chart">
            <div class="chart-box" node_ref=holder>{svg}</div>
            // The caption says what is plotted under the choice in force: with a missing TTFT
            // counted as 0, the attempts without a token are in the sample, at 0 s.
            <figcaption data-testid="ttft-caption">{move || {
                let zero = lab.settings.with(|s| s.population.missing_ttft == tracelab_core::MissingTtft::TreatAsZero);
                tr(lab.lang.get(), if zero { "ttft_chart_zero" } else { "ttft_chart" })
            }}</figcaption>
            <details>
                <summary>{move || tr(lab.lang.get(), "as_table")}</summary>
                {move || {
                    let l = lab.lang.get();
                    let pts = points.get();
                    let shown: Vec<(usize, f64)> = spread(pts.len()).map(|i| (i + 1, units::s_from_ms(pts[i].ttft_ms))).collect();
                    view! {
                        <table class="alt-table">
                            <thead><tr><th>{tr(l, "rank")}</th><th>{tr(l, "col_ttft")}</th></tr></thead>
                            <tbody>{shown.into_iter().map(|(r, v)| view! { <tr><td>{r}</td><td>{trim_num(v)}</td></tr> }).collect_view()}</tbody>
                        </table>
                        <p data-testid="failures-apart">{format!("{}: {}", tr(l, "failures_apart"), format::integer(lab.metrics.with(|m| m.as_ref().map_or(0, |m| m.failures)) as u64))}</p>
                    }
                }}
            </details>
        </figure>
    }
}

/// The points to draw (every `step`-th rank, and the selected row's always), with their mark.
fn working_rows(
    lab: crate::state::Lab,
    pts: &[tracelab_core::timeline::TtftPoint],
    step: usize,
    selected: usize,
    s: &Settings,
) -> Vec<(usize, tracelab_core::timeline::TtftPoint, Mark, bool)> {
    lab.working.with(|w| {
        let Some(w) = w else { return Vec::new() };
        pts.iter()
            .enumerate()
            .filter(|(k, p)| k % step == 0 || p.row == selected)
            .map(|(k, p)| {
                (
                    k + 1,
                    *p,
                    Mark::of(&w.attempts[p.row], &verdict(&w.attempts[p.row], s), s),
                    p.row == selected,
                )
            })
            .collect()
    })
}

/// Up to MAX_MARKS ranks spread evenly over 0..n (all of them when n is small).
fn spread(n: usize) -> impl Iterator<Item = usize> {
    let step = n.div_ceil(MAX_MARKS).max(1);
    (0..n)
        .step_by(step)
        .chain((n > 0 && !(n - 1).is_multiple_of(step)).then_some(n - 1))
}

/// When an attempt's bar ends on the run's clock (the core's `distribution::end_ms`).
fn end_of(a: &Attempt) -> f64 {
    tracelab_core::distribution::end_ms(a, a.start_ms.unwrap_or(0.0))
}

/// About how wide one character of a chart label is, in pixels (11 px sans-serif).
const TEXT_PX: f64 = 6.5;

/// About how wide a label is on screen: a Chinese character is about twice a Latin one.
fn text_width(text: &str) -> f64 {
    text.chars()
        .map(|c| if c.is_ascii() { TEXT_PX } else { 2.0 * TEXT_PX })
        .sum()
}

#[component]
fn RequestTimeline(resized: RwSignal<u32>) -> impl IntoView {
    let lab = use_lab();
    let holder = NodeRef::<leptos::html::Div>::new();
    let width = use_width(holder, resized);
    let selected = move || {
        let i = lab.selected.get();
        lab.working
            .with(|w| w.as_ref().and_then(|w| w.attempts.get(i).cloned()))
    };
    let svg = move || {
        let l = lab.lang.get();
        let w = width.get();
        let a = selected()?;
        if w <= 0.0 {
            return None;
        }
        let mark = lab.settings.with(|s| Mark::of(&a, &verdict(&a, s), s));
        let h = 262.0;
        let (left, right, axis) = (14.0, w - 14.0, h - 56.0);
        let end = a
            .e2e_ms
            .or(a.events.last().map(|e| e.at_ms))
            .or(a.ttft_ms)
            .unwrap_or(0.0)
            .max(1.0);
        let xt = ticks(end, 5);
        let xmax = *xt.last().unwrap_or(&end);
        let x = move |ms: f64| left + (right - left) * ms / xmax;
        let bar_y = 120.0;
        let gaps: Vec<(f64, f64)> = if a.events.len() <= 12 {
            a.event_gaps_ms()
                .zip(a.events.iter())
                .map(|(g, e)| (e.at_ms, g))
                .collect()
        } else {
            Vec::new()
        };
        Some(view! {
            <svg class="chart-svg" width=w height=h viewBox=format!("0 0 {w} {h}") role="img" data-testid="request-chart"
                aria-label=tr(l, "request_chart_alt")>
                <text class="chart-title" x=left y=18>{format!("{} — {}", a.id, a.outcome.label(l))}</text>
                {a.ttft_ms.map(|t| view! {
                    <line class="bracket m-qualified-stroke" x1=x(0.0) x2=x(t) y1=48 y2=48 />
                    <text class="line-label" data-testid="request-ttft" x=x(0.0) y=42>{format!("TTFT {}", format::duration_ms(t))}</text>
                })}
                {a.ttft_ms.is_none().then(|| view! { <text class="line-label m-failed-text" x=x(0.0) y=42>{tr(l, "no_token_ttft")}</text> })}
                {a.e2e_ms.map(|e| view! {
                    <line class="bracket" x1=x(0.0) x2=x(e) y1=80 y2=80 />
                    <text class="line-label" data-testid="request-e2e" x=x(0.0) y=74>{format!("E2E {}", format::duration_ms(e))}</text>
                })}
                // Waiting for the first token, then streaming: the two parts of the request.
                {match a.ttft_ms {
                    Some(t) => view! {
                        <rect class=format!("wait {}", mark.class()) x=x(0.0) y=bar_y width=(x(t) - x(0.0)).max(1.0) height=18 />
                        <rect class=format!("stream {}", mark.class()) x=x(t) y=bar_y width=(x(end) - x(t)).max(1.0) height=18 />
                    }.into_any(),
                    None => view! { <rect class=format!("wait {}", mark.class()) x=x(0.0) y=bar_y width=(x(end) - x(0.0)).max(1.0) height=18 /> }.into_any(),
                }}
                {a.first_byte_ms.map(|b| view! { <circle class="first-byte" cx=x(b) cy=bar_y + 9.0 r=3.5 /> })}
                {
                    // A "×n" label only where it clears the previous one: events a few pixels
                    // apart would print "×2×2×2" on top of each other.
                    let mut clear_from = f64::NEG_INFINITY;
                    a.events.iter().map(|e| {
                        let at = x(e.at_ms);
                        let text = format!("×{}", e.tokens);
                        let fits = e.tokens > 1 && at - TEXT_PX * text.chars().count() as f64 / 2.0 >= clear_from;
                        if fits {
                            clear_from = at + TEXT_PX * text.chars().count() as f64 / 2.0 + 2.0;
                        }
                        view! {
                            <line class="event" x1=at x2=at y1=bar_y - 5.0 y2=bar_y + 23.0 />
                            {fits.then(|| view! { <text class="tokens" x=at y=bar_y + 36.0 text-anchor="middle">{text}</text> })}
                        }
                    }).collect_view()
                }
                // A gap's label only where the gap is wide enough on screen to hold it.
                {gaps.iter().filter_map(|(at, gap)| {
                    let (from, to) = (x(*at), x(at + gap));
                    let text = label(*gap);
                    ((to - from).abs() >= TEXT_PX * text.chars().count() as f64 + 4.0).then(|| view! {
                        <text class="gap" data-testid="request-gap" x=from + (to - from) / 2.0 y=bar_y - 9.0 text-anchor="middle">{text}</text>
                    })
                }).collect_view()}
                {xt.iter().map(|v| view! {
                    <line class="grid" x1=x(*v) x2=x(*v) y1=axis - 4.0 y2=axis />
                    <text class="tick" x=x(*v) y=axis + 14.0 text-anchor="middle">{label(*v)}</text>
                }).collect_view()}
                <line class="axis" x1=left x2=right y1=axis y2=axis />
                <text class="axis-title" x=right y=h - 20.0 text-anchor="end">{tr(l, "ms_axis")}</text>
                {(!gaps.is_empty()).then(|| view! { <text class="axis-title" x=left y=h - 4.0>{tr(l, "itl_label")}</text> })}
            </svg>
        })
    };
    view! {
        <figure class="chart">
            <div class="chart-box" node_ref=holder>{svg}</div>
            <figcaption>{move || tr(lab.lang.get(), "request_chart")}</figcaption>
            <details>
                <summary>{move || tr(lab.lang.get(), "as_table")}</summary>
                {move || selected().map(|a| {
                    let l = lab.lang.get();
                    let mut rows = vec![("t0".to_string(), "0".to_string())];
                    if let Some(b) = a.first_byte_ms { rows.push((tr(l, "first_byte").into(), trim_num(b))); }
                    if let Some(t) = a.ttft_ms { rows.push((tr(l, "first_token").into(), trim_num(t))); }
                    for (k, e) in a.events.iter().enumerate() {
                        rows.push((format!("{} {} ({} tok)", tr(l, "event"), k + 1, e.tokens), trim_num(e.at_ms)));
                    }
                    if let Some(e) = a.e2e_ms { rows.push((tr(l, "end").into(), trim_num(e))); }
                    view! {
                        <table class="alt-table" data-testid="request-table">
                            <thead><tr><th>{tr(l, "moment")}</th><th>"ms"</th></tr></thead>
                            <tbody>{rows.into_iter().map(|(k, v)| view! { <tr><td>{k}</td><td>{v}</td></tr> }).collect_view()}</tbody>
                        </table>
                    }
                })}
            </details>
        </figure>
    }
}

/// How many attempts have a start, the first start (or intended start) and the last end (ms);
/// `None` when no attempt has a start.
type RunClock = Option<(usize, f64, f64)>;

#[component]
fn RunTimeline(
    resized: RwSignal<u32>,
    run_axis: RwSignal<RunAxis>,
    clock: Memo<RunClock>,
    big: Memo<bool>,
) -> impl IntoView {
    let lab = use_lab();
    let holder = NodeRef::<leptos::html::Div>::new();
    let width = use_width(holder, resized);
    let flight = Memo::new(move |_| {
        if big.get() {
            Vec::new()
        } else {
            lab.working.with(|w| {
                w.as_ref()
                    .map(|w| in_flight(&w.attempts))
                    .unwrap_or_default()
            })
        }
    });
    let svg = move || {
        let l = lab.lang.get();
        let w = width.get();
        let working = lab.working.get()?;
        let loaded = lab.loaded.get()?;
        let s = lab.settings.get();
        let selected = lab.selected.get();
        if w <= 0.0 {
            return None;
        }
        let Some((timed_n, t_start, attempts_end)) = clock.get() else {
            // No empty box: say why there is no timeline.
            return Some(view! { <p class="no-timeline" data-testid="no-timeline">{tr(l, "no_timeline")}</p> }.into_any());
        };
        let big = big.get();
        // A bar per timed attempt; a big trace draws none, so its rows are not gathered on each edit.
        let rows: Vec<(usize, &Attempt)> = if big {
            Vec::new()
        } else {
            working
                .attempts
                .iter()
                .enumerate()
                .filter(|(_, a)| a.start_ms.is_some())
                .collect()
        };
        let gpu = &loaded.trace.gpu;
        let t_end = attempts_end
            .max(gpu.iter().map(|g| g.t_ms).fold(0.0, f64::max))
            .max(1.0);
        let xt = ticks(units::s_from_ms(t_end - t_start), 8);
        let span = units::ms_from_s(xt.last().copied().unwrap_or(1.0));
        let labels = timed_n <= 40;
        let (left, right) = (if labels { 64.0 } else { 46.0 }, w - 14.0);
        if run_axis.get_untracked() != Some((w, left, right, t_start, t_end, span)) {
            run_axis.set(Some((w, left, right, t_start, t_end, span)));
        }
        let x = move |ms: f64| left + (right - left) * (ms - t_start) / span;
        let row_h = (300.0 / rows.len().max(1) as f64).clamp(2.0, 20.0);
        let top = 26.0;
        let bars_h = row_h * rows.len() as f64;
        let flight_top = top + bars_h + 18.0;
        // Beyond BARS_FIT the bundle's lanes above hold the requests in flight too.
        let flight_h = if big { 0.0 } else { 60.0 };
        let gpu_top = flight_top + flight_h + 34.0;
        let gpu_h = if gpu.is_empty() { 0.0 } else { 80.0 };
        // The engine's own signals (`--server-metrics`, source 0) under the GPU lanes: its queue
        // and running batch on one lane (scaled to their peak), its KV cache on another (0–1).
        let engine: Vec<&tracelab_core::trace::engine::EngineSample> = loaded
            .trace
            .engine
            .iter()
            .filter(|e| e.source == 0)
            .collect();
        let engine_top = gpu_top + gpu_h + if gpu.is_empty() { 0.0 } else { 34.0 };
        let engine_h = if engine.is_empty() { 0.0 } else { 60.0 };
        let kv_top = engine_top + engine_h + 26.0;
        let below = if engine.is_empty() {
            gpu_top + gpu_h
        } else {
            kv_top + engine_h
        };
        let axis = below
            + (if gpu.is_empty() && engine.is_empty() {
                -14.0
            } else {
                8.0
            });
        let h = axis + 36.0;
        let steps = flight.get();
        let peak = steps.iter().map(|(_, n)| *n).max().unwrap_or(0).max(1);
        let fy = move |n: usize| flight_top + flight_h * (1.0 - n as f64 / peak as f64);
        let mut path = format!("M{} {}", x(t_start), fy(0));
        let mut last = 0;
        for (t, n) in steps.iter() {
            path.push_str(&format!(" H{} V{}", x(*t), fy(*n)));
            last = *n;
        }
        let _ = last;
        path.push_str(&format!(" H{}", x(t_end)));
        let gpu_ids: Vec<u32> = {
            let mut ids: Vec<u32> = gpu.iter().map(|g| g.gpu).collect();
            ids.sort_unstable();
            ids.dedup();
            ids
        };
        let gy = move |pct: f64| {
            gpu_top + gpu_h * (1.0 - units::share_from_percent(pct.clamp(0.0, 100.0)))
        };
        let lanes: Vec<(u32, String, String)> = gpu_ids
            .iter()
            .map(|id| {
                let line = |f: &dyn Fn(&tracelab_core::GpuSample) -> Option<f64>| {
                    gpu.iter()
                        .filter(|g| g.gpu == *id)
                        .filter_map(|g| f(g).map(|v| format!("{},{}", x(g.t_ms), gy(v))))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                (
                    *id,
                    line(&|g| Some(g.util_pct)),
                    line(&|g| g.mem_used_pct()),
                )
            })
            .collect();
        let queue_peak = engine
            .iter()
            .flat_map(|e| [e.waiting, e.running])
            .flatten()
            .fold(1.0, f64::max);
        let qy = move |n: f64| engine_top + engine_h * (1.0 - n / queue_peak);
        let ky = move |share: f64| kv_top + engine_h * (1.0 - share.clamp(0.0, 1.0));
        let engine_line =
            |f: &dyn Fn(&tracelab_core::trace::engine::EngineSample) -> Option<f64>,
             y: &dyn Fn(f64) -> f64| {
                engine
                    .iter()
                    .filter_map(|e| f(e).map(|v| format!("{},{}", x(e.t_ms), y(v))))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
        let waiting_line = engine_line(&|e| e.waiting, &qy);
        let running_line = engine_line(&|e| e.running, &qy);
        let kv_line = engine_line(&|e| e.kv_cache, &ky);
        // The selected attempt's interval, shaded across the GPU and engine lanes alike.
        let shade_top = if gpu.is_empty() { engine_top } else { gpu_top };
        // From the selected attempt itself: a big trace draws no bars, and its GPU and engine lanes
        // still show when that attempt ran.
        let shade = working
            .attempts
            .get(selected)
            .filter(|a| a.start_ms.is_some())
            .filter(|_| !(gpu.is_empty() && engine.is_empty()))
            .map(|a| {
                let start = a.start_ms.unwrap_or(0.0);
                (
                    x(start),
                    (x(end_of(a).max(start + span * 0.003)) - x(start)).max(1.0),
                )
            });
        let engine_name = engine.first().map(|e| e.engine.clone()).unwrap_or_default();
        Some(view! {
            <svg class="chart-svg" width=w height=h viewBox=format!("0 0 {w} {h}") role="img" data-testid="run-chart"
                aria-label=tr(l, "run_chart_alt")>
                <text class="axis-title" x=4 y=14>{tr(l, if big { "run_rows_buckets" } else if labels { "run_rows" } else { "run_rows_many" })}</text>
                // The last tick is the plot's right edge: its label ends there rather than
                // straddling it ("2,500" ran past a 360 px chart's edge).
                {xt.iter().enumerate().map(|(i, v)| view! {
                    <line class="grid" x1=x(t_start + units::ms_from_s(*v)) x2=x(t_start + units::ms_from_s(*v)) y1=top y2=axis />
                    <text class="tick" x=x(t_start + units::ms_from_s(*v)) y=axis + 14.0 text-anchor={if i + 1 == xt.len() && i > 0 { "end" } else { "middle" }}>{label(units::s_from_ms(t_start) + v)}</text>
                }).collect_view()}
                <text class="axis-title" x=right y=h - 4.0 text-anchor="end">{tr(l, "s_axis")}</text>
                {rows.iter().enumerate().map(|(k, (i, a))| {
                    let v = verdict(a, &s);
                    let mark = Mark::of(a, &v, &s);
                    let start = a.start_ms.unwrap_or(0.0);
                    let end = end_of(a).max(start + span * 0.003);
                    let first = a.ttft_ms.map(|t| start + t);
                    let y0 = top + k as f64 * row_h;
                    let bh = (row_h * 0.72).max(1.5);
                    let intended = a.intended_start_ms.filter(|t| (t - start).abs() > 0.5);
                    view! {
                        <g data-testid="run-bar" data-id=a.id.clone() data-row=i + 1 class:selected=*i == selected>
                            {labels.then(|| view! { <text class="row-label" data-testid="run-row-label" x=left - 6.0 y=y0 + bh - 1.0 text-anchor="end">{format!("{} {}", i + 1, a.id)}</text> })}
                            <rect class=format!("wait {}", mark.class()) x=x(start) y=y0 width=(x(first.unwrap_or(end).min(end)) - x(start)).max(1.0) height=bh />
                            {first.filter(|f| *f < end).map(|f| view! { <rect class=format!("stream {}", mark.class()) x=x(f) y=y0 width=(x(end) - x(f)).max(1.0) height=bh /> })}
                            {intended.map(|t| view! {
                                <line class="intended" x1=x(t) x2=x(start) y1=y0 + bh / 2.0 y2=y0 + bh / 2.0 />
                                <line class="intended-tick" data-testid="intended-start" x1=x(t) x2=x(t) y1=y0 y2=y0 + bh />
                            })}
                            {(*i == selected).then(|| view! { <rect class="selected-outline" x=x(start) - 2.0 y=y0 - 2.0 width=(x(end) - x(start)).max(1.0) + 4.0 height=bh + 4.0 /> })}
                        </g>
                    }
                }).collect_view()}
                {(!big).then(|| view! {
                    <text class="lane-title" x=4 y=flight_top - 4.0>{format!("{} ({} {})", tr(l, "in_flight"), tr(l, "peak"), format::integer(peak as u64))}</text>
                    <path class="in-flight" data-testid="in-flight" d=path />
                    <line class="axis" x1=left x2=right y1=flight_top + flight_h y2=flight_top + flight_h />
                })}
                // What the GPU and the engine did while the selected attempt ran.
                {shade.map(|(sx, sw)| view! {
                    <rect class="gpu-selected" data-testid="gpu-selected" x=sx y=shade_top width=sw height=below - shade_top />
                })}
                {(!engine.is_empty()).then(|| view! {
                    <text class="lane-title" x=4 y=engine_top - 12.0>{format!("{} · {engine_name} ({} {})", tr(l, "engine_queue_lane"), tr(l, "peak"), tracelab_core::format::trim_num(queue_peak))}</text>
                    <line class="axis" x1=left x2=right y1=engine_top + engine_h y2=engine_top + engine_h />
                    <polyline class="engine-waiting" data-testid="engine-waiting" points=waiting_line.clone() />
                    <polyline class="engine-running" points=running_line.clone() />
                    <text class="lane-title" x=4 y=kv_top - 8.0>{tr(l, "engine_kv_lane")}</text>
                    <line class="grid" x1=left x2=right y1=ky(1.0) y2=ky(1.0) />
                    <line class="axis" x1=left x2=right y1=ky(0.0) y2=ky(0.0) />
                    <text class="tick" x=left - 6.0 y=ky(1.0) + 4.0 text-anchor="end">"100"</text>
                    <text class="tick" x=left - 6.0 y=ky(0.0) + 4.0 text-anchor="end">"0"</text>
                    <polyline class="engine-kv" data-testid="engine-kv" points=kv_line.clone() />
                })}
                {(!gpu.is_empty()).then(|| view! {
                    <text class="lane-title" x=4 y=gpu_top - 12.0>{tr(l, "gpu_lane")}</text>
                    <line class="grid" x1=left x2=right y1=gy(100.0) y2=gy(100.0) />
                    <text class="tick" x=left - 6.0 y=gy(100.0) + 4.0 text-anchor="end">"100"</text>
                    <text class="tick" x=left - 6.0 y=gy(0.0) + 4.0 text-anchor="end">"0"</text>
                    {lanes.iter().map(|(id, util, mem)| view! {
                        <polyline class="gpu-util" data-testid="gpu-util" data-gpu=*id points=util.clone() />
                        <polyline class="gpu-mem" points=mem.clone() />
                    }).collect_view()}
                })}
            </svg>
        }.into_any())
    };
    let gpu_status = move || {
        let l = lab.lang.get();
        lab.loaded.with(|x| {
            x.as_ref().map(|x| {
                let g = &x.trace.header.capabilities.gpu_telemetry;
                if g == GPU_UNSUPPORTED || x.trace.gpu.is_empty() {
                    let key = if matches!(x.origin, crate::state::Origin::Sample(_)) {
                        "gpu_constructed"
                    } else {
                        "not_verified"
                    };
                    format!("{}: {}", tr(l, "gpu"), tr(l, key))
                } else {
                    format!(
                        "{}: {g} · {} {} ({})",
                        tr(l, "gpu"),
                        format::integer(x.trace.gpu.len() as u64),
                        tr(l, "samples"),
                        tr(l, "gpu_lines")
                    )
                }
            })
        })
    };
    view! {
        <figure class="chart wide">
            // The bundle's bucketed lanes (src/components/distribution.rs), for a big trace only.
            {move || big.get().then(|| view! { <div id="run-lanes-box"></div> })}
            <div class="chart-box" node_ref=holder>{svg}</div>
            <figcaption>{move || tr(lab.lang.get(), if big.get() { "run_chart_buckets" } else { "run_chart" })}" · "<span data-testid="run-gpu">{gpu_status}</span></figcaption>
        </figure>
    }
}
