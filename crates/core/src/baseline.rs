//! The five checks before a run counts as a baseline (the course's Day-04 contract), as one
//! verdict: (1) every attempt under one written contract, and a rerun under the base's; (2) the
//! warm-up apart from the samples; (3) the P50–P95 gap with both intervals; (4) slow requests set
//! against GPU and engine signals on the same clock; (5) reruns in a similar range. Each check
//! carries its evidence; "not yet" always says what would settle it.

use serde::Serialize;

use crate::compare::{Agreement, ContractCheck, ContractStatus, Intervals, Spread};
use crate::engine_beside::EngineSummary;
use crate::format::percentile_label;
use crate::gpu_beside::GpuSummary;
use crate::metrics::Metrics;
use crate::settings::{Settings, WarmupPolicy};
use crate::text::{Lang, Text};
use crate::trace::Header;

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Pass,
    /// The evidence says no.
    Fail,
    /// More data would settle it (more samples, a rerun, a warm-up).
    NotYet,
    /// The trace does not hold what the check needs.
    Unverified,
}

impl CheckStatus {
    fn mark(self) -> &'static str {
        match self {
            CheckStatus::Pass => "✓",
            CheckStatus::Fail => "✗",
            CheckStatus::NotYet => "…",
            CheckStatus::Unverified => "?",
        }
    }

    fn word(self) -> Text {
        match self {
            CheckStatus::Pass => Text::new("yes", "是"),
            CheckStatus::Fail => Text::new("no", "否"),
            CheckStatus::NotYet => Text::new("not yet", "尚未"),
            CheckStatus::Unverified => Text::new("unverified", "未验证"),
        }
    }
}

/// One of the five checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaselineCheck {
    /// `contract`, `warmup`, `tail_gap`, `signals`, `reruns`.
    pub key: &'static str,
    pub name: Text,
    pub status: CheckStatus,
    pub evidence: Text,
}

/// The five checks and whether the run counts as a baseline (only when all five pass).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaselineVerdict {
    pub counts: bool,
    pub checks: Vec<BaselineCheck>,
}

/// What the checks read about one run.
pub struct RunEvidence<'a> {
    pub header: &'a Header,
    /// Warm-up attempts in the trace.
    pub warmup_attempts: usize,
    pub settings: &'a Settings,
    pub metrics: &'a Metrics,
    pub intervals: &'a Intervals,
    pub gpu: &'a GpuSummary,
    pub engine: &'a EngineSummary,
}

/// What the checks read about other runs of the contract: the contract against the base (for a
/// rerun) and the spread of P50 and the tail over every run (this one included).
#[derive(Default)]
pub struct OtherRuns<'a> {
    pub against_base: Option<&'a ContractCheck>,
    pub spreads: Option<(&'a Spread, &'a Spread)>,
    pub runs: usize,
}

/// The conditions a run's contract writes down (the course's list): without them the contract
/// cannot be checked.
const CONTRACT_CONDITIONS: [&str; 9] = [
    "model",
    "runtime",
    "max_tokens",
    "prompt_set_sha256",
    "arrival",
    "timeout_s",
    "warmup",
    "prefix_reuse",
    "window",
];

fn missing_conditions(h: &Header) -> Vec<&'static str> {
    let c = &h.conditions;
    let present = [
        c.model.is_some(),
        c.runtime
            .as_ref()
            .is_some_and(|r| r.engine.is_some() || r.engine_version.is_some()),
        c.max_tokens.is_some(),
        c.prompt_set_sha256.is_some(),
        c.arrival.is_some(),
        c.timeout_s.is_some(),
        c.warmup.is_some(),
        c.prefix_reuse.is_some(),
        h.window.is_some(),
    ];
    CONTRACT_CONDITIONS
        .iter()
        .zip(present)
        .filter(|(_, p)| !p)
        .map(|(n, _)| *n)
        .collect()
}

fn s(v: f64) -> String {
    crate::format::number_in_unit(v, &crate::figure::Unit::Seconds, Lang::En)
}

