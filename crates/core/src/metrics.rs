//! Every figure the lab and `tracelab report` show, each carrying its formula parts (numerator,
//! denominator, unit, method, sample count) so any view can explain where it came from.
//! A figure that cannot be computed is `undefined` with the reason — never NaN or infinity.

use serde::Serialize;
use serde_json::{json, Value};

use crate::figure::{Change, Figure, Unit};
use crate::format::{percentile_label, trim_num};
use crate::index::Index;
use crate::percentile::{describe, nearest_rank, percentile_of, PercentileMethod, Ranked};
use crate::settings::{FailureDenominator, MissingTtft, Settings};
use crate::text::{Lang, Text};
use crate::verdict::threshold_ms;

impl Figure {
    pub(crate) fn new(key: &str, name: Text, unit: Unit) -> Figure {
        Figure {
            key: key.to_string(),
            name,
            value: None,
            numerator: None,
            numerator_label: None,
            denominator: None,
            denominator_label: None,
            unit,
            method: None,
            method_text: None,
            n: None,
            undefined: None,
            note: None,
            short_name: None,
        }
    }

    /// numerator / denominator; undefined (with `why`) when the denominator is 0.
    pub(crate) fn ratio(
        mut self,
        num: f64,
        num_label: Text,
        den: f64,
        den_label: Text,
        why: Text,
    ) -> Figure {
        self.numerator = Some(num);
        self.numerator_label = Some(num_label);
        self.denominator = Some(den);
        self.denominator_label = Some(den_label);
        if den > 0.0 {
            self.value = Some(num / den);
        } else {
            self.undefined = Some(why);
        }
        self
    }

    pub(crate) fn undefined(mut self, why: Text) -> Figure {
        self.value = None;
        self.undefined = Some(why);
        self
    }
}

/// Which TTFTs the percentiles rank, as the figures' names say it: the complete successes'
/// (the lesson's sample), or, when a missing TTFT is (wrongly) counted as 0, every counted
/// attempt's, failures included, each missing one as 0 s. With failed rows deleted as well,
/// only successes are left to count, the ones without a token at 0 s.
struct TtftSample {
    missing_as_zero: bool,
    failures_counted: bool,
    /// Which token ends TTFT and where it starts, where the choices can differ (", reasoning
    /// included", ", from the intended start").
    first: (String, String),
    /// Measured from the intended start: the figure strip's short name says so too.
    intended: bool,
}

/// Where the latencies are measured from, as the figures' names say it: wherever the two
/// [`crate::LatencyOrigin`] choices can differ (the intended start is chosen, or some counted
/// attempt was sent after its intended start), else nothing: on a closed loop's trace, or an
/// open loop's that kept its schedule, the two give the same figures.
fn origin_words(ix: &Index, s: &Settings) -> Option<Text> {
    let origin = s.population.latency_from;
    (origin == crate::LatencyOrigin::Intended || ix.late_starts > 0).then(|| origin.text())
}

/// "3 of 10 attempts had no intended start (closed loop): measured from their actual start",
/// when the intended start is the origin and some counted attempt has none.
fn fallback_note(ix: &Index) -> Option<Text> {
    let n = ix.origin_fallbacks();
    (n > 0).then(|| {
        Text::new(
            format!(
                "{} of {} attempts had no intended start (a closed loop has no schedule): {} from {} actual start",
                crate::format::integer(n as u64),
                crate::format::integer(ix.attempts as u64),
                if n == 1 { "it is measured" } else { "they are measured" },
                if n == 1 { "its" } else { "their" }
            ),
            format!(
                "{} 个尝试中有 {} 个没有计划开始时间（闭环没有时间表）：它们从实际开始时间算起",
                crate::format::integer(ix.attempts as u64),
                crate::format::integer(n as u64)
            ),
        )
    })
}

/// A figure's caution notes, joined: a note already there stays first.
fn add_note(f: &mut Figure, note: Option<Text>) {
    let Some(note) = note else { return };
    f.note = Some(match f.note.take() {
        // The first note's own full stop gives way to the joining semicolon.
        Some(before) => Text::new(
            format!("{}; {}", before.en.trim_end_matches('.'), note.en),
            format!("{}；{}", before.zh.trim_end_matches('。'), note.zh),
        ),
        None => note,
    });
}

impl TtftSample {
    fn of(ix: &Index, s: &Settings) -> TtftSample {
        // Which token starts TTFT is said wherever the two choices can differ: always when the
        // wrong-for-the-course one is chosen, and on a trace with reasoning kept apart.
        let first = match (s.population.first_token, ix.reasoning_attempts > 0) {
            (crate::FirstToken::AnyOutput, _) => Some(t("reasoning included", "含推理")),
            (crate::FirstToken::Content, true) => Some(t("first answer token", "首个回答 token")),
            (crate::FirstToken::Content, false) => None,
        };
        // Where TTFT starts is said by the same rule, after which token ends it.
        let words: Vec<Text> = first.into_iter().chain(origin_words(ix, s)).collect();
        let join = |lang: Lang| {
            let parts: Vec<&str> = words.iter().map(|w| w.get(lang)).collect();
            parts.join(if lang == Lang::Zh { "；" } else { ", " })
        };
        TtftSample {
            missing_as_zero: s.population.missing_ttft == MissingTtft::TreatAsZero,
            failures_counted: !ix.deletes_failures(),
            first: (join(Lang::En), join(Lang::Zh)),
            intended: s.population.latency_from == crate::LatencyOrigin::Intended,
        }
    }

