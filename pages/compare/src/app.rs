//! The page: two loaders (a sample or a file each), how both runs are judged, the core's
//! comparison of what they hold, the table and the chart. `?base=…&new=…&lang=…` opens it on two
//! samples (the lab's "Compare with…"); every choice of how they are judged is in the address too
//! (the core's permalink keys: `t`, `cmp`, `pm`, `p`, `fd`, `mt`, `wu`, `ft`, `qr`).

use leptos::prelude::*;
use tracelab_core::compare::{Bootstrap, Report, Run};
use tracelab_core::format::trim_num;
use tracelab_core::{Comparison, FirstToken, Lang, LatencyOrigin, PercentileMethod, Settings};
use tracelab_web::{compare_order, is_sample, page_lang, query, replace_query};
use wasm_bindgen::JsCast;

use crate::chart::TtftChart;
use crate::page::{Compared, Loaded, Page, CHOICE_KEYS};
use crate::table::{ContractView, DiffTable};
use crate::words::w;

/// The core's comparison: both runs judged with `settings` (the base's with the learner's
/// choices; window and cost stay each run's own).
fn compare(base: &Loaded, new: &Loaded, settings: Settings) -> Compared {
    let (new_settings, _) =
        tracelab_core::compare::judge_alike(&settings, Settings::from_header(&new.trace.header));
    let runs = [
        Run::new(base.name.clone(), base.trace.clone(), settings.clone()),
        Run::new(new.name.clone(), new.trace.clone(), new_settings),
    ];
    let report = Report::build(&runs, Bootstrap::default());
    Compared {
        baselines: tracelab_core::baseline::of_comparison(&runs, &report),
        reuse: runs
            .iter()
            .map(|r| tracelab_core::reuse::reuse_split(&r.trace.attempts, &r.settings))
            .collect(),
        report,
        base_ttft_ms: runs[0].index.ttft_sample_ms().to_vec(),
        new_ttft_ms: runs[1].index.ttft_sample_ms().to_vec(),
        settings,
    }
}

