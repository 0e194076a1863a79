//! The figures a peer tool reports about its own run, each with how the tool computes it, so the
//! lab can recompute it from the attempts with the tool's method and then under the lesson's
//! definitions ([`crate::reproduce`]).
//!
//! They travel in the trace's header (`source.figures`), so a converted trace keeps them: they
//! are part of the schema, and the importers ([`crate::import`]) fill them in.

use serde::{Deserialize, Serialize};

use crate::error::ParseError;
use crate::format::{percentile_label, trim_num};
use crate::text::Text;

/// Which per-attempt quantity a figure summarises. Every sample is taken over the complete
/// successes of the measured phase, the filter every supported tool applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    /// Time to first token.
    Ttft,
    /// Time from the first to the second stream event.
    Ttst,
    /// End-to-end latency.
    E2e,
    /// Every gap between consecutive stream events, pooled over the successes (vLLM's ITL,
    /// AIPerf's inter_chunk_latency): per event, not per token.
    EventGap,
    /// Per success with more than one output token: (E2E − TTFT) / (output tokens − 1)
    /// (vLLM's TPOT, AIPerf's inter_token_latency).
    TimePerOutputToken,
    /// Per success: (last token − first token) / (output tokens − 1), and the tool's mean and
    /// percentiles weight each request by its output tokens − 1 (guidellm's ITL). A request
    /// with no such time counts as 0, as guidellm does.
    ItlPerRequestTokenWeighted,
    /// Per success: (last token, or the end when there is none − start) / output tokens, weighted
    /// by output tokens (guidellm 0.5's TPOT, first token included).
    TpotFromStartTokenWeighted,
    /// Complete successes.
    Successes,
    /// Attempts that were not complete successes (cancellations included).
    Failures,
    /// Attempts that were cancelled.
    Cancelled,
    /// Every attempt of the measured phase.
    Attempts,
    /// Failures / attempts.
    ErrorRate,
    /// Successes / the run's duration.
    RequestThroughput,
    /// Output tokens of the successes / the run's duration.
    OutputThroughput,
    /// Requests per second that met the tool's own SLOs (needs the SLOs, which tools do not save).
    Goodput,
    /// Per success: its input (prompt) tokens, as the tool counted them.
    InputTokens,
    /// Per success: its output tokens, as the tool counted them.
    OutputTokens,
    /// Per success: its output tokens / its own duration (LLMPerf's per-request throughput).
    RequestOutputRate,
    /// Input tokens of the successes / the run's duration.
    InputThroughput,
    /// Input + output tokens of the successes / the run's duration.
    TotalTokenThroughput,
    /// Σ E2E of the successes / the run's duration: requests in flight on average (SGLang's
    /// `concurrency`).
    MeanConcurrency,
    /// Failures with one error code (the figure's `error_code`): an HTTP status, or the code the
    /// tool wrote (LLMPerf's `error_code`, kept in the attempt's detail as `error_code N`).
    FailuresWithCode,
    /// The run's duration as the tool timed it.
    RunDuration,
    /// Request start → its last output token (the last stream event): GenAI-Perf's
    /// `request_latency`, which stops at the last response with content, not at `[DONE]`.
    ToLastToken,
    /// Every request sent, failures included, / the run's duration (GenAI-Perf's
    /// `request_throughput` counts the requests it dropped from every other statistic).
    AttemptThroughput,
    /// Failures that are not cancellations (guidellm's `errored`).
    Errored,
    /// Per request: input + output tokens (guidellm's `total_token_count`).
    TotalTokens,
}

