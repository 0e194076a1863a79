//! A learner's card read back against the core: each choice it states against the lab's, each
//! figure it writes against the figure its own choices give, each count against the trace. The
//! same reading recomputes a classmate's card from the trace it names: "someone else can
//! recompute from your card" is the card's acceptance test.

use std::cell::OnceCell;

use serde::Serialize;

use tracelab_core::figure::{Figure, Unit};
use tracelab_core::format::{self, trim_num};
use tracelab_core::metrics::Metrics;
use tracelab_core::settings::{pair_label, pair_value_label, Settings, CHOICES, PAIR_KEYS};
use tracelab_core::text::{Lang, Text};
use tracelab_core::trace::Trace;

use crate::card::{prose_line, CardSnapshot, MetricCard};

/// How one line of the card compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Agreement {
    Agrees,
    Differs,
    /// The card leaves it empty (or does not state the choice).
    NotWritten,
    /// Prose the lab cannot judge (observation point, conditions): a reader compares it with
    /// the line the core would write, shown beside it.
    ForAReader,
}

impl Agreement {
    pub fn code(self) -> &'static str {
        match self {
            Agreement::Agrees => "agrees",
            Agreement::Differs => "differs",
            Agreement::NotWritten => "not_written",
            Agreement::ForAReader => "for_a_reader",
        }
    }

    /// The mark a table shows: ✓, ✗, — or ?.
    pub fn mark(self) -> &'static str {
        match self {
            Agreement::Agrees => "✓",
            Agreement::Differs => "✗",
            Agreement::NotWritten => "—",
            Agreement::ForAReader => "?",
        }
    }
}

/// One line of a card's review.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CardLine {
    /// A pair key (`choice:t`), a text field (`field:attempts`) or a figure (`figure:failure_rate`).
    pub id: String,
    pub label: Text,
    /// What the card says: as written, or a stated choice in words.
    pub card_says: Text,
    /// What the core computes (or the lab uses) for the same line.
    pub core: Text,
    pub agreement: Agreement,
    pub why: Text,
}

/// What a review found: the settings the card's figures were recomputed with and every line.
#[derive(Debug, Clone, PartialEq)]
pub struct CardReview {
    /// The card's stated choices over the base settings (the lab's, or the trace's own).
    pub settings: Settings,
    /// Choices the card does not state: the base's value was used for them.
    pub unstated: Vec<&'static str>,
    /// Choices the card states with a value no setting has (`pm=median`).
    pub refused: Vec<String>,
    pub lines: Vec<CardLine>,
}

impl CardReview {
    pub fn count(&self, a: Agreement) -> usize {
        self.lines.iter().filter(|l| l.agreement == a).count()
    }
}

impl MetricCard {
    /// The card's stated choices applied over `base`: the settings its figures claim.
    pub fn stated_settings(&self, base: &Settings) -> (Settings, Vec<&'static str>, Vec<String>) {
        let mut settings = base.clone();
        let refused =
            settings.apply_pairs(self.choices.iter().map(|(k, v)| (k.as_str(), v.trim())));
        let unstated = PAIR_KEYS
            .into_iter()
            // A currency only matters with a cost; no window, no cost to state.
            .filter(|k| !matches!(*k, "cur" | "cost") || base.window_cost.is_some())
            .filter(|k| !self.choices.contains_key(*k))
            .collect();
        (settings, unstated, refused)
    }

    /// The card checked against the lab: each stated choice against the lab's settings, and
    /// every count and figure against what the card's own choices give on the lab's trace
    /// (a choice the card leaves out is taken from the lab, and said).
    pub fn check_against_lab(&self, trace: &Trace, lab: &Settings) -> CardReview {
        review(self, trace, lab, Some(lab), None)
    }

    /// A classmate's card recomputed from the trace it names: every figure from the card's
    /// own choices (one it leaves out: the trace's own setting, and said), marking what does
    /// not follow. `file` is the name of the trace loaded, checked against the card's source.
    pub fn recompute(&self, trace: &Trace, file: &str) -> CardReview {
        review(
            self,
            trace,
            &Settings::from_header(&trace.header),
            None,
            Some(file),
        )
    }
}

