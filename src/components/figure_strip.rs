//! The headline figures in one compact strip that stays at the bottom of a narrow screen (a
//! phone, the lab in the lessons page's frame), so a control and the figures it moves are seen
//! together: at 360 px the controls stack above the figures, a screen or more away. Wider
//! screens set the controls beside the figures and do not show it (style/main.css). The values
//! are the core's, written by its formatter, as on the figure cards.

use leptos::prelude::*;
use tracelab_core::format;

use crate::i18n::tr;
use crate::state::use_lab;

#[component]
pub fn FigureStrip() -> impl IntoView {
    let lab = use_lab();
    move || {
        let l = lab.lang.get();
        lab.metrics.with(|m| {
            m.as_ref().map(|m| {
                let unjudged = m.quality_not_evaluated();
                let qualified = if unjudged { tr(l, "not_evaluated").to_string() } else { format::integer(m.qualified as u64) };
                let mut items = vec![("qualified_count", tr(l, "strip_qualified").to_string(), qualified)];
                // P95 TTFT is named by the core, which says what its sample is (the successes',
                // or every attempt's when a missing TTFT is wrongly counted as 0).
                let p95 = m.ttft_p95.short_name.as_ref().map_or_else(|| m.ttft_p95.name.get(l).to_string(), |n| n.get(l).to_string());
                items.push(("ttft_p95", p95, format::value(&m.ttft_p95, l)));
                for (f, word) in [(&m.failure_rate, "strip_failures"), (&m.joint_rate, "strip_joint"), (&m.goodput, "strip_goodput"), (&m.cost_per_1000_qualified, "strip_cost")] {
                    let judged = !(unjudged && matches!(f.key.as_str(), "joint_rate" | "goodput" | "cost_per_1000_qualified"));
                    items.push((f.key.as_str(), tr(l, word).to_string(), if judged { format::value(f, l) } else { tr(l, "not_evaluated").to_string() }));
                }
                view! {
                    <aside class="figure-strip" aria-label=tr(l, "strip_label") data-testid="figure-strip">
                        {items.into_iter().map(|(key, word, value)| view! {
                            <span class="strip-item" data-testid=format!("strip-{key}")><span class="strip-word">{word}</span>" "<strong>{value}</strong></span>
                        }).collect_view()}
                    </aside>
                }
            })
        })
    }
}
