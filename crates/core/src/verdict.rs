//! The per-attempt verdict: is this one request jointly qualified, and if not, the first reason.
//! Qualification is judged request by request — never by multiplying marginal rates.

use serde::Serialize;

use crate::percentile::{percentile, PercentileMethod};
use crate::settings::{
    FailureDenominator, MissingTtft, Population, QualityRule, Settings, WarmupPolicy,
};
use crate::text::Text;
use crate::trace::{Attempt, Outcome, Phase, Quality};
use crate::units::ms_from_s;

/// How the attempt's TTFT compares with the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Latency {
    Within,
    Over,
    /// No token came, so there is nothing to compare (TTFT missing, not 0).
    NoToken,
}

/// The first reason an attempt is not qualified, checked in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Not a complete success (timeout, connection failure, HTTP error, broken stream, cancelled).
    Failure,
    /// A complete success whose answer did not pass the quality rubric (or was not evaluated).
    Quality,
    /// A good answer that came too late (or with no token to time).
    Latency,
}

impl Reason {
    pub fn code(self) -> &'static str {
        match self {
            Reason::Failure => "failure",
            Reason::Quality => "quality",
            Reason::Latency => "latency",
        }
    }

    pub fn text(self) -> Text {
        match self {
            Reason::Failure => Text::new("failure", "失败"),
            Reason::Quality => Text::new("quality", "质量"),
            Reason::Latency => Text::new("latency", "时延"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Verdict {
    pub complete_success: bool,
    pub quality: Quality,
    /// The TTFT used for the comparison, in seconds (0 for a missing one only under the wrong
    /// "missing as 0" choice).
    pub ttft_s: Option<f64>,
    pub latency: Latency,
    pub qualified: bool,
    pub reason: Option<Reason>,
}

/// The threshold in ms, rounded to the microsecond so 0.3 s compares as exactly 300 ms.
pub(crate) fn threshold_ms(settings: &Settings) -> f64 {
    ms_from_s(settings.ttft_threshold_s)
}

/// How much earlier than the attempt's actual start its latencies are measured from under the
/// population's origin (0 where it has no intended start: the actual one stands in).
fn origin_lead_ms(attempt: &Attempt, population: &Population) -> f64 {
    attempt
        .origin_lead_ms(population.latency_from)
        .unwrap_or(0.0)
}

/// The TTFT an attempt contributes under the population's missing-TTFT choice, from its origin.
pub(crate) fn effective_ttft_ms(attempt: &Attempt, population: &Population) -> Option<f64> {
    match (
        attempt.ttft_under(population.first_token),
        population.missing_ttft,
    ) {
        (Some(t), _) => Some(t + origin_lead_ms(attempt, population)),
        (None, MissingTtft::TreatAsZero) => Some(0.0),
        (None, MissingTtft::KeepMissing) => None,
    }
}

/// The E2E an attempt contributes, from the population's origin.
pub(crate) fn effective_e2e_ms(attempt: &Attempt, population: &Population) -> Option<f64> {
    attempt
        .e2e_ms
        .map(|e| e + origin_lead_ms(attempt, population))
}

/// Whether the attempt is counted at all under the population's choices.
pub fn is_counted(attempt: &Attempt, population: &Population) -> bool {
    if attempt.phase == Phase::Warmup && population.warmup == WarmupPolicy::Exclude {
        return false;
    }
    if population.failure_denominator == FailureDenominator::FailedRowsDeleted
        && !attempt.outcome.is_success()
    {
        return false;
    }
    true
}

/// Judges one attempt.
pub fn verdict(attempt: &Attempt, settings: &Settings) -> Verdict {
    let complete_success = attempt.outcome.is_success();
    let ttft_ms = effective_ttft_ms(attempt, &settings.population);
    let latency = match ttft_ms {
        None => Latency::NoToken,
        Some(t) if settings.comparison.holds(t, threshold_ms(settings)) => Latency::Within,
        Some(_) => Latency::Over,
    };
    let reason = if !complete_success {
        Some(Reason::Failure)
    } else if attempt.quality != Quality::Pass
        && settings.population.quality == QualityRule::Required
    {
        Some(Reason::Quality)
    } else if latency != Latency::Within {
        Some(Reason::Latency)
    } else {
        None
    };
    Verdict {
        complete_success,
        quality: attempt.quality,
        ttft_s: ttft_ms.map(|t| t / 1000.0),
        latency,
        qualified: reason.is_none(),
        reason,
    }
}

/// An attempt is also slow when its E2E is at or above this percentile of the run's E2E.
pub const SLOWEST_PERCENTILE: f64 = 95.0;

/// A measured attempt's interval on the run's clock, and whether it is slow whatever the
/// others did (TTFT over the threshold, or a timeout). 24 bytes: what a trace read as a stream
/// keeps per attempt when it has GPU or engine telemetry. What ran beside it (the GPU, the
/// engine's queue) is read over this interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub start_ms: f64,
    pub end_ms: f64,
    pub late: bool,
}

impl Span {
    /// `None` for a warm-up attempt or one without a place on the clock.
    pub fn of(a: &Attempt, settings: &Settings) -> Option<Span> {
        if a.phase != Phase::Measure {
            return None;
        }
        let (start_ms, end_ms) = (a.start_ms?, a.start_ms? + a.e2e_ms?);
        let timeout = matches!(
            a.outcome,
            Outcome::TimeoutBeforeFirstToken | Outcome::TimeoutAfterFirstToken
        );
        Some(Span {
            start_ms,
            end_ms,
            late: verdict(a, settings).latency == Latency::Over || timeout,
        })
    }

    /// Slow: late, or among the slowest E2E (at or above `slowest`, from [`slowest_e2e`]).
    pub fn is_slow(&self, slowest: Option<f64>) -> bool {
        self.late || slowest.is_some_and(|p| self.end_ms - self.start_ms >= p)
    }
}

/// The E2E at [`SLOWEST_PERCENTILE`] over the spans (nearest rank).
pub fn slowest_e2e<'a>(spans: impl Iterator<Item = &'a Span>) -> Option<f64> {
    let mut e2e: Vec<f64> = spans.map(|s| s.end_ms - s.start_ms).collect();
    e2e.sort_unstable_by(f64::total_cmp);
    percentile(&e2e, SLOWEST_PERCENTILE, PercentileMethod::NearestRank)
}
