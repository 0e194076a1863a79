//! Comparing runs honestly. [`check_contract`] says whether two runs were measured under the same
//! conditions; [`Intervals`] gives each figure of one run its 95 % interval; [`diff_rows`] judges
//! each figure's difference ("slower beyond noise", "too few samples to tell", …); [`reruns`]
//! checks that three or more reruns agree; [`running`] gives the running tally its intervals. `tracelab compare` and the lab's compare view both
//! print [`Report`].

pub mod contract;
pub mod dependence;
pub mod diff;
pub mod replications;
pub mod reruns;
pub mod running;
pub mod stats;
pub mod uncertainty;

use serde::Serialize;

pub use contract::{
    check_contract, check_contract_varying, vary_fields, ContractCheck, ContractDiff,
    ContractStatus, Strictness, CONTRACT_FIELDS, VARY_GROUPS,
};
pub use dependence::{Dependence, Independence};
pub use diff::{
    bootstrap_difference, diff_rows, verdict_rule, Bootstrap, DiffRow, Judgement, Resolve, Side,
    Worse,
};
pub use reruns::{reruns, spreads, Agreement, Reruns, Spread};
pub use running::{prefix_index, running, running_over, Running, RunningFigure};
pub use stats::{Bounds, CONFIDENCE};
pub use uncertainty::{bounds_text, quantile, FigureInterval, IntervalMethod, Intervals, Readings};

use crate::format::trim_num;
use crate::index::Index;
use crate::metrics::Metrics;
use crate::settings::Settings;
use crate::text::{Lang, Text};
use crate::trace::Trace;

/// One run, ready to compare.
pub struct Run {
    pub name: String,
    pub trace: Trace,
    pub index: Index,
    pub settings: Settings,
    pub metrics: Metrics,
    pub intervals: Intervals,
}

impl Run {
    /// Judges `trace` with `settings`.
    pub fn new(name: impl Into<String>, trace: Trace, settings: Settings) -> Run {
        let index = Index::build(&trace.attempts, settings.population);
        let metrics = Metrics::compute(&index, &settings);
        let intervals = Intervals::compute(&index, &settings, &metrics);
        Run {
            name: name.into(),
            trace,
            index,
            settings,
            metrics,
            intervals,
        }
    }

    fn side(&self) -> Side<'_> {
        Side {
            index: &self.index,
            settings: &self.settings,
            metrics: &self.metrics,
            intervals: &self.intervals,
        }
    }
}

/// The judgement settings every run is held to: the base's threshold, comparison, percentile and
/// population. Window and cost stay each run's own. Returns notes for what was overridden.
pub fn judge_alike(base: &Settings, mut other: Settings) -> (Settings, Vec<Text>) {
    let mut notes = Vec::new();
    if other.ttft_threshold_s != base.ttft_threshold_s || other.comparison != base.comparison {
        let asks = format!(
            "{} {}",
            other.comparison.symbol(),
            trim_num(other.ttft_threshold_s)
        );
        let judged = format!(
            "{} {}",
            base.comparison.symbol(),
            trim_num(base.ttft_threshold_s)
        );
        notes.push(Text::new(
            format!(
                "this run asks for TTFT {asks} s; both runs are judged with the base's {judged} s"
            ),
            format!("这次运行要求 TTFT {asks} 秒；两次运行都按基线的 {judged} 秒评判"),
        ));
    }
    other.ttft_threshold_s = base.ttft_threshold_s;
    other.comparison = base.comparison;
    other.slo_comparison = base.slo_comparison;
    other.percentile = base.percentile;
    other.p = base.p;
    other.population = base.population;
    (other, notes)
}

/// One later run against the base.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    pub base: String,
    pub new: String,
    pub contract: ContractCheck,
    pub rows: Vec<DiffRow>,
}

/// Everything `tracelab compare` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub confidence: f64,
    pub bootstrap: Bootstrap,
    pub pairs: Vec<Pair>,
    pub reruns: Option<Reruns>,
    /// Which token started TTFT in every run (the base's choice).
    pub first_token: crate::trace::FirstToken,
    /// Where TTFT and E2E were measured from in every run (the base's choice).
    pub latency_from: crate::trace::LatencyOrigin,
    /// What the comparison set out to change (`--vary`); empty for reruns of one contract.
    pub varied: Vec<String>,
}

