//! The capacity answer of a load sweep: an ordered series of steps (offered load, each a trace
//! judged under one set of settings), each step's joint qualification rate, P95 TTFT, goodput
//! and cost per 1,000 qualified with their 95 % intervals, a target the learner chooses, and the
//! highest tested load that still meets it, stated as an interval between the last passing and
//! the first failing step. A step passes only when its whole interval clears the target.

use serde::Serialize;

use crate::compare::contract::{check_contract_varying, Strictness};
use crate::compare::stats::{mover, newcombe, Bounds};
use crate::compare::uncertainty::{bounds_text, Intervals};
use crate::figure::{Figure, Unit};
use crate::format::{number_in_unit, trim_num};
use crate::index::Index;
use crate::lag::{client_lag, ClientLag};
use crate::metrics::Metrics;
use crate::settings::Settings;
use crate::simulate::{
    record as simulation_record, simulate, simulate_listed, ArrivalName, Listed, Load, Params,
    Service, SimulateError, TokenCost, DEFAULT_FIRST_TOKEN_SHARE,
};
use crate::text::{Lang, Text};
use crate::trace::{Comparison, Trace};
use crate::workload::{Replay, Replayed, Workload};

/// What was varied from step to step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadKind {
    /// Open loop: requests per second.
    Rate,
    /// Closed loop: requests in flight.
    Concurrency,
    /// A workload file replayed this many times faster.
    Speedup,
    /// Sessions (conversations) started per second, open loop; each session's turns follow
    /// its replies.
    SessionRate,
}

impl LoadKind {
    pub fn code(self) -> &'static str {
        match self {
            LoadKind::Rate => "rate",
            LoadKind::Concurrency => "concurrency",
            LoadKind::Speedup => "speedup",
            LoadKind::SessionRate => "session_rate",
        }
    }

    pub fn from_code(code: &str) -> Option<LoadKind> {
        [
            LoadKind::Rate,
            LoadKind::Concurrency,
            LoadKind::Speedup,
            LoadKind::SessionRate,
        ]
        .into_iter()
        .find(|k| k.code() == code)
    }

    /// "rate 4 /s", "concurrency 16", "speed-up 2×".
    pub fn describe(self, load: f64, lang: Lang) -> String {
        let v = trim_num(load);
        match (self, lang) {
            (LoadKind::Rate, Lang::En) => format!("rate {v} /s"),
            (LoadKind::Rate, Lang::Zh) => format!("速率 {v} 个/秒"),
            (LoadKind::Concurrency, Lang::En) => format!("concurrency {v}"),
            (LoadKind::Concurrency, Lang::Zh) => format!("并发 {v}"),
            (LoadKind::Speedup, Lang::En) => format!("speed-up {v}×"),
            (LoadKind::Speedup, Lang::Zh) => format!("加速 {v}×"),
            (LoadKind::SessionRate, Lang::En) => format!("session rate {v} /s"),
            (LoadKind::SessionRate, Lang::Zh) => format!("会话速率 {v} 个/秒"),
        }
    }
}

/// The figure the target is set on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Joint qualification rate ≥ X (failures kept in the denominator).
    JointRate,
    /// P95 TTFT of the successes ≤ Y seconds.
    TtftP95,
    /// Goodput (qualified per second of the window) ≥ Z.
    Goodput,
    /// The share of sessions whose every turn qualified ≥ X (Wilson, the session as the unit).
    SessionShare,
    /// Session goodput (qualified sessions per second of the window) ≥ Z.
    SessionGoodput,
}

impl Measure {
    /// `joint_rate`, `ttft_p95`, `goodput`: the target's name in `Target::parse`.
    pub fn code(self) -> &'static str {
        match self {
            Measure::JointRate => "joint_rate",
            Measure::TtftP95 => "ttft_p95",
            Measure::Goodput => "goodput",
            Measure::SessionShare => "session_share",
            Measure::SessionGoodput => "session_goodput",
        }
    }
}

/// The learner's target: `joint_rate>=0.9`, `ttft_p95<=1.5`, `goodput>=2`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Target {
    pub measure: Measure,
    pub value: f64,
}

impl Target {
    /// Reads `joint_rate>=0.9`, `ttft_p95<=1.5` or `goodput>=2` (spaces allowed; a joint rate
    /// may be written as a percentage, `joint_rate>=90%`).
    pub fn parse(spec: &str) -> Result<Target, Text> {
        let s: String = spec.chars().filter(|c| !c.is_whitespace()).collect();
        let forms = [
            ("joint_rate>=", Measure::JointRate),
            ("ttft_p95<=", Measure::TtftP95),
            ("goodput>=", Measure::Goodput),
            ("session_share>=", Measure::SessionShare),
            ("session_goodput>=", Measure::SessionGoodput),
        ];
        let Some((measure, rest)) = forms
            .iter()
            .find_map(|(p, m)| s.strip_prefix(p).map(|r| (*m, r)))
        else {
            return Err(Text::new(
                format!("target `{spec}` is not one of joint_rate>=X (0–1 or X%), ttft_p95<=SECONDS, goodput>=PER_SECOND, session_share>=X, session_goodput>=PER_SECOND"),
                format!("目标 `{spec}` 无法识别：应为 joint_rate>=X（0–1 或 X%）、ttft_p95<=秒数、goodput>=每秒合格数、session_share>=X、session_goodput>=每秒合格会话数"),
            ));
        };
        let (num, percent) = match rest.strip_suffix('%') {
            Some(n) if matches!(measure, Measure::JointRate | Measure::SessionShare) => (n, true),
            _ => (rest, false),
        };
        let v: f64 = num
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| {
                Text::new(
                    format!("target `{spec}`: `{rest}` is not a number"),
                    format!("目标 `{spec}`：`{rest}` 不是数字"),
                )
            })?;
        let v = if percent { v / 100.0 } else { v };
        let ok = match measure {
            Measure::JointRate | Measure::SessionShare => v > 0.0 && v <= 1.0,
            Measure::TtftP95 | Measure::Goodput | Measure::SessionGoodput => v > 0.0,
        };
        if !ok {
            return Err(Text::new(
                format!("target `{spec}`: a joint rate or session share must lie in (0, 1], a P95 TTFT and a goodput above 0"),
                format!("目标 `{spec}`：联合合格率与合格会话占比须在 (0, 1] 之内，P95 TTFT 与 goodput 须大于 0"),
            ));
        }
        Ok(Target { measure, value: v })
    }

    /// "joint qualification rate ≥ 90 %".
    pub fn describe(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        match self.measure {
            Measure::JointRate => {
                let v = number_in_unit(self.value, &Unit::Ratio, lang);
                if zh {
                    format!("联合合格率 ≥ {v}")
                } else {
                    format!("joint qualification rate ≥ {v}")
                }
            }
            Measure::TtftP95 => {
                let v = number_in_unit(self.value, &Unit::Seconds, lang);
                if zh {
                    format!("成功请求 P95 TTFT ≤ {v}")
                } else {
                    format!("P95 TTFT of successes ≤ {v}")
                }
            }
            Measure::Goodput => {
                let v = number_in_unit(self.value, &Unit::PerSecond, lang);
                // "goodput" is the course's word in both languages.
                format!("goodput ≥ {v}")
            }
            Measure::SessionShare => {
                let v = number_in_unit(self.value, &Unit::Ratio, lang);
                if zh {
                    format!("合格会话占比（每一轮都合格）≥ {v}")
                } else {
                    format!("sessions qualified (every turn qualified) ≥ {v}")
                }
            }
            Measure::SessionGoodput => {
                let v = number_in_unit(self.value, &Unit::PerSecond, lang);
                if zh {
                    format!("合格会话 goodput ≥ {v}")
                } else {
                    format!("session goodput ≥ {v}")
                }
            }
        }
    }
}

