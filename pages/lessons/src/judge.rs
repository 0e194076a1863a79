//! "Judge first" beside the lab (`[[judge:SAMPLE]]` in a lesson): the learner steps through the
//! sample's rows and calls each one — qualified, or not and the first failing reason — before
//! seeing the verdict; the core checks each call and scores the pass (`tracelab_core::check_call`,
//! `score`). Meanwhile the lab in the frame shows the row but keeps its verdicts hidden (see
//! `key.rs`), and it lives in the lessons page's bundle, not in the lab's first download.

use std::sync::Arc;

use leptos::prelude::*;
use tracelab_core::format::trim_num;
use tracelab_core::{check_call, score, units, Call, Settings, Trace};

use crate::page::use_page;
use crate::words::w;

#[component]
pub fn JudgeFirst(sample: String) -> impl IntoView {
    let page = use_page();
    let trace: RwSignal<Option<Arc<Trace>>> = RwSignal::new(None);
    page.ensure_sample(sample.clone(), move |t| trace.set(Some(t)));
    let row = RwSignal::new(0usize);
    // The call on row i at calls[i].
    let calls: RwSignal<Vec<Option<Call>>> = RwSignal::new(Vec::new());
    let go = move |i: usize| {
        row.set(i);
        page.show_row(&sample, i);
    };
    let go = StoredValue::new(go);
    view! {
        <section class="judge" data-testid="judge">
            <h3>{move || w(page.lang.get(), "judge_title")}</h3>
            {move || {
                let l = page.lang.get();
                let t = trace.get()?;
                if !page.judging.get() {
                    return Some(view! {
                        <button data-testid="judge-start" on:click=move |_| {
                            calls.set(Vec::new());
                            page.judging.set(true);
                            // The rows are judged against the lab beside: on a phone, raise it.
                            page.lab_lowered.set(false);
                            go.with_value(|g| g(0));
                            // The button goes away: the keyboard goes on to the first call.
                            focus_drawn(FIRST_CALL);
                        }>{w(l, "judge_start")}</button>
                    }.into_any());
                }
                let settings = Settings::from_header(&t.header);
                let i = row.get().min(t.attempts.len().saturating_sub(1));
                let a = t.attempts.get(i)?.clone();
                let call = calls.with(|c| c.get(i).copied().flatten());
                let scored = calls.with(|c| score(&t.attempts, &settings, c));
                let ttft = a.ttft_ms.map(|ms| format!("{} s", trim_num(units::s_from_ms(ms)))).unwrap_or_else(|| w(l, "judge_missing").to_string());
                let last = i + 1 >= t.attempts.len();
                Some(view! {
                    <p class="judge-row" data-testid="judge-row">
                        <strong class="mono">{a.id.clone()}</strong>
                        {format!(" ({}/{}) · {} · TTFT {ttft} · {}", i + 1, t.attempts.len(), a.outcome.words(l), a.quality.label(l))}
                    </p>
                    {match call {
                        None => view! {
                            <p class="calls">{w(l, "judge_prompt")}" "
                                {Call::ALL.map(|c| view! {
                                    <button class="secondary" data-testid=format!("call-{}", c.code())
                                        on:click=move |_| {
                                            calls.update(|m| { if m.len() <= i { m.resize(i + 1, None); } m[i] = Some(c); });
                                            // The calls give way to the verdict: on to the next row (or the verdict on the last).
                                            focus_drawn(if last { "[data-testid=judged]" } else { "[data-testid=judge-next]" });
                                        }>
                                        {c.text().get(l).to_string()}
                                    </button>
                                }).into_iter().collect_view()}
                            </p>
                        }.into_any(),
                        Some(c) => view! {
                            <p class="judged" data-testid="judged" tabindex="-1">{check_call(&a, &settings, c).1.get(l).to_string()}</p>
                            {(!last).then(|| view! {
                                <button data-testid="judge-next" on:click=move |_| {
                                    go.with_value(|g| g(i + 1));
                                    focus_drawn(FIRST_CALL);
                                }>{w(l, "judge_next")}</button>
                            })}
                        }.into_any(),
                    }}
                    <p class="score" data-testid="judge-score">{scored.sentence().get(l).to_string()}</p>
                    <button class="link" data-testid="judge-stop" on:click=move |_| page.judging.set(false)>{w(l, "judge_stop")}</button>
                }.into_any())
            }}
        </section>
    }
}

/// The first call button of the row being judged.
const FIRST_CALL: &str = "[data-testid=judge] .calls button";

/// Once the pass's next state is drawn, moves the keyboard's focus to `css` (the button that
/// replaced the one just pressed, so focus never drops to the page) and scrolls the row being
/// judged, then it, into view: above the docked lab on a phone (the page's scroll padding is the
/// dock's height), so the lab never covers the calls.
fn focus_drawn(css: &'static str) {
    use wasm_bindgen::JsCast;
    request_animation_frame(move || {
        let nearest = || {
            let options = web_sys::ScrollIntoViewOptions::new();
            options.set_block(web_sys::ScrollLogicalPosition::Nearest);
            options
        };
        if let Some(row) = document()
            .query_selector("[data-testid=judge-row]")
            .ok()
            .flatten()
        {
            row.scroll_into_view_with_scroll_into_view_options(&nearest());
        }
        let Some(target) = document()
            .query_selector(css)
            .ok()
            .flatten()
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        else {
            return;
        };
        let _ = target.focus();
        target.scroll_into_view_with_scroll_into_view_options(&nearest());
    });
}
