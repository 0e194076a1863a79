//! The page: the loaders, the judging controls (TTFT threshold, ≤ or <, the target), the core's
//! capacity answer over the loaded sweep, every step and the chart. `?sweep=…&thr=…&cmp=…&target=…
//! &lang=…` (and the simulator's `c`, `mean`, `rates`, `n`, `seed`) keep the state in the address.

use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_core::capacity::{Capacity, SimulatedSweep, Step, Target};
use tracelab_core::{Comparison, Lang, Settings, Text};
use tracelab_web::{page_lang, query, replace_query};
use wasm_bindgen::JsCast;

use crate::chart::CapacityChart;
use crate::load::{self, SAMPLE_SWEEPS};
use crate::page::Page;
use crate::steps::{Answer, StepList};
use crate::words::w;

/// The target in the core's grammar (`joint_rate>=0.9`) from the measure and value.
fn target_spec(measure: &str, value: &str) -> String {
    let op = if measure == "ttft_p95" { "<=" } else { ">=" };
    format!("{measure}{op}{value}")
}

/// The core's answer over the loaded sweep under the page's settings; the core's words when a
/// setting is refused.
fn capacity(page: Page) -> Option<Result<Capacity, Text>> {
    let sweep = page.sweep.get()?;
    let first = sweep.traces.first()?;
    let target = match Target::parse(&target_spec(&page.measure.get(), &page.value.get())) {
        Ok(t) => t,
        Err(e) => return Some(Err(e)),
    };
    let thr = page.threshold.get();
    let Some(threshold) = thr
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v > 0.0)
    else {
        return Some(Err(Text::new(
            format!("TTFT threshold `{thr}` must be a number of seconds above 0"),
            format!("TTFT 门槛 `{thr}` 必须是大于 0 的秒数"),
        )));
    };
    let mut settings = Settings::from_header(&first.header);
    settings.ttft_threshold_s = threshold;
    settings.comparison = page.comparison.get();
    // Each step's own window and cost.
    settings.window_s = None;
    settings.window_cost = None;
    let steps: Vec<Step> = sweep
        .file
        .steps
        .iter()
        .zip(&sweep.traces)
        .map(|(s, t)| Step {
            load: s.load,
            name: s.file.clone(),
            trace: t,
            interrupted: s.interrupted,
        })
        .collect();
    Some(Capacity::compute(
        sweep.file.kind,
        &steps,
        &settings,
        target,
    ))
}

impl Page {
    fn simulated(self) -> SimulatedSweep {
        let [c, mean, rates, n, seed] = self.sim.map(|s| s.get_untracked());
        SimulatedSweep {
            slots: c.trim().parse().unwrap_or(0),
            mean_service_s: mean.trim().parse().unwrap_or(f64::NAN),
            rates: rates
                .split(',')
                .map(|r| r.trim().parse().unwrap_or(f64::NAN))
                .collect(),
            requests_per_step: n.trim().parse().unwrap_or(0),
            seed: seed.trim().parse().unwrap_or(0),
        }
    }

    fn run_simulator(self) {
        match load::simulated(&self.simulated(), self.lang.get_untracked()) {
            Ok(s) => {
                self.error.set(None);
                self.sweep.set(Some(s));
            }
            Err(e) => self.error.set(Some(e)),
        }
    }

    fn load_sample(self, name: String) {
        spawn_local(async move {
            match load::sample(&name).await {
                Ok(s) => {
                    self.error.set(None);
                    self.sweep.set(Some(s));
                }
                Err(e) => self.error.set(Some(e)),
            }
        });
    }
}

