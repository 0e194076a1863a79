//! What a learner can change: the TTFT threshold and its comparison, the window and its cost, the
//! percentile method, and the denominator choices — including the wrong ones, each labelled with
//! the false conclusion it leads to.

use serde::{Deserialize, Serialize};

use crate::error::SettingsError;
use crate::format::trim_num;
use crate::percentile::PercentileMethod;
use crate::text::Text;
use crate::trace::{FirstToken, Header, LatencyOrigin, MAX_COST, MAX_WINDOW_S, MIN_WINDOW_S};
use crate::units;

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
    pub const ALL: [FailureDenominator; 3] = [
        FailureDenominator::AllAttempts,
        FailureDenominator::Successes,
        FailureDenominator::FailedRowsDeleted,
    ];

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

/// Whether a success must pass quality to qualify.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum QualityRule {
    /// A request qualifies only with a quality pass — the right rule: the joint condition.
    #[default]
    Required,
    /// Quality left out of the joint condition: a fast answer that failed the rubric counts as
    /// qualified — wrong (the lesson's R5).
    Ignored,
}

impl QualityRule {
    pub const ALL: [QualityRule; 2] = [QualityRule::Required, QualityRule::Ignored];

    pub fn code(self) -> &'static str {
        match self {
            QualityRule::Required => "required",
            QualityRule::Ignored => "ignored",
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
    /// Which token starts TTFT (the first answer token by default, as the course defines it).
    #[serde(default)]
    pub first_token: FirstToken,
    /// Whether qualifying needs a quality pass (it does; ignoring it is a named mistake).
    #[serde(default)]
    pub quality: QualityRule,
    /// Where TTFT and E2E are measured from: the actual start, or the intended one (an open
    /// loop's schedule, coordinated omission left out). It decides the TTFT sample and with it
    /// which attempts qualify, so it is a population choice.
    #[serde(default)]
    pub latency_from: LatencyOrigin,
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

    /// Refuses settings no figure can be computed with, saying why in both languages.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let bad = |setting, en: String, zh: String| {
            Err(SettingsError {
                setting,
                message: Text::new(en, zh),
            })
        };
        let t = self.ttft_threshold_s;
        if !(t.is_finite() && t >= 0.0) {
            return bad(
                "threshold",
                format!("the TTFT threshold must be 0 s or more, got {t}"),
                format!("TTFT 门槛必须不小于 0 秒，输入的是 {t}"),
            );
        }
        if t > MAX_WINDOW_S {
            return bad(
                "threshold",
                format!("the TTFT threshold may be at most 10^12 s, got {t}"),
                format!("TTFT 门槛最多为 10^12 秒，输入的是 {t}"),
            );
        }
        if let Some(w) = self.window_s {
            if !(w.is_finite() && w > 0.0) {
                return bad(
                    "window",
                    format!("the window must be longer than 0 s, got {w}"),
                    format!("窗口必须长于 0 秒，输入的是 {w}"),
                );
            }
            if !(MIN_WINDOW_S..=MAX_WINDOW_S).contains(&w) {
                return bad(
                    "window",
                    format!("the window must be between 1 µs and 10^12 s, got {w} s"),
                    format!("窗口必须在 1 微秒到 10^12 秒之间，输入的是 {w} 秒"),
                );
            }
        }
        if let Some(c) = self.window_cost {
            if !(c.is_finite() && c >= 0.0) {
                return bad(
                    "cost",
                    format!("a cost cannot be negative, got {c}"),
                    format!("成本不能为负数，输入的是 {c}"),
                );
            }
            if c > MAX_COST {
                return bad(
                    "cost",
                    format!("a window cost may be at most 10^12, got {c}"),
                    format!("窗口成本最多为 10^12，输入的是 {c}"),
                );
            }
        }
        if self.currency.chars().any(char::is_control) {
            return bad(
                "currency",
                "a currency cannot hold a line break or other control character".to_string(),
                "货币名称不能包含换行或其他控制字符".to_string(),
            );
        }
        let p = self.p;
        if !(p.is_finite() && p > 0.0 && p <= 100.0) {
            return bad(
                "percentile p",
                format!("p must be in (0, 100], got {p}"),
                format!("p 必须在 (0, 100] 之内，输入的是 {p}"),
            );
        }
        Ok(())
    }

    /// These settings with what a learner typed into one number box, named by its pair key
    /// (`t` threshold in s, `w` window in s, `cost`, `p`): times are read as typed seconds
    /// ([`units::parse_seconds`], to the trace's microsecond), then the result must pass
    /// [`Settings::validate`]. `Ok(None)` for an empty box (nothing to change); otherwise the
    /// core's reason, in both languages, why the value cannot be used.
    pub fn with_typed(&self, key: &str, raw: &str) -> Result<Option<Settings>, SettingsError> {
        let setting = match key {
            "t" => "threshold",
            "w" => "window",
            "cost" => "cost",
            "p" => "percentile p",
            _ => {
                return Err(SettingsError {
                    setting: "key",
                    message: Text::new(
                        format!("`{key}` is not a number setting"),
                        format!("“{key}”不是数值类设置"),
                    ),
                })
            }
        };
        let refused = |message| SettingsError { setting, message };
        let number = match key {
            "t" | "w" => units::parse_seconds(raw).map_err(refused)?,
            _ if raw.trim().is_empty() => None,
            _ => Some(units::parse_number(raw).map_err(refused)?),
        };
        let Some(v) = number else { return Ok(None) };
        let mut out = self.clone();
        match key {
            "t" => out.ttft_threshold_s = v,
            "w" => out.window_s = Some(v),
            "cost" => out.window_cost = Some(v),
            _ => out.p = v,
        }
        out.validate()?;
        Ok(Some(out))
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
                    "从未产生 token 的请求被当作 0 秒（“最快”）参与排序，拉低 P50 并掩盖尾部：最糟糕的体验看起来像最好的体验。",
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
        if self.population.quality == QualityRule::Ignored {
            out.push(Mistake {
                setting: "quality",
                label: Text::new(
                    "Wrong: quality left out of the joint condition",
                    "错误：联合条件里漏掉了质量",
                ),
                false_conclusion: Text::new(
                    "A fast answer that failed the rubric (the lesson's R5) counts as qualified, so qualified requests, the joint rate and goodput reward speed at the expense of correctness.",
                    "回答没通过评分规则、但很快的请求（课中的 R5）被算作合格，合格数、联合合格率和 goodput 因而以牺牲正确性为代价奖励了速度。",
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

impl Settings {
    /// These settings with the one named by a [`Mistake`]'s `setting` put right (the lesson's
    /// choice), everything else kept: what the figures would be without that mistake.
    pub fn corrected(&self, setting: &str) -> Settings {
        let mut s = self.clone();
        match setting {
            "failure_denominator" => {
                s.population.failure_denominator = FailureDenominator::AllAttempts
            }
            "missing_ttft" => s.population.missing_ttft = MissingTtft::KeepMissing,
            "warmup" => s.population.warmup = WarmupPolicy::Exclude,
            "quality" => s.population.quality = QualityRule::Required,
            "comparison" => s.comparison = s.slo_comparison,
            _ => {}
        }
        s
    }
}

/// The keys of [`Settings::to_pairs`] and [`Settings::apply_pairs`]: threshold, comparison,
/// percentile method, percentile p, failure denominator, missing TTFT, warm-up, window, window
/// cost, currency, first token, quality rule, latency origin. Lessons bind the lab with them (see
/// the `tracelab-course` crate).
pub const PAIR_KEYS: [&str; 13] = [
    "t", "cmp", "pm", "p", "fd", "mt", "wu", "w", "cost", "cur", "ft", "qr", "lf",
];

/// One choice a learner makes among named options (a `key=value` pair of [`Settings::to_pairs`]):
/// its name and each option's, in both languages. The one home of the options' words: the
/// lab's controls and the learner's metric card both offer them from here.
pub struct ChoiceSpec {
    pub key: &'static str,
    pub label: (&'static str, &'static str),
    /// (code, en, zh); the first option is the course's definition.
    pub options: &'static [(&'static str, &'static str, &'static str)],
}

impl ChoiceSpec {
    pub fn label(&self) -> Text {
        Text::new(self.label.0, self.label.1)
    }

    /// The option's words, or `None` for a code this choice does not have.
    pub fn option(&self, code: &str) -> Option<Text> {
        self.options
            .iter()
            .find(|o| o.0 == code)
            .map(|o| Text::new(o.1, o.2))
    }
}

/// Every choice with named options, in the lab's order.
pub const CHOICES: [ChoiceSpec; 8] = [
    ChoiceSpec {
        key: "cmp",
        label: ("Comparison", "比较方式"),
        options: &[
            ("le", "≤ within the threshold", "≤ 不超过门槛"),
            ("lt", "< strictly below", "< 严格小于"),
        ],
    },
    ChoiceSpec {
        key: "ft",
        label: ("TTFT ends at", "TTFT 截止于"),
        options: &[
            ("content", "first answer token", "首个回答 token"),
            ("any", "any output (reasoning too)", "任何输出（含推理）"),
        ],
    },
    ChoiceSpec {
        key: "lf",
        label: ("Latency measured from", "时延的起点"),
        options: &[
            ("actual", "the actual start", "实际开始时间"),
            (
                "intended",
                "the intended start (open loop)",
                "计划开始时间（开放到达）",
            ),
        ],
    },
    ChoiceSpec {
        key: "pm",
        label: ("Percentile method", "分位数方法"),
        options: &[
            (
                "nearest-rank",
                "nearest-rank (lesson)",
                "最近秩（课程采用）",
            ),
            (
                "linear",
                "linear (numpy, most tools)",
                "线性插值（numpy 及多数工具）",
            ),
            ("lower", "lower", "取下侧样本"),
            ("higher", "higher", "取上侧样本"),
        ],
    },
    ChoiceSpec {
        key: "fd",
        label: ("Failure rate divided by", "失败率的分母"),
        options: &[
            ("all_attempts", "all attempts (right)", "全部尝试（正确）"),
            ("successes", "successes only (wrong)", "只用成功数（错误）"),
            (
                "failed_rows_deleted",
                "attempts after deleting failed rows (wrong)",
                "删掉失败行之后的尝试（错误）",
            ),
        ],
    },
    ChoiceSpec {
        key: "mt",
        label: ("A missing TTFT is", "缺失的 TTFT"),
        options: &[
            ("keep_missing", "kept missing (right)", "保持缺失（正确）"),
            (
                "treat_as_zero",
                "counted as 0 s (wrong)",
                "当作 0 秒（错误）",
            ),
        ],
    },
    ChoiceSpec {
        key: "wu",
        label: ("Warm-up attempts are", "预热尝试"),
        options: &[
            ("exclude", "excluded (right)", "排除（正确）"),
            ("include", "mixed in (wrong)", "混入统计（错误）"),
        ],
    },
    ChoiceSpec {
        key: "qr",
        label: (
            "A quality pass in the joint condition is",
            "联合条件中的质量通过",
        ),
        options: &[
            ("required", "required (right)", "必须通过（正确）"),
            ("ignored", "ignored (wrong)", "被忽略（错误）"),
        ],
    },
];

/// The choices given as numbers (and the currency): key and name, in the lab's words.
pub const NUMBER_CHOICES: [(&str, &str, &str); 5] = [
    ("t", "TTFT threshold (s)", "TTFT 门槛（秒）"),
    ("p", "Tail percentile p", "尾部分位数 p"),
    ("w", "Window (s)", "窗口（秒）"),
    ("cost", "Window cost", "窗口成本"),
    ("cur", "Currency", "货币"),
];

/// A pair key's name, for a card or a form.
pub fn pair_label(key: &str) -> Text {
    if let Some(c) = CHOICES.iter().find(|c| c.key == key) {
        return c.label();
    }
    NUMBER_CHOICES
        .iter()
        .find(|c| c.0 == key)
        .map(|c| Text::new(c.1, c.2))
        .unwrap_or_else(|| Text::new(key, key))
}

/// A pair's value in words ("≤ within the threshold", "1 s", "P95"); a code no option has is
/// written as it stands, so a card never hides what it says.
pub fn pair_value_label(key: &str, code: &str) -> Text {
    if let Some(c) = CHOICES.iter().find(|c| c.key == key) {
        return c.option(code).unwrap_or_else(|| Text::new(code, code));
    }
    match key {
        "t" | "w" => Text::new(format!("{code} s"), format!("{code} 秒")),
        "p" => Text::new(format!("P{code}"), format!("P{code}")),
        _ => Text::new(code, code),
    }
}

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
        v.push(("ft", self.population.first_token.code().to_string()));
        v.push(("qr", self.population.quality.code().to_string()));
        v.push(("lf", self.population.latency_from.code().to_string()));
        v
    }

    /// Applies pairs made by [`Settings::to_pairs`]; returns the keys that were refused.
    pub fn apply_pairs<'a>(
        &mut self,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Vec<String> {
        let mut refused = Vec::new();
        for (key, value) in pairs {
            // A value past the limits `validate` keeps (a 5e-324 s window from a hand-edited
            // link) is refused like a bad one, so no figure can become infinite.
            let before = self.clone();
            let ok = match key {
                // The number boxes' own reading, so a link and a typed value agree.
                "t" | "p" | "w" | "cost" => match self.with_typed(key, value) {
                    Ok(Some(s)) => {
                        *self = s;
                        true
                    }
                    Ok(None) | Err(_) => false,
                },
                "cmp" => Comparison::from_code(value)
                    .map(|c| self.comparison = c)
                    .is_some(),
                "pm" => PercentileMethod::from_code(value)
                    .map(|m| self.percentile = m)
                    .is_some(),
                "fd" => FailureDenominator::from_code(value)
                    .map(|d| self.population.failure_denominator = d)
                    .is_some(),
                "mt" => MissingTtft::from_code(value)
                    .map(|d| self.population.missing_ttft = d)
                    .is_some(),
                "wu" => WarmupPolicy::from_code(value)
                    .map(|d| self.population.warmup = d)
                    .is_some(),
                "ft" => FirstToken::from_code(value)
                    .map(|f| self.population.first_token = f)
                    .is_some(),
                "lf" => LatencyOrigin::from_code(value)
                    .map(|o| self.population.latency_from = o)
                    .is_some(),
                "qr" => QualityRule::from_code(value)
                    .map(|q| self.population.quality = q)
                    .is_some(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_option_is_a_value_its_setting_takes_and_writes_back() {
        for spec in &CHOICES {
            assert!(PAIR_KEYS.contains(&spec.key), "{}", spec.key);
            for (code, en, zh) in spec.options {
                let mut s = Settings::default();
                assert!(
                    s.apply_pairs([(spec.key, *code)]).is_empty(),
                    "{}={code}",
                    spec.key
                );
                assert!(
                    s.to_pairs().contains(&(spec.key, code.to_string())),
                    "{}={code}",
                    spec.key
                );
                assert!(!en.is_empty() && !zh.is_empty());
            }
            // Every value the setting takes has words.
            let written = Settings::default()
                .to_pairs()
                .into_iter()
                .find(|(k, _)| *k == spec.key)
                .unwrap()
                .1;
            assert!(spec.option(&written).is_some(), "{}", spec.key);
        }
        for key in PAIR_KEYS {
            assert_ne!(pair_label(key).en, key, "{key} has a name");
        }
        assert_eq!(
            pair_value_label("pm", "linear").zh,
            "线性插值（numpy 及多数工具）"
        );
        assert_eq!(pair_value_label("t", "0.5").en, "0.5 s");
    }

    #[test]
    fn a_typed_value_is_read_by_the_core_and_refused_in_both_languages() {
        let s = Settings::default();
        let t = s.with_typed("t", " 2.007 ").unwrap().unwrap();
        assert_eq!(t.ttft_threshold_s, 2.007);
        assert_eq!(
            s.with_typed("w", "10").unwrap().unwrap().window_s,
            Some(10.0)
        );
        assert_eq!(
            s.with_typed("cost", "0.02").unwrap().unwrap().window_cost,
            Some(0.02)
        );
        assert_eq!(s.with_typed("p", "99.9").unwrap().unwrap().p, 99.9);
        // An empty box changes nothing.
        for key in ["t", "w", "cost", "p"] {
            assert_eq!(s.with_typed(key, "  "), Ok(None), "{key}");
        }
        for (key, raw, setting, en, zh) in [
            ("t", "-1", "threshold", "negative", "负数"),
            (
                "t",
                "abc",
                "threshold",
                "`abc` is not a number",
                "不是一个数字",
            ),
            ("w", "0", "window", "longer than 0 s", "长于 0 秒"),
            ("cost", "-0.5", "cost", "cannot be negative", "不能为负数"),
            ("cost", "1e13", "cost", "at most 10^12", "最多为 10^12"),
            ("p", "0", "percentile p", "(0, 100]", "(0, 100]"),
            ("p", "100.5", "percentile p", "(0, 100]", "(0, 100]"),
            ("p", "NaN", "percentile p", "not a number", "不是一个数字"),
        ] {
            let e = s.with_typed(key, raw).unwrap_err();
            assert_eq!(e.setting, setting, "{key}={raw}");
            assert!(e.message.en.contains(en), "{key}={raw}: {:?}", e.message);
            assert!(e.message.zh.contains(zh), "{key}={raw}: {:?}", e.message);
        }
        assert!(s.with_typed("cmp", "le").is_err(), "not a number box");
    }

    #[test]
    fn a_link_is_read_as_the_boxes_read_it() {
        let mut s = Settings::default();
        let refused = s.apply_pairs([
            ("t", "2.007"),
            ("p", "99"),
            ("w", "-3"),
            ("cost", "x"),
            ("cmp", "lt"),
        ]);
        assert_eq!(refused, ["w", "cost"]);
        assert_eq!(
            (
                s.ttft_threshold_s,
                s.p,
                s.window_s,
                s.window_cost,
                s.comparison
            ),
            (2.007, 99.0, None, None, Comparison::Lt)
        );
        // Every key a permalink writes is read back to the same settings.
        let mut back = Settings::default();
        s.window_s = Some(10.0);
        s.window_cost = Some(0.02);
        s.currency = "CNY".into();
        let pairs = s.to_pairs();
        assert_eq!(pairs.iter().map(|(k, _)| *k).collect::<Vec<_>>(), PAIR_KEYS);
        assert!(back
            .apply_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())))
            .is_empty());
        assert_eq!(
            back,
            Settings {
                slo_comparison: back.slo_comparison,
                ..s
            }
        );
    }
}
