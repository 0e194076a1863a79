//! The course asks before it tells: a choice question comes before the text that answers it, and
//! no prompt or hint gives away a number another exercise asks for.
//!
//! * For every choice exercise, in every lesson and language, the lesson text above its marker
//!   (worked answers included: the learner has read them by then) holds neither the text of a
//!   right option nor a run of 6 of its words (English) or 12 of its CJK characters (Chinese).
//!   A learner who has to pick the sentence they just read is matching, not thinking.
//! * Every choice question comes **before** the paragraph that explains it: of all the lesson's
//!   paragraphs (worked answers included), the one that shares the most of the question's answer
//!   (its right options and their explanations, as runs of 3 content words or 4 CJK characters)
//!   lies below the marker, never above it. A question asked after its explanation is a reading
//!   check, not a prediction.
//! * No prompt, hint or known-mistake explanation states the answer of a number exercise of the
//!   same lesson as written with its unit (`17.571 s`, `150 毫秒`, `n = 8`), nor — in a number
//!   exercise's own hints — as a fraction that works out to it (`2/10` for 20 %, `5 of 10` for 50 %).

use std::path::{Path, PathBuf};

use tracelab_core::Lang;
use tracelab_course::{segments, Course, Exercise, ExerciseKind, Lesson, Segment};

const COURSE: &str = include_str!("../../../lessons/course.json");

/// A run this long, shared by a right option and the text above it, is copied, not paraphrased.
const EN_RUN_WORDS: usize = 6;
const ZH_RUN_CHARS: usize = 12;

fn course() -> Course {
    Course::parse(COURSE).unwrap_or_else(|e| panic!("lessons/course.json: {e}"))
}

fn lesson_text(name: &str) -> String {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../lessons")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text a learner has read above each exercise marker, worked answers included.
fn text_above(markdown: &str) -> Vec<(String, String)> {
    let mut read = String::new();
    let mut out = Vec::new();
    for segment in segments(markdown) {
        match segment {
            Segment::Markdown(text) | Segment::Worked(_, text) => {
                read.push_str(text);
                read.push('\n');
            }
            Segment::Exercise(id) => out.push((id.to_string(), read.clone())),
            Segment::Step(_) | Segment::Judge(_) => {}
        }
    }
    out
}

fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}')
}

/// English: lower-case words (letters and digits), Markdown and punctuation dropped.
/// Chinese: the CJK characters alone, one unit each.
fn units(text: &str, lang: Lang) -> Vec<String> {
    match lang {
        Lang::En => text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect(),
        Lang::Zh => text
            .chars()
            .filter(|c| is_cjk(*c))
            .map(String::from)
            .collect(),
    }
}

/// The first run of `n` units of `option` that also occurs in `text`, if any.
fn shared_run(option: &[String], text: &[String], n: usize) -> Option<String> {
    if option.len() < n {
        return None;
    }
    let joint = |w: &[String]| format!("\u{1}{}\u{1}", w.join("\u{1}"));
    let haystack = joint(text);
    option
        .windows(n)
        .find(|w| haystack.contains(&joint(w)))
        .map(|w| w.join(" "))
}

/// What a right option copies from the text above it; empty when it copies nothing.
fn copied(option: &str, above: &str, lang: Lang) -> Option<String> {
    let option = option.trim();
    if above.contains(option) {
        return Some(format!("the whole option “{option}”"));
    }
    let (o, t) = (units(option, lang), units(above, lang));
    let n = match lang {
        Lang::En => EN_RUN_WORDS,
        Lang::Zh => ZH_RUN_CHARS,
    };
    // A short option is checked whole: all its words (at least 3) in a row are copying too.
    let n = if o.len() < n && o.len() >= n / 2 {
        o.len()
    } else {
        n
    };
    let sep = if matches!(lang, Lang::Zh) { "" } else { " " };
    shared_run(&o, &t, n).map(|run| format!("the run “{}”", run.replace(' ', sep)))
}

