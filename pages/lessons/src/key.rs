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

use crate::page::{use_page, Page};
use crate::words::w;

const STYLE_ID: &str = "tracelab-lesson-hides";

/// The style sheet that hides `hidden` in the lab's page, each kind of place the course names
/// ([`LabHidden`]) by the lab's own `data-testid`s: each figure card's value, formula, interval
/// and notes (its heading stays, with a note saying why the rest is hidden), and the figure in
/// the strip a narrow frame shows; the "since the last edit" line, which names what moved; the
/// charts' percentiles (the TTFT chart's tail label, the histogram's markers) and the run checks;
/// the running figures and the tally; a one-attempt sample's row TTFT, E2E and gaps (the table,
/// the "why" panel, the request's timeline); every verdict, by word or by colour; the charts'
/// failure counts; and the card downloads and the link to the compare page, which show every
/// figure.
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
    // Hidden, not shrunk to nothing: a screen reader (the line is a live region) reads neither.
    let mut css = format!("[data-testid=changes]{{visibility:hidden!important}}\n[data-testid=changes]::after{{content:\"{moved}\";visibility:visible}}\n");
    // The card downloads write every figure out; the compare page shows the run's figures
    // without any of this.
    css.push_str(&format!(
        "{}{{display:none!important}}\n",
        ["export-card-md", "export-card-json", "compare-link"]
            .map(|t| format!("[data-testid=\"{t}\"]"))
            .join(",")
    ));
    for key in &hidden.figures {
        css.push_str(&format!(
            "[data-testid=\"metric-{key}\"]>:not(h3){{display:none!important}}\n[data-testid=\"metric-{key}\"]::after{{content:\"({note})\";display:block;color:#555;font-size:.85rem}}\n"
        ));
        // The same figure in the strip a narrow frame keeps at its bottom (figure_strip.rs).
        css.push_str(&format!(
            "[data-testid=\"strip-{key}\"]{{display:none!important}}\n"
        ));
    }
    if hidden.percentiles {
        css.push_str(&hide(&["tail-label", "run-checks", "hist-marker"]));
    }
    if hidden.running {
        css.push_str(&hide(&["running"]));
    }
    if hidden.figures.contains("qualified_count") {
        css.push_str(&hide(&["tally"]));
    }
    if hidden.row_ttft {
        css.push_str("[data-testid=row-ttft],[data-testid=why] .checks li:nth-child(2) .a{visibility:hidden!important}\n");
        css.push_str(&hide(&["request-ttft"]));
    }
    if hidden.row_e2e {
        css.push_str(&hide(&["request-e2e"]));
    }
    if hidden.row_gaps {
        css.push_str(&hide(&["request-gap"]));
    }
    if hidden.verdicts {
        css.push_str(VERDICTS_CSS);
    }
    if hidden.failures {
        css.push_str(&hide(&[
            "no-ttft-count",
            "failures-apart",
            "hist-failures",
            "heat-failed",
        ]));
    }
    css
}

/// A rule that hides the lab's elements with these `data-testid`s, keeping their place.
fn hide(testids: &[&str]) -> String {
    let list: Vec<String> = testids
        .iter()
        .map(|t| format!("[data-testid=\"{t}\"]"))
        .collect();
    format!("{}{{visibility:hidden!important}}\n", list.join(","))
}

/// Every verdict the lab shows, by word or by colour: the table's verdict and reason columns and
/// its green rows, the tally, and the colours of the rows' marks in the TTFT chart, the request's
/// timeline and the run chart (all grey), with the colour key that would name them.
const VERDICTS_CSS: &str = "[data-testid=verdict],[data-testid=reason],[data-testid=tally],[data-testid=chart-legend]{visibility:hidden!important}\n.attempt-row.qualified{background:none!important}\n[data-testid=ttft-dot]{fill:#999!important;stroke:#999!important}\n[data-testid=ttft-dots]{stroke:#999!important}\n[data-testid=run-bar] rect.wait,[data-testid=run-bar] rect.stream,[data-testid=request-chart] rect.wait,[data-testid=request-chart] rect.stream{fill:#999!important}\n";

/// What a "judge first" pass hides in the lab: every verdict of a row (the "why" panel's, the
/// table's, the row colours in the table and every chart, the running tally and its figures so
/// far), so the call comes first.
const JUDGING_CSS: &str = "[data-testid=why-verdict],[data-testid=why] .checks,[data-testid=running]{visibility:hidden!important}\n";

/// What the lab beside the open lesson hides now (reactive): nothing before the course is read.
pub fn hidden_now(page: Page) -> LabHidden {
    let id = page.lesson.get();
    let Some(course) = page.course.get() else {
        return LabHidden::default();
    };
    let Some(lesson) = course.lesson(&id) else {
        return LabHidden::default();
    };
    page.samples.with(|samples| {
        page.progress.with(|p| {
            lab_hidden(lesson, p, page.audience(), |name| {
                samples.get(name).map(|t| t.attempts.len())
            })
        })
    })
}

/// Keeps the frame's style sheet equal to what the lesson hides now.
#[component]
pub fn FrameHiding() -> impl IntoView {
    use wasm_bindgen::JsCast;
    let page = use_page();
    Effect::new(move |_| {
        page.frame_loads.track();
        let l = page.lang.get();
        let hidden = hidden_now(page);
        let mut css = style_for(&hidden, l, page.teacher);
        if page.judging.get() {
            css.push_str(VERDICTS_CSS);
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
