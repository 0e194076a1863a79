//! Every setting of the core's `Settings`: threshold (slider and number), comparison, window,
//! window cost and currency, percentile method and p, and the denominator choices — the wrong
//! ones included, each answered by the core's warning of the false conclusion it produces.

use leptos::prelude::*;
use tracelab_core::settings::CHOICES;
use tracelab_core::{
    units, Comparison, FailureDenominator, FirstToken, Lang, LatencyOrigin, MissingTtft,
    PercentileMethod, QualityRule, Settings, Text, WarmupPolicy,
};

use crate::i18n::tr;
use crate::state::use_lab;

/// A number box for one setting, named by its permalink key (`t`, `w`, `cost`, `p`). The core
/// reads what is typed ([`Settings::with_typed`]: a time to the trace's microsecond, then
/// [`Settings::validate`]) and says why a value is refused, in the page's language; the last good
/// value stays in force. The box is left alone while it already shows the current value (so
/// typing "0." on the way to "0.5" is not undone).
#[component]
fn NumberField(
    id: &'static str,
    label: &'static str,
    key: &'static str,
    value: Signal<Option<f64>>,
    #[prop(default = "0.05")] step: &'static str,
) -> impl IntoView {
    let lab = use_lab();
    let input = NodeRef::<leptos::html::Input>::new();
    let refused = RwSignal::new(None::<Text>);
    Effect::new(move |_| {
        let v = value.get();
        if let Some(el) = input.get() {
            if units::parse_number(&el.value()).ok() != v {
                el.set_value(&v.map(|v| v.to_string()).unwrap_or_default());
            }
        }
    });
    let accept = move |raw: String| match lab.settings.with_untracked(|s| s.with_typed(key, &raw)) {
        Ok(next) => {
            refused.set(None);
            if let Some(next) = next {
                lab.settings.set(next);
            }
        }
        Err(e) => refused.set(Some(e.message)),
    };
    view! {
        <label for=id>{move || tr(lab.lang.get(), label)}</label>
        <input
            id=id
            data-testid=id
            node_ref=input
            type="number"
            step=step
            min="0"
            aria-invalid=move || refused.with(Option::is_some).to_string()
            on:input=move |e| accept(event_target_value(&e))
            on:change=move |e| accept(event_target_value(&e))
        />
        {move || refused.get().map(|why| {
            let l = lab.lang.get();
            view! { <p class="field-error" role="alert" data-testid=format!("{id}-error")>{format!("{} {}", why.get(l), tr(l, "invalid_number"))}</p> }
        })}
    }
}

/// A select for one of the core's named choices (`settings::CHOICES`, by its pair key): the
/// options' words are the core's, the same the learner's card offers.
fn choice<T: Copy + PartialEq + Send + Sync + 'static>(
    id: &'static str,
    label: &'static str,
    key: &'static str,
    options: Vec<(T, &'static str)>,
    get: fn(&Settings) -> T,
    set: fn(&mut Settings, T),
) -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let spec = CHOICES
        .iter()
        .find(|c| c.key == key)
        .expect("a choice the core names");
    let codes = options.clone();
    view! {
        <label for=id>{move || tr(lang.get(), label)}</label>
        <select
            id=id
            data-testid=id
            on:change=move |e| {
                let code = event_target_value(&e);
                if let Some((v, _)) = codes.iter().find(|(_, c)| *c == code) {
                    lab.settings.update(|s| set(s, *v));
                }
            }
        >
            {options.into_iter().map(|(v, code)| {
                let words = spec.option(code).expect("an option the core names");
                view! {
                    <option value=code selected=move || lab.settings.with(|s| get(s) == v)>
                        {move || words.get(lang.get()).to_string()}
                    </option>
                }
            }).collect_view()}
        </select>
        <ControlMistake setting=id.replace('-', "_") />
    }
}