fn leaks_in_choices(course: &Course) -> Vec<String> {
    let mut found = Vec::new();
    for lesson in &course.lessons {
        for lang in [Lang::En, Lang::Zh] {
            let file = lesson.text.get(lang);
            let above = text_above(&lesson_text(file));
            for e in &lesson.exercises {
                let ExerciseKind::Choice(choice) = &e.kind else {
                    continue;
                };
                let (_, text) = above
                    .iter()
                    .find(|(id, _)| *id == e.id)
                    .unwrap_or_else(|| panic!("{file}: no marker for `{}`", e.id));
                for option in choice.options.iter().filter(|o| o.correct) {
                    if let Some(what) = copied(option.text.get(lang), text, lang) {
                        found.push(format!(
                            "{file}: `{}`, right option `{}`: the text above the question already holds {what}",
                            e.id, option.id
                        ));
                    }
                }
            }
        }
    }
    found
}

/// `17.571`, `0.5`, `150`: the number as a lesson writes it.
fn written(value: f64) -> String {
    let s = format!("{value:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// How a number exercise's answer reads in text: with its unit, and bare when it is distinctive
/// (a decimal of 3 or more digits such as `1.204`, or a count of 10 or more).
fn answer_forms(value: f64, unit: &str) -> Vec<String> {
    let v = written(value);
    let mut forms: Vec<String> = match unit {
        "s" => vec![
            format!("{v} s"),
            format!("{v}s"),
            format!("{v} 秒"),
            format!("{v}秒"),
        ],
        "ms" => vec![
            format!("{v} ms"),
            format!("{v}ms"),
            format!("{v} 毫秒"),
            format!("{v}毫秒"),
        ],
        "%" => vec![format!("{v} %"), format!("{v}%")],
        "/s" => vec![
            format!("{v} /s"),
            format!("{v}/s"),
            format!("{v} 个/秒"),
            format!("{v} 次/秒"),
        ],
        "money" => vec![format!("{v} CNY"), format!("{v} 元"), format!("{v}元")],
        "count" => vec![format!("n = {v}"), format!("n={v}")],
        _ => vec![],
    };
    let digits = v.chars().filter(char::is_ascii_digit).count();
    if (v.contains('.') && digits >= 3) || (unit == "count" && value >= 10.0) {
        forms.push(v);
    }
    forms
}

/// `form` occurs in `text` as a number of its own: not the tail of `R4` or `0.55`, not the head
/// of `1.55` or `20 seconds` when the form ends in `s`.
fn states(text: &str, form: &str) -> bool {
    text.match_indices(form).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + form.len()..].chars().next();
        let joined_before = before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '.');
        let joined_after = after.is_some_and(|c| {
            c.is_ascii_digit()
                || (c == '.'
                    && text[at + form.len() + 1..].starts_with(|d: char| d.is_ascii_digit()))
                || (form.ends_with(|f: char| f.is_ascii_alphabetic()) && c.is_ascii_alphabetic())
        });
        !joined_before && !joined_after
    })
}

/// Fractions written in `text`: `2/10`, `2 / 10`, `5 of 10`, `10 个里有 5 个`.
fn fractions(text: &str) -> Vec<(f64, f64)> {
    let mut tokens: Vec<String> = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut n = c.to_string();
            while let Some(&d) = chars.peek() {
                if d.is_ascii_digit() || d == '.' || d == ',' {
                    n.push(d);
                    chars.next();
                } else {
                    break;
                }
            }
            tokens.push(n.trim_end_matches(['.', ',']).replace(',', ""));
        } else if c.is_alphabetic() && !is_cjk(c) {
            let mut w = c.to_string();
            while let Some(&d) = chars.peek() {
                if d.is_alphabetic() && !is_cjk(d) {
                    w.push(d);
                    chars.next();
                } else {
                    break;
                }
            }
            tokens.push(w.to_lowercase());
        } else if is_cjk(c) {
            let mut w = c.to_string();
            while let Some(&d) = chars.peek() {
                if is_cjk(d) {
                    w.push(d);
                    chars.next();
                } else {
                    break;
                }
            }
            tokens.push(w);
        } else if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    let num = |t: &String| t.parse::<f64>().ok();
    let mut out = Vec::new();
    for w in tokens.windows(3) {
        if let (Some(a), Some(b)) = (num(&w[0]), num(&w[2])) {
            match w[1].as_str() {
                "/" | "of" | "out" => out.push((a, b)),
                "个里有" | "个中有" | "个中" | "个里" => out.push((b, a)),
                _ => {}
            }
        }
    }
    out
}

