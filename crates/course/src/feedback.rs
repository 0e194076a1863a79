//! A learner's answer, checked against the key, with bilingual feedback naming the mistake.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use tracelab_core::text::Text;

use crate::exercise::{Exercise, ExerciseKind};
use crate::map::SystemMap;
use crate::{t, CORE_OPTION};

/// What a learner answered. In JSON: `{"kind": "number", "value": 4}`,
/// `{"kind": "choice", "chosen": ["all-attempts"]}`,
/// `{"kind": "ratio_parts", "numerator": "core", "denominator": "successes", "unit": "core"}`,
/// `{"kind": "free_text", "text": "…", "checked": ["long-queue"]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawAnswer", into = "RawAnswer")]
pub enum Answer {
    Number {
        value: f64,
    },
    /// The chosen option ids (one for a single choice).
    Choice {
        chosen: Vec<String>,
    },
    /// The option ids chosen for each part.
    RatioParts {
        numerator: String,
        denominator: String,
        unit: String,
    },
    /// The text written and the checklist ids ticked.
    FreeText {
        text: String,
        checked: Vec<String>,
    },
    /// The row ids picked from a sample (`{"kind": "pick_rows", "chosen": ["R310"]}`), checked
    /// with [`check_pick`](crate::check_pick).
    PickRows {
        chosen: Vec<String>,
    },
    /// The learner's system map (`{"kind": "draw_map", "map": {…}}`).
    Map {
        map: SystemMap,
    },
}

/// The JSON form of an answer: a plain struct, so a bad field is named (`answer.value`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RawAnswer {
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chosen: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    numerator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    denominator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    checked: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    map: Option<SystemMap>,
}

impl TryFrom<RawAnswer> for Answer {
    type Error = String;

    fn try_from(r: RawAnswer) -> Result<Answer, String> {
        let need = |field: &str| format!("a `{}` answer needs `{field}`", r.kind);
        Ok(match r.kind.as_str() {
            "number" => Answer::Number {
                value: r.value.ok_or_else(|| need("value"))?,
            },
            "choice" => Answer::Choice {
                chosen: r.chosen.clone().ok_or_else(|| need("chosen"))?,
            },
            "ratio_parts" => Answer::RatioParts {
                numerator: r.numerator.clone().ok_or_else(|| need("numerator"))?,
                denominator: r.denominator.clone().ok_or_else(|| need("denominator"))?,
                unit: r.unit.clone().ok_or_else(|| need("unit"))?,
            },
            "free_text" => Answer::FreeText {
                text: r.text.clone().ok_or_else(|| need("text"))?,
                checked: r.checked.clone().unwrap_or_default(),
            },
            "draw_map" => Answer::Map {
                map: r.map.clone().ok_or_else(|| need("map"))?,
            },
            "pick_rows" => Answer::PickRows {
                chosen: r.chosen.clone().ok_or_else(|| need("chosen"))?,
            },
            other => {
                return Err(format!(
                    "unknown answer kind `{other}` (known: number, choice, ratio_parts, free_text, pick_rows, draw_map)"
                ))
            }
        })
    }
}

impl From<Answer> for RawAnswer {
    fn from(a: Answer) -> RawAnswer {
        match a {
            Answer::Number { value } => RawAnswer {
                kind: "number".into(),
                value: Some(value),
                ..RawAnswer::default()
            },
            Answer::Choice { chosen } => RawAnswer {
                kind: "choice".into(),
                chosen: Some(chosen),
                ..RawAnswer::default()
            },
            Answer::RatioParts {
                numerator,
                denominator,
                unit,
            } => RawAnswer {
                kind: "ratio_parts".into(),
                numerator: Some(numerator),
                denominator: Some(denominator),
                unit: Some(unit),
                ..RawAnswer::default()
            },
            Answer::FreeText { text, checked } => RawAnswer {
                kind: "free_text".into(),
                text: Some(text),
                checked: Some(checked),
                ..RawAnswer::default()
            },
            Answer::Map { map } => RawAnswer {
                kind: "draw_map".into(),
                map: Some(map),
                ..RawAnswer::default()
            },
            Answer::PickRows { chosen } => RawAnswer {
                kind: "pick_rows".into(),
                chosen: Some(chosen),
                ..RawAnswer::default()
            },
        }
    }
}

