//! What a lesson keeps from the learner until they have answered, and the teacher's answer key.
//!
//! * [`FrameHiding`]: the lab in the frame beside a lesson hides each figure an exercise of the
//!   lesson asks for, until the learner has answered it right or asked for the core's figure
//!   (always on a teacher's page). The course decides which figures ([`lab_hidden`]); this puts a
//!   style sheet into the frame's page (same origin), so the lab's own bundle carries nothing
//!   for it and a reload of the frame gets it back.
//!   During a "judge first" pass (`judge.rs`) it also hides the lab's verdicts.
//! * [`AnswerKey`] (`/lessons/?key=1`): every exercise's answer as the core computes it on the
//!   exercise's own sample ([`answer_sheet`]), printable, apart from the worksheet.

use leptos::prelude::*;
use tracelab_core::Lang;
use tracelab_course::{answer_sheet, key_samples, lab_hidden, LabHidden};

use crate::page::use_page;
use crate::words::w;

const STYLE_ID: &str = "tracelab-lesson-hides";

/// The style sheet that hides `hidden` in the lab's page: each figure card's value, formula,
/// interval and notes (its heading stays, with a note saying why the rest is hidden), and the
/// figure in the strip a narrow frame shows; the
/// "since the last edit" line, which names what moved; the chart's tail label, the run checks
/// and the running tally with the figures they repeat; a one-attempt sample's row TTFT.
fn style_for(hidden: &LabHidden, lang: Lang, teacher: bool) -> String {
    if hidden.is_empty() {
        return String::new();
    }
    let note = w(
        lang,
        if teacher {
            "lab_hidden_teacher"
        } else {
            "lab_hidden"
        },
    )
    .replace('"', "'");
    let moved = w(lang, "lab_changes_hidden").replace('"', "'");
    let mut css = format!("[data-testid=changes]{{font-size:0!important}}\n[data-testid=changes]::after{{content:\"{moved}\";font-size:.85rem}}\n");
    for key in &hidden.figures {
        css.push_str(&format!(
            "[data-testid=\"metric-{key}\"]>:not(h3){{display:none!important}}\n[data-testid=\"metric-{key}\"]::after{{content:\"({note})\";display:block;color:#555;font-size:.85rem}}\n"
        ));
        // The same figure in the strip a narrow frame keeps at its bottom (figure_strip.rs).
        css.push_str(&format!(
            "[data-testid=\"strip-{key}\"]{{display:none!important}}\n"
        ));
    }
    if hidden.figures.iter().any(|k| k.starts_with("ttft_")) {
        css.push_str(
            "[data-testid=tail-label],[data-testid=run-checks]{visibility:hidden!important}\n",
        );
    }
    if hidden.figures.contains("qualified_count") {
        css.push_str("[data-testid=tally]{visibility:hidden!important}\n");
    }
    if hidden.row_ttft {
        css.push_str("[data-testid=attempts-table] td:nth-child(4),[data-testid=why] .checks li:nth-child(2) .a{visibility:hidden!important}\n");
    }
    css
}

/// What a "judge first" pass hides in the lab: every verdict of a row (the "why" panel's, the
/// table's, the row colours, the running tally and its figures so far), so the call comes first.
const JUDGING_CSS: &str = "[data-testid=why-verdict],[data-testid=why] .checks,[data-testid=verdict],.attempt-row td:last-child,[data-testid=tally],[data-testid=running]{visibility:hidden!important}\n.attempt-row.qualified{background:none!important}\n[data-testid=ttft-dot]{fill:#999!important;stroke:#999!important}\n";

