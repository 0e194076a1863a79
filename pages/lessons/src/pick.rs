//! A `pick_rows` exercise: the sample's measured attempts in a table (start, outcome, TTFT, E2E
//! and the GPU utilisation the core read inside each), a box per row, and the pick checked by
//! the course crate against the core's GPU samples (`tracelab_course::check_pick`). The table
//! says nothing about which rows refute: that is the learner's call.

use std::collections::BTreeSet;
use std::sync::Arc;

use leptos::prelude::*;
use tracelab_core::format::round_to;
use tracelab_core::text::Text;
use tracelab_core::Trace;
use tracelab_course::{check_pick, pick_rows, Answer, Exercise, ExerciseKind, Feedback, PickRow};

use crate::page::use_page;
use crate::words::w;

fn tx(en: &str, zh: &str) -> Text {
    Text::new(en, zh)
}

pub fn pick_widget(
    ex: &Exercise,
    previous: Option<Answer>,
    feedback: RwSignal<Option<Feedback>>,
) -> impl IntoView {
    let page = use_page();
    let ExerciseKind::PickRows(p) = &ex.kind else {
        unreachable!("a pick_rows exercise")
    };
    let chosen: RwSignal<BTreeSet<String>> = RwSignal::new(match previous {
        Some(Answer::PickRows { chosen }) => chosen.into_iter().collect(),
        _ => BTreeSet::new(),
    });
    let trace: RwSignal<Option<Arc<Trace>>> = RwSignal::new(None);
    let rows: RwSignal<Vec<PickRow>> = RwSignal::new(Vec::new());
    let ex2 = ex.clone();
    page.ensure_sample(p.sample.clone(), move |t| {
        rows.set(pick_rows(&ex2, &t).unwrap_or_default());
        trace.set(Some(t));
    });
    let ex3 = ex.clone();
    let submit = move |_| {
        let Some(t) = trace.get_untracked() else {
            return;
        };
        let picked: Vec<String> = chosen.get_untracked().into_iter().collect();
        let f = check_pick(&ex3, &picked, &t, page.audience());
        page.progress
            .update(|pr| pr.record(&ex3.id, Answer::PickRows { chosen: picked }, &f));
        page.save_progress();
        feedback.set(Some(f));
    };
    let caption = tx(
        "Attempts on the run's clock, with the mean GPU utilisation of the samples inside each (— : no sample inside). Tick the rows you pick.",
        "运行时钟上的各个尝试，以及每个尝试区间内 GPU 采样的平均利用率（—：区间内没有采样）。勾选你选中的行。",
    );
    let heads = [
        tx("Pick", "选择"),
        tx("Attempt", "尝试"),
        tx("Start (s)", "开始（秒）"),
        tx("Outcome", "结果"),
        tx("TTFT (s)", "TTFT（秒）"),
        tx("E2E (s)", "E2E（秒）"),
        tx("GPU utilisation (%)", "GPU 利用率（%）"),
    ];
    view! {
        <div class="pick-rows">
            <div class="table-scroll" style="max-height: 22em; overflow: auto" tabindex="0">
                <table data-testid="pick-rows-table">
                    <caption>{move || caption.get(page.lang.get()).to_string()}</caption>
                    <thead><tr>
                        {heads.into_iter().map(|h| view! { <th scope="col">{move || h.get(page.lang.get()).to_string()}</th> }).collect_view()}
                    </tr></thead>
                    <tbody>
                        {move || rows.get().into_iter().map(|r| {
                            let id = r.id.clone();
                            let id2 = r.id.clone();
                            let label = r.id.clone();
                            view! {
                                <tr>
                                    <td><input type="checkbox" data-testid=format!("pick-{}", r.id) aria-label=label
                                        prop:checked=move || chosen.with(|c| c.contains(&id))
                                        on:change=move |_| { feedback.set(None); chosen.update(|c| if !c.remove(&id2) { c.insert(id2.clone()); }) } /></td>
                                    <th scope="row" style="white-space: nowrap">{r.id.clone()}</th>
                                    <td>{round_to(r.start_s, 1)}</td>
                                    <td>{move || r.outcome_text.get(page.lang.get()).to_string()}</td>
                                    <td>{r.ttft_s.map(|v| round_to(v, 2)).unwrap_or_else(|| "—".into())}</td>
                                    <td>{round_to(r.e2e_s, 2)}</td>
                                    <td>{r.util_pct.map(|v| round_to(v, 1)).unwrap_or_else(|| "—".into())}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
            <p class="hint">{move || { let n = chosen.with(|c| c.len()); if page.lang.get() == tracelab_core::Lang::Zh { format!("已选 {n} 行") } else { format!("{n} rows picked") } }}</p>
            <button class="check" data-testid="check" on:click=submit>{move || w(page.lang.get(), "check")}</button>
        </div>
    }
}
