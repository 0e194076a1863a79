//! The metric card as plain text: every figure with its numerator, denominator, unit and method,
//! plus the conditions a reader needs to recompute it. `tracelab report` prints this.

use crate::baseline::{BaselineVerdict, OtherRuns, RunEvidence};
use crate::compare::Intervals;
use crate::engine_beside::{ClientP50, EngineSummary};
use crate::figure::Figure;
use crate::format::{self, trim_num};
use crate::gpu_beside::GpuSummary;
use crate::index::Index;
use crate::lag::ClientLag;
use crate::metrics::Metrics;
use crate::reuse::ReuseSplit;
use crate::settings::Settings;
use crate::text::Lang;
use crate::trace::{Completeness, Header, Trace, GPU_UNSUPPORTED};

/// What the terminal card shows besides the figures, taken from a whole [`Trace`]
/// ([`CardView::of_trace`]) or from a trace read as a stream ([`crate::streamed`]).
pub struct CardView<'a> {
    pub header: &'a Header,
    pub completeness: Completeness,
    pub lag: Option<ClientLag>,
    pub gpu: GpuSummary,
    /// The serving engine's own signals beside the slow attempts.
    pub engine: EngineSummary,
    /// The index the figures came from (the card's intervals are computed from it).
    pub index: &'a Index,
    pub warnings: &'a [String],
    /// TTFT by a prompt's first send and its repeats, when the attempts say which they were.
    pub reuse: Option<ReuseSplit>,
    /// Warm-up attempts in the trace (the baseline's second check).
    pub warmup_attempts: usize,
}

impl<'a> CardView<'a> {
    pub fn of_trace(trace: &'a Trace, settings: &Settings, index: &'a Index) -> CardView<'a> {
        CardView {
            header: &trace.header,
            completeness: trace.completeness(),
            lag: crate::lag::client_lag(trace),
            gpu: crate::gpu_beside::gpu_beside(trace, settings).summary(),
            engine: crate::engine_beside::engine_beside(trace, settings),
            index,
            warnings: &trace.warnings,
            reuse: crate::reuse::reuse_split(&trace.attempts, settings),
            warmup_attempts: trace.warmup_count(),
        }
    }
}

/// The lines above the figures, shared by the terminal card and the exports (Markdown, JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct CardHead {
    /// "Metric card — {source}".
    pub title: String,
    /// Where the clock was read.
    pub observation: String,
    /// Attempts counted, successes, failures by outcome, warm-up excluded.
    pub attempts: String,
    /// Threshold, window, cost, percentile method, failure denominator.
    pub settings: String,
    /// Complete or not, and what GPU telemetry could be read.
    pub trace: String,
}

/// Builds the lines above the figures.
pub fn head(
    source: &str,
    trace: &Trace,
    settings: &Settings,
    metrics: &Metrics,
    lang: Lang,
) -> CardHead {
    head_of(
        source,
        &trace.header,
        trace.completeness(),
        settings,
        metrics,
        lang,
    )
}

