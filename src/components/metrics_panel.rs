//! The figures, each with numerator / denominator = value, its unit, method and sample size,
//! and what moved since the last edit. Everything shown here was computed by the core.

use leptos::prelude::*;
use tracelab_core::{compare::Intervals, format, Figure, Lang};

use super::run_checks::RunChecks;
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
            <Hypothetical />
            <div class="metric-grid" class:hypothetical=move || lab.whatif.with(|w| !w.is_empty()) aria-live="polite" data-testid="metrics">
                {move || {
                    let l = lab.lang.get();
                    let warnings = figure_warnings(lab);
                    lab.metrics.with(|m| m.as_ref().map(|m| {
                        let qualified = view! {
                            <article class="metric" data-testid="metric-qualified_count">
                                <h3>{tr(l, "qualified_count")}</h3>
                                {warnings_for("qualified_count", &warnings, l)}
                                {if m.quality_not_evaluated() {
                                    view! {
                                        <p class="value not-evaluated" data-testid="value-qualified_count">{tr(l, "not_evaluated")}</p>
                                        <p class="remark" data-testid="not-evaluated">{tr(l, "not_evaluated_why")}</p>
                                    }.into_any()
                                } else {
                                    view! { <p class="value" data-testid="value-qualified_count">{format::integer(m.qualified as u64)}</p> }.into_any()
                                }}
                                <p class="formula">{format!("{} · {}", count(l, m.attempts, "attempt"), count(l, m.successes, "success"))}</p>
                            </article>
                        };
                        let mut figures = vec![&m.ttft_p50, &m.ttft_p95];
                        if m.ttft_tail.name != m.ttft_p95.name {
                            figures.push(&m.ttft_tail);
                        }
                        figures.extend([&m.failure_rate, &m.quality_pass_rate, &m.joint_rate, &m.goodput, &m.cost_per_1000_qualified]);
                        let unjudged = m.quality_not_evaluated();
                        let cards: Vec<_> = lab.intervals.with(|iv| {
                            figures.into_iter().map(|f| figure_card(f, l, &warnings, unjudged, iv.as_ref())).collect()
                        });
                        view! { {qualified} {cards} }
                    }))
                }}
            </div>
            <RunChecks />
            <details class="more-metrics">
                <summary>{move || tr(lab.lang.get(), "more_metrics")}</summary>
                <div class="metric-grid">
                    {move || {
                        let l = lab.lang.get();
                        lab.metrics.with(|m| m.as_ref().map(|m| {
                            let warnings = figure_warnings(lab);
                            lab.intervals.with(|iv| {
                                [&m.e2e_p50, &m.e2e_tail, &m.itl_p50, &m.itl_tail, &m.output_tokens_per_s, &m.business_success_rate]
                                    .into_iter().map(|f| figure_card(f, l, &warnings, false, iv.as_ref())).collect_view()
                            })
                        }))
                    }}
                </div>
            </details>
        </section>
    }
}

/// "1 attempt", "10 attempts", "10 次尝试": a count with its noun.
fn count(lang: Lang, n: usize, noun: &str) -> String {
    let key = match (noun, n == 1) {
        ("attempt", true) => "n_attempt",
        ("attempt", false) => "n_attempts",
        (_, true) => "n_success",
        (_, false) => "n_successes",
    };
    tr(lang, key).replace("{n}", &format::integer(n as u64))
}

/// The wrong choices and edits in force, each with the figures it moves (the core's
/// `whatif::marked`), as (figure keys, label).
fn figure_warnings(lab: crate::state::Lab) -> Vec<(Vec<String>, tracelab_core::Text)> {
    lab.marked
        .get()
        .into_iter()
        .map(|m| (m.figures, m.label))
        .collect()
}

/// The warnings of the mistakes that move this figure, and of no other.
fn warnings_for(
    key: &str,
    warnings: &[(Vec<String>, tracelab_core::Text)],
    lang: Lang,
) -> impl IntoView {
    warnings
        .iter()
        .filter(|(figures, _)| figures.iter().any(|f| f == key))
        .map(|(_, label)| view! { <p class="figure-warning" data-testid="figure-warning">"⚠ "{label.get(lang).to_string()}</p> })
        .collect_view()
}

/// `unjudged`: no success carries a quality verdict, so the quality and qualification figures
/// are "not evaluated" rather than a 0 that reads as a finding.
fn figure_card(
    f: &Figure,
    lang: Lang,
    warnings: &[(Vec<String>, tracelab_core::Text)],
    unjudged: bool,
    intervals: Option<&Intervals>,
) -> impl IntoView {
    let key = f.key.clone();
    let unjudged = unjudged
        && matches!(
            key.as_str(),
            "quality_pass_rate" | "joint_rate" | "goodput" | "cost_per_1000_qualified"
        );
    let value = if unjudged {
        tr(lang, "not_evaluated").to_string()
    } else {
        format::value(f, lang)
    };
    let formula = format::formula(f, lang)
        .filter(|_| !unjudged)
        .map(|f| format!("{f} = {value}"));
    let method = format::method_line(f, lang);
    let remark = if unjudged {
        Some(tr(lang, "not_evaluated_why").to_string())
    } else {
        format::remark(f, lang)
    };
    // The figure's 95 % interval, with its method; a missing bound is said, not hidden.
    let interval = intervals
        .and_then(|iv| iv.get(&key))
        .filter(|_| !unjudged && f.value.is_some())
        .map(|iv| iv.describe(&f.unit, lang));
    view! {
        <article class="metric" class:undefined=f.value.is_none() || unjudged data-testid=format!("metric-{key}")>
            <h3>{f.name.get(lang).to_string()}</h3>
            {warnings_for(&key, warnings, lang)}
            <p class="value" data-testid=format!("value-{key}")>{value}</p>
            {formula.map(|t| view! { <p class="formula">{t}</p> })}
            {method.map(|t| view! { <p class="formula">{t}</p> })}
            {interval.map(|t| view! { <p class="interval" data-testid=format!("interval-{key}")>{t}</p> })}
            {remark.map(|t| view! { <p class="remark">{t}</p> })}
        </article>
    }
}

/// While any row is edited or deleted the figures describe a run that was not recorded: say so
/// above them, and name the false conclusion of each edit that turns a verdict.
#[component]
fn Hypothetical() -> impl IntoView {
    let lab = use_lab();
    move || {
        let l = lab.lang.get();
        let loaded = lab.loaded.get()?;
        lab.whatif.with(|w| {
            if w.is_empty() {
                return None;
            }
            let mut named = w.mistakes(&loaded.attempts);
            named.extend(lab.settings.with(|s| w.verdict_flips(&loaded.attempts, s)));
            Some(view! {
                <div class="hypothetical-note" role="note" data-testid="hypothetical">
                    <p>
                        <strong>{format!("{} ({})", tr(l, "hypothetical"), w.summary().get(l))}</strong>" "
                        {tr(l, "hypothetical_why")}" "
                        <button class="link" data-testid="undo-edits" on:click=move |_| lab.whatif.set(Default::default())>
                            {tr(l, "reset_edits")}
                        </button>
                    </p>
                    {named.into_iter().map(|m| view! {
                        <p class="mistake" data-testid="mistake" data-setting=m.setting>
                            <strong>"⚠ "{m.label.get(l).to_string()}</strong>" "{m.false_conclusion.get(l).to_string()}
                        </p>
                    }).collect_view()}
                </div>
            })
        })
    }
}