#[component]
pub fn App() -> impl IntoView {
    let lang = page_lang();
    // The link's choices, each read by the core: one it refuses is named, never used silently.
    let mut choices: Vec<(String, String)> = CHOICE_KEYS
        .iter()
        .filter_map(|k| query(k).map(|v| (k.to_string(), v)))
        .collect();
    let refused =
        Settings::default().apply_pairs(choices.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let ignored: Vec<String> = choices
        .iter()
        .filter(|(k, _)| refused.contains(k))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    choices.retain(|(k, _)| !refused.contains(k));
    let page = Page {
        lang: RwSignal::new(lang),
        choices: RwSignal::new(choices),
        typed_error: RwSignal::new(None),
        base: RwSignal::new(None),
        new: RwSignal::new(None),
        error: RwSignal::new(None),
        link_ignored: RwSignal::new((!ignored.is_empty()).then(|| ignored.join(", "))),
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
    // language and every choice of how they are judged, so a reload or a shared link shows the
    // same comparison. Where TTFT ends is always written (the choice the page opens on).
    Effect::new(move |_| {
        let mut pairs: Vec<(&str, String)> = Vec::new();
        for (key, side) in [("base", page.base), ("new", page.new)] {
            if let Some(name) = side
                .with(|s| s.as_ref().map(|l| l.name.clone()))
                .filter(|n| is_sample(n))
            {
                pairs.push((key, name));
            }
        }
        pairs.push(("lang", page.lang.get().code().to_string()));
        page.choices.with(|c| {
            for key in CHOICE_KEYS {
                match c.iter().find(|(k, _)| k == key) {
                    Some((_, v)) => pairs.push((key, v.clone())),
                    None if key == "ft" => {
                        pairs.push(("ft", FirstToken::default().code().to_string()))
                    }
                    None => {}
                }
            }
        });
        replace_query(&pairs);
    });
    let compared = Memo::new(move |_| {
        let (b, n) = (page.base.get(), page.new.get());
        let (b, n) = (b.as_ref()?, n.as_ref()?);
        Some(compare(b, n, page.judged(&b.trace)))
    });
    view! {
        <header class="compare-head">
            <div>
                <h1>{move || w(page.lang.get(), "title")}</h1>
                <p class="subtitle">{move || w(page.lang.get(), "subtitle")}</p>
            </div>
            <nav>
                <a href=move || format!("../?lang={}", page.lang.get().code())>{move || w(page.lang.get(), "back")}</a>
                <button class="lang-switch" data-testid="lang-switch" title=move || w(page.lang.get(), "language_label")
                    on:click=move |_| page.lang.update(|l| *l = if *l == Lang::En { Lang::Zh } else { Lang::En })>
                    {move || w(page.lang.get(), "language")}
                </button>
            </nav>
        </header>
        <main class="compare-main">
            <section class="compare-pickers">
                <Picker side=page.base label="base" testid="pick-base" />
                <Picker side=page.new label="new" testid="pick-new" />
                <JudgeChoices />
            </section>
            {move || page.link_ignored.get().map(|i| view! { <p class="error" role="alert" data-testid="link-ignored">{format!("{} {i}", w(page.lang.get(), "link_ignored"))}</p> })}
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
fn Picker(
    side: RwSignal<Option<Loaded>>,
    label: &'static str,
    testid: &'static str,
) -> impl IntoView {
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

/// How both runs are judged: the base's own settings, each changeable here, each kept in the
/// address. The threshold is read by the core (`Settings::with_typed`), as the lab reads it.
#[component]
fn JudgeChoices() -> impl IntoView {
    let page = expect_context::<Page>();
    let l = move || page.lang.get();
    // What the boxes show: the settings in force (the base's with the choices), or the choices
    // alone before a base is loaded.
    let settings = Memo::new(move |_| {
        page.base
            .with(|b| b.as_ref().map(|b| page.judged(&b.trace)))
            .unwrap_or_else(|| {
                let mut s = Settings::default();
                page.choices
                    .with(|c| s.apply_pairs(c.iter().map(|(k, v)| (k.as_str(), v.as_str()))));
                s
            })
    });
    let typed = move |raw: String| match settings.get_untracked().with_typed("t", &raw) {
        Ok(Some(s)) => {
            page.typed_error.set(None);
            page.choose("t", Some(trim_num(s.ttft_threshold_s)));
        }
        Ok(None) => {
            page.typed_error.set(None);
            page.choose("t", None);
        }
        Err(e) => page.typed_error.set(Some(e.message)),
    };
    view! {
        <div class="picker judge-choices" data-testid="judge-choices">
            <h2>{move || w(l(), "judged_with")}</h2>
            <label>
                {move || w(l(), "threshold_box")} " "
                <input type="text" inputmode="decimal" size="6" data-testid="threshold" prop:value=move || trim_num(settings.get().ttft_threshold_s)
                    on:change=move |e| typed(event_target_value(&e)) />
                " s"
            </label>
            {move || page.typed_error.get().map(|e| view! { <p class="error" role="alert" data-testid="threshold-error">{e.get(l()).to_string()}</p> })}
            <label>
                {move || w(l(), "comparison")} " "
                <select data-testid="comparison" on:change=move |e| page.choose("cmp", Comparison::from_code(&event_target_value(&e)).map(|c| c.code().to_string()))>
                    {[Comparison::Le, Comparison::Lt].into_iter().map(|c| view! {
                        <option value=c.code() selected=move || settings.get().comparison == c>{move || format!("TTFT {} {}", c.symbol(), trim_num(settings.get().ttft_threshold_s))}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>
                {move || w(l(), "percentile_method")} " "
                <select data-testid="percentile-method" on:change=move |e| page.choose("pm", PercentileMethod::from_code(&event_target_value(&e)).map(|m| m.code().to_string()))>
                    {PercentileMethod::ALL.into_iter().map(|m| view! {
                        <option value=m.code() selected=move || settings.get().percentile == m>{move || m.name().get(l()).to_string()}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>
                {move || w(l(), "first_token")} " "
                <select id="first-token" data-testid="first-token" on:change=move |e| page.choose("ft", FirstToken::from_code(&event_target_value(&e)).map(|f| f.code().to_string()))>
                    {FirstToken::ALL.into_iter().map(|f| view! {
                        <option value=f.code() selected=move || settings.get().population.first_token == f>{move || f.text().get(l()).to_string()}</option>
                    }).collect_view()}
                </select>
            </label>
            // Where latency is measured from: the send, or the schedule's intended start (an open
            // loop whose client fell behind counts its lag only from the schedule).
            <label>
                {move || w(l(), "latency_from")} " "
                <select id="latency-from" data-testid="latency-from" on:change=move |e| page.choose("lf", LatencyOrigin::from_code(&event_target_value(&e)).map(|o| o.code().to_string()))>
                    {LatencyOrigin::ALL.into_iter().map(|o| view! {
                        <option value=o.code() selected=move || settings.get().population.latency_from == o>{move || o.text().get(l()).to_string()}</option>
                    }).collect_view()}
                </select>
            </label>
            // A wrong choice a link carries (failures divided by successes, …) is named with the
            // false conclusion it leads to, as the lab names it.
            <ul class="mistakes" data-testid="mistakes">
                {move || settings.get().mistakes().into_iter().map(|m| view! {
                    <li>{format!("⚠ {} — {}", m.label.get(l()), m.false_conclusion.get(l()))}</li>
                }).collect_view()}
            </ul>
        </div>
    }
}