/// [`head`] from the header and completeness alone.
pub fn head_of(
    source: &str,
    header: &Header,
    completeness: Completeness,
    settings: &Settings,
    metrics: &Metrics,
    lang: Lang,
) -> CardHead {
    let zh = lang == Lang::Zh;
    let title = if zh {
        format!("指标口径卡 — {source}")
    } else {
        format!("Metric card — {source}")
    };
    let observation = if zh {
        format!("观测点：{}", observation_point(lang))
    } else {
        format!("Observation point: {}", observation_point(lang))
    };
    let attempts = if zh {
        format!("尝试：{}", attempts_summary(metrics, lang))
    } else {
        format!("Attempts: {}", attempts_summary(metrics, lang))
    };
    let window = settings
        .window_s
        .map(|w| format!("{} s", trim_num(w)))
        .unwrap_or_else(|| "—".into());
    let cost = settings
        .window_cost
        .map(|c| {
            format!("{} {}", trim_num(c), settings.currency)
                .trim_end()
                .to_string()
        })
        .unwrap_or_else(|| "—".into());
    let settings_line = if zh {
        format!(
            "设置：TTFT {} {} 秒 · 窗口 {window} · 窗口成本 {cost} · 分位数方法 {} · 失败率分母 {}",
            settings.comparison.symbol(),
            trim_num(settings.ttft_threshold_s),
            settings.percentile.name().zh,
            crate::settings::pair_value_label("fd", settings.population.failure_denominator.code())
                .zh
        )
    } else {
        format!(
            "Settings: TTFT {} {} s · window {window} · window cost {cost} · percentile {} · failure denominator {}",
            settings.comparison.symbol(),
            trim_num(settings.ttft_threshold_s),
            settings.percentile.code(),
            settings.population.failure_denominator.code()
        )
    };
    // Where TTFT and E2E start, wherever the two origins can differ, with the attempts that
    // had no intended start to measure from.
    let origin = settings.population.latency_from;
    let settings_line =
        if origin == crate::trace::LatencyOrigin::Intended || metrics.late_starts > 0 {
            let fallbacks = metrics.origin_fallbacks;
            let n = format::integer(fallbacks as u64);
            let fallback = match (fallbacks, zh) {
                (0, _) => String::new(),
                (_, true) => format!("（{n} 个尝试没有计划开始时间，从实际开始时间算起）"),
                (1, false) => " (1 attempt had no intended start: from its actual start)".into(),
                (_, false) => {
                    format!(" ({n} attempts had no intended start: from their actual start)")
                }
            };
            if zh {
                format!("{settings_line} · 时延{}{fallback}", origin.text().zh)
            } else {
                format!("{settings_line} · latency {}{fallback}", origin.text().en)
            }
        } else {
            settings_line
        };
    let gpu = &header.capabilities.gpu_telemetry;
    let gpu = if gpu == GPU_UNSUPPORTED {
        if zh {
            "不支持 — 未验证".to_string()
        } else {
            "unsupported — not verified".to_string()
        }
    } else {
        gpu.clone()
    };
    let completeness = completeness.text();
    let completeness = completeness.get(if zh { Lang::Zh } else { Lang::En });
    let trace_line = if zh {
        format!("记录：{completeness} · GPU 遥测：{gpu}")
    } else {
        format!("Trace: {completeness} · GPU telemetry: {gpu}")
    };
    CardHead {
        title,
        observation,
        attempts,
        settings: settings_line,
        trace: trace_line,
    }
}

/// Where the clock was read, without the card's label (the head's "Observation point" line).
pub fn observation_point(lang: Lang) -> String {
    match lang {
        Lang::Zh => "客户端（请求开始 → 第一个非空 token → 流结束）".into(),
        Lang::En => "client (request start → first non-empty token → end of stream)".into(),
    }
}

/// Attempts counted, successes, failures by outcome, warm-up excluded, without the card's label
/// (the head's "Attempts" line).
pub fn attempts_summary(metrics: &Metrics, lang: Lang) -> String {
    let failures = if metrics.failures_by_outcome.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = metrics
            .failures_by_outcome
            .iter()
            .map(|(o, n)| format!("{o} {}", format::integer(*n as u64)))
            .collect();
        format!(" ({})", parts.join(", "))
    };
    let no_token = format::integer(metrics.successes_without_token as u64);
    let has_no_token = metrics.successes_without_token > 0;
    let int = |n: usize| format::integer(n as u64);
    match lang {
        Lang::Zh => {
            let no_token = if has_no_token {
                format!("（其中 {no_token} 个没有任何输出 token）")
            } else {
                String::new()
            };
            format!(
                "计入 {} 次 — 完整成功 {}{no_token}，失败 {}{failures}；排除的预热 {}",
                int(metrics.attempts),
                int(metrics.successes),
                int(metrics.failures),
                int(metrics.warmup_excluded)
            )
        }
        Lang::En => {
            let no_token = if has_no_token {
                format!(" ({no_token} with no output token)")
            } else {
                String::new()
            };
            format!(
                "{} counted — {}{no_token}, {}{failures}; warm-up excluded: {}",
                int(metrics.attempts),
                format::count(metrics.successes, "complete success", "complete successes"),
                format::count(metrics.failures, "failure", "failures"),
                int(metrics.warmup_excluded)
            )
        }
    }
}

