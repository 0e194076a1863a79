//! The canvas views' part of the page, laid into a box the lab gives it (no framework: plain DOM,
//! so this bundle stays small): the whole distribution (heat map, histogram, their legends and
//! tables) and the bucketed run lanes (share qualified and failed, starts against the schedule,
//! client lag) with their table. Every number is counted here by the core
//! (`tracelab_core::distribution`) from the trace this bundle holds, as columns kept per
//! population; an edit sends only the settings. The words are here, in both languages. A table
//! is built only while it is open: thousands of rows redrawn on each edit would cost what the
//! buckets save.

use std::cell::RefCell;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use tracelab_core::distribution::{
    sample_of, Columns, DistributionRequest, HeatMap, HeatMapPaint, Histogram, HistogramPaint,
    Marker, Measure, Painted, RunBucket, RunBuckets, RunRequest,
};
use tracelab_core::format::{duration, duration_ms, integer};
use tracelab_core::units::ms_from_s;
use tracelab_core::Comparison;
use tracelab_core::Lang;
use tracelab_core::{Attempt, Population};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::paint::{canvas, paint_heat_map, paint_histogram, Ruler, FONT, THRESHOLD};
use crate::read;

/// The bundle's words, in English and Chinese.
fn w(lang: Lang, key: &str) -> &'static str {
    let (en, zh) = match key {
        "heat_alt" => ("Heat map: attempts per cell of run clock and latency", "热力图：按运行时钟与时延划分的每格尝试数"),
        "hist_alt" => ("Histogram of the latency with the threshold and percentiles", "时延直方图，标出阈值与百分位数"),
        "heat_caption_ttft" => ("Across: the run's clock (s). Up: TTFT on a log scale. Each cell's colour is how many counted successes started then with that TTFT. Failures have no TTFT: they are counted in the red band above, never drawn as 0.", "横轴：运行时钟（秒）。纵轴：TTFT（对数刻度）。每格颜色表示在该时段开始、TTFT 落在该区间的计入成功请求数。失败请求没有 TTFT：它们计在上方的红色条带中，从不画成 0。"),
        "heat_caption_e2e" => ("Across: the run's clock (s). Up: E2E on a log scale. Each cell's colour is how many counted successes started then with that E2E. Failures are counted in the red band above, never drawn as a latency.", "横轴：运行时钟（秒）。纵轴：E2E（对数刻度）。每格颜色表示在该时段开始、E2E 落在该区间的计入成功请求数。失败请求计在上方的红色条带中，从不画成时延。"),
        "hist_caption" => ("How many counted successes fall in each latency range (log scale), with the threshold, P50 and the tail, each percentile over its 95 % interval (shaded).", "每个时延区间（对数刻度）内的计入成功请求数，标出阈值、P50 和尾部百分位；每个百分位的 95 % 区间以阴影表示。"),
        "heat_band" => ("failed", "失败"),
        "heat_band_legend" => ("failed, in the band above (not plotted as 0)", "失败，计在上方条带（不按 0 绘制）"),
        "heat_colour" => ("attempts per cell, light to dark", "每格尝试数，由浅到深"),
        "heat_plotted" => ("successes plotted", "已绘制的成功请求"),
        "heat_zeros" => ("TTFT counted as 0 (no place on a log scale)", "TTFT 按 0 计（对数刻度上无位置）"),
        "hist_bars" => ("successes per latency range", "每个时延区间的成功请求数"),
        "hist_failures" => ("failures, not in the histogram", "失败请求，不在直方图中"),
        "selected" => ("selected row (outlined)", "选中的行（加框）"),
        "threshold" => ("threshold", "阈值"),
        "interval" => ("95 % interval", "95 % 区间"),
        "no_lower" => ("no lower bound", "无下界"),
        "no_upper" => ("no upper bound", "无上界"),
        "no_clock" => ("No heat map: the attempts have no start times on a shared clock.", "无法绘制热力图：这些尝试没有共同时钟上的开始时间。"),
        "as_table" => ("The same as a table", "以表格查看"),
        "run_clock" => ("run clock", "运行时钟"),
        "latency" => ("latency", "时延"),
        "attempts" => ("attempts", "尝试数"),
        "rates_lane" => ("qualified (green) and failed (red), share of each bucket's counted attempts", "每个时间段计入的尝试中合格（绿）与失败（红）的比例"),
        "starts_lane" => ("starts per bucket: actual (bars), scheduled (grey line)", "每个时间段的开始数：实际（柱），计划（灰线）"),
        "starts_lane_closed" => ("starts per bucket", "每个时间段的开始数"),
        "lag_lane" => ("client lag, the most in each bucket", "客户端滞后，每个时间段的最大值"),
        "flight_lane" => ("requests in flight, the most in each bucket", "在途请求，每个时间段的最大值"),
        "peak" => ("peak", "峰值"),
        "run_caption" => ("The run in time buckets (too many attempts for a bar each): {n} attempts in {b} buckets of {w}. Below, on the same clock, the GPU's and the serving engine's lanes when measured; the selected attempt is shaded there.", "按时间段汇总的整个运行（尝试太多，无法每个一根条）：{n} 次尝试，分为 {b} 个时间段，每段 {w}。有测量时，下方在同一时钟上是 GPU 曲线和推理引擎曲线，选中的尝试在其中以阴影标出。"),
        "bucket_from" => ("bucket from", "时间段起点"),
        "started" => ("started", "实际开始"),
        "scheduled" => ("scheduled", "计划开始"),
        "qualified" => ("qualified", "合格"),
        "failed" => ("failed", "失败"),
        "in_flight" => ("most in flight", "最多进行中"),
        "lag_max" => ("most client lag", "最大客户端滞后"),
        _ => (key_missing(key), key_missing(key)),
    };
    if lang == Lang::Zh {
        zh
    } else {
        en
    }
}

