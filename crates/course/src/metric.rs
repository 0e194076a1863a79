//! The metrics an exercise may ask for, computed by the core on the exercise's sample under its settings, and in which unit an answer is written.

use tracelab_core::figure::Figure;
use tracelab_core::metrics::Metrics;
use tracelab_core::text::Lang;
use tracelab_core::trace::Trace;

use crate::course::settings_for;
use crate::exercise::Pairs;
use crate::exercise::{Exercise, ExerciseKind};

/// What a figure is measured in, for checking an exercise's unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    Count,
    Ratio,
    Seconds,
    PerSecond,
    Money,
    TokensPerSecond,
}

/// The fixed list of figures an exercise or a step may name, by the keys of
/// `tracelab report --json` where there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LessonMetric {
    Attempts,
    Successes,
    Failures,
    Qualified,
    TtftSamples,
    FailureRate,
    QualityPassRate,
    JointRate,
    BusinessSuccessRate,
    TtftP50,
    TtftP95,
    /// The tail percentile the settings choose (`p`), P95 by default.
    TtftTail,
    E2eP50,
    E2eTail,
    ItlP50,
    ItlTail,
    GoodputPerS,
    CostPer1000Qualified,
    OutputTokensPerS,
}

impl LessonMetric {
    pub const ALL: [LessonMetric; 19] = [
        LessonMetric::Attempts,
        LessonMetric::Successes,
        LessonMetric::Failures,
        LessonMetric::Qualified,
        LessonMetric::TtftSamples,
        LessonMetric::FailureRate,
        LessonMetric::QualityPassRate,
        LessonMetric::JointRate,
        LessonMetric::BusinessSuccessRate,
        LessonMetric::TtftP50,
        LessonMetric::TtftP95,
        LessonMetric::TtftTail,
        LessonMetric::E2eP50,
        LessonMetric::E2eTail,
        LessonMetric::ItlP50,
        LessonMetric::ItlTail,
        LessonMetric::GoodputPerS,
        LessonMetric::CostPer1000Qualified,
        LessonMetric::OutputTokensPerS,
    ];