/// Every figure of the card with its 95 % interval, for machines: the bounds (a side that does
/// not exist is `null`, with the note saying why and what n would close it), the method, and
/// for a figure that has no interval at all, `null` and the reason. Nothing is left out.
pub fn intervals_json(metrics: &Metrics, intervals: &Intervals) -> serde_json::Value {
    intervals_json_keyed(metrics, intervals, &|k| k.to_string())
}

/// [`intervals_json`] with each figure under the key `key` gives it (`report --json` keys its
/// intervals as its figures: [`Metrics::summary_key`]); P95 TTFT is there even when the tail is
/// another percentile.
pub fn intervals_json_keyed(
    metrics: &Metrics,
    intervals: &Intervals,
    key: &dyn Fn(&str) -> String,
) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    let mut all: Vec<&Figure> = figures(metrics).to_vec();
    all.insert(1, &metrics.ttft_p95);
    for f in all {
        let value = match intervals.get(&f.key) {
            Some(iv) => serde_json::json!({
                "lo": iv.bounds.lo,
                "hi": iv.bounds.hi,
                "unit": f.unit,
                "method": iv.method,
                "method_text": crate::text::Text::new(iv.method.describe(Lang::En), iv.method.describe(Lang::Zh)),
                "note": iv.note,
                "dependence": iv.dependence,
                "dependence_text": iv.dependence_text(Lang::En).zip(iv.dependence_text(Lang::Zh)).map(|(en, zh)| crate::text::Text::new(en, zh)),
            }),
            None => {
                let why = no_interval(f);
                serde_json::json!({ "lo": null, "hi": null, "unit": f.unit, "method": null, "note": why })
            }
        };
        out.entry(key(&f.key)).or_insert(value);
    }
    serde_json::Value::Object(out)
}

/// Settings that cannot mean what they seem on this trace: a threshold no TTFT can meet, a
/// window shorter than the run it counts over.
pub fn setting_warnings(index: &Index, settings: &Settings) -> Vec<crate::text::Text> {
    let mut out = Vec::new();
    if settings.ttft_threshold_s <= 0.0 && settings.comparison == crate::Comparison::Lt {
        out.push(crate::text::Text::new(
            "TTFT < 0 s can never hold: no attempt can qualify, whatever the server did (use ≤, or a threshold above 0)",
            "TTFT < 0 秒永远不成立：无论服务端表现如何，都没有尝试能合格（请用 ≤，或大于 0 的阈值）",
        ));
    }
    if let (Some(w), Some(span)) = (settings.window_s, index.start_span_ms()) {
        if w * 1000.0 < span {
            let (w, span) = (
                trim_num(w),
                trim_num((span / 1000.0 * 100.0).round() / 100.0),
            );
            out.push(crate::text::Text::new(
                format!("the window ({w} s) is shorter than the run (attempts started over {span} s): goodput and cost count every qualified attempt of the run over the window, so goodput reads too high; give the run's own window"),
                format!("窗口（{w} 秒）比运行短（尝试的开始时间跨越 {span} 秒）：goodput 和成本把整个运行里的合格尝试都算进这个窗口，goodput 会偏高；请给出运行自己的窗口"),
            ));
        }
    }
    out
}

