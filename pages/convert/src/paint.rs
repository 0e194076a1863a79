//! The painters of the canvas views: the latency heat map and the histogram drawn with
//! `plotters` on a `<canvas>`, where SVG cannot go (hundreds of thousands of attempts). The core
//! counted every cell and bin (`tracelab_core::distribution`, in `canvas.rs`); these only turn
//! them into pixels, answering where they put the plot area, the threshold line and the fullest
//! cell (`Painted`), so the page and its tests can find them.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

use tracelab_core::distribution::{heat_level, HeatMapPaint, HistogramPaint, Painted};
use tracelab_core::format::{axis_label, duration_ms};
use tracelab_core::units::s_from_ms;

/// An empty cell's colour and a full one's: one sequential scale, light to dark.
const LIGHT: (u8, u8, u8) = (222, 235, 247);
const DARK: (u8, u8, u8) = (8, 48, 107);
/// The failures band's scale: a failure is red in every chart of the lab.
const BAND_LIGHT: (u8, u8, u8) = (252, 228, 225);
const BAND_DARK: (u8, u8, u8) = (179, 38, 30);
/// The threshold line (the lab's `--bad`), P50 and the tail.
pub(crate) const THRESHOLD: RGBColor = RGBColor(179, 38, 30);
const P50: RGBColor = RGBColor(46, 91, 186);
const TAIL: RGBColor = RGBColor(138, 90, 0);
const INK: RGBColor = RGBColor(23, 32, 42);
const BAR: RGBColor = RGBColor(107, 117, 128);
pub(crate) const FONT: (&str, u32) = ("sans-serif", 12);

fn mix(from: (u8, u8, u8), to: (u8, u8, u8), level: f64) -> RGBColor {
    let m = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * level).round() as u8;
    RGBColor(m(from.0, to.0), m(from.1, to.1), m(from.2, to.2))
}

pub(crate) fn canvas(id: &str) -> Result<DrawingArea<CanvasBackend, Shift>, String> {
    let backend = CanvasBackend::new(id)
        .ok_or_else(|| format!("no canvas #{id} to paint on; reload the page"))?;
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    Ok(root)
}

/// Measures labels in the canvas's own font with the canvas's `measureText`. plotters' own
/// estimate (`estimate_text_size` on the web) puts a span in the page and reads its size, which
/// lays out the whole lab each time: at 100,000 attempts that was most of a run lanes' repaint.
pub(crate) struct Ruler(web_sys::CanvasRenderingContext2d, String);

impl Ruler {
    pub(crate) fn of(canvas_id: &str) -> Result<Ruler, String> {
        use wasm_bindgen::JsCast;
        let context = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id(canvas_id))
            .and_then(|c| c.dyn_into::<web_sys::HtmlCanvasElement>().ok())
            .and_then(|c| c.get_context("2d").ok().flatten())
            .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
            .ok_or_else(|| format!("no canvas #{canvas_id} to measure on; reload the page"))?;
        Ok(Ruler(context, format!("{}px {}", FONT.1, FONT.0)))
    }

    /// The width of `text` in [`FONT`], in whole pixels.
    pub(crate) fn width(&self, text: &str) -> u32 {
        thread_local! {
            /// Widths already measured: a lane's title is measured word by word on every edit.
            static KNOWN: std::cell::RefCell<std::collections::HashMap<String, u32>> = std::cell::RefCell::new(std::collections::HashMap::new());
        }
        if let Some(w) = KNOWN.with(|k| k.borrow().get(text).copied()) {
            return w;
        }
        // The font is set only when it is not the context's already: setting it parses it, and a
        // resize or plotters' own text may have changed it.
        if self.0.font() != self.1 {
            self.0.set_font(&self.1);
        }
        let w = self
            .0
            .measure_text(text)
            .map(|m| m.width().ceil() as u32)
            .unwrap_or(0);
        KNOWN.with(|k| {
            let mut k = k.borrow_mut();
            if k.len() > 4096 {
                k.clear();
            }
            k.insert(text.to_string(), w);
        });
        w
    }

    /// The widest of these labels, so no tick label is cut at the left edge.
    fn widest(&self, labels: impl Iterator<Item = String>) -> u32 {
        labels.map(|t| self.width(&t)).max().unwrap_or(30)
    }
}

