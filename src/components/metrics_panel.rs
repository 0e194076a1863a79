//! The figures, each with its formula parts. Everything shown here was computed by the core.

use leptos::prelude::*;
use tracelab_core::{format, Figure, Lang, Metrics, Settings};

use crate::i18n::tr;

#[component]
pub fn MetricsPanel(metrics: Memo<Option<Metrics>>, settings: RwSignal<Settings>, lang: RwSignal<Lang>) -> impl IntoView {
    let _ = settings;
    view! {
        <section class="metrics" aria-labelledby="metrics-h">
            <h2 id="metrics-h">{move || tr(lang.get(), "metrics")}</h2>
            <div class="metric-grid" aria-live="polite" data-testid="metrics">
                {move || {
                    let l = lang.get();
                    metrics.with(|m| m.as_ref().map(|m| {
                        let qualified = view! {
                            <article class="metric" data-testid="metric-qualified_count">
                                <h3>{tr(l, "qualified_count")}</h3>
                                <p class="value" data-testid="value-qualified_count">{m.qualified}</p>
                                <p class="formula">{format::formula(&m.joint_rate, l).map(|f| f.split(" / ").next().unwrap_or_default().to_string())}</p>
                            </article>
                        };
                        let cards: Vec<_> = [
                            &m.ttft_p50,
                            &m.ttft_p95,
                            &m.failure_rate,
                            &m.quality_pass_rate,
                            &m.joint_rate,
                            &m.goodput,
                            &m.cost_per_1000_qualified,
                        ]
                        .into_iter()
                        .map(|f| figure_card(f, l))
                        .collect();
                        view! { {qualified} {cards} }
                    }))
                }}
            </div>
        </section>
    }
}

fn figure_card(f: &Figure, lang: Lang) -> impl IntoView {
    let key = f.key.clone();
    let value = format::value(f, lang);
    let formula = format::formula(f, lang);
    let method = f.method.clone().map(|m| format!("{m}, n = {}", f.n.unwrap_or(0)));
    let remark = format::remark(f, lang);
    view! {
        <article class="metric" class:undefined=f.value.is_none() data-testid=format!("metric-{key}")>
            <h3>{f.name.get(lang).to_string()}</h3>
            <p class="value" data-testid=format!("value-{key}")>{value}</p>
            {formula.map(|t| view! { <p class="formula">{t}</p> })}
            {method.map(|t| view! { <p class="formula">{t}</p> })}
            {remark.map(|t| view! { <p class="remark">{t}</p> })}
        </article>
    }
}
