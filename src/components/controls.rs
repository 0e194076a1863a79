//! The settings a learner edits on the first page: the TTFT threshold and its comparison.

use leptos::prelude::*;
use tracelab_core::{Comparison, Lang, Settings};

use crate::i18n::tr;

#[component]
pub fn Controls(settings: RwSignal<Settings>, lang: RwSignal<Lang>) -> impl IntoView {
    let threshold = move || settings.with(|s| s.ttft_threshold_s);
    let set_threshold = move |raw: String| {
        // A half-typed number ("0.", "") keeps the last good value instead of erasing it.
        if let Ok(v) = raw.trim().parse::<f64>() {
            if v.is_finite() && v >= 0.0 {
                settings.update(|s| s.ttft_threshold_s = v);
            }
        }
    };
    // The number box is left alone while it already shows the threshold, so typing "0." on the
    // way to "0.5" is not overwritten (which would also move the caret).
    let number_box = NodeRef::<leptos::html::Input>::new();
    Effect::new(move |_| {
        let t = threshold();
        if let Some(input) = number_box.get() {
            if input.value().trim().parse::<f64>().ok() != Some(t) {
                input.set_value(&t.to_string());
            }
        }
    });
    view! {
        <section class="controls" aria-labelledby="controls-h">
            <h2 id="controls-h">{move || tr(lang.get(), "controls")}</h2>
            <label for="threshold-number">{move || tr(lang.get(), "threshold")}</label>
            <div class="threshold-row">
                <input
                    id="threshold-range"
                    type="range"
                    min="0"
                    max="3"
                    step="0.05"
                    aria-label=move || tr(lang.get(), "threshold")
                    prop:value=move || threshold().to_string()
                    on:input=move |ev| set_threshold(event_target_value(&ev))
                />
                <input
                    id="threshold-number"
                    data-testid="threshold-input"
                    node_ref=number_box
                    type="number"
                    min="0"
                    step="0.05"
                    on:input=move |ev| set_threshold(event_target_value(&ev))
                    on:change=move |ev| set_threshold(event_target_value(&ev))
                />
            </div>
            <label for="comparison">{move || tr(lang.get(), "comparison")}</label>
            <select
                id="comparison"
                data-testid="comparison"
                on:change=move |ev| {
                    if let Some(c) = Comparison::from_code(&event_target_value(&ev)) {
                        settings.update(|s| s.comparison = c);
                    }
                }
            >
                <option value="le" selected=move || settings.with(|s| s.comparison == Comparison::Le)>
                    {move || tr(lang.get(), "le_option")}
                </option>
                <option value="lt" selected=move || settings.with(|s| s.comparison == Comparison::Lt)>
                    {move || tr(lang.get(), "lt_option")}
                </option>
            </select>
            {move || {
                let l = lang.get();
                settings.with(|s| s.mistakes()).into_iter().map(|m| view! {
                    <p class="mistake" role="note" data-testid="mistake">
                        <strong>"⚠ "{m.label.get(l).to_string()}</strong>" "{m.false_conclusion.get(l).to_string()}
                    </p>
                }).collect_view()
            }}
        </section>
    }
}