/// The latency heat map: run clock across, latency up on a log scale, the count per cell as
/// colour; failures in a band of their own above the plot; the threshold line; the selected
/// attempt's cell outlined.
pub(crate) fn paint_heat_map(canvas_id: &str, p: &HeatMapPaint) -> Result<Painted, String> {
    let m = &p.map;
    let root = canvas(canvas_id)?;
    let ruler = Ruler::of(canvas_id)?;
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    let ticks = m.scale.ticks();
    let label_w = ruler.widest(
        ticks
            .iter()
            .map(|v| duration_ms(*v))
            .chain(std::iter::once(p.band.clone())),
    ) + 12;
    let band_h = 22u32;
    let (band, rest) = root.split_vertically(band_h + 8);
    let (t0, t1) = (
        s_from_ms(m.start_ms),
        s_from_ms(m.start_ms + m.width_ms * m.columns as f64),
    );
    let mut chart = ChartBuilder::on(&rest)
        .margin_right(14)
        .margin_top(4)
        .x_label_area_size(26)
        .y_label_area_size(label_w)
        .build_cartesian_2d(t0..t1, (m.scale.lo_ms..m.scale.hi_ms).log_scale())
        .map_err(e)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(8)
        .y_labels(ticks.len())
        .x_label_formatter(&|v| axis_label(*v))
        .y_label_formatter(&|v| duration_ms(*v))
        .label_style(FONT)
        .draw()
        .map_err(e)?;
    let cells = m.filled();
    chart
        .draw_series(cells.iter().map(|(c, r, n)| {
            let (x0, x1) = m.column_span(*c);
            let (y0, y1) = m.row_span(*r);
            Rectangle::new(
                [(s_from_ms(x0), y0), (s_from_ms(x1), y1)],
                mix(LIGHT, DARK, heat_level(*n, m.max_count)).filled(),
            )
        }))
        .map_err(e)?;
    let threshold_px = match p.threshold_ms {
        Some(t) if t >= m.scale.lo_ms && t <= m.scale.hi_ms => {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(t0, t), (t1, t)],
                    THRESHOLD.stroke_width(2),
                )))
                .map_err(e)?;
            Some(chart.backend_coord(&(t0, t)).1)
        }
        _ => None,
    };
    // The failures band: one block per column, as dark as the column's failures; its name at
    // the left, in the labels' column.
    let x_of = |ms: f64| chart.backend_coord(&(s_from_ms(ms), m.scale.lo_ms)).0;
    for (c, n) in m.failures.iter().enumerate().filter(|(_, n)| **n > 0) {
        let (a, b) = m.column_span(c);
        band.draw(&Rectangle::new(
            [(x_of(a), 4), (x_of(b).max(x_of(a) + 1), band_h as i32 + 4)],
            mix(BAND_LIGHT, BAND_DARK, heat_level(*n, m.max_failures)).filled(),
        ))
        .map_err(e)?;
    }
    band.draw(&Text::new(
        p.band.clone(),
        (4, 8),
        FONT.into_font().color(&THRESHOLD),
    ))
    .map_err(e)?;
    if let Some((c, row)) = p.selected {
        let (a, b) = m.column_span(c);
        match row {
            Some(r) => {
                let (y0, y1) = m.row_span(r);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(s_from_ms(a), y0), (s_from_ms(b), y1)],
                        INK.stroke_width(2),
                    )))
                    .map_err(e)?;
            }
            None => {
                band.draw(&Rectangle::new(
                    [
                        (x_of(a) - 1, 3),
                        (x_of(b).max(x_of(a) + 1) + 1, band_h as i32 + 5),
                    ],
                    INK.stroke_width(2),
                ))
                .map_err(e)?;
            }
        }
    }
    let fullest = cells.iter().max_by_key(|(_, _, n)| *n).map(|(c, r, _)| {
        let (a, b) = m.column_span(*c);
        let (y0, y1) = m.row_span(*r);
        let (px, py) = chart.backend_coord(&(s_from_ms((a + b) / 2.0), (y0 * y1).sqrt()));
        (*c, *r, px, py)
    });
    let (xs, ys) = chart.plotting_area().get_pixel_range();
    root.present().map_err(e)?;
    Ok(Painted {
        plot: (xs.start, ys.start, xs.end, ys.end),
        threshold_px,
        fullest,
    })
}