#[component]
pub fn App() -> impl IntoView {
    let q = |k: &str, d: &str| query(k).unwrap_or_else(|| d.to_string());
    let target = query("target").and_then(|t| Target::parse(&t).ok());
    let page = Page {
        lang: RwSignal::new(page_lang()),
        sweep: RwSignal::new(None),
        threshold: RwSignal::new(q("thr", "1")),
        comparison: RwSignal::new(
            query("cmp")
                .and_then(|c| Comparison::from_code(&c))
                .unwrap_or(Comparison::Le),
        ),
        measure: RwSignal::new(
            target
                .map(|t| t.measure.code().to_string())
                .unwrap_or_else(|| "joint_rate".into()),
        ),
        value: RwSignal::new(
            target
                .map(|t| tracelab_core::format::trim_num(t.value))
                .unwrap_or_else(|| "0.9".into()),
        ),
        error: RwSignal::new(None),
        sim: [
            q("c", "4"),
            q("mean", "1"),
            q("rates", "1,2,2.5,3,3.5"),
            q("n", "200"),
            q("seed", "7"),
        ]
        .map(RwSignal::new),
    };
    provide_context(page);
    match query("sweep").as_deref() {
        Some("simulator") => page.run_simulator(),
        Some(name) => page.load_sample(name.to_string()),
        None => {}
    }
    Effect::new(move |_| {
        let l = page.lang.get();
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute("lang", if l == Lang::Zh { "zh-CN" } else { "en" });
        }
        document().set_title(w(l, "title"));
    });
    Effect::new(move |_| {
        let mut pairs = Vec::new();
        // An uploaded folder cannot be in the address; a sample or the simulator's settings can.
        match page.sweep.with(|s| s.as_ref().map(|s| s.source.clone())) {
            Some(s) if s == "simulator" => {
                pairs.push(("sweep", s));
                for (k, v) in ["c", "mean", "rates", "n", "seed"]
                    .into_iter()
                    .zip(page.sim)
                {
                    pairs.push((k, v.get()));
                }
            }
            Some(s) if SAMPLE_SWEEPS.iter().any(|x| x.0 == s) => pairs.push(("sweep", s)),
            _ => {}
        }
        pairs.push(("thr", page.threshold.get()));
        pairs.push(("cmp", page.comparison.get().code().to_string()));
        pairs.push((
            "target",
            target_spec(&page.measure.get(), &page.value.get()),
        ));
        pairs.push(("lang", page.lang.get().code().to_string()));
        replace_query(&pairs);
    });
    let result = Memo::new(move |_| capacity(page));
    let current = move || {
        page.sweep
            .with(|s| s.as_ref().map(|s| s.source.clone()).unwrap_or_default())
    };
    let l = move || page.lang.get();
    view! {
        <header class="cap-head">
            <div>
                <h1>{move || w(l(), "title")}</h1>
                <p class="subtitle">{move || w(l(), "subtitle")}</p>
            </div>
            <nav>
                <a href=move || format!("../?lang={}", l().code())>{move || w(l(), "back")}</a>
                <button class="lang-switch" data-testid="lang-switch" title=move || w(l(), "language_label")
                    on:click=move |_| page.lang.update(|x| *x = if *x == Lang::En { Lang::Zh } else { Lang::En })>
                    {move || w(l(), "language")}
                </button>
            </nav>
        </header>
        <main class="cap-main">
            <section class="cap-controls">
                <div class="box">
                    <h2>{move || w(l(), "load")}</h2>
                    <label>{move || w(l(), "sample")} " "
                        <select class="sample" data-testid="sample" on:change=move |e| {
                            let v = event_target_value(&e);
                            if !v.is_empty() { page.load_sample(v); }
                        }>
                            <option value="" selected=move || !SAMPLE_SWEEPS.iter().any(|s| s.0 == current())>{move || w(l(), "choose")}</option>
                            {SAMPLE_SWEEPS.into_iter().map(|(name, label)| view! {
                                <option value=name selected=move || current() == name>{move || w(l(), label)}</option>
                            }).collect_view()}
                        </select>
                    </label>
                    <label>{move || w(l(), "upload")} " "
                        <input type="file" multiple=true accept=".json,.jsonl" data-testid="files" on:change=move |e| {
                            let files = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()).and_then(|i| i.files());
                            if let Some(files) = files {
                                let lang = page.lang.get_untracked();
                                spawn_local(async move {
                                    match load::files(files, lang).await {
                                        Ok(s) => { page.error.set(None); page.sweep.set(Some(s)); }
                                        Err(e) => page.error.set(Some(e)),
                                    }
                                });
                            }
                        } />
                    </label>
                    <details class="sim">
                        <summary>{move || w(l(), "simulate")}</summary>
                        <div class="sim-grid">
                            {["slots", "mean", "rates", "requests", "seed"].into_iter().zip(page.sim).map(|(key, sig)| view! {
                                <label>{move || w(l(), key)}
                                    <input type="text" data-testid=format!("sim-{key}") prop:value=move || sig.get() on:change=move |e| sig.set(event_target_value(&e)) />
                                </label>
                            }).collect_view()}
                        </div>
                        <button data-testid="sim-run" on:click=move |_| page.run_simulator()>{move || w(l(), "run")}</button>
                    </details>
                    <p class="loaded" data-testid="loaded">{move || {
                        let c = current();
                        (!c.is_empty()).then(|| format!("{}: {c}", w(l(), "loaded")))
                    }}</p>
                </div>
                <div class="box">
                    <h2>{move || w(l(), "judge")}</h2>
                    <label>{move || w(l(), "threshold")} " "
                        <input type="number" step="0.1" min="0" data-testid="threshold" prop:value=move || page.threshold.get() on:change=move |e| page.threshold.set(event_target_value(&e)) />
                    </label>
                    <label>{move || w(l(), "comparison")} " "
                        <select data-testid="comparison" on:change=move |e| if let Some(c) = Comparison::from_code(&event_target_value(&e)) { page.comparison.set(c) }>
                            {[Comparison::Le, Comparison::Lt].into_iter().map(|c| view! {
                                <option value=c.code() selected=move || page.comparison.get() == c>{move || format!("TTFT {} {}", c.symbol(), w(l(), "threshold_word"))}</option>
                            }).collect_view()}
                        </select>
                    </label>
                    <label>{move || w(l(), "target")} " "
                        <select data-testid="measure" on:change=move |e| page.measure.set(event_target_value(&e))>
                            {[("joint_rate", "measure_joint"), ("ttft_p95", "measure_ttft"), ("goodput", "measure_goodput")].into_iter().map(|(code, key)| view! {
                                <option value=code selected=move || page.measure.get() == code>{move || w(l(), key)}</option>
                            }).collect_view()}
                        </select>
                        " "
                        <input type="number" step="0.05" min="0" class="target-value" data-testid="target-value" prop:value=move || page.value.get() on:change=move |e| page.value.set(event_target_value(&e)) />
                    </label>
                </div>
            </section>
            {move || page.error.get().map(|e| view! { <p class="error" role="alert" data-testid="cap-error">{e}</p> })}
            {move || match result.get() {
                None => view! { <p class="hint">{w(l(), "none")}</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error" role="alert" data-testid="cap-error">{e.get(l()).to_string()}</p> }.into_any(),
                Some(Ok(cap)) => {
                    let stopped = page.sweep.with(|s| s.as_ref().and_then(|s| s.file.stopped.clone()));
                    view! {
                        <Answer cap=cap.clone() stopped=stopped />
                        <CapacityChart cap=cap.clone() />
                        <StepList cap=cap />
                    }.into_any()
                }
            }}
        </main>
    }
}
