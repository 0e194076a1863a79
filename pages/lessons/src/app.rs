//! The page's state and layout: the course (fetched, so a teacher's edit needs no rebuild), the
//! open lesson, the samples exercises are checked on, the learner's progress (localStorage),
//! and the lab frame beside, which every step drives through a permalink.

use std::collections::HashMap;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_course::{segments, Course, Progress, Segment};

use crate::judge::JudgeFirst;
use crate::key::{hidden_now, AnswerKey, FrameHiding};
use tracelab_core::Lang;

use crate::card::{CardPanel, SelfCheck};
use crate::exercise::ExerciseWidget;
use tracelab_web::{fetch_text, page_lang, query, set_query, storage};

use crate::page::{use_page, Page, CLASSROOM_SAMPLE, PROGRESS_KEY};
use crate::words::w;

#[component]
pub fn App() -> impl IntoView {
    let lang = page_lang();
    let stored = storage().and_then(|s| s.get_item(PROGRESS_KEY).ok().flatten());
    let (progress, notice) = match stored.map(|s| Progress::from_json(&s)) {
        None => (Progress::default(), None),
        Some(Ok(p)) => (p, None),
        Some(Err(e)) => (
            Progress::default(),
            Some(format!(
                "Saved progress could not be read and was reset: {e}"
            )),
        ),
    };
    let page = Page {
        lang: RwSignal::new(lang),
        course: RwSignal::new(None),
        error: RwSignal::new(None),
        lesson: RwSignal::new(
            query("lesson")
                .or(progress.lesson.clone())
                .unwrap_or_default(),
        ),
        samples: RwSignal::new(HashMap::new()),
        progress: RwSignal::new(progress),
        lab_src: RwSignal::new(format!(
            "../?sample={CLASSROOM_SAMPLE}&lang={}",
            lang.code()
        )),
        lab_link: RwSignal::new(format!(
            "../?sample={CLASSROOM_SAMPLE}&lang={}",
            lang.code()
        )),
        notice: RwSignal::new(notice),
        teacher: query("teacher").is_some_and(|v| v == "1"),
        frame_loads: RwSignal::new(0),
        judging: RwSignal::new(false),
        lab_lowered: RwSignal::new(true),
    };
    provide_context(page);
    // The lab in the frame speaks the page's language: switched in place (the learner's work
    // there stays), and the links to it carry the language from now on.
    Effect::new(move |_| {
        use wasm_bindgen::JsCast;
        let code = page.lang.get().code();
        page.lab_link.update(|link| *link = with_lang(link, code));
        let frame = document()
            .get_element_by_id("lab-frame")
            .and_then(|e| e.dyn_into::<web_sys::HtmlIFrameElement>().ok());
        if let Some(window) = frame.and_then(|f| f.content_window()) {
            if let Some(f) = js_sys::Reflect::get(&window, &"tracelabLang".into())
                .ok()
                .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
            {
                let _ = f.call1(&window, &code.into());
            }
        }
    });

    spawn_local(async move {
        match fetch_text("content/course.json")
            .await
            .and_then(|t| Course::parse(&t).map_err(|e| e.in_file("course.json").to_string()))
        {
            Ok(course) => {
                page.progress.update(|p| {
                    p.retain_known(&course);
                });
                let known = course.lesson(&page.lesson.get_untracked()).is_some();
                if !known {
                    page.lesson.set(
                        course
                            .lessons
                            .first()
                            .map(|l| l.id.clone())
                            .unwrap_or_default(),
                    );
                }
                page.course.set(Some(Arc::new(course)));
            }
            Err(e) => page.error.set(Some(e)),
        }
    });

    Effect::new(move |_| {
        let l = page.lang.get();
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute("lang", if l == Lang::Zh { "zh-CN" } else { "en" });
        }
    });
    Effect::new(move |_| {
        let id = page.lesson.get();
        page.progress.update(|p| p.lesson = Some(id));
        page.save_progress();
    });
    // The open lesson and the language are in the address, so a reload or a shared link opens
    // the same lesson. Switching to another lesson starts the lab beside afresh on that lesson's
    // own sample and settings: the last lesson's step (a mistake's setting) and its notice stay
    // behind.
    Effect::new(move |previous: Option<String>| {
        let id = page.lesson.get();
        if !id.is_empty() {
            set_query("lesson", &id);
        }
        if previous.is_some_and(|p| !p.is_empty() && p != id)
            && page.course.with_untracked(|c| c.is_some())
        {
            page.start_lesson(&id);
        }
        id
    });
    Effect::new(move |_| set_query("lang", page.lang.get().code()));

    if query("key").is_some_and(|v| v == "1") {
        return view! { <AnswerKey /> }.into_any();
    }
    let lowered = page.lab_lowered;

    view! {
        <FrameHiding />
        <header class="top">
            <div>
                <h1>{move || w(page.lang.get(), "title")}</h1>
                <p class="subtitle">{move || w(page.lang.get(), "course")}</p>
            </div>
            <div class="top-actions">
                <button class="lang-switch" data-testid="lang-switch" title=move || w(page.lang.get(), "language_label")
                    on:click=move |_| page.lang.update(|l| *l = if *l == Lang::En { Lang::Zh } else { Lang::En })>
                    {move || w(page.lang.get(), "language")}
                </button>
            </div>
        </header>
        {move || page.error.get().map(|e| view! { <p class="error-panel" role="alert" data-testid="lesson-error">{e}</p> })}
        {move || page.notice.get().map(|n| view! { <p class="notice" role="status" data-testid="notice">{n}</p> })}
        {page.teacher.then(|| view! {
            <p class="notice teacher" data-testid="teacher">
                {move || w(page.lang.get(), "teacher")}" "
                <a data-testid="open-key" target="_blank" rel="noopener" href=move || format!("?key=1&lang={}", page.lang.get().code())>{move || w(page.lang.get(), "open_key")}</a>
            </p>
        })}
        <div class="lessons-layout" class:lab-lowered=move || lowered.get()>
            <main class="lesson-col" id="lesson-main">
                <LessonNav />
                <LessonBody />
                <Notes />
                <CardPanel />
                <SelfCheck />
                <ProgressFile />
            </main>
            <aside class="lab-col" class:lowered=move || lowered.get() aria-label=move || w(page.lang.get(), "lab_frame")>
                <p class="lab-links">
                    // A tab of its own would show the lab without what this lesson hides in the
                    // frame: it opens once nothing is hidden.
                    {move || if page.course.with(Option::is_none) || !hidden_now(page).is_empty() {
                        let (said, why) = if page.teacher { ("open_lab_teacher", "open_lab_teacher_why") } else { ("open_lab_held", "open_lab_held_why") };
                        let l = page.lang.get();
                        view! { <span class="hint" data-testid="open-lab-held" title=w(l, why)>{w(l, said)}</span> }.into_any()
                    } else {
                        view! { <a data-testid="open-lab" href=move || page.lab_link.get() target="_blank" rel="noopener">{move || w(page.lang.get(), "open_lab")}</a> }.into_any()
                    }}
                    // Only on a narrow screen, where the lab is docked under the lesson.
                    <button class="lab-toggle secondary" data-testid="lab-toggle" aria-controls="lab-frame" aria-expanded=move || (!lowered.get()).to_string()
                        on:click=move |_| lowered.update(|l| *l = !*l)>
                        {move || w(page.lang.get(), if lowered.get() { "raise_lab" } else { "lower_lab" })}
                    </button>
                </p>
                <iframe id="lab-frame" data-testid="lab-frame" title=move || w(page.lang.get(), "lab_frame") src=move || page.lab_src.get()
                    on:load=move |_| page.frame_loads.update(|n| *n += 1)></iframe>
            </aside>
        </div>
    }
    .into_any()
}