/// The verdict on an answer, with an explanation in both languages.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Feedback {
    pub correct: bool,
    pub message: Text,
    /// The key of a number exercise, for the lab to reveal when it chooses (after a second try,
    /// say); never part of `message` on a wrong answer.
    pub expected: Option<f64>,
}

pub(crate) fn join(parts: &[Text]) -> Text {
    let en: Vec<&str> = parts
        .iter()
        .map(|p| p.en.as_str())
        .filter(|s| !s.is_empty())
        .collect();
    let zh: Vec<&str> = parts
        .iter()
        .map(|p| p.zh.as_str())
        .filter(|s| !s.is_empty())
        .collect();
    Text::new(en.join("\n"), zh.join("\n"))
}

/// Reads a typed answer to a number exercise: "20", "20 %", "0,5", "0.5 s", "４". `None` when it
/// is not a number.
pub fn parse_number(text: &str) -> Option<f64> {
    let mut s: String = text
        .trim()
        .chars()
        .map(|c| match c {
            '０'..='９' => char::from(b'0' + (c as u32 - '０' as u32) as u8),
            '．' | '。' => '.',
            '，' => ',',
            '－' | '−' => '-',
            _ => c,
        })
        .collect();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(s.len());
    let rest = s[end..].trim().to_string();
    if !rest.is_empty() && rest.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    s.truncate(end);
    let s = s.trim();
    let s = if s.contains(',') && !s.contains('.') && !is_grouped(s) {
        s.replacen(',', ".", 1)
    } else {
        s.replace(',', "")
    };
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// "1,000" and "12,345,678": commas between groups of three, as the lab writes every count, so
/// a number copied from it reads as written. "0,5", "1,25" and "0,125" are decimal commas.
fn is_grouped(s: &str) -> bool {
    let unsigned = s.trim_start_matches(['-', '+']);
    let mut groups = unsigned.split(',');
    let head = groups.next().unwrap_or_default();
    (1..=3).contains(&head.len())
        && !head.starts_with('0')
        && head.bytes().all(|b| b.is_ascii_digit())
        && groups.all(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit()))
}

/// Who reads the feedback. A learner gets feedback that names what is wrong in their own answer
/// (never the right options they missed); a teacher's page (`?teacher=1`, projected or printed as
/// a worksheet) says only right or not yet: the answers are in the separate answer key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Audience {
    #[default]
    Learner,
    Teacher,
}

/// Judges an answer for a learner: [`check_for`] with [`Audience::Learner`].
pub fn check(exercise: &Exercise, answer: &Answer, key: Option<f64>) -> Feedback {
    check_for(exercise, answer, key, Audience::Learner)
}

/// Judges an answer. `key` is [`answer_key`](crate::answer_key)'s value for a number exercise (the stated answer is
/// used when it is `None`); other kinds ignore it. For a [`Audience::Teacher`] a wrong answer's
/// message names no option, no mistake's figure and no model answer, and `expected` is `None`.
pub fn check_for(
    exercise: &Exercise,
    answer: &Answer,
    key: Option<f64>,
    audience: Audience,
) -> Feedback {
    for_audience(exercise, judge(exercise, answer, key), audience)
}

/// Feedback as the audience sees it: a teacher's wrong answer names no option, no figure and no
/// model answer.
pub(crate) fn for_audience(exercise: &Exercise, f: Feedback, audience: Audience) -> Feedback {
    match audience {
        Audience::Learner => f,
        Audience::Teacher if f.correct && !matches!(exercise.kind, ExerciseKind::FreeText(_)) => {
            Feedback {
                expected: None,
                ..f
            }
        }
        Audience::Teacher => {
            let lead = match (&exercise.kind, f.correct) {
                (ExerciseKind::FreeText(_), _) => t("Saved.", "已保存。"),
                (_, true) => t("Right.", "正确。"),
                (_, false) => t("Not yet.", "还不对。"),
            };
            let hidden = t(
                "Teacher mode shows no answer, no hint and no model answer: they are in the answer key.",
                "教师模式不显示答案、提示和参考答案：它们都在答案页里。",
            );
            Feedback {
                correct: f.correct,
                message: join(&[lead, hidden]),
                expected: None,
            }
        }
    }
}

