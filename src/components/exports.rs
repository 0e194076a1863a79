//! Downloads: the attempts with their verdicts (CSV), the metric card (Markdown, JSON) and a
//! Chrome trace-event file for Perfetto — all written by the core from the current state, in the
//! bundle that carries the writers (`crate::convert`), fetched on the first click.

use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_core::export::{ExportKind, ExportRequest};

use tracelab_web::download;
use crate::i18n::tr;
use crate::state::use_lab;

#[component]
pub fn Exports() -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let save = move |kind: ExportKind| {
        let Some(trace) = lab.working_text() else { return };
        let source = lab.loaded.with_untracked(|l| l.as_ref().map(|l| l.origin.name().to_string())).unwrap_or_default();
        let request = ExportRequest { kind, source, trace, settings: lab.settings.get_untracked(), lang: lang.get_untracked() };
        let file = kind.file_name(&request.source);
        spawn_local(async move {
            // The trace goes as its text with the what-if edits (`WorkingText`): the lab's
            // download carries no serializer of the trace.
            let written = match serde_json::to_string(&request) {
                Ok(json) => crate::convert::call(crate::convert::Call::ExportFile, &[&json]).await,
                Err(e) => Err(e.to_string()),
            };
            if let Err(e) = written.and_then(|text| download(&file, kind.mime(), &text)) {
                lab.load_error.set(Some(format!("{file}: {e}")));
            }
        });
    };
    view! {
        <section class="exports" aria-labelledby="exports-h">
            <h2 id="exports-h">{move || tr(lang.get(), "exports")}</h2>
            <div class="export-buttons">
                <button data-testid="export-csv" on:click=move |_| save(ExportKind::Csv)>{move || tr(lang.get(), "export_csv")}</button>
                <button data-testid="export-card-md" on:click=move |_| save(ExportKind::CardMd)>{move || tr(lang.get(), "export_card_md")}</button>
                <button data-testid="export-card-json" on:click=move |_| save(ExportKind::CardJson)>{move || tr(lang.get(), "export_card_json")}</button>
                <button data-testid="export-perfetto" on:click=move |_| save(ExportKind::Perfetto)>{move || tr(lang.get(), "export_perfetto")}</button>
            </div>
            <p class="hint">{move || tr(lang.get(), "exports_hint")}</p>
        </section>
    }
}
