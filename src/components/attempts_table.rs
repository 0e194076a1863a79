//! Every attempt with its verdict and first failing reason, judged per request by the core.
//! Only the rows in view are in the DOM, so a 1,000,000-attempt trace scrolls as easily as ten.

use leptos::prelude::*;
use tracelab_core::{
    format::{integer, trim_num},
    verdict, Phase, WarmupPolicy,
};

use crate::i18n::tr;
use crate::state::use_lab;

/// Must match `tr.attempt-row { height }` in style/main.css.
const ROW_PX: f64 = 36.0;
const VIEW_PX: f64 = 432.0;
const OVERSCAN: usize = 6;
/// The tallest scrolling box the table gets. Browsers stop laying out a box beyond some height
/// (Chromium about 33.5 M px, Firefox about 17.9 M px), and a 1,000,000-row table is 36 M px:
/// its last rows could not be reached. Taller tables scroll a box this tall, each pixel of it
/// standing for more than one of the table's (2.4 at 1,000,000 rows).
const MAX_BOX_PX: f64 = 15_000_000.0;

/// The table's full height for `n` rows and the height of the box that scrolls it.
fn heights(n: usize) -> (f64, f64) {
    let full = n as f64 * ROW_PX;
    (full, full.min(MAX_BOX_PX))
}

/// The table's pixel at the top of the view when the box is scrolled to `scroll`: one to one
/// over the first row's height and over the last view and row, faster and evenly between, so the
/// box's end is the table's. (Moving one to one at both ends lets every row drawn sit where the
/// view shows it: as far from the view's top in the box as it is in the table, never past the
/// box's start or end.)
fn table_top(scroll: f64, n: usize) -> f64 {
    match stretch(n) {
        None => scroll,
        Some((_, _)) if scroll <= ROW_PX => scroll,
        Some((end, extra)) if scroll >= end => scroll + extra,
        Some((end, extra)) => ROW_PX + (scroll - ROW_PX) * (end + extra - ROW_PX) / (end - ROW_PX),
    }
}

/// The box's scroll position that puts the table's pixel `top` at the top of the view.
fn scroll_to(top: f64, n: usize) -> f64 {
    match stretch(n) {
        None => top,
        Some((_, _)) if top <= ROW_PX => top,
        Some((end, extra)) if top >= end + extra => top - extra,
        Some((end, extra)) => ROW_PX + (top - ROW_PX) * (end - ROW_PX) / (end + extra - ROW_PX),
    }
}

/// For a table taller than its box: where the box's last one-to-one stretch starts, and how
/// much taller the table is than the box. `None` when the box holds the table.
fn stretch(n: usize) -> Option<(f64, f64)> {
    let (full, boxed) = heights(n);
    let end = boxed - VIEW_PX - ROW_PX;
    (full > boxed && end > 2.0 * ROW_PX).then_some((end, full - boxed))
}

/// The rows to draw with the box scrolled to `scroll` (`first..last`), and the heights of the
/// spacers above and below them: every row sits as far from the view's top in the box as it is in
/// the table; overscan rows that would fall outside the box are left out.
fn rows_in_view(scroll: f64, n: usize) -> (usize, usize, f64, f64) {
    let boxed = heights(n).1;
    let top = table_top(scroll, n);
    let overscanned = ((top / ROW_PX) as usize).saturating_sub(OVERSCAN);
    let in_box = ((top - scroll).max(0.0) / ROW_PX).ceil() as usize;
    let first = overscanned.max(in_box).min(n);
    let above = (scroll - (top - first as f64 * ROW_PX)).max(0.0);
    let fit = ((boxed - above) / ROW_PX).floor().max(0.0) as usize;
    let last = (first + (VIEW_PX / ROW_PX) as usize + 2 * OVERSCAN)
        .min(first + fit)
        .min(n);
    let below = (boxed - above - (last - first) as f64 * ROW_PX).max(0.0);
    (first, last, above, below)
}

