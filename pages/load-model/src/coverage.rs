//! The coverage experiment: a learner predicts how many of 100 runs' 95 % intervals will hold
//! the truth, then runs them on the simulated server (`tracelab_core::coverage`) and sees each
//! interval drawn against the truth, taken as independent draws beside the effective sample's.
//! Every number comes from the core; this panel scales them to pixels.

use leptos::prelude::*;
use tracelab_core::coverage::{critical_rate, run, Coverage, FigureCoverage, Setup};
use tracelab_core::format::number_in_unit;
use tracelab_core::{Lang, Unit as FigureUnit};

use crate::words::w;

/// The threshold the joint rate is judged with, and the truth's tail share at the critical load.
const THRESHOLD_S: f64 = 0.5;
const LATE: f64 = 0.05;

#[component]
pub fn CoveragePanel(lang: RwSignal<Lang>) -> impl IntoView {
    let slots = RwSignal::new(4u32);
    let rate = RwSignal::new(critical_rate(4, THRESHOLD_S, LATE));
    let runs = RwSignal::new(100u32);
    let requests = RwSignal::new(2_000u32);
    let prediction = RwSignal::new(String::new());
    let figure_p95 = RwSignal::new(false);
    let result: RwSignal<Option<Result<Coverage, String>>> = RwSignal::new(None);
    let predicted =
        move || prediction.with(|p| p.trim().parse::<u32>().ok().filter(|n| *n <= runs.get()));
    let start = move |_| {
        let setup = Setup {
            slots: slots.get(),
            rate_per_s: rate.get(),
            threshold_s: THRESHOLD_S,
            runs: runs.get(),
            requests: requests.get(),
            seed: 1,
        };
        result.set(Some(run(setup).map_err(|e| e.to_string())));
    };
    let t = move |key: &'static str| w(lang.get(), key);
    view! {
        <section class="lm-coverage" data-testid="coverage" aria-labelledby="coverage-title">
            <h2 id="coverage-title">{move || t("cov_title")}</h2>
            <p class="lm-intro">{move || t("cov_intro")}</p>
            <form class="lm-cov-params" on:submit=|e| e.prevent_default()>
                <div class="lm-cov-field"><label for="cov-slots">{move || t("slots")}</label>
                <select id="cov-slots" data-testid="cov-slots" on:change=move |e| {
                    let c: u32 = event_target_value(&e).parse().unwrap_or(4);
                    slots.set(c);
                    rate.set(critical_rate(c, THRESHOLD_S, LATE));
                    result.set(None);
                }>
                    {[1u32, 4, 16].map(|c| view! { <option value=c.to_string() selected=move || slots.get() == c>{c}</option> })}
                </select></div>
                <div class="lm-cov-field"><label for="cov-rate">{move || t("cov_rate")}</label>
                <input id="cov-rate" data-testid="cov-rate" type="number" step="0.05" min="0.01"
                    prop:value=move || format!("{:.3}", rate.get())
                    on:change=move |e| {
                        if let Ok(v) = event_target_value(&e).trim().parse::<f64>() {
                            rate.set(v);
                            result.set(None);
                        }
                    } /></div>
                <div class="lm-cov-field"><label for="cov-runs">{move || t("cov_runs")}</label>
                <input id="cov-runs" data-testid="cov-runs" type="number" min="10" max="1000" step="10" prop:value=move || runs.get().to_string()
                    on:change=move |e| { if let Ok(v) = event_target_value(&e).trim().parse::<u32>() { runs.set(v); result.set(None); } } /></div>
                <div class="lm-cov-field"><label for="cov-requests">{move || t("requests")}</label>
                <input id="cov-requests" data-testid="cov-requests" type="number" min="200" max="20000" step="500" prop:value=move || requests.get().to_string()
                    on:change=move |e| { if let Ok(v) = event_target_value(&e).trim().parse::<u32>() { requests.set(v); result.set(None); } } /></div>
                <p class="lm-cov-wide">{move || {
                    let truth = Setup { slots: slots.get(), rate_per_s: rate.get(), threshold_s: THRESHOLD_S, runs: 1, requests: 200, seed: 1 }.truth();
                    match truth {
                        Some(tr) => {
                            let l = lang.get();
                            let share = |v: f64| number_in_unit(v, &FigureUnit::Ratio, l);
                            let semi = if l == Lang::Zh { "；" } else { "; " };
                            format!("{} {}{semi}{} {}{semi}P95 TTFT {}", t("cov_busy"), share(tr.busy), t("cov_truth_joint"), share(tr.joint_rate), number_in_unit(tr.ttft_p95_s, &FigureUnit::Seconds, l))
                        }
                        None => t("cov_unstable").to_string(),
                    }
                }}</p>
                <label for="cov-predict" class="lm-cov-wide">{move || t("cov_predict")}</label>
                <input id="cov-predict" data-testid="cov-predict" type="number" min="0" prop:max=move || runs.get().to_string()
                    prop:value=move || prediction.get() on:input=move |e| prediction.set(event_target_value(&e)) />
                <button type="button" data-testid="cov-run" prop:disabled=move || predicted().is_none() on:click=start>{move || t("cov_run")}</button>
                {move || predicted().is_none().then(|| view! { <p class="lm-note lm-cov-wide" data-testid="cov-predict-first">{t("cov_predict_first")}</p> })}
            </form>
            {move || result.get().map(|r| match r {
                Err(e) => view! { <p class="field-error" role="alert">{format!("{} {e}", t("error"))}</p> }.into_any(),
                Ok(c) => view! {
                    <fieldset class="lm-cov-figure">
                        <legend>{t("cov_figure")}</legend>
                        <label><input type="radio" name="cov-figure" data-testid="cov-figure-joint" prop:checked=move || !figure_p95.get() on:change=move |_| figure_p95.set(false) />{t("cov_joint")}</label>
                        <label><input type="radio" name="cov-figure" data-testid="cov-figure-p95" prop:checked=move || figure_p95.get() on:change=move |_| figure_p95.set(true) />"P95 TTFT"</label>
                    </fieldset>
                    {move || {
                        let l = lang.get();
                        let (fig, unit) = if figure_p95.get() { (&c.ttft_p95, Unit::Seconds) } else { (&c.joint_rate, Unit::Percent) };
                        outcome(l, fig, unit, c.setup.runs, predicted())
                    }}
                }.into_any(),
            })}
        </section>
    }
}