/// One step of a sweep, as handed to [`Capacity::compute`].
pub struct Step<'a> {
    /// The offered load (requests/s, concurrency or speed-up).
    pub load: f64,
    /// The step's file name, for the table.
    pub name: String,
    pub trace: &'a Trace,
    /// Stopped by Ctrl-C before it finished: shown, never counted in the answer.
    pub interrupted: bool,
}

/// A step's own verdict against the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepVerdict {
    /// The whole 95 % interval clears the target.
    Passes,
    /// The whole interval lies on the wrong side.
    Fails,
    /// The interval straddles the target, or a bound does not exist.
    Inconclusive,
    /// Stopped before it finished: not judged.
    Interrupted,
}

impl StepVerdict {
    pub fn text(self) -> Text {
        match self {
            StepVerdict::Passes => Text::new("passes", "通过"),
            StepVerdict::Fails => Text::new("fails", "未通过"),
            StepVerdict::Inconclusive => Text::new("inconclusive", "无法判定"),
            StepVerdict::Interrupted => {
                Text::new("stopped early, not judged", "被提前停止，不评判")
            }
        }
    }
}

/// A figure's point value and its 95 % interval (`None`: no interval exists).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    pub value: Option<f64>,
    pub interval: Option<Bounds>,
}

/// One step's figures and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepResult {
    pub load: f64,
    pub name: String,
    /// Measured attempts counted (failures included).
    pub attempts: usize,
    pub failures: usize,
    pub qualified: usize,
    pub joint_rate: Estimate,
    pub failure_rate: Estimate,
    pub ttft_p95: Estimate,
    /// Qualified per second of the step's window (from its header, or the settings').
    pub goodput: Estimate,
    pub cost_per_1000_qualified: Estimate,
    pub currency: String,
    /// Open-loop steps: the client fell behind its schedule (the server saw less than offered).
    pub client_behind: Option<bool>,
    /// A session workload's step: its per-session figures (`crate::session`), the session as
    /// the unit of their intervals. None when no attempt belongs to a session.
    pub sessions: Option<SessionStep>,
    pub verdict: StepVerdict,
    /// Why the verdict could not be given (a missing bound, no window).
    pub why: Option<Text>,
}

/// A session step's figures: a session qualifies only when every one of its turns does.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionStep {
    pub sessions: usize,
    pub qualified_sessions: usize,
    /// Share of sessions qualified, Wilson with the session as the unit.
    pub session_share: Estimate,
    /// Qualified sessions per second of the window, exact Poisson on the count.
    pub session_goodput: Estimate,
    /// Turns qualified (per turn), cluster-robust with sessions as clusters.
    pub turn_rate: Estimate,
    /// How many independent sessions they are worth (below `sessions` where sessions in start
    /// order are correlated, and the intervals are widened for it).
    pub effective_sessions: f64,
}

impl SessionStep {
    fn of(s: &crate::session::Sessions) -> SessionStep {
        let est = |f: &crate::session::SessionFigure| Estimate {
            value: f.figure.value,
            interval: f.interval,
        };
        let count = |v: Option<f64>| v.unwrap_or(0.0).round() as usize;
        SessionStep {
            sessions: count(s.session_share.figure.denominator),
            qualified_sessions: count(s.session_share.figure.numerator),
            session_share: est(&s.session_share),
            session_goodput: est(&s.session_goodput),
            turn_rate: est(&s.turn_rate),
            effective_sessions: s.dependence.effective_n,
        }
    }
}

/// The highest tested load that meets the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    /// The highest passing step below the first failing one.
    pub last_pass: Option<f64>,
    /// The lowest failing step.
    pub first_fail: Option<f64>,
    /// Steps between the two that could not be judged either way.
    pub inconclusive: Vec<f64>,
    /// Passing steps above the first failing one (noise, or a server that is not monotone).
    pub passes_above_fail: Vec<f64>,
    /// A goodput target only: failing steps below the first passing one (they offered less
    /// load than the target asks of goodput).
    pub short_of_goodput: Vec<f64>,
}

/// A sweep's capacity answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Capacity {
    pub kind: LoadKind,
    pub target: Target,
    /// The TTFT threshold and comparison the joint rate was judged with, e.g. "≤ 1 s".
    pub threshold_s: f64,
    pub comparison: String,
    pub steps: Vec<StepResult>,
    pub answer: Answer,
    /// The knee: the last load before the joint rate fell beyond noise (the interval of the drop
    /// to the next step lies wholly below 0: Newcombe, or MOVER from each step's interval on its
    /// effective sample where its attempts are correlated).
    pub knee: Option<f64>,
    /// Steps whose conditions differ from the first step's in more than the load.
    pub contract: Vec<Text>,
    /// The loads of the steps that come from the simulator (their header's `simulation`), not
    /// from a server: never to be read as measured.
    pub simulated: Vec<f64>,
}

/// A step's own header must name the load sweep.json gives it: a file copied over from another
/// step or another sweep would otherwise be judged as this load.
fn check_step_load(kind: LoadKind, step: &Step) -> Result<(), Text> {
    let c = &step.trace.header.conditions;
    let sim = step
        .trace
        .header
        .simulation
        .as_ref()
        .and_then(|s| s.read().ok());
    let own = match kind {
        LoadKind::Rate | LoadKind::SessionRate => {
            c.rate_per_s.or_else(|| match sim.as_ref().map(|s| s.load) {
                Some(crate::trace::simulation::Load::Open { rate_per_s, .. }) => Some(rate_per_s),
                _ => None,
            })
        }
        LoadKind::Concurrency => {
            c.concurrency
                .map(f64::from)
                .or_else(|| match sim.as_ref().map(|s| s.load) {
                    Some(crate::trace::simulation::Load::Closed { clients, .. }) => {
                        Some(f64::from(clients))
                    }
                    _ => None,
                })
        }
        LoadKind::Speedup => None,
    };
    match own {
        Some(own) if (own - step.load).abs() > 1e-9 * step.load.abs().max(1.0) => Err(Text::new(
            format!(
                "{}: its header says {}, but sweep.json gives this step {}: the file belongs to another step or another sweep; restore the step's own file",
                step.name,
                kind.describe(own, Lang::En),
                kind.describe(step.load, Lang::En)
            ),
            format!(
                "{}：文件头写的是 {}，但 sweep.json 给这一步的是 {}：这个文件属于另一步或另一次扫描；请换回这一步自己的文件",
                step.name,
                kind.describe(own, Lang::Zh),
                kind.describe(step.load, Lang::Zh)
            ),
        )),
        _ => Ok(()),
    }
}

/// A sweep's loads must be finite, positive and strictly increasing: the answer reads the
/// steps in order, and a repeated load is a rerun, not a step.
pub fn check_loads(loads: &[f64]) -> Result<(), Text> {
    if loads.is_empty() {
        return Err(Text::new(
            "a sweep needs at least one load, e.g. --concurrencies 1,4,16",
            "扫描至少需要一个负载，例如 --concurrencies 1,4,16",
        ));
    }
    for (i, &l) in loads.iter().enumerate() {
        if !(l.is_finite() && l > 0.0) {
            return Err(Text::new(
                format!(
                    "load {} (step {}) must be a finite number above 0",
                    trim_num(l),
                    i + 1
                ),
                format!(
                    "负载 {}（第 {} 步）必须是大于 0 的有限数",
                    trim_num(l),
                    i + 1
                ),
            ));
        }
        if i > 0 && l <= loads[i - 1] {
            return Err(Text::new(
                format!(
                    "loads must increase step by step: step {} ({}) is not above step {} ({}); sort them, and repeat a load as a rerun, not a step",
                    i + 1,
                    trim_num(l),
                    i,
                    trim_num(loads[i - 1])
                ),
                format!("负载必须逐步递增：第 {} 步（{}）不高于第 {} 步（{}）；请排序，重复的负载应作为重跑而不是新的一步", i + 1, trim_num(l), i, trim_num(loads[i - 1])),
            ));
        }
    }
    Ok(())
}