#[component]
fn LessonNav() -> impl IntoView {
    let page = use_page();
    view! {
        <nav class="lesson-nav" aria-label=move || w(page.lang.get(), "lessons_nav")>
            {move || {
                let l = page.lang.get();
                let current = page.lesson.get();
                page.course.get().map(|c| c.lessons.iter().map(|lesson| {
                    let id = lesson.id.clone();
                    let active = id == current;
                    view! {
                        <button class="lesson-tab" class:active=active aria-current=if active { "page" } else { "false" }
                            data-testid=format!("lesson-{}", lesson.id)
                            on:click=move |_| page.lesson.set(id.clone())>
                            {format!("{}. {}", lesson.number, lesson.title.get(l))}
                        </button>
                    }
                }).collect_view())
            }}
            <button class="print" on:click=move |_| { let _ = web_sys::window().map(|w| w.print()); }>{move || w(page.lang.get(), "print")}</button>
            <span class="solved" data-testid="solved">{move || format!("{} {}", page.progress.with(|p| p.solved()), w(page.lang.get(), "solved"))}</span>
        </nav>
    }
}

/// The lesson's Markdown, with its step and exercise markers turned into buttons and widgets.
#[component]
fn LessonBody() -> impl IntoView {
    let page = use_page();
    let text: RwSignal<Option<(String, String)>> = RwSignal::new(None);
    Effect::new(move |_| {
        let l = page.lang.get();
        let id = page.lesson.get();
        let Some(course) = page.course.get() else {
            return;
        };
        let Some(lesson) = course.lesson(&id) else {
            return;
        };
        let file = lesson.text.get(l).to_string();
        let key = format!("{id}/{}", l.code());
        spawn_local(async move {
            match fetch_text(&format!("content/{file}")).await {
                Ok(md) => text.set(Some((key, md))),
                Err(e) => page.error.set(Some(e)),
            }
        });
    });
    view! {
        <article class="lesson" data-testid="lesson" aria-live="polite">
            {move || text.get().map(|(_, md)| {
                segments(&md).into_iter().map(|segment| match segment {
                    Segment::Markdown(md) => view! { <div class="md" inner_html=markdown_html(md)></div> }.into_any(),
                    Segment::Step(id) => {
                        let label = page.course.with(|c| c.as_ref().and_then(|c| c.step(id).map(|(_, s)| s.label.clone())));
                        let diagram = page.course.with(|c| c.as_ref().and_then(|c| c.step(id).and_then(|(_, s)| s.diagram.clone())));
                        if let Some(file) = diagram {
                            // At its own size (its smallest text is 12 px), scrolling sideways in
                            // a column narrower than the drawing; the file alone can be zoomed.
                            let href = format!("content/{file}");
                            return view! {
                                <figure class="diagram-figure" data-testid="diagram-figure">
                                    <div class="diagram-scroll" tabindex="0" data-testid="diagram-scroll">
                                        <img src=href.clone() alt=move || label.as_ref().map(|t| t.get(page.lang.get()).to_string()).unwrap_or_default() />
                                    </div>
                                    <figcaption class="diagram-hint">
                                        {move || crate::words::w(page.lang.get(), "diagram_scroll")}" "
                                        <a href=href target="_blank" rel="noopener" data-testid="diagram-open">{move || crate::words::w(page.lang.get(), "diagram_open")}</a>
                                    </figcaption>
                                </figure>
                            }.into_any();
                        }
                        let id = id.to_string();
                        let testid = format!("step-{id}");
                        view! {
                            <p class="step-line">
                                <button class="step-button" data-testid=testid on:click=move |e| {
                                    page.run_step(&id);
                                    raise_lab_beside(page, &e);
                                }>
                                    "▶ "{move || label.as_ref().map(|t| t.get(page.lang.get()).to_string()).unwrap_or_default()}
                                </button>
                            </p>
                        }.into_any()
                    }
                    Segment::Exercise(id) => view! { <ExerciseWidget id=id.to_string() /> }.into_any(),
                    Segment::Worked(list, md) => worked_view(list.to_string(), markdown_html(md)).into_any(),
                    Segment::Judge(sample) => view! { <JudgeFirst sample=sample.to_string() /> }.into_any(),
                }).collect_view()
            })}
        </article>
    }
}