/// An unknown key shows itself, so it is noticed in a screenshot.
fn key_missing(key: &str) -> &'static str {
    Box::leak(format!("[{key}]").into_boxed_str())
}

/// The box's own styles, added once with its first view (the lab's stylesheet does not carry them).
const STYLE: &str = ".tl-charts canvas{display:block;max-width:100%}.tl-charts .cap{font-size:.88rem;color:#56606b;margin:.35rem 0}\
.tl-charts ul{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1rem;padding:0;margin:.25rem 0 .5rem;font-size:.88rem}\
.tl-charts li{display:flex;align-items:center;gap:.35rem}.tl-charts .sw{display:inline-block;width:.9rem;height:.9rem;flex:none}\
.tl-charts .ln{height:3px}.tl-charts .ramp{width:2.4rem;height:.8rem;background:linear-gradient(90deg,rgb(222,235,247),rgb(8,48,107))}\
.tl-charts .sel{background:#fff;border:2.5px solid #17202a;border-radius:50%}.tl-charts table{font-size:.85rem}";

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn element(id: &str) -> Result<web_sys::Element, String> {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
        .ok_or_else(|| format!("no #{id} on the page; reload it"))
}

fn set_attr(el: &web_sys::Element, name: &str, value: &str) -> Result<(), String> {
    if el.get_attribute(name).as_deref() != Some(value) {
        el.set_attribute(name, value)
            .map_err(|e| format!("{e:?}"))?;
    }
    Ok(())
}

/// Where a painter put things, as the canvas's data attributes (the browser tests read them).
fn mark_painted(el: &web_sys::Element, p: &Painted) -> Result<(), String> {
    set_attr(
        el,
        "data-plot",
        &format!("{},{},{},{}", p.plot.0, p.plot.1, p.plot.2, p.plot.3),
    )?;
    set_attr(
        el,
        "data-threshold-px",
        &p.threshold_px.map(|t| t.to_string()).unwrap_or_default(),
    )?;
    set_attr(
        el,
        "data-fullest",
        &p.fullest
            .map(|(a, b, x, y)| format!("{a},{b},{x},{y}"))
            .unwrap_or_default(),
    )
}

/// Rows of the heat map's latency axis and bins of the histogram.
const ROWS: usize = 32;
const BINS: usize = 40;

/// What the distribution box shows, counted here from the trace's columns.
#[derive(Debug, Clone, PartialEq)]
struct DistributionView {
    lang: Lang,
    measure: Measure,
    heat: Option<HeatMapPaint>,
    histogram: HistogramPaint,
    comparison: Comparison,
    threshold_s: f64,
    failures: u64,
}

