//! Every attempt with its verdict and first failing reason, judged per request by the core.
//! Only the rows in view are in the DOM, so a 1,000,000-attempt trace scrolls as easily as ten.

use leptos::prelude::*;
use tracelab_core::{format::{integer, trim_num}, verdict, Phase, WarmupPolicy};

use crate::i18n::tr;
use crate::state::use_lab;

/// Must match `tr.attempt-row { height }` in style/main.css.
const ROW_PX: f64 = 36.0;
const VIEW_PX: f64 = 432.0;
const OVERSCAN: usize = 6;

#[component]
pub fn AttemptsTable() -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let scroll_top = RwSignal::new(0.0f64);
    let body = NodeRef::<leptos::html::Div>::new();

    // Keep the selected row in view when stepping with the keyboard.
    Effect::new(move |_| {
        let row = lab.selected.get() as f64;
        if let Some(el) = body.get() {
            let top = el.scroll_top() as f64;
            let y = row * ROW_PX;
            if y < top {
                el.set_scroll_top(y as i32);
            } else if y + ROW_PX > top + VIEW_PX - ROW_PX {
                el.set_scroll_top((y - VIEW_PX + 2.0 * ROW_PX) as i32);
            }
        }
    });

    let range = move || {
        let n = lab.row_count();
        let first = ((scroll_top.get() / ROW_PX) as usize).saturating_sub(OVERSCAN).min(n);
        let last = (first + (VIEW_PX / ROW_PX) as usize + 2 * OVERSCAN).min(n);
        (first, last, n)
    };

    view! {
        <section class="attempts" aria-labelledby="attempts-h">
            <h2 id="attempts-h">
                {move || tr(lang.get(), "table")}
                <span class="count">{move || format!(" ({})", tracelab_core::format::integer(lab.row_count() as u64))}</span>
            </h2>
            <p class="scroll-hint" data-testid="scroll-hint">{move || tr(lang.get(), "scroll_hint")}</p>
            <div
                class="table-scroll"
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
                            let (first, last, n) = range();
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
                                                <td class="num" class:missing=a.ttft_ms.is_none()>{ttft}</td>
                                                <td>{a.quality.name()}</td>
                                                <td data-testid="verdict">{if warmup { tr(l, "warmup_not_counted") } else if v.qualified { tr(l, "qualified") } else { tr(l, "not_qualified") }}</td>
                                                <td>{(!warmup).then(|| v.reason.map(|r| r.text().get(l).to_string())).flatten().unwrap_or_default()}</td>
                                            </tr>
                                        }
                                    }).collect::<Vec<_>>()
                                })
                            });
                            let top = first as f64 * ROW_PX;
                            let bottom = (n - last) as f64 * ROW_PX;
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
