//! One line about the loaded trace: name, size, completeness and what it could measure.

use leptos::prelude::*;
use tracelab_core::{trace::GPU_UNSUPPORTED, Lang};

use crate::i18n::tr;
use crate::loader::Loaded;

#[component]
pub fn TraceSummary(loaded: Loaded, lang: RwSignal<Lang>) -> impl IntoView {
    let trace = loaded.trace.clone();
    let gpu = trace.header.capabilities.gpu_telemetry.clone();
    let unverified = gpu == GPU_UNSUPPORTED;
    let n = trace.attempts.len();
    let warmups = trace.warmup_count();
    let incomplete = trace.is_incomplete();
    view! {
        <section class="trace-summary" data-testid="trace-summary">
            <strong>{move || tr(lang.get(), "trace")}": "</strong>
            <span class="mono">{loaded.name.clone()}</span>
            " · "{n}" "{move || tr(lang.get(), "attempts")}
            " · "{move || tr(lang.get(), if incomplete { "incomplete" } else { "complete" })}
            " · "{move || tr(lang.get(), "warmup")}": "{warmups}
            " · "{move || tr(lang.get(), "gpu")}": "
            <span class:unverified=unverified>
                {move || if unverified { tr(lang.get(), "not_verified").to_string() } else { gpu.clone() }}
            </span>
        </section>
    }
}
