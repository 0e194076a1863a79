//! Stepping through a trace row by row, as a class recomputes the table: the running tally up to
//! a row, a plain explanation of one row's verdict, and "judge first": the learner's own call on
//! each row (qualified, or not and the first failing [`Reason`]) scored against the verdict.

use serde::Serialize;

use crate::format::trim_num;
use crate::index::Index;
use crate::settings::Settings;
use crate::text::Text;
use crate::trace::{Attempt, Quality};
use crate::verdict::{is_counted, threshold_ms, verdict, Latency, Reason, Verdict};

/// Counts over the rows seen so far (rows 0..=upto).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Tally {
    pub seen: usize,
    /// Seen rows that the population's choices count.
    pub counted: usize,
    pub successes: usize,
    pub failures: usize,
    pub quality_pass: usize,
    pub qualified: usize,
}

/// The running tally after row `upto` (0-based, inclusive). O(upto).
pub fn tally(attempts: &[Attempt], settings: &Settings, upto: usize) -> Tally {
    let mut t = Tally::default();
    for a in attempts.iter().take(upto.saturating_add(1)) {
        t.seen += 1;
        if !is_counted(a, &settings.population) {
            continue;
        }
        t.counted += 1;
        let v = verdict(a, settings);
        if v.complete_success {
            t.successes += 1;
            if a.quality == Quality::Pass {
                t.quality_pass += 1;
            }
        } else {
            t.failures += 1;
        }
        if v.qualified {
            t.qualified += 1;
        }
    }
    t
}

impl Tally {
    /// [`tally`] over the `rows` rows an index was built from (`Index::build` on the rows up to
    /// the one reached, under `settings`' population): the same counts from the index's, and the
    /// qualified count by one binary search, so a threshold edit with the last of a million
    /// rows selected does not judge every row again.
    pub fn of_index(ix: &Index, rows: usize, settings: &Settings) -> Tally {
        Tally {
            seen: rows,
            counted: ix.attempts,
            successes: ix.successes,
            failures: ix.failures,
            quality_pass: ix.quality_pass,
            qualified: ix.qualified(threshold_ms(settings), settings.comparison),
        }
    }

    /// "After R6: 5 qualified so far (6 counted, 6 successes, 0 failures)".
    pub fn sentence(&self, row_id: &str) -> Text {
        let int = |n: usize| crate::format::integer(n as u64);
        Text::new(
            format!(
                "After {row_id}: {} qualified so far ({} counted, {}, {})",
                int(self.qualified),
                int(self.counted),
                crate::format::count(self.successes, "success", "successes"),
                crate::format::count(self.failures, "failure", "failures")
            ),
            format!(
                "到 {row_id} 为止：已有 {} 个合格（计入 {} 个，成功 {} 个，失败 {} 个）",
                int(self.qualified),
                int(self.counted),
                int(self.successes),
                int(self.failures)
            ),
        )
    }
}

/// A learner's call on one row before the lab shows its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Call {
    Qualified,
    /// Not qualified, and the first reason (failure, then quality, then latency).
    Not(Reason),
}

impl Call {
    /// Every call a learner can make, in the order the lesson checks a row.
    pub const ALL: [Call; 4] = [
        Call::Qualified,
        Call::Not(Reason::Failure),
        Call::Not(Reason::Quality),
        Call::Not(Reason::Latency),
    ];

    /// A short code for a button or a test id (`qualified`, `failure`, `quality`, `latency`).
    pub fn code(self) -> &'static str {
        match self {
            Call::Qualified => "qualified",
            Call::Not(r) => r.code(),
        }
    }

    /// "qualified", "not qualified: quality".
    pub fn text(self) -> Text {
        match self {
            Call::Qualified => Text::new("qualified", "合格"),
            Call::Not(r) => Text::new(
                format!("not qualified: {}", r.text().en),
                format!("不合格：{}", r.text().zh),
            ),
        }
    }

    /// The call the verdict makes.
    pub fn of(v: &Verdict) -> Call {
        v.reason.map_or(Call::Qualified, Call::Not)
    }
}

/// Whether a row is judged at all: a warm-up row that the population leaves out has no verdict
/// of its own, and a row a wrong choice deletes is not counted.
pub fn judgeable(attempt: &Attempt, settings: &Settings) -> bool {
    is_counted(attempt, &settings.population)
}