fn t(en: impl Into<String>, zh: impl Into<String>) -> Text {
    Text::new(en, zh)
}

fn review(
    card: &MetricCard,
    trace: &Trace,
    base: &Settings,
    lab: Option<&Settings>,
    file: Option<&str>,
) -> CardReview {
    let (settings, unstated, refused) = card.stated_settings(base);
    let from = if lab.is_some() {
        t("the lab's", "实验室的")
    } else {
        t("the trace's own", "记录自带的")
    };
    let mut lines = Vec::new();

    if let Some(file) = file {
        let named = !card.source.trim().is_empty() && card.source.contains(file);
        lines.push(CardLine {
            id: "field:source".into(),
            label: MetricCard::label("source"),
            card_says: t(card.source.clone(), card.source.clone()),
            core: t(file, file),
            agreement: if card.source.trim().is_empty() {
                Agreement::NotWritten
            } else if named {
                Agreement::Agrees
            } else {
                Agreement::Differs
            },
            why: if named {
                t("The card names the trace that was loaded.", "口径卡写明的正是载入的这份记录。")
            } else {
                t(
                    format!("The card does not name {file}: check that this is the trace the card was written from."),
                    format!("口径卡没有写明 {file}：请确认这就是写卡时用的那份记录。"),
                )
            },
        });
    }

    // Each choice: stated or not, and (against the lab) the same as the lab's or not.
    let stated_pairs = settings.to_pairs();
    let lab_pairs = lab.map(|l| l.to_pairs());
    for key in PAIR_KEYS {
        let label = pair_label(key);
        let card_code = card.choices.get(key);
        let used = stated_pairs
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone());
        let lab_code = lab_pairs
            .as_ref()
            .and_then(|p| p.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone()));
        let words = |code: &str| pair_value_label(key, code);
        let line = match card_code {
            Some(code) if refused.iter().any(|r| r == key) => CardLine {
                id: format!("choice:{key}"),
                label,
                card_says: t(code.clone(), code.clone()),
                core: used.as_deref().map(words).unwrap_or_default(),
                agreement: Agreement::Differs,
                why: t(
                    format!(
                        "`{code}` is not a value this choice has, so {} value was used.",
                        from.en
                    ),
                    format!("`{code}` 不是这项选择的取值，所以改用{}取值。", from.zh),
                ),
            },
            Some(code) => {
                let said = words(code);
                match &lab_code {
                    Some(lab_code) if lab_code != &used.clone().unwrap_or_default() => CardLine {
                        id: format!("choice:{key}"),
                        label,
                        card_says: words(code),
                        core: words(lab_code),
                        agreement: Agreement::Differs,
                        why: t(
                            format!("The card says {}; the lab uses {}. The card's figures are recomputed with the card's choice.", said.en, words(lab_code).en),
                            format!("口径卡写的是{}；实验室用的是{}。口径卡的数字按口径卡的选择重算。", said.zh, words(lab_code).zh),
                        ),
                    },
                    _ => CardLine {
                        id: format!("choice:{key}"),
                        label,
                        card_says: words(code),
                        core: said.clone(),
                        agreement: Agreement::Agrees,
                        why: if lab.is_some() {
                            t("The lab uses the same.", "实验室用的也是这个。")
                        } else {
                            t("Stated, so the figures are recomputed with it.", "已写明，数字按它重算。")
                        },
                    },
                }
            }
            None if unstated.contains(&key) => {
                let value = used.as_deref().map(words).unwrap_or_default();
                CardLine {
                    id: format!("choice:{key}"),
                    label,
                    card_says: Text::default(),
                    core: value.clone(),
                    agreement: Agreement::NotWritten,
                    why: t(
                        format!("Not stated, so no one can recompute from the card alone; {} value ({}) was used.", from.en, value.en),
                        format!("没有写明，别人无法只凭口径卡重算；这里用了{}取值（{}）。", from.zh, value.zh),
                    ),
                }
            }
            None => continue,
        };
        lines.push(line);
    }

    let metrics = Metrics::of(&trace.attempts, &settings);
    lines.extend(count_lines(card, &metrics));
    // The figures under each single other choice, computed once, the first time a written
    // figure differs (then every differing figure is looked up in them).
    let others = OnceCell::new();
    for r in &card.results {
        let Some(f) = metrics.card_figures().into_iter().find(|f| f.key == r.key) else {
            continue;
        };
        lines.push(figure_line(&r.value, f, &settings, || {
            others.get_or_init(|| single_choice_figures(trace, &settings))
        }));
    }
    if let Some(second) = &card.second {
        lines.extend(second_lines(second, trace, &settings));
    }
    // The prose fields: the core's own line for the same trace, beside the learner's.
    for key in [
        "observation_point",
        "conditions",
        "success_condition",
        "telemetry",
    ] {
        let value = card.field(key).cloned().unwrap_or_default();
        let core = t(
            prose_line(key, trace, &metrics, Lang::En),
            prose_line(key, trace, &metrics, Lang::Zh),
        );
        let empty = value.trim().is_empty();
        lines.push(CardLine {
            id: format!("field:{key}"),
            label: MetricCard::label(key),
            card_says: t(value.clone(), value.clone()),
            core,
            agreement: if empty {
                Agreement::NotWritten
            } else {
                Agreement::ForAReader
            },
            why: if empty {
                t(
                    "Empty: a reader cannot tell what was held fixed or how it was measured.",
                    "空着：读者无从得知固定了什么、怎样测量的。",
                )
            } else {
                t(
                    "Prose: compare it with the line the core writes for this trace.",
                    "文字说明：请与核心为这份记录写出的那一行对照。",
                )
            },
        });
    }
    CardReview {
        settings,
        unstated,
        refused,
        lines,
    }
}

