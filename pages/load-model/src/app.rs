//! The panel: parameters on the left, then the two runs' figures, their latency distributions on
//! one scale, and requests in flight over time with the stall shaded. The comparison is one memo
//! over the parameters; the view only scales the core's numbers to pixels.

use leptos::prelude::*;
use tracelab_core::simulate::{
    compare_loads, histogram, Arrival, Load, LoadComparison, LoadSummary, Params, Service,
    SimulateError, Stall, DEFAULT_FIRST_TOKEN_SHARE, SUMMARY_METHOD,
};
use tracelab_core::Lang;
use tracelab_web::{page_lang, query};

use crate::words::w;

/// A number box bound to a signal; a value is taken only when it parses and is at least `min`.
#[component]
fn Field(
    id: &'static str,
    label: Signal<&'static str>,
    value: RwSignal<f64>,
    min: f64,
    #[prop(default = "1")] step: &'static str,
) -> impl IntoView {
    let invalid = RwSignal::new(false);
    let accept = move |raw: String| match raw.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= min => {
            invalid.set(false);
            value.set(v)
        }
        _ => invalid.set(true),
    };
    view! {
        <label for=id>{label}</label>
        <input id=id data-testid=id type="number" step=step min=min.to_string() prop:value=move || value.get().to_string()
            aria-invalid=move || invalid.get().to_string()
            on:input=move |e| accept(event_target_value(&e)) />
    }
}

fn secs(v: Option<f64>) -> String {
    v.map(|s| format!("{s:.3} s")).unwrap_or_else(|| "—".into())
}

#[component]
pub fn App() -> impl IntoView {
    let lang = RwSignal::new(page_lang());
    let t = move |key: &'static str| Signal::derive(move || w(lang.get(), key));
    // The lesson's stall demonstration, as in public/samples/sim-stall-*.jsonl.
    let slots = RwSignal::new(8.0);
    let mean_s = RwSignal::new(1.0);
    let clients = RwSignal::new(16.0);
    let think_s = RwSignal::new(4.0);
    let poisson = RwSignal::new(true);
    let burstiness = RwSignal::new(1.0);
    let requests = RwSignal::new(600.0);
    let seed = RwSignal::new(11.0);
    let stall_on = RwSignal::new(query("stall").as_deref() != Some("0"));
    let stall_at = RwSignal::new(60.0);
    let stall_for = RwSignal::new(20.0_f64);

    let comparison: Memo<Result<LoadComparison, SimulateError>> = Memo::new(move |_| {
        let params = Params {
            slots: slots.get() as u32,
            service: Service::Exponential {
                mean_s: mean_s.get(),
            },
            first_token_share: DEFAULT_FIRST_TOKEN_SHARE,
            load: Load::Closed {
                clients: clients.get() as u32,
                think_s: think_s.get(),
            },
            requests: (requests.get() as u32).min(20_000),
            seed: seed.get() as u64,
            stall: stall_on.get().then(|| Stall {
                at_s: stall_at.get(),
                for_s: stall_for.get().max(0.001),
            }),
        };
        let arrival = if poisson.get() {
            Arrival::Poisson
        } else {
            Arrival::Constant
        };
        compare_loads(&params, arrival, burstiness.get())
    });
    Effect::new(move |_| {
        let l = lang.get();
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute("lang", if l == Lang::Zh { "zh-CN" } else { "en" });
        }
        document().set_title(w(l, "title"));
    });

    let cli = move || {
        let stall = if stall_on.get() {
            format!(" --stall {}:{}", stall_at.get(), stall_for.get())
        } else {
            String::new()
        };
        let common = format!(
            "--slots {} --service exponential:{} --requests {} --seed {}{stall}",
            slots.get(),
            mean_s.get(),
            requests.get(),
            seed.get()
        );
        let rate = comparison.with(|c| {
            c.as_ref()
                .map(|c| format!("{:.3}", c.rate_per_s))
                .unwrap_or_default()
        });
        let arrival = if poisson.get() {
            format!("--arrival poisson --burstiness {}", burstiness.get())
        } else {
            "--arrival constant".into()
        };
        format!(
            "tracelab simulate {common} --closed {} --think {} --output closed.jsonl\ntracelab simulate {common} --rate {rate} {arrival} --output open.jsonl",
            clients.get(),
            think_s.get()
        )
    };

    view! {
        <header class="lm-head">
            <h1>{t("title")}</h1>
            <nav>
                <a href="../">{t("lab")}</a>
                <a data-testid="capacity-link" href=move || format!("../capacity/?sweep=sweep-demo&lang={}", lang.get().code())>{t("capacity_link")}</a>
                <button class="lang-switch" data-testid="lang-switch"
                    on:click=move |_| lang.update(|l| *l = if *l == Lang::En { Lang::Zh } else { Lang::En })>{t("language")}</button>
            </nav>
        </header>
        <p class="lm-intro">{t("intro")}</p>
        <main class="lm">
            <form class="lm-params" on:submit=|e| e.prevent_default()>
                <fieldset><legend>{t("server")}</legend>
                    <Field id="slots" label=t("slots") value=slots min=1.0 />
                    <Field id="mean" label=t("service") value=mean_s min=0.001 step="0.1" />
                </fieldset>
                <fieldset><legend>{t("closed")}</legend>
                    <Field id="clients" label=t("clients") value=clients min=1.0 />
                    <Field id="think" label=t("think") value=think_s min=0.0 step="0.5" />
                </fieldset>
                <fieldset><legend>{t("open")}</legend>
                    <label for="arrival">{t("arrival")}</label>
                    <select id="arrival" data-testid="arrival" on:change=move |e| poisson.set(event_target_value(&e) == "poisson")>
                        <option value="poisson" selected=move || poisson.get()>{t("poisson")}</option>
                        <option value="constant" selected=move || !poisson.get()>{t("constant")}</option>
                    </select>
                    <Field id="burstiness" label=t("burstiness") value=burstiness min=0.01 step="0.25" />
                </fieldset>
                <fieldset><legend>{t("run")}</legend>
                    <Field id="requests" label=t("requests") value=requests min=1.0 step="100" />
                    <Field id="seed" label=t("seed") value=seed min=0.0 />
                </fieldset>
                <fieldset><legend>{t("stall")}</legend>
                    <label class="check"><input type="checkbox" data-testid="stall-on" prop:checked=move || stall_on.get()
                        on:change=move |e| stall_on.set(event_target_checked(&e)) />{t("stall_on")}</label>
                    <Field id="stall-at" label=t("stall_at") value=stall_at min=0.0 step="5" />
                    <Field id="stall-for" label=t("stall_for") value=stall_for min=0.001 step="5" />
                </fieldset>
            </form>
            <section class="lm-results" aria-live="polite">
                {move || match comparison.get() {
                    Err(e) => view! { <p class="field-error" role="alert">{format!("{} {e}", w(lang.get(), "error"))}</p> }.into_any(),
                    Ok(c) => results(lang.get(), &c, stall_on.get().then(|| (stall_at.get(), stall_for.get()))).into_any(),
                }}
                <p>{t("cli")}</p>
                <pre class="lm-cli" data-testid="cli">{cli}</pre>
            </section>
        </main>
        <crate::coverage::CoveragePanel lang=lang />
    }
}