    /// "P95 TTFT (successes)", "P95 TTFT (all attempts, missing counted as 0 s)".
    fn name(&self, label: &str) -> Text {
        let (first_en, first_zh) = (self.first.0.as_str(), self.first.1.as_str());
        let with_first_en = |s: &str| {
            if first_en.is_empty() {
                s.to_string()
            } else {
                format!("{s}, {first_en}")
            }
        };
        let with_first_zh = |s: &str| {
            if first_zh.is_empty() {
                s.to_string()
            } else {
                format!("{s}；{first_zh}")
            }
        };
        match (self.missing_as_zero, self.failures_counted) {
            (false, _) => Text::new(
                format!("{label} TTFT ({})", with_first_en("successes")),
                if first_zh.is_empty() {
                    format!("成功请求 TTFT {label}")
                } else {
                    format!("成功请求 TTFT {label}（{first_zh}）")
                },
            ),
            (true, true) => Text::new(
                format!(
                    "{label} TTFT ({})",
                    with_first_en("all attempts, missing counted as 0 s")
                ),
                format!(
                    "全部尝试 TTFT {label}（{}）",
                    with_first_zh("缺失按 0 秒计")
                ),
            ),
            (true, false) => Text::new(
                format!(
                    "{label} TTFT ({})",
                    with_first_en("successes, missing counted as 0 s")
                ),
                format!(
                    "成功请求 TTFT {label}（{}）",
                    with_first_zh("缺失按 0 秒计")
                ),
            ),
        }
    }

    /// The name in the figure strip: "P95 TTFT", or what the sample is when it is not the
    /// lesson's.
    fn short_name(&self, label: &str) -> Text {
        let name = self.short_name_from_actual(label);
        if !self.intended {
            return name;
        }
        Text::new(
            format!("{} from the intended start", name.en),
            format!("{}（从计划开始时间算起）", name.zh),
        )
    }

    fn short_name_from_actual(&self, label: &str) -> Text {
        match (self.missing_as_zero, self.failures_counted) {
            (false, _) => Text::new(format!("{label} TTFT"), format!("{label} TTFT")),
            (true, true) => Text::new(
                format!("{label} TTFT (all attempts, missing as 0 s)"),
                format!("{label} TTFT（全部尝试，缺失按 0 秒）"),
            ),
            (true, false) => Text::new(
                format!("{label} TTFT (missing as 0 s)"),
                format!("{label} TTFT（缺失按 0 秒）"),
            ),
        }
    }

    /// What is ranked, for "no samples: there is no … to rank".
    fn what(&self) -> Text {
        match (self.missing_as_zero, self.failures_counted) {
            (false, _) => t("success TTFT", "成功请求的 TTFT"),
            (true, true) => t(
                "attempt TTFT (missing counted as 0 s)",
                "尝试的 TTFT（缺失按 0 秒计）",
            ),
            (true, false) => t(
                "success TTFT (missing counted as 0 s)",
                "成功请求的 TTFT（缺失按 0 秒计）",
            ),
        }
    }
}

/// All figures for one trace under one set of settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    pub attempts: usize,
    pub successes: usize,
    /// Complete successes with no output token: successes, but outside the TTFT sample.
    pub successes_without_token: usize,
    pub failures: usize,
    /// Failures by outcome, most common first (`http_error 429` kept apart from `http_error 500`).
    pub failures_by_outcome: Vec<(String, usize)>,
    pub warmup_excluded: usize,
    pub failed_rows_deleted: usize,
    pub qualified: usize,
    /// Complete successes that carry no quality verdict. When that is every success (a peer
    /// tool's file, say), quality was not evaluated at all and "qualified 0" says nothing about
    /// the run: the view must say "not evaluated", not show 0 as a finding.
    pub quality_unevaluated: usize,
    pub failure_rate: Figure,
    pub ttft_p50: Figure,
    /// Always P95, whatever tail the settings ask for (the lesson's figure and a stable JSON key).
    pub ttft_p95: Figure,
    /// The tail percentile chosen in the settings (P95 by default).
    pub ttft_tail: Figure,
    pub quality_pass_rate: Figure,
    pub joint_rate: Figure,
    pub goodput: Figure,
    pub cost_per_1000_qualified: Figure,
    pub e2e_p50: Figure,
    pub e2e_tail: Figure,
    pub itl_p50: Figure,
    pub itl_tail: Figure,
    pub output_tokens_per_s: Figure,
    pub business_success_rate: Figure,
    /// Counted attempts sent after their intended start (an open loop's client behind).
    pub late_starts: usize,
    /// Counted attempts measured from their actual start although the intended start is the
    /// origin: they have none (closed loop). 0 when the actual start is the origin.
    pub origin_fallbacks: usize,
}

/// The denominator "all attempts", as its words say it (after deleting failed rows, the ones
/// left), and what an empty one reads.
struct Denominator {
    label: Text,
    empty: Text,
}

impl Denominator {
    fn of(ix: &Index) -> Denominator {
        let label = if ix.deletes_failures() {
            t(
                "attempts left after deleting failed rows",
                "删除失败行之后剩下的尝试",
            )
        } else {
            t("all attempts", "全部尝试")
        };
        Denominator {
            label,
            empty: t("no attempts are counted", "没有被计入的尝试"),
        }
    }
}