/// The second snapshot: its threshold (stated, and not the card's own) and each figure it
/// writes against what the card's choices with the snapshot's on top give.
fn second_lines(second: &CardSnapshot, trace: &Trace, first: &Settings) -> Vec<CardLine> {
    let mut settings = first.clone();
    let refused = settings.apply_pairs(second.choices.iter().map(|(k, v)| (k.as_str(), v.trim())));
    let label = t("Second snapshot: TTFT threshold", "第二组设置：TTFT 门槛");
    let stated = second.choices.get("t");
    let threshold = |s: &Settings| {
        t(
            format!("{} s", trim_num(s.ttft_threshold_s)),
            format!("{} 秒", trim_num(s.ttft_threshold_s)),
        )
    };
    let (agreement, why) = match stated {
        None => (
            Agreement::NotWritten,
            t(
                "Not stated: write the second threshold (the lesson's 0.5 s) so both are on one card.",
                "没有写明：请写出第二个门槛（课上的 0.5 秒），让两个门槛在同一张卡上。",
            ),
        ),
        Some(_) if refused.iter().any(|r| r == "t") => (
            Agreement::Differs,
            t(
                "Not a threshold in seconds: write a number such as 0.5.",
                "这不是以秒为单位的门槛：请写一个数字，例如 0.5。",
            ),
        ),
        Some(_) if settings.ttft_threshold_s == first.ttft_threshold_s => (
            Agreement::Differs,
            t(
                "The same threshold as the card's own: the second snapshot must hold the other one.",
                "与口径卡本身的门槛相同：第二组设置应当是另一个门槛。",
            ),
        ),
        Some(_) => (
            Agreement::Agrees,
            t(
                format!("Two thresholds on one card: {} and {}.", threshold(first).en, threshold(&settings).en),
                format!("同一张卡上的两个门槛：{} 和 {}。", threshold(first).zh, threshold(&settings).zh),
            ),
        ),
    };
    let mut out = vec![CardLine {
        id: "second:choice:t".into(),
        label,
        card_says: stated.map(|v| t(v.clone(), v.clone())).unwrap_or_default(),
        core: threshold(&settings),
        agreement,
        why,
    }];
    let metrics = Metrics::of(&trace.attempts, &settings);
    let others = OnceCell::new();
    for r in &second.results {
        let Some(f) = metrics.card_figures().into_iter().find(|f| f.key == r.key) else {
            continue;
        };
        let mut line = figure_line(&r.value, f, &settings, || {
            others.get_or_init(|| single_choice_figures(trace, &settings))
        });
        line.id = format!("second:{}", line.id);
        let th = threshold(&settings);
        line.label = t(
            format!("{} (TTFT threshold {})", line.label.en, th.en),
            format!("{}（TTFT 门槛 {}）", line.label.zh, th.zh),
        );
        out.push(line);
    }
    out
}

