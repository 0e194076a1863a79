//! The page's state, shared by its parts through Leptos context: the course, the open lesson,
//! the samples exercises are checked on, the learner's progress (localStorage) and the lab
//! frame's address (the query string, storage and fetch are the kit's, `tracelab_web`).

use std::collections::HashMap;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_core::{parse::parse_trace, Lang, Trace};
use tracelab_course::{settings_for, Audience, Course, Progress};

use tracelab_web::{fetch_text, storage};

use crate::words::w;

pub(crate) const PROGRESS_KEY: &str = "tracelab.v1.lessons";
/// What the lab beside shows first, and for a lesson none of whose steps loads a sample.
pub(crate) const CLASSROOM_SAMPLE: &str = "ten-requests.jsonl";

#[derive(Clone, Copy)]
pub struct Page {
    pub lang: RwSignal<Lang>,
    pub course: RwSignal<Option<Arc<Course>>>,
    pub error: RwSignal<Option<String>>,
    pub lesson: RwSignal<String>,
    pub samples: RwSignal<HashMap<String, Arc<Trace>>>,
    pub progress: RwSignal<Progress>,
    /// The frame's address: set when a step needs another trace (it reloads the frame).
    pub lab_src: RwSignal<String>,
    /// The lab as the lesson last set it, for "open in its own tab".
    pub lab_link: RwSignal<String>,
    pub notice: RwSignal<Option<String>>,
    /// Teacher mode (`?teacher=1`): the page never reveals an answer.
    pub teacher: bool,
    /// Counts the frame's page loads, so what the lab must hide is put back after a reload.
    pub frame_loads: RwSignal<u32>,
    /// A "judge first" pass is on: the lab beside hides its verdicts.
    pub judging: RwSignal<bool>,
    /// Below 761 px the lab is docked under the lesson: lowered to a bar while the learner
    /// reads, raised by a step so the step and what it changes are seen together.
    pub lab_lowered: RwSignal<bool>,
}

pub fn use_page() -> Page {
    expect_context::<Page>()
}

impl Page {
    /// Reads the file a learner chose in a file input, as text, then hands over its name and
    /// text. The input is cleared, so choosing the same file again (after fixing it) is a change
    /// too; a file that is not text is an error naming it.
    pub fn read_chosen_file(
        self,
        e: &leptos::ev::Event,
        then: impl FnOnce(String, String) + 'static,
    ) {
        use wasm_bindgen::JsCast;
        let input = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
        let Some(file) = input
            .as_ref()
            .and_then(|i| i.files())
            .and_then(|f| f.get(0))
        else {
            return;
        };
        if let Some(i) = &input {
            i.set_value("");
        }
        leptos::task::spawn_local(async move {
            match wasm_bindgen_futures::JsFuture::from(file.text())
                .await
                .ok()
                .and_then(|v| v.as_string())
            {
                Some(text) => then(file.name(), text),
                None => self.error.set(Some(format!(
                    "{}: {}",
                    file.name(),
                    if self.lang.get_untracked() == Lang::Zh {
                        "无法作为文本读取"
                    } else {
                        "could not be read as text"
                    }
                ))),
            }
        });
    }

    /// Fetches a sample once; later calls find it in the map.
    pub fn ensure_sample(&self, name: String, then: impl FnOnce(Arc<Trace>) + 'static) {
        if let Some(t) = self.samples.with_untracked(|m| m.get(&name).cloned()) {
            then(t);
            return;
        }
        let page = *self;
        spawn_local(async move {
            match fetch_text(&format!("../samples/{name}"))
                .await
                .and_then(|text| parse_trace(&name, &text).map_err(|e| e.to_string()))
            {
                Ok(trace) => {
                    let trace = Arc::new(trace);
                    page.samples.update(|m| {
                        m.insert(name, trace.clone());
                    });
                    then(trace);
                }
                Err(e) => page.error.set(Some(e)),
            }
        });
    }

