//! The answer (whether it was simulated, the rule, the capacity interval, the knee) and one card per step: its load, its
//! verdict and why, its counts and four figures with their 95 % intervals — all the core's text.

use leptos::prelude::*;
use tracelab_core::capacity::{Capacity, StepVerdict};

use crate::page::Page;
use crate::words::w;

#[component]
pub fn Answer(cap: Capacity, stopped: Option<(u64, String)>) -> impl IntoView {
    let page = expect_context::<Page>();
    move || {
        let l = page.lang.get();
        view! {
            <section class="answer" data-testid="answer" role="status">
                {cap.simulated_text(l).map(|t| view! { <p class="simulated" data-testid="simulated">{t}</p> })}
                <p class="rule" data-testid="rule">{cap.rule_text(l)}</p>
                <p class="capacity" data-testid="capacity">{cap.answer_text(l)}</p>
                <p class="knee" data-testid="knee">{cap.knee_text(l)}</p>
                {cap.contract.iter().map(|c| view! { <p class="contract-note">{c.get(l).to_string()}</p> }).collect_view()}
                {stopped.clone().map(|(n, why)| view! {
                    <p class="stopped" data-testid="stopped">{w(l, "stopped").replace("{n}", &n.to_string()).replace("{why}", &why)}</p>
                })}
            </section>
        }
    }
}

#[component]
pub fn StepList(cap: Capacity) -> impl IntoView {
    let page = expect_context::<Page>();
    move || {
        let l = page.lang.get();
        let cards = cap.steps.iter().enumerate().map(|(i, s)| {
            let class = match s.verdict {
                StepVerdict::Passes => "step passes",
                StepVerdict::Fails => "step fails",
                StepVerdict::Inconclusive => "step inconclusive",
                StepVerdict::Interrupted => "step interrupted",
            };
            let knee = (cap.knee == Some(s.load)).then(|| view! { <span class="knee-tag">{w(l, "knee_mark")}</span> });
            let counts = w(l, "attempts").replace("{a}", &s.attempts.to_string()).replace("{f}", &s.failures.to_string()).replace("{q}", &s.qualified.to_string());
            view! {
                <li class=class data-testid=format!("step-{}", i + 1)>
                    <h3>
                        <span class="load">{cap.kind.describe(s.load, l)}</span>
                        " " {knee}
                        <span class="verdict" data-testid="verdict">{s.verdict.text().get(l).to_string()}</span>
                    </h3>
                    <p class="why" data-testid="why">{format!("{}: {}", w(l, "why"), cap.why_text(i, l))}</p>
                    <p class="counts">{counts} " · " <span class="file">{s.name.clone()}</span></p>
                    <dl>
                        {cap.figure_rows(i, l).into_iter().map(|r| view! {
                            <div class="fig" data-key=r.key>
                                <dt>{r.name}</dt>
                                <dd><span class="value">{r.value}</span> <span class="iv">{format!("{} {}", w(l, "interval"), r.interval)}</span></dd>
                            </div>
                        }).collect_view()}
                    </dl>
                </li>
            }
        }).collect_view();
        view! {
            <section class="steps">
                <h2>{w(l, "steps")}</h2>
                <ol class="step-list" data-testid="steps">{cards}</ol>
            </section>
        }
    }
}