/// One line for the figures whose attempts pass as independent draws (the correlated ones each
/// have their own line): what was checked, or why nothing could be.
pub fn independence_line(intervals: &Intervals, lang: Lang) -> Option<String> {
    use crate::compare::Independence as I;
    let deps: Vec<&crate::compare::Dependence> = intervals
        .items
        .iter()
        .filter_map(|i| i.dependence.as_ref())
        .collect();
    let all = |v: I| !deps.is_empty() && deps.iter().all(|d| d.verdict == v);
    let zh = lang == Lang::Zh;
    if deps.is_empty() || deps.iter().all(|d| d.widens()) {
        None
    } else if all(I::NoStartTimes) {
        Some(if zh { "独立性：trace 没有开始时间，不知道各次尝试的先后，每个区间都假定它们相互独立" } else { "Independence: the trace has no start times, so the attempts' order is unknown; every interval assumes they are independent" }.into())
    } else if deps
        .iter()
        .all(|d| matches!(d.verdict, I::Unchecked | I::NoStartTimes))
    {
        let n = format::integer(deps.iter().map(|d| d.n).max().unwrap_or(0) as u64);
        let min = crate::compare::dependence::MIN_SERIES;
        Some(if zh {
            format!("独立性：只有 {n} 个样本，太少（少于 {min} 个），无法检验它们按开始时间是否相关；每个区间都假定各次尝试相互独立")
        } else {
            format!("Independence: {n} samples are too few (under {min}) to check whether they are correlated in start order; every interval assumes independent attempts")
        })
    } else {
        Some(if zh {
            let rest = if deps.iter().any(|d| d.widens()) {
                "其余指标"
            } else {
                "每个指标"
            };
            format!("独立性：{rest}按开始时间排列的批均值未能否定独立性，沿用精确区间")
        } else {
            let rest = if deps.iter().any(|d| d.widens()) {
                "the other figures"
            } else {
                "every figure"
            };
            format!("Independence: for {rest}, batch means of the attempts in start order did not reject independence; their exact intervals stand")
        })
    }
}

/// Why a figure has no 95 % interval.
pub fn no_interval(f: &Figure) -> crate::text::Text {
    if f.key.starts_with("itl") {
        crate::text::Text::new(
            "no interval: the gaps within one stream are not independent samples, which an order-statistic interval needs",
            "没有区间：同一条流里的间隔不是独立样本，而次序统计量区间需要独立样本",
        )
    } else if f.key == "output_tokens_per_s" {
        crate::text::Text::new(
            "no interval: tokens of one request are not independent of each other, so a count interval would be too narrow",
            "没有区间：同一个请求的 token 彼此不独立，计数区间会偏窄",
        )
    } else if f.value.is_none() {
        crate::text::Text::new(
            "no interval: the figure itself is undefined",
            "没有区间：这个指标本身没有定义",
        )
    } else {
        crate::text::Text::new(
            "no interval: it needs a fixed window (goodput and cost are per window)",
            "没有区间：需要固定窗口（goodput 与成本按窗口计）",
        )
    }
}

/// A figure's 95 % interval in words ("95 % interval 0.3 s … 0.5 s (order statistics…)"), or
/// why it has none: what a card writes beside the value.
pub fn interval_text(f: &Figure, intervals: &Intervals, lang: Lang) -> String {
    match intervals.get(&f.key) {
        Some(iv) => iv.describe(&f.unit, lang),
        None => no_interval(f).get(lang).to_string(),
    }
}

/// The figures of the full card, in reading order (the terminal card and the exports).
pub fn figures(metrics: &Metrics) -> [&Figure; 12] {
    [
        &metrics.ttft_p50,
        &metrics.ttft_tail,
        &metrics.failure_rate,
        &metrics.quality_pass_rate,
        &metrics.joint_rate,
        &metrics.goodput,
        &metrics.cost_per_1000_qualified,
        &metrics.e2e_p50,
        &metrics.e2e_tail,
        &metrics.itl_p50,
        &metrics.output_tokens_per_s,
        &metrics.business_success_rate,
    ]
}

/// How a figure was computed: "failures / all attempts = 2 / 10; nearest-rank: …, n = 8".
pub fn figure_detail(f: &Figure, lang: Lang) -> String {
    let mut detail = Vec::new();
    if let Some(formula) = format::formula(f, lang) {
        detail.push(formula);
    }
    if f.value.is_some() || f.n.is_some() {
        detail.extend(format::method_line(f, lang));
    }
    detail.join("; ")
}

/// Renders the card for a terminal.
pub fn render_text(
    source: &str,
    trace: &Trace,
    settings: &Settings,
    metrics: &Metrics,
    lang: Lang,
) -> String {
    let index = crate::Index::build(&trace.attempts, settings.population);
    render(
        source,
        &CardView::of_trace(trace, settings, &index),
        settings,
        metrics,
        lang,
    )
}

