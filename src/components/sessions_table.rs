//! The sessions of a trace whose attempts name them, beside the attempts table: one row per
//! session (its id, its turns, qualified or not and its first failing turn) that opens into its
//! turns, and the per-turn rate, the share of sessions qualified and what independent turns would
//! give, side by side. The rows and figures are the core's (`tracelab_core::session`), computed
//! in the lab's second bundle (`crate::convert`, `Call::Sessions`), which holds the open trace:
//! a threshold edit asks again, so a learner watches session qualification fall faster than the
//! per-turn rate. Each turn's own verdict is the core's per-attempt verdict, as in the table.

use std::collections::HashSet;

use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_core::session::SessionRow;
use tracelab_core::{
    format::{integer, trim_num},
    verdict, Attempt, Lang, Settings,
};
use tracelab_web::bridge::SessionsAnswer;

use crate::convert::Call;
use crate::i18n::tr;
use crate::state::use_lab;

#[component]
pub fn SessionsTable() -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let answer: RwSignal<Option<Result<SessionsAnswer, String>>> = RwSignal::new(None);
    // Which request is the latest (an older answer arriving late is dropped).
    let latest = StoredValue::new(0u64);
    // The sessions opened into their turns, by id: kept across threshold edits.
    let open: RwSignal<HashSet<String>> = RwSignal::new(HashSet::new());
    Effect::new(move |shown: Option<usize>| {
        let (Some(loaded), Some(working)) = (lab.loaded.get(), lab.working.get()) else {
            answer.set(None);
            return 0;
        };
        let trace = std::sync::Arc::as_ptr(&loaded.trace) as usize;
        if shown != Some(trace) {
            answer.set(None);
            open.set(HashSet::new());
        }
        let settings = lab
            .settings
            .with(|s| serde_json::to_string(s).unwrap_or_default());
        let l = serde_json::to_string(&lang.get()).unwrap_or_default();
        let (key, working_text) = lab.sent(loaded, &working);
        latest.update_value(|n| *n += 1);
        let mine = latest.get_value();
        spawn_local(async move {
            let got =
                crate::convert::call_on_trace(Call::Sessions, key, working_text, &[&settings, &l])
                    .await
                    .and_then(|json| {
                        serde_json::from_str::<SessionsAnswer>(&json).map_err(|e| e.to_string())
                    });
            if latest.try_get_value() == Some(mine) {
                answer.try_set(Some(got));
            }
        });
        trace
    });
    let rows = move || {
        answer.with(|a| match a {
            Some(Ok(a)) => a.rows.iter().cloned().enumerate().collect::<Vec<_>>(),
            _ => Vec::new(),
        })
    };
    let has_rows =
        Memo::new(move |_| answer.with(|a| matches!(a, Some(Ok(a)) if !a.rows.is_empty())));
    let error = move || answer.with(|a| a.as_ref().and_then(|a| a.as_ref().err().cloned()));
    let figures = move || {
        answer.with(|a| match a {
            Some(Ok(a)) => a.figures.clone(),
            _ => Vec::new(),
        })
    };

    // The section is laid out once per trace with sessions; the rows are keyed, so a threshold
    // edit redraws only the sessions whose verdict moved (an open one stays open, the box keeps
    // its scroll and the keyboard its place).
    move || {
        if let Some(e) = error() {
            return Some(
                view! {
                    <section class="sessions-table" data-testid="sessions-table">
                        <p class="error" role="alert">{e}</p>
                    </section>
                }
                .into_any(),
            );
        }
        has_rows.get().then(|| {
            view! {
                <section class="sessions-table" aria-labelledby="sessions-h" data-testid="sessions-table">
                    <h2 id="sessions-h">
                        {move || tr(lang.get(), "sess_title")}
                        <span class="count">{move || format!(" ({})", integer(answer.with(|a| a.as_ref().and_then(|a| a.as_ref().ok()).map_or(0, |a| a.rows.len())) as u64))}</span>
                    </h2>
                    <p class="muted">{move || tr(lang.get(), "sess_intro")}</p>
                    <div class="metric-grid session-figures" aria-live="polite">
                        {move || figures().into_iter().map(|f| view! {
                            <div class="metric" data-testid=format!("session-figure-{}", f.key)>
                                <h3>{f.name}</h3>
                                <p class="value">{f.value}</p>
                                <p class="interval">{f.interval}</p>
                            </div>
                        }).collect_view()}
                    </div>
                    <div class="table-scroll sessions-scroll" tabindex="0" role="region" aria-labelledby="sessions-h">
                        <table data-testid="sessions-rows">
                            <thead>
                                <tr>
                                    <th scope="col">{move || tr(lang.get(), "sess_col_session")}</th>
                                    <th scope="col" class="num">{move || tr(lang.get(), "sess_col_turns")}</th>
                                    <th scope="col" class="num">{move || tr(lang.get(), "col_ttft")}</th>
                                    <th scope="col">{move || tr(lang.get(), "col_verdict")}</th>
                                    <th scope="col">{move || tr(lang.get(), "sess_col_first")}</th>
                                </tr>
                            </thead>
                            <For each=rows key=|r| r.clone() children=move |(k, row)| session_rows(k, row, open) />
                        </table>
                    </div>
                </section>
            }
            .into_any()
        })
    }
}