/// What the run lanes show.
#[derive(Debug, Clone, PartialEq)]
struct RunView {
    lang: Lang,
    buckets: Vec<RunBucket>,
    attempts: u64,
    width_px: u32,
    left_px: f64,
    right_px: f64,
    start_ms: f64,
    span_ms: f64,
}

/// What the views counted from the held trace: its columns under one population, and the
/// buckets, cells and bins last asked for (a threshold edit recounts none of them).
#[derive(Default)]
pub struct Counted {
    population: Option<Population>,
    columns: Columns,
    buckets: Option<(usize, Option<RunBuckets>)>,
    heat: Option<((Measure, usize), Option<HeatMap>)>,
    hist: Option<(Measure, Histogram)>,
}

impl Counted {
    /// The columns of `attempts` under `population`, counted afresh when the population changed
    /// (the trace itself changes only with a new `Counted`).
    fn under(&mut self, attempts: &[Attempt], population: Population) -> &mut Counted {
        if self.population != Some(population) {
            *self = Counted {
                population: Some(population),
                columns: Columns::of(attempts, population),
                ..Counted::default()
            };
        }
        self
    }
}

thread_local! {
    /// The last view of each box, for a table opened between two edits.
    static LAST_DIST: RefCell<Option<DistributionView>> = const { RefCell::new(None) };
    static LAST_RUN: RefCell<Option<RunView>> = const { RefCell::new(None) };
}

/// Lays the box out once (canvases, captions, legends, closed tables with their toggles).
fn skeleton(root: &web_sys::Element, html: &str, tables: &[(&str, fn())]) -> Result<bool, String> {
    if root.first_element_child().is_some() {
        return Ok(false);
    }
    root.set_inner_html(&format!("<style>{STYLE}</style>{html}"));
    set_attr(root, "class", "tl-charts")?;
    for (id, build) in tables {
        let details = element(&format!("{id}-box"))?;
        let build = *build;
        let on_toggle = Closure::<dyn Fn()>::new(build);
        details
            .unchecked_ref::<web_sys::HtmlElement>()
            .set_ontoggle(Some(on_toggle.as_ref().unchecked_ref()));
        on_toggle.forget();
    }
    Ok(true)
}

/// Fills a table's body when its box is open (empties it when closed).
fn fill_table(id: &str, rows: impl FnOnce() -> String) {
    let (Ok(details), Ok(body)) = (element(&format!("{id}-box")), element(id)) else {
        return;
    };
    body.set_inner_html(&if details.has_attribute("open") {
        rows()
    } else {
        String::new()
    });
}

fn row(cells: &[String]) -> String {
    format!(
        "<tr>{}</tr>",
        cells
            .iter()
            .map(|c| format!("<td>{}</td>", esc(c)))
            .collect::<String>()
    )
}

fn span((a, b): (f64, f64)) -> String {
    format!("{} – {}", duration_ms(a), duration_ms(b))
}

fn heat_rows() {
    LAST_DIST.with(|v| {
        let v = v.borrow();
        let Some(v) = v.as_ref() else { return };
        fill_table("heat-table", || {
            let Some(h) = v.heat.as_ref().map(|p| &p.map) else {
                return String::new();
            };
            let mut out: String = h
                .filled()
                .into_iter()
                .map(|(c, r, n)| {
                    row(&[
                        span(h.column_span(c)),
                        span(h.row_span(r)),
                        integer(u64::from(n)),
                    ])
                })
                .collect();
            for (c, n) in h.failures.iter().enumerate().filter(|(_, n)| **n > 0) {
                out.push_str(&row(&[
                    span(h.column_span(c)),
                    w(v.lang, "heat_band").to_string(),
                    integer(u64::from(*n)),
                ]));
            }
            out
        });
    });
}

fn hist_rows() {
    LAST_DIST.with(|v| {
        let v = v.borrow();
        let Some(v) = v.as_ref() else { return };
        let h = &v.histogram.histogram;
        fill_table("hist-table", || {
            h.counts
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(k, n)| row(&[span(h.bin_span(k)), integer(u64::from(*n))]))
                .collect()
        });
    });
}

