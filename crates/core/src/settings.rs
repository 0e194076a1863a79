//! What a learner can change: the TTFT threshold and its comparison, the window and its cost, the
//! percentile method, and the denominator choices — including the wrong ones, each labelled with
//! the false conclusion it leads to.

use serde::{Deserialize, Serialize};

use crate::error::SettingsError;
use crate::format::trim_num;
use crate::percentile::PercentileMethod;
use crate::text::Text;
use crate::trace::{Header, MAX_COST, MAX_WINDOW_S, MIN_WINDOW_S};

pub use crate::trace::Comparison;

/// What the failure rate (and with it every per-attempt rate) is divided by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FailureDenominator {
    /// Failures / all attempts — the right one: every attempt was a user waiting.
    #[default]
    AllAttempts,
    /// Failures / successes — wrong: not a share of what was sent.
    Successes,
    /// Failed rows deleted before counting — wrong: failures vanish from every figure.
    FailedRowsDeleted,
}

impl FailureDenominator {
    pub const ALL: [FailureDenominator; 3] =
        [FailureDenominator::AllAttempts, FailureDenominator::Successes, FailureDenominator::FailedRowsDeleted];

    pub fn code(self) -> &'static str {
        match self {
            FailureDenominator::AllAttempts => "all_attempts",
            FailureDenominator::Successes => "successes",
            FailureDenominator::FailedRowsDeleted => "failed_rows_deleted",
        }
    }

    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.code() == code)
    }
}

/// What happens to an attempt whose TTFT is missing (no token came).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MissingTtft {
    /// Missing stays missing: only attempts that got a token have a TTFT sample.
    #[default]
    KeepMissing,
    /// Missing becomes 0 and every attempt enters the sort — wrong.
    TreatAsZero,
}

impl MissingTtft {
    pub const ALL: [MissingTtft; 2] = [MissingTtft::KeepMissing, MissingTtft::TreatAsZero];

    pub fn code(self) -> &'static str {
        match self {
            MissingTtft::KeepMissing => "keep_missing",
            MissingTtft::TreatAsZero => "treat_as_zero",
        }
    }

    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.code() == code)
    }
}

/// Whether warm-up attempts are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WarmupPolicy {
    #[default]
    Exclude,
    /// Warm-up mixed into the measured samples — wrong.
    Include,
}

impl WarmupPolicy {
    pub const ALL: [WarmupPolicy; 2] = [WarmupPolicy::Exclude, WarmupPolicy::Include];

    pub fn code(self) -> &'static str {
        match self {
            WarmupPolicy::Exclude => "exclude",
            WarmupPolicy::Include => "include",
        }
    }

    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.code() == code)
    }
}

/// The choices that decide which attempts are counted and which TTFT samples exist. Changing one
/// rebuilds the [`crate::Index`]; everything else in [`Settings`] is a cheap recompute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct Population {
    pub failure_denominator: FailureDenominator,
    pub missing_ttft: MissingTtft,
    pub warmup: WarmupPolicy,
}

/// Every setting of the lab and of `tracelab report`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub ttft_threshold_s: f64,
    pub comparison: Comparison,
    /// The comparison the SLO is written with (from the trace's header; ≤ otherwise).
    pub slo_comparison: Comparison,
    pub window_s: Option<f64>,
    pub window_cost: Option<f64>,
    pub currency: String,
    pub percentile: PercentileMethod,
    /// The tail percentile reported beside P50 (95 for P95).
    pub p: f64,
    pub population: Population,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            ttft_threshold_s: 1.0,
            comparison: Comparison::Le,
            slo_comparison: Comparison::Le,
            window_s: None,
            window_cost: None,
            currency: String::new(),
            percentile: PercentileMethod::NearestRank,
            p: 95.0,
            population: Population::default(),
        }
    }
}

impl Settings {
    /// The settings a trace asks for: its window, cost and SLO; the lesson's defaults otherwise.
    pub fn from_header(header: &Header) -> Settings {
        let mut s = Settings::default();
        if let Some(w) = header.window {
            s.window_s = Some(w.length_s);
        }
        if let Some(c) = &header.window_cost {
            s.window_cost = Some(c.amount);
            s.currency = c.currency.clone();
        }
        if let Some(d) = &header.defaults {
            if let Some(t) = d.ttft_threshold_s {
                s.ttft_threshold_s = t;
            }
            if let Some(c) = d.comparison {
                s.comparison = c;
                s.slo_comparison = c;
            }
        }
        s
    }