/// The five checks on one run.
pub fn baseline_checks(run: &RunEvidence, others: &OtherRuns) -> BaselineVerdict {
    let checks = vec![
        contract(run, others),
        warmup(run),
        tail_gap(run),
        signals(run),
        reruns(others),
    ];
    BaselineVerdict {
        counts: checks.iter().all(|c| c.status == CheckStatus::Pass),
        checks,
    }
}

fn check(key: &'static str, name: Text, status: CheckStatus, evidence: Text) -> BaselineCheck {
    BaselineCheck {
        key,
        name,
        status,
        evidence,
    }
}

fn contract(run: &RunEvidence, others: &OtherRuns) -> BaselineCheck {
    let name = Text::new("One contract", "同一份契约");
    let missing = missing_conditions(run.header);
    if let Some(c) = others.against_base {
        let (status, evidence) = match c.status {
            ContractStatus::Broken => {
                let fields: Vec<&str> = c.differences.iter().filter(|d| d.strictness == crate::compare::Strictness::Must).map(|d| d.field.as_str()).collect();
                (CheckStatus::Fail, Text::new(
                    format!("this rerun differs from the base in {}: not the same contract", fields.join(", ")),
                    format!("这次重跑与基线在 {} 上不同：不是同一份契约", fields.join("、")),
                ))
            }
            ContractStatus::Unverified => (CheckStatus::Unverified, Text::new(
                "some conditions are recorded in one run only or in neither, so the rerun's contract cannot be checked against the base's",
                "有些条件只有一份记录写明或都没写，无法核对重跑与基线是否是同一份契约",
            )),
            ContractStatus::Holds if !c.varied.is_empty() => (CheckStatus::Pass, Text::new(
                format!("the base's contract, {} changed on purpose", c.varied.join(", ")),
                format!("与基线同一份契约，{} 是有意改变的", c.varied.join("、")),
            )),
            ContractStatus::Holds => (CheckStatus::Pass, Text::new("the base's contract: every must-match condition is equal", "与基线同一份契约：所有必须一致的条件都相同")),
        };
        // Equal to the base in what both record is not yet the whole contract written down.
        if status == CheckStatus::Pass && !missing.is_empty() {
            return check("contract", name, CheckStatus::Unverified, Text::new(
                format!("{}; but the header does not record {}: the contract is not written down whole", evidence.en, missing.join(", ")),
                format!("{}；但记录头没有写明 {}：契约没有完整写下", evidence.zh, missing.join("、")),
            ));
        }
        return check("contract", name, status, evidence);
    }
    if missing.is_empty() {
        check("contract", name, CheckStatus::Pass, Text::new(
            "the header writes down the whole contract (model, runtime, lengths, prompts, prefix reuse, arrival, timeouts, warm-up, window) and every attempt was sent under it",
            "记录头写明了整份契约（模型、运行时、长度、提示、前缀复用、到达方式、超时、预热、窗口），每个尝试都在它之下发出",
        ))
    } else {
        check(
            "contract",
            name,
            CheckStatus::Unverified,
            Text::new(
                format!(
                    "the header does not record {}: the contract is not written down whole",
                    missing.join(", ")
                ),
                format!("记录头没有写明 {}：契约没有完整写下", missing.join("、")),
            ),
        )
    }
}

fn warmup(run: &RunEvidence) -> BaselineCheck {
    let name = Text::new("Warm-up apart", "预热分开");
    let (status, evidence) = if run.settings.population.warmup == WarmupPolicy::Include {
        (
            CheckStatus::Fail,
            Text::new(
                "warm-up attempts are mixed into the samples (the warm-up setting)",
                "预热请求被混进了样本（预热设置）",
            ),
        )
    } else if run.warmup_attempts > 0 {
        (
            CheckStatus::Pass,
            Text::new(
                format!(
                    "{} warm-up attempts are kept apart from the samples",
                    run.warmup_attempts
                ),
                format!("{} 个预热尝试与样本分开", run.warmup_attempts),
            ),
        )
    } else if run.header.conditions.warmup == Some(0) {
        (CheckStatus::NotYet, Text::new(
            "no warm-up was sent: the first measured requests paid the cold start (rerun with --warmup 1 or more)",
            "没有发送预热：最先测量的请求承担了冷启动（用 --warmup 1 或更多重跑）",
        ))
    } else {
        (
            CheckStatus::Unverified,
            Text::new(
                "the trace does not say whether a warm-up was sent",
                "这份记录没有说明是否发送过预热",
            ),
        )
    };
    check("warmup", name, status, evidence)
}