/// Failures over the chosen denominator (all attempts, or — wrongly — the successes).
fn failure_rate(ix: &Index, all: &Denominator) -> Figure {
    let attempts = ix.attempts as f64;
    {
        let f = Figure::new("failure_rate", t("Failure rate", "失败率"), Unit::Ratio);
        let failures_label = t("failures", "失败次数");
        match ix.population.failure_denominator {
            FailureDenominator::Successes => {
                let mut f = f.ratio(
                    ix.failures as f64,
                    failures_label,
                    ix.successes as f64,
                    t("successes (wrong denominator)", "成功次数（错误的分母）"),
                    t("no successes to divide by", "没有成功的尝试可作分母"),
                );
                // Why no interval is shown (compare::Intervals gives none for it): Wilson's
                // is for k of n, and failures are not some of the successes.
                f.note = Some(t(
                    "No 95 % interval: failures ÷ successes is not a proportion (the failures are not part of the successes, so it can pass 100 %; it is the odds of failure), and the Wilson interval holds only for a proportion, k of n.",
                    "不给 95 % 区间：失败数 ÷ 成功数不是比例（失败并不是成功中的一部分，所以它可能超过 100 %；它是失败的几率），而 Wilson 区间只适用于比例，即 n 个中的 k 个。",
                ));
                f
            }
            _ => f.ratio(
                ix.failures as f64,
                failures_label,
                attempts,
                all.label.clone(),
                all.empty.clone(),
            ),
        }
    }
}

/// P50, P95 and the chosen tail of TTFT, each named by its sample: the successes' TTFTs (the
/// lesson's), or, when a missing TTFT is (wrongly) counted as 0, every counted attempt's.
fn ttft_figures(ix: &Index, s: &Settings) -> [Figure; 3] {
    // The name says what the sample is: the successes' TTFTs (the lesson's), or, when a
    // missing TTFT is (wrongly) counted as 0, every counted attempt's, failures included.
    let sample = TtftSample::of(ix, s);
    let ttft_what = sample.what();
    let ttft_name = |label: String| sample.name(&label);
    let mut ttft_p50 = distribution(
        "ttft_p50",
        ttft_name("P50".into()),
        &ix.ttft_ms,
        50.0,
        s.percentile,
        &ttft_what,
    );
    if ix.successes_without_token > 0 {
        let n = ix.successes_without_token;
        ttft_p50.note = Some(Text::new(
            format!(
                "{} of {} complete successes carried no output token (the model ended at once): {} no TTFT and {} not in n",
                n,
                ix.successes,
                if n == 1 { "it has" } else { "they have" },
                if n == 1 { "is" } else { "are" }
            ),
            format!("{} 个完整成功的请求没有任何输出 token（模型立即结束）：它们没有 TTFT，不计入 n（共 {} 个完整成功）", n, ix.successes),
        ));
    }
    ttft_p50.short_name = Some(sample.short_name("P50"));
    add_note(&mut ttft_p50, fallback_note(ix));
    let mut ttft_p95 = distribution(
        "ttft_p95",
        ttft_name("P95".into()),
        &ix.ttft_ms,
        95.0,
        s.percentile,
        &ttft_what,
    );
    ttft_p95.short_name = Some(sample.short_name("P95"));
    add_note(&mut ttft_p95, fallback_note(ix));
    let mut ttft_tail = distribution(
        "ttft_tail",
        ttft_name(percentile_label(s.p)),
        &ix.ttft_ms,
        s.p,
        s.percentile,
        &ttft_what,
    );
    ttft_tail.short_name = Some(sample.short_name(&percentile_label(s.p)));
    add_note(&mut ttft_tail, fallback_note(ix));

    [ttft_p50, ttft_p95, ttft_tail]
}

/// Quality passes among the complete successes; a success not evaluated counts as not passed.
fn quality_pass_rate(ix: &Index) -> Figure {
    let mut f = Figure::new(
        "quality_pass_rate",
        t("Quality pass rate among successes", "成功请求质量通过率"),
        Unit::Ratio,
    )
    .ratio(
        ix.quality_pass as f64,
        t("quality passes", "质量通过"),
        ix.successes as f64,
        t("complete successes", "完整成功"),
        t("no complete successes to judge", "没有完整成功的请求可评判"),
    );
    if ix.quality_not_evaluated > 0 {
        f.note = Some(Text::new(
            match ix.quality_not_evaluated {
                1 => "1 success was not evaluated and counts as not passed".to_string(),
                n => format!("{n} successes were not evaluated and count as not passed"),
            },
            format!(
                "{} 个成功请求未做质量评估，按未通过计",
                ix.quality_not_evaluated
            ),
        ));
    }

    f
}

/// The joint condition in words: success ∧ quality pass ∧ TTFT within the threshold, with
/// where TTFT is measured from when that is the intended start.
fn qualified_label(s: &Settings) -> Text {
    let ignored = s.population.quality == crate::settings::QualityRule::Ignored;
    // The intended start moves every TTFT, so the condition says so where it is chosen.
    let (from_en, from_zh) = match s.population.latency_from {
        crate::LatencyOrigin::Actual => ("", ""),
        crate::LatencyOrigin::Intended => (" from the intended start", "（从计划开始时间算起）"),
    };
    Text::new(
        format!(
            "jointly qualified (success ∧ {}TTFT{from_en} {} {} s)",
            if ignored { "" } else { "quality pass ∧ " },
            s.comparison.symbol(),
            trim_num(s.ttft_threshold_s)
        ) + if ignored {
            "; quality ignored (wrong)"
        } else {
            ""
        },
        format!(
            "联合合格（完整成功 ∧ {}TTFT{from_zh} {} {} 秒）",
            if ignored { "" } else { "质量通过 ∧ " },
            s.comparison.symbol(),
            trim_num(s.ttft_threshold_s)
        ) + if ignored {
            "；漏掉了质量（错误）"
        } else {
            ""
        },
    )
}

