//! The page: builds the shared [`Lab`] state, restores a permalink or this browser's saved
//! choices, loads the sample, and lays out the components. Effects here only touch the outside
//! world (URL, localStorage, the document's language, the keyboard).

use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_core::Lang;
use tracelab_web::browser_lang;

use crate::components::{
    AttemptsTable, Charts, Controls, Exports, FigureStrip, LoadPanel, MetricsPanel, Notes,
    PeerPanel, SessionsTable, StepPanel, TraceSummary,
};
use crate::i18n::tr;
use crate::loader::fetch_sample;
use crate::persist::{self, Requested};
use crate::state::{use_lab, Lab, Origin};

/// The sample every learner sees first: the lesson's ten-request table.
pub const DEFAULT_SAMPLE: &str = "ten-requests.jsonl";

#[component]
pub fn App() -> impl IntoView {
    let url = persist::read_url();
    let (stored, stored_error) = match persist::read_stored() {
        Ok(s) => (s, None),
        Err(e) => (None, Some(e)),
    };
    let lang = url
        .lang
        .or(stored.as_ref().and_then(|s| s.lang))
        .unwrap_or_else(browser_lang);
    let lab = Lab::new(lang);
    provide_context(lab);
    crate::embed::expose(lab);
    lab.notice.set(stored_error);
    if let Some(notes) = stored.as_ref().and_then(|s| s.notes.clone()) {
        lab.notes.set(notes);
    }

    // A link wins over what this browser saved; saved choices apply only to the same sample.
    let link_has_state = url.sample.is_some()
        || !url.settings.is_empty()
        || url.uploaded.is_some()
        || !url.ignored.is_empty();
    let first: Requested = if link_has_state {
        url.clone()
    } else {
        stored.unwrap_or_default()
    };
    let sample = first
        .sample
        .clone()
        .unwrap_or_else(|| DEFAULT_SAMPLE.to_string());
    if let Some(name) = &url.uploaded {
        lab.notice
            .set(Some(format!("{} {name}", tr(lang, "uploaded_link"))));
    }
    let row = url.row;
    spawn_local(async move {
        match fetch_sample(&sample).await {
            Ok((trace, text)) => {
                let refused = lab.load(
                    crate::state::Loaded::new(Origin::Sample(sample.clone()), trace, text),
                    &first.settings,
                );
                // A mangled link is never dropped silently: say which parts were not used.
                let mut ignored = first.ignored.clone();
                ignored.extend(
                    refused
                        .iter()
                        .filter_map(|k| first.settings.iter().find(|(key, _)| key == k))
                        .map(|(k, v)| format!("{k}={v}")),
                );
                if !ignored.is_empty() && link_has_state {
                    lab.notice.set(Some(format!(
                        "{} {}",
                        tr(lab.lang.get_untracked(), "link_ignored"),
                        ignored.join(", ")
                    )));
                }
                if let Some(r) = row {
                    lab.selected.set(r.min(lab.row_count().saturating_sub(1)));
                    // Beside a lesson, a step that names a row loads the lab by address when it
                    // needs another trace: the row is shown as when the step is taken in place.
                    if persist::in_frame() {
                        crate::embed::show_selected_row();
                    }
                }
            }
            Err(e) => lab.load_error.set(Some(e)),
        }
    });

    // The permalink and this browser's copy follow every change.
    Effect::new(move |_| {
        let settings = lab.settings.with(|s| s.to_pairs());
        let lang = lab.lang.get();
        let row = lab.selected.get();
        let notes = lab.notes.get();
        lab.loaded.with(|l| {
            let Some(l) = l else { return };
            let (sample, uploaded) = match &l.origin {
                Origin::Sample(s) => (Some(s.as_str()), None),
                Origin::Uploaded(u) => (None, Some(u.as_str())),
            };
            persist::write_url(sample, uploaded, row, lang, &settings);
            persist::write_stored(sample, lang, &settings, &notes);
        });
    });

    Effect::new(move |_| {
        // The document's language follows the switch, for screen readers and CJK fonts.
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute(
                "lang",
                if lab.lang.get() == Lang::Zh {
                    "zh-CN"
                } else {
                    "en"
                },
            );
        }
    });

    // → / j next row, ← / k previous — unless the learner is typing in a field.
    let keys = window_event_listener(ev::keydown, move |e| {
        if e.alt_key() || e.ctrl_key() || e.meta_key() {
            return;
        }
        let typing = e
            .target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
            .map(|el| {
                matches!(
                    el.tag_name().to_ascii_lowercase().as_str(),
                    "input" | "select" | "textarea"
                )
            })
            .unwrap_or(false);
        if typing {
            return;
        }
        match e.key().as_str() {
            "ArrowRight" | "j" => {
                e.prevent_default();
                lab.step(1);
            }
            "ArrowLeft" | "k" => {
                e.prevent_default();
                lab.step(-1);
            }
            _ => {}
        }
    });
    on_cleanup(move || keys.remove());

    view! {
        <a class="skip-link" href="#lab-main">{move || tr(lab.lang.get(), "skip")}</a>
        <Header />
        <main id="lab-main">
            <Banners />
            // First, so that a phone shows where to start above the fold too.
            <StartHere />
            <div class="load-row">
                <LoadPanel />
                <TraceSummary />
            </div>
            {move || lab.loaded.with(|l| l.is_some()).then(|| view! {
                <div class="lab-grid">
                    <Controls />
                    <div class="lab-main-col">
                        <MetricsPanel />
                        <StepPanel />
                    </div>
                </div>
                <PeerPanel />
                <Charts />
                <SessionsTable />
                <AttemptsTable />
                <div class="bottom-row">
                    <Exports />
                    <Notes />
                </div>
            })}
        </main>
        // Outside main: a sticky box cannot rise above its parent's top, and main starts below
        // the header (250 px down on a phone), so in a short frame the strip was cut off there.
        <FigureStrip />
    }
    .into_any()
}