    pub fn code(self) -> &'static str {
        match self {
            LessonMetric::Attempts => "attempts",
            LessonMetric::Successes => "successes",
            LessonMetric::Failures => "failures",
            LessonMetric::Qualified => "qualified",
            LessonMetric::TtftSamples => "ttft_samples",
            LessonMetric::FailureRate => "failure_rate",
            LessonMetric::QualityPassRate => "quality_pass_rate",
            LessonMetric::JointRate => "joint_rate",
            LessonMetric::BusinessSuccessRate => "business_success_rate",
            LessonMetric::TtftP50 => "ttft_p50_s",
            LessonMetric::TtftP95 => "ttft_p95_s",
            LessonMetric::TtftTail => "ttft_tail_s",
            LessonMetric::E2eP50 => "e2e_p50_s",
            LessonMetric::E2eTail => "e2e_tail_s",
            LessonMetric::ItlP50 => "itl_p50_s",
            LessonMetric::ItlTail => "itl_tail_s",
            LessonMetric::GoodputPerS => "goodput_per_s",
            LessonMetric::CostPer1000Qualified => "cost_per_1000_qualified",
            LessonMetric::OutputTokensPerS => "output_tokens_per_s",
        }
    }

    pub fn from_code(code: &str) -> Option<LessonMetric> {
        Self::ALL.into_iter().find(|m| m.code() == code)
    }

    /// The lab's figure cards (`metric-KEY` in its page, the core's [`Figure`] keys and
    /// `qualified_count`) that show this value or let it be read off directly: a lesson hides them
    /// beside an exercise that asks for it until the learner has answered.
    pub fn lab_figures(self) -> &'static [&'static str] {
        use LessonMetric::*;
        match self {
            Attempts => &["qualified_count", "failure_rate", "joint_rate"],
            Successes => &["qualified_count", "quality_pass_rate"],
            Failures => &["failure_rate"],
            Qualified => &[
                "qualified_count",
                "joint_rate",
                "goodput",
                "cost_per_1000_qualified",
            ],
            TtftSamples => &["ttft_p50", "ttft_p95", "ttft_tail"],
            FailureRate => &["failure_rate"],
            QualityPassRate => &["quality_pass_rate"],
            JointRate => &["joint_rate", "qualified_count"],
            BusinessSuccessRate => &["business_success_rate"],
            TtftP50 => &["ttft_p50"],
            TtftP95 | TtftTail => &["ttft_p95", "ttft_tail"],
            E2eP50 => &["e2e_p50"],
            E2eTail => &["e2e_tail"],
            ItlP50 => &["itl_p50"],
            ItlTail => &["itl_tail"],
            GoodputPerS => &["goodput"],
            CostPer1000Qualified => &["cost_per_1000_qualified"],
            OutputTokensPerS => &["output_tokens_per_s"],
        }
    }

    /// Whether one attempt's own time is this value when the sample has a single attempt (its
    /// TTFT is then P50 and P95 both), so the lab's row shows it too.
    pub fn is_row_ttft(self) -> bool {
        matches!(
            self,
            LessonMetric::TtftP50 | LessonMetric::TtftP95 | LessonMetric::TtftTail
        )
    }

    /// Whether one attempt's E2E is this value when the sample has a single attempt.
    pub fn is_row_e2e(self) -> bool {
        matches!(self, LessonMetric::E2eP50 | LessonMetric::E2eTail)
    }

    /// Whether this value is one of a single attempt's own gaps (a percentile of its ITL), so the
    /// gaps the lab labels on the request's timeline give it away.
    pub fn is_row_gap(self) -> bool {
        matches!(self, LessonMetric::ItlP50 | LessonMetric::ItlTail)
    }

    /// The figure cards equal to this one on a sample of one attempt: its P50, P95 and tail are
    /// all the one time, so hiding one of them alone leaves the answer on the others.
    pub fn single_attempt_figures(self) -> &'static [&'static str] {
        use LessonMetric::*;
        match self {
            TtftP50 | TtftP95 | TtftTail => &["ttft_p50", "ttft_p95", "ttft_tail"],
            E2eP50 | E2eTail => &["e2e_p50", "e2e_tail"],
            _ => &[],
        }
    }

    /// Whether the answer can be counted off the lab's verdicts (each row's "qualified", its
    /// colour in the table and the charts): how many qualify, or what share does.
    pub fn counts_verdicts(self) -> bool {
        matches!(self, LessonMetric::Qualified | LessonMetric::JointRate)
    }

    /// Whether the answer is the number of failures the lab's charts print beside them.
    pub fn counts_failures(self) -> bool {
        matches!(self, LessonMetric::Failures)
    }

    pub fn dimension(self) -> Dimension {
        use LessonMetric::*;
        match self {
            Attempts | Successes | Failures | Qualified | TtftSamples => Dimension::Count,
            FailureRate | QualityPassRate | JointRate | BusinessSuccessRate => Dimension::Ratio,
            TtftP50 | TtftP95 | TtftTail | E2eP50 | E2eTail | ItlP50 | ItlTail => {
                Dimension::Seconds
            }
            GoodputPerS => Dimension::PerSecond,
            CostPer1000Qualified => Dimension::Money,
            OutputTokensPerS => Dimension::TokensPerSecond,
        }
    }

    /// The figure behind this metric (counts have none).
    pub fn figure(self, m: &Metrics) -> Option<&Figure> {
        use LessonMetric::*;
        Some(match self {
            Attempts | Successes | Failures | Qualified => return None,
            TtftSamples => &m.ttft_p50,
            FailureRate => &m.failure_rate,
            QualityPassRate => &m.quality_pass_rate,
            JointRate => &m.joint_rate,
            BusinessSuccessRate => &m.business_success_rate,
            TtftP50 => &m.ttft_p50,
            TtftP95 => &m.ttft_p95,
            TtftTail => &m.ttft_tail,
            E2eP50 => &m.e2e_p50,
            E2eTail => &m.e2e_tail,
            ItlP50 => &m.itl_p50,
            ItlTail => &m.itl_tail,
            GoodputPerS => &m.goodput,
            CostPer1000Qualified => &m.cost_per_1000_qualified,
            OutputTokensPerS => &m.output_tokens_per_s,
        })
    }

    /// Whether the figure is a ratio with a numerator and a denominator (for `ratio_parts`).
    pub fn is_ratio(self) -> bool {
        use LessonMetric::*;
        matches!(
            self,
            FailureRate
                | QualityPassRate
                | JointRate
                | BusinessSuccessRate
                | GoodputPerS
                | CostPer1000Qualified
                | OutputTokensPerS
        )
    }

    /// The value in the core's own unit (ratios 0–1, times in seconds); `None` when undefined.
    pub fn value(self, m: &Metrics) -> Option<f64> {
        use LessonMetric::*;
        match self {
            Attempts => Some(m.attempts as f64),
            Successes => Some(m.successes as f64),
            Failures => Some(m.failures as f64),
            Qualified => Some(m.qualified as f64),
            TtftSamples => m.ttft_p50.n.map(|n| n as f64),
            _ => self.figure(m).and_then(|f| f.value),
        }
    }
}