/// Jointly qualified attempts over all attempts.
fn joint_rate(ix: &Index, qualified: usize, qualified_label: &Text, all: &Denominator) -> Figure {
    let attempts = ix.attempts as f64;
    Figure::new(
        "joint_rate",
        t("Joint qualification rate", "联合合格率"),
        Unit::Ratio,
    )
    .ratio(
        qualified as f64,
        qualified_label.clone(),
        attempts,
        all.label.clone(),
        all.empty.clone(),
    )
}

/// Jointly qualified attempts per second of the fixed window.
fn goodput(s: &Settings, qualified: usize, qualified_label: &Text) -> Figure {
    {
        let f = Figure::new("goodput", t("Goodput", "合格 goodput"), Unit::PerSecond);
        match s.window_s {
            Some(w) => f.ratio(
                qualified as f64,
                qualified_label.clone(),
                w,
                t("window seconds", "窗口秒数"),
                t("the window must be longer than 0 s", "窗口必须长于 0 秒"),
            ),
            None => f.undefined(t(
                "no window is set: goodput is qualified requests per second of a fixed window",
                "未设置窗口：goodput 是固定窗口内每秒的合格请求数",
            )),
        }
    }
}

/// The window's cost over the jointly qualified attempts, per 1,000.
fn cost_per_1000_qualified(s: &Settings, qualified: usize, qualified_label: &Text) -> Figure {
    {
        let mut f = Figure::new(
            "cost_per_1000_qualified",
            t("Cost per 1,000 qualified", "每千次合格成本"),
            Unit::MoneyPer1000(s.currency.clone()),
        );
        match s.window_cost {
            None => f.undefined(t("no window cost is set", "未设置窗口成本")),
            Some(cost) => {
                f.numerator = Some(cost * 1000.0);
                f.numerator_label = Some(t("window cost × 1,000", "窗口成本 × 1000"));
                f.denominator = Some(qualified as f64);
                f.denominator_label = Some(qualified_label.clone());
                if qualified > 0 {
                    f.value = Some(cost * 1000.0 / qualified as f64);
                    f
                } else {
                    f.undefined(t(
                        "undefined: nothing qualified, so no qualified request can carry the cost (not infinity, not 0)",
                        "无定义：没有任何请求合格，成本无处分摊（不是无穷大，也不是 0）",
                    ))
                }
            }
        }
    }
}

/// P50 and the chosen tail of the successes' E2E, named by where it is measured from.
fn e2e_figures(ix: &Index, s: &Settings) -> [Figure; 2] {
    let e2e_what = t("success E2E", "成功请求的端到端时延");
    // E2E names its origin by TTFT's rule: "P50 E2E (successes, from the intended start)".
    let e2e_origin = origin_words(ix, s);
    let e2e_name = |label: &str| match &e2e_origin {
        None => Text::new(
            format!("{label} E2E (successes)"),
            format!("成功请求 E2E {label}"),
        ),
        Some(o) => Text::new(
            format!("{label} E2E (successes, {})", o.en),
            format!("成功请求 E2E {label}（{}）", o.zh),
        ),
    };
    let mut e2e_p50 = distribution(
        "e2e_p50",
        e2e_name("P50"),
        &ix.e2e_ms,
        50.0,
        s.percentile,
        &e2e_what,
    );
    add_note(&mut e2e_p50, fallback_note(ix));
    let mut e2e_tail = distribution(
        "e2e_tail",
        e2e_name(&percentile_label(s.p)),
        &ix.e2e_ms,
        s.p,
        s.percentile,
        &e2e_what,
    );
    add_note(&mut e2e_tail, fallback_note(ix));
    [e2e_p50, e2e_tail]
}

/// P50 and the chosen tail of the gaps between stream events.
fn itl_figures(ix: &Index, s: &Settings) -> [Figure; 2] {
    let itl_what = t("gap between stream events", "流事件间隔");
    let itl_p50 = distribution(
        "itl_p50",
        t("P50 ITL (per event)", "ITL P50（按事件）"),
        &ix.itl_ms,
        50.0,
        s.percentile,
        &itl_what,
    );
    let itl_tail = distribution(
        "itl_tail",
        Text::new(
            format!("{} ITL (per event)", percentile_label(s.p)),
            format!("ITL {}（按事件）", percentile_label(s.p)),
        ),
        &ix.itl_ms,
        s.p,
        s.percentile,
        &itl_what,
    );

    [itl_p50, itl_tail]
}

/// The successes' output tokens per window second, from the server's usage only.
fn output_tokens_per_s(ix: &Index, s: &Settings, all: &Denominator) -> Figure {
    {
        let f = Figure::new(
            "output_tokens_per_s",
            t("Output tokens/s", "输出 token/秒"),
            Unit::TokensPerSecond,
        );
        if ix.attempts == 0 {
            f.undefined(all.empty.clone())
        } else if ix.successes == 0 {
            f.undefined(t(
                "no complete successes: there is no output to count",
                "没有完整成功的请求：没有可计数的输出",
            ))
        } else if ix.usage_successes == 0 {
            f.undefined(t(
                "unknown: the server reported no usage, and counting chunks would only estimate tokens",
                "未知：服务端没有返回 usage，数 chunk 只能估计 token 数",
            ))
        } else {
            match s.window_s {
                Some(w) => {
                    let mut f = f.ratio(
                        ix.usage_output_tokens as f64,
                        t(
                            "output tokens of successes (server usage)",
                            "成功请求的输出 token（服务端 usage）",
                        ),
                        w,
                        t("window seconds", "窗口秒数"),
                        t("the window must be longer than 0 s", "窗口必须长于 0 秒"),
                    );
                    f.n = Some(ix.usage_successes);
                    f
                }
                None => f.undefined(t("no window is set", "未设置窗口")),
            }
        }
    }
}