/// Renders the card for a terminal from a [`CardView`] (`metrics` computed from its index).
pub fn render(
    source: &str,
    view: &CardView,
    settings: &Settings,
    metrics: &Metrics,
    lang: Lang,
) -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    let head = head_of(
        source,
        view.header,
        view.completeness,
        settings,
        metrics,
        lang,
    );
    line(head.title);
    line(head.observation);
    line(head.attempts);
    line(head.settings);
    line(head.trace);
    if let Some(simulation) = &view.header.simulation {
        line(match simulation.read() {
            Ok(s) => s.describe(lang),
            Err(e) => format!(
                "{}: {e}",
                crate::text::Text::new("simulated", "模拟").get(lang)
            ),
        });
    }
    // Each figure's 95 % interval (crate::compare), from the same attempts and settings.
    let intervals = crate::compare::Intervals::compute(view.index, settings, metrics);
    view_run_checks(view, settings, metrics, &intervals, lang)
        .into_iter()
        .for_each(&mut line);
    line(String::new());
    let figures = figures(metrics);
    let width = figures
        .iter()
        .map(|f| display_width(f.name.get(lang)))
        .max()
        .unwrap_or(0);
    for f in figures {
        let name = f.name.get(lang);
        let pad = " ".repeat(width.saturating_sub(display_width(name)));
        let value = format::value(f, lang);
        let detail = figure_detail(f, lang);
        line(
            format!("  {name}{pad}  {value:<12} {detail}")
                .trim_end()
                .to_string(),
        );
        if let Some(remark) = format::remark(f, lang) {
            line(format!("  {}  ↳ {remark}", " ".repeat(width)));
        }
        if let Some(iv) = intervals.get(&f.key) {
            line(format!(
                "  {}  ± {}",
                " ".repeat(width),
                iv.describe(&f.unit, lang)
            ));
            if let (false, Some(note)) = (iv.bounds.is_closed(), &iv.note) {
                line(format!("  {}    {}", " ".repeat(width), note.get(lang)));
            }
            if let Some(text) = iv
                .dependence
                .as_ref()
                .filter(|d| d.widens())
                .and(iv.dependence_text(lang))
            {
                line(format!("  {}    {text}", " ".repeat(width)));
            }
        }
    }
    if let Some(text) = independence_line(&intervals, lang) {
        line(format!("  {text}"));
    }
    let acf = crate::compare::dependence::autocorrelations(
        view.index,
        crate::units::ms_from_s(settings.ttft_threshold_s),
        settings.comparison,
    );
    if let Some(text) = crate::compare::dependence::autocorrelation_line(&acf, lang) {
        line(format!("  {text}"));
    }
    line(format!(
        "  {}",
        if lang == Lang::Zh {
            "每个区间都来自这一次运行自己的尝试；同一契约下多次独立运行给出运行之间的区间（tracelab record --runs R，或 tracelab compare A1 A2 --vs B1 B2）"
        } else {
            "Each interval comes from this run's own attempts; independent runs under one contract give an interval between runs (tracelab record --runs R, or tracelab compare A1 A2 --vs B1 B2)"
        }
    ));
    let mistakes = settings.mistakes();
    let odd = setting_warnings(view.index, settings);
    if !mistakes.is_empty() || !odd.is_empty() {
        line(String::new());
        for m in mistakes {
            line(format!(
                "⚠ {} — {}",
                m.label.get(lang),
                m.false_conclusion.get(lang)
            ));
        }
        for w in odd {
            line(format!("⚠ {}", w.get(lang)));
        }
    }
    for w in view.warnings {
        line(format!("note: {w}"));
    }
    out
}

/// Terminal columns: CJK characters take two.
fn display_width(s: &str) -> usize {
    s.chars()
        .map(|c| {
            if ('\u{1100}'..='\u{ffdc}').contains(&c) && !('\u{2000}'..='\u{2bff}').contains(&c) {
                2
            } else {
                1
            }
        })
        .sum()
}