/// One call checked: the verdict (qualified or not) and, for a row that is not, the reason.
pub fn check_call(attempt: &Attempt, settings: &Settings, call: Call) -> (bool, Text) {
    let truth = Call::of(&verdict(attempt, settings));
    let right = call == truth;
    let verdict_right = matches!(
        (call, truth),
        (Call::Qualified, Call::Qualified) | (Call::Not(_), Call::Not(_))
    );
    let said = call.text();
    let is = truth.text();
    let text = if right {
        Text::new(
            format!("✓ You said {}: right.", said.en),
            format!("✓ 你判断为{}：正确。", said.zh),
        )
    } else if verdict_right {
        Text::new(
            format!(
                "½ You said {}: not qualified is right, but the first failing reason is {}.",
                said.en,
                is.en.trim_start_matches("not qualified: ")
            ),
            format!(
                "½ 你判断为{}：不合格是对的，但首个不合格原因是{}。",
                said.zh,
                is.zh.trim_start_matches("不合格：")
            ),
        )
    } else {
        Text::new(
            format!("✗ You said {}; the row is {}.", said.en, is.en),
            format!("✗ 你判断为{}；这一行是{}。", said.zh, is.zh),
        )
    };
    (right, text)
}

/// The score of a judge-first pass: rows judged, verdicts right, and among the rows that are not
/// qualified and were called not qualified, reasons right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Score {
    /// Rows that can be judged ([`judgeable`]).
    pub rows: usize,
    pub judged: usize,
    pub verdicts_right: usize,
    /// Rows not qualified that the learner called not qualified.
    pub reasons_asked: usize,
    pub reasons_right: usize,
}

/// Scores `calls` (the call on row `i` at `calls[i]`; `None` or past the end: not judged yet)
/// against the verdicts under `settings`.
pub fn score(attempts: &[Attempt], settings: &Settings, calls: &[Option<Call>]) -> Score {
    let mut s = Score::default();
    for (i, a) in attempts.iter().enumerate() {
        if !judgeable(a, settings) {
            continue;
        }
        s.rows += 1;
        let Some(&Some(call)) = calls.get(i) else {
            continue;
        };
        s.judged += 1;
        match (call, Call::of(&verdict(a, settings))) {
            (Call::Qualified, Call::Qualified) => s.verdicts_right += 1,
            (Call::Not(said), Call::Not(is)) => {
                s.verdicts_right += 1;
                s.reasons_asked += 1;
                if said == is {
                    s.reasons_right += 1;
                }
            }
            _ => {}
        }
    }
    s
}

impl Score {
    pub fn done(&self) -> bool {
        self.rows > 0 && self.judged == self.rows
    }

    /// "Judged 4 of 10 rows: 3 verdicts right; 1 of 2 reasons right." (with "Score:" at the end).
    pub fn sentence(&self) -> Text {
        let lead = if self.done() {
            ("Score: judged all", "得分：全部")
        } else {
            ("Judged", "已判断")
        };
        Text::new(
            format!(
                "{} {} of {} rows: {} verdicts right; {} of {} reasons right.",
                lead.0,
                self.judged,
                self.rows,
                self.verdicts_right,
                self.reasons_right,
                self.reasons_asked
            ),
            format!(
                "{} {} / {} 行：判断对 {} 行；不合格原因对 {} / {} 个。",
                lead.1,
                self.judged,
                self.rows,
                self.verdicts_right,
                self.reasons_right,
                self.reasons_asked
            ),
        )
    }
}

/// One step of the "why" panel: a question, its answer, and whether it passed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub question: Text,
    pub answer: Text,
    pub ok: bool,
}