impl Quantity {
    pub fn code(self) -> &'static str {
        match self {
            Quantity::Ttft => "ttft",
            Quantity::Ttst => "ttst",
            Quantity::E2e => "e2e",
            Quantity::EventGap => "event_gap",
            Quantity::TimePerOutputToken => "time_per_output_token",
            Quantity::ItlPerRequestTokenWeighted => "itl_per_request",
            Quantity::TpotFromStartTokenWeighted => "tpot_from_start",
            Quantity::Successes => "successes",
            Quantity::Failures => "failures",
            Quantity::Cancelled => "cancelled",
            Quantity::Attempts => "attempts",
            Quantity::ErrorRate => "error_rate",
            Quantity::RequestThroughput => "request_throughput",
            Quantity::OutputThroughput => "output_throughput",
            Quantity::Goodput => "goodput",
            Quantity::InputTokens => "input_tokens",
            Quantity::OutputTokens => "output_tokens",
            Quantity::RequestOutputRate => "request_output_rate",
            Quantity::InputThroughput => "input_throughput",
            Quantity::TotalTokenThroughput => "total_token_throughput",
            Quantity::MeanConcurrency => "mean_concurrency",
            Quantity::FailuresWithCode => "failures_code",
            Quantity::RunDuration => "duration",
            Quantity::ToLastToken => "to_last_token",
            Quantity::AttemptThroughput => "attempt_throughput",
            Quantity::Errored => "errored",
            Quantity::TotalTokens => "total_tokens",
        }
    }

    /// Short name in both languages ("TTFT", "ITL (per stream event)", …).
    pub fn name(self) -> Text {
        match self {
            Quantity::Ttft => Text::new("TTFT", "TTFT"),
            Quantity::Ttst => Text::new("time to second token", "第二个 token 时延"),
            Quantity::E2e => Text::new("E2E", "端到端时延"),
            Quantity::EventGap => Text::new("ITL (per stream event)", "ITL（按流事件）"),
            Quantity::TimePerOutputToken => Text::new(
                "time per output token (per-request average)",
                "每输出 token 时间（按请求平均）",
            ),
            Quantity::ItlPerRequestTokenWeighted => Text::new(
                "ITL (per request: first to last token, weighted by tokens)",
                "ITL（按请求：首到末 token，按 token 数加权）",
            ),
            Quantity::TpotFromStartTokenWeighted => Text::new(
                "time per output token (per request: start to last token, weighted by tokens)",
                "每输出 token 时间（按请求：开始到末 token，按 token 数加权）",
            ),
            Quantity::Successes => Text::new("complete successes", "完整成功"),
            Quantity::Failures => Text::new("failures", "失败次数"),
            Quantity::Cancelled => Text::new("cancelled", "取消"),
            Quantity::Attempts => Text::new("attempts", "尝试"),
            Quantity::ErrorRate => Text::new("error rate", "错误率"),
            Quantity::RequestThroughput => Text::new("request throughput", "请求吞吐"),
            Quantity::OutputThroughput => Text::new("output token throughput", "输出 token 吞吐"),
            Quantity::Goodput => {
                Text::new("goodput (the tool's SLOs)", "goodput（工具自己的 SLO）")
            }
            Quantity::InputTokens => Text::new("input tokens per request", "每请求输入 token"),
            Quantity::OutputTokens => Text::new("output tokens per request", "每请求输出 token"),
            Quantity::RequestOutputRate => Text::new(
                "output tokens per second of each request",
                "每请求的输出 token 速率",
            ),
            Quantity::InputThroughput => Text::new("input token throughput", "输入 token 吞吐"),
            Quantity::TotalTokenThroughput => Text::new("total token throughput", "总 token 吞吐"),
            Quantity::MeanConcurrency => Text::new("mean requests in flight", "平均在途请求数"),
            Quantity::FailuresWithCode => {
                Text::new("failures with this error code", "该错误码的失败次数")
            }
            Quantity::RunDuration => Text::new("run duration", "运行时长"),
            Quantity::ToLastToken => Text::new("latency to the last token", "到末 token 的时延"),
            Quantity::AttemptThroughput => Text::new(
                "requests sent per second (failures included)",
                "每秒发出的请求（含失败）",
            ),
            Quantity::Errored => Text::new("errored (not cancelled)", "出错（非取消）"),
            Quantity::TotalTokens => Text::new(
                "input + output tokens per request",
                "每请求输入加输出 token",
            ),
        }
    }

    /// Each request's value carries a weight in the tool's statistics.
    pub fn weighted(self) -> bool {
        matches!(
            self,
            Quantity::ItlPerRequestTokenWeighted | Quantity::TpotFromStartTokenWeighted
        )
    }

    /// A distribution of per-attempt values (rather than a count or a rate).
    pub fn is_distribution(self) -> bool {
        matches!(
            self,
            Quantity::Ttft
                | Quantity::Ttst
                | Quantity::E2e
                | Quantity::EventGap
                | Quantity::TimePerOutputToken
                | Quantity::ItlPerRequestTokenWeighted
                | Quantity::TpotFromStartTokenWeighted
                | Quantity::InputTokens
                | Quantity::OutputTokens
                | Quantity::RequestOutputRate
                | Quantity::ToLastToken
                | Quantity::TotalTokens
        )
    }
}