    /// Refuses settings no figure can be computed with.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let bad = |setting, message: String| Err(SettingsError { setting, message });
        if !(self.ttft_threshold_s.is_finite() && self.ttft_threshold_s >= 0.0) {
            return bad("threshold", format!("the TTFT threshold must be 0 s or more, got {}", self.ttft_threshold_s));
        }
        if self.ttft_threshold_s > MAX_WINDOW_S {
            return bad("threshold", format!("the TTFT threshold may be at most 10^12 s, got {}", self.ttft_threshold_s));
        }
        if let Some(w) = self.window_s {
            if !(w.is_finite() && w > 0.0) {
                return bad("window", format!("the window must be longer than 0 s, got {w}"));
            }
            if !(MIN_WINDOW_S..=MAX_WINDOW_S).contains(&w) {
                return bad("window", format!("the window must be between 1 µs and 10^12 s, got {w} s"));
            }
        }
        if let Some(c) = self.window_cost {
            if !(c.is_finite() && c >= 0.0) {
                return bad("cost", format!("a cost cannot be negative, got {c}"));
            }
            if c > MAX_COST {
                return bad("cost", format!("a window cost may be at most 10^12, got {c}"));
            }
        }
        if self.currency.chars().any(char::is_control) {
            return bad("currency", "a currency cannot hold a line break or other control character".to_string());
        }
        if !(self.p.is_finite() && self.p > 0.0 && self.p <= 100.0) {
            return bad("percentile p", format!("p must be in (0, 100], got {}", self.p));
        }
        Ok(())
    }

    /// The wrong choices currently made, each with the false conclusion it produces.
    pub fn mistakes(&self) -> Vec<Mistake> {
        let mut out = Vec::new();
        match self.population.failure_denominator {
            FailureDenominator::AllAttempts => {}
            FailureDenominator::Successes => out.push(Mistake {
                setting: "failure_denominator",
                label: Text::new(
                    "Wrong denominator: failures divided by successes",
                    "错误分母：失败数除以成功数",
                ),
                false_conclusion: Text::new(
                    "The rate is no longer a share of the requests users sent: it overstates failures and can even pass 100 %, so no two runs of different size can be compared.",
                    "这个比率不再是“用户发出的请求里有多少失败”：它夸大了失败，甚至可能超过 100 %，不同规模的运行之间也无法比较。",
                ),
            }),
            FailureDenominator::FailedRowsDeleted => out.push(Mistake {
                setting: "failure_denominator",
                label: Text::new(
                    "Wrong: failed rows deleted before counting",
                    "错误：先删掉失败的行再统计",
                ),
                false_conclusion: Text::new(
                    "The failure rate becomes 0 % and every other rate is divided by fewer attempts, so the service looks perfectly reliable while real users waited and got nothing.",
                    "失败率变成 0 %，其他比率的分母也变小了，服务看起来完全可靠，而真实用户却在等待后一无所获。",
                ),
            }),
        }
        if self.population.missing_ttft == MissingTtft::TreatAsZero {
            out.push(Mistake {
                setting: "missing_ttft",
                label: Text::new(
                    "Wrong: a missing TTFT counted as 0 s",
                    "错误：把缺失的 TTFT 当作 0 秒",
                ),
                false_conclusion: Text::new(
                    "Requests that never produced a token enter the sort as the fastest of all, pulling P50 down and hiding the tail: the worst experiences look like the best ones.",
                    "从未产生 token 的请求以“最快”的身份进入排序，拉低 P50 并掩盖尾部：最糟糕的体验看起来像最好的体验。",
                ),
            });
        }
        if self.population.warmup == WarmupPolicy::Include {
            out.push(Mistake {
                setting: "warmup",
                label: Text::new("Wrong: warm-up attempts mixed in", "错误：把预热请求混入统计"),
                false_conclusion: Text::new(
                    "Cold-start requests (model loading, empty caches) are mixed with steady-state ones, so the tail reflects start-up rather than the service under test and reruns disagree.",
                    "冷启动请求（加载模型、缓存为空）与稳态请求混在一起，尾部反映的是启动过程而不是被测服务，重复运行的结果也对不上。",
                ),
            });
        }
        if self.comparison != self.slo_comparison && self.comparison == Comparison::Lt {
            out.push(Mistake {
                setting: "comparison",
                label: Text::new(
                    "Wrong comparison: the SLO says “within” (≤), written here as <",
                    "比较符错误：SLO 写的是“不超过”（≤），这里写成了 <",
                ),
                false_conclusion: Text::new(
                    "A request whose TTFT equals the threshold exactly met the SLO but is counted as too slow, so qualified requests and goodput are understated.",
                    "TTFT 恰好等于门槛的请求本已达标，却被算成太慢，合格数和 goodput 因而被低估。",
                ),
            });
        }
        out
    }
}

