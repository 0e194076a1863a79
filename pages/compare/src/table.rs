//! The contract check and the side-by-side table: both values with n (and what n counts) and each
//! run's own interval, the difference, its interval and the verdict, with the rule every verdict
//! follows beside it — all words and numbers from the core.

use leptos::prelude::*;
use tracelab_core::compare::{verdict_rule, ContractStatus, Judgement};
use tracelab_core::format::number_in_unit;

use crate::page::{Compared, Page};
use crate::words::w;

#[component]
pub fn ContractView(compared: Compared) -> impl IntoView {
    let page = expect_context::<Page>();
    let pair = compared.report.pairs[0].clone();
    let class = match pair.contract.status {
        ContractStatus::Holds => "contract holds",
        ContractStatus::Broken => "contract broken",
        ContractStatus::Unverified => "contract unverified",
    };
    let role = if pair.contract.is_broken() {
        "alert"
    } else {
        "status"
    };
    view! {
        <section class=class data-testid="contract" role=role>
            <h2>{move || w(page.lang.get(), "contract")}</h2>
            <ul>{move || pair.contract.lines(page.lang.get()).into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
        </section>
        <section class="baseline-checks" data-testid="baseline-checks">
            <h2>{move || w(page.lang.get(), "five_checks")}</h2>
            {move || {
                let l = page.lang.get();
                compared.baselines.iter().zip(&compared.reuse).map(|(b, reuse)| view! {
                    <h3>{b.run.clone()}</h3>
                    <ul>{b.verdict.lines(l).into_iter().map(|line| view! { <li>{line}</li> }).collect_view()}</ul>
                    {reuse.as_ref().map(|r| view! {
                        <ul data-testid="reuse-split">{r.card_lines(l).into_iter().map(|line| view! { <li>{line}</li> }).collect_view()}</ul>
                    })}
                }).collect_view()
            }}
        </section>
    }
}

#[component]
pub fn DiffTable(compared: Compared) -> impl IntoView {
    let page = expect_context::<Page>();
    let pair = compared.report.pairs[0].clone();
    let boot = compared.report.bootstrap;
    move || {
        let l = page.lang.get();
        let rows = pair.rows.iter().map(|r| {
            // Each cell carries its column's name: on a phone the rows stack into cards, each
            // value under its name, instead of a table scrolled sideways (compare.css).
            let side = |v: Option<f64>, n: usize, iv: &Option<tracelab_core::compare::FigureInterval>, label: String| {
                let value = v.map(|v| number_in_unit(v, &r.unit, l)).unwrap_or_else(|| if l == tracelab_core::Lang::Zh { "无定义".into() } else { "undefined".into() });
                let interval = iv.as_ref().map(|i| tracelab_core::compare::bounds_text(&i.bounds, &r.unit, l));
                view! {
                    <td data-label=label>
                        <span class="value">{value}</span>
                        <span class="n">{format!(" n = {}", tracelab_core::format::integer(n as u64))}</span>
                        {interval.map(|i| view! { <br /><span class="own-interval">{i}</span> })}
                    </td>
                }
            };
            let verdict_class = match r.judgement {
                Judgement::Up | Judgement::Down => "verdict beyond",
                Judgement::TooFew { .. } => "verdict too-few",
                _ => "verdict none",
            };
            view! {
                <tr data-key=r.key.clone()>
                    <th scope="row">
                        {r.name.get(l).to_string()}
                        <br /><small class="n-counts" data-testid="n-counts">{format!("n = {}", r.n_counts.get(l))}</small>
                    </th>
                    {side(r.base, r.n_base, &r.base_interval, format!("{} — {}", w(l, "base"), pair.base))}
                    {side(r.new, r.n_new, &r.new_interval, format!("{} — {}", w(l, "new"), pair.new))}
                    <td data-label=w(l, "difference")>{r.difference_text(l)}</td>
                    <td data-label=w(l, "interval")>{r.interval_text(l)}</td>
                    <td class=verdict_class data-label=w(l, "verdict")>{r.verdict.get(l).to_string()}</td>
                    <td class="method" data-label=w(l, "method")>{r.method.as_ref().map(|m| m.describe(l)).unwrap_or_default()}</td>
                </tr>
            }
        }).collect_view();
        let rule = verdict_rule(&pair.rows);
        view! {
            <div class="table-and-rule">
            <div class="table-scroll">
                <table class="compare-table" data-testid="compare-table">
                    <thead>
                        <tr>
                            <th scope="col">{w(l, "figure")}</th>
                            <th scope="col">{format!("{} — {}", w(l, "base"), pair.base)}<br /><small>{w(l, "own_interval")}</small></th>
                            <th scope="col">{format!("{} — {}", w(l, "new"), pair.new)}<br /><small>{w(l, "own_interval")}</small></th>
                            <th scope="col">{w(l, "difference")}</th>
                            <th scope="col">{w(l, "interval")}</th>
                            <th scope="col">{w(l, "verdict")}</th>
                            <th scope="col">{w(l, "method")}</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            <aside class="verdict-rule" data-testid="verdict-rule" aria-labelledby="verdict-rule-h">
                <h2 id="verdict-rule-h">{w(l, "verdict_rule")}</h2>
                <ul>{rule.iter().map(|t| view! { <li>{t.get(l).to_string()}</li> }).collect_view()}</ul>
            </aside>
            </div>
            <p class="boot-note" data-testid="bootstrap">{format!("{}: {}", w(l, "bootstrap"), w(l, "boot_detail").replace("{seed}", &boot.seed.to_string()).replace("{n}", &tracelab_core::format::integer(boot.resamples as u64)))}</p>
        }
    }
}
