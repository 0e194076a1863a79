//! The figures, each with numerator / denominator = value, its unit, method and sample size,
//! and what moved since the last edit. Everything shown here was computed by the core.

use leptos::prelude::*;
use tracelab_core::{format, Figure, Lang};

use crate::i18n::tr;
use crate::state::use_lab;

#[component]
pub fn MetricsPanel() -> impl IntoView {
    let lab = use_lab();
    view! {
        <section class="metrics" aria-labelledby="metrics-h">
            <h2 id="metrics-h">{move || tr(lab.lang.get(), "metrics")}</h2>
            <p class="changes" aria-live="polite" data-testid="changes">
                {move || {
                    let l = lab.lang.get();
                    let changes = lab.changes.get();
                    if changes.is_empty() {
                        String::new()
                    } else {
                        format!("{} {}", tr(l, "changed"), changes.iter().map(|c| format::change(c, l)).collect::<Vec<_>>().join(" · "))
                    }
                }}
            </p>
            <div class="metric-grid" aria-live="polite" data-testid="metrics">
                {move || {
                    let l = lab.lang.get();
                    lab.metrics.with(|m| m.as_ref().map(|m| {
                        let qualified = view! {
                            <article class="metric" data-testid="metric-qualified_count">
                                <h3>{tr(l, "qualified_count")}</h3>
                                <p class="value" data-testid="value-qualified_count">{m.qualified}</p>
                                <p class="formula">{format!("{} {} · {} {}", tr(l, "of"), m.attempts, tr(l, "successes"), m.successes)}</p>
                            </article>
                        };
                        let mut figures = vec![&m.ttft_p50, &m.ttft_p95];
                        if m.ttft_tail.name != m.ttft_p95.name {
                            figures.push(&m.ttft_tail);
                        }
                        figures.extend([&m.failure_rate, &m.quality_pass_rate, &m.joint_rate, &m.goodput, &m.cost_per_1000_qualified]);
                        let cards: Vec<_> = figures.into_iter().map(|f| figure_card(f, l)).collect();
                        view! { {qualified} {cards} }
                    }))
                }}
            </div>
            <details class="more-metrics">
                <summary>{move || tr(lab.lang.get(), "more_metrics")}</summary>
                <div class="metric-grid">
                    {move || {
                        let l = lab.lang.get();
                        lab.metrics.with(|m| m.as_ref().map(|m| {
                            [&m.e2e_p50, &m.e2e_tail, &m.itl_p50, &m.itl_tail, &m.output_tokens_per_s, &m.business_success_rate]
                                .into_iter().map(|f| figure_card(f, l)).collect_view()
                        }))
                    }}
                </div>
            </details>
        </section>
    }
}

fn figure_card(f: &Figure, lang: Lang) -> impl IntoView {
    let key = f.key.clone();
    let value = format::value(f, lang);
    let formula = format::formula(f, lang).map(|f| format!("{f} = {value}"));
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
