//! Every attempt with its verdict and first failing reason, judged by the core per request.

use leptos::prelude::*;
use tracelab_core::{metrics::trim_num, verdict, Lang, Settings};

use crate::i18n::tr;
use crate::loader::Loaded;

#[component]
pub fn AttemptsTable(loaded: Loaded, settings: RwSignal<Settings>, lang: RwSignal<Lang>) -> impl IntoView {
    let trace = loaded.trace.clone();
    view! {
        <section class="attempts" aria-labelledby="attempts-h">
            <h2 id="attempts-h">{move || tr(lang.get(), "table")}</h2>
            <div class="table-scroll">
                <table data-testid="attempts-table">
                    <thead>
                        <tr>
                            <th scope="col">{move || tr(lang.get(), "col_id")}</th>
                            <th scope="col">{move || tr(lang.get(), "col_outcome")}</th>
                            <th scope="col" class="num">{move || tr(lang.get(), "col_ttft")}</th>
                            <th scope="col">{move || tr(lang.get(), "col_quality")}</th>
                            <th scope="col">{move || tr(lang.get(), "col_verdict")}</th>
                            <th scope="col">{move || tr(lang.get(), "col_reason")}</th>
                        </tr>
                    </thead>
                    <tbody>
                        {move || {
                            let l = lang.get();
                            settings.with(|s| {
                                trace.attempts.iter().map(|a| {
                                    let v = verdict(a, s);
                                    let ttft = a.ttft_ms.map(|t| trim_num(t / 1000.0)).unwrap_or_else(|| tr(l, "missing").to_string());
                                    view! {
                                        <tr class:qualified=v.qualified data-testid="attempt-row">
                                            <th scope="row" class="mono">{a.id.clone()}</th>
                                            <td>{a.outcome.to_string()}</td>
                                            <td class="num" class:missing=a.ttft_ms.is_none()>{ttft}</td>
                                            <td>{a.quality.name()}</td>
                                            <td data-testid="verdict">{if v.qualified { tr(l, "qualified") } else { tr(l, "not_qualified") }}</td>
                                            <td>{v.reason.map(|r| r.text().get(l).to_string()).unwrap_or_default()}</td>
                                        </tr>
                                    }
                                }).collect_view()
                            })
                        }}
                    </tbody>
                </table>
            </div>
        </section>
    }
}