/// The settings one step is judged under: the learner's `common` choices, with the window and
/// its cost from the step's own header unless `common` sets them (each step has its own span).
pub fn step_settings(common: &Settings, trace: &Trace) -> Settings {
    let own = Settings::from_header(&trace.header);
    let mut s = common.clone();
    if s.window_s.is_none() {
        s.window_s = own.window_s;
    }
    if s.window_cost.is_none() {
        s.window_cost = own.window_cost;
        s.currency = own.currency;
    }
    s
}

fn estimate(f: &Figure, iv: &Intervals) -> Estimate {
    Estimate {
        value: f.value,
        interval: iv.get(&f.key).map(|i| i.bounds),
    }
}

/// Whether the interval clears `target` on the right side (`at_least`: higher is better).
/// Every success's answer went unjudged (the prompt set has no rubrics), so none can qualify:
/// a joint-rate or goodput target then fails at any load, whatever the server did.
fn unjudged_quality(ix: &Index, measure: Measure) -> bool {
    matches!(
        measure,
        Measure::JointRate | Measure::Goodput | Measure::SessionShare | Measure::SessionGoodput
    ) && ix.successes > 0
        && ix.quality_not_evaluated == ix.successes
}

fn no_rubric_text() -> Text {
    Text::new(
        "no success had its answer judged (the prompt set has no rubrics), and an unjudged answer does not qualify: \
         give the prompts rubrics, or judge the load by --target ttft_p95<=SECONDS",
        "没有一个成功的回答被评判（提示集没有评分规则），而未评判的回答不算合格：请给提示加上评分规则，\
         或用 --target ttft_p95<=SECONDS 来判断负载",
    )
}

fn judge(interval: Option<Bounds>, target: f64, at_least: bool) -> (StepVerdict, Option<Text>) {
    let Some(b) = interval else {
        return (
            StepVerdict::Inconclusive,
            Some(Text::new(
                "no interval: no attempts counted",
                "没有区间：没有计入的尝试",
            )),
        );
    };
    let (good_side, bad_side) = if at_least { (b.lo, b.hi) } else { (b.hi, b.lo) };
    let clears = |v: f64| if at_least { v >= target } else { v <= target };
    match (good_side, bad_side) {
        (Some(g), _) if clears(g) => (StepVerdict::Passes, None),
        (_, Some(w)) if !clears(w) => (StepVerdict::Fails, None),
        (None, _) => (
            StepVerdict::Inconclusive,
            Some(Text::new(
                "a bound of the interval does not exist at this n: more requests per step would close it",
                "在这个样本量下区间的一个界不存在：每步多发一些请求才能确定",
            )),
        ),
        _ => (StepVerdict::Inconclusive, None),
    }
}

