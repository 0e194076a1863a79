//! The course file, `lessons/course.json`: lessons, the lab steps they drive, the self-check, the card's field help, and looking things up in it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use tracelab_core::error::ParseError;
use tracelab_core::settings::Settings;
use tracelab_core::text::Text;
use tracelab_core::trace::Header;

use crate::exercise::{Exercise, Pairs};
use crate::json::{from_value, json_error};
use crate::locate;
use crate::COURSE_VERSION;

/// `lessons/course.json`: the lessons in order, the self-check and the metric card's help.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Course {
    /// Always [`COURSE_VERSION`].
    pub version: u32,
    pub lessons: Vec<Lesson>,
    /// The acceptance criteria the learner ticks at the end.
    #[serde(default)]
    pub self_check: Vec<SelfCheckItem>,
    /// Help for each field of the learner's [`MetricCard`](crate::MetricCard), one entry per [`MetricCard::FIELDS`](crate::MetricCard::FIELDS).
    #[serde(default)]
    pub card_fields: Vec<CardFieldHelp>,
}

/// One lesson: its title, its Markdown text per language, the lab steps and exercises the text
/// places with `[[step:ID]]` and `[[exercise:ID]]` lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    pub id: String,
    /// 1, 2, 3, … in course order.
    pub number: u32,
    pub title: Text,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Text>,
    /// The Markdown file of each language, relative to `lessons/`.
    pub text: Text,
    #[serde(default)]
    pub steps: Vec<Step>,
    #[serde(default)]
    pub exercises: Vec<Exercise>,
}

impl Lesson {
    /// The sample the lab beside shows as the lesson starts: the first one its steps load
    /// (`None` for a lesson whose steps load none).
    pub fn start_sample(&self) -> Option<&str> {
        self.steps.iter().find_map(|s| s.sample.as_deref())
    }
}

/// A lab binding: which sample to load (or which diagram to show), with which settings, and
/// which row to select. The settings are the sample's own (its header) with `settings` on top,
/// so a step always shows the same figures, whatever the learner changed before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub id: String,
    /// The button's words.
    pub label: Text,
    /// A file name under `public/samples/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<String>,
    /// A diagram under `public/lessons/` (e.g. `system-path.svg`) to show instead of, or beside,
    /// a sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagram: Option<String>,
    /// Short keys of [`Settings::to_pairs`]: `t`, `cmp`, `pm`, `p`, `fd`, `mt`, `wu`, `w`,
    /// `cost`, `cur`.
    #[serde(default, skip_serializing_if = "Pairs::is_empty")]
    pub settings: Pairs,
    /// The row to select, 1-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<usize>,
    /// A metric key ([`LessonMetric`](crate::LessonMetric)) whose figure the lab highlights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
}

/// One acceptance criterion of the self-check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelfCheckItem {
    pub id: String,
    pub text: Text,
}

/// The teacher's help for one field of the learner's metric card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardFieldHelp {
    /// One of [`MetricCard::FIELDS`](crate::MetricCard::FIELDS).
    pub id: String,
    pub help: Text,
}

/// The settings a step or an exercise asks for on a sample: the sample's own (its header's
/// threshold, window, cost and SLO), then `pairs` on top. An unknown key or a refused value is an
/// error naming it.
pub fn settings_for(header: &Header, pairs: &Pairs) -> Result<Settings, String> {
    let problems = pairs.problems();
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let mut settings = Settings::from_header(header);
    settings.apply_pairs(pairs.iter());
    settings.validate().map_err(|e| e.to_string())?;
    Ok(settings)
}

impl Course {
    /// Reads `course.json`. Errors name the field (`lessons[0].exercises[2].options[1].correct`)
    /// and never panic.
    pub fn parse(text: &str) -> Result<Course, ParseError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let value: Value = serde_json::from_str(text).map_err(|e| json_error(&e, "course.json"))?;
        let course: Course = from_value(value, locate::course, "course.json")?;
        if course.version != COURSE_VERSION {
            return Err(ParseError::new(format!(
                "this course is version {}; this Trace Lab reads version {COURSE_VERSION}",
                course.version
            ))
            .field("version")
            .in_file("course.json"));
        }
        Ok(course)
    }

    pub fn lesson(&self, id: &str) -> Option<&Lesson> {
        self.lessons.iter().find(|l| l.id == id)
    }

    /// A step and the lesson it belongs to.
    pub fn step(&self, id: &str) -> Option<(&Lesson, &Step)> {
        self.lessons
            .iter()
            .find_map(|l| l.steps.iter().find(|s| s.id == id).map(|s| (l, s)))
    }

    pub fn exercise(&self, id: &str) -> Option<&Exercise> {
        self.exercises().map(|(_, e)| e).find(|e| e.id == id)
    }

    /// Every exercise with its lesson, in course order.
    pub fn exercises(&self) -> impl Iterator<Item = (&Lesson, &Exercise)> {
        self.lessons
            .iter()
            .flat_map(|l| l.exercises.iter().map(move |e| (l, e)))
    }
}