/// The card's lines about the run itself, beside its figures: the recorder's own share
/// (`crate::client`: connections, resends, requests never sent, its timing error), how late an
/// open-loop client started its requests (`crate::lag`), and the GPU beside the slow attempts
/// (`crate::gpu_beside`; "unverified" without telemetry). The terminal card and the lab show
/// these; `metrics` (the figures under the same settings) lets the timing error be weighed
/// against the run's ITL.
pub fn run_checks(
    trace: &Trace,
    settings: &Settings,
    figures: Option<(&Metrics, &Intervals)>,
    lang: Lang,
) -> Vec<String> {
    run_checks_held(trace, &RunFacts::of(trace), settings, figures, lang)
}

/// What the run checks read from a trace that no setting changes, each a pass over every
/// attempt: a page that holds the trace across edits finds them once, not on every edit (at
/// 1,000,000 attempts, about 40 ms of each threshold edit).
#[derive(Debug, Clone)]
pub struct RunFacts {
    /// How late an open-loop client started its requests (`lag::client_lag`).
    pub lag: Option<crate::lag::ClientLag>,
    pub warmup_attempts: usize,
    /// Some attempt says which prompt it sent (the first-send / repeat split needs one).
    pub says_prompts: bool,
    /// Some attempt is a turn of a session (without one the session figures have nothing to
    /// count, and a held trace's threshold edit skips a pass over every attempt for them).
    pub says_sessions: bool,
}

impl RunFacts {
    pub fn of(trace: &Trace) -> RunFacts {
        RunFacts {
            lag: crate::lag::client_lag(trace),
            warmup_attempts: trace.warmup_count(),
            says_prompts: trace.attempts.iter().any(|a| a.prompt.is_some()),
            says_sessions: trace.attempts.iter().any(|a| a.session.is_some()),
        }
    }
}

/// [`run_checks`] with the trace's [`RunFacts`] already found.
pub fn run_checks_held(
    trace: &Trace,
    facts: &RunFacts,
    settings: &Settings,
    figures: Option<(&Metrics, &Intervals)>,
    lang: Lang,
) -> Vec<String> {
    let gpu = crate::gpu_beside::gpu_beside(trace, settings).summary();
    let engine = crate::engine_beside::engine_beside(trace, settings);
    let reuse = facts
        .says_prompts
        .then(|| crate::reuse::reuse_split(&trace.attempts, settings))
        .flatten();
    let checks = RunChecks {
        lag: facts.lag.as_ref(),
        gpu: &gpu,
        engine: &engine,
        reuse: reuse.as_ref(),
        warmup_attempts: facts.warmup_attempts,
    };
    run_check_lines(&trace.header, &checks, settings, figures, lang)
}

/// What served the run, as the server said (the contract's runtime), or nothing when the
/// header does not record it. A value the server did not give reads "unknown".
fn runtime_line(header: &Header, lang: Lang) -> Option<String> {
    let r = header.conditions.runtime.as_ref()?;
    let zh = lang == Lang::Zh;
    let unknown = if zh { "未知" } else { "unknown" };
    let v = |x: &Option<String>| x.clone().unwrap_or_else(|| unknown.to_string());
    let context = r
        .max_context
        .map_or_else(|| unknown.to_string(), |c| c.to_string());
    let reuse = header.conditions.prefix_reuse.as_ref();
    let reuse_en = reuse
        .map(|p| {
            format!(
                " · prompts repeated: {} · cache before the run: {}",
                if p.by_design { "yes" } else { "no" },
                p.before_run
            )
        })
        .unwrap_or_default();
    let reuse_zh = reuse
        .map(|p| {
            format!(
                " · 提示重复发送：{} · 运行前的缓存：{}",
                if p.by_design { "是" } else { "否" },
                p.before_run
            )
        })
        .unwrap_or_default();
    Some(if zh {
        format!(
            "运行时（服务端自述）：引擎 {} {} · 模型 {} · 上下文 {context}{reuse_zh}",
            v(&r.engine),
            v(&r.engine_version),
            v(&r.model_id)
        )
    } else {
        format!(
            "Runtime (as the server said): {} {} · model {} · context {context}{reuse_en}",
            v(&r.engine),
            v(&r.engine_version),
            v(&r.model_id)
        )
    })
}

