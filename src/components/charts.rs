//! Charts drawn with plotters on a canvas — the success-TTFT distribution with the threshold and
//! the tail marker, the selected attempt's timeline, and the run as bars over time with GPU
//! lanes. Each is drawn at the screen's pixel density and redrawn on resize, and each has a
//! text alternative. Drawing is the only thing done here: every number comes from the core.

use leptos::ev;
use leptos::prelude::*;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use tracelab_core::{metrics::trim_num, percentile::percentile, trace::GPU_UNSUPPORTED, verdict, Attempt, Lang};
use wasm_bindgen::JsCast;

use crate::i18n::tr;
use crate::state::use_lab;

const INK: RGBColor = RGBColor(27, 31, 36);
const MUTED: RGBColor = RGBColor(90, 100, 112);
const BLUE: RGBColor = RGBColor(11, 92, 173);
const RED: RGBColor = RGBColor(163, 38, 27);
const GREEN: RGBColor = RGBColor(23, 104, 58);
const AMBER: RGBColor = RGBColor(183, 121, 31);
const GRID: RGBColor = RGBColor(225, 229, 234);

/// At most this many points or bars are drawn; beyond it the chart shows evenly spaced ranks.
const MAX_MARKS: usize = 2000;

/// Sizes a canvas to its CSS box at the device's pixel ratio; returns the ratio.
fn fit(canvas: &web_sys::HtmlCanvasElement) -> f64 {
    let dpr = web_sys::window().map(|w| w.device_pixel_ratio()).unwrap_or(1.0).max(1.0);
    let w = canvas.client_width().max(280) as f64;
    let h = canvas.client_height().max(160) as f64;
    canvas.set_width((w * dpr) as u32);
    canvas.set_height((h * dpr) as u32);
    dpr
}

fn font(size: f64, dpr: f64) -> TextStyle<'static> {
    ("sans-serif", size * dpr).into_font().color(&INK)
}

#[component]
pub fn Charts() -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let resized = RwSignal::new(0u32);
    let listener = window_event_listener(ev::resize, move |_| resized.update(|n| *n += 1));
    on_cleanup(move || listener.remove());
    view! {
        <section class="charts" aria-labelledby="charts-h">
            <h2 id="charts-h">{move || tr(lang.get(), "charts")}</h2>
            <div class="chart-grid">
                <TtftChart resized=resized />
                <RequestTimeline resized=resized />
            </div>
            <RunTimeline resized=resized />
        </section>
    }
}

#[component]
fn TtftChart(resized: RwSignal<u32>) -> impl IntoView {
    let lab = use_lab();
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    Effect::new(move |_| {
        resized.track();
        let l = lab.lang.get();
        let (Some(el), Some(ix), Some(m)) = (canvas.get(), lab.index.get(), lab.metrics.get()) else { return };
        let settings = lab.settings.get();
        let failures = m.failures;
        let dpr = fit(&el);
        let label = tracelab_core::metrics::percentile_label(settings.p);
        let _ = draw_ttft(&el, dpr, ix.0.ttft_sample_ms(), failures, settings.ttft_threshold_s, m.ttft_tail.value, &label, l);
    });
    view! {
        <figure class="chart">
            <canvas node_ref=canvas class="chart-canvas" data-testid="ttft-chart" role="img"
                aria-label=move || tr(lab.lang.get(), "ttft_chart_alt")></canvas>
            <figcaption>{move || tr(lab.lang.get(), "ttft_chart")}</figcaption>
            <details>
                <summary>{move || tr(lab.lang.get(), "as_table")}</summary>
                {move || {
                    let l = lab.lang.get();
                    lab.index.get().map(|ix| {
                        let sample = ix.0.ttft_sample_ms();
                        let shown: Vec<(usize, f64)> = spread(sample.len()).map(|i| (i + 1, sample[i] / 1000.0)).collect();
                        view! {
                            <table class="alt-table">
                                <thead><tr><th>{tr(l, "rank")}</th><th>{tr(l, "col_ttft")}</th></tr></thead>
                                <tbody>{shown.into_iter().map(|(r, v)| view! { <tr><td>{r}</td><td>{trim_num(v)}</td></tr> }).collect_view()}</tbody>
                            </table>
                            <p>{format!("{}: {}", tr(l, "failures_apart"), lab.metrics.with(|m| m.as_ref().map_or(0, |m| m.failures)))}</p>
                        }
                    })
                }}
            </details>
        </figure>
    }
}

