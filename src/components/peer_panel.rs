//! For a trace imported from vLLM, AIPerf, guidellm or LLMPerf: what the tool said, what we get
//! recomputing with the tool's own method, and the same figure under the lesson's definitions —
//! side by side, so a learner sees exactly what moves and why. The table is the core's
//! (`tracelab_peers::table::peer_table`), computed and written as HTML in the importers' bundle
//! (`crate::convert`), and put in place as is.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::convert::Call;
use crate::i18n::tr;
use crate::state::use_lab;

#[component]
pub fn PeerPanel() -> impl IntoView {
    let lab = use_lab();
    let table: RwSignal<Option<Result<String, String>>> = RwSignal::new(None);
    // Which request is the latest (an older answer arriving late is dropped).
    let latest = StoredValue::new(0u64);
    Effect::new(move |_| {
        let (Some(loaded), Some(working)) = (lab.loaded.get(), lab.working.get()) else {
            return table.set(None);
        };
        if !loaded.trace.has_peer_figures() {
            return table.set(None);
        }
        let settings = lab
            .settings
            .with(|s| serde_json::to_string(s).unwrap_or_default());
        let lang = serde_json::to_string(&lab.lang.get()).unwrap_or_default();
        let (key, working_text) = lab.sent(loaded, &working);
        latest.update_value(|n| *n += 1);
        let mine = latest.get_value();
        spawn_local(async move {
            let answer = crate::convert::call_on_trace(
                Call::PeerTable,
                key,
                working_text,
                &[&settings, &lang],
            )
            .await;
            // The panel may be gone by now (a new trace lays the page out afresh).
            if latest.try_get_value() == Some(mine) {
                table.try_set(Some(answer));
            }
        });
    });
    let source = move || {
        lab.loaded
            .with(|l| l.as_ref().and_then(|l| l.trace.header.source.clone()))
    };
    view! {
        {move || source().map(|src| {
            let l = lab.lang.get();
            view! {
                <section class="peer" aria-labelledby="peer-h" data-testid="peer-panel">
                    <h2 id="peer-h">{format!("{} — {} {}", tr(l, "peer_title"), src.tool, src.version.clone().unwrap_or_default())}</h2>
                    <details>
                        <summary>{tr(l, "peer_definitions")}</summary>
                        <ul>{src.definitions.iter().map(|d| view! { <li>{d.clone()}</li> }).collect_view()}</ul>
                    </details>
                    {move || match table.get() {
                        None if src.figures.is_empty() => view! { <p class="hint" data-testid="peer-none">{tr(l, "peer_no_figures")}</p> }.into_any(),
                        None => view! { <p class="loading">"…"</p> }.into_any(),
                        Some(Err(e)) => view! { <p class="error" role="alert" data-testid="peer-error">{e}</p> }.into_any(),
                        Some(Ok(html)) => view! { <div class="peer-figures" inner_html=html></div> }.into_any(),
                    }}
                </section>
            }
        })}
    }
}