/// The attempts counted and the TTFT sample size: the first whole number each field writes.
fn count_lines(card: &MetricCard, m: &Metrics) -> Vec<CardLine> {
    let ttft_n = m.ttft_p50.n.unwrap_or(0);
    [
        (
            "attempts",
            &card.attempts,
            m.attempts,
            t("attempts counted", "计入的尝试"),
        ),
        (
            "sample_count",
            &card.sample_count,
            ttft_n,
            t("TTFT samples", "TTFT 样本"),
        ),
    ]
    .into_iter()
    .map(|(key, written, want, what)| {
        let read = first_number(written).map(|(v, _)| v);
        let want_n = want as f64;
        let want = format::integer(want as u64);
        let (agreement, why) = match read {
            None if written.trim().is_empty() => (
                Agreement::NotWritten,
                t(
                    format!("Empty: write the {} ({want}).", what.en),
                    format!("空着：请写出{}（{want}）。", what.zh),
                ),
            ),
            None => (
                Agreement::Differs,
                t(
                    format!("No number found: the {} is {want}.", what.en),
                    format!("没有找到数字：{}是 {want}。", what.zh),
                ),
            ),
            Some(v) if v == want_n => (
                Agreement::Agrees,
                t(
                    format!("The first number is the {}: {want}.", what.en),
                    format!("第一个数字就是{}：{want}。", what.zh),
                ),
            ),
            Some(v) => (
                Agreement::Differs,
                t(
                    format!(
                        "The first number written is {}; the card's choices give {want} {}.",
                        format::count_value(v),
                        what.en
                    ),
                    format!(
                        "写的第一个数字是 {}；按口径卡的选择，{}是 {want}。",
                        format::count_value(v),
                        what.zh
                    ),
                ),
            ),
        };
        CardLine {
            id: format!("field:{key}"),
            label: MetricCard::label(key),
            card_says: t(written.clone(), written.clone()),
            core: t(want.clone(), want),
            agreement,
            why,
        }
    })
    .collect()
}