fn number_answers(lesson: &Lesson) -> Vec<(&Exercise, f64, &str)> {
    lesson
        .exercises
        .iter()
        .filter_map(|e| match &e.kind {
            ExerciseKind::Number(n) => Some((e, n.answer, n.unit.as_str())),
            _ => None,
        })
        .collect()
}

/// The thresholds a lesson sets (`t`): a value the learner is given, not one they compute.
fn given_thresholds(lesson: &Lesson) -> Vec<f64> {
    let steps = lesson.steps.iter().map(|s| &s.settings);
    let exercises = lesson.exercises.iter().filter_map(|e| match &e.kind {
        ExerciseKind::Number(n) => Some(&n.settings),
        ExerciseKind::RatioParts(r) => Some(&r.settings),
        _ => None,
    });
    steps
        .chain(exercises)
        .filter_map(|p| p.get("t")?.parse().ok())
        .collect()
}

fn leaks_in_prompts_and_hints(course: &Course) -> Vec<String> {
    let mut found = Vec::new();
    for lesson in &course.lessons {
        let answers = number_answers(lesson);
        let given = given_thresholds(lesson);
        for e in &lesson.exercises {
            // (where, the text, the value the learner has just typed for a mistake's explanation)
            let mut said = vec![("prompt".to_string(), &e.prompt, None)];
            if let Some(hint) = &e.hint {
                said.push(("hint".to_string(), hint, None));
            }
            if let ExerciseKind::Number(n) = &e.kind {
                for m in &n.mistakes {
                    said.push((
                        format!("mistake {}", written(m.value)),
                        &m.explain,
                        Some(m.value),
                    ));
                }
            }
            for (place, text, typed) in &said {
                for lang in [Lang::En, Lang::Zh] {
                    let text = text.get(lang);
                    for (other, answer, unit) in &answers {
                        let is_self = other.id == e.id;
                        if (is_self && *place == "prompt")
                            || typed.is_some_and(|t| (t - answer).abs() < 1e-9)
                            || given.iter().any(|g| (g - answer).abs() < 1e-9)
                        {
                            continue;
                        }
                        if let Some(form) = answer_forms(*answer, unit)
                            .into_iter()
                            .find(|f| states(text, f))
                        {
                            found.push(format!(
                                "`{}` {place} ({}): states “{form}”, the answer of `{}`: {text}",
                                e.id,
                                lang.code(),
                                other.id
                            ));
                        }
                        let share = match *unit {
                            "%" => Some(answer / 100.0),
                            "ratio" => Some(*answer),
                            _ => None,
                        };
                        if let (true, false, Some(share)) = (is_self, *place == "prompt", share) {
                            for (a, b) in fractions(text) {
                                if b > 0.0 && (a / b - share).abs() < 1e-9 {
                                    found.push(format!(
                                        "`{}` {place} ({}): “{} / {}” is its own answer in all but name: {text}",
                                        e.id,
                                        lang.code(),
                                        written(a),
                                        written(b)
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    found
}

/// Words that carry no meaning of their own: a run of them says nothing about copying.
const EN_STOP: [&str; 40] = [
    "a", "an", "the", "of", "to", "in", "on", "at", "for", "by", "with", "from", "and", "or",
    "but", "is", "are", "was", "were", "be", "it", "its", "this", "that", "these", "those", "as",
    "so", "not", "no", "do", "does", "one", "each", "every", "than", "then", "there", "which",
    "what",
];
/// How many units make one shared run when looking for a question's explanation.
const EN_ORDER_RUN: usize = 3;
const ZH_ORDER_RUN: usize = 4;
/// A paragraph explains a question once it shares at least this many distinct runs with its
/// answer.
const EXPLAINS_AT: usize = 3;

/// The lesson's paragraphs in reading order, each with the exercise markers above it, and the
/// position of every exercise marker (as the number of paragraphs above it).
fn paragraphs(markdown: &str) -> (Vec<String>, Vec<(String, usize)>) {
    let mut paras = Vec::new();
    let mut marks = Vec::new();
    for segment in segments(markdown) {
        match segment {
            Segment::Markdown(text) | Segment::Worked(_, text) => {
                for p in text.split("\n\n") {
                    if !p.trim().is_empty() {
                        paras.push(p.trim().to_string());
                    }
                }
            }
            Segment::Exercise(id) => marks.push((id.to_string(), paras.len())),
            Segment::Step(_) | Segment::Judge(_) => {}
        }
    }
    (paras, marks)
}

/// The distinct runs of `n` meaningful units in `text`.
fn runs(text: &str, lang: Lang) -> std::collections::BTreeSet<String> {
    let mut u = units(text, lang);
    if matches!(lang, Lang::En) {
        u.retain(|w| !EN_STOP.contains(&w.as_str()));
    }
    let n = match lang {
        Lang::En => EN_ORDER_RUN,
        Lang::Zh => ZH_ORDER_RUN,
    };
    u.windows(n).map(|w| w.join(" ")).collect()
}

/// For a question whose answer is `answer`: the paragraph that explains it best (its index and how
/// many runs it shares), if any paragraph shares at least [`EXPLAINS_AT`].
fn explaining_paragraph(paras: &[String], answer: &str, lang: Lang) -> Option<(usize, usize)> {
    let want = runs(answer, lang);
    paras
        .iter()
        .enumerate()
        .map(|(i, p)| (i, runs(p, lang).intersection(&want).count()))
        .filter(|(_, shared)| *shared >= EXPLAINS_AT)
        // The earliest of equally good paragraphs: a tie above the question is still telling.
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
}

/// A question whose explaining paragraph stands above it, as "where: what".
fn told_before_asked(
    file: &str,
    markdown: &str,
    id: &str,
    answer: &str,
    lang: Lang,
) -> Option<String> {
    let (paras, marks) = paragraphs(markdown);
    let (_, at) = marks
        .iter()
        .find(|(m, _)| m == id)
        .unwrap_or_else(|| panic!("{file}: no marker for `{id}`"));
    let (best, shared) = explaining_paragraph(&paras, answer, lang)?;
    (best < *at).then(|| {
        let shown: String = paras[best].chars().take(90).collect();
        format!(
            "{file}: `{id}` is asked after the paragraph that explains it ({shared} runs shared): “{shown}…” — move the question above it"
        )
    })
}

/// What a choice question's answer says: its right options and every explanation it shows.
fn answer_text(e: &Exercise, choice: &tracelab_course::ChoiceExercise, lang: Lang) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for o in choice.options.iter().filter(|o| o.correct) {
        parts.push(o.text.get(lang));
        parts.push(o.explain.get(lang));
    }
    if let Some(explain) = &e.explain {
        parts.push(explain.get(lang));
    }
    parts.join("\n")
}

fn asked_after_told(course: &Course) -> Vec<String> {
    let mut found = Vec::new();
    for lesson in &course.lessons {
        for lang in [Lang::En, Lang::Zh] {
            let file = lesson.text.get(lang);
            let text = lesson_text(file);
            for e in &lesson.exercises {
                let ExerciseKind::Choice(choice) = &e.kind else {
                    continue;
                };
                let answer = answer_text(e, choice, lang);
                found.extend(told_before_asked(file, &text, &e.id, &answer, lang));
            }
        }
    }
    found
}

#[test]
fn every_choice_question_comes_before_the_paragraph_that_explains_it() {
    let found = asked_after_told(&course());
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The order check catches an explanation above its question, and passes it below.
#[test]
fn the_order_check_catches_a_question_asked_after_its_answer() {
    let answer =
        "Throughput is a rate over all the work; latency is what one request lives through.";
    let explained =
        "Throughput is a rate over all the work done, while latency is what one request \
                     lives through: the two can move in opposite directions.";
    let told = format!("# L\n\n{explained}\n\n[[exercise:q]]\n\nMore text.\n");
    let asked = format!("# L\n\nPredict first.\n\n[[exercise:q]]\n\n{explained}\n");
    assert!(told_before_asked("l.en.md", &told, "q", answer, Lang::En).is_some());
    assert!(told_before_asked("l.en.md", &asked, "q", answer, Lang::En).is_none());
    // Unrelated text above is no explanation.
    let unrelated = "# L\n\nThe table has ten rows.\n\n[[exercise:q]]\n";
    assert!(told_before_asked("l.en.md", unrelated, "q", answer, Lang::En).is_none());
    let zh_answer = "吞吐是所有工作的总速率，时延是一个请求亲身经历的时间。";
    let zh_told =
        "# 课\n\n吞吐是所有工作的总速率，而时延是一个请求亲身经历的时间。\n\n[[exercise:q]]\n";
    let zh_asked = "# 课\n\n先预测。\n\n[[exercise:q]]\n\n吞吐是所有工作的总速率，而时延是一个请求亲身经历的时间。\n";
    assert!(told_before_asked("l.zh.md", zh_told, "q", zh_answer, Lang::Zh).is_some());
    assert!(told_before_asked("l.zh.md", zh_asked, "q", zh_answer, Lang::Zh).is_none());
}

#[test]
fn no_right_option_is_copied_from_the_text_above_it() {
    let found = leaks_in_choices(&course());
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn no_prompt_or_hint_gives_away_a_number_the_lesson_asks_for() {
    let found = leaks_in_prompts_and_hints(&course());
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The checks themselves catch what they are for, on texts written to leak.
#[test]
fn the_leak_checks_catch_copies_and_give_aways() {
    let above = "Nearest-rank P95 stops being the maximum only from n = 20.";
    assert!(copied(
        "P95 stops being the maximum only from n = 20 (⌈0.95 × 20⌉ = 19).",
        above,
        Lang::En
    )
    .is_some());
    assert!(copied("Rank 19 of 20 is the first below the top.", above, Lang::En).is_none());
    assert!(copied("No.", above, Lang::En).is_none());
    let zh = "要把两台机器的读数合起来，必须先对齐时钟并写明剩余误差。";
    assert!(copied("不能。先对齐时钟并写明剩余误差，才可相减。", zh, Lang::Zh).is_some());
    assert!(copied("不能：两个读数来自不同的钟。", zh, Lang::Zh).is_none());

    assert!(states("the open loop's 17.571 s", "17.571 s"));
    assert!(states("开放到达的是 17.571 秒", "17.571 秒"));
    assert!(!states("R4 drops out", "4"));
    assert!(!states("0.55 s", "0.5 s"));
    assert!(!states("150 ms", "50 ms"));
    assert!(!states("20 seconds", "20 s"));
    assert!(answer_forms(8.0, "count").contains(&"n = 8".to_string()));
    assert!(!answer_forms(8.0, "count").contains(&"8".to_string()));
    assert!(answer_forms(81.0, "count").contains(&"81".to_string()));
    assert!(answer_forms(1.204, "s").contains(&"1.204".to_string()));

    assert_eq!(
        fractions("divide by every attempt: 2/10."),
        vec![(2.0, 10.0)]
    );
    assert_eq!(fractions("7 / 8 = 87.5 %"), vec![(7.0, 8.0)]);
    assert_eq!(
        fractions("Judge each request: 5 of 10 meet"),
        vec![(5.0, 10.0)]
    );
    assert_eq!(fractions("10 个里有 5 个同时满足"), vec![(5.0, 10.0)]);
    assert!(fractions("80 % × 87.5 % × 75 %").is_empty());
}