/// The histogram of the chosen latency on a log scale, with the threshold and each marker
/// (P50, the tail) as a line over its interval's shade.
pub(crate) fn paint_histogram(canvas_id: &str, p: &HistogramPaint) -> Result<Painted, String> {
    let hist = &p.histogram;
    let root = canvas(canvas_id)?;
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    let top = f64::from(hist.max_count.max(1)) * 1.18;
    let ruler = Ruler::of(canvas_id)?;
    let label_w = ruler.widest(std::iter::once(tracelab_core::format::integer(u64::from(
        hist.max_count,
    )))) + 12;
    let (lo, hi) = (hist.scale.lo_ms, hist.scale.hi_ms);
    let mut chart = ChartBuilder::on(&root)
        .margin_right(14)
        .margin_top(8)
        .x_label_area_size(26)
        .y_label_area_size(label_w)
        .build_cartesian_2d((lo..hi).log_scale(), 0.0..top)
        .map_err(e)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(hist.scale.ticks().len())
        .y_labels(5)
        .x_label_formatter(&|v| duration_ms(*v))
        .y_label_formatter(&|v| {
            if v.fract() == 0.0 {
                tracelab_core::format::integer(*v as u64)
            } else {
                String::new()
            }
        })
        .label_style(FONT)
        .draw()
        .map_err(e)?;
    for m in &p.markers {
        let (a, b) = (
            m.lo_ms.unwrap_or(m.value_ms).max(lo),
            m.hi_ms.unwrap_or(hi).min(hi),
        );
        let colour = if m.label == "P50" { P50 } else { TAIL };
        if m.lo_ms.is_some() || m.hi_ms.is_some() {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(a, 0.0), (b, top)],
                    colour.mix(0.12).filled(),
                )))
                .map_err(e)?;
        }
    }
    chart
        .draw_series(
            hist.counts
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(k, n)| {
                    let (a, b) = hist.bin_span(k);
                    Rectangle::new([(a, 0.0), (b, f64::from(*n))], BAR.filled())
                }),
        )
        .map_err(e)?;
    let threshold_px = match p.threshold_ms {
        Some(t) if t >= lo && t <= hi => {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(t, 0.0), (t, top)],
                    THRESHOLD.stroke_width(2),
                )))
                .map_err(e)?;
            Some(chart.backend_coord(&(t, 0.0)).0)
        }
        _ => None,
    };
    let (xs, ys) = chart.plotting_area().get_pixel_range();
    let style: TextStyle = FONT.into();
    for (k, m) in p.markers.iter().enumerate() {
        if m.value_ms < lo || m.value_ms > hi {
            continue;
        }
        let colour = if m.label == "P50" { P50 } else { TAIL };
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(m.value_ms, 0.0), (m.value_ms, top)],
                colour.stroke_width(2),
            )))
            .map_err(e)?;
        // The marker's name beside its line, each on its own row, turned to the left of the
        // line when it would run past the plot's right edge or be struck by the threshold line.
        let (px, _) = chart.backend_coord(&(m.value_ms, 0.0));
        let tw = ruler.width(&m.label) as i32;
        let struck = threshold_px.is_some_and(|t| (px + 2..=px + 6 + tw).contains(&t));
        let x = if px + 4 + tw > xs.end || struck {
            px - 4 - tw
        } else {
            px + 4
        };
        root.draw(&Text::new(
            m.label.clone(),
            (x, ys.start + 4 + 16 * k as i32),
            style.color(&colour),
        ))
        .map_err(e)?;
    }
    let fullest = hist
        .counts
        .iter()
        .enumerate()
        .max_by_key(|(_, n)| **n)
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| {
            let (a, b) = hist.bin_span(k);
            let (px, py) = chart.backend_coord(&((a * b).sqrt(), f64::from(*n) / 2.0));
            (k, 0, px, py)
        });
    root.present().map_err(e)?;
    Ok(Painted {
        plot: (xs.start, ys.start, xs.end, ys.end),
        threshold_px,
        fullest,
    })
}
