//! Stepping through the table row by row: Previous / Next (and ←/→, j/k), the "why" panel for
//! the selected attempt, the running tally a class recomputes (with each figure's 95 % interval
//! over the rows so far, from the core), and what-if edits of the row.

use leptos::prelude::*;
use tracelab_core::{
    explain,
    format::{integer, trim_num},
    units, Outcome, Phase, Quality, RowEdit, Tally, WarmupPolicy,
};

use crate::i18n::tr;
use crate::state::use_lab;

#[component]
pub fn StepPanel() -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let row = move || {
        let i = lab.selected.get();
        lab.working.with(|w| {
            w.as_ref()
                .and_then(|w| w.attempts.get(i).cloned().map(|a| (w.original_rows[i], a)))
        })
    };
    let n = move || lab.row_count();
    view! {
        <section class="step" aria-labelledby="step-h">
            <h2 id="step-h">{move || tr(lang.get(), "step")}</h2>
            <div class="step-nav">
                <button data-testid="prev" on:click=move |_| lab.step(-1) disabled=move || lab.selected.get() == 0>
                    "← "{move || tr(lang.get(), "previous")}
                </button>
                <span class="position" data-testid="position">
                    {move || format!("{} / {}", integer(((lab.selected.get() + 1).min(n())) as u64), integer(n() as u64))}
                </span>
                <button data-testid="next" on:click=move |_| lab.step(1) disabled=move || { lab.selected.get() + 1 >= n() }>
                    {move || tr(lang.get(), "next")}" →"
                </button>
                <span class="hint">{move || tr(lang.get(), "keys_hint")}</span>
            </div>
            {move || row().map(|(original, a)| {
                let l = lang.get();
                let (verdict, checks) = lab.settings.with(|s| explain(&a, s));
                let running = lab.running_index.with(|r| r.as_ref().map(|(rows, ix)| lab.settings.with(|s| Tally::of_index(&ix.0, *rows, s))));
                let so_far = lab.running_index.with(|r| r.as_ref().map(|(rows, ix)| lab.settings.with(|s| tracelab_core::compare::running_over(&ix.0, &ix.1, *rows, s).text(l))));
                let id = a.id.clone();
                let warmup = a.phase == Phase::Warmup && lab.settings.with(|s| s.population.warmup == WarmupPolicy::Exclude);
                view! {
                    <div class="why" data-testid="why" aria-live="polite">
                        <h3>
                            <span class="mono">{id.clone()}</span>" — "
                            <span class:good=verdict.qualified && !warmup class:bad=!verdict.qualified && !warmup data-testid="why-verdict">
                                {if warmup { tr(l, "warmup_not_counted") } else if verdict.qualified { tr(l, "qualified") } else { tr(l, "not_qualified") }}
                            </span>
                        </h3>
                        <ol class="checks">
                            {checks.into_iter().map(|c| view! {
                                <li class:ok=c.ok class:fail=!c.ok>
                                    <span class="q">{c.question.get(l).to_string()}</span>" "
                                    <span class="a">{c.answer.get(l).to_string()}</span>
                                </li>
                            }).collect_view()}
                        </ol>
                        <p class="tally" data-testid="tally">{running.map(|t| t.sentence(&id).get(l).to_string())}</p>
                        <p class="running" data-testid="running">{so_far}</p>
                    </div>
                    <RowEditor original=original outcome=a.outcome ttft_ms=a.ttft_ms quality=a.quality />
                }
            })}
        </section>
    }
}

/// What-if edits of one row: its outcome, TTFT and quality; or delete it. The original trace
/// is never changed, so "reset" always brings it back.
#[component]
fn RowEditor(
    original: usize,
    outcome: Outcome,
    ttft_ms: Option<f64>,
    quality: Quality,
) -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let refused = RwSignal::new(None::<tracelab_core::Text>);
    let edit = move |f: Box<dyn FnOnce(&mut RowEdit)>| {
        lab.whatif
            .update(|w| f(w.edits.entry(original).or_default()));
    };
    view! {
        <details class="row-edit">
            <summary>{move || tr(lang.get(), "what_if")}</summary>
            <div class="row-edit-grid">
                <label for="edit-outcome">{move || tr(lang.get(), "col_outcome")}</label>
                <select id="edit-outcome" data-testid="edit-outcome" on:change=move |e| {
                    let name = event_target_value(&e);
                    edit(Box::new(move |r| r.outcome = Some(name)));
                }>
                    {Outcome::NAMES.iter().map(|name| view! {
                        <option value=*name selected=outcome.name() == *name>{*name}</option>
                    }).collect_view()}
                </select>
                <label for="edit-ttft">{move || tr(lang.get(), "col_ttft")}</label>
                // A text box the core reads (as the threshold's is read), not `type="number"`:
                // Chromium lays a number box out at 0 × 0 when it is built inside a closed
                // <details> by the type-erased views, and the core's reading refuses what a
                // number box would have refused, in both languages.
                <input id="edit-ttft" data-testid="edit-ttft" type="text" inputmode="decimal" autocomplete="off"
                    placeholder=move || tr(lang.get(), "missing")
                    aria-invalid=move || refused.with(Option::is_some).to_string()
                    prop:value=ttft_ms.map(|t| trim_num(units::s_from_ms(t))).unwrap_or_default()
                    on:change=move |e| {
                        // The core reads the typed seconds to the trace's microsecond, so a TTFT
                        // typed as the threshold compares equal to it; empty means "no token came".
                        match units::parse_seconds_as_ms(&event_target_value(&e)) {
                            Ok(value) => {
                                refused.set(None);
                                edit(Box::new(move |r| r.ttft_ms = Some(value)));
                            }
                            Err(why) => refused.set(Some(why)),
                        }
                    } />
                {move || refused.get().map(|why| view! {
                    <p class="field-error" role="alert" data-testid="edit-ttft-error" style:grid-column="1 / -1">{why.get(lang.get()).to_string()}</p>
                })}
                <label for="edit-quality">{move || tr(lang.get(), "col_quality")}</label>
                <select id="edit-quality" data-testid="edit-quality" on:change=move |e| {
                    let q = match event_target_value(&e).as_str() { "pass" => Quality::Pass, "fail" => Quality::Fail, _ => Quality::NotEvaluated };
                    edit(Box::new(move |r| r.quality = Some(q)));
                }>
                    {[Quality::Pass, Quality::Fail, Quality::NotEvaluated].into_iter().map(|q| view! {
                        <option value=q.name() selected=q == quality>{q.name()}</option>
                    }).collect_view()}
                </select>
            </div>
            <div class="row-edit-actions">
                <button class="danger" data-testid="delete-row" on:click=move |_| {
                    lab.whatif.update(|w| { w.deleted.insert(original); });
                    let n = lab.row_count();
                    lab.selected.update(|s| *s = (*s).min(n.saturating_sub(1)));
                }>{move || tr(lang.get(), "delete_row")}</button>
                <button class="secondary" data-testid="reset-edits" disabled=move || lab.whatif.with(|w| w.is_empty())
                    on:click=move |_| lab.whatif.set(Default::default())>
                    {move || tr(lang.get(), "reset_edits")}
                </button>
            </div>
        </details>
    }
}