    /// Points the lab frame at a step: its sample, its settings on top of the sample's own, its row.
    pub fn run_step(&self, step_id: &str) {
        let Some(course) = self.course.get_untracked() else {
            return;
        };
        let Some((_, step)) = course.step(step_id) else {
            return;
        };
        let lang = self.lang.get_untracked().code();
        let row = step.row.map(|r| format!("&row={r}")).unwrap_or_default();
        let Some(sample) = step.sample.clone() else {
            self.notice
                .set(Some(w(self.lang.get_untracked(), "diagram").to_string()));
            return;
        };
        let pairs = step.settings.clone();
        let page = *self;
        self.ensure_sample(sample.clone(), move |trace| {
            match settings_for(&trace.header, &pairs) {
                Ok(settings) => {
                    let mut q = format!("../?sample={sample}");
                    for (k, v) in settings.to_pairs() {
                        q.push_str(&format!("&{k}={}", js_sys::encode_uri_component(&v)));
                    }
                    let address = format!("{q}{row}&lang={lang}");
                    // The lab already showing this sample takes the step in place, so its "since the
                    // last edit" shows what the step changed; otherwise it loads the step's address.
                    if !apply_in_frame(&address) {
                        page.lab_src.set(address.clone());
                    }
                    page.lab_link.set(address);
                    page.notice
                        .set(Some(w(page.lang.get_untracked(), "step_done").to_string()));
                }
                Err(e) => page.error.set(Some(e)),
            }
        });
    }

    /// The lab beside as a lesson starts: its first sample with that sample's own settings, no
    /// what-if edits, no step taken (so no step's notice), no "judge first" pass. The frame is
    /// loaded afresh, even on the address it already has.
    pub fn start_lesson(&self, lesson_id: &str) {
        let sample = self
            .course
            .with_untracked(|c| {
                c.as_ref()
                    .and_then(|c| c.lesson(lesson_id))
                    .and_then(|l| l.start_sample().map(str::to_string))
            })
            .unwrap_or_else(|| CLASSROOM_SAMPLE.to_string());
        let address = format!(
            "../?sample={sample}&lang={}",
            self.lang.get_untracked().code()
        );
        self.notice.set(None);
        self.error.set(None);
        self.judging.set(false);
        if self.lab_src.get_untracked() == address {
            // The same src attribute would not navigate the frame: ask its window to.
            if let Some(window) = frame_window() {
                let _ = window.location().replace(&address);
            }
        } else {
            self.lab_src.set(address.clone());
        }
        self.lab_link.set(address);
    }

    /// Selects row `i` (0-based) of `sample` in the lab beside, with the sample's own settings.
    pub fn show_row(&self, sample: &str, i: usize) {
        let address = format!(
            "../?sample={sample}&row={}&lang={}",
            i + 1,
            self.lang.get_untracked().code()
        );
        if !apply_in_frame(&address) {
            self.lab_src.set(address.clone());
        }
        self.lab_link.set(address);
    }

    /// Who reads the feedback: the teacher's page names no answer.
    pub fn audience(&self) -> Audience {
        if self.teacher {
            Audience::Teacher
        } else {
            Audience::Learner
        }
    }

    pub fn save_progress(&self) {
        if let Some(store) = storage() {
            let _ = store.set_item(PROGRESS_KEY, &self.progress.with_untracked(|p| p.to_json()));
        }
    }
}

/// The lab frame's window, once the frame is in the page.
fn frame_window() -> Option<web_sys::Window> {
    use wasm_bindgen::JsCast;
    document()
        .get_element_by_id("lab-frame")
        .and_then(|e| e.dyn_into::<web_sys::HtmlIFrameElement>().ok())
        .and_then(|f| f.content_window())
}

/// Asks the lab in the frame to take a step's address in place (`window.tracelabApply`).
fn apply_in_frame(address: &str) -> bool {
    use wasm_bindgen::JsCast;
    let query = address.split_once('?').map_or("", |(_, q)| q);
    let Some(window) = frame_window() else {
        return false;
    };
    let Some(apply) = js_sys::Reflect::get(&window, &"tracelabApply".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
    else {
        return false;
    };
    apply
        .call1(&window, &format!("?{query}").into())
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}