impl Capacity {
    /// Every step's figures under `common` (window and cost per step, [`step_settings`]), each
    /// judged against `target`, and the answer. Refuses loads that are not increasing.
    pub fn compute(
        kind: LoadKind,
        steps: &[Step],
        common: &Settings,
        target: Target,
    ) -> Result<Capacity, Text> {
        check_loads(&steps.iter().map(|s| s.load).collect::<Vec<_>>())?;
        for step in steps {
            check_step_load(kind, step)?;
        }
        let mut results = Vec::with_capacity(steps.len());
        let mut joint_counts = Vec::with_capacity(steps.len());
        for step in steps {
            let s = step_settings(common, step.trace);
            let ix = Index::build(&step.trace.attempts, s.population);
            let m = Metrics::compute(&ix, &s);
            let iv = Intervals::compute(&ix, &s, &m);
            let joint_rate = estimate(&m.joint_rate, &iv);
            let ttft_p95 = estimate(&m.ttft_p95, &iv);
            let goodput = estimate(&m.goodput, &iv);
            let sessions = crate::session::Sessions::of(&step.trace.attempts, &s)
                .as_ref()
                .map(SessionStep::of);
            let (verdict, why) = if step.interrupted {
                (StepVerdict::Interrupted, None)
            } else if step.trace.is_incomplete() {
                // A file cut short (a crash, a full disk, a copy that stopped) is not a step that
                // finished: its attempts are shown, never judged.
                let read = crate::format::integer(step.trace.attempts.len() as u64);
                (
                    StepVerdict::Interrupted,
                    Some(Text::new(
                        format!("the file is incomplete ({read} attempts read; {}): not judged; rerun the step or restore the whole file", step.trace.completeness().text().en),
                        format!("文件不完整（读到 {read} 个尝试；{}）：不评判；请重跑这一步或恢复完整的文件", step.trace.completeness().text().zh),
                    )),
                )
            } else {
                match target.measure {
                    Measure::JointRate => judge(joint_rate.interval, target.value, true),
                    Measure::TtftP95 if ttft_p95.interval.is_some_and(|b| b.hi.is_none()) && ttft_p95.interval.is_some_and(|b| b.lo.is_none_or(|lo| lo <= target.value)) => {
                        let n = m.ttft_p95.n.unwrap_or(0);
                        let need = crate::compare::stats::min_n_for_quantile(0.95);
                        let (n, need) = (crate::format::integer(n as u64), crate::format::integer(need as u64));
                        (
                            StepVerdict::Inconclusive,
                            Some(Text::new(
                                format!("P95 TTFT has no upper bound from {n} TTFT samples: it takes n ≥ {need} independent samples per step (more where they are correlated); send more requests per step"),
                                format!("{n} 个 TTFT 样本给不出 P95 TTFT 的上界：每步需要 n ≥ {need} 个独立样本（样本相关时更多）；请每步多发一些请求"),
                            )),
                        )
                    }
                    Measure::TtftP95 => judge(ttft_p95.interval, target.value, false),
                    Measure::Goodput if goodput.interval.is_none() => (
                        StepVerdict::Inconclusive,
                        Some(Text::new(
                            "no window: goodput needs the step's window (record writes it; else give --window)",
                            "没有窗口：goodput 需要这一步的窗口（record 会写入；否则请给出 --window）",
                        )),
                    ),
                    Measure::Goodput => judge(goodput.interval, target.value, true),
                    Measure::SessionShare | Measure::SessionGoodput if sessions.is_none() => (
                        StepVerdict::Inconclusive,
                        Some(Text::new(
                            "no sessions: a session target needs a session workload (record --sessions or --conversations, simulate --sessions)",
                            "没有会话：会话目标需要会话负载（record --sessions 或 --conversations，simulate --sessions）",
                        )),
                    ),
                    Measure::SessionGoodput if sessions.as_ref().is_some_and(|s| s.session_goodput.interval.is_none()) => (
                        StepVerdict::Inconclusive,
                        Some(Text::new(
                            "no window: session goodput needs the step's window (record writes it; else give --window)",
                            "没有窗口：合格会话 goodput 需要这一步的窗口（record 会写入；否则请给出 --window）",
                        )),
                    ),
                    Measure::SessionShare => judge(sessions.as_ref().and_then(|s| s.session_share.interval), target.value, true),
                    Measure::SessionGoodput => judge(sessions.as_ref().and_then(|s| s.session_goodput.interval), target.value, true),
                }
            };
            // No answer judged (no rubrics): whatever the verdict, the load is not its cause.
            let why =
                if verdict != StepVerdict::Interrupted && unjudged_quality(&ix, target.measure) {
                    Some(no_rubric_text())
                } else {
                    why
                };
            let joint_iv = iv
                .get(&m.joint_rate.key)
                .filter(|i| i.dependence.as_ref().is_some_and(|d| d.widens()))
                .map(|i| i.bounds);
            // A session sweep's knee is read on the sessions (independent units), not on turns.
            joint_counts.push(match (&sessions, kind) {
                (Some(ss), LoadKind::SessionRate) => (
                    ss.qualified_sessions as u64,
                    ss.sessions as u64,
                    step.interrupted,
                    // Correlated sessions: MOVER from the widened interval, not Newcombe.
                    (ss.effective_sessions < ss.sessions as f64)
                        .then(|| ss.session_share.value.zip(ss.session_share.interval))
                        .flatten(),
                ),
                _ => (
                    m.qualified as u64,
                    m.attempts as u64,
                    step.interrupted,
                    m.joint_rate.value.zip(joint_iv),
                ),
            });
            let lag: Option<ClientLag> = client_lag(step.trace);
            results.push(StepResult {
                load: step.load,
                name: step.name.clone(),
                attempts: m.attempts,
                failures: m.failures,
                qualified: m.qualified,
                failure_rate: estimate(&m.failure_rate, &iv),
                joint_rate,
                ttft_p95,
                goodput,
                cost_per_1000_qualified: estimate(&m.cost_per_1000_qualified, &iv),
                currency: s.currency.clone(),
                client_behind: lag.map(|l| l.behind),
                sessions,
                verdict,
                why,
            });
        }
        let mut judged: Vec<&StepResult> = results
            .iter()
            .filter(|r| r.verdict != StepVerdict::Interrupted)
            .collect();
        // Goodput rises with load until the server saturates: steps that fall short below the
        // first passing one offered too little, and say nothing about where capacity ends.
        let short_of_goodput: Vec<f64> =
            if matches!(target.measure, Measure::Goodput | Measure::SessionGoodput) {
                let first_pass = judged.iter().position(|r| r.verdict == StepVerdict::Passes);
                let below = first_pass.unwrap_or(0);
                let short = judged[..below]
                    .iter()
                    .filter(|r| r.verdict == StepVerdict::Fails)
                    .map(|r| r.load)
                    .collect();
                judged.drain(..below);
                short
            } else {
                Vec::new()
            };
        let first_fail = judged
            .iter()
            .find(|r| r.verdict == StepVerdict::Fails)
            .map(|r| r.load);
        let below = |r: &&&StepResult| first_fail.is_none_or(|f| r.load < f);
        let last_pass = judged
            .iter()
            .filter(below)
            .filter(|r| r.verdict == StepVerdict::Passes)
            .map(|r| r.load)
            .next_back();
        let inconclusive = judged
            .iter()
            .filter(below)
            .filter(|r| {
                r.verdict == StepVerdict::Inconclusive && last_pass.is_none_or(|p| r.load > p)
            })
            .map(|r| r.load)
            .collect();
        let passes_above_fail = judged
            .iter()
            .filter(|r| first_fail.is_some_and(|f| r.load > f) && r.verdict == StepVerdict::Passes)
            .map(|r| r.load)
            .collect();
        // The knee: the first drop of the joint rate beyond noise between neighbouring steps:
        // Newcombe while both steps' attempts pass as independent, else MOVER from each step's
        // interval on its effective sample.
        let knee = (1..steps.len()).find_map(|i| {
            let ((k0, n0, int0, c0), (k1, n1, int1, c1)) = (joint_counts[i - 1], joint_counts[i]);
            if int0 || int1 {
                return None;
            }
            let exact = |k: u64, n: u64| {
                (n > 0)
                    .then(|| k as f64 / n as f64)
                    .zip(crate::compare::stats::wilson(k, n))
            };
            let drop = if c0.is_some() || c1.is_some() {
                let ((p0, b0), (p1, b1)) =
                    (c0.or_else(|| exact(k0, n0))?, c1.or_else(|| exact(k1, n1))?);
                mover(p0, b0, p1, b1)
            } else {
                newcombe(k1, n1, k0, n0)
            };
            drop.and_then(|d| d.hi)
                .filter(|hi| *hi < 0.0)
                .map(|_| steps[i - 1].load)
        });
        let contract = steps
            .iter()
            .enumerate()
            .skip(1)
            .filter_map(|(i, s)| {
                let check = check_contract_varying(
                    &steps[0].trace.header,
                    &s.trace.header,
                    &["load".to_string()],
                )
                .ok()?;
                let diffs: Vec<String> = check
                    .differences
                    .iter()
                    .filter(|d| d.strictness == Strictness::Must)
                    .map(|d| d.field.clone())
                    .collect();
                (!diffs.is_empty()).then(|| {
                    Text::new(
                        format!(
                            "step {} ({}) differs from step 1 in more than the load: {}",
                            i + 1,
                            s.name,
                            diffs.join(", ")
                        ),
                        format!(
                            "第 {} 步（{}）与第 1 步的差别不止负载：{}",
                            i + 1,
                            s.name,
                            diffs.join("、")
                        ),
                    )
                })
            })
            .collect();
        let simulated: Vec<f64> = steps
            .iter()
            .filter(|s| s.trace.header.simulation.is_some())
            .map(|s| s.load)
            .collect();
        let mut contract: Vec<Text> = contract;
        if !simulated.is_empty() && simulated.len() < steps.len() {
            let list: Vec<String> = simulated.iter().map(|l| trim_num(*l)).collect();
            contract.push(Text::new(
                format!("steps at load {} are simulated and the others measured: one sweep must come from one source", list.join(", ")),
                format!("负载 {} 的步是模拟的，其余是测量的：一次扫描必须来自同一来源", list.join("、")),
            ));
        }
        Ok(Capacity {
            kind,
            target,
            threshold_s: common.ttft_threshold_s,
            comparison: common.comparison.symbol().to_string(),
            steps: results,
            answer: Answer {
                last_pass,
                first_fail,
                inconclusive,
                passes_above_fail,
                short_of_goodput,
            },
            knee,
            contract,
            simulated,
        })
    }

    /// The answer in one sentence.
    pub fn answer_text(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        let d = |l: f64| self.kind.describe(l, lang);
        let a = &self.answer;
        let mut out = match (a.last_pass, a.first_fail) {
            (Some(p), Some(f)) => {
                if zh {
                    format!(
                        "容量：通过目标的最高负载是 {}；容量介于 {}（通过）与 {}（未通过）之间",
                        d(p),
                        d(p),
                        d(f)
                    )
                } else {
                    format!("Capacity: the highest load that passes is {}; capacity lies between {} (passes) and {} (fails)", d(p), d(p), d(f))
                }
            }
            (Some(p), None) => {
                if zh {
                    format!("容量：通过目标的最高负载是 {}；没有一步未通过，容量至少为 {}（上限未测到）", d(p), d(p))
                } else {
                    format!("Capacity: the highest load that passes is {}; no step failed, so capacity is at least {} (no upper end tested)", d(p), d(p))
                }
            }
            (None, Some(f))
                if matches!(
                    self.target.measure,
                    Measure::Goodput | Measure::SessionGoodput
                ) =>
            {
                if zh {
                    format!("容量：没有一步通过；goodput 随负载上升，直到服务端饱和，所以 {} 可能只是给的负载太少：请把扫描延伸到更高的负载（若最高一步也未通过，说明服务端达不到这个目标）", d(f))
                } else {
                    format!("Capacity: no step passes; goodput rises with load until the server saturates, so {} may simply offer too little: extend the sweep to higher loads (if the highest step fails too, the server cannot reach the target)", d(f))
                }
            }
            (None, Some(f)) => {
                if zh {
                    format!(
                        "容量：没有一步通过；{} 已未通过，容量低于测试的负载（请从更低的负载开始）",
                        d(f)
                    )
                } else {
                    format!("Capacity: no step passes; {} already fails, so capacity lies below the tested loads (start the sweep lower)", d(f))
                }
            }
            (None, None) => {
                if zh {
                    "容量：无法判定——没有一步的区间完全通过或完全未通过（每步多发一些请求）"
                        .to_string()
                } else {
                    "Capacity: inconclusive — no step's interval clears the target or misses it entirely (send more requests per step)".to_string()
                }
            }
        };
        if !a.inconclusive.is_empty() {
            let list: Vec<String> = a.inconclusive.iter().map(|l| d(*l)).collect();
            out.push_str(&if zh {
                format!("；无法判定的步：{}（区间跨越目标）", list.join("、"))
            } else {
                format!(
                    "; inconclusive: {} (its interval straddles the target)",
                    list.join(", ")
                )
            });
        }
        if !a.short_of_goodput.is_empty() {
            let list: Vec<String> = a.short_of_goodput.iter().map(|l| d(*l)).collect();
            out.push_str(&if zh {
                format!("；低于目标 goodput 的低负载步：{}（负载本身不够，goodput 随负载上升）", list.join("、"))
            } else {
                format!("; below the first passing step, {} offered too little load to reach the goodput (it rises with load)", list.join(", "))
            });
        }
        if !a.passes_above_fail.is_empty() {
            let list: Vec<String> = a.passes_above_fail.iter().map(|l| d(*l)).collect();
            out.push_str(&if zh {
                format!("；注意：{} 在一个未通过的步之上又通过了（噪声或服务端非单调，请重跑）", list.join("、"))
            } else {
                format!("; note: {} passes above a failing step (noise, or a server that is not monotone: rerun)", list.join(", "))
            });
        }
        out
    }