/// Up to MAX_MARKS ranks spread evenly over 0..n (all of them when n is small).
fn spread(n: usize) -> impl Iterator<Item = usize> {
    let step = n.div_ceil(MAX_MARKS).max(1);
    (0..n).step_by(step).chain((n > 0 && !(n - 1).is_multiple_of(step)).then_some(n - 1))
}

#[allow(clippy::too_many_arguments)]
fn draw_ttft(
    el: &web_sys::HtmlCanvasElement,
    dpr: f64,
    sample_ms: &[f64],
    failures: usize,
    threshold: f64,
    tail: Option<f64>,
    tail_label: &str,
    lang: Lang,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = CanvasBackend::with_canvas_object(el.clone()).ok_or("no canvas")?.into_drawing_area();
    root.fill(&WHITE)?;
    let n = sample_ms.len();
    // The sample is sorted: its maximum is its last value (no pass over a million points).
    let max_s = sample_ms.last().map_or(0.0, |v| v / 1000.0);
    let sample = |i: usize| sample_ms[i] / 1000.0;
    // Failures get their own strip to the right: they have no TTFT, so they are not plotted as 0.
    let (main, strip) = root.split_horizontally((el.width() as f64 * if failures > 0 { 0.84 } else { 1.0 }) as u32);
    let ymax = max_s.max(threshold).max(0.1) * 1.12;
    let mut chart = ChartBuilder::on(&main)
        .margin((10.0 * dpr) as u32)
        .x_label_area_size((30.0 * dpr) as u32)
        .y_label_area_size((44.0 * dpr) as u32)
        .build_cartesian_2d(0.5f64..(n.max(1) as f64 + 0.5), 0f64..ymax)?;
    chart
        .configure_mesh()
        .light_line_style(WHITE)
        .bold_line_style(GRID)
        .label_style(font(12.0, dpr))
        .x_desc(tr(lang, "rank"))
        .y_desc("TTFT (s)")
        .axis_desc_style(font(12.0, dpr))
        .x_labels(n.clamp(2, 10))
        .x_label_formatter(&|v| format!("{:.0}", v))
        .draw()?;
    let stroke = (1.5 * dpr).max(1.0) as u32;
    chart.draw_series(LineSeries::new([(0.5, threshold), (n as f64 + 0.5, threshold)], RED.stroke_width(stroke)))?;
    chart.draw_series(std::iter::once(Text::new(
        format!("{} {} s", tr(lang, "threshold_short"), trim_num(threshold)),
        (0.6, threshold + ymax * 0.02),
        font(12.0, dpr).color(&RED),
    )))?;
    if let Some(t) = tail {
        chart.draw_series(DashedLineSeries::new(
            [(0.5, t), (n as f64 + 0.5, t)],
            (6.0 * dpr) as u32,
            (4.0 * dpr) as u32,
            AMBER.stroke_width(stroke),
        ))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("{tail_label} = {} s", trim_num(t)),
            (n as f64 * 0.45 + 0.5, t + ymax * 0.02),
            font(12.0, dpr).color(&AMBER),
        )))?;
    }
    let radius = ((if n > 200 { 1.5 } else { 4.0 }) * dpr) as u32;
    chart.draw_series(spread(n).map(|i| {
        let color = if sample(i) <= threshold { GREEN } else { BLUE };
        Circle::new(((i + 1) as f64, sample(i)), radius, color.filled())
    }))?;
    if failures > 0 {
        strip.fill(&RGBColor(250, 240, 238))?;
        let (w, h) = strip.dim_in_pixel();
        strip.draw(&Text::new(tr(lang, "no_ttft"), ((8.0 * dpr) as i32, (14.0 * dpr) as i32), font(12.0, dpr).color(&RED)))?;
        strip.draw(&Text::new(
            format!("✕ × {failures}"),
            ((8.0 * dpr) as i32, (h as f64 / 2.0) as i32),
            font(16.0, dpr).color(&RED),
        ))?;
        let _ = w;
    }
    root.present()?;
    Ok(())
}

