//! Stepping through a trace row by row, as a class recomputes the table: the running tally up to
//! a row, and a plain explanation of one row's verdict.

use serde::Serialize;

use crate::format::trim_num;
use crate::settings::Settings;
use crate::text::Text;
use crate::trace::{Attempt, Quality};
use crate::verdict::{is_counted, verdict, Latency, Reason, Verdict};

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
    /// "After R6: 5 qualified so far (6 counted, 6 successes, 0 failures)".
    pub fn sentence(&self, row_id: &str) -> Text {
        Text::new(
            format!(
                "After {row_id}: {} qualified so far ({} counted, {}, {})",
                self.qualified,
                self.counted,
                crate::format::count(self.successes, "success", "successes"),
                crate::format::count(self.failures, "failure", "failures")
            ),
            format!(
                "到 {row_id} 为止：已有 {} 个合格（计入 {} 个，成功 {} 个，失败 {} 个）",
                self.qualified, self.counted, self.successes, self.failures
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
                format!("no: {} — a failure stays in the denominator", attempt.outcome),
                format!("否：{} —— 失败仍然留在分母里", attempt.outcome),
            )
        },
        ok: v.complete_success,
    });
    let threshold = trim_num(settings.ttft_threshold_s);
    let symbol = settings.comparison.symbol();
    let (answer, ok) = match (v.latency, v.ttft_s, attempt.ttft_under(settings.population.first_token)) {
        (_, _, None) if v.ttft_s.is_some() => (
            Text::new(
                format!("missing, counted as 0 (wrong): 0 {symbol} {threshold}"),
                format!("缺失，却被当作 0（错误）：0 {symbol} {threshold}"),
            ),
            v.latency == Latency::Within,
        ),
        (Latency::NoToken, _, _) => (
            Text::new("missing: no token came, so there is nothing to time (not 0)", "缺失：没有收到 token，无从计时（不是 0）"),
            false,
        ),
        (Latency::Within, Some(t), _) => (
            Text::new(format!("{} {symbol} {threshold}: within", trim_num(t)), format!("{} {symbol} {threshold}：达标", trim_num(t))),
            true,
        ),
        (_, Some(t), _) => {
            let not = if symbol == "≤" { ">" } else { "≥" };
            (
                Text::new(format!("{} {not} {threshold}: too slow", trim_num(t)), format!("{} {not} {threshold}：太慢", trim_num(t))),
                false,
            )
        }
        _ => (Text::new("—", "—"), false),
    };
    checks.push(Check { question: Text::new("TTFT within the threshold?", "TTFT 在门槛内？"), answer, ok });
    checks.push(Check {
        question: Text::new("Quality pass?", "质量通过？"),
        answer: match (attempt.quality, settings.population.quality) {
            (Quality::Pass, _) => Text::new("pass", "通过"),
            (_, crate::settings::QualityRule::Ignored) => Text::new(
                "not passed, yet ignored here (wrong): it does not stop this request qualifying",
                "未通过，但这里被忽略了（错误）：它不再妨碍这个请求合格",
            ),
            (Quality::Fail, _) => Text::new("fail", "未通过"),
            (Quality::NotEvaluated, _) => Text::new("not evaluated (counts as not passed)", "未评估（按未通过计）"),
        },
        ok: attempt.quality == Quality::Pass,
    });
    checks.push(Check {
        question: Text::new("Jointly qualified?", "联合合格？"),
        answer: match v.reason {
            None => Text::new("yes: all three hold for this one request", "是：这一个请求同时满足三个条件"),
            Some(r) => {
                let first = match r {
                    Reason::Failure => Text::new("it failed", "它失败了"),
                    Reason::Quality => Text::new("its answer did not pass quality", "它的回答没有通过质量检查"),
                    Reason::Latency => Text::new("its first token came too late", "它的首个 token 来得太晚"),
                };
                Text::new(format!("no: first failing reason — {}", first.en), format!("否：首个不合格原因 —— {}", first.zh))
            }
        },
        ok: v.qualified,
    });
    (v, checks)
}
