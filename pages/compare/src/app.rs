//! The page: two loaders (a sample or a file each), the core's comparison of what they hold, the
//! table and the chart. `?base=…&new=…&lang=…` opens it on two samples (the lab's "Compare with…").

use leptos::prelude::*;
use tracelab_core::compare::{Bootstrap, Report, Run};
use tracelab_core::{FirstToken, Lang, Settings};
use tracelab_web::{compare_order, is_sample, page_lang, query, replace_query};
use wasm_bindgen::JsCast;

use crate::chart::TtftChart;
use crate::page::{Compared, Loaded, Page};
use crate::table::{ContractView, DiffTable};
use crate::words::w;

/// The core's comparison: both runs judged with the base's settings (window and cost their own).
fn compare(base: &Loaded, new: &Loaded, first_token: FirstToken) -> Compared {
    let mut settings = Settings::from_header(&base.trace.header);
    settings.population.first_token = first_token;
    let (new_settings, _) = tracelab_core::compare::judge_alike(&settings, Settings::from_header(&new.trace.header));
    let runs = [
        Run::new(base.name.clone(), base.trace.clone(), settings.clone()),
        Run::new(new.name.clone(), new.trace.clone(), new_settings),
    ];
    let report = Report::build(&runs, Bootstrap::default());
    Compared {
        baselines: tracelab_core::baseline::of_comparison(&runs, &report),
        reuse: runs.iter().map(|r| tracelab_core::reuse::reuse_split(&r.trace.attempts, &r.settings)).collect(),
        report,
        base_ttft_ms: runs[0].index.ttft_sample_ms().to_vec(),
        new_ttft_ms: runs[1].index.ttft_sample_ms().to_vec(),
        settings,
    }
}

#[component]
pub fn App() -> impl IntoView {
    let lang = page_lang();
    let first_token = match query("ft").as_deref() {
        Some(code) => FirstToken::from_code(code).unwrap_or_default(),
        None => FirstToken::default(),
    };
    let page = Page {
        lang: RwSignal::new(lang),
        first_token: RwSignal::new(first_token),
        base: RwSignal::new(None),
        new: RwSignal::new(None),
        error: RwSignal::new(None),
    };
    provide_context(page);
    if let Some(b) = query("base") {
        page.load_sample(page.base, b);
    }
    if let Some(n) = query("new") {
        page.load_sample(page.new, n);
    }
    Effect::new(move |_| {
        let l = page.lang.get();
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute("lang", if l == Lang::Zh { "zh-CN" } else { "en" });
        }
        document().set_title(w(l, "title"));
    });
    // The page's state in its address: the two samples (an uploaded file cannot be), the
    // language and where TTFT ends, so a reload or a shared link shows the same comparison.
    Effect::new(move |_| {
        let mut pairs = Vec::new();
        for (key, side) in [("base", page.base), ("new", page.new)] {
            if let Some(name) = side.with(|s| s.as_ref().map(|l| l.name.clone())).filter(|n| is_sample(n)) {
                pairs.push((key, name));
            }
        }
        pairs.push(("lang", page.lang.get().code().to_string()));
        pairs.push(("ft", page.first_token.get().code().to_string()));
        replace_query(&pairs);
    });
    let compared = Memo::new(move |_| {
        let (b, n) = (page.base.get(), page.new.get());
        Some(compare(b.as_ref()?, n.as_ref()?, page.first_token.get()))
    });
    view! {
        <header class="compare-head">
            <div>
                <h1>{move || w(page.lang.get(), "title")}</h1>
                <p class="subtitle">{move || w(page.lang.get(), "subtitle")}</p>
            </div>
            <nav>
                <a href=move || format!("../?lang={}", page.lang.get().code())>{move || w(page.lang.get(), "back")}</a>
                <button class="lang-switch" data-testid="lang-switch" aria-label=move || w(page.lang.get(), "language_label")
                    on:click=move |_| page.lang.update(|l| *l = if *l == Lang::En { Lang::Zh } else { Lang::En })>
                    {move || w(page.lang.get(), "language")}
                </button>
            </nav>
        </header>
        <main class="compare-main">
            <section class="compare-pickers">
                <Picker side=page.base label="base" testid="pick-base" />
                <Picker side=page.new label="new" testid="pick-new" />
                <div class="picker">
                    <label for="first-token">{move || w(page.lang.get(), "first_token")}</label>
                    <select id="first-token" data-testid="first-token" on:change=move |e| {
                        if let Some(f) = FirstToken::from_code(&event_target_value(&e)) {
                            page.first_token.set(f);
                        }
                    }>
                        {FirstToken::ALL.into_iter().map(|f| view! {
                            <option value=f.code() selected=move || page.first_token.get() == f>{move || f.text().get(page.lang.get()).to_string()}</option>
                        }).collect_view()}
                    </select>
                </div>
            </section>
            {move || page.error.get().map(|e| view! { <p class="error" role="alert" data-testid="compare-error">{e}</p> })}
            {move || match compared.get() {
                None => view! { <p class="hint">{w(page.lang.get(), "pick_both")}</p> }.into_any(),
                Some(c) => view! {
                    <ContractView compared=c.clone() />
                    <DiffTable compared=c.clone() />
                    <TtftChart compared=c />
                }.into_any(),
            }}
        </main>
    }
}

/// One side's loader: a sample list and a file button.
#[component]
fn Picker(side: RwSignal<Option<Loaded>>, label: &'static str, testid: &'static str) -> impl IntoView {
    let page = expect_context::<Page>();
    let current = move || side.with(|s| s.as_ref().map(|l| l.name.clone()).unwrap_or_default());
    view! {
        <div class="picker" data-testid=testid>
            <h2>{move || w(page.lang.get(), label)}</h2>
            <label>
                {move || w(page.lang.get(), "sample")} " "
                <select data-testid=format!("{testid}-sample") on:change=move |e| {
                    let v = event_target_value(&e);
                    if !v.is_empty() {
                        page.load_sample(side, v);
                    }
                }>
                    <option value="" selected=move || !is_sample(&current())>{move || w(page.lang.get(), "choose")}</option>
                    {compare_order().into_iter().map(|s| view! { <option value=s selected=move || current() == s>{s}</option> }).collect_view()}
                </select>
            </label>
            <label>
                {move || w(page.lang.get(), "upload")} " "
                <input type="file" data-testid=format!("{testid}-file") accept=".jsonl,.csv,.json" on:change=move |e| {
                    let file = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()).and_then(|i| i.files()).and_then(|f| f.get(0));
                    if let Some(file) = file {
                        page.load_file(side, file);
                    }
                } />
            </label>
            <p class="loaded" data-testid=format!("{testid}-name")>{current}</p>
        </div>
    }
}