fn marker_line(lang: Lang, m: &Marker) -> String {
    let bound = |v: Option<f64>, missing: &str| {
        v.map(duration_ms)
            .unwrap_or_else(|| w(lang, missing).to_string())
    };
    let interval = if m.lo_ms.is_some() || m.hi_ms.is_some() {
        format!(
            " · {} {} … {}",
            w(lang, "interval"),
            bound(m.lo_ms, "no_lower"),
            bound(m.hi_ms, "no_upper")
        )
    } else {
        String::new()
    };
    format!("{} = {}{interval}", m.label, duration_ms(m.value_ms))
}

fn li(swatch: &str, text: &str) -> String {
    format!(
        "<li><span class=\"sw {swatch}\" aria-hidden=\"true\"></span>{}</li>",
        esc(text)
    )
}

/// A legend line with a `data-testid`, for a page around the lab (the lessons) to find it.
fn li_named(testid: &str, swatch: &str, text: &str) -> String {
    format!(
        "<li data-testid=\"{testid}\"><span class=\"sw {swatch}\" aria-hidden=\"true\"></span>{}</li>",
        esc(text)
    )
}

/// The whole distribution of `attempts` into the box `container`: the lab asks for this after
/// every edit that changes what it shows. Answers "ok"; an error names what failed.
pub fn show_distribution(
    attempts: &[Attempt],
    counted: &mut Counted,
    container: &str,
    request: &str,
) -> Result<String, String> {
    let r: DistributionRequest = read("distribution request", request)?;
    let threshold_ms = (r.measure == Measure::Ttft).then(|| ms_from_s(r.settings.ttft_threshold_s));
    let (heat, histogram) = {
        let h = counted.under(attempts, r.settings.population);
        let key = (r.measure, r.columns);
        if h.heat.as_ref().is_none_or(|(k, _)| *k != key) {
            let map = HeatMap::of(&h.columns, r.measure, r.columns, ROWS);
            h.heat = Some((key, map));
        }
        if h.hist.as_ref().is_none_or(|(m, _)| *m != r.measure) {
            let hist = Histogram::build(&sample_of(&h.columns, r.measure), BINS);
            h.hist = Some((r.measure, hist));
        }
        let map = h.heat.as_ref().and_then(|(_, m)| m.clone());
        let selected = map
            .as_ref()
            .zip(r.selected)
            .and_then(|(m, i)| m.selected_row(&h.columns, i));
        (
            map.map(|map| HeatMapPaint {
                map,
                threshold_ms,
                selected,
                band: String::new(),
            }),
            h.hist
                .as_ref()
                .map(|(_, x)| x.clone())
                .unwrap_or_else(|| Histogram::build(&[], BINS)),
        )
    };
    let mut v = DistributionView {
        lang: r.lang,
        measure: r.measure,
        heat,
        histogram: HistogramPaint {
            histogram,
            threshold_ms,
            markers: r.markers,
        },
        comparison: r.settings.comparison,
        threshold_s: r.settings.ttft_threshold_s,
        failures: r.failures,
    };
    let l = v.lang;
    if let Some(h) = v.heat.as_mut() {
        h.band = w(l, "heat_band").to_string();
    }
    let root = element(container)?;
    let html = String::from(
        "<div data-testid=\"heat-box\"></div><p class=\"cap\" id=\"heat-cap\"></p><ul data-testid=\"heat-legend\" id=\"heat-legend\"></ul>\
         <details id=\"heat-table-box\"><summary id=\"heat-sum\"></summary><table class=\"alt-table\" data-testid=\"heat-table\"><thead id=\"heat-head\"></thead><tbody id=\"heat-table\"></tbody></table></details>\
         <canvas id=\"hist-canvas\" data-testid=\"histogram\" height=\"260\" role=\"img\"></canvas><p class=\"cap\" id=\"hist-cap\"></p><ul data-testid=\"hist-legend\" id=\"hist-legend\"></ul>\
         <details id=\"hist-table-box\"><summary id=\"hist-sum\"></summary><table class=\"alt-table\" data-testid=\"hist-table\"><thead id=\"hist-head\"></thead><tbody id=\"hist-table\"></tbody></table></details>"
    );
    skeleton(
        &root,
        &html,
        &[("heat-table", heat_rows), ("hist-table", hist_rows)],
    )?;
    let width = r.width_px.max(258);
    let changed = LAST_DIST.with(|last| {
        last.borrow().as_ref().is_none_or(|o| {
            o.lang != v.lang
                || o.measure != v.measure
                || o.heat.as_ref().map(|h| &h.map) != v.heat.as_ref().map(|h| &h.map)
                || o.histogram.histogram != v.histogram.histogram
        })
    });
    // Words and headers.
    let text = |id: &str, t: &str| element(id).map(|e| e.set_text_content(Some(t)));
    text(
        "heat-cap",
        w(
            l,
            if v.measure == Measure::Ttft {
                "heat_caption_ttft"
            } else {
                "heat_caption_e2e"
            },
        ),
    )?;
    text("hist-cap", w(l, "hist_caption"))?;
    text("heat-sum", w(l, "as_table"))?;
    text("hist-sum", w(l, "as_table"))?;
    element("heat-head")?.set_inner_html(&format!(
        "<tr><th>{}</th><th>{}</th><th>{}</th></tr>",
        w(l, "run_clock"),
        w(l, "latency"),
        w(l, "attempts")
    ));
    element("hist-head")?.set_inner_html(&format!(
        "<tr><th>{}</th><th>{}</th></tr>",
        w(l, "latency"),
        w(l, "attempts")
    ));
    let threshold = format!(
        "{} {} {}",
        w(l, "threshold"),
        v.comparison.symbol(),
        duration(v.threshold_s)
    );
    let ttft = v.measure == Measure::Ttft;
    // The heat map: a canvas when the trace has a clock, else why not.
    let heat_box = element("heat-canvas").ok();
    match (&v.heat, heat_box) {
        (Some(paint), existing) => {
            let c = match existing {
                Some(c) => c,
                None => {
                    element(container)?
                        .query_selector("[data-testid=heat-box]")
                        .ok()
                        .flatten()
                        .ok_or("the heat map's box is gone; reload the page")?
                        .set_inner_html("<canvas id=\"heat-canvas\" data-testid=\"heat-map\" height=\"340\" role=\"img\"></canvas>");
                    element("heat-canvas")?
                }
            };
            set_attr(&c, "aria-label", w(l, "heat_alt"))?;
            set_attr(&c, "width", &width.to_string())?;
            let painted = paint_heat_map("heat-canvas", paint)?;
            mark_painted(&c, &painted)?;
            let m = &paint.map;
            let mut legend = format!(
                "<li><span class=\"sw ramp\" aria-hidden=\"true\"></span>{} (1 … {})</li>",
                esc(w(l, "heat_colour")),
                integer(u64::from(m.max_count))
            );
            if ttft {
                legend.push_str(&li("ln\" style=\"background:#b3261e", &threshold));
            }
            legend.push_str(&li_named(
                "heat-failed",
                "\" style=\"background:#b3261e",
                &format!("{}: {}", w(l, "heat_band_legend"), integer(m.failed)),
            ));
            legend.push_str(&li("sel", w(l, "selected")));
            legend.push_str(&format!(
                "<li>{}: {}</li>",
                esc(w(l, "heat_plotted")),
                integer(m.plotted)
            ));
            if m.zero > 0 {
                legend.push_str(&format!(
                    "<li>{}: {}</li>",
                    esc(w(l, "heat_zeros")),
                    integer(m.zero)
                ));
            }
            element("heat-legend")?.set_inner_html(&legend);
        }
        (None, _) => {
            element(container)?
                .query_selector("[data-testid=heat-box]")
                .ok()
                .flatten()
                .ok_or("the heat map's box is gone")?
                .set_inner_html(&format!(
                    "<p class=\"cap\" data-testid=\"no-heat-map\">{}</p>",
                    esc(w(l, "no_clock"))
                ));
            element("heat-legend")?.set_inner_html("");
        }
    }
    // The histogram.
    let c = element("hist-canvas")?;
    set_attr(&c, "aria-label", w(l, "hist_alt"))?;
    set_attr(&c, "width", &width.to_string())?;
    let painted = paint_histogram("hist-canvas", &v.histogram)?;
    mark_painted(&c, &painted)?;
    let h = &v.histogram.histogram;
    let mut legend = li(
        "\" style=\"background:#6b7580",
        &format!("{}: {}", w(l, "hist_bars"), integer(h.n)),
    );
    if ttft {
        legend.push_str(&li("ln\" style=\"background:#b3261e", &threshold));
    }
    for m in &v.histogram.markers {
        let colour = if m.label == "P50" {
            "#2e5bba"
        } else {
            "#8a5a00"
        };
        legend.push_str(&li_named(
            "hist-marker",
            &format!("ln\" style=\"background:{colour}"),
            &marker_line(l, m),
        ));
    }
    legend.push_str(&format!(
        "<li data-testid=\"hist-failures\">{}: {}</li>",
        esc(w(l, "hist_failures")),
        integer(v.failures)
    ));
    if h.zeros > 0 {
        legend.push_str(&format!(
            "<li>{}: {}</li>",
            esc(w(l, "heat_zeros")),
            integer(h.zeros)
        ));
    }
    element("hist-legend")?.set_inner_html(&legend);
    LAST_DIST.with(|last| *last.borrow_mut() = Some(v));
    if changed {
        heat_rows();
        hist_rows();
    }
    Ok("ok".into())
}