fn tail_gap(run: &RunEvidence) -> BaselineCheck {
    let name = Text::new("P50–P95 gap, with intervals", "P50–P95 差距（带区间）");
    let m = run.metrics;
    let label = percentile_label(95.0);
    let (p50, p95) = (m.ttft_p50.value, m.ttft_p95.value);
    let iv50 = run.intervals.get(&m.ttft_p50.key);
    let iv95 = run.intervals.get(&m.ttft_p95.key);
    let (Some(p50), Some(p95)) = (p50, p95) else {
        return check(
            "tail_gap",
            name,
            CheckStatus::NotYet,
            Text::new(
                "no TTFT sample: there is no P50 or P95 yet",
                "没有 TTFT 样本：还没有 P50 或 P95",
            ),
        );
    };
    let bounds = |iv: Option<&crate::compare::FigureInterval>, lang: Lang| match iv {
        Some(i) => crate::compare::bounds_text(&i.bounds, &crate::figure::Unit::Seconds, lang),
        None => {
            if lang == Lang::Zh {
                "无区间".into()
            } else {
                "no interval".into()
            }
        }
    };
    let said = |lang: Lang| {
        if lang == Lang::Zh {
            format!(
                "P50 {}（95 % 区间 {}），{label} {}（{}）：差距 {}",
                s(p50),
                bounds(iv50, lang),
                s(p95),
                bounds(iv95, lang),
                s(p95 - p50)
            )
        } else {
            format!(
                "P50 {} (95 % interval {}), {label} {} ({}): a gap of {}",
                s(p50),
                bounds(iv50, lang),
                s(p95),
                bounds(iv95, lang),
                s(p95 - p50)
            )
        }
    };
    let closed =
        iv50.is_some_and(|i| i.bounds.is_closed()) && iv95.is_some_and(|i| i.bounds.is_closed());
    let n = m.ttft_p95.n.unwrap_or(0);
    let need = crate::compare::stats::min_n_for_quantile(0.95);
    // The samples a percentile's interval stands on: fewer than n where the attempts are
    // correlated in start order.
    let correlated = [iv50, iv95]
        .into_iter()
        .flatten()
        .filter_map(|i| i.dependence.as_ref())
        .filter(|d| d.widens())
        .min_by(|a, b| a.effective_n.total_cmp(&b.effective_n));
    let (status, en_tail, zh_tail) = if closed {
        (CheckStatus::Pass, String::new(), String::new())
    } else if let Some(d) = correlated {
        let eff = crate::format::integer(d.effective_n.round().max(1.0) as u64);
        (
            CheckStatus::NotYet,
            format!("; the {n} samples are correlated in start order and worth about {eff} independent ones, too few to close the {label}'s interval (needs {need}): run longer, or rerun"),
            format!("；这 {n} 个样本按开始时间相关，约等于 {eff} 个独立样本，不足以让 {label} 的区间闭合（需要 {need} 个）：请跑得更久，或重跑"),
        )
    } else {
        (
            CheckStatus::NotYet,
            format!("; with n = {n} the {label} has no closed interval (needs n ≥ {need}): collect more samples before stating the tail"),
            format!("；n = {n} 时 {label} 没有闭合区间（需要 n ≥ {need}）：先收集更多样本再谈尾部"),
        )
    };
    check(
        "tail_gap",
        name,
        status,
        Text::new(
            format!("{}{en_tail}", said(Lang::En)),
            format!("{}{zh_tail}", said(Lang::Zh)),
        ),
    )
}