fn results(lang: Lang, c: &LoadComparison, stall: Option<(f64, f64)>) -> impl IntoView {
    let row = |name: &'static str, s: &LoadSummary| {
        view! {
            <tr data-testid=format!("row-{name}")>
                <th scope="row">{w(lang, name)}</th>
                <td>{secs(s.p50_s)}</td>
                <td data-testid=format!("p95-{name}")>{secs(s.p95_s)}</td>
                <td>{secs(s.max_s)}</td>
                <td>{s.throughput_per_s.map(|x| format!("{x:.3} /s")).unwrap_or_else(|| "—".into())}</td>
            </tr>
        }
    };
    let scale = c
        .closed_summary
        .max_s
        .unwrap_or(0.0)
        .max(c.open_summary.max_s.unwrap_or(0.0));
    view! {
        <p data-testid="matched">{w(lang, "matched")}" λ = "{format!("{:.3} /s", c.rate_per_s)}</p>
        <table class="lm-table">
            <thead><tr><th>{w(lang, "load")}</th><th>{w(lang, "p50")}</th><th>{w(lang, "p95")}</th><th>{w(lang, "max")}</th><th>{w(lang, "throughput")}</th></tr></thead>
            <tbody>{row("closed", &c.closed_summary)}{row("open", &c.open_summary)}</tbody>
        </table>
        <p class="lm-note" data-testid="method-note">{w(lang, "method")}{if lang == Lang::Zh { "" } else { " " }}{SUMMARY_METHOD.name().get(lang).to_string()}</p>
        {stall.is_some().then(|| {
            let key = if c.closed_p95_calmer() { "calm" } else { "not_calm" };
            view! { <p class="lm-calm" data-testid="calm-note">{w(lang, key)}</p> }
        })}
        <h2>{w(lang, "distribution")}</h2>
        <div class="lm-pair">
            {histogram_svg(lang, "closed", &c.closed_summary, scale)}
            {histogram_svg(lang, "open", &c.open_summary, scale)}
        </div>
        <h2>{w(lang, "in_flight")}</h2>
        {in_flight_svg(lang, c, stall)}
    }
}

