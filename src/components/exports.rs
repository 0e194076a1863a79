//! Downloads: the attempts with their verdicts (CSV), the metric card (Markdown, JSON) and a
//! Chrome trace-event file for Perfetto — all written by the core from the current state.

use leptos::prelude::*;
use tracelab_core::{export, Metrics};
use wasm_bindgen::JsCast;

use crate::i18n::tr;
use crate::state::use_lab;

/// Hands `text` to the browser as a download named `name`.
fn download(name: &str, mime: &str, text: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).map_err(|e| format!("{e:?}"))?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| format!("{e:?}"))?;
    let document = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = document.create_element("a").map_err(|e| format!("{e:?}"))?.unchecked_into();
    a.set_href(&url);
    a.set_download(name);
    a.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}

#[derive(Clone, Copy)]
enum Kind {
    Csv,
    CardMd,
    CardJson,
    Perfetto,
}

#[component]
pub fn Exports() -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let save = move |kind: Kind| {
        let Some(trace) = lab.working_trace() else { return };
        let settings = lab.settings.get_untracked();
        let name = lab.loaded.with_untracked(|l| l.as_ref().map(|l| l.origin.name().to_string())).unwrap_or_default();
        let stem = name.rsplit_once('.').map_or(name.as_str(), |(s, _)| s).to_string();
        let metrics = lab.metrics.get_untracked().unwrap_or_else(|| Metrics::compute(&tracelab_core::Index::build(&trace.attempts, settings.population), &settings));
        let l = lang.get_untracked();
        let (file, mime, text) = match kind {
            Kind::Csv => (format!("{stem}-verdicts.csv"), "text/csv", export::attempts_csv(&trace, &settings)),
            Kind::CardMd => (format!("{stem}-metric-card.md"), "text/markdown", export::card_markdown(&name, &trace, &settings, &metrics, l)),
            Kind::CardJson => (format!("{stem}-metric-card.json"), "application/json", export::card_json(&name, &trace, &settings, &metrics, l)),
            Kind::Perfetto => (format!("{stem}-perfetto.json"), "application/json", export::perfetto(&trace, &settings)),
        };
        if let Err(e) = download(&file, mime, &text) {
            lab.load_error.set(Some(format!("{file}: {e}")));
        }
    };
    view! {
        <section class="exports" aria-labelledby="exports-h">
            <h2 id="exports-h">{move || tr(lang.get(), "exports")}</h2>
            <div class="export-buttons">
                <button data-testid="export-csv" on:click=move |_| save(Kind::Csv)>{move || tr(lang.get(), "export_csv")}</button>
                <button data-testid="export-card-md" on:click=move |_| save(Kind::CardMd)>{move || tr(lang.get(), "export_card_md")}</button>
                <button data-testid="export-card-json" on:click=move |_| save(Kind::CardJson)>{move || tr(lang.get(), "export_card_json")}</button>
                <button data-testid="export-perfetto" on:click=move |_| save(Kind::Perfetto)>{move || tr(lang.get(), "export_perfetto")}</button>
            </div>
            <p class="hint">{move || tr(lang.get(), "exports_hint")}</p>
        </section>
    }
}
