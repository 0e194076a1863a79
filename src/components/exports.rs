//! Downloads: the attempts with their verdicts (CSV), the metric card (Markdown, JSON) and a
//! Chrome trace-event file for Perfetto — all written by the core from the current state, in the
//! bundle that carries the writers (`crate::convert`), fetched on the first click.

use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_core::export::ExportKind;

use crate::convert::Call;
use crate::i18n::tr;
use crate::state::use_lab;
use tracelab_web::download;

#[component]
pub fn Exports() -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let save = move |kind: ExportKind| {
        let (Some(loaded), Some(working)) =
            (lab.loaded.get_untracked(), lab.working.get_untracked())
        else {
            return;
        };
        let source = loaded.origin.name().to_string();
        let file = kind.file_name(&source);
        let settings = lab
            .settings
            .with_untracked(|s| serde_json::to_string(s).unwrap_or_default());
        let lang = serde_json::to_string(&lang.get_untracked()).unwrap_or_default();
        let kind_json = serde_json::to_string(&kind).unwrap_or_default();
        let (key, working_text) = lab.sent(loaded, &working);
        spawn_local(async move {
            // The bundle writes the file from the trace it holds (sent once per trace and set of
            // what-if edits, as for the run checks): a download sends only its choices.
            let written = crate::convert::call_on_trace(
                Call::ExportFile,
                key,
                working_text,
                &[&settings, &lang, &kind_json, &source],
            )
            .await;
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