fn signals(run: &RunEvidence) -> BaselineCheck {
    let name = Text::new(
        "Slow requests against system signals",
        "慢请求与系统信号对照",
    );
    let gpu = !matches!(run.gpu, GpuSummary::Unverified);
    let engine = !matches!(run.engine, EngineSummary::Unverified);
    let (status, evidence) = match (gpu, engine) {
        (false, false) => (CheckStatus::Unverified, Text::new(
            "no GPU telemetry and no engine metrics on the run's clock (record with --gpu and --server-metrics)",
            "运行时钟上没有 GPU 遥测，也没有引擎指标（录制时加 --gpu 和 --server-metrics）",
        )),
        _ => {
            let mut en = Vec::new();
            let mut zh = Vec::new();
            if gpu {
                en.push(run.gpu.card_line(run.settings, Lang::En));
                zh.push(run.gpu.card_line(run.settings, Lang::Zh));
            }
            if engine {
                if let Some(l) = run.engine.card_lines(run.settings, None, Lang::En).into_iter().next() {
                    en.push(l);
                }
                if let Some(l) = run.engine.card_lines(run.settings, None, Lang::Zh).into_iter().next() {
                    zh.push(l);
                }
            }
            // Recorded engine signals that do not tell slow from fast (steady queueing: both
            // groups waited behind the same queue) explain nothing; the GPU's line is read as
            // before.
            let status = if gpu || run.engine.separates() == Some(true) {
                CheckStatus::Pass
            } else {
                CheckStatus::Fail
            };
            (status, Text::new(en.join("; "), zh.join("；")))
        }
    };
    check("signals", name, status, evidence)
}

fn reruns(others: &OtherRuns) -> BaselineCheck {
    let name = Text::new("Reruns in a similar range", "重跑结果范围相近");
    let Some((p50, tail)) = others.spreads else {
        return check("reruns", name, CheckStatus::NotYet, Text::new(
            "not yet checked: one run; rerun under the same contract and compare them (tracelab compare BASE RERUN)",
            "尚未检查：只有一次运行；在同一份契约下重跑，再比较（tracelab compare 基线 重跑）",
        ));
    };
    let runs = others.runs;
    let (status, en, zh) = match (p50.agree, tail.agree) {
        (Agreement::Agree, Agreement::Agree) => (
            CheckStatus::Pass,
            format!("{runs} runs: the 95 % intervals of P50 and of {} overlap", tail.label),
            format!("{runs} 次运行：P50 与 {} 的 95 % 区间都有重叠", tail.label),
        ),
        (Agreement::Disagree, _) | (_, Agreement::Disagree) => (
            CheckStatus::Fail,
            format!("{runs} runs: the intervals of {} do not overlap: the runs disagree beyond noise", if p50.agree == Agreement::Disagree { "P50" } else { tail.label.as_str() }),
            format!("{runs} 次运行：{} 的区间没有重叠：各次运行的差异超出噪声", if p50.agree == Agreement::Disagree { "P50" } else { tail.label.as_str() }),
        ),
        _ => (
            CheckStatus::NotYet,
            format!("{runs} runs: an interval has no bound (n ≥ {} per run closes the {}): collect more samples", tail.needed, tail.label),
            format!("{runs} 次运行：有区间缺少上下界（每次运行 n ≥ {} 才能闭合 {}）：请收集更多样本", tail.needed, tail.label),
        ),
    };
    // Reruns are independent runs: the mean between them, with its interval, says how much a
    // figure moves from run to run whatever the correlation inside each.
    let between = |sp: &crate::compare::Spread, lang: Lang| {
        sp.between.map(|(mean, b)| {
            let v = |x: Option<f64>| x.map_or("—".to_string(), s);
            if lang == Lang::Zh {
                format!("；各次运行之间 {} 的均值 {}（运行之间的 95 % 区间 {} … {}，Student t）", sp.label, s(mean), v(b.lo), v(b.hi))
            } else {
                format!("; between the runs, {} averages {} (95 % interval between runs {} … {}, Student's t)", sp.label, s(mean), v(b.lo), v(b.hi))
            }
        })
    };
    let en = format!(
        "{en}{}{}",
        between(p50, Lang::En).unwrap_or_default(),
        between(tail, Lang::En).unwrap_or_default()
    );
    let zh = format!(
        "{zh}{}{}",
        between(p50, Lang::Zh).unwrap_or_default(),
        between(tail, Lang::Zh).unwrap_or_default()
    );
    check("reruns", name, status, Text::new(en, zh))
}

