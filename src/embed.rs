//! What the lessons page may ask of the lab in its frame (same origin, so a direct call): the
//! trace exactly as the learner has it now — a sample or an upload, what-if edits applied —
//! with the settings in force and the headline figures on screen. The lessons page pre-fills its
//! card from this, never from the frame's URL (which carries neither uploads nor edits).

use std::collections::BTreeMap;

use leptos::prelude::*;
use serde::Serialize;
use tracelab_core::handoff::WorkingText;
use wasm_bindgen::prelude::*;

use crate::state::{Lab, Origin};

/// The function's name on the lab's `window`.
pub const SNAPSHOT_FN: &str = "tracelabSnapshot";
/// Applies a lesson step's permalink query to the trace already open, without a reload.
pub const APPLY_FN: &str = "tracelabApply";
/// Switches the lab's language (the lessons page's switch).
pub const LANG_FN: &str = "tracelabLang";

/// Puts `window.tracelabSnapshot()` in place: it returns the state as JSON, or `null` while no
/// trace is loaded.
pub fn expose(lab: Lab) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let f = Closure::<dyn Fn() -> JsValue>::new(move || {
        snapshot(lab).map(JsValue::from).unwrap_or(JsValue::NULL)
    });
    let _ = js_sys::Reflect::set(&window, &SNAPSHOT_FN.into(), f.as_ref());
    // The page lives as long as the function may be called.
    f.forget();
    let apply =
        Closure::<dyn Fn(String) -> bool>::new(move |query: String| apply_step(lab, &query));
    let _ = js_sys::Reflect::set(&window, &APPLY_FN.into(), apply.as_ref());
    apply.forget();
    // The lessons page's language switch reaches the lab in its frame.
    let lang = Closure::<dyn Fn(String)>::new(move |code: String| {
        lab.lang.set(tracelab_core::Lang::from_tag(&code))
    });
    let _ = js_sys::Reflect::set(&window, &LANG_FN.into(), lang.as_ref());
    lang.forget();
}

/// A lesson step on the sample already open: its settings on top of the sample's own, its row,
/// the what-if edits undone (the step's figures are the lesson's). Not reloading keeps "since
/// the last edit", which is the step's point ("P95 and the failure rate do not move"). `false`
/// when the step needs another trace: the lessons page then loads it by address.
fn apply_step(lab: Lab, query: &str) -> bool {
    let asked = crate::persist::parse_query(query);
    let same = lab.loaded.with_untracked(|l| {
        matches!((l.as_ref().map(|l| &l.origin), &asked.sample), (Some(Origin::Sample(open)), Some(want)) if open == want)
    });
    if !same {
        return false;
    }
    let Some(header) = lab
        .loaded
        .with_untracked(|l| l.as_ref().map(|l| l.trace.header.clone()))
    else {
        return false;
    };
    let mut settings = tracelab_core::Settings::from_header(&header);
    settings.apply_pairs(asked.settings.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    lab.whatif.set(Default::default());
    lab.settings.set(settings);
    if let Some(r) = asked.row {
        lab.selected.set(r.min(lab.row_count().saturating_sub(1)));
    }
    if let Some(l) = asked.lang {
        lab.lang.set(l);
    }
    // A step that names a row ("watch R4") is about that row: it is shown, selected; any other
    // step is about the figures.
    if asked.row.is_some() {
        show_selected_row();
    } else if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("metrics-h"))
    {
        el.scroll_into_view();
    }
    true
}

/// Scrolls the page so the selected row of the attempts table is in the middle of the view, once
/// the table has drawn it: a row far down a long trace is drawn only after the table's own scroll
/// brings it in, so a few frames are waited for; then the table's heading, if the row never came.
/// Only the page scrolls: the table's own box is the table's to scroll (it draws only the rows in
/// view, and a second scroller moving it would fight it).
pub fn show_selected_row() {
    show_selected_row_within(12);
}

fn show_selected_row_within(frames: u32) {
    request_animation_frame(move || {
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        match doc
            .query_selector("[data-testid=attempt-row].selected")
            .ok()
            .flatten()
        {
            Some(row) => {
                let Some(window) = web_sys::window() else {
                    return;
                };
                let r = row.get_bounding_client_rect();
                let view = window
                    .inner_height()
                    .ok()
                    .and_then(|h| h.as_f64())
                    .unwrap_or(0.0);
                window.scroll_by_with_x_and_y(0.0, r.top() + r.height() / 2.0 - view / 2.0);
            }
            None if frames > 0 => show_selected_row_within(frames - 1),
            None => {
                if let Some(h) = doc.get_element_by_id("attempts-h") {
                    h.scroll_into_view();
                }
            }
        }
    });
}

/// What `tracelabSnapshot()` returns, written straight to text (no `serde_json::Value` in
/// between).
#[derive(Serialize)]
struct Snapshot<'a> {
    kind: &'static str,
    source: String,
    uploaded: bool,
    settings: BTreeMap<&'static str, String>,
    shown: Shown,
    // The text the lab read the trace from, with the what-if edits: the lessons page reads it
    // with the same reader, recomputes the very figures on screen and names the edits' mistakes
    // with the core, as the lab does.
    trace: &'a WorkingText,
}

#[derive(Serialize)]
struct Shown {
    attempts: usize,
    qualified: usize,
}

fn snapshot(lab: Lab) -> Option<String> {
    let trace = lab.working_text()?;
    let (source, uploaded) = lab.loaded.with_untracked(|l| {
        l.as_ref().map(|l| {
            (
                l.origin.name().to_string(),
                matches!(l.origin, Origin::Uploaded(_)),
            )
        })
    })?;
    let settings: BTreeMap<&'static str, String> = lab
        .settings
        .with_untracked(|s| s.to_pairs())
        .into_iter()
        .collect();
    let metrics = lab.metrics.get_untracked()?;
    let snapshot = Snapshot {
        kind: "tracelab.lab-state",
        source,
        uploaded,
        settings,
        shown: Shown {
            attempts: metrics.attempts,
            qualified: metrics.qualified,
        },
        trace: &trace,
    };
    serde_json::to_string(&snapshot).ok()
}