#[derive(Clone, Copy)]
enum Unit {
    Percent,
    Seconds,
}

impl Unit {
    fn figure(self) -> FigureUnit {
        match self {
            Unit::Percent => FigureUnit::Ratio,
            Unit::Seconds => FigureUnit::Seconds,
        }
    }
}

fn outcome(
    lang: Lang,
    fig: &FigureCoverage,
    unit: Unit,
    runs: u32,
    predicted: Option<u32>,
) -> impl IntoView {
    let zh = lang == Lang::Zh;
    let shown = move |v: f64| number_in_unit(v, &unit.figure(), lang);
    // Chinese takes full-width punctuation.
    let (colon, stop, semi) = if zh {
        ("：", "。", "；")
    } else {
        (": ", ". ", "; ")
    };
    let line = |key: &'static str, covered: usize, share: f64| {
        let share = number_in_unit(share, &FigureUnit::Ratio, lang);
        if zh {
            format!("{}{colon}{covered} / {runs}（{share}）", w(lang, key))
        } else {
            format!("{}{colon}{covered} / {runs} ({share})", w(lang, key))
        }
    };
    let eff = tracelab_core::format::integer(fig.mean_effective_n().round() as u64);
    view! {
        <p data-testid="cov-summary">
            {format!("{}{}{stop}", w(lang, "cov_truth"), shown(fig.truth))}
            {predicted.map(|p| format!("{}{colon}{p} / {runs}{stop}", w(lang, "cov_you_predicted")))}
            <span data-testid="cov-independent">{line("cov_independent", fig.independent_covered, fig.independent_share())}</span>{semi}
            <span data-testid="cov-honest">{line("cov_honest", fig.honest_covered, fig.honest_share())}</span>{stop}
            {format!("{}{eff}{}", w(lang, "cov_effective"), if zh { "。" } else { "." })}
        </p>
        <div class="lm-pair">
            {forest(lang, "cov_independent", fig, |r| r.independent, fig.independent_covered, unit)}
            {forest(lang, "cov_honest", fig, |r| r.honest, fig.honest_covered, unit)}
        </div>
    }
}

/// One line per run, its interval against the truth's vertical line: grey holds it, red misses.
fn forest(
    lang: Lang,
    key: &'static str,
    fig: &FigureCoverage,
    pick: fn(&tracelab_core::coverage::RunIntervals) -> tracelab_core::compare::Bounds,
    held: usize,
    unit: Unit,
) -> impl IntoView {
    let (width, pad, row) = (320.0, 16.0, 3.0);
    let height = pad * 2.0 + row * fig.runs.len() as f64;
    let all: Vec<f64> = fig
        .runs
        .iter()
        .flat_map(|r| [pick(r).lo, pick(r).hi])
        .flatten()
        .chain([fig.truth])
        .collect();
    let (lo, hi) = all
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    let span = (hi - lo).max(1e-9);
    let x = move |v: f64| pad + (v - lo) / span * (width - 2.0 * pad);
    let lines: Vec<_> = fig
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let b = pick(r);
            let held = b.contains(fig.truth);
            let (x0, x1) = (x(b.lo.unwrap_or(lo)), x(b.hi.unwrap_or(hi)));
            let y = pad + i as f64 * row + row / 2.0;
            view! { <line class=if held { "cov held" } else { "cov missed" } x1=x0 x2=x1.max(x0 + 0.5) y1=y y2=y /> }
        })
        .collect();
    let tx = x(fig.truth);
    let label = move |v: f64| number_in_unit(v, &unit.figure(), lang);
    let title = format!(
        "{}{}{held} / {}",
        w(lang, key),
        if lang == Lang::Zh { "：" } else { ": " },
        fig.runs.len()
    );
    view! {
        <figure class="lm-forest" data-testid=format!("forest-{key}")>
            <figcaption>{title.clone()}</figcaption>
            <svg viewBox=format!("0 0 {width} {height}") role="img" aria-label=title>
                {lines}
                <line class="truth" x1=tx x2=tx y1=pad - 8.0 y2=height - pad + 4.0 />
                <text class="tick" x=tx + 3.0 y=pad - 6.0>{format!("{} {}", w(lang, "cov_truth_short"), label(fig.truth))}</text>
                <text class="tick" x=pad y=height - 2.0>{label(lo)}</text>
                <text class="tick end" x=width - pad y=height - 2.0>{label(hi)}</text>
            </svg>
        </figure>
    }
}