#[component]
pub fn Controls() -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let s = lab.settings;
    let threshold = Signal::derive(move || Some(s.with(|s| s.ttft_threshold_s)));
    let reset = move |_| {
        if let Some(l) = lab.loaded.get_untracked() {
            lab.load(l, &[]);
        }
    };
    view! {
        <section class="controls" aria-labelledby="controls-h">
            <h2 id="controls-h">{move || tr(lang.get(), "controls")}</h2>
            <fieldset>
                <legend>{move || tr(lang.get(), "slo")}</legend>
                <input
                    id="threshold-range"
                    data-testid="threshold-range"
                    type="range"
                    min="0"
                    max="3"
                    step="0.05"
                    aria-label=move || tr(lang.get(), "threshold")
                    prop:value=move || s.with(|s| s.ttft_threshold_s).to_string()
                    on:input=move |e| {
                        if let Ok(Some(next)) = s.with_untracked(|s| s.with_typed("t", &event_target_value(&e))) {
                            s.set(next);
                        }
                    }
                />
                <NumberField id="threshold-input" label="threshold" key="t" value=threshold />
                {choice("comparison", "comparison", "cmp",
                    vec![(Comparison::Le, "le"), (Comparison::Lt, "lt")],
                    |s| s.comparison, |s, v| s.comparison = v)}
                {choice("first-token", "ttft_ends_at", "ft",
                    vec![(FirstToken::Content, "content"), (FirstToken::AnyOutput, "any")],
                    |s| s.population.first_token, |s, v| s.population.first_token = v)}
                {choice("latency-from", "latency_from", "lf",
                    vec![(LatencyOrigin::Actual, "actual"), (LatencyOrigin::Intended, "intended")],
                    |s| s.population.latency_from, |s, v| s.population.latency_from = v)}
            </fieldset>
            <fieldset>
                <legend>{move || tr(lang.get(), "window_cost")}</legend>
                <NumberField id="window-input" label="window_s" key="w"
                    value=Signal::derive(move || s.with(|s| s.window_s)) step="1" />
                <NumberField id="cost-input" label="cost" key="cost"
                    value=Signal::derive(move || s.with(|s| s.window_cost)) step="0.01" />
                <label for="currency-input">{move || tr(lang.get(), "currency")}</label>
                <input
                    id="currency-input"
                    data-testid="currency-input"
                    type="text"
                    maxlength="12"
                    prop:value=move || s.with(|s| s.currency.clone())
                    on:change=move |e| s.update(|s| s.currency = event_target_value(&e).trim().to_string())
                />
            </fieldset>
            <fieldset>
                <legend>{move || tr(lang.get(), "percentile")}</legend>
                {choice("percentile-method", "method", "pm",
                    vec![
                        (PercentileMethod::NearestRank, "nearest-rank"),
                        (PercentileMethod::Linear, "linear"),
                        (PercentileMethod::Lower, "lower"),
                        (PercentileMethod::Higher, "higher"),
                    ],
                    |s| s.percentile, |s, v| s.percentile = v)}
                <NumberField id="p-input" label="p" key="p"
                    value=Signal::derive(move || Some(s.with(|s| s.p))) step="1" />
            </fieldset>
            <fieldset>
                <legend>{move || tr(lang.get(), "denominators")}</legend>
                {choice("failure-denominator", "failure_denominator", "fd",
                    vec![
                        (FailureDenominator::AllAttempts, "all_attempts"),
                        (FailureDenominator::Successes, "successes"),
                        (FailureDenominator::FailedRowsDeleted, "failed_rows_deleted"),
                    ],
                    |s| s.population.failure_denominator, |s, v| s.population.failure_denominator = v)}
                {choice("missing-ttft", "missing_ttft", "mt",
                    vec![(MissingTtft::KeepMissing, "keep_missing"), (MissingTtft::TreatAsZero, "treat_as_zero")],
                    |s| s.population.missing_ttft, |s, v| s.population.missing_ttft = v)}
                {choice("warmup", "warmup_policy", "wu",
                    vec![(WarmupPolicy::Exclude, "exclude"), (WarmupPolicy::Include, "include")],
                    |s| s.population.warmup, |s, v| s.population.warmup = v)}
                {choice("quality", "quality_rule", "qr",
                    vec![(QualityRule::Required, "required"), (QualityRule::Ignored, "ignored")],
                    |s| s.population.quality, |s, v| s.population.quality = v)}
            </fieldset>
            <button class="secondary" data-testid="reset" on:click=reset>{move || tr(lang.get(), "reset")}</button>
        </section>
    }
}

/// The false conclusion of a wrong choice, right under the control that made it (from the core).
#[component]
fn ControlMistake(setting: String) -> impl IntoView {
    let lab = use_lab();
    move || {
        let l: Lang = lab.lang.get();
        lab.settings.with(|s| s.mistakes()).into_iter().filter(|m| m.setting == setting).map(|m| view! {
            <p class="mistake" role="note" data-testid="mistake" data-setting=m.setting>
                <strong>"⚠ "{m.label.get(l).to_string()}</strong>" "{m.false_conclusion.get(l).to_string()}
            </p>
        }).collect_view()
    }
}