impl Report {
    /// Compares every run after the first with the first; with three or more runs, also checks
    /// how the reruns spread.
    pub fn build(runs: &[Run], boot: Bootstrap) -> Report {
        Report::build_varying(runs, boot, &[]).expect("nothing to vary")
    }

    /// [`Report::build`] for a comparison made to change `vary` (e.g. `runtime`): that condition
    /// is the variable under test, any other difference still breaks the contract. Errs naming
    /// what can be varied when `vary` names no condition.
    pub fn build_varying(runs: &[Run], boot: Bootstrap, vary: &[String]) -> Result<Report, String> {
        let mut pairs = Vec::new();
        if let Some((base, rest)) = runs.split_first() {
            for new in rest {
                let contract = check_contract_varying(&base.trace.header, &new.trace.header, vary)?;
                let rows = diff_rows(&base.side(), &new.side(), boot, contract.is_broken());
                pairs.push(Pair {
                    base: base.name.clone(),
                    new: new.name.clone(),
                    contract,
                    rows,
                });
            }
        }
        let indexes: Vec<&Index> = runs.iter().map(|r| &r.index).collect();
        let (p, method) = runs
            .first()
            .map(|r| (r.settings.p, r.settings.percentile))
            .unwrap_or((95.0, Default::default()));
        let first_token = runs
            .first()
            .map(|r| r.settings.population.first_token)
            .unwrap_or_default();
        let latency_from = runs
            .first()
            .map(|r| r.settings.population.latency_from)
            .unwrap_or_default();
        Ok(Report {
            confidence: CONFIDENCE,
            bootstrap: boot,
            pairs,
            reruns: reruns(&indexes, p, method),
            first_token,
            latency_from,
            varied: vary.to_vec(),
        })
    }

    /// Whether any pair was measured under a broken contract.
    pub fn contract_broken(&self) -> bool {
        self.pairs.iter().any(|p| p.contract.is_broken())
    }

