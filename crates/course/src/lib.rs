//! The course: lessons a teacher edits as files — `lessons/course.json` (lessons, lab steps,
//! exercises, self-check, metric-card help) and one Markdown text per lesson and language — and
//! the checks that keep them honest: no lesson can state a number the metrics do not compute.
//!
//! * [`Course::parse`] reads `course.json`; an error names the field
//!   (`lessons[2].exercises[0].anwser: unknown field …`).
//! * [`Course::validate`] finds what a teacher can break by hand: a `[[step:…]]` or
//!   `[[exercise:…]]` marker that points nowhere, an unknown sample, metric or setting, a choice
//!   without exactly one right answer, a missing translation.
//! * [`Course::verify`] recomputes every stated answer with the core on its sample.
//! * [`answer_key`] and [`check`] give the lab an exercise's key and bilingual feedback;
//!   [`ratio_parts`] the options of a "name the numerator, denominator and unit" exercise, the
//!   right one taken from the core's [`Figure`](tracelab_core::Figure) labels.
//! * [`pick_rows`] the rows of a `pick_rows` exercise and [`check_pick`] the learner's pick of
//!   counter-evidence, checked against the core's GPU samples ([`refuting_rows`]).
//! * [`SystemMap`] is the learner's own map of the system path (lesson 1's `draw_map`), checked for
//!   the seed's parts ([`SystemMap::problems`]) and exported as a file like the card.
//! * [`answer_sheet`] is the teacher's answer key (every answer from the core); [`lab_hidden`] what
//!   the lab beside a lesson hides until the learner has answered.
//! * [`MetricCard`] is the card a learner fills (pre-filled from the core, or written first and
//!   then checked: [`MetricCard::check_against_lab`], [`MetricCard::recompute`]); [`Progress`] what the
//!   lab keeps in localStorage and exports as a file.
//!
//! ```
//! use tracelab_course::{answer_key, check, Answer, Course};
//! use tracelab_core::parse::parse_trace;
//! let course = Course::parse(r#"{"version": 1, "lessons": [{"id": "l", "number": 1,
//!   "title": {"en": "Denominators", "zh": "分母"}, "text": {"en": "l.en.md", "zh": "l.zh.md"},
//!   "exercises": [{"id": "fail", "kind": "number", "prompt": {"en": "Failure rate?", "zh": "失败率？"},
//!     "sample": "t.csv", "metric": "failure_rate", "answer": 50, "unit": "%"}]}]}"#).unwrap();
//! let trace = parse_trace("t.csv", "id,outcome,ttft_s,quality\nR1,success,0.2,pass\nR2,connect_error,,not_evaluated\n").unwrap();
//! let exercise = course.exercise("fail").unwrap();
//! let key = answer_key(exercise, &trace);
//! assert_eq!(key, Some(50.0)); // 1 failure / 2 attempts, in %
//! assert!(check(exercise, &Answer::Number { value: 50.0 }, key).correct);
//! ```

mod card;
mod card_check;
mod course;
mod exercise;
mod feedback;
mod json;
mod key;
mod locate;
mod map;
mod markdown;
mod metric;
mod pick;
mod progress;
mod ratio;
mod svg;
mod validate;

pub use card::*;
pub use card_check::*;
pub use course::*;
pub use exercise::*;
pub use feedback::*;
pub use key::*;
pub use map::*;
pub use markdown::*;
pub use metric::*;
pub use pick::*;
pub use progress::*;
pub use ratio::*;
pub use svg::*;

use tracelab_core::text::Text;

pub const COURSE_VERSION: u32 = 1;
/// The `kind` of an exported [`Progress`] file.
pub const PROGRESS_KIND: &str = "tracelab.progress";
/// The `kind` of a learner's [`MetricCard`] file.
pub const CARD_KIND: &str = "tracelab.learner_card";
/// The option id of the core's own (right) answer in a [`ratio_parts`] exercise.
pub const CORE_OPTION: &str = "core";
/// A progress or card file larger than this is refused (localStorage holds about 5 MB).
pub const MAX_IMPORT_BYTES: usize = 4 * 1024 * 1024;

fn t(en: &str, zh: &str) -> Text {
    Text::new(en, zh)
}