/// How the tool picks a percentile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerPercentile {
    /// numpy's default linear interpolation (vLLM, AIPerf, LLMPerf through pandas).
    Linear,
    /// guidellm: duplicates merged, the first value whose cumulative share reaches p
    /// (`searchsorted(cumsum(probabilities), p, side="left")`).
    CumulativeShare,
}

/// Which statistic of the quantity the figure is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Stat {
    /// A count or a rate: the figure is the quantity itself.
    Value,
    Mean,
    /// Standard deviation with `ddof` degrees of freedom removed (numpy 0, pandas 1).
    Std {
        ddof: u32,
    },
    Min,
    Max,
    /// The p-th percentile, 0 < p ≤ 100.
    Percentile {
        p: f64,
        method: PeerPercentile,
    },
    /// The sum over the sample (vLLM's `total_input_tokens`).
    Sum,
}

impl Stat {
    /// "p99", "mean", "std", "p99_9".
    pub fn code(self) -> String {
        match self {
            Stat::Value => String::new(),
            Stat::Mean => "mean".into(),
            Stat::Std { .. } => "std".into(),
            Stat::Min => "min".into(),
            Stat::Max => "max".into(),
            Stat::Sum => "sum".into(),
            Stat::Percentile { p, .. } => format!("p{}", trim_num(p).replace('.', "_")),
        }
    }
}

/// The unit the tool wrote the figure in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerUnit {
    Ms,
    S,
    Count,
    /// A share, 0–1.
    Ratio,
    PerSecond,
    /// Requests per minute (LLMPerf's `results_num_completed_requests_per_min`).
    PerMinute,
    TokensPerSecond,
}

impl PeerUnit {
    pub fn symbol(self) -> &'static str {
        match self {
            PeerUnit::Ms => "ms",
            PeerUnit::S => "s",
            PeerUnit::Count => "",
            PeerUnit::Ratio => "",
            PeerUnit::PerSecond => "/s",
            PeerUnit::PerMinute => "/min",
            PeerUnit::TokensPerSecond => "tokens/s",
        }
    }

    /// A time in ms expressed in this unit (other units pass through).
    pub fn from_ms(self, ms: f64) -> f64 {
        match self {
            PeerUnit::S => ms / 1000.0,
            _ => ms,
        }
    }

    /// The resolution a trace written as JSON Lines keeps (1 µs), in this unit; 0 for counts.
    pub fn trace_resolution(self) -> f64 {
        match self {
            PeerUnit::Ms => 1e-3,
            PeerUnit::S => 1e-6,
            _ => 0.0,
        }
    }
}

/// Whether the attempts carry what is needed to recompute the figure with the tool's method.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", tag = "kind", content = "why")]
pub enum Reproducibility {
    /// Recomputed exactly (to floating-point rounding).
    #[default]
    Exact,
    /// Recomputed from a stand-in the file offers (the reason says which): close, not equal.
    Approximate(String),
    /// Not recomputed: the file lacks what it needs (the reason says what).
    Not(String),
}

