//! What the loaded trace says about itself: conditions, capabilities, completeness, warm-up.
//! A capability the run did not have is shown as "not verified", never filled in.

use leptos::prelude::*;
use tracelab_core::format::{integer, trim_num};
use tracelab_core::trace::{self, GPU_UNSUPPORTED};

use crate::i18n::tr;
use crate::state::{use_lab, Origin};

#[component]
pub fn TraceSummary() -> impl IntoView {
    let lab = use_lab();
    view! {
        <section class="trace-summary" data-testid="trace-summary" aria-labelledby="trace-h">
            <h2 id="trace-h">{move || tr(lab.lang.get(), "trace")}</h2>
            {move || {
                let l = lab.lang.get();
                lab.loaded.get().map(|loaded| {
                    let t = &loaded.trace;
                    let h = &t.header;
                    let c = &h.conditions;
                    let gpu = h.capabilities.gpu_telemetry.clone();
                    let unverified = gpu == GPU_UNSUPPORTED;
                    let sample = matches!(loaded.origin, Origin::Sample(_));
                    let origin = match &loaded.origin {
                        Origin::Sample(_) => tr(l, "origin_sample"),
                        Origin::Uploaded(_) => tr(l, "origin_uploaded"),
                    };
                    let mut facts: Vec<(&'static str, String)> = vec![
                        ("attempts_label", integer(loaded.attempts.len() as u64)),
                        ("warmup", integer(trace::warmup_count(&loaded.attempts) as u64)),
                    ];
                    if let Some(m) = &c.model { facts.push(("model", m.clone())); }
                    if let Some(a) = &c.arrival { facts.push(("arrival", tracelab_core::format::arrival(a, l))); }
                    if let Some(n) = c.concurrency { facts.push(("concurrency", integer(u64::from(n)))); }
                    if let Some(r) = c.rate_per_s { facts.push(("rate", format!("{} /s", trim_num(r)))); }
                    if let Some(m) = c.max_tokens { facts.push(("max_tokens", integer(u64::from(m)))); }
                    if let Some(t) = c.first_token_timeout_s { facts.push(("ft_timeout", format!("{} s", trim_num(t)))); }
                    if let Some(t) = c.timeout_s { facts.push(("timeout", format!("{} s", trim_num(t)))); }
                    if let Some(w) = h.window { facts.push(("window", format!("{} s", trim_num(w.length_s)))); }
                    if let Some(s) = &h.source {
                        facts.push(("source", format!("{} {}", s.tool, s.version.clone().unwrap_or_default()).trim().to_string()));
                    }
                    let workload = if h.capabilities.workload_executed { "yes" } else { "no" };
                    view! {
                        <p>
                            <span class="mono">{loaded.origin.name().to_string()}</span>
                            " ("{origin}") · "
                            <span class:unverified={t.completeness() != tracelab_core::Completeness::Complete} data-testid="completeness">
                                {t.completeness().text().get(l).to_string()}
                            </span>
                            " · "{tr(l, "gpu")}": "
                            // A built-in sample is constructed for teaching: no GPU was sampled, and
                            // that is not a fault of the run. An upload without telemetry is unverified.
                            <span class:unverified=unverified && !sample class:muted=unverified && sample data-testid="gpu-status">
                                {match (unverified, sample) {
                                    (true, true) => tr(l, "gpu_constructed").to_string(),
                                    (true, false) => tr(l, "not_verified").to_string(),
                                    _ => gpu.clone(),
                                }}
                            </span>
                            " · "{tr(l, "workload")}": "{tr(l, workload)}
                        </p>
                        <dl class="facts">
                            {facts.into_iter().map(|(k, v)| view! { <div><dt>{tr(l, k)}</dt><dd>{v}</dd></div> }).collect_view()}
                        </dl>
                        {t.warnings.iter().map(|w| view! { <p class="remark">{w.clone()}</p> }).collect_view()}
                    }
                })
            }}
        </section>
    }
}
