//! The page: load the sample, hold the learner's settings, and hand the core's figures to the
//! components. Signals hold state; memos derive the figures; effects touch only the outside world.

use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_core::{Lang, Metrics, Settings};

use crate::components::{AttemptsTable, Controls, MetricsPanel, TraceSummary};
use crate::i18n::{browser_lang, tr};
use crate::loader::{fetch_sample, Loaded};

/// The sample every learner sees first: the lesson's ten-request table.
pub const DEFAULT_SAMPLE: &str = "samples/ten-requests.jsonl";

#[component]
pub fn App() -> impl IntoView {
    let lang = RwSignal::new(browser_lang());
    let loaded: RwSignal<Option<Loaded>> = RwSignal::new(None);
    let load_error: RwSignal<Option<String>> = RwSignal::new(None);
    let settings = RwSignal::new(Settings::default());

    spawn_local(async move {
        match fetch_sample(DEFAULT_SAMPLE, settings.get_untracked().population).await {
            Ok(l) => {
                settings.set(Settings::from_header(&l.trace.header));
                loaded.set(Some(l));
            }
            Err(e) => load_error.set(Some(e)),
        }
    });

    let metrics: Memo<Option<Metrics>> = Memo::new(move |_| {
        loaded.with(|l| l.as_ref().map(|l| settings.with(|s| Metrics::compute(&l.index, s))))
    });

    Effect::new(move |_| {
        // The document's language follows the switch, for screen readers and fonts.
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute("lang", if lang.get() == Lang::Zh { "zh-CN" } else { "en" });
        }
    });

    view! {
        <header class="top">
            <div>
                <h1>{move || tr(lang.get(), "title")}</h1>
                <p class="subtitle">{move || tr(lang.get(), "subtitle")}</p>
            </div>
            <button
                class="lang-switch"
                data-testid="lang-switch"
                aria-label=move || tr(lang.get(), "language_label")
                on:click=move |_| lang.update(|l| *l = if *l == Lang::En { Lang::Zh } else { Lang::En })
            >
                {move || tr(lang.get(), "language")}
            </button>
        </header>
        <main>
            {move || match (loaded.get(), load_error.get()) {
                (_, Some(err)) => view! {
                    <section class="error-panel" role="alert" data-testid="load-error">
                        <h2>{tr(lang.get(), "load_failed")}</h2>
                        <pre>{err}</pre>
                    </section>
                }.into_any(),
                (None, None) => view! { <p class="loading">{tr(lang.get(), "loading")}</p> }.into_any(),
                (Some(l), None) => view! {
                    <TraceSummary loaded=l.clone() lang=lang />
                    <div class="lab-grid">
                        <Controls settings=settings lang=lang />
                        <MetricsPanel metrics=metrics settings=settings lang=lang />
                    </div>
                    <AttemptsTable loaded=l settings=settings lang=lang />
                }.into_any(),
            }}
        </main>
    }
}