    /// Whether the steps were simulated, in one sentence (`None`: every step was measured).
    pub fn simulated_text(&self, lang: Lang) -> Option<String> {
        let zh = lang == Lang::Zh;
        if self.simulated.is_empty() {
            return None;
        }
        if self.simulated.len() == self.steps.len() {
            return Some(if zh {
                "模拟结果，不是测量：每一步都来自 tracelab 的模拟器（参数与种子见每一步的文件头），不是来自服务端；模拟的成功请求一律按质量通过计算（模拟器不产生回答）".to_string()
            } else {
                "Simulated, not measured: every step comes from tracelab's simulator (its parameters and seed in each step's header), not from a server; simulated successes count as passing quality (the simulator writes no answers)".to_string()
            });
        }
        let list: Vec<String> = self
            .simulated
            .iter()
            .map(|l| self.kind.describe(*l, lang))
            .collect();
        Some(if zh {
            format!(
                "注意：{} 是模拟的，不是测量；其余步是测量的",
                list.join("、")
            )
        } else {
            format!(
                "Note: {} simulated, not measured; the other steps were measured",
                list.join(", ") + if list.len() == 1 { " is" } else { " are" }
            )
        })
    }

    /// The whole answer for the terminal: whether it was simulated, the target, one block per
    /// step with every figure and its interval, the answer, the knee and any broken contract.
    pub fn render_text(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        let mut out = String::new();
        if let Some(sim) = self.simulated_text(lang) {
            out.push_str(&sim);
            out.push_str("\n\n");
        }
        out.push_str(&self.rule_text(lang));
        out.push('\n');
        for (i, r) in self.steps.iter().enumerate() {
            out.push_str(&format!(
                "\n{} {} — {} ({})\n",
                if zh {
                    "第".to_string() + &(i + 1).to_string() + " 步"
                } else {
                    format!("Step {}", i + 1)
                },
                self.kind.describe(r.load, lang),
                r.verdict.text().get(lang),
                r.name
            ));
            if zh {
                out.push_str(&format!(
                    "  尝试 {}，失败 {}，合格 {}\n",
                    r.attempts, r.failures, r.qualified
                ));
            } else {
                out.push_str(&format!(
                    "  attempts {}, failures {}, qualified {}\n",
                    r.attempts, r.failures, r.qualified
                ));
            }
            if let Some(ss) = &r.sessions {
                if zh {
                    out.push_str(&format!(
                        "  会话 {}，合格会话 {}\n",
                        ss.sessions, ss.qualified_sessions
                    ));
                } else {
                    out.push_str(&format!(
                        "  sessions {}, qualified sessions {}\n",
                        ss.sessions, ss.qualified_sessions
                    ));
                }
            }
            for row in self.figure_rows(i, lang) {
                let range = if zh { "95 % 区间" } else { "95 % interval" };
                out.push_str(&format!(
                    "  {}: {} ({range} {})\n",
                    row.name, row.value, row.interval
                ));
            }
            if r.client_behind == Some(true) {
                out.push_str(if zh {
                    "  客户端落后于计划：服务端收到的负载低于所给负载\n"
                } else {
                    "  the client fell behind its schedule: the server saw less load than offered\n"
                });
            }
            if let Some(why) = &r.why {
                out.push_str(&format!("  {}\n", why.get(lang)));
            }
        }
        out.push('\n');
        out.push_str(&self.answer_text(lang));
        out.push('\n');
        out.push_str(&self.knee_text(lang));
        out.push('\n');
        for c in &self.contract {
            out.push_str(&format!(
                "{}: {}\n",
                if zh { "契约" } else { "Contract" },
                c.get(lang)
            ));
        }
        out
    }
    /// The target and how a step is judged, in one paragraph.
    pub fn rule_text(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        if matches!(
            self.target.measure,
            Measure::SessionShare | Measure::SessionGoodput
        ) {
            let (cmp, t) = (&self.comparison, trim_num(self.threshold_s));
            return if zh {
                format!(
                    "目标：{}（一个会话只有在每一轮都合格时才合格；一轮合格 = 成功 ∧ 质量通过 ∧ TTFT {cmp} {t} 秒；区间以会话为单位）。只有 95 % 区间完全满足目标的步才算通过，完全落在另一侧才算未通过，其余无法判定。",
                    self.target.describe(lang)
                )
            } else {
                format!(
                    "Target: {} (a session qualifies only when every one of its turns does; a turn qualifies = success ∧ quality pass ∧ TTFT {cmp} {t} s; the intervals take the session as the unit). A step passes only when its whole 95 % interval clears the target, fails when it lies wholly on the wrong side, and is inconclusive otherwise.",
                    self.target.describe(lang)
                )
            };
        }
        if zh {
            format!(
                "目标：{}（TTFT {} {} 秒计为合格；失败计入分母）。只有 95 % 区间完全满足目标的步才算通过，完全落在另一侧才算未通过，其余无法判定。",
                self.target.describe(lang),
                self.comparison,
                trim_num(self.threshold_s)
            )
        } else {
            format!(
                "Target: {} (qualified = success ∧ quality pass ∧ TTFT {} {} s; failures stay in the denominator). A step passes only when its whole 95 % interval clears the target, fails when it lies wholly on the wrong side, and is inconclusive otherwise.",
                self.target.describe(lang),
                self.comparison,
                trim_num(self.threshold_s)
            )
        }
    }