/// A worked answer: closed until its exercises are answered (or the learner asks, which is
/// recorded); never opened on a teacher's page, whose answers are in the answer key. A closed one
/// is not in the page at all, so neither a screen nor a printed worksheet shows it.
fn worked_view(list: String, html: String) -> impl IntoView {
    let page = use_page();
    let key = Progress::worked_key(&list);
    move || {
        let l = page.lang.get();
        if page.teacher {
            return view! { <p class="worked-locked" data-testid="worked-locked">{w(l, "worked_teacher")}</p> }.into_any();
        }
        if page.progress.with(|p| p.worked_open(&list)) {
            return view! {
                <section class="worked" data-testid="worked" aria-label=w(l, "worked")>
                    <p class="worked-label">{w(l, "worked")}</p>
                    <div class="md" inner_html=html.clone()></div>
                </section>
            }
            .into_any();
        }
        let key = key.clone();
        view! {
            <p class="worked-locked" data-testid="worked-locked">
                {w(l, "worked_locked")}" "
                <button class="link" data-testid="show-worked" on:click=move |_| {
                    page.progress.update(|p| p.reveal(&key));
                    page.save_progress();
                }>{w(l, "show_worked")}</button>
                " "<span class="hint">{w(l, "worked_recorded")}</span>
            </p>
        }
        .into_any()
    }
}