/// A wrong choice and the false conclusion it leads to.
#[derive(Debug, Clone, PartialEq)]
pub struct Mistake {
    /// The setting's code name (`failure_denominator`, `missing_ttft`, `warmup`, `comparison`).
    pub setting: &'static str,
    pub label: Text,
    pub false_conclusion: Text,
}

/// The keys of [`Settings::to_pairs`] and [`Settings::apply_pairs`]: threshold, comparison,
/// percentile method, percentile p, failure denominator, missing TTFT, warm-up, window, window
/// cost, currency. Lessons bind the lab with them (see the `tracelab-course` crate).
pub const PAIR_KEYS: [&str; 10] = ["t", "cmp", "pm", "p", "fd", "mt", "wu", "w", "cost", "cur"];

/// Settings as short `key=value` pairs, for permalinks and storage: a teacher's link sets
/// exactly what the class sees. Unknown keys and bad values are skipped, never fatal.
impl Settings {
    pub fn to_pairs(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![
            ("t", trim_num(self.ttft_threshold_s)),
            ("cmp", self.comparison.code().to_string()),
            ("pm", self.percentile.code().to_string()),
            ("p", trim_num(self.p)),
            ("fd", self.population.failure_denominator.code().to_string()),
            ("mt", self.population.missing_ttft.code().to_string()),
            ("wu", self.population.warmup.code().to_string()),
        ];
        if let Some(w) = self.window_s {
            v.push(("w", trim_num(w)));
        }
        if let Some(c) = self.window_cost {
            v.push(("cost", trim_num(c)));
        }
        if !self.currency.is_empty() {
            v.push(("cur", self.currency.clone()));
        }
        v
    }

    /// Applies pairs made by [`Settings::to_pairs`]; returns the keys that were refused.
    pub fn apply_pairs<'a>(&mut self, pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
        let mut refused = Vec::new();
        for (key, value) in pairs {
            // A value past the limits `validate` keeps (a 5e-324 s window from a hand-edited
            // link) is refused like a bad one, so no figure can become infinite.
            let before = self.clone();
            let number = value.trim().parse::<f64>().ok().filter(|v| v.is_finite());
            let ok = match key {
                "t" => number.filter(|v| *v >= 0.0).map(|v| self.ttft_threshold_s = v).is_some(),
                "cmp" => Comparison::from_code(value).map(|c| self.comparison = c).is_some(),
                "pm" => PercentileMethod::from_code(value).map(|m| self.percentile = m).is_some(),
                "p" => number.filter(|v| *v > 0.0 && *v <= 100.0).map(|v| self.p = v).is_some(),
                "fd" => FailureDenominator::from_code(value).map(|d| self.population.failure_denominator = d).is_some(),
                "mt" => MissingTtft::from_code(value).map(|d| self.population.missing_ttft = d).is_some(),
                "wu" => WarmupPolicy::from_code(value).map(|d| self.population.warmup = d).is_some(),
                "w" => number.filter(|v| *v > 0.0).map(|v| self.window_s = Some(v)).is_some(),
                "cost" => number.filter(|v| *v >= 0.0).map(|v| self.window_cost = Some(v)).is_some(),
                "cur" => {
                    self.currency = value.chars().take(12).collect();
                    true
                }
                _ => continue,
            };
            if !ok || self.validate().is_err() {
                *self = before;
                refused.push(key.to_string());
            }
        }
        refused
    }
}