/// The unit an exercise's answer is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerUnit {
    Count,
    Percent,
    Ratio,
    Seconds,
    Milliseconds,
    PerSecond,
    Money,
    TokensPerSecond,
}

impl AnswerUnit {
    pub const ALL: [AnswerUnit; 8] = [
        AnswerUnit::Count,
        AnswerUnit::Percent,
        AnswerUnit::Ratio,
        AnswerUnit::Seconds,
        AnswerUnit::Milliseconds,
        AnswerUnit::PerSecond,
        AnswerUnit::Money,
        AnswerUnit::TokensPerSecond,
    ];

    pub fn code(self) -> &'static str {
        match self {
            AnswerUnit::Count => "count",
            AnswerUnit::Percent => "%",
            AnswerUnit::Ratio => "ratio",
            AnswerUnit::Seconds => "s",
            AnswerUnit::Milliseconds => "ms",
            AnswerUnit::PerSecond => "/s",
            AnswerUnit::Money => "money",
            AnswerUnit::TokensPerSecond => "tokens/s",
        }
    }

    pub fn from_code(code: &str) -> Option<AnswerUnit> {
        Self::ALL.into_iter().find(|u| u.code() == code)
    }

    pub fn dimension(self) -> Dimension {
        match self {
            AnswerUnit::Count => Dimension::Count,
            AnswerUnit::Percent | AnswerUnit::Ratio => Dimension::Ratio,
            AnswerUnit::Seconds | AnswerUnit::Milliseconds => Dimension::Seconds,
            AnswerUnit::PerSecond => Dimension::PerSecond,
            AnswerUnit::Money => Dimension::Money,
            AnswerUnit::TokensPerSecond => Dimension::TokensPerSecond,
        }
    }

    /// From the core's unit to this one.
    pub fn scale(self) -> f64 {
        match self {
            AnswerUnit::Percent => 100.0,
            AnswerUnit::Milliseconds => 1000.0,
            _ => 1.0,
        }
    }

    /// What the lab writes after the answer box ("%", "s", "/s", "CNY").
    pub fn label(self, currency: &str, lang: Lang) -> String {
        match (self, lang) {
            (AnswerUnit::Count, Lang::En) => String::new(),
            (AnswerUnit::Count, Lang::Zh) => "个".into(),
            (AnswerUnit::Ratio, _) => String::new(),
            (AnswerUnit::PerSecond, Lang::Zh) => "次/秒".into(),
            (AnswerUnit::Money, _) => currency.to_string(),
            (u, _) => u.code().to_string(),
        }
    }
}

/// The key of a `number` exercise: the core's figure on `trace` under the exercise's settings, in
/// the exercise's unit. `None` for other kinds, unknown metrics or units, refused settings, or an
/// undefined figure.
pub fn answer_key(exercise: &Exercise, trace: &Trace) -> Option<f64> {
    let ExerciseKind::Number(n) = &exercise.kind else {
        return None;
    };
    computed(trace, &n.settings, &n.metric, &n.unit)
}

/// `metric` on `trace` under the sample's settings with `pairs` on top, in `unit`.
pub fn computed(trace: &Trace, pairs: &Pairs, metric: &str, unit: &str) -> Option<f64> {
    let metric = LessonMetric::from_code(metric)?;
    let unit = AnswerUnit::from_code(unit)?;
    if metric.dimension() != unit.dimension() {
        return None;
    }
    let metrics = metrics_for(trace, pairs).ok()?;
    metric.value(&metrics).map(|v| v * unit.scale())
}

/// Every figure of `trace` under the sample's settings with `pairs` on top.
pub fn metrics_for(trace: &Trace, pairs: &Pairs) -> Result<Metrics, String> {
    let settings = settings_for(&trace.header, pairs)?;
    Ok(Metrics::of(&trace.attempts, &settings))
}

/// The currency an exercise's money answers are in: the settings' `cur`, else the sample's.
pub fn currency_for(trace: &Trace, pairs: &Pairs) -> String {
    settings_for(&trace.header, pairs)
        .map(|s| s.currency)
        .unwrap_or_default()
}