    /// The knee in one sentence (or that none was seen).
    pub fn knee_text(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        let sessions = self.kind == LoadKind::SessionRate;
        match self.knee {
            Some(k) if sessions => {
                if zh {
                    format!(
                        "拐点：{}——下一步的合格会话占比下降超出噪声（以会话为单位，下降量的区间完全低于 0）",
                        self.kind.describe(k, lang)
                    )
                } else {
                    format!("Knee: {} — the share of sessions qualified fell beyond noise at the next step (the session as the unit; the interval of the drop lies wholly below 0)", self.kind.describe(k, lang))
                }
            }
            None if sessions => {
                if zh {
                    "拐点：未见——相邻两步之间合格会话占比的下降都没有超出噪声".to_string()
                } else {
                    "Knee: not seen — no drop of the share of sessions qualified between neighbouring steps is beyond noise".to_string()
                }
            }
            Some(k) => {
                if zh {
                    format!(
                        "拐点：{}——下一步的联合合格率下降超出噪声（下降量的区间完全低于 0）",
                        self.kind.describe(k, lang)
                    )
                } else {
                    format!("Knee: {} — the joint rate fell beyond noise at the next step (the interval of the drop lies wholly below 0)", self.kind.describe(k, lang))
                }
            }
            None => {
                if zh {
                    "拐点：未见——相邻两步之间联合合格率的下降都没有超出噪声".to_string()
                } else {
                    "Knee: not seen — no drop of the joint rate between neighbouring steps is beyond noise".to_string()
                }
            }
        }
    }

    /// Step `i`'s four figures (six with sessions: the share qualified and session goodput) as shown: name, point value and 95 % interval, in the units of
    /// the course ("undefined" and "no interval" where they do not exist).
    pub fn figure_rows(&self, i: usize, lang: Lang) -> Vec<FigureRow> {
        let zh = lang == Lang::Zh;
        let r = &self.steps[i];
        let money = Unit::MoneyPer1000(r.currency.clone());
        let rows: [(&str, &str, &str, &Estimate, Unit); 4] = [
            (
                "joint_rate",
                "joint qualification rate",
                "联合合格率",
                &r.joint_rate,
                Unit::Ratio,
            ),
            (
                "ttft_p95",
                "P95 TTFT (successes)",
                "成功请求 P95 TTFT",
                &r.ttft_p95,
                Unit::Seconds,
            ),
            ("goodput", "goodput", "goodput", &r.goodput, Unit::PerSecond),
            (
                "cost_per_1000_qualified",
                "cost per 1,000 qualified",
                "每千次合格成本",
                &r.cost_per_1000_qualified,
                money,
            ),
        ];
        let mut rows: Vec<(&str, &str, &str, &Estimate, Unit)> = rows.into();
        if let Some(ss) = &r.sessions {
            rows.push((
                "session_share",
                "sessions qualified (every turn qualified)",
                "合格会话占比（每一轮都合格）",
                &ss.session_share,
                Unit::Ratio,
            ));
            rows.push((
                "session_goodput",
                "session goodput",
                "合格会话 goodput",
                &ss.session_goodput,
                Unit::PerSecond,
            ));
        }
        rows.into_iter()
            .map(|(key, en, zh_name, e, unit)| FigureRow {
                key,
                name: if zh { zh_name } else { en }.to_string(),
                value: match e.value {
                    Some(v) => number_in_unit(v, &unit, lang),
                    None => if zh { "无定义" } else { "undefined" }.to_string(),
                },
                interval: match e.interval {
                    Some(b) => bounds_text(&b, &unit, lang),
                    None => if zh { "无区间" } else { "no interval" }.to_string(),
                },
            })
            .collect()
    }

    /// Why step `i` got its verdict: where its interval of the target's figure lies against the
    /// target, plus the core's own reason when there is one (a missing bound, no window).
    pub fn why_text(&self, i: usize, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        let r = &self.steps[i];
        let none = Estimate {
            value: None,
            interval: None,
        };
        let (e, unit, above) = match self.target.measure {
            Measure::JointRate => (&r.joint_rate, Unit::Ratio, true),
            Measure::TtftP95 => (&r.ttft_p95, Unit::Seconds, false),
            Measure::Goodput => (&r.goodput, Unit::PerSecond, true),
            Measure::SessionShare => (
                r.sessions.as_ref().map_or(&none, |s| &s.session_share),
                Unit::Ratio,
                true,
            ),
            Measure::SessionGoodput => (
                r.sessions.as_ref().map_or(&none, |s| &s.session_goodput),
                Unit::PerSecond,
                true,
            ),
        };
        let target = number_in_unit(self.target.value, &unit, lang);
        let iv = e.interval.map(|b| bounds_text(&b, &unit, lang));
        let base = match (r.verdict, iv) {
            (StepVerdict::Interrupted, _) => {
                if zh {
                    "这一步被提前停止（Ctrl-C）：显示但不计入答案".to_string()
                } else {
                    "this step was stopped early (Ctrl-C): shown, never counted in the answer"
                        .to_string()
                }
            }
            (StepVerdict::Passes, Some(iv)) => match (zh, above) {
                (false, true) => format!("its 95 % interval {iv} lies wholly at or above {target}"),
                (false, false) => {
                    format!("its 95 % interval {iv} lies wholly at or below {target}")
                }
                (true, true) => format!("95 % 区间 {iv} 完全不低于 {target}"),
                (true, false) => format!("95 % 区间 {iv} 完全不高于 {target}"),
            },
            (StepVerdict::Fails, Some(iv)) => match (zh, above) {
                (false, true) => format!("its 95 % interval {iv} lies wholly below {target}"),
                (false, false) => format!("its 95 % interval {iv} lies wholly above {target}"),
                (true, true) => format!("95 % 区间 {iv} 完全低于 {target}"),
                (true, false) => format!("95 % 区间 {iv} 完全高于 {target}"),
            },
            (StepVerdict::Inconclusive, Some(iv)) => {
                if zh {
                    format!("95 % 区间 {iv} 跨越 {target}")
                } else {
                    format!("its 95 % interval {iv} straddles {target}")
                }
            }
            (_, None) => {
                if zh {
                    "没有区间".to_string()
                } else {
                    "no interval".to_string()
                }
            }
        };
        match &r.why {
            Some(why) => format!("{base}; {}", why.get(lang)),
            None => base,
        }
    }
}

/// One figure of a step as shown: its key, name, point value and 95 % interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureRow {
    pub key: &'static str,
    pub name: String,
    pub value: String,
    pub interval: String,
}

/// Why a sweep stops after this step, or `None` when it may go on: the step is saturated when
/// its failure rate's whole 95 % interval lies above `max_failure_rate`, when the client fell
/// behind its open-loop schedule (the server saw less than offered), or when it fails the
/// target with its whole interval. An interrupted step is never judged here.
pub fn saturation(step: &StepResult, target: &Target, max_failure_rate: f64) -> Option<Text> {
    if step.verdict == StepVerdict::Interrupted {
        return None;
    }
    let share = trim_num(max_failure_rate);
    if step
        .failure_rate
        .interval
        .and_then(|b| b.lo)
        .is_some_and(|lo| lo > max_failure_rate)
    {
        Some(Text::new(
            format!("saturated: the failure rate's whole 95 % interval lies above {share}"),
            format!("已饱和：失败率的整个 95 % 区间高于 {share}"),
        ))
    } else if step.client_behind == Some(true) {
        Some(Text::new(
            "saturated: the client fell behind its schedule beyond its bound (the server saw less than offered)",
            "已饱和：客户端落后于计划超出其界限（服务端收到的负载低于所给负载）",
        ))
    } else if step.verdict == StepVerdict::Fails && step.why.is_some() {
        // Failing for a reason other than the load (no rubrics): the stop names it.
        let why = step
            .why
            .as_ref()
            .map(|w| (w.get(Lang::En).to_string(), w.get(Lang::Zh).to_string()))
            .unwrap_or_default();
        Some(Text::new(
            format!(
                "stopped: the step fails the target ({}) but not for its load: {}",
                target.describe(Lang::En),
                why.0
            ),
            format!(
                "已停止：这一步未达到目标（{}），但原因不在负载：{}",
                target.describe(Lang::Zh),
                why.1
            ),
        ))
    } else if step.verdict == StepVerdict::Fails {
        Some(Text::new(
            format!(
                "saturated: the step fails the target ({}) with its whole 95 % interval",
                target.describe(Lang::En)
            ),
            format!(
                "已饱和：这一步的整个 95 % 区间未达到目标（{}）",
                target.describe(Lang::Zh)
            ),
        ))
    } else {
        None
    }
}