/// One session's row, and its turns below it while it is open.
fn session_rows(k: usize, row: SessionRow, open: RwSignal<HashSet<String>>) -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let id = row.session_id.clone();
    let is_open = {
        let id = id.clone();
        move || open.with(|o| o.contains(&id))
    };
    let body_id = format!("session-turns-{k}");
    let tbody_id = body_id.clone();
    let first = row.first_failing;
    let first_text = move || {
        let (turn, i) = first?;
        let l = lang.get();
        let why = lab.working.with(|w| {
            let a = w.as_ref()?.attempts.get(i)?;
            lab.settings.with(|s| verdict(a, s).reason)
        });
        let why = why.map(|r| r.text().get(l).to_string()).unwrap_or_default();
        Some(format!(
            "{}{} {why}",
            turn_n(l, turn),
            if l == Lang::Zh { "：" } else { ":" }
        ))
    };
    let turns = {
        let (positions, is_open) = (row.rows.clone(), is_open.clone());
        move || {
            is_open().then(|| {
                let l = lang.get();
                lab.working.with(|w| {
                    let Some(w) = w else { return Vec::new() };
                    lab.settings.with(|s| {
                        positions
                            .iter()
                            .filter_map(|&i| Some((i, w.attempts.get(i)?)))
                            .map(|(i, a)| turn_row(i, a, s, l))
                            .collect::<Vec<_>>()
                    })
                })
            })
        }
    };
    let toggle = {
        let id = id.clone();
        move |_| {
            open.update(|o| {
                if !o.remove(&id) {
                    o.insert(id.clone());
                }
            })
        }
    };
    let (open_a, open_b) = (is_open.clone(), is_open);
    let qualified = row.qualified;
    view! {
        <tbody id=tbody_id class="session">
            <tr class="session-row" class:qualified=qualified data-testid="session-row">
                <th scope="row">
                    <button
                        type="button"
                        class="session-toggle mono"
                        aria-expanded=move || open_a().to_string()
                        aria-controls=body_id
                        data-testid="session-toggle"
                        on:click=toggle
                    >
                        <span aria-hidden="true">{move || if open_b() { "▾ " } else { "▸ " }}</span>
                        {id}
                    </button>
                </th>
                <td class="num">{integer(row.rows.len() as u64)}</td>
                <td></td>
                <td data-testid="session-verdict">{move || tr(lang.get(), if qualified { "qualified" } else { "not_qualified" })}</td>
                <td data-testid="first-failing">{move || first_text().unwrap_or_default()}</td>
            </tr>
            {turns}
        </tbody>
    }
}

/// One turn of an open session: the attempt's own verdict (the core's), as in the attempts
/// table; a click selects that attempt, so the step panel says why.
fn turn_row(i: usize, a: &Attempt, s: &Settings, l: Lang) -> impl IntoView {
    let lab = use_lab();
    let v = verdict(a, s);
    let turn = a.session.as_ref().map_or(0, |t| t.turn);
    let ttft = v
        .ttft_s
        .map(trim_num)
        .unwrap_or_else(|| tr(l, "missing").to_string());
    view! {
        <tr
            class="turn-row"
            class:qualified=v.qualified
            class:selected=move || lab.selected.get() == i
            data-testid="session-turn"
            on:click=move |_| lab.selected.set(i)
        >
            <td class="turn-label">{turn_n(l, turn)}</td>
            <td class="mono">{a.id.clone()}</td>
            <td class="num">{ttft}</td>
            <td data-testid="verdict">{if v.qualified { tr(l, "qualified") } else { tr(l, "not_qualified") }}</td>
            <td>{v.reason.map(|r| r.text().get(l).to_string()).unwrap_or_default()}</td>
        </tr>
    }
}

/// "turn 3" / "第 3 轮".
fn turn_n(l: Lang, turn: u32) -> String {
    tr(l, "sess_turn_n").replace("{n}", &integer(u64::from(turn)))
}