/// One written figure against the core's under the card's choices. When it differs, the
/// single choice that would give the written value is named: the usual cause.
fn figure_line<'a>(
    written: &str,
    f: &Figure,
    settings: &Settings,
    others: impl FnOnce() -> &'a [OtherChoice],
) -> CardLine {
    let core = t(format::value(f, Lang::En), format::value(f, Lang::Zh));
    let line = |agreement, why| CardLine {
        id: format!("figure:{}", f.key),
        label: f.name.clone(),
        card_says: t(written, written),
        core: core.clone(),
        agreement,
        why,
    };
    if written.trim().is_empty() {
        return line(Agreement::NotWritten, t("Not written yet.", "还没有写。"));
    }
    let detail = t(
        tracelab_core::card::figure_detail(f, Lang::En),
        tracelab_core::card::figure_detail(f, Lang::Zh),
    );
    match (reads_as(written, f), f.value) {
        (Written::Undefined, None) => line(
            Agreement::Agrees,
            t("Undefined, as the core finds.", "无定义，与核心一致。"),
        ),
        (Written::Undefined, Some(_)) => line(
            Agreement::Differs,
            t(
                format!(
                    "The card says undefined; the card's choices give {} ({}).",
                    core.en, detail.en
                ),
                format!(
                    "口径卡写的是无定义；按口径卡的选择应为 {}（{}）。",
                    core.zh, detail.zh
                ),
            ),
        ),
        (Written::Unreadable, _) => line(
            Agreement::Differs,
            t(
                format!(
                    "No number in a unit could be read from \"{written}\" (write it like \"{}\").",
                    core.en
                ),
                format!(
                    "无法从“{written}”读出带单位的数字（请写成“{}”这样）。",
                    core.zh
                ),
            ),
        ),
        (Written::Value(_, _), None) => line(
            Agreement::Differs,
            t(
                format!(
                    "The card's choices leave this figure undefined: {}.",
                    f.undefined
                        .as_ref()
                        .map(|u| u.en.as_str())
                        .unwrap_or("no value")
                ),
                format!(
                    "按口径卡的选择，这个指标无定义：{}。",
                    f.undefined
                        .as_ref()
                        .map(|u| u.zh.as_str())
                        .unwrap_or("没有数值")
                ),
            ),
        ),
        (Written::Value(v, tol), Some(exact)) if close(v, tol, exact) => line(
            Agreement::Agrees,
            t(
                format!(
                    "Follows from the card's choices: {} ({}).",
                    core.en, detail.en
                ),
                format!("由口径卡的选择可以得出：{}（{}）。", core.zh, detail.zh),
            ),
        ),
        (Written::Value(v, tol), Some(_)) => {
            let cause = others()
                .iter()
                .find(|o| {
                    o.metrics
                        .card_figures()
                        .into_iter()
                        .find(|g| g.key == f.key)
                        .and_then(|g| g.value)
                        .is_some_and(|x| close(v, tol, x))
                })
                .map(|o| (o.key, o.code.to_string()));
            let because = match cause {
                Some((key, code)) => t(
                    format!(
                        " The written value is what {} = {} gives, but the card states {}.",
                        pair_label(key).en,
                        pair_value_label(key, &code).en,
                        settings
                            .to_pairs()
                            .iter()
                            .find(|(k, _)| *k == key)
                            .map(|(_, c)| pair_value_label(key, c).en)
                            .unwrap_or_default()
                    ),
                    format!(
                        " 写下的数字是“{} = {}”时的结果，但口径卡写的是{}。",
                        pair_label(key).zh,
                        pair_value_label(key, &code).zh,
                        settings
                            .to_pairs()
                            .iter()
                            .find(|(k, _)| *k == key)
                            .map(|(_, c)| pair_value_label(key, c).zh)
                            .unwrap_or_default()
                    ),
                ),
                None => t("", ""),
            };
            line(
                Agreement::Differs,
                t(
                    format!(
                        "Does not follow: the card's choices give {} ({}).{}",
                        core.en, detail.en, because.en
                    ),
                    format!(
                        "推不出来：按口径卡的选择应为 {}（{}）。{}",
                        core.zh, detail.zh, because.zh
                    ),
                ),
            )
        }
    }
}

/// One choice changed from the card's, the others as stated, and the figures it gives.
struct OtherChoice {
    key: &'static str,
    code: &'static str,
    metrics: Metrics,
}

/// Every single other choice the card could have made, with its figures: where a written value
/// that does not follow comes from.
fn single_choice_figures(trace: &Trace, settings: &Settings) -> Vec<OtherChoice> {
    let stated = settings.to_pairs();
    let mut out = Vec::new();
    for spec in &CHOICES {
        let current = stated
            .iter()
            .find(|(k, _)| *k == spec.key)
            .map(|(_, c)| c.as_str())
            .unwrap_or_default();
        for (code, _, _) in spec.options.iter().filter(|(code, _, _)| *code != current) {
            let mut other = settings.clone();
            if other.apply_pairs([(spec.key, *code)]).is_empty() {
                out.push(OtherChoice {
                    key: spec.key,
                    code,
                    metrics: Metrics::of(&trace.attempts, &other),
                });
            }
        }
    }
    out
}