const BINS: usize = 30;

fn histogram_svg(lang: Lang, name: &'static str, s: &LoadSummary, scale: f64) -> impl IntoView {
    let (width, height, pad) = (320.0, 150.0, 24.0);
    let counts = histogram(&s.latency_s, BINS, scale);
    let top = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let bar = (width - 2.0 * pad) / BINS as f64;
    let bars: Vec<_> = counts
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(i, &n)| {
            // At least 1.5 px, so a bin of a few slow requests is visible beside thousands.
            let h = ((n as f64 / top) * (height - 2.0 * pad)).max(1.5);
            view! { <rect class=format!("bar {name}") x=pad + i as f64 * bar y=height - pad - h width=bar - 1.0 height=h><title>{n}</title></rect> }
        })
        .collect();
    let p95 = s.p95_s.map(|p| {
        let x = pad + (p / scale).min(1.0) * (width - 2.0 * pad);
        view! { <line class="p95" x1=x x2=x y1=pad - 6.0 y2=height - pad /><text class="p95" x=x + 3.0 y=pad>{format!("P95 {p:.1} s")}</text> }
    });
    view! {
        <figure class="lm-hist" data-testid=format!("hist-{name}")>
            <figcaption>{w(lang, name)}</figcaption>
            <svg viewBox=format!("0 0 {width} {height}") role="img" aria-label=w(lang, name)>
                <line class="axis" x1=pad x2=width - pad y1=height - pad y2=height - pad />
                {bars}
                {p95}
                <text class="tick" x=pad y=height - 6.0>"0"</text>
                <text class="tick end" x=width - pad y=height - 6.0>{format!("{scale:.1} {}", w(lang, "seconds"))}</text>
            </svg>
        </figure>
    }
}

fn in_flight_svg(lang: Lang, c: &LoadComparison, stall: Option<(f64, f64)>) -> impl IntoView {
    let (width, height, pad) = (680.0, 200.0, 28.0);
    let end = |s: &LoadSummary| s.in_flight.last().map(|p| p.0).unwrap_or(0.0);
    let t_max = end(&c.closed_summary).max(end(&c.open_summary)).max(1e-9);
    let peak = |s: &LoadSummary| s.in_flight.iter().map(|p| p.1).max().unwrap_or(0);
    let n_max = peak(&c.closed_summary).max(peak(&c.open_summary)).max(1) as f64;
    let x = move |t: f64| pad + t / t_max * (width - 2.0 * pad);
    let y = move |n: f64| height - pad - n / n_max * (height - 2.0 * pad);
    let path = move |s: &LoadSummary| {
        let mut d = format!("M{:.1},{:.1}", x(0.0), y(0.0));
        let mut prev = 0.0;
        for &(t, n) in &s.in_flight {
            d.push_str(&format!(
                "L{:.1},{:.1}L{:.1},{:.1}",
                x(t),
                y(prev),
                x(t),
                y(n as f64)
            ));
            prev = n as f64;
        }
        d
    };
    let band = stall.map(|(at, len)| {
        let (x0, x1) = (x(at.min(t_max)), x((at + len).min(t_max)));
        view! {
            <rect class="stall" x=x0 y=pad width=(x1 - x0).max(0.0) height=height - 2.0 * pad />
            <text class="tick" x=x0 + 3.0 y=pad + 12.0>{w(lang, "stall_band")}</text>
        }
    });
    view! {
        <figure class="lm-flight" data-testid="in-flight">
            <svg viewBox=format!("0 0 {width} {height}") role="img" aria-label=w(lang, "in_flight")>
                {band}
                <line class="axis" x1=pad x2=width - pad y1=height - pad y2=height - pad />
                <line class="axis" x1=pad x2=pad y1=pad y2=height - pad />
                <path class="flight open" d=path(&c.open_summary) />
                <path class="flight closed" d=path(&c.closed_summary) />
                <text class="tick" x=2.0 y=pad + 4.0>{format!("{n_max}")}</text>
                <text class="tick" x=pad y=height - 8.0>"0"</text>
                <text class="tick end" x=width - pad y=height - 8.0>{format!("{t_max:.0} {}", w(lang, "seconds"))}</text>
            </svg>
            <figcaption>
                <span class="key closed">{w(lang, "closed")}</span>" "
                <span class="key open">{w(lang, "open")}</span>" · "{w(lang, "requests_axis")}
            </figcaption>
        </figure>
    }
}
