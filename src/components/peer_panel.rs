//! For a trace imported from vLLM, AIPerf, guidellm or LLMPerf: what the tool said, what we get
//! recomputing with the tool's own method, and the same figure under the lesson's definitions —
//! side by side, so a learner sees exactly what moves and why. Rows come from the core.

use leptos::prelude::*;
use tracelab_core::{export, import};

use crate::i18n::tr;
use crate::state::use_lab;

#[component]
pub fn PeerPanel() -> impl IntoView {
    let lab = use_lab();
    let rows = Memo::new(move |_| {
        let loaded = lab.loaded.get()?;
        if import::figures(&loaded.trace).is_empty() {
            return None;
        }
        let mut trace = (*loaded.trace).clone();
        trace.attempts = (*loaded.attempts).clone();
        Some(lab.settings.with(|s| export::peer_rows(&trace, s)))
    });
    let source = move || lab.loaded.with(|l| l.as_ref().and_then(|l| l.trace.header.source.clone()));
    view! {
        {move || source().map(|src| {
            let l = lab.lang.get();
            let all = rows.get().unwrap_or_default();
            let summary = import::ReproSummary::of(&all);
            view! {
                <section class="peer" aria-labelledby="peer-h" data-testid="peer-panel">
                    <h2 id="peer-h">{format!("{} — {} {}", tr(l, "peer_title"), src.tool, src.version.clone().unwrap_or_default())}</h2>
                    <details>
                        <summary>{tr(l, "peer_definitions")}</summary>
                        <ul>{src.definitions.iter().map(|d| view! { <li>{d.clone()}</li> }).collect_view()}</ul>
                    </details>
                    {if all.is_empty() {
                        view! { <p class="hint" data-testid="peer-none">{tr(l, "peer_no_figures")}</p> }.into_any()
                    } else {
                        view! {
                            <p data-testid="peer-summary">{format!("{} / {} {}", summary.matching, summary.recomputed, tr(l, "peer_match"))}</p>
                            <div class="table-scroll">
                            <table class="peer-table" data-testid="peer-table">
                                <thead><tr>
                                    <th scope="col">{tr(l, "peer_figure")}</th>
                                    <th scope="col" class="num">{tr(l, "peer_said")}</th>
                                    <th scope="col" class="num">{tr(l, "peer_method")}</th>
                                    <th scope="col" class="num">{tr(l, "peer_lesson")}</th>
                                    <th scope="col">{tr(l, "peer_why")}</th>
                                </tr></thead>
                                <tbody>
                                    {all.into_iter().filter(|r| r.headline).map(|r| {
                                        let said = export::peer_value(r.tool_said, r.unit);
                                        let ours = r.tool_method.map(|v| export::peer_value(v, r.unit)).unwrap_or_else(|| "—".into());
                                        let lesson = r.lesson.map(|v| export::peer_value(v, r.unit)).unwrap_or_else(|| "—".into());
                                        let why = r.note.as_ref().map(|n| n.get(l).to_string()).unwrap_or_else(|| r.how_lesson.get(l).to_string());
                                        let approx = matches!(r.reproducibility, import::Reproducibility::Approximate(_));
                                        let mark = match (r.matches, approx) {
                                            (Some(true), _) => " ✓",
                                            (Some(false), true) => " ≈",
                                            (Some(false), false) => " ✗",
                                            (None, _) => "",
                                        };
                                        let why = match &r.reproducibility {
                                            import::Reproducibility::Approximate(reason) | import::Reproducibility::Not(reason) => format!("{why} ({reason})"),
                                            import::Reproducibility::Exact => why,
                                        };
                                        view! {
                                            <tr data-testid="peer-row" data-key=r.key.clone()>
                                                <th scope="row">{r.label.get(l).to_string()}<br/><span class="mono muted">{r.tool_key.clone()}</span></th>
                                                <td class="num">{said}</td>
                                                <td class="num" class:match=r.matches == Some(true) class:approx=approx class:mismatch={r.matches == Some(false) && !approx}>
                                                    {ours}{mark}
                                                </td>
                                                <td class="num">{lesson}</td>
                                                <td class="why-cell">{why}</td>
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table>
                            </div>
                        }.into_any()
                    }}
                </section>
            }
        })}
    }
}
