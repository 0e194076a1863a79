//! What the lessons page keeps in localStorage and exports as a file: the learner's last answer to each exercise.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use tracelab_core::error::ParseError;

use crate::card::MetricCard;
use crate::course::Course;
use crate::feedback::{Answer, Feedback};
use serde_json::Value;

use crate::card::locate_card;
use crate::json::{read_export, Found};
use crate::locate::{answer, leaf, map, object, opt_string, optional, string, strings};
use crate::PROGRESS_KIND;

/// The learner's last answer to one exercise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerRecord {
    pub answer: Answer,
    pub correct: bool,
    /// How many times an answer was checked.
    #[serde(default)]
    pub tries: u32,
}

/// What the lab remembers for a learner: notes per lesson, answers, self-check ticks and the
/// metric card. Stored in localStorage and exported as a file ([`Progress::to_json`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Progress {
    /// The lesson open last.
    pub lesson: Option<String>,
    /// Lesson id → the learner's notes.
    pub notes: BTreeMap<String, String>,
    /// Exercise id → the last answer.
    pub answers: BTreeMap<String, AnswerRecord>,
    /// Self-check item ids ticked.
    pub self_check: BTreeSet<String>,
    pub card: Option<MetricCard>,
    /// What the learner chose to see before answering, recorded so a teacher can tell a
    /// prediction from a copy: exercise ids whose core figure was shown ("Show the core's figure",
    /// or after a second wrong try) and `worked:…` keys of worked answers opened by asking.
    pub revealed: BTreeSet<String>,
}

#[derive(Serialize)]
struct ProgressFile<'a> {
    kind: &'static str,
    version: u32,
    #[serde(flatten)]
    progress: &'a Progress,
}

impl Progress {
    /// Records a checked answer (a non-finite number is not kept).
    pub fn record(&mut self, exercise: &str, answer: Answer, feedback: &Feedback) {
        if matches!(answer, Answer::Number { value } if !value.is_finite()) {
            return;
        }
        let tries = self
            .answers
            .get(exercise)
            .map_or(0, |r| r.tries)
            .saturating_add(1);
        self.answers.insert(
            exercise.to_string(),
            AnswerRecord {
                answer,
                correct: feedback.correct,
                tries,
            },
        );
    }

    /// Records that the learner saw `id` before answering it (an exercise id, or a
    /// [`Progress::worked_key`]).
    pub fn reveal(&mut self, id: &str) {
        self.revealed.insert(id.to_string());
    }

    /// The key a worked answer waiting for `list` (its marker's exercise list) is recorded under.
    pub fn worked_key(list: &str) -> String {
        format!("worked:{list}")
    }

    /// Whether the worked answer waiting for `list` is open: every one of its exercises has been
    /// answered (right or not), or the learner asked to see it.
    pub fn worked_open(&self, list: &str) -> bool {
        self.revealed.contains(&Self::worked_key(list))
            || crate::markdown::worked_exercises(list)
                .iter()
                .all(|id| self.answers.contains_key(*id))
    }

    /// Whether the lab beside may show the figure exercise `id` asks for: it was answered right,
    /// or its figure was shown (on request or after a second wrong try), or a worked answer that
    /// holds it was opened by asking.
    pub fn figure_open(&self, id: &str) -> bool {
        self.answers.get(id).is_some_and(|r| r.correct)
            || self.revealed.contains(id)
            || self
                .revealed
                .iter()
                .filter_map(|k| k.strip_prefix("worked:"))
                .any(|list| crate::markdown::worked_exercises(list).contains(&id))
    }

    /// The exercises answered correctly.
    pub fn solved(&self) -> usize {
        self.answers.values().filter(|r| r.correct).count()
    }

    /// Drops what refers to lessons, exercises or self-check items the course no longer has
    /// (after a teacher's edit); returns what was dropped.
    pub fn retain_known(&mut self, course: &Course) -> Vec<String> {
        let mut dropped = Vec::new();
        self.notes.retain(|id, _| {
            let keep = course.lesson(id).is_some();
            if !keep {
                dropped.push(format!("notes of lesson `{id}`"));
            }
            keep
        });
        self.answers.retain(|id, _| {
            let keep = course.exercise(id).is_some();
            if !keep {
                dropped.push(format!("answer to exercise `{id}`"));
            }
            keep
        });
        self.self_check.retain(|id| {
            let keep = course.self_check.iter().any(|i| &i.id == id);
            if !keep {
                dropped.push(format!("self-check tick `{id}`"));
            }
            keep
        });
        self.revealed.retain(|id| {
            let keep = match id.strip_prefix("worked:") {
                Some(list) => crate::markdown::worked_exercises(list)
                    .iter()
                    .all(|e| course.exercise(e).is_some()),
                None => course.exercise(id).is_some(),
            };
            if !keep {
                dropped.push(format!("shown answer `{id}`"));
            }
            keep
        });
        if self
            .lesson
            .as_deref()
            .is_some_and(|l| course.lesson(l).is_none())
        {
            self.lesson = None;
        }
        dropped
    }

    /// The progress as a JSON file (`kind` [`PROGRESS_KIND`], version 1), pretty-printed.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(&ProgressFile {
            kind: PROGRESS_KIND,
            version: 1,
            progress: self,
        })
        .expect("progress serialises");
        s.push('\n');
        s
    }

    /// Reads [`Progress::to_json`]'s file. Missing fields are empty; unknown ones are ignored; a
    /// corrupt file is an error naming the field (`answers.t1-p95.answer.value`); nothing panics.
    pub fn from_json(text: &str) -> Result<Progress, ParseError> {
        read_export(text, PROGRESS_KIND, "progress", locate_progress)
    }
}

/// Names the field that stops a progress file from being read (see `locate.rs`).
fn locate_progress(v: &Value, p: &str) -> Found {
    object(
        v,
        p,
        &[
            ("lesson", false, opt_string),
            ("notes", false, |v, p| map(v, p, string)),
            ("answers", false, |v, p| {
                map(v, p, |v, p| {
                    object(
                        v,
                        p,
                        &[
                            ("answer", true, answer),
                            ("correct", true, leaf::<bool>),
                            ("tries", false, leaf::<u32>),
                        ],
                        false,
                    )
                })
            }),
            ("self_check", false, strings),
            ("card", false, |v, p| optional(v, p, locate_card)),
            ("revealed", false, strings),
        ],
        false,
    )
}