impl Reproducibility {
    pub fn is_exact(&self) -> bool {
        *self == Reproducibility::Exact
    }
}

/// Which duration a rate divides by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RateSpan {
    /// The trace's window (the run's duration as the tool's file states it, or every attempt's span).
    #[default]
    Window,
    /// First start → last end over the complete successes of the measured phase: AIPerf's
    /// `benchmark_duration` (min request timestamp → max response timestamp of the records
    /// without an error).
    SuccessSpan,
    /// The trace's window, counting only the successes that end inside it (to the microsecond):
    /// guidellm's `requests_per_second` mean (its rate distribution over the measured window,
    /// whose duration-weighted mean is the requests ending in the window / the window).
    EndsInWindow,
    /// First start → last output token over the complete successes of the measured phase:
    /// GenAI-Perf's benchmark duration (min request timestamp → max last-response timestamp of the
    /// requests it kept).
    SuccessSpanToLastToken,
    /// For a mean concurrency: each attempt's time inside the trace's window, summed, / the
    /// window (guidellm's `request_concurrency` mean over its measured window).
    OverlapWithWindow,
}

/// Which attempts a figure's sample covers. Every tool summarises its complete successes; guidellm
/// also prints each figure over its errored and incomplete requests, and over all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Over {
    #[default]
    Successes,
    /// Failures that are not cancellations.
    Errored,
    Cancelled,
    /// Every attempt of the measured phase.
    All,
}

impl Over {
    fn is_successes(&self) -> bool {
        *self == Over::Successes
    }

    /// Whether an attempt with this outcome belongs to the sample.
    pub fn admits(self, outcome: crate::trace::Outcome) -> bool {
        use crate::trace::Outcome;
        match self {
            Over::Successes => outcome.is_success(),
            Over::Errored => !outcome.is_success() && outcome != Outcome::Cancelled,
            Over::Cancelled => outcome == Outcome::Cancelled,
            Over::All => true,
        }
    }

    /// "errored", "cancelled", "all"; empty for successes.
    pub fn code(self) -> &'static str {
        match self {
            Over::Successes => "",
            Over::Errored => "errored",
            Over::Cancelled => "cancelled",
            Over::All => "all",
        }
    }

    fn words(self) -> Option<Text> {
        match self {
            Over::Successes => None,
            Over::Errored => Some(Text::new("errored requests", "出错的请求")),
            Over::Cancelled => Some(Text::new("cancelled requests", "取消的请求")),
            Over::All => Some(Text::new("all requests", "全部请求")),
        }
    }
}

impl RateSpan {
    fn is_window(&self) -> bool {
        *self == RateSpan::Window
    }
}

/// One figure as the tool reported it, and how the tool computes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerFigure {
    /// The tool's own name for it (`p99_ttft_ms`, `records.ttft.p99`, `results_ttft_s_quantiles_p99`).
    pub tool_key: String,
    pub quantity: Quantity,
    pub stat: Stat,
    /// What the tool wrote, in `unit`.
    pub value: f64,
    pub unit: PeerUnit,
    /// How the tool computes it, in words (its sample, its filter, its method).
    pub how: String,
    /// The tool writes 0 when there is no sample at all (vLLM's `np.mean(ttfts or 0)`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub empty_as_zero: bool,
    #[serde(default, skip_serializing_if = "Reproducibility::is_exact")]
    pub reproducibility: Reproducibility,
    /// For a rate: the duration it divides by.
    #[serde(default, skip_serializing_if = "RateSpan::is_window")]
    pub duration: RateSpan,
    /// For [`Quantity::FailuresWithCode`]: the code counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i64>,
    /// Which attempts the sample covers (the complete successes unless said).
    #[serde(default, skip_serializing_if = "Over::is_successes")]
    pub over: Over,
    /// A value an attempt lacks counts as 0 in the tool's sample (guidellm's `or 0.0`), rather
    /// than leaving the attempt out.
    #[serde(default, skip_serializing_if = "is_false")]
    pub missing_as_zero: bool,
    /// The per-request values it is computed over, when the tool kept them and the attempts'
    /// times cannot give them back: a key of the trace's `source.samples`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<String>,
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn one() -> f64 {
    1.0
}