/// The run checks of a [`CardView`] (the terminal card's lines, and `report --json`'s).
pub fn view_run_checks(
    view: &CardView,
    settings: &Settings,
    metrics: &Metrics,
    intervals: &Intervals,
    lang: Lang,
) -> Vec<String> {
    let checks = RunChecks {
        lag: view.lag.as_ref(),
        gpu: &view.gpu,
        engine: &view.engine,
        reuse: view.reuse.as_ref(),
        warmup_attempts: view.warmup_attempts,
    };
    run_check_lines(
        view.header,
        &checks,
        settings,
        Some((metrics, intervals)),
        lang,
    )
}

/// What the run checks read besides the header.
struct RunChecks<'a> {
    lag: Option<&'a ClientLag>,
    gpu: &'a GpuSummary,
    engine: &'a EngineSummary,
    reuse: Option<&'a ReuseSplit>,
    warmup_attempts: usize,
}

/// The five checks on one run alone (no base, no reruns), from what the card reads.
pub fn baseline_alone(
    header: &Header,
    warmup_attempts: usize,
    settings: &Settings,
    metrics: &Metrics,
    intervals: &Intervals,
    gpu: &GpuSummary,
    engine: &EngineSummary,
) -> BaselineVerdict {
    let run = RunEvidence {
        header,
        warmup_attempts,
        settings,
        metrics,
        intervals,
        gpu,
        engine,
    };
    crate::baseline::baseline_checks(&run, &OtherRuns::default())
}

fn run_check_lines(
    header: &Header,
    checks: &RunChecks,
    settings: &Settings,
    figures: Option<(&Metrics, &Intervals)>,
    lang: Lang,
) -> Vec<String> {
    let itl_p50_s = figures.and_then(|(m, _)| m.itl_p50.value);
    let client_p50 = figures.and_then(|(m, iv)| {
        let bounds = iv.get(&m.ttft_p50.key).map(|i| i.bounds);
        Some(ClientP50 {
            value: m.ttft_p50.value?,
            lo: bounds.and_then(|b| b.lo),
            hi: bounds.and_then(|b| b.hi),
        })
    });
    let mut lines = runtime_line(header, lang).into_iter().collect::<Vec<_>>();
    lines.extend(crate::client::card_lines(header, settings, itl_p50_s, lang));
    lines.extend(checks.lag.map(|l| l.card_lines(lang)).unwrap_or_default());
    lines.push(checks.gpu.card_line(settings, lang));
    if crate::engine_beside::has_engine(header) {
        lines.extend(checks.engine.card_lines(settings, client_p50, lang));
    }
    if let Some(reuse) = checks.reuse {
        lines.extend(reuse.card_lines(lang));
    }
    if let Some((metrics, intervals)) = figures {
        let verdict = baseline_alone(
            header,
            checks.warmup_attempts,
            settings,
            metrics,
            intervals,
            checks.gpu,
            checks.engine,
        );
        lines.extend(verdict.lines(lang));
    }
    lines
}

/// [`run_checks`] for a trace whose attempts are kept apart from it (the lab keeps them so):
/// they are copied in only when a check reads them, an open-loop run or one with GPU samples.
pub fn run_checks_apart(
    trace: &Trace,
    attempts: &[crate::trace::Attempt],
    settings: &Settings,
    figures: Option<(&Metrics, &Intervals)>,
    lang: Lang,
) -> Vec<String> {
    let open_loop = crate::lag::is_open_loop(&trace.header);
    let reads_attempts = open_loop
        || !trace.gpu.is_empty()
        || !trace.engine.is_empty()
        || attempts
            .iter()
            .any(|a| a.prompt.is_some() || a.phase == crate::trace::Phase::Warmup);
    if !reads_attempts {
        return run_checks(trace, settings, figures, lang);
    }
    let mut whole = trace.clone();
    whole.attempts = attempts.to_vec();
    run_checks(&whole, settings, figures, lang)
}