/// Breaks a lane's title into lines that fit `width` pixels (at spaces, or between any two
/// Chinese characters), so no title runs off the canvas.
fn wrap(ruler: &Ruler, text: &str, width: i32) -> Vec<String> {
    let fits = |t: &str| ruler.width(t) as i32 <= width;
    let mut tokens: Vec<String> = Vec::new();
    for c in text.chars() {
        match tokens.last_mut() {
            Some(t)
                if c.is_ascii()
                    && c != ' '
                    && t.chars().last().is_some_and(|p| p.is_ascii() && p != ' ') =>
            {
                t.push(c)
            }
            _ => tokens.push(c.to_string()),
        }
    }
    let mut lines: Vec<String> = vec![String::new()];
    for t in tokens {
        let line = lines.last_mut().expect("one line");
        let candidate = format!("{line}{t}");
        if line.is_empty() || fits(&candidate) {
            *line = candidate;
        } else if t != " " {
            lines.push(t);
        }
    }
    lines.into_iter().map(|l| l.trim().to_string()).collect()
}

/// The bucketed run lanes of `attempts` into the box `container`, on the lab's run chart's
/// horizontal scale. Answers "ok"; an error names what failed.
pub fn show_run(
    attempts: &[Attempt],
    counted: &mut Counted,
    container: &str,
    request: &str,
) -> Result<String, String> {
    let r: RunRequest = read("run request", request)?;
    let (buckets, attempts) = {
        let h = counted.under(attempts, r.settings.population);
        if h.buckets.as_ref().is_none_or(|(n, _)| *n != r.buckets) {
            let b = RunBuckets::of(&h.columns, r.buckets);
            h.buckets = Some((r.buckets, b));
        }
        let rows = h
            .buckets
            .as_ref()
            .and_then(|(_, b)| b.as_ref())
            .map(|b| b.at(&r.settings))
            .unwrap_or_default();
        (rows, h.columns.timed() as u64)
    };
    let v = RunView {
        lang: r.lang,
        buckets,
        attempts,
        width_px: r.width_px,
        left_px: r.left_px,
        right_px: r.right_px,
        start_ms: r.start_ms,
        span_ms: r.span_ms,
    };
    let l = v.lang;
    let root_el = element(container)?;
    let html = "<canvas id=\"run-lanes\" data-testid=\"run-lanes\" role=\"img\"></canvas><p class=\"cap\" id=\"run-cap\"></p>\
        <details id=\"run-table-box\"><summary id=\"run-sum\"></summary><table class=\"alt-table\" data-testid=\"run-buckets-table\"><thead id=\"run-head\"></thead><tbody id=\"run-table\"></tbody></table></details>";
    skeleton(&root_el, html, &[("run-table", run_rows)])?;
    let b = &v.buckets;
    let lagged = b.iter().any(|x| x.lag_max_ms.is_some());
    let scheduled = b.iter().any(|x| x.intended > 0);
    let c = element("run-lanes")?;
    set_attr(&c, "width", &v.width_px.to_string())?;
    // Heights first (titles wrap at narrow widths), then the canvas is sized and painted.
    let ruler = Ruler::of("run-lanes")?;
    let title_w = v.width_px as i32 - 8;
    let start_peak = b
        .iter()
        .map(|x| x.started.max(x.intended))
        .max()
        .unwrap_or(0)
        .max(1);
    let lag_peak = b.iter().filter_map(|x| x.lag_max_ms).fold(0.0, f64::max);
    let mut lanes: Vec<(Vec<String>, f64)> = vec![
        (wrap(&ruler, w(l, "rates_lane"), title_w), 70.0),
        (
            wrap(
                &ruler,
                &format!(
                    "{} ({} {})",
                    w(
                        l,
                        if scheduled {
                            "starts_lane"
                        } else {
                            "starts_lane_closed"
                        }
                    ),
                    w(l, "peak"),
                    integer(u64::from(start_peak))
                ),
                title_w,
            ),
            50.0,
        ),
    ];
    if lagged {
        lanes.push((
            wrap(
                &ruler,
                &format!(
                    "{} ({} {})",
                    w(l, "lag_lane"),
                    w(l, "peak"),
                    duration_ms(lag_peak)
                ),
                title_w,
            ),
            40.0,
        ));
    }
    let flight_peak = b.iter().map(|x| x.in_flight_peak).max().unwrap_or(0).max(1);
    lanes.push((
        wrap(
            &ruler,
            &format!(
                "{} ({} {})",
                w(l, "flight_lane"),
                w(l, "peak"),
                integer(u64::from(flight_peak))
            ),
            title_w,
        ),
        60.0,
    ));
    let names: Vec<&str> = ["rates", "starts"]
        .into_iter()
        .chain(lagged.then_some("lag"))
        .chain(["flight"])
        .collect();
    let height: f64 = lanes
        .iter()
        .map(|(t, h)| 16.0 * t.len() as f64 + h + 12.0)
        .sum::<f64>()
        + 4.0;
    set_attr(&c, "height", &(height.round() as u32).to_string())?;
    let root = canvas("run-lanes")?;
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    let x = |ms: f64| {
        (v.left_px + (v.right_px - v.left_px) * (ms - v.start_ms) / v.span_ms).round() as i32
    };
    let style: TextStyle = FONT.into();
    let right_aligned = style.pos(Pos::new(HPos::Right, VPos::Center));
    let grey = RGBColor(107, 117, 128);
    let mut top = 4.0;
    let mut tops = Vec::new();
    for (k, (title, h)) in lanes.iter().enumerate() {
        for (i, line) in title.iter().enumerate() {
            root.draw(&Text::new(
                line.clone(),
                (4, (top + 16.0 * i as f64) as i32),
                style.color(&grey),
            ))
            .map_err(e)?;
        }
        let lane_top = top + 16.0 * title.len() as f64 + 2.0;
        let y = |share: f64| (lane_top + h * (1.0 - share)).round() as i32;
        root.draw(&PathElement::new(
            vec![(v.left_px as i32, y(0.0)), (v.right_px as i32, y(0.0))],
            grey,
        ))
        .map_err(e)?;
        let (top_label, zero) = match names[k] {
            "rates" => ("100 %".to_string(), "0"),
            "starts" => (integer(u64::from(start_peak)), "0"),
            "lag" => (duration_ms(lag_peak), "0"),
            _ => (integer(u64::from(flight_peak)), "0"),
        };
        // A top label goes left of the plot, as close as it must ("100 %" fits with 3 px to
        // spare); one wider than that room ("239.9 ms") goes just inside, under the lane's top.
        let label_w = ruler.width(&top_label) as i32;
        let room = v.left_px as i32 - 2;
        if label_w + 4 > room {
            root.draw(&Text::new(
                top_label,
                (v.left_px as i32 + 4, y(1.0)),
                style.pos(Pos::new(HPos::Left, VPos::Top)).color(&grey),
            ))
            .map_err(e)?;
        } else {
            root.draw(&Text::new(
                top_label,
                (v.left_px as i32 - 6.min(room - label_w), y(1.0)),
                right_aligned.color(&grey),
            ))
            .map_err(e)?;
        }
        root.draw(&Text::new(
            zero,
            (v.left_px as i32 - 6, y(0.0)),
            right_aligned.color(&grey),
        ))
        .map_err(e)?;
        let step =
            |f: &dyn Fn(&RunBucket) -> Option<f64>, colour: RGBColor| -> Result<(), String> {
                let mut run: Vec<(i32, i32)> = Vec::new();
                for bucket in b {
                    match f(bucket) {
                        Some(s) => {
                            run.push((x(bucket.start_ms), y(s)));
                            run.push((x(bucket.end_ms), y(s)));
                        }
                        None if !run.is_empty() => {
                            root.draw(&PathElement::new(
                                std::mem::take(&mut run),
                                colour.stroke_width(2),
                            ))
                            .map_err(e)?;
                        }
                        None => {}
                    }
                }
                if !run.is_empty() {
                    root.draw(&PathElement::new(run, colour.stroke_width(2)))
                        .map_err(e)?;
                }
                Ok(())
            };
        match names[k] {
            "rates" => {
                step(&RunBucket::qualified_rate, RGBColor(31, 138, 76))?;
                step(&RunBucket::failure_rate, THRESHOLD)?;
            }
            "starts" => {
                for bucket in b.iter().filter(|x| x.started > 0) {
                    let top_px = y(f64::from(bucket.started) / f64::from(start_peak));
                    let (a, z) = (x(bucket.start_ms), x(bucket.end_ms));
                    root.draw(&Rectangle::new(
                        [(a, top_px), ((z - 1).max(a + 1), y(0.0))],
                        RGBColor(159, 179, 200).filled(),
                    ))
                    .map_err(e)?;
                }
                if scheduled {
                    step(
                        &|x: &RunBucket| Some(f64::from(x.intended) / f64::from(start_peak)),
                        grey,
                    )?;
                }
            }
            "lag" => step(
                &|x: &RunBucket| {
                    x.lag_max_ms.map(|m| {
                        if lag_peak > 0.0 {
                            m.max(0.0) / lag_peak
                        } else {
                            0.0
                        }
                    })
                },
                grey,
            )?,
            _ => step(
                &|x: &RunBucket| Some(f64::from(x.in_flight_peak) / f64::from(flight_peak)),
                RGBColor(46, 91, 186),
            )?,
        }
        tops.push(format!("{}", (lane_top + h / 2.0).round()));
        top = lane_top + h + 10.0;
    }
    root.present().map_err(e)?;
    set_attr(&c, "data-lanes", &names.join(","))?;
    set_attr(&c, "data-buckets", &b.len().to_string())?;
    set_attr(&c, "data-lane-middles", &tops.join(","))?;
    set_attr(
        &c,
        "aria-label",
        &format!("{} · {}", w(l, "rates_lane"), w(l, "starts_lane_closed")),
    )?;
    let width = b
        .first()
        .map(|x| duration_ms(x.end_ms - x.start_ms))
        .unwrap_or_default();
    element("run-cap")?.set_text_content(Some(
        &w(l, "run_caption")
            .replace("{n}", &integer(v.attempts))
            .replace("{b}", &b.len().to_string())
            .replace("{w}", &width),
    ));
    element("run-sum")?.set_text_content(Some(w(l, "as_table")));
    element("run-head")?.set_inner_html(&format!(
        "<tr>{}</tr>",
        [
            "bucket_from",
            "started",
            "scheduled",
            "qualified",
            "failed",
            "in_flight",
            "lag_max"
        ]
        .iter()
        .map(|k| format!("<th>{}</th>", esc(w(l, k))))
        .collect::<String>()
    ));
    LAST_RUN.with(|last| *last.borrow_mut() = Some(v));
    run_rows();
    Ok("ok".into())
}

fn run_rows() {
    LAST_RUN.with(|v| {
        let v = v.borrow();
        let Some(v) = v.as_ref() else { return };
        fill_table("run-table", || {
            v.buckets
                .iter()
                .map(|b| {
                    row(&[
                        duration_ms(b.start_ms),
                        integer(u64::from(b.started)),
                        integer(u64::from(b.intended)),
                        format!(
                            "{} / {}",
                            integer(u64::from(b.qualified)),
                            integer(u64::from(b.counted))
                        ),
                        format!(
                            "{} / {}",
                            integer(u64::from(b.failed)),
                            integer(u64::from(b.counted))
                        ),
                        integer(u64::from(b.in_flight_peak)),
                        b.lag_max_ms.map(duration_ms).unwrap_or_default(),
                    ])
                })
                .collect()
        });
    });
}