impl BaselineVerdict {
    /// The headline: "This run counts as a baseline: yes" or "not yet, because …".
    pub fn headline(&self) -> Text {
        if self.counts {
            return Text::new(
                "This run counts as a baseline: yes — all five checks pass.",
                "这次运行可以作为基线：是——五项检查全部通过。",
            );
        }
        let (mut en, mut zh) = (Vec::new(), Vec::new());
        for (i, c) in self
            .checks
            .iter()
            .enumerate()
            .filter(|(_, c)| c.status != CheckStatus::Pass)
        {
            en.push(format!("({}) {}: {}", i + 1, c.name.en, c.status.word().en));
            zh.push(format!(
                "（{}）{}：{}",
                i + 1,
                c.name.zh,
                c.status.word().zh
            ));
        }
        Text::new(
            format!(
                "This run counts as a baseline: not yet, because {}.",
                en.join("; ")
            ),
            format!("这次运行可以作为基线：尚未，因为{}。", zh.join("；")),
        )
    }

    /// The headline, then one line per check with its evidence.
    pub fn lines(&self, lang: Lang) -> Vec<String> {
        let mut out = vec![self.headline().get(lang).to_string()];
        for (i, c) in self.checks.iter().enumerate() {
            out.push(match lang {
                Lang::En => format!(
                    "  {} {} {}: {} — {}",
                    c.status.mark(),
                    i + 1,
                    c.name.en,
                    c.status.word().en,
                    c.evidence.en
                ),
                Lang::Zh => format!(
                    "  {} {} {}：{}——{}",
                    c.status.mark(),
                    i + 1,
                    c.name.zh,
                    c.status.word().zh,
                    c.evidence.zh
                ),
            });
        }
        out
    }
}

/// One run's five checks inside a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunBaseline {
    pub run: String,
    pub verdict: BaselineVerdict,
}

/// The five checks for every run of a comparison, in order: the base with the others as its
/// reruns, each later run against the base's contract. Runs compared to change a condition
/// (`report.varied`) or across a broken contract are not reruns: their spread is not checked.
pub fn of_comparison(
    runs: &[crate::compare::Run],
    report: &crate::compare::Report,
) -> Vec<RunBaseline> {
    let indexes: Vec<&crate::index::Index> = runs.iter().map(|r| &r.index).collect();
    let (p, method) = runs
        .first()
        .map(|r| (r.settings.p, r.settings.percentile))
        .unwrap_or((95.0, Default::default()));
    let reruns = report.varied.is_empty() && !report.contract_broken();
    let spread = if reruns {
        crate::compare::spreads(&indexes, p, method)
    } else {
        None
    };
    runs.iter()
        .enumerate()
        .map(|(i, r)| {
            let gpu = crate::gpu_beside::gpu_beside(&r.trace, &r.settings).summary();
            let engine = crate::engine_beside::engine_beside(&r.trace, &r.settings);
            let evidence = RunEvidence {
                header: &r.trace.header,
                warmup_attempts: r.trace.warmup_count(),
                settings: &r.settings,
                metrics: &r.metrics,
                intervals: &r.intervals,
                gpu: &gpu,
                engine: &engine,
            };
            let others = OtherRuns {
                against_base: i
                    .checked_sub(1)
                    .and_then(|k| report.pairs.get(k))
                    .map(|p| &p.contract),
                spreads: spread.as_ref().map(|(a, b)| (a, b)),
                runs: runs.len(),
            };
            RunBaseline {
                run: r.name.clone(),
                verdict: baseline_checks(&evidence, &others),
            }
        })
        .collect()
}

/// The comparison's five-check section for a terminal.
pub fn comparison_text(baselines: &[RunBaseline], lang: Lang) -> String {
    let mut out = String::new();
    for b in baselines {
        out.push_str(&match lang {
            Lang::En => format!("Five checks for {}:\n", b.run),
            Lang::Zh => format!("{} 的五项基线检查：\n", b.run),
        });
        for l in b.verdict.lines(lang) {
            out.push_str(&format!("  {l}\n"));
        }
        out.push('\n');
    }
    out
}