/// Why an attempt is (not) jointly qualified, in the order the lesson checks it.
pub fn explain(attempt: &Attempt, settings: &Settings) -> (Verdict, Vec<Check>) {
    let v = verdict(attempt, settings);
    let mut checks = Vec::new();
    checks.push(Check {
        question: Text::new("Complete success?", "完整成功？"),
        answer: if v.complete_success {
            Text::new(
                "yes: HTTP success and the stream read to its proper end",
                "是：HTTP 成功，且流正常读到结束",
            )
        } else {
            Text::new(
                format!(
                    "no: {} — a failure stays in the denominator",
                    attempt.outcome
                ),
                format!("否：{} —— 失败仍然留在分母里", attempt.outcome),
            )
        },
        ok: v.complete_success,
    });
    let threshold = trim_num(settings.ttft_threshold_s);
    let symbol = settings.comparison.symbol();
    let missing_as_zero =
        settings.population.missing_ttft == crate::settings::MissingTtft::TreatAsZero;
    let (answer, ok) = match (
        v.latency,
        v.ttft_s,
        attempt.ttft_under(settings.population.first_token),
    ) {
        // A failure never passes this check, whatever its TTFT: a stream broken after its first
        // token has a TTFT, but the TTFT sample is the successes' (unless a missing TTFT is
        // wrongly counted as 0, which lets every attempt in). A no-break space keeps "0.4 s"
        // on one line.
        _ if !v.complete_success => {
            let timed = attempt
                .ttft_under(settings.population.first_token)
                .is_some();
            let answer = match (timed, v.ttft_s, missing_as_zero) {
                (true, Some(t), false) => Text::new(
                    format!("{}\u{a0}s, but this attempt failed: a failure's TTFT is not in the TTFT sample (successes only), and it does not qualify whatever its TTFT", trim_num(t)),
                    format!("{}\u{a0}秒，但这个请求失败了：失败请求的 TTFT 不在 TTFT 样本里（样本只有成功请求），无论 TTFT 多少，它都不合格", trim_num(t)),
                ),
                (true, Some(t), true) => Text::new(
                    format!("{}\u{a0}s, but this attempt failed: it is in this TTFT sample only because a missing TTFT counted as 0 lets every attempt in (wrong), and it does not qualify whatever its TTFT", trim_num(t)),
                    format!("{}\u{a0}秒，但这个请求失败了：它进入这个 TTFT 样本，只是因为把缺失的 TTFT 当作 0 让所有尝试都进来了（错误）；无论 TTFT 多少，它都不合格", trim_num(t)),
                ),
                (false, Some(_), _) => Text::new(
                    "missing, counted as 0 s (wrong), and this attempt failed: it is in this TTFT sample only because of that 0, and it does not qualify whatever its TTFT",
                    "缺失，却被当作 0 秒（错误），而且这个请求失败了：它进入这个 TTFT 样本只是因为这个 0；无论 TTFT 多少，它都不合格",
                ),
                _ => Text::new(
                    "missing: no token came, so there is nothing to time (not 0); this attempt failed, so it does not qualify",
                    "缺失：没有收到 token，无从计时（不是 0）；这个请求失败了，所以不合格",
                ),
            };
            (answer, false)
        }
        (_, _, None) if v.ttft_s.is_some() => (
            Text::new(
                format!("missing, counted as 0 (wrong): 0 {symbol} {threshold}"),
                format!("缺失，却被当作 0（错误）：0 {symbol} {threshold}"),
            ),
            v.latency == Latency::Within,
        ),
        (Latency::NoToken, _, _) => (
            Text::new(
                "missing: no token came, so there is nothing to time (not 0)",
                "缺失：没有收到 token，无从计时（不是 0）",
            ),
            false,
        ),
        (Latency::Within, Some(t), _) => (
            Text::new(
                format!("{} {symbol} {threshold}: within", trim_num(t)),
                format!("{} {symbol} {threshold}：达标", trim_num(t)),
            ),
            true,
        ),
        (_, Some(t), _) => {
            let not = if symbol == "≤" { ">" } else { "≥" };
            (
                Text::new(
                    format!("{} {not} {threshold}: too slow", trim_num(t)),
                    format!("{} {not} {threshold}：太慢", trim_num(t)),
                ),
                false,
            )
        }
        _ => (Text::new("—", "—"), false),
    };
    checks.push(Check {
        question: Text::new("TTFT within the threshold?", "TTFT 在门槛内？"),
        answer,
        ok,
    });
    checks.push(Check {
        question: Text::new("Quality pass?", "质量通过？"),
        answer: match (attempt.quality, settings.population.quality) {
            (Quality::Pass, _) => Text::new("pass", "通过"),
            (_, crate::settings::QualityRule::Ignored) => Text::new(
                "not passed, yet ignored here (wrong): it does not stop this request qualifying",
                "未通过，但这里被忽略了（错误）：它不再妨碍这个请求合格",
            ),
            (Quality::Fail, _) => Text::new("fail", "未通过"),
            (Quality::NotEvaluated, _) => Text::new(
                "not evaluated (counts as not passed)",
                "未评估（按未通过计）",
            ),
        },
        ok: attempt.quality == Quality::Pass,
    });
    checks.push(Check {
        question: Text::new("Jointly qualified?", "联合合格？"),
        answer: match v.reason {
            None => Text::new(
                "yes: all three hold for this one request",
                "是：这一个请求同时满足三个条件",
            ),
            Some(r) => {
                let first = match r {
                    Reason::Failure => Text::new("it failed", "它失败了"),
                    Reason::Quality => Text::new(
                        "its answer did not pass quality",
                        "它的回答没有通过质量检查",
                    ),
                    Reason::Latency => {
                        Text::new("its first token came too late", "它的首个 token 来得太晚")
                    }
                };
                Text::new(
                    format!("no: first failing reason — {}", first.en),
                    format!("否：首个不合格原因 —— {}", first.zh),
                )
            }
        },
        ok: v.qualified,
    });
    (v, checks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Outcome;

    #[test]
    fn the_tally_from_an_index_is_the_tally_row_by_row() {
        use crate::settings::{FailureDenominator, MissingTtft, QualityRule, WarmupPolicy};
        use crate::trace::Phase;
        // Every kind of row the counts tell apart: a warm-up, failures, a quality fail, a
        // success without a token, TTFTs on both sides of and at the threshold.
        let mut rows = vec![
            Attempt::new("W", Outcome::Success, Some(100.0), Quality::Pass),
            Attempt::new("A", Outcome::Success, Some(300.0), Quality::Pass),
            Attempt::new("B", Outcome::Success, Some(500.0), Quality::Pass),
            Attempt::new("C", Outcome::Success, Some(200.0), Quality::Fail),
            Attempt::new(
                "D",
                Outcome::TimeoutBeforeFirstToken,
                None,
                Quality::NotEvaluated,
            ),
            Attempt::new("E", Outcome::Success, None, Quality::Pass),
            Attempt::new("F", Outcome::Success, Some(250.0), Quality::NotEvaluated),
        ];
        rows[0].phase = Phase::Warmup;
        for upto in 0..rows.len() {
            for (denominator, missing, warmup, quality, comparison) in [
                (
                    FailureDenominator::AllAttempts,
                    MissingTtft::KeepMissing,
                    WarmupPolicy::Exclude,
                    QualityRule::Required,
                    crate::Comparison::Le,
                ),
                (
                    FailureDenominator::FailedRowsDeleted,
                    MissingTtft::TreatAsZero,
                    WarmupPolicy::Include,
                    QualityRule::Ignored,
                    crate::Comparison::Lt,
                ),
                (
                    FailureDenominator::Successes,
                    MissingTtft::TreatAsZero,
                    WarmupPolicy::Exclude,
                    QualityRule::Required,
                    crate::Comparison::Lt,
                ),
            ] {
                let mut s = Settings {
                    ttft_threshold_s: 0.3,
                    comparison,
                    ..Settings::default()
                };
                s.population.failure_denominator = denominator;
                s.population.missing_ttft = missing;
                s.population.warmup = warmup;
                s.population.quality = quality;
                let ix = Index::build(&rows[..=upto], s.population);
                assert_eq!(
                    Tally::of_index(&ix, upto + 1, &s),
                    tally(&rows, &s, upto),
                    "up to row {upto} under {:?}",
                    s.population
                );
            }
        }
    }

    #[test]
    fn a_judge_first_pass_is_scored_against_the_verdicts() {
        let ok = |id: &str, ms: f64, q: Quality| Attempt::new(id, Outcome::Success, Some(ms), q);
        let rows = vec![
            ok("R1", 200.0, Quality::Pass),
            ok("R5", 600.0, Quality::Fail),
            ok("R7", 1200.0, Quality::Pass),
            Attempt::new(
                "R9",
                Outcome::TimeoutBeforeFirstToken,
                None,
                Quality::NotEvaluated,
            ),
        ];
        let s = Settings::default();
        // R5 called qualified (wrong), R7 not qualified for quality (verdict right, reason wrong),
        // R9 a failure (right); R1 not judged yet.
        let calls = vec![
            None,
            Some(Call::Qualified),
            Some(Call::Not(Reason::Quality)),
            Some(Call::Not(Reason::Failure)),
        ];
        let sc = score(&rows, &s, &calls);
        assert_eq!(
            sc,
            Score {
                rows: 4,
                judged: 3,
                verdicts_right: 2,
                reasons_asked: 2,
                reasons_right: 1
            }
        );
        assert!(!sc.done());
        assert_eq!(
            sc.sentence().en,
            "Judged 3 of 4 rows: 2 verdicts right; 1 of 2 reasons right."
        );
        let mut all = calls.clone();
        all[0] = Some(Call::Qualified);
        assert!(score(&rows, &s, &all).done());
        assert!(score(&rows, &s, &all)
            .sentence()
            .en
            .starts_with("Score: judged all 4 of 4"));
        let (right, text) = check_call(&rows[1], &s, Call::Qualified);
        assert!(
            !right && text.en.contains("not qualified: quality"),
            "{}",
            text.en
        );
        let (right, text) = check_call(&rows[2], &s, Call::Not(Reason::Quality));
        assert!(
            !right && text.en.starts_with("½") && text.en.ends_with("latency."),
            "{}",
            text.en
        );
        assert!(check_call(&rows[1], &s, Call::Not(Reason::Quality)).0);
        // With quality left out (the wrong rule), R5 is qualified and the score follows.
        let mut wrong = s.clone();
        wrong.population.quality = crate::settings::QualityRule::Ignored;
        assert_eq!(score(&rows, &wrong, &calls).verdicts_right, 3);
        assert_eq!(
            Call::ALL.map(Call::code),
            ["qualified", "failure", "quality", "latency"]
        );
    }

    #[test]
    fn a_failure_with_a_first_token_never_passes_the_ttft_check() {
        // R3 (0.4 s) whose stream broke after its first token: a failure with a TTFT.
        let broken = Attempt::new(
            "R3",
            Outcome::StreamBroken,
            Some(400.0),
            Quality::NotEvaluated,
        );
        let s = Settings::default();
        let (v, checks) = explain(&broken, &s);
        assert!(!v.qualified && v.reason == Some(Reason::Failure));
        let ttft = &checks[1];
        assert!(!ttft.ok, "no green pass for a failure: {:?}", ttft);
        assert!(!ttft.answer.en.contains("within"), "{}", ttft.answer.en);
        assert!(
            ttft.answer
                .en
                .starts_with("0.4\u{a0}s, but this attempt failed"),
            "{}",
            ttft.answer.en
        );
        assert!(
            ttft.answer.en.contains("not in the TTFT sample")
                && ttft
                    .answer
                    .en
                    .contains("does not qualify whatever its TTFT"),
            "{}",
            ttft.answer.en
        );
        assert!(
            ttft.answer.zh.contains("失败")
                && ttft.answer.zh.contains("不在 TTFT 样本里")
                && !ttft.answer.zh.contains("达标"),
            "{}",
            ttft.answer.zh
        );
        // Under the wrong "missing as 0" the failure is in the sample, and the panel says why.
        let mut zero = s.clone();
        zero.population.missing_ttft = crate::settings::MissingTtft::TreatAsZero;
        let (_, checks) = explain(&broken, &zero);
        assert!(
            !checks[1].ok
                && checks[1]
                    .answer
                    .en
                    .contains("only because a missing TTFT counted as 0"),
            "{:?}",
            checks[1]
        );
        // A failure with no token, counted as 0: not a green 0 ≤ 1 either.
        let timeout = Attempt::new(
            "R9",
            Outcome::TimeoutBeforeFirstToken,
            None,
            Quality::NotEvaluated,
        );
        let (_, checks) = explain(&timeout, &zero);
        assert!(
            !checks[1].ok
                && checks[1]
                    .answer
                    .en
                    .starts_with("missing, counted as 0 s (wrong), and this attempt failed"),
            "{:?}",
            checks[1]
        );
        let (_, checks) = explain(&timeout, &s);
        assert!(
            !checks[1].ok && checks[1].answer.en.contains("nothing to time (not 0)"),
            "{:?}",
            checks[1]
        );
        // A success keeps its comparison written out.
        let ok = Attempt::new("R3", Outcome::Success, Some(400.0), Quality::Pass);
        let (_, checks) = explain(&ok, &s);
        assert!(
            checks[1].ok && checks[1].answer.en == "0.4 ≤ 1: within",
            "{:?}",
            checks[1]
        );
    }
}