#[component]
pub fn AttemptsTable() -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let scroll_top = RwSignal::new(0.0f64);
    let body = NodeRef::<leptos::html::Div>::new();

    // Keep the selected row in view when stepping with the keyboard.
    Effect::new(move |_| {
        let row = lab.selected.get() as f64;
        let n = lab.row_count();
        if let Some(el) = body.get() {
            let top = table_top(el.scroll_top() as f64, n);
            let y = row * ROW_PX;
            if y < top {
                el.set_scroll_top(scroll_to(y, n) as i32);
            } else if y + ROW_PX > top + VIEW_PX - ROW_PX {
                el.set_scroll_top(scroll_to(y - VIEW_PX + 2.0 * ROW_PX, n).ceil() as i32);
            }
        }
    });

    let range = move || rows_in_view(scroll_top.get(), lab.row_count());

    view! {
        <section class="attempts" aria-labelledby="attempts-h">
            <h2 id="attempts-h">
                {move || tr(lang.get(), "table")}
                <span class="count">{move || format!(" ({})", tracelab_core::format::integer(lab.row_count() as u64))}</span>
            </h2>
            <p class="scroll-hint" data-testid="scroll-hint">{move || tr(lang.get(), "scroll_hint")}</p>
            <div
                class="table-scroll"
                tabindex="0"
                role="region"
                aria-labelledby="attempts-h"
                node_ref=body
                style=format!("max-height: {VIEW_PX}px")
                on:scroll=move |e| {
                    let el: web_sys::Element = event_target(&e);
                    scroll_top.set(el.scroll_top() as f64);
                }
            >
                <table data-testid="attempts-table" aria-rowcount=move || lab.row_count() + 1>
                    <thead>
                        <tr>
                            <th scope="col" class="num">"#"</th>
                            <th scope="col">{move || tr(lang.get(), "col_id")}</th>
                            <th scope="col">{move || tr(lang.get(), "col_outcome")}</th>
                            <th scope="col" class="num">{move || tr(lang.get(), "col_ttft")}</th>
                            <th scope="col">{move || tr(lang.get(), "col_quality")}</th>
                            <th scope="col">{move || tr(lang.get(), "col_verdict")}</th>
                            <th scope="col">{move || tr(lang.get(), "col_reason")}</th>
                        </tr>
                    </thead>
                    <tbody>
                        {move || {
                            let l = lang.get();
                            let (first, last, top, bottom) = range();
                            let selected = lab.selected.get();
                            let rows = lab.working.with(|w| {
                                let Some(w) = w else { return Vec::new() };
                                lab.settings.with(|s| {
                                    w.attempts[first..last].iter().enumerate().map(|(k, a)| {
                                        let i = first + k;
                                        let v = verdict(a, s);
                                        // A warm-up row is not measured: it gets no verdict of its own.
                                        let warmup = a.phase == Phase::Warmup && s.population.warmup == WarmupPolicy::Exclude;
                                        let ttft = v.ttft_s.filter(|_| a.ttft_ms.is_some())
                                            .map(trim_num)
                                            .unwrap_or_else(|| if v.ttft_s.is_some() { "0 (!)".into() } else { tr(l, "missing").to_string() });
                                        view! {
                                            <tr
                                                class="attempt-row"
                                                class:qualified=v.qualified && !warmup
                                                class:warmup=warmup
                                                class:selected=i == selected
                                                aria-selected=(i == selected).to_string()
                                                aria-rowindex=i + 2
                                                data-testid="attempt-row"
                                                on:click=move |_| lab.selected.set(i)
                                            >
                                                <td class="num muted">{integer(i as u64 + 1)}</td>
                                                <th scope="row" class="mono">{a.id.clone()}</th>
                                                <td>{a.outcome.label(l)}</td>
                                                <td class="num" class:missing=a.ttft_ms.is_none() data-testid="row-ttft">{ttft}</td>
                                                <td>{a.quality.name()}</td>
                                                <td data-testid="verdict">{if warmup { tr(l, "warmup_not_counted") } else if v.qualified { tr(l, "qualified") } else { tr(l, "not_qualified") }}</td>
                                                <td data-testid="reason">{(!warmup).then(|| v.reason.map(|r| r.text().get(l).to_string())).flatten().unwrap_or_default()}</td>
                                            </tr>
                                        }
                                    }).collect::<Vec<_>>()
                                })
                            });
                            view! {
                                {(top > 0.0).then(|| view! { <tr class="spacer" aria-hidden="true" style=format!("height: {top}px")></tr> })}
                                {rows}
                                {(bottom > 0.0).then(|| view! { <tr class="spacer" aria-hidden="true" style=format!("height: {bottom}px")></tr> })}
                            }
                        }}
                    </tbody>
                </table>
            </div>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_row_of_a_million_is_within_the_scrolling_box() {
        // 1,048,576 rows: 37.7 M px of table.
        let n = 1 << 20;
        let (full, boxed) = heights(n);
        assert_eq!(full, n as f64 * ROW_PX);
        assert!(full > 2.0 * MAX_BOX_PX);
        assert_eq!(boxed, MAX_BOX_PX);
        // Scrolled to the end of the box, the view shows the table's last rows.
        assert_eq!(table_top(boxed - VIEW_PX, n), full - VIEW_PX);
        assert_eq!(table_top(0.0, n), 0.0);
        // A row's position and back again.
        for top in [0.0, ROW_PX * 123_456.0, full - VIEW_PX] {
            assert!(
                (table_top(scroll_to(top, n), n) - top).abs() < 1e-6,
                "{top}"
            );
        }
    }

    #[test]
    fn the_row_at_the_top_of_the_view_is_drawn_there_at_every_scroll() {
        for n in [10, 2_000, 1 << 20] {
            let (_, boxed) = heights(n);
            let end = (boxed - VIEW_PX).max(0.0);
            let steps = 5_000;
            // Evenly over the box, and pixel by pixel at its start and its end.
            let scrolls = (0..=steps)
                .map(|k| (end * k as f64 / steps as f64).floor())
                .chain((0..400).map(f64::from))
                .chain((0..400).map(|k| (end - f64::from(k)).max(0.0)));
            for scroll in scrolls {
                let (first, last, above, below) = rows_in_view(scroll, n);
                let top = table_top(scroll, n);
                let row = ((top / ROW_PX) as usize).min(n.saturating_sub(1));
                assert!(
                    first <= row && row < last,
                    "n {n}, scroll {scroll}: row {row} not in {first}..{last}"
                );
                // Where that row is drawn in the box, against where the view is.
                let drawn = above + (row - first) as f64 * ROW_PX;
                let expected = scroll - (top - row as f64 * ROW_PX);
                assert!(
                    (drawn - expected).abs() < 1e-6,
                    "n {n}, scroll {scroll}: row {row} drawn at {drawn}, wanted {expected}"
                );
                // The rows fill the view, and the box keeps its height.
                let view_end = ((top + VIEW_PX) / ROW_PX).ceil() as usize;
                assert!(
                    last >= view_end.min(n),
                    "n {n}, scroll {scroll}: the view's last row {view_end} is past {last}"
                );
                assert!(
                    (above + (last - first) as f64 * ROW_PX + below - boxed).abs() < 1e-6 || n == 0,
                    "n {n}, scroll {scroll}: {above} + {first}..{last} + {below} != {boxed}"
                );
            }
        }
    }

    #[test]
    fn a_table_that_fits_scrolls_one_to_one() {
        for n in [0, 10, 100_000] {
            for scroll in [0.0, 500.0, 1e6] {
                assert_eq!(table_top(scroll, n), scroll);
                assert_eq!(scroll_to(scroll, n), scroll);
            }
        }
    }
}
