//! The learner's notes, kept in this browser only.

use leptos::prelude::*;

use crate::i18n::tr;
use crate::state::use_lab;

#[component]
pub fn Notes() -> impl IntoView {
    let lab = use_lab();
    view! {
        <section class="notes" aria-labelledby="notes-h">
            <h2 id="notes-h">{move || tr(lab.lang.get(), "notes")}</h2>
            <textarea
                id="notes"
                data-testid="notes"
                rows="4"
                aria-labelledby="notes-h"
                aria-describedby="notes-hint"
                prop:value=move || lab.notes.get()
                on:input=move |e| lab.notes.set(event_target_value(&e))
            ></textarea>
            <p id="notes-hint" class="hint">{move || tr(lab.lang.get(), "saved_here")}</p>
        </section>
    }
}