#[component]
fn RequestTimeline(resized: RwSignal<u32>) -> impl IntoView {
    let lab = use_lab();
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let selected = move || {
        let i = lab.selected.get();
        lab.working.with(|w| w.as_ref().and_then(|w| w.attempts.get(i).cloned()))
    };
    Effect::new(move |_| {
        resized.track();
        let l = lab.lang.get();
        let (Some(el), Some(a)) = (canvas.get(), selected()) else { return };
        let dpr = fit(&el);
        let _ = draw_request(&el, dpr, &a, l);
    });
    view! {
        <figure class="chart">
            <canvas node_ref=canvas class="chart-canvas" data-testid="request-chart" role="img"
                aria-label=move || tr(lab.lang.get(), "request_chart_alt")></canvas>
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

fn draw_request(el: &web_sys::HtmlCanvasElement, dpr: f64, a: &Attempt, lang: Lang) -> Result<(), Box<dyn std::error::Error>> {
    let root = CanvasBackend::with_canvas_object(el.clone()).ok_or("no canvas")?.into_drawing_area();
    root.fill(&WHITE)?;
    let end = a.e2e_ms.or(a.events.last().map(|e| e.at_ms)).or(a.ttft_ms).unwrap_or(0.0).max(1.0);
    let mut chart = ChartBuilder::on(&root)
        .margin((12.0 * dpr) as u32)
        .x_label_area_size((30.0 * dpr) as u32)
        .caption(format!("{} — {}", a.id, a.outcome), font(14.0, dpr))
        .build_cartesian_2d(-end * 0.03..end * 1.05, 0f64..4f64)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .light_line_style(WHITE)
        .bold_line_style(GRID)
        .label_style(font(12.0, dpr))
        .x_desc("ms")
        .axis_desc_style(font(12.0, dpr))
        .draw()?;
    let stroke = (2.0 * dpr) as u32;
    // The request's life as one bar, TTFT and E2E as brackets above it.
    chart.draw_series(std::iter::once(Rectangle::new([(0.0, 1.6), (end, 2.0)], RGBColor(214, 226, 240).filled())))?;
    chart.draw_series(std::iter::once(Text::new("t0", (0.0, 1.05), font(12.0, dpr))))?;
    if let Some(t) = a.ttft_ms {
        chart.draw_series(LineSeries::new([(0.0, 2.45), (t, 2.45)], GREEN.stroke_width(stroke)))?;
        chart.draw_series(std::iter::once(Text::new(format!("TTFT {} ms", trim_num(t)), (0.0, 2.85), font(12.0, dpr).color(&GREEN))))?;
    } else {
        chart.draw_series(std::iter::once(Text::new(tr(lang, "no_token_ttft"), (0.0, 2.85), font(12.0, dpr).color(&RED))))?;
    }
    if let Some(e) = a.e2e_ms {
        chart.draw_series(LineSeries::new([(0.0, 3.2), (e, 3.2)], INK.stroke_width(stroke)))?;
        chart.draw_series(std::iter::once(Text::new(format!("E2E {} ms", trim_num(e)), (0.0, 3.6), font(12.0, dpr))))?;
    }
    for (k, ev) in a.events.iter().enumerate() {
        chart.draw_series(LineSeries::new([(ev.at_ms, 1.45), (ev.at_ms, 2.15)], BLUE.stroke_width(stroke)))?;
        if ev.tokens > 1 {
            chart.draw_series(std::iter::once(Text::new(format!("×{}", ev.tokens), (ev.at_ms, 1.15), font(11.0, dpr).color(&BLUE))))?;
        }
        if k > 0 && a.events.len() <= 12 {
            let gap = ev.at_ms - a.events[k - 1].at_ms;
            chart.draw_series(std::iter::once(Text::new(
                trim_num(gap),
                (a.events[k - 1].at_ms + gap * 0.2, 2.25),
                font(10.0, dpr).color(&MUTED),
            )))?;
        }
    }
    if let Some(b) = a.first_byte_ms {
        chart.draw_series(std::iter::once(Circle::new((b, 1.8), (3.0 * dpr) as u32, MUTED.filled())))?;
    }
    if a.events.len() > 1 && a.events.len() <= 12 {
        chart.draw_series(std::iter::once(Text::new(tr(lang, "itl_label"), (end * 0.12, 0.75), font(11.0, dpr).color(&MUTED))))?;
    }
    root.present()?;
    Ok(())
}

#[component]
fn RunTimeline(resized: RwSignal<u32>) -> impl IntoView {
    let lab = use_lab();
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    Effect::new(move |_| {
        resized.track();
        let l = lab.lang.get();
        let (Some(el), Some(w), Some(loaded)) = (canvas.get(), lab.working.get(), lab.loaded.get()) else { return };
        let settings = lab.settings.get();
        let dpr = fit(&el);
        let _ = draw_run(&el, dpr, &w.attempts, &loaded.trace, &settings, lab.selected.get(), l);
    });
    let gpu_status = move || {
        let l = lab.lang.get();
        lab.loaded.with(|x| {
            x.as_ref().map(|x| {
                let g = &x.trace.header.capabilities.gpu_telemetry;
                if g == GPU_UNSUPPORTED || x.trace.gpu.is_empty() {
                    format!("{}: {}", tr(l, "gpu"), tr(l, "not_verified"))
                } else {
                    format!("{}: {g} · {} {}", tr(l, "gpu"), x.trace.gpu.len(), tr(l, "samples"))
                }
            })
        })
    };
    view! {
        <figure class="chart wide">
            <canvas node_ref=canvas class="chart-canvas tall" data-testid="run-chart" role="img"
                aria-label=move || tr(lab.lang.get(), "run_chart_alt")></canvas>
            <figcaption>{move || tr(lab.lang.get(), "run_chart")}" · "<span data-testid="run-gpu">{gpu_status}</span></figcaption>
        </figure>
    }
}

fn draw_run(
    el: &web_sys::HtmlCanvasElement,
    dpr: f64,
    attempts: &[Attempt],
    trace: &tracelab_core::Trace,
    settings: &tracelab_core::Settings,
    selected: usize,
    lang: Lang,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = CanvasBackend::with_canvas_object(el.clone()).ok_or("no canvas")?.into_drawing_area();
    root.fill(&WHITE)?;
    let timed: Vec<(usize, &Attempt)> = attempts.iter().enumerate().filter(|(_, a)| a.start_ms.is_some()).collect();
    if timed.is_empty() {
        root.draw(&Text::new(tr(lang, "no_timeline"), ((12.0 * dpr) as i32, (24.0 * dpr) as i32), font(14.0, dpr)))?;
        root.present()?;
        return Ok(());
    }
    let end_of = |a: &Attempt| a.start_ms.unwrap_or(0.0) + a.e2e_ms.or(a.ttft_ms).unwrap_or(0.0);
    let t_end = timed.iter().map(|(_, a)| end_of(a)).fold(0.0, f64::max).max(trace.gpu.iter().map(|g| g.t_ms).fold(0.0, f64::max)).max(1.0);
    let t_start = timed.iter().map(|(_, a)| a.start_ms.unwrap_or(0.0)).fold(f64::INFINITY, f64::min).min(0.0);
    let has_gpu = !trace.gpu.is_empty();
    let (top, bottom) = if has_gpu {
        root.split_vertically((el.height() as f64 * 0.62) as u32)
    } else {
        root.split_vertically((el.height() as f64 * 0.86) as u32)
    };
    let rows = timed.len();
    let mut chart = ChartBuilder::on(&top)
        .margin((10.0 * dpr) as u32)
        .x_label_area_size((26.0 * dpr) as u32)
        .y_label_area_size((44.0 * dpr) as u32)
        .build_cartesian_2d(t_start / 1000.0..t_end / 1000.0 * 1.02, 0f64..rows as f64)?;
    chart
        .configure_mesh()
        .light_line_style(WHITE)
        .bold_line_style(GRID)
        .label_style(font(11.0, dpr))
        .x_desc("s")
        .y_desc(tr(lang, "requests"))
        .y_label_formatter(&|v| format!("{:.0}", v))
        .axis_desc_style(font(11.0, dpr))
        .draw()?;
    let step = rows.div_ceil(MAX_MARKS).max(1);
    chart.draw_series(timed.iter().enumerate().step_by(step).map(|(k, (i, a))| {
        let v = verdict(a, settings);
        let color = if *i == selected { INK } else if v.qualified { GREEN } else if v.complete_success { AMBER } else { RED };
        let s = a.start_ms.unwrap_or(0.0) / 1000.0;
        let e = (end_of(a) / 1000.0).max(s + (t_end / 1000.0) * 0.004);
        let y = (rows - 1 - k) as f64;
        Rectangle::new([(s, y + 0.15), (e, y + 0.85)], color.filled())
    }))?;
    if has_gpu {
        let mut gpu = ChartBuilder::on(&bottom)
            .margin((10.0 * dpr) as u32)
            .x_label_area_size((22.0 * dpr) as u32)
            .y_label_area_size((44.0 * dpr) as u32)
            .build_cartesian_2d(t_start / 1000.0..t_end / 1000.0 * 1.02, 0f64..100f64)?;
        gpu.configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(GRID)
            .label_style(font(11.0, dpr))
            .y_labels(3)
            .y_label_formatter(&|v| format!("{:.0}", v))
            .y_desc("%")
            .axis_desc_style(font(11.0, dpr))
            .draw()?;
        // The selected attempt's interval across the GPU lanes: what the GPU did while it ran.
        if let Some(a) = attempts.get(selected).filter(|a| a.start_ms.is_some()) {
            let s = a.start_ms.unwrap_or(0.0) / 1000.0;
            let e = (end_of(a) / 1000.0).max(s + (t_end / 1000.0) * 0.004);
            gpu.draw_series(std::iter::once(Rectangle::new([(s, 0.0), (e, 100.0)], INK.mix(0.15).filled())))?;
        }
        let mut gpus: Vec<u32> = trace.gpu.iter().map(|g| g.gpu).collect();
        gpus.sort_unstable();
        gpus.dedup();
        for id in gpus {
            let samples: Vec<_> = trace.gpu.iter().filter(|g| g.gpu == id).collect();
            gpu.draw_series(LineSeries::new(samples.iter().map(|g| (g.t_ms / 1000.0, g.util_pct)), BLUE.stroke_width((1.5 * dpr) as u32)))?
                .label(format!("GPU {id} util %"))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + (14.0 * dpr) as i32, y)], BLUE.stroke_width((2.0 * dpr) as u32)));
            gpu.draw_series(LineSeries::new(
                samples.iter().filter(|g| g.mem_total_mib > 0.0).map(|g| (g.t_ms / 1000.0, 100.0 * g.mem_used_mib / g.mem_total_mib)),
                AMBER.stroke_width((1.5 * dpr) as u32),
            ))?
            .label(format!("GPU {id} mem %"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + (14.0 * dpr) as i32, y)], AMBER.stroke_width((2.0 * dpr) as u32)));
        }
        gpu.configure_series_labels()
            .label_font(font(11.0, dpr))
            .background_style(WHITE.mix(0.85))
            .border_style(GRID)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
    } else {
        bottom.draw(&Text::new(
            format!("{}: {}", tr(lang, "gpu"), tr(lang, "not_verified")),
            ((52.0 * dpr) as i32, (10.0 * dpr) as i32),
            font(13.0, dpr).color(&RED),
        ))?;
    }
    root.present()?;
    Ok(())
}

/// Percentile helper for tests of the chart's marks (kept here so the chart never ranks itself).
#[allow(dead_code)]
fn tail_of(sample: &[f64], p: f64) -> Option<f64> {
    percentile(sample, p, Default::default())
}

#[allow(dead_code)]
fn _assert_canvas(el: &web_sys::Element) -> Option<web_sys::HtmlCanvasElement> {
    el.clone().dyn_into().ok()
}