/// One step as `sweep.json` links it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepStep {
    pub load: f64,
    /// A file name inside the sweep's folder.
    pub file: String,
    pub interrupted: bool,
}

/// A sweep file (`sweep.json`, docs/trace-format.md): what was varied, the loads asked for and
/// the steps written in order, the target, threshold and comparison the stop rule judged with,
/// why it stopped early, and, for a sweep on the simulator, what was simulated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepFile {
    pub kind: LoadKind,
    /// Every load asked for, increasing (the steps may stop before the last).
    pub loads: Vec<f64>,
    pub steps: Vec<SweepStep>,
    /// sha256 of step 1's conditions without the load (a recorded sweep's; `None` on the simulator).
    pub contract_sha256: Option<String>,
    pub target: Option<String>,
    pub threshold_s: Option<f64>,
    /// `≤` or `<` of that judgement (`None` in files written before it was kept: `≤`).
    pub comparison: Option<Comparison>,
    /// The step after which the sweep stopped early (1-based), and why.
    pub stopped: Option<(u64, String)>,
    /// Stopped by Ctrl-C or SIGTERM.
    pub interrupted: bool,
    /// A sweep on the simulator: its parameters (`SimulatedSweepPlan::record`). `None`: measured.
    pub simulated: Option<serde_json::Value>,
}

impl SweepFile {
    /// Reads `sweep.json` (`name` for the messages). A step's file must be a plain name inside
    /// the folder.
    pub fn parse(name: &str, text: &str) -> Result<SweepFile, Text> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            Text::new(
                format!("{name}: not JSON ({e})"),
                format!("{name}：不是 JSON（{e}）"),
            )
        })?;
        let bad = |field: &str| {
            Text::new(
                format!("{name}: field `{field}` is missing or wrong (a sweep file as `tracelab sweep` writes it)"),
                format!("{name}：字段 `{field}` 缺失或有误（应为 `tracelab sweep` 写出的扫描文件）"),
            )
        };
        if v["tracelab_sweep"].as_u64() != Some(1) {
            return Err(bad("tracelab_sweep"));
        }
        let kind = v["kind"]
            .as_str()
            .and_then(LoadKind::from_code)
            .ok_or_else(|| bad("kind"))?;
        let mut steps = Vec::new();
        for s in v["steps"].as_array().ok_or_else(|| bad("steps"))? {
            let load = s["load"].as_f64().ok_or_else(|| bad("steps[].load"))?;
            let file = s["file"]
                .as_str()
                .filter(|f| !f.is_empty() && !f.contains('/') && !f.contains('\\'))
                .ok_or_else(|| bad("steps[].file"))?;
            steps.push(SweepStep {
                load,
                file: file.to_string(),
                interrupted: s["interrupted"].as_bool().unwrap_or(false),
            });
        }
        if steps.is_empty() {
            return Err(Text::new(
                format!("{name}: the sweep has no finished step"),
                format!("{name}：扫描没有完成的步"),
            ));
        }
        check_loads(&steps.iter().map(|s| s.load).collect::<Vec<_>>())?;
        let loads = match &v["loads"] {
            serde_json::Value::Null => steps.iter().map(|s| s.load).collect(),
            l => l
                .as_array()
                .and_then(|a| a.iter().map(|x| x.as_f64()).collect::<Option<Vec<f64>>>())
                .ok_or_else(|| bad("loads"))?,
        };
        let comparison = match &v["comparison"] {
            serde_json::Value::Null => None,
            c => Some(
                c.as_str()
                    .and_then(Comparison::from_code)
                    .ok_or_else(|| bad("comparison"))?,
            ),
        };
        let simulated = match &v["simulated"] {
            serde_json::Value::Null => None,
            sim @ serde_json::Value::Object(_) => Some(sim.clone()),
            _ => return Err(bad("simulated")),
        };
        let stopped = v["stopped"]["step"].as_u64().map(|n| {
            (
                n,
                v["stopped"]["why"].as_str().unwrap_or_default().to_string(),
            )
        });
        Ok(SweepFile {
            kind,
            loads,
            steps,
            contract_sha256: v["contract_sha256"].as_str().map(String::from),
            target: v["target"].as_str().map(String::from),
            threshold_s: v["threshold_s"].as_f64(),
            comparison,
            stopped,
            interrupted: v["interrupted"].as_bool().unwrap_or(false),
            simulated,
        })
    }

    /// The file as `tracelab sweep` and `tracelab simulate-sweep` write it.
    pub fn to_json(&self) -> String {
        let v = serde_json::json!({
            "tracelab_sweep": 1,
            "kind": self.kind.code(),
            "loads": self.loads,
            "steps": self.steps.iter().map(|s| serde_json::json!({"load": s.load, "file": s.file, "interrupted": s.interrupted})).collect::<Vec<_>>(),
            "contract_sha256": self.contract_sha256,
            "target": self.target,
            "threshold_s": self.threshold_s,
            "comparison": self.comparison.map(Comparison::code),
            "stopped": self.stopped.as_ref().map(|(n, why)| serde_json::json!({"step": n, "why": why})),
            "interrupted": self.interrupted,
            "simulated": self.simulated,
        });
        serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
    }
}

/// A step's file name in a sweep folder: `step-01-rate-2.jsonl`.
pub fn step_file_name(i: usize, kind: LoadKind, load: f64) -> String {
    format!("step-{:02}-{}-{}.jsonl", i + 1, kind.code(), trim_num(load))
}

/// How a simulated sweep loads its server at each step.
#[derive(Debug, Clone, PartialEq)]
pub enum SimulatedLoad {
    /// Open loop at each step's rate (requests per second).
    Rates {
        arrival: ArrivalName,
        burstiness: f64,
    },
    /// Closed loop of each step's number of clients, each waiting `think_s` after a reply.
    Concurrencies { think_s: f64 },
    /// A workload file replayed at each step's speed-up (`replay`'s window and idle cap; its
    /// own speed-up is the step's), with an optional per-token service on top of the draw.
    Speedups {
        workload: Workload,
        replay: Replay,
        tokens: Option<TokenCost>,
    },
    /// Sessions (`crate::simulate::session`) started at each step's rate (sessions per
    /// second); the rest of the conversation and the server from these parameters (their own
    /// rate and seed are replaced at each step).
    Sessions(crate::simulate::session::SessionParams),
}

/// A load sweep on the simulator: one simulated trace per load, the same server at every step.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatedSweepPlan {
    /// Slots, service, first-token share, requests per step (a workload's window sets its own),
    /// the seed of step 1 (step `i`, from 0, uses `seed + i`) and the stall; `load` is replaced
    /// at each step.
    pub server: Params,
    pub load: SimulatedLoad,
    /// Increasing: rates, concurrencies (whole numbers) or speed-ups.
    pub loads: Vec<f64>,
}

/// One step of a simulated sweep: its load, its file name, its trace (successes counted as
/// passing quality) and, for a workload, the replay that fed it.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatedStep {
    pub load: f64,
    pub file: String,
    pub trace: Trace,
    pub replayed: Option<Replayed>,
}

fn sim_error(i: usize, e: SimulateError) -> Text {
    Text::new(
        format!(
            "simulated sweep, step {}: --{}: {}",
            i + 1,
            e.field,
            e.message
        ),
        format!("模拟扫描，第 {} 步：--{}：{}", i + 1, e.field, e.message),
    )
}