fn judge(exercise: &Exercise, answer: &Answer, key: Option<f64>) -> Feedback {
    let right = t("Right.", "正确。");
    let not_yet = t("Not yet.", "还不对。");
    let explain = exercise.explain.clone().unwrap_or_else(|| t("", ""));
    let hint = exercise.hint.clone().unwrap_or_else(|| t("", ""));
    let mismatch = Feedback {
        correct: false,
        message: t(
            "This answer does not fit this exercise.",
            "这个答案与本题的题型不符。",
        ),
        expected: None,
    };
    match (&exercise.kind, answer) {
        (ExerciseKind::Number(n), Answer::Number { value }) => {
            let target = key.unwrap_or(n.answer);
            let close = |a: f64, b: f64| (a - b).abs() <= n.tolerance + 1e-9 * b.abs().max(1.0);
            if !value.is_finite() {
                return Feedback {
                    correct: false,
                    message: t("Write a number.", "请填写一个数字。"),
                    expected: Some(target),
                };
            }
            if close(*value, target) {
                return Feedback {
                    correct: true,
                    message: join(&[right, explain]),
                    expected: Some(target),
                };
            }
            let message = match n.mistakes.iter().find(|m| close(*value, m.value)) {
                Some(m) => join(&[not_yet, m.explain.clone()]),
                None if !hint.en.is_empty() => join(&[not_yet, hint]),
                None => join(&[
                    not_yet,
                    t(
                        "Recompute it step by step: which attempts are counted, what is divided by what, and in which unit.",
                        "一步一步重算：哪些尝试被计入，谁除以谁，单位是什么。",
                    ),
                ]),
            };
            Feedback {
                correct: false,
                message,
                expected: Some(target),
            }
        }
        (ExerciseKind::Choice(c), Answer::Choice { chosen }) => {
            let unknown: Vec<&String> = chosen
                .iter()
                .filter(|id| !c.options.iter().any(|o| &o.id == *id))
                .collect();
            if !unknown.is_empty() || chosen.is_empty() {
                return Feedback {
                    correct: false,
                    message: t("Choose one of the options shown.", "请从给出的选项中选择。"),
                    expected: None,
                };
            }
            if !c.multiple {
                if chosen.len() != 1 {
                    return Feedback {
                        correct: false,
                        message: t("Choose exactly one option.", "只能选一个选项。"),
                        expected: None,
                    };
                }
                let o = c
                    .options
                    .iter()
                    .find(|o| o.id == chosen[0])
                    .expect("checked above");
                let lead = if o.correct { right } else { not_yet };
                let mut parts = vec![lead, o.explain.clone()];
                if o.correct {
                    parts.push(explain);
                }
                return Feedback {
                    correct: o.correct,
                    message: join(&parts),
                    expected: None,
                };
            }
            let chosen: BTreeSet<&str> = chosen.iter().map(String::as_str).collect();
            // What the learner marked wrongly is named, with why; a right option left unmarked
            // is only counted, so a wrong answer never lists the answer.
            let mut parts = Vec::new();
            let mut missed = 0usize;
            for o in &c.options {
                let picked = chosen.contains(o.id.as_str());
                if picked && !o.correct {
                    parts.push(Text::new(
                        format!("Marked but should not be: {} — {}", o.text.en, o.explain.en),
                        format!("不该标记却标记了：{} —— {}", o.text.zh, o.explain.zh),
                    ));
                } else if !picked && o.correct {
                    missed += 1;
                }
            }
            if missed > 0 {
                parts.push(Text::new(
                    if missed == 1 {
                        "1 right option is still unmarked: look again at the ones you left out.".to_string()
                    } else {
                        format!("{missed} right options are still unmarked: look again at the ones you left out.")
                    },
                    format!("还有 {missed} 个正确选项没有标记：再看看你漏掉的那些。"),
                ));
            }
            let correct = parts.is_empty();
            let mut all = vec![if correct { right } else { not_yet }];
            all.extend(parts);
            if correct {
                all.push(explain);
            }
            Feedback {
                correct,
                message: join(&all),
                expected: None,
            }
        }
        (
            ExerciseKind::RatioParts(p),
            Answer::RatioParts {
                numerator,
                denominator,
                unit,
            },
        ) => {
            let parts = [
                (t("Numerator", "分子"), numerator, &p.distractors.numerator),
                (
                    t("Denominator", "分母"),
                    denominator,
                    &p.distractors.denominator,
                ),
                (t("Unit", "单位"), unit, &p.distractors.unit),
            ];
            let mut correct = true;
            let mut lines = Vec::new();
            for (name, id, wrong) in parts {
                if id == CORE_OPTION {
                    lines.push(Text::new(
                        format!("{}: right.", name.en),
                        format!("{}：正确。", name.zh),
                    ));
                } else {
                    correct = false;
                    let why = wrong
                        .iter()
                        .find(|d| &d.id == id)
                        .map(|d| d.explain.clone())
                        .unwrap_or_else(|| {
                            t("choose one of the options shown.", "请从给出的选项中选择。")
                        });
                    lines.push(Text::new(
                        format!("{}: {}", name.en, why.en),
                        format!("{}：{}", name.zh, why.zh),
                    ));
                }
            }
            let mut all = vec![if correct { right } else { not_yet }];
            all.extend(lines);
            if correct {
                all.push(explain);
            }
            Feedback {
                correct,
                message: join(&all),
                expected: None,
            }
        }
        (ExerciseKind::FreeText(f), Answer::FreeText { text, checked }) => {
            let ticked = f
                .checklist
                .iter()
                .filter(|i| checked.contains(&i.id))
                .count();
            let chars = text.trim().chars().count();
            let enough = ticked >= f.min_checked && chars >= f.min_chars;
            let status = Text::new(
                format!(
                    "Saved. You ticked {ticked} of {} checklist items (at least {} expected) and wrote {chars} characters. \
                     Nothing else is judged automatically: compare your text with the model answer and with a classmate.",
                    f.checklist.len(),
                    f.min_checked
                ),
                format!(
                    "已保存。你勾选了 {} 项中的 {ticked} 项（至少应勾选 {} 项），写了 {chars} 个字符。\
                     其余部分不会自动判分：请把你的文字与参考答案、与同学的答案对照。",
                    f.checklist.len(),
                    f.min_checked
                ),
            );
            let mut all = vec![status];
            if !enough && chars < f.min_chars {
                all.push(t(
                    "Write your counter-example in a few sentences first.",
                    "请先用几句话写出你的反例。",
                ));
            }
            // The model answer is a reward for the learner's own attempt, not a substitute for it.
            if enough {
                all.push(explain);
            } else {
                all.push(Text::new(
                    format!(
                        "The model answer opens once you have written at least {} characters and ticked at least {} items.",
                        f.min_chars, f.min_checked
                    ),
                    format!("写满至少 {} 个字符并勾选至少 {} 项后，才会显示参考答案。", f.min_chars, f.min_checked),
                ));
            }
            Feedback {
                correct: enough,
                message: join(&all),
                expected: None,
            }
        }
        (ExerciseKind::PickRows(_), Answer::PickRows { .. }) => Feedback {
            correct: false,
            message: t(
                "This pick is checked against its sample: the sample is not loaded yet.",
                "这个选择要对照它的样本来核对：样本还没有加载。",
            ),
            expected: None,
        },
        (ExerciseKind::DrawMap(d), Answer::Map { map }) => {
            let problems = map.problems(d.min_steps);
            let correct = problems.is_empty();
            let mut all = vec![if correct { right } else { not_yet }];
            all.extend(problems.into_iter().map(|p| p.why));
            if correct {
                all.push(explain);
            }
            Feedback {
                correct,
                message: join(&all),
                expected: None,
            }
        }
        _ => mismatch,
    }
}