    /// The report for a terminal.
    pub fn render_text(&self, lang: Lang) -> String {
        let mut out = String::new();
        let zh = lang == Lang::Zh;
        out.push_str(&format!(
            "{}: {}\n",
            if zh {
                "TTFT 的首个 token"
            } else {
                "TTFT's first token"
            },
            self.first_token.text().get(lang)
        ));
        // Said before every figure: a difference between runs measured from different origins
        // would be the client's schedule, not the server.
        out.push_str(&format!(
            "{}: {}\n\n",
            if zh {
                "时延的起点"
            } else {
                "Latency measured"
            },
            self.latency_from.text().get(lang)
        ));
        for pair in &self.pairs {
            out.push_str(&if zh {
                format!("比较：基线 {} → 新 {}\n", pair.base, pair.new)
            } else {
                format!("Compare: base {} → new {}\n", pair.base, pair.new)
            });
            for l in pair.contract.lines(lang) {
                out.push_str(&l);
                out.push('\n');
            }
            out.push('\n');
            let header = if zh {
                [
                    "指标",
                    "基线",
                    "新",
                    "差值（新 − 基线）",
                    "95 % 区间",
                    "结论",
                ]
            } else {
                [
                    "figure",
                    "base",
                    "new",
                    "difference (new − base)",
                    "95 % interval",
                    "verdict",
                ]
            };
            let mut table: Vec<[String; 6]> = vec![header.map(String::from)];
            for r in &pair.rows {
                let side = |v: Option<f64>, n: usize| {
                    let v = v
                        .map(|v| crate::format::number_in_unit(v, &r.unit, lang))
                        .unwrap_or_else(|| {
                            if zh {
                                "无定义".into()
                            } else {
                                "undefined".into()
                            }
                        });
                    format!("{v} (n={})", crate::format::integer(n as u64))
                };
                table.push([
                    r.name.get(lang).to_string(),
                    side(r.base, r.n_base),
                    side(r.new, r.n_new),
                    r.difference_text(lang),
                    r.interval_text(lang),
                    r.verdict.get(lang).to_string(),
                ]);
            }
            let widths: Vec<usize> = (0..6)
                .map(|c| table.iter().map(|row| width(&row[c])).max().unwrap_or(0))
                .collect();
            for row in &table {
                let cells: Vec<String> = row
                    .iter()
                    .zip(&widths)
                    .map(|(c, w)| format!("{c}{}", " ".repeat(w - width(c))))
                    .collect();
                out.push_str(&format!("  {}\n", cells.join("  ").trim_end()));
            }
            // What each n counts: a goodput's n is the jointly qualified attempts, not all of them.
            out.push_str(if zh {
                "  n 数的是："
            } else {
                "  n counts: "
            });
            let counts: Vec<String> = pair
                .rows
                .iter()
                .filter(|r| !r.n_counts.en.is_empty())
                .map(|r| {
                    if zh {
                        format!("{}：{}", r.name.zh, r.n_counts.zh)
                    } else {
                        format!("{}: {}", r.name.en, r.n_counts.en)
                    }
                })
                .collect();
            out.push_str(&counts.join(if zh { "；" } else { "; " }));
            out.push('\n');
            out.push('\n');
            out.push_str(if zh {
                "每次运行各自的 95 % 区间：\n"
            } else {
                "Each run's own 95 % interval:\n"
            });
            for r in &pair.rows {
                for (who, iv) in [
                    (if zh { "基线" } else { "base" }, &r.base_interval),
                    (if zh { "新" } else { "new" }, &r.new_interval),
                ] {
                    if let Some(iv) = iv {
                        out.push_str(&format!(
                            "  {} [{who}] {}\n",
                            r.name.get(lang),
                            iv.describe(&r.unit, lang)
                        ));
                        if let Some(note) = &iv.note {
                            if !iv.bounds.is_closed() {
                                out.push_str(&format!("      ↳ {}\n", note.get(lang)));
                            }
                        }
                    }
                }
            }
            let methods: Vec<String> = {
                let mut m: Vec<String> = pair
                    .rows
                    .iter()
                    .filter_map(|r| r.method.as_ref().map(|m| m.describe(lang)))
                    .collect();
                m.dedup();
                m.sort();
                m.dedup();
                m
            };
            out.push_str(&if zh {
                format!("差值区间的方法：{}\n\n", methods.join("；"))
            } else {
                format!(
                    "Methods of the difference intervals: {}\n\n",
                    methods.join("; ")
                )
            });
        }
        if let Some(r) = &self.reruns {
            out.push_str(&if zh {
                format!("重跑检查（{} 次运行）：\n", r.runs)
            } else {
                format!("Reruns ({} runs):\n", r.runs)
            });
            for s in [&r.p50, &r.tail] {
                let vals: Vec<String> = s
                    .values
                    .iter()
                    .map(|v| {
                        v.map(|v| format!("{} s", trim_num((v * 1000.0).round() / 1000.0)))
                            .unwrap_or_else(|| "—".into())
                    })
                    .collect();
                let range = s
                    .range_s
                    .map(|v| format!("{} s", trim_num((v * 1000.0).round() / 1000.0)))
                    .unwrap_or_else(|| "—".into());
                let agree = match (s.agree, zh) {
                    (Agreement::Agree, false) => "intervals overlap",
                    (Agreement::Disagree, false) => "intervals do not overlap",
                    (Agreement::TooFew, false) => "an interval has no bound",
                    (Agreement::Agree, true) => "区间有重叠",
                    (Agreement::Disagree, true) => "区间没有重叠",
                    (Agreement::TooFew, true) => "有区间缺少上下界",
                };
                out.push_str(&if zh {
                    format!(
                        "  TTFT {}：{} · 极差 {range} · {agree}\n",
                        s.label,
                        vals.join(", ")
                    )
                } else {
                    format!(
                        "  TTFT {}: {} · range {range} · {agree}\n",
                        s.label,
                        vals.join(", ")
                    )
                });
            }
            out.push_str(&format!("  {}\n", r.verdict.get(lang)));
        }
        out
    }
}

/// Terminal columns: CJK characters take two.
fn width(s: &str) -> usize {
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
