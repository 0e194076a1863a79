//! The lines about the run itself beside the figures: the recorder's own share, client lag, the
//! GPU and the engine beside the slow attempts, the first-send/repeat split and the five checks
//! before a run counts as a baseline, and, when the attempts name sessions, the figures by
//! session and by turn. They are the core's (`tracelab_core::card::run_checks`, `::session`),
//! computed in the lab's second bundle (`crate::convert`), which holds the open trace: the first
//! paint does not wait for them, and the lab's first download carries none of that code.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::convert::Call;
use crate::state::use_lab;
use tracelab_web::bridge::RunChecksAnswer;

#[component]
pub fn RunChecks() -> impl IntoView {
    let lab = use_lab();
    // `None` while the lines are computed; `Err` when the bundle could not be loaded.
    let checks: RwSignal<Option<Result<RunChecksAnswer, String>>> = RwSignal::new(None);
    // Which request is the latest (an older answer arriving late is dropped).
    let latest = StoredValue::new(0u64);
    // A new trace clears the lines until its answer comes; an edit keeps the last lines until
    // the new ones replace them, so the page below does not jump on every keystroke.
    Effect::new(move |shown: Option<usize>| {
        let (Some(loaded), Some(working)) = (lab.loaded.get(), lab.working.get()) else {
            checks.set(Some(Ok(RunChecksAnswer::default())));
            return 0;
        };
        let trace = Arc::as_ptr(&loaded.trace) as usize;
        if shown != Some(trace) {
            checks.set(None);
        }
        let settings = lab
            .settings
            .with(|s| serde_json::to_string(s).unwrap_or_default());
        let lang = serde_json::to_string(&lab.lang.get()).unwrap_or_default();
        let (key, working_text) = lab.sent(loaded, &working);
        latest.update_value(|n| *n += 1);
        let mine = latest.get_value();
        spawn_local(async move {
            let answer = crate::convert::call_on_trace(
                Call::RunChecks,
                key,
                working_text,
                &[&settings, &lang],
            )
            .await
            .and_then(|json| {
                serde_json::from_str::<RunChecksAnswer>(&json).map_err(|e| e.to_string())
            });
            // The panel may be gone by now (a new trace lays the page out afresh).
            if latest.try_get_value() == Some(mine) {
                checks.try_set(Some(answer));
            }
        });
        trace
    });
    // The session section's first line is its title; the rest are its figures and turn rows.
    let sessions = move || {
        checks.with(|c| match c {
            Some(Ok(a)) if !a.sessions.is_empty() => Some(a.sessions.clone()),
            _ => None,
        })
    };
    view! {
        <ul class="run-checks" data-testid="run-checks" aria-live="polite" aria-busy=move || checks.with(Option::is_none).to_string()>
            {move || match checks.get() {
                None => view! { <li class="loading">"…"</li> }.into_any(),
                Some(Ok(answer)) => answer.checks.into_iter().map(|line| view! { <li>{line}</li> }).collect_view().into_any(),
                Some(Err(e)) => view! { <li class="error" role="alert" data-testid="run-checks-error">{e}</li> }.into_any(),
            }}
        </ul>
        {move || sessions().map(|lines| {
            let mut lines = lines.into_iter();
            let title = lines.next().unwrap_or_default();
            view! {
                <section class="sessions" data-testid="sessions" aria-live="polite">
                    <h3>{title}</h3>
                    <ul>{lines.map(|line| view! { <li>{line.trim().to_string()}</li> }).collect_view()}</ul>
                </section>
            }
        })}
    }
}