/// Business requests with at least one complete success, over the business requests.
fn business_success_rate(ix: &Index) -> Figure {
    Figure::new(
        "business_success_rate",
        t("Business requests answered", "最终得到回答的业务请求"),
        Unit::Ratio,
    )
    .ratio(
        ix.business_answered as f64,
        t(
            "business requests with at least one complete success",
            "至少有一次完整成功的业务请求",
        ),
        ix.business_requests as f64,
        t("business requests", "业务请求"),
        t("no business requests", "没有业务请求"),
    )
}

fn t(en: &str, zh: &str) -> Text {
    Text::new(en, zh)
}

fn distribution<S: Ranked + ?Sized>(
    key: &str,
    name: Text,
    sorted_ms: &S,
    p: f64,
    method: PercentileMethod,
    what: &Text,
) -> Figure {
    let mut f = Figure::new(key, name, Unit::Seconds);
    f.n = Some(sorted_ms.len());
    f.method = Some(describe(p, sorted_ms.len(), method));
    f.method_text = Some(crate::percentile::describe_text(p, sorted_ms.len(), method));
    match percentile_of(sorted_ms, p, method) {
        Some(v) => f.value = Some(v / 1000.0),
        None => {
            f = f.undefined(Text::new(
                format!("no samples: there is no {} to rank", what.en),
                format!("没有样本：没有可排序的{}", what.zh),
            ))
        }
    }
    let n = sorted_ms.len();
    if n > 0 && p > 50.0 && method == PercentileMethod::NearestRank && nearest_rank(p, n) == n {
        f.note = Some(Text::new(
            format!(
                "With only n = {n} samples, nearest-rank {} is simply the maximum; it needs at least {} samples before it stops being the single slowest request.",
                percentile_label(p),
                min_samples_for_tail(p)
            ),
            format!(
                "只有 n = {n} 个样本时，最近秩 {} 就是最大值；至少需要 {} 个样本，它才不再等于最慢的那一个请求。",
                percentile_label(p),
                min_samples_for_tail(p)
            ),
        ));
    }
    f
}