fn is_one(v: &f64) -> bool {
    *v == 1.0
}

/// One attempt's value of a tool's own per-request metric (`Source::samples`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerValue {
    /// The attempt's `id`.
    pub id: String,
    /// In ms for a time (as the attempts' times), else in the figure's unit.
    pub value: f64,
    /// The weight the tool gives it (guidellm: output tokens − 1 for ITL); 1 when it weights none.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub weight: f64,
}

impl PeerFigure {
    /// A single value the tool wrote (a count, a rate), recomputable exactly.
    pub fn exact_value(
        tool_key: String,
        quantity: Quantity,
        value: f64,
        unit: PeerUnit,
        how: impl Into<String>,
    ) -> PeerFigure {
        PeerFigure {
            tool_key,
            quantity,
            stat: Stat::Value,
            value,
            unit,
            how: how.into(),
            empty_as_zero: false,
            reproducibility: Reproducibility::Exact,
            duration: RateSpan::Window,
            error_code: None,
            over: Over::Successes,
            missing_as_zero: false,
            sample: None,
        }
    }

    /// A figure the file does not let us recompute, with the reason.
    pub fn not_reproducible(
        tool_key: String,
        quantity: Quantity,
        stat: Stat,
        value: f64,
        unit: PeerUnit,
        how: impl Into<String>,
        why: impl Into<String>,
    ) -> PeerFigure {
        PeerFigure {
            tool_key,
            quantity,
            stat,
            value,
            unit,
            how: how.into(),
            empty_as_zero: false,
            reproducibility: Reproducibility::Not(why.into()),
            duration: RateSpan::Window,
            error_code: None,
            over: Over::Successes,
            missing_as_zero: false,
            sample: None,
        }
    }

    /// A stable code for the row: `ttft_p99`, `e2e_mean`, `successes`.
    pub fn key(&self) -> String {
        let stat = self.stat.code();
        if let (Quantity::FailuresWithCode, Some(code)) = (self.quantity, self.error_code) {
            return format!("failures_code_{code}");
        }
        let key = if stat.is_empty() {
            self.quantity.code().to_string()
        } else {
            format!("{}_{stat}", self.quantity.code())
        };
        match self.over {
            Over::Successes => key,
            over => format!("{key}_{}", over.code()),
        }
    }

    /// "P99 TTFT", "Mean E2E", "complete successes"; "P99 TTFT (errored requests)".
    pub fn label(&self) -> Text {
        let label = self.label_of_successes();
        match self.over.words() {
            None => label,
            Some(w) => Text::new(
                format!("{} ({})", label.en, w.en),
                format!("{}（{}）", label.zh, w.zh),
            ),
        }
    }

    fn label_of_successes(&self) -> Text {
        let name = self.quantity.name();
        if let (Quantity::FailuresWithCode, Some(code)) = (self.quantity, self.error_code) {
            return Text::new(
                format!("failures with error code {code}"),
                format!("错误码 {code} 的失败次数"),
            );
        }
        let (en, zh) = match self.stat {
            Stat::Value => return name,
            Stat::Mean => ("Mean".to_string(), "均值".to_string()),
            Stat::Std { ddof } => (
                format!("Std (ddof {ddof})"),
                format!("标准差（ddof {ddof}）"),
            ),
            Stat::Min => ("Min".into(), "最小".into()),
            Stat::Max => ("Max".into(), "最大".into()),
            Stat::Sum => ("Total".into(), "总计".into()),
            Stat::Percentile { p, .. } => {
                let label = percentile_label(p);
                (label.clone(), label)
            }
        };
        Text::new(format!("{en} {}", name.en), format!("{} {zh}", name.zh))
    }