#[component]
fn Header() -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    view! {
        <header class="top">
            <div>
                <h1>{move || tr(lang.get(), "title")}</h1>
                <p class="subtitle">{move || tr(lang.get(), "subtitle")}</p>
            </div>
            <nav class="top-actions">
            <a class="lessons-link" data-testid="lessons-link" href="lessons/" target="_top">{move || tr(lang.get(), "lessons")}</a>
            <button
                class="lang-switch"
                data-testid="lang-switch"
                title=move || tr(lang.get(), "language_label")
                on:click=move |_| lang.update(|l| *l = if *l == Lang::En { Lang::Zh } else { Lang::En })
            >
                {move || tr(lang.get(), "language")}
            </button>
            </nav>
        </header>
    }
}

/// On the classroom sample, where to begin: the step-through, which may be below the fold.
#[component]
fn StartHere() -> impl IntoView {
    let lab = use_lab();
    let on_sample = move || {
        lab.loaded.with(
            |l| matches!(l, Some(l) if l.origin == Origin::Sample(DEFAULT_SAMPLE.to_string())),
        )
    };
    move || {
        let l = lab.lang.get();
        (on_sample() && !persist::in_frame()).then(|| view! {
            <p class="start-here" data-testid="start-here">
                <strong>{tr(l, "start_here")}</strong>" "{tr(l, "start_text")}" "
                <button data-testid="start-button" on:click=move |_| {
                    lab.selected.set(0);
                    if let Some(el) = document().get_element_by_id("step-h") {
                        el.scroll_into_view();
                    }
                    if let Some(next) = document().query_selector("[data-testid=next]").ok().flatten() {
                        let _ = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(next).map(|b| b.focus());
                    }
                }>{tr(l, "start_button")}</button>
            </p>
        })
    }
}

#[component]
fn Banners() -> impl IntoView {
    let lab = use_lab();
    view! {
        {move || lab.load_error.get().map(|err| view! {
            <section class="error-panel" role="alert" data-testid="load-error">
                <h2>{tr(lab.lang.get(), "load_failed")}</h2>
                <pre>{err}</pre>
                <p>{tr(lab.lang.get(), "load_kept")}</p>
                <button on:click=move |_| lab.load_error.set(None)>{tr(lab.lang.get(), "dismiss")}</button>
            </section>
        })}
        {move || lab.notice.get().map(|n| view! {
            <p class="notice" role="status" data-testid="notice">
                {n}" "
                <button class="link" on:click=move |_| lab.notice.set(None)>{tr(lab.lang.get(), "dismiss")}</button>
            </p>
        })}
        {move || lab.loaded.with(|l| l.is_none()).then(|| view! {
            <p class="loading">{tr(lab.lang.get(), "loading")}</p>
        })}
    }
}