/// Keeps the frame's style sheet equal to what the lesson hides now.
#[component]
pub fn FrameHiding() -> impl IntoView {
    use wasm_bindgen::JsCast;
    let page = use_page();
    Effect::new(move |_| {
        page.frame_loads.track();
        let l = page.lang.get();
        let id = page.lesson.get();
        let Some(course) = page.course.get() else {
            return;
        };
        let Some(lesson) = course.lesson(&id) else {
            return;
        };
        let hidden = page.samples.with(|samples| {
            page.progress.with(|p| {
                lab_hidden(lesson, p, page.audience(), |name| {
                    samples.get(name).map(|t| t.attempts.len())
                })
            })
        });
        let mut css = style_for(&hidden, l, page.teacher);
        if page.judging.get() {
            css.push_str(JUDGING_CSS);
        }
        let Some(doc) = document()
            .get_element_by_id("lab-frame")
            .and_then(|e| e.dyn_into::<web_sys::HtmlIFrameElement>().ok())
            .and_then(|f| f.content_document())
        else {
            return;
        };
        let style = match doc.get_element_by_id(STYLE_ID) {
            Some(s) => s,
            None => {
                let Ok(s) = doc.create_element("style") else {
                    return;
                };
                s.set_id(STYLE_ID);
                let Ok(Some(head)) = doc.query_selector("head") else {
                    return;
                };
                let _ = head.append_child(&s);
                s
            }
        };
        style.set_text_content(Some(&css));
    });
}

/// The teacher's answer key: a page of its own, printable.
#[component]
pub fn AnswerKey() -> impl IntoView {
    let page = use_page();
    // Every sample an answer needs, fetched once.
    Effect::new(move |_| {
        if let Some(course) = page.course.get() {
            for name in key_samples(&course) {
                page.ensure_sample(name, |_| {});
            }
        }
    });
    view! {
        <main class="answer-key" data-testid="answer-key">
            <header class="key-head">
                <h1>{move || w(page.lang.get(), "answer_key")}</h1>
                <div class="top-actions">
                    <button class="print" on:click=move |_| { let _ = web_sys::window().map(|w| w.print()); }>{move || w(page.lang.get(), "print_key")}</button>
                    <button class="lang-switch" data-testid="lang-switch" title=move || w(page.lang.get(), "language_label")
                        on:click=move |_| page.lang.update(|l| *l = if *l == Lang::En { Lang::Zh } else { Lang::En })>
                        {move || w(page.lang.get(), "language")}
                    </button>
                </div>
            </header>
            <p class="hint">{move || w(page.lang.get(), "answer_key_intro")}</p>
            {move || page.error.get().map(|e| view! { <p class="error-panel" role="alert" data-testid="lesson-error">{e}</p> })}
            {move || {
                let l = page.lang.get();
                let course = page.course.get()?;
                let loaded = page.samples.with(|m| key_samples(&course).iter().all(|n| m.contains_key(n)));
                if !loaded {
                    return Some(view! { <p data-testid="key-loading">{w(l, "key_loading")}</p> }.into_any());
                }
                let sheet = page.samples.with(|m| answer_sheet(&course, |n| m.get(n).cloned()));
                Some(view! {
                    <table class="key-table" data-testid="key-table">
                        <thead><tr>
                            <th scope="col">{w(l, "lesson_n")}</th>
                            <th scope="col">{w(l, "key_exercise")}</th>
                            <th scope="col">{w(l, "key_answer")}</th>
                            <th scope="col">{w(l, "key_why")}</th>
                        </tr></thead>
                        <tbody>
                            {sheet.into_iter().map(|e| {
                                let (answer, failed) = match &e.answer {
                                    Ok(a) => (a.get(l).to_string(), false),
                                    Err(why) => (why.get(l).to_string(), true),
                                };
                                view! {
                                    <tr data-testid=format!("key-{}", e.exercise)>
                                        <td class="num">{w(l, "lesson_numbered").replace("{n}", &e.lesson.to_string())}</td>
                                        <td><span class="mono">{e.exercise.clone()}</span><br/>{e.prompt.get(l).to_string()}</td>
                                        <td class="key-answer" class:error=failed data-testid="key-answer">{answer}</td>
                                        <td class="hint">{e.explain.map(|x| x.get(l).to_string()).unwrap_or_default()}</td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any())
            }}
        </main>
    }
}