/// CommonMark with tables, rendered to HTML. Raw HTML in a lesson is shown as text, not run; a
/// line break between two Chinese characters is no space (`join_cjk_lines`).
fn markdown_html(md: &str) -> String {
    use pulldown_cmark::{Event, Options, Parser};
    let md = tracelab_course::join_cjk_lines(md);
    let parser = Parser::new_ext(&md, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(
        |e| match e {
            Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
            other => other,
        },
    );
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, parser);
    // A code block wider than its column scrolls: the keyboard must reach it.
    out.replace("<pre>", "<pre tabindex=\"0\">")
}

#[component]
fn Notes() -> impl IntoView {
    let page = use_page();
    view! {
        <section class="notes">
            <label for="lesson-notes"><strong>{move || w(page.lang.get(), "notes")}</strong></label>
            <textarea id="lesson-notes" data-testid="lesson-notes" rows="3"
                prop:value=move || { let id = page.lesson.get(); page.progress.with(|p| p.notes.get(&id).cloned().unwrap_or_default()) }
                on:input=move |e| {
                    let id = page.lesson.get_untracked();
                    let v = event_target_value(&e);
                    page.progress.update(|p| { p.notes.insert(id, v); });
                    page.save_progress();
                }></textarea>
        </section>
    }
}

/// Export and import of everything the learner did, so nothing is lost when changing browser.
#[component]
fn ProgressFile() -> impl IntoView {
    let page = use_page();
    let import = move |name: String, text: String| match Progress::from_json(&text) {
        Ok(mut p) => {
            if let Some(course) = page.course.get_untracked() {
                p.retain_known(&course);
            }
            page.progress.set(p);
            page.save_progress();
            page.error.set(None);
            page.notice
                .set(Some(w(page.lang.get_untracked(), "imported").to_string()));
        }
        Err(e) => page.error.set(Some(e.in_file(name).to_string())),
    };
    view! {
        <section class="progress-file">
            <p class="hint">{move || w(page.lang.get(), "saved_here")}</p>
            <button data-testid="export-progress" on:click=move |_| {
                let json = page.progress.with_untracked(|p| p.to_json());
                let _ = tracelab_web::download("trace-lab-progress.json", "application/json", &json);
            }>{move || w(page.lang.get(), "export_progress")}</button>
            <label for="import-progress">{move || w(page.lang.get(), "import_progress")}</label>
            <input id="import-progress" data-testid="import-progress" type="file" accept=".json,application/json"
                on:change=move |e| page.read_chosen_file(&e, import) />
        </section>
    }
}

/// On a narrow screen a step raises the docked lab, then keeps the step itself in view above
/// it (the page's scroll padding is the dock's height), so the reader sees both.
fn raise_lab_beside(page: Page, e: &leptos::ev::MouseEvent) {
    use wasm_bindgen::JsCast;
    page.lab_lowered.set(false);
    let Some(button) = e
        .current_target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    else {
        return;
    };
    request_animation_frame(move || {
        let options = web_sys::ScrollIntoViewOptions::new();
        options.set_block(web_sys::ScrollLogicalPosition::Nearest);
        button.scroll_into_view_with_scroll_into_view_options(&options);
    });
}

/// `address` with its `lang=` parameter set to `code` (added when missing).
fn with_lang(address: &str, code: &str) -> String {
    let (path, query) = address.split_once('?').unwrap_or((address, ""));
    let mut pairs: Vec<String> = query
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("lang="))
        .map(String::from)
        .collect();
    pairs.push(format!("lang={code}"));
    format!("{path}?{}", pairs.join("&"))
}