impl SimulatedSweepPlan {
    pub fn kind(&self) -> LoadKind {
        match self.load {
            SimulatedLoad::Rates { .. } => LoadKind::Rate,
            SimulatedLoad::Concurrencies { .. } => LoadKind::Concurrency,
            SimulatedLoad::Speedups { .. } => LoadKind::Speedup,
            SimulatedLoad::Sessions(_) => LoadKind::SessionRate,
        }
    }

    /// The loads (increasing; concurrencies whole) and the server's parameters, checked before
    /// any step runs.
    pub fn check(&self) -> Result<(), Text> {
        check_loads(&self.loads)?;
        if let SimulatedLoad::Concurrencies { .. } = self.load {
            if let Some(l) = self
                .loads
                .iter()
                .find(|l| l.fract() != 0.0 || **l > u32::MAX as f64)
            {
                return Err(Text::new(
                    format!(
                        "concurrency {} is not a whole number of clients",
                        trim_num(*l)
                    ),
                    format!("并发 {} 不是整数个客户端", trim_num(*l)),
                ));
            }
        }
        if let SimulatedLoad::Speedups {
            tokens: Some(t), ..
        } = &self.load
        {
            t.check().map_err(|e| sim_error(0, e))?;
        }
        Ok(())
    }

    /// Step `i` (from 0) simulated: the same parameters and seed always give the same trace.
    pub fn step(&self, i: usize) -> Result<SimulatedStep, Text> {
        let load = *self.loads.get(i).ok_or_else(|| {
            Text::new(format!("no step {}", i + 1), format!("没有第 {} 步", i + 1))
        })?;
        let seed = self.server.seed.wrapping_add(i as u64);
        let (mut trace, replayed) = match &self.load {
            SimulatedLoad::Rates {
                arrival,
                burstiness,
            } => {
                let p = Params {
                    load: Load::Open {
                        rate_per_s: load,
                        arrival: *arrival,
                        burstiness: *burstiness,
                    },
                    seed,
                    ..self.server.clone()
                };
                (simulate(&p).map_err(|e| sim_error(i, e))?, None)
            }
            SimulatedLoad::Concurrencies { think_s } => {
                let p = Params {
                    load: Load::Closed {
                        clients: load as u32,
                        think_s: *think_s,
                    },
                    seed,
                    ..self.server.clone()
                };
                (simulate(&p).map_err(|e| sim_error(i, e))?, None)
            }
            SimulatedLoad::Speedups {
                workload,
                replay,
                tokens,
            } => {
                let planned = workload
                    .replay(&Replay {
                        speedup: load,
                        ..*replay
                    })
                    .map_err(|e| {
                        Text::new(
                            format!(
                                "simulated sweep, step {}: --{}: {}",
                                i + 1,
                                e.field,
                                e.message
                            ),
                            format!("模拟扫描，第 {} 步：--{}：{}", i + 1, e.field, e.message),
                        )
                    })?;
                let listed: Vec<Listed> = planned
                    .requests
                    .iter()
                    .map(|r| Listed {
                        at_ms: r.at_ms,
                        input_tokens: r.input_tokens,
                        output_tokens: r.output_tokens,
                    })
                    .collect();
                let p = Params {
                    seed,
                    ..self.server.clone()
                };
                (
                    simulate_listed(&p, &listed, *tokens).map_err(|e| sim_error(i, e))?,
                    Some(planned),
                )
            }
            SimulatedLoad::Sessions(params) => {
                let p = crate::simulate::session::SessionParams {
                    session_rate_per_s: load,
                    seed,
                    ..params.clone()
                };
                (
                    crate::simulate::session::simulate_sessions(&p).map_err(|e| sim_error(i, e))?,
                    None,
                )
            }
        };
        // The simulator writes no answers: every success counts as passing quality, so the
        // joint rate is the share served in time (failures would stay in the denominator).
        trace
            .attempts
            .iter_mut()
            .filter(|a| a.outcome == crate::Outcome::Success)
            .for_each(|a| a.quality = crate::Quality::Pass);
        Ok(SimulatedStep {
            load,
            file: step_file_name(i, self.kind(), load),
            trace,
            replayed,
        })
    }

    /// `sweep.json`'s `simulated`: what every step ran on, and that none was measured.
    pub fn record(&self) -> serde_json::Value {
        let server = simulation_record(&self.server);
        let load = match &self.load {
            SimulatedLoad::Rates {
                arrival,
                burstiness,
            } => {
                serde_json::json!({"kind": "open", "arrival": arrival.name(), "burstiness": burstiness})
            }
            SimulatedLoad::Concurrencies { think_s } => {
                serde_json::json!({"kind": "closed", "think_s": think_s})
            }
            SimulatedLoad::Speedups {
                workload, replay, ..
            } => serde_json::json!({
                "kind": "workload", "file": workload.file, "sha256": workload.sha256, "layout": workload.layout.name(),
                "from_s": replay.from_s, "for_s": replay.for_s, "max_idle_s": replay.max_idle_s,
            }),
            SimulatedLoad::Sessions(p) => serde_json::json!({
                "kind": "sessions", "arrival": "poisson", "sessions": p.sessions, "turns": p.turns,
                "think_s": p.think_s, "new_tokens": p.new_tokens, "output_tokens": p.output_tokens,
                "base_s": p.base_s, "per_uncached_token_s": p.per_uncached_token_s,
                "per_output_token_s": p.per_output_token_s, "cache_tokens": p.cache_tokens,
            }),
        };
        let tokens = match &self.load {
            SimulatedLoad::Speedups { tokens, .. } => *tokens,
            _ => None,
        };
        serde_json::json!({
            "measured": false,
            "what": "every step was simulated by tracelab's simulator, not measured on a server",
            "slots": server.slots,
            "service": server.service,
            "first_token_share": server.first_token_share,
            "tokens": tokens,
            "load": load,
            "requests_per_step": match &self.load {
                SimulatedLoad::Speedups { .. } => None,
                SimulatedLoad::Sessions(p) => Some(p.sessions.saturating_mul(p.turns)),
                _ => Some(self.server.requests),
            },
            "seed": self.server.seed,
            "seeds": "step i (from 1) uses seed + i - 1",
            "stall": server.stall,
            "quality": "every simulated success counts as passing quality: the simulator writes no answers",
        })
    }
}

/// An open-loop sweep on the simulator (M/M/c: Poisson arrivals, exponential service), so the
/// capacity answer can be shown with no server (the capacity page's simulator).
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatedSweep {
    pub slots: u32,
    pub mean_service_s: f64,
    /// Requests per second, increasing.
    pub rates: Vec<f64>,
    pub requests_per_step: u32,
    pub seed: u64,
}

impl SimulatedSweep {
    /// The same sweep as a [`SimulatedSweepPlan`].
    pub fn plan(&self) -> SimulatedSweepPlan {
        SimulatedSweepPlan {
            server: Params {
                slots: self.slots,
                service: Service::Exponential {
                    mean_s: self.mean_service_s,
                },
                first_token_share: DEFAULT_FIRST_TOKEN_SHARE,
                load: Load::Open {
                    rate_per_s: 1.0,
                    arrival: ArrivalName::Poisson,
                    burstiness: 1.0,
                },
                requests: self.requests_per_step,
                seed: self.seed,
                stall: None,
            },
            load: SimulatedLoad::Rates {
                arrival: ArrivalName::Poisson,
                burstiness: 1.0,
            },
            loads: self.rates.clone(),
        }
    }

    /// One simulated trace per rate (seed + step index), named as `tracelab sweep` names its
    /// files; every step, with no early stop.
    pub fn run(&self) -> Result<Vec<(f64, String, Trace)>, Text> {
        let plan = self.plan();
        plan.check()?;
        (0..plan.loads.len())
            .map(|i| plan.step(i).map(|s| (s.load, s.file, s.trace)))
            .collect()
    }
}
