//! The page: two loaders (a sample or a file each), the core's comparison of what they hold, the
//! table and the chart. `?base=…&new=…&lang=…` opens it on two samples (the lab's "Compare with…").

use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_core::compare::{Bootstrap, Report, Run};
use tracelab_core::{parse::parse_trace, Lang, Settings, Trace};
use tracelab_peers::import;
use wasm_bindgen::JsCast;

use crate::chart::TtftChart;
use crate::table::{ContractView, DiffTable};
use crate::words::w;

/// The samples a learner can compare (the first three are the lesson's compare set).
pub const SAMPLES: [&str; 6] = [
    "baseline-a.jsonl",
    "baseline-rerun.jsonl",
    "baseline-slower.jsonl",
    "ten-requests.jsonl",
    "ten-requests.csv",
    "streaming-example.jsonl",
];

/// One loaded trace and where it came from.
#[derive(Clone, PartialEq)]
pub struct Loaded {
    pub name: String,
    pub trace: Trace,
}

/// Everything the views show, computed once per pair of traces by the core.
#[derive(Clone, PartialEq)]
pub struct Compared {
    pub report: Report,
    pub base_ttft_ms: Vec<f64>,
    pub new_ttft_ms: Vec<f64>,
    pub settings: Settings,
}

#[derive(Clone, Copy)]
pub struct Page {
    pub lang: RwSignal<Lang>,
    pub base: RwSignal<Option<Loaded>>,
    pub new: RwSignal<Option<Loaded>>,
    pub error: RwSignal<Option<String>>,
}

fn query(key: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search).ok()?.get(key).filter(|v| !v.is_empty())
}

async fn fetch_sample(name: &str) -> Result<Trace, String> {
    if !SAMPLES.contains(&name) {
        return Err(format!("{name}: not one of the lab's samples"));
    }
    let path = format!("../samples/{name}");
    let response = gloo_net::http::Request::get(&path).send().await.map_err(|e| format!("{path}: {e}"))?;
    if !response.ok() {
        return Err(format!("{path}: HTTP {}", response.status()));
    }
    let text = response.text().await.map_err(|e| format!("{path}: {e}"))?;
    parse_trace(name, &text).map_err(|e| e.to_string())
}

async fn read_file(file: web_sys::File) -> Result<Loaded, String> {
    let name = file.name();
    let text = wasm_bindgen_futures::JsFuture::from(file.text())
        .await
        .map_err(|e| format!("{name}: the browser could not read the file ({e:?})"))?;
    let text = text.as_string().ok_or_else(|| format!("{name}: not text"))?;
    let imported = import::load_any(&name, &text).map_err(|e| e.to_string())?;
    let first = imported.traces.into_iter().next().ok_or_else(|| format!("{name}: no trace in this file"))?;
    Ok(Loaded { name, trace: first.trace })
}

impl Page {
    fn load_sample(self, slot: RwSignal<Option<Loaded>>, name: String) {
        spawn_local(async move {
            match fetch_sample(&name).await {
                Ok(trace) => {
                    self.error.set(None);
                    slot.set(Some(Loaded { name, trace }));
                }
                // A bad load leaves what was loaded before.
                Err(e) => self.error.set(Some(e)),
            }
        });
    }

    fn load_file(self, slot: RwSignal<Option<Loaded>>, file: web_sys::File) {
        spawn_local(async move {
            match read_file(file).await {
                Ok(loaded) => {
                    self.error.set(None);
                    slot.set(Some(loaded));
                }
                Err(e) => self.error.set(Some(e)),
            }
        });
    }
}

/// The core's comparison: both runs judged with the base's settings (window and cost their own).
fn compare(base: &Loaded, new: &Loaded) -> Compared {
    let settings = Settings::from_header(&base.trace.header);
    let (new_settings, _) = tracelab_core::compare::judge_alike(&settings, Settings::from_header(&new.trace.header));
    let runs = [
        Run::new(base.name.clone(), base.trace.clone(), settings.clone()),
        Run::new(new.name.clone(), new.trace.clone(), new_settings),
    ];
    Compared {
        report: Report::build(&runs, Bootstrap::default()),
        base_ttft_ms: runs[0].index.ttft_sample_ms().to_vec(),
        new_ttft_ms: runs[1].index.ttft_sample_ms().to_vec(),
        settings,
    }
}

#[component]
pub fn App() -> impl IntoView {
    let lang = query("lang")
        .map(|l| Lang::from_tag(&l))
        .or_else(|| web_sys::window().and_then(|w| w.navigator().language()).map(|l| Lang::from_tag(&l)))
        .unwrap_or_default();
    let page = Page { lang: RwSignal::new(lang), base: RwSignal::new(None), new: RwSignal::new(None), error: RwSignal::new(None) };
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
    let compared = Memo::new(move |_| {
        let (b, n) = (page.base.get(), page.new.get());
        Some(compare(b.as_ref()?, n.as_ref()?))
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
                    <option value="" selected=move || !SAMPLES.contains(&current().as_str())>{move || w(page.lang.get(), "choose")}</option>
                    {SAMPLES.iter().map(|s| view! { <option value=*s selected=move || current() == *s>{*s}</option> }).collect_view()}
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