/// The smallest n for which nearest-rank Pp is not the maximum.
/// `nearest_rank(p, n) < n` only grows with n (one more sample moves the rank by at most one),
/// so a binary search finds it in ~20 steps; at p = 100 the rank is always n, and the answer is
/// the cap, 1,000,000 (it once counted there one by one, per tail figure).
pub fn min_samples_for_tail(p: f64) -> usize {
    const CAP: usize = 1_000_000;
    let below_max = |n: usize| nearest_rank(p, n) < n;
    if !below_max(CAP) {
        return CAP;
    }
    let (mut lo, mut hi) = (1, CAP); // below_max(hi) holds; the answer is in lo..=hi
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below_max(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

impl Metrics {
    /// Every figure of `attempts` under `settings`: the index built for the settings'
    /// population, then [`Metrics::compute`]. Keep an [`Index`] instead when the settings change
    /// often (the lab re-indexes only when the population does).
    pub fn of(attempts: &[crate::trace::Attempt], settings: &Settings) -> Metrics {
        Metrics::compute(&Index::build(attempts, settings.population), settings)
    }

    /// Computes every figure from an index. O(log n) in the number of attempts. Each figure has
    /// a function of its own below; what several share (the denominators' words, the qualified
    /// count and its condition, the TTFT sample's name) is worked out once here.
    pub fn compute(ix: &Index, s: &Settings) -> Metrics {
        let all = Denominator::of(ix);
        let qualified = ix.qualified(threshold_ms(s), s.comparison);
        let qualified_label = qualified_label(s);
        let [ttft_p50, ttft_p95, ttft_tail] = ttft_figures(ix, s);
        let [e2e_p50, e2e_tail] = e2e_figures(ix, s);
        let [itl_p50, itl_tail] = itl_figures(ix, s);
        Metrics {
            attempts: ix.attempts,
            successes: ix.successes,
            successes_without_token: ix.successes_without_token,
            failures: ix.failures,
            failures_by_outcome: ix
                .failures_by_outcome
                .iter()
                .map(|(o, n)| (o.to_string(), *n))
                .collect(),
            warmup_excluded: ix.warmup_excluded,
            failed_rows_deleted: ix.failed_deleted,
            qualified,
            quality_unevaluated: ix.quality_not_evaluated,
            failure_rate: failure_rate(ix, &all),
            ttft_p50,
            ttft_p95,
            ttft_tail,
            quality_pass_rate: quality_pass_rate(ix),
            joint_rate: joint_rate(ix, qualified, &qualified_label, &all),
            goodput: goodput(s, qualified, &qualified_label),
            cost_per_1000_qualified: cost_per_1000_qualified(s, qualified, &qualified_label),
            e2e_p50,
            e2e_tail,
            itl_p50,
            itl_tail,
            output_tokens_per_s: output_tokens_per_s(ix, s, &all),
            business_success_rate: business_success_rate(ix),
            late_starts: ix.late_starts,
            origin_fallbacks: ix.origin_fallbacks(),
        }
    }

    /// The figures of the metric card, in reading order.
    pub fn card_figures(&self) -> [&Figure; 7] {
        [
            &self.ttft_p50,
            &self.ttft_tail,
            &self.failure_rate,
            &self.quality_pass_rate,
            &self.joint_rate,
            &self.goodput,
            &self.cost_per_1000_qualified,
        ]
    }

    /// The key a figure has in [`Metrics::summary_json`] (`ttft_tail` at p = 95 →
    /// `ttft_p95_s`, `goodput` → `goodput_per_s`): `report --json` keys its intervals the same
    /// way, one key per figure.
    pub fn summary_key(key: &str, s: &Settings) -> String {
        let tail = |prefix: &str| format!("{prefix}_p{}_s", trim_num(s.p).replace('.', "_"));
        match key {
            "ttft_tail" => tail("ttft"),
            "e2e_tail" => tail("e2e"),
            "itl_tail" => tail("itl"),
            "ttft_p50" | "ttft_p95" | "e2e_p50" | "itl_p50" => format!("{key}_s"),
            "goodput" => "goodput_per_s".into(),
            other => other.into(),
        }
    }

    /// The flat summary `tracelab report --json` prints (undefined figures are `null`).
    pub fn summary_json(&self, s: &Settings) -> Value {
        let seconds_key = |prefix: &str| format!("{prefix}_p{}_s", trim_num(s.p).replace('.', "_"));
        let mut v = json!({
            "attempts": self.attempts,
            "successes": self.successes,
            "successes_without_token": self.successes_without_token,
            "failures": self.failures,
            "failure_rate": self.failure_rate.value,
            "ttft_samples": self.ttft_p50.n,
            "ttft_p50_s": self.ttft_p50.value,
            "ttft_p95_s": self.ttft_p95.value,
            "quality_pass_rate": self.quality_pass_rate.value,
            "qualified": self.qualified,
            "joint_rate": self.joint_rate.value,
            "goodput_per_s": self.goodput.value,
            "cost_per_1000_qualified": self.cost_per_1000_qualified.value,
            "currency": s.currency,
            "e2e_p50_s": self.e2e_p50.value,
            "itl_p50_s": self.itl_p50.value,
            "itl_samples": self.itl_p50.n,
            "output_tokens_per_s": self.output_tokens_per_s.value,
            "business_success_rate": self.business_success_rate.value,
            "warmup_excluded": self.warmup_excluded,
            "failures_by_outcome": self.failures_by_outcome.iter().map(|(o, n)| json!({"outcome": o, "count": n})).collect::<Vec<_>>(),
            "settings": {
                "ttft_threshold_s": s.ttft_threshold_s,
                "comparison": s.comparison.code(),
                "window_s": s.window_s,
                "window_cost": s.window_cost,
                "percentile": s.percentile.code(),
                "p": s.p,
                "failure_denominator": s.population.failure_denominator.code(),
                "missing_ttft": s.population.missing_ttft.code(),
                "warmup": s.population.warmup.code(),
                "quality": s.population.quality.code(),
                "first_token": s.population.first_token.code(),
                "latency_from": s.population.latency_from.code(),
                "currency": s.currency,
            },
            "latency_from_fallbacks": self.origin_fallbacks,
        });
        let obj = v.as_object_mut().expect("object");
        obj.insert(seconds_key("ttft"), json!(self.ttft_tail.value));
        obj.insert(seconds_key("e2e"), json!(self.e2e_tail.value));
        obj.insert(seconds_key("itl"), json!(self.itl_tail.value));
        v
    }
}

impl Metrics {
    /// No complete success carries a quality verdict: quality was not evaluated, so no request
    /// can be judged jointly qualified.
    pub fn quality_not_evaluated(&self) -> bool {
        self.successes > 0 && self.quality_unevaluated == self.successes
    }

    /// The figures whose value differs from `before`, in card order (qualified count first).
    /// The keys of the figures (every card's, `qualified_count` for the count) whose value
    /// differs from `other`'s: what a choice or an edit moved, to mark it on those cards only.
    pub fn moved_from(&self, other: &Metrics) -> Vec<String> {
        let mut out = Vec::new();
        if self.qualified != other.qualified {
            out.push("qualified_count".to_string());
        }
        let pairs = [
            (&self.ttft_p50, &other.ttft_p50),
            (&self.ttft_p95, &other.ttft_p95),
            (&self.ttft_tail, &other.ttft_tail),
            (&self.failure_rate, &other.failure_rate),
            (&self.quality_pass_rate, &other.quality_pass_rate),
            (&self.joint_rate, &other.joint_rate),
            (&self.goodput, &other.goodput),
            (
                &self.cost_per_1000_qualified,
                &other.cost_per_1000_qualified,
            ),
            (&self.e2e_p50, &other.e2e_p50),
            (&self.e2e_tail, &other.e2e_tail),
            (&self.itl_p50, &other.itl_p50),
            (&self.itl_tail, &other.itl_tail),
            (&self.output_tokens_per_s, &other.output_tokens_per_s),
            (&self.business_success_rate, &other.business_success_rate),
        ];
        // A figure moved when its value or its n did (a denominator can change under the same
        // value: 0 failures of 8 or of 10).
        out.extend(
            pairs
                .into_iter()
                .filter(|(a, b)| a.value != b.value || a.n != b.n)
                .map(|(a, _)| a.key.clone()),
        );
        out
    }

    pub fn changes_since(&self, before: &Metrics) -> Vec<Change> {
        let mut out = Vec::new();
        if self.qualified != before.qualified {
            out.push(Change {
                key: "qualified".into(),
                name: t("qualified", "合格数"),
                from: Some(before.qualified as f64),
                to: Some(self.qualified as f64),
                unit: Unit::Count,
            });
        }
        if self.attempts != before.attempts {
            out.push(Change {
                key: "attempts".into(),
                name: t("attempts counted", "计入的尝试"),
                from: Some(before.attempts as f64),
                to: Some(self.attempts as f64),
                unit: Unit::Count,
            });
        }
        let pairs = [
            (&self.ttft_p50, &before.ttft_p50),
            (&self.ttft_p95, &before.ttft_p95),
            (&self.ttft_tail, &before.ttft_tail),
            (&self.failure_rate, &before.failure_rate),
            (&self.quality_pass_rate, &before.quality_pass_rate),
            (&self.joint_rate, &before.joint_rate),
            (&self.goodput, &before.goodput),
            (
                &self.cost_per_1000_qualified,
                &before.cost_per_1000_qualified,
            ),
        ];
        for (now, then) in pairs {
            if now.key == "ttft_tail"
                && (now.name == self.ttft_p95.name || then.name == before.ttft_p95.name)
            {
                continue; // the tail is P95: already listed
            }
            if now.value != then.value {
                out.push(Change {
                    key: now.key.clone(),
                    name: now.name.clone(),
                    from: then.value,
                    to: now.value,
                    unit: now.unit.clone(),
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::MissingTtft;
    use crate::trace::test_data::ten;
    use crate::trace::{Attempt, LatencyOrigin, Outcome, Quality};
    use crate::verdict::{verdict, Latency};

    /// An open loop at one request a second, threshold 1 s: A kept its schedule (TTFT 400 ms),
    /// B was sent 700 ms late (TTFT 400 ms from its actual start, 1,100 ms from its intended
    /// one), C came early by 10 ms (never measured from before it was sent), and D has no
    /// intended start (a closed-loop attempt: it falls back to its actual start).
    fn late_open_loop() -> Vec<Attempt> {
        [
            ("A", Some(0.0), 0.0, 400.0, 900.0),
            ("B", Some(1000.0), 1700.0, 400.0, 900.0),
            ("C", Some(3000.0), 2990.0, 300.0, 800.0),
            ("D", None, 4000.0, 600.0, 1000.0),
        ]
        .into_iter()
        .map(|(id, intended, start, ttft, e2e)| {
            let mut a = Attempt::new(id, Outcome::Success, Some(ttft), Quality::Pass);
            a.intended_start_ms = intended;
            a.start_ms = Some(start);
            a.e2e_ms = Some(e2e);
            a
        })
        .collect()
    }

    #[test]
    fn latency_from_the_intended_start_counts_the_clients_lag() {
        let attempts = late_open_loop();
        let actual = Settings::default();
        let mut intended = Settings::default();
        assert!(intended.apply_pairs([("lf", "intended")]).is_empty());
        assert_eq!(intended.population.latency_from, LatencyOrigin::Intended);
        assert!(intended
            .to_pairs()
            .contains(&("lf", "intended".to_string())));

        // B's TTFT: 400 ms from its actual start, 1,100 ms from its intended one; it qualifies
        // under the first and not the second (threshold 1 s).
        let b = &attempts[1];
        let (from_actual, from_intended) = (verdict(b, &actual), verdict(b, &intended));
        assert_eq!(from_actual.ttft_s, Some(0.4));
        assert_eq!(from_intended.ttft_s, Some(1.1));
        assert!(from_intended.ttft_s > from_actual.ttft_s);
        assert!(from_actual.qualified);
        assert_eq!(
            (from_intended.qualified, from_intended.latency),
            (false, Latency::Over)
        );
        // Early is never earlier than the send; no schedule falls back to the actual start.
        assert_eq!(verdict(&attempts[2], &intended).ttft_s, Some(0.3));
        assert_eq!(verdict(&attempts[3], &intended).ttft_s, Some(0.6));

        let (a, i) = (
            Metrics::of(&attempts, &actual),
            Metrics::of(&attempts, &intended),
        );
        assert_eq!((a.qualified, i.qualified), (4, 3));
        // Nearest-rank P95 of 4 is the maximum: 600 ms from the actual start, 1,100 ms from
        // the intended one; E2E's maximum, B's 900 ms + 700 ms of lag.
        assert_eq!((a.ttft_p95.value, i.ttft_p95.value), (Some(0.6), Some(1.1)));
        assert_eq!((a.e2e_tail.value, i.e2e_tail.value), (Some(1.0), Some(1.6)));
        // A threshold of 1.1 s lets B in again: the qualification turns at the threshold.
        let mut at = intended.clone();
        at.ttft_threshold_s = 1.1;
        assert_eq!(Metrics::of(&attempts, &at).qualified, 4);
        at.comparison = crate::Comparison::Lt;
        assert_eq!(Metrics::of(&attempts, &at).qualified, 3);

        // Each figure names its origin, and the one attempt without a schedule is counted.
        assert_eq!(
            a.ttft_p95.name,
            Text::new(
                "P95 TTFT (successes, from the actual start)",
                "成功请求 TTFT P95（从实际开始时间算起）"
            )
        );
        assert_eq!(
            i.ttft_p95.name,
            Text::new(
                "P95 TTFT (successes, from the intended start)",
                "成功请求 TTFT P95（从计划开始时间算起）"
            )
        );
        assert_eq!(
            i.e2e_p50.name.en,
            "P50 E2E (successes, from the intended start)"
        );
        assert_eq!(
            i.ttft_p95.short_name.as_ref().unwrap().en,
            "P95 TTFT from the intended start"
        );
        assert!(i
            .joint_rate
            .numerator_label
            .as_ref()
            .unwrap()
            .en
            .contains("TTFT from the intended start ≤ 1 s"));
        assert_eq!(
            (a.origin_fallbacks, i.origin_fallbacks, i.late_starts),
            (0, 1, 1)
        );
        let note = i.ttft_p95.note.as_ref().unwrap();
        // P95 of 4 is the maximum, said first; the fallback is joined after it.
        assert!(
            note.en.contains("single slowest request; 1 of 4"),
            "{note:?}"
        );
        assert!(
            note.en.contains("1 of 4 attempts had no intended start"),
            "{note:?}"
        );
        assert!(
            note.zh.contains("4 个尝试中有 1 个没有计划开始时间"),
            "{note:?}"
        );
        assert!(
            a.ttft_p95.note.is_none() || !a.ttft_p95.note.as_ref().unwrap().en.contains("intended")
        );
        let json = i.summary_json(&intended);
        assert_eq!(json["settings"]["latency_from"], "intended");
        assert_eq!(json["latency_from_fallbacks"], 1);

        // A closed loop (no schedule at all) gives the same figures under both, and its names
        // do not mention an origin that cannot matter.
        let closed: Vec<Attempt> = attempts
            .iter()
            .cloned()
            .map(|mut a| {
                a.intended_start_ms = None;
                a
            })
            .collect();
        let (ca, ci) = (
            Metrics::of(&closed, &actual),
            Metrics::of(&closed, &intended),
        );
        assert_eq!(ca.ttft_p95.value, ci.ttft_p95.value);
        assert_eq!(ca.ttft_p95.name.en, "P95 TTFT (successes)");
        assert_eq!(ci.origin_fallbacks, 4);
    }

    #[test]
    fn the_ttft_names_say_which_attempts_the_sample_holds() {
        let a = ten();
        let right = Metrics::of(&a, &Settings::default());
        assert_eq!(
            right.ttft_p95.name,
            Text::new("P95 TTFT (successes)", "成功请求 TTFT P95")
        );
        assert_eq!(right.ttft_p95.n, Some(8));
        assert_eq!(
            right.ttft_p95.short_name,
            Some(Text::new("P95 TTFT", "P95 TTFT"))
        );

        // Missing counted as 0: n is every attempt, failures included, and every name says so.
        let mut zero = Settings::default();
        zero.population.missing_ttft = MissingTtft::TreatAsZero;
        let m = Metrics::of(&a, &zero);
        assert_eq!(m.ttft_p50.n, Some(10));
        for (f, label) in [
            (&m.ttft_p50, "P50"),
            (&m.ttft_p95, "P95"),
            (&m.ttft_tail, "P95"),
        ] {
            assert_eq!(
                f.name.en,
                format!("{label} TTFT (all attempts, missing counted as 0 s)"),
                "{}",
                f.key
            );
            assert_eq!(
                f.name.zh,
                format!("全部尝试 TTFT {label}（缺失按 0 秒计）"),
                "{}",
                f.key
            );
            assert!(
                !f.name.en.contains("successes") && !f.name.zh.contains("成功"),
                "{:?}",
                f.name
            );
        }
        assert_eq!(
            m.ttft_p95.short_name,
            Some(Text::new(
                "P95 TTFT (all attempts, missing as 0 s)",
                "P95 TTFT（全部尝试，缺失按 0 秒）"
            ))
        );
        // What moved is named as the sample now is.
        let moved = m.changes_since(&right);
        assert!(
            moved
                .iter()
                .any(|c| c.name.en == "P50 TTFT (all attempts, missing counted as 0 s)"),
            "{moved:?}"
        );

        // With failed rows deleted too, only successes are left: the ones without a token at 0 s.
        let mut deleted = zero.clone();
        deleted.population.failure_denominator = FailureDenominator::FailedRowsDeleted;
        let d = Metrics::of(&a, &deleted);
        assert_eq!(d.ttft_p95.n, Some(8));
        assert_eq!(
            d.ttft_p95.name,
            Text::new(
                "P95 TTFT (successes, missing counted as 0 s)",
                "成功请求 TTFT P95（缺失按 0 秒计）"
            )
        );

        // With the other choice of first token, both are said.
        zero.population.first_token = crate::FirstToken::AnyOutput;
        let r = Metrics::of(&a, &zero);
        assert_eq!(
            r.ttft_p95.name,
            Text::new(
                "P95 TTFT (all attempts, missing counted as 0 s, reasoning included)",
                "全部尝试 TTFT P95（缺失按 0 秒计；含推理）"
            )
        );
    }

    #[test]
    fn failures_over_successes_says_why_it_has_no_interval() {
        let a = ten();
        assert_eq!(
            Metrics::of(&a, &Settings::default()).failure_rate.note,
            None
        );
        let mut s = Settings::default();
        s.population.failure_denominator = FailureDenominator::Successes;
        let f = Metrics::of(&a, &s).failure_rate;
        assert_eq!(f.value, Some(0.25));
        let note = f.note.expect("the reason there is no interval");
        assert!(
            note.en.contains("No 95 % interval")
                && note.en.contains("not a proportion")
                && note.en.contains("Wilson"),
            "{}",
            note.en
        );
        assert!(
            note.zh.contains("不给 95 % 区间")
                && note.zh.contains("不是比例")
                && note.zh.contains("Wilson"),
            "{}",
            note.zh
        );
    }
}
