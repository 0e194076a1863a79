//! Downloads: the attempts with their verdicts (CSV), the metric card (Markdown, JSON) and a
//! Chrome trace-event file for Perfetto — all written by the core from the current state.

use leptos::prelude::*;
use tracelab_core::{export, Metrics};

use crate::download::download;
use crate::i18n::tr;
use crate::state::use_lab;

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
