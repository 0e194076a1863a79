//! The sessions of a trace whose attempts name them, beside the attempts table: one row per
//! session (its id, its turns, qualified or not and its first failing turn) that opens into its
//! turns, and the per-turn rate, the share of sessions qualified and what independent turns would
//! give, side by side. The rows, the figures and each turn's verdict are the core's
//! (`tracelab_core::session`), written as HTML by the lab's second bundle (`crate::convert`,
//! `Call::Sessions`, `pages/convert/src/session_html.rs`), which holds the open trace, so the
//! lab's first download carries only this box. A threshold edit asks again, so a learner watches
//! session qualification fall faster than the per-turn rate; the sessions a learner opened come
//! back open.
//!
//! Each session's button (`aria-expanded`) opens its `<tbody>` here, in the page, without asking
//! the bundle: the keyboard keeps its place. A click on a turn selects that attempt, so the step
//! panel says why.

use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use crate::convert::Call;
use crate::state::use_lab;

#[component]
pub fn SessionsTable() -> impl IntoView {
    let lab = use_lab();
    // `None` until the bundle answers; "" when the trace has no sessions.
    let html: RwSignal<Option<Result<String, String>>> = RwSignal::new(None);
    // The sessions the learner opened, by id (read when asking, so opening one asks nothing).
    let opened: StoredValue<Vec<String>> = StoredValue::new(Vec::new());
    // Which request is the latest (an older answer arriving late is dropped).
    let latest = StoredValue::new(0u64);
    Effect::new(move |shown: Option<usize>| {
        let (Some(loaded), Some(working)) = (lab.loaded.get(), lab.working.get()) else {
            html.set(None);
            return 0;
        };
        let trace = std::sync::Arc::as_ptr(&loaded.trace) as usize;
        if shown != Some(trace) {
            html.set(None);
            opened.set_value(Vec::new());
        }
        let settings = lab
            .settings
            .with(|s| serde_json::to_string(s).unwrap_or_default());
        let lang = serde_json::to_string(&lab.lang.get()).unwrap_or_default();
        let open = opened.with_value(|o| serde_json::to_string(o).unwrap_or_default());
        let (key, working_text) = lab.sent(loaded, &working);
        latest.update_value(|n| *n += 1);
        let mine = latest.get_value();
        spawn_local(async move {
            let got = crate::convert::call_on_trace(
                Call::Sessions,
                key,
                working_text,
                &[&settings, &lang, &open],
            )
            .await;
            if latest.try_get_value() == Some(mine) {
                html.try_set(Some(got));
            }
        });
        trace
    });
    let on_click = move |e: ev::MouseEvent| {
        let Some(target) = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        else {
            return;
        };
        if let Ok(Some(button)) = target.closest("button[data-session]") {
            let open = button.get_attribute("aria-expanded").as_deref() != Some("true");
            let _ = button.set_attribute("aria-expanded", if open { "true" } else { "false" });
            if let Ok(Some(body)) = button.closest("tbody") {
                let _ = body.class_list().toggle_with_force("open", open);
            }
            let id = button.get_attribute("data-session").unwrap_or_default();
            opened.update_value(|o| {
                o.retain(|x| *x != id);
                if open {
                    o.push(id);
                }
            });
        } else if let Ok(Some(row)) = target.closest("tr[data-row]") {
            if let Some(i) = row.get_attribute("data-row").and_then(|v| v.parse().ok()) {
                lab.selected.set(i);
            }
        }
    };
    move || {
        match html.get() {
        Some(Ok(h)) if !h.is_empty() => Some(view! {
            <section class="sessions-table" aria-labelledby="sessions-h" data-testid="sessions-table" on:click=on_click inner_html=h></section>
        }.into_any()),
        Some(Err(e)) => Some(view! {
            <section class="sessions-table" data-testid="sessions-table">
                <p class="error" role="alert">{e}</p>
            </section>
        }.into_any()),
        _ => None,
    }
    }
}