    /// Shown among the few rows a panel shows first: P50, P99 and mean of the latencies over the
    /// successes, and the counts.
    pub fn is_headline(&self) -> bool {
        // Per-status rows (guidellm's errored, incomplete, total) stay below the fold.
        if self.over != Over::Successes {
            return false;
        }
        match self.stat {
            Stat::Value => true,
            Stat::Mean => self.quantity.is_distribution(),
            Stat::Percentile { p, .. } => p == 50.0 || p == 99.0,
            _ => false,
        }
    }

    /// Reading order: counts, then TTFT, ITL, TPOT, E2E; within each, by the requests it
    /// covers, then mean, median, percentiles, std.
    pub fn order(&self) -> (u8, u8, u8, i64) {
        let q = match self.quantity {
            Quantity::Attempts => 0,
            Quantity::Successes => 1,
            Quantity::Failures | Quantity::Errored => 2,
            Quantity::FailuresWithCode => 2,
            Quantity::Cancelled => 3,
            Quantity::ErrorRate => 4,
            Quantity::Ttft => 5,
            Quantity::Ttst => 6,
            Quantity::EventGap => 7,
            Quantity::TimePerOutputToken
            | Quantity::ItlPerRequestTokenWeighted
            | Quantity::TpotFromStartTokenWeighted => 8,
            Quantity::E2e | Quantity::ToLastToken => 9,
            Quantity::RequestThroughput | Quantity::AttemptThroughput => 10,
            Quantity::OutputThroughput => 11,
            Quantity::Goodput => 12,
            Quantity::InputThroughput
            | Quantity::TotalTokenThroughput
            | Quantity::MeanConcurrency
            | Quantity::RunDuration => 13,
            Quantity::RequestOutputRate => 14,
            Quantity::InputTokens => 15,
            Quantity::OutputTokens => 16,
            Quantity::TotalTokens => 17,
        };
        let over = match self.over {
            Over::Successes => 0,
            Over::Errored => 1,
            Over::Cancelled => 2,
            Over::All => 3,
        };
        let (s, p) = match self.stat {
            Stat::Value => (0, 0),
            Stat::Mean => (1, 0),
            Stat::Percentile { p, .. } => (2, (p * 1000.0) as i64),
            Stat::Min => (3, 0),
            Stat::Max => (4, 0),
            Stat::Std { .. } => (5, 0),
            Stat::Sum => (6, 0),
        };
        let p = if self.quantity == Quantity::FailuresWithCode {
            self.error_code.unwrap_or(0)
        } else {
            p
        };
        (q, over, s, p)
    }
}

/// The tool's own figures as the header holds them (a JSON array), read with
/// [`PeerFigures::read`]. They stay JSON until read so the lab's first download carries no
/// reader for them: the lab only passes them on to its second bundle, which compares them.
/// Native parsing checks them, and so does that bundle on every entry, so a trace anywhere else
/// holds readable figures.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PeerFigures(serde_json::Value);

impl PeerFigures {
    pub fn of(figures: &[PeerFigure]) -> PeerFigures {
        // None is written as none, as the format leaves the field out: one value, one meaning.
        if figures.is_empty() {
            return PeerFigures::default();
        }
        PeerFigures(serde_json::to_value(figures).expect("peer figures always serialise"))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_null() || self.0.as_array().is_some_and(|a| a.is_empty())
    }

    /// The figures, or what is wrong with them (`source.figures[i]…`).
    pub fn read(&self) -> Result<Vec<PeerFigure>, ParseError> {
        if self.0.is_null() {
            return Ok(Vec::new());
        }
        Vec::<PeerFigure>::deserialize(&self.0).map_err(|e| {
            let at = self.0.as_array().and_then(|items| {
                items
                    .iter()
                    .position(|f| PeerFigure::deserialize(f).is_err())
            });
            let field = at.map_or_else(
                || "source.figures".to_string(),
                |i| format!("source.figures[{i}]"),
            );
            ParseError::new(format!("header: {field}: {e}")).field(field)
        })
    }
}