fn close(written: f64, tol: f64, exact: f64) -> bool {
    (written - exact).abs() <= tol + 1e-9 * exact.abs().max(1.0)
}

/// What a written value says, in the figure's own unit (seconds, a 0–1 share, a count…).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Written {
    /// The value and the rounding its digits allow (half the last written digit).
    Value(f64, f64),
    Undefined,
    Unreadable,
}

fn reads_as(text: &str, f: &Figure) -> Written {
    let lower = text.trim().to_lowercase();
    if ["undefined", "无定义", "—", "-", "n/a", "none"].contains(&lower.as_str()) {
        return Written::Undefined;
    }
    let Some((v, rest_start)) = first_number(text) else {
        return Written::Unreadable;
    };
    let decimals = decimals_of(text);
    let tol = 0.5 * 10f64.powi(-(decimals as i32));
    let rest = text[rest_start..].trim_start().to_lowercase();
    let scale = match f.unit {
        Unit::Seconds if rest.starts_with("ms") || rest.starts_with("毫秒") => 0.001,
        Unit::Seconds
            if rest.starts_with("µs") || rest.starts_with("us") || rest.starts_with("微秒") =>
        {
            1e-6
        }
        Unit::Seconds => 1.0,
        Unit::Ratio if rest.starts_with('%') => 0.01,
        Unit::Ratio => 1.0,
        _ => 1.0,
    };
    Written::Value(v * scale, tol * scale)
}

/// The first number in `text` ("1,234.5 ms" → 1234.5), with the byte where what follows it begins.
pub(crate) fn first_number(text: &str) -> Option<(f64, usize)> {
    let bytes = text.as_bytes();
    let start = bytes.iter().position(|b| b.is_ascii_digit())?;
    let start = if start > 0 && bytes[start - 1] == b'-' {
        start - 1
    } else {
        start
    };
    let mut end = start + 1;
    let mut digits = String::from(&text[start..end]);
    while end < bytes.len() {
        let b = bytes[end];
        let next_is_digit = bytes.get(end + 1).is_some_and(|n| n.is_ascii_digit());
        if b.is_ascii_digit() || (b == b'.' && next_is_digit) {
            digits.push(b as char);
        } else if b == b',' && !digits.contains('.') && thousands_group(&bytes[end + 1..]) {
            // A thousands separator ("100,000"); "0,5" is not one, and stops the number.
        } else {
            break;
        }
        end += 1;
    }
    digits.parse().ok().map(|v| (v, end))
}

/// Exactly three digits, then no digit: what follows a thousands separator.
fn thousands_group(rest: &[u8]) -> bool {
    rest.len() >= 3
        && rest[..3].iter().all(u8::is_ascii_digit)
        && !rest.get(3).is_some_and(u8::is_ascii_digit)
}

fn decimals_of(text: &str) -> usize {
    let Some((_, end)) = first_number(text) else {
        return 0;
    };
    let number = &text[..end];
    match number.rfind('.') {
        Some(dot) => number[dot + 1..]
            .chars()
            .filter(|c| c.is_ascii_digit())
            .count(),
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_with_their_separators_and_digits() {
        assert_eq!(first_number("1,234.5 ms"), Some((1234.5, 7)));
        assert_eq!(first_number("TTFT: 8 (complete successes)"), Some((8.0, 7)));
        assert_eq!(first_number("-0.5"), Some((-0.5, 4)));
        assert_eq!(first_number("no digits"), None);
        assert_eq!(first_number("100,000 attempts"), Some((100000.0, 7)));
        assert_eq!(first_number("0,5 s"), Some((0.0, 1)));
        assert_eq!(decimals_of("1.20 s"), 2);
        assert_eq!(decimals_of("700 ms"), 0);
    }
}
