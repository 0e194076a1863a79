//! The metric card a learner fills, pre-filled from the core's structured figures and header, and written as Markdown or JSON.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use tracelab_core::card;
use tracelab_core::compare::Intervals;
use tracelab_core::error::ParseError;
use tracelab_core::figure::Figure;
use tracelab_core::format::{self, md_cell, trim_num};
use tracelab_core::metrics::Metrics;
use tracelab_core::settings::{
    pair_label, pair_value_label, FailureDenominator, Settings, PAIR_KEYS,
};
use tracelab_core::text::{Lang, Text};
use tracelab_core::trace::{Trace, GPU_UNSUPPORTED};

use serde_json::Value;

use crate::{t, CARD_KIND};

use crate::json::{read_export, Found, Locate};
use crate::locate::{leaf, list, map, object, string};

/// One figure on the learner's card, written out so someone else can recompute it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CardResult {
    /// The figure's key (`failure_rate`, `goodput`, …); empty for a figure the learner added.
    pub key: String,
    pub name: String,
    pub value: String,
    pub numerator: String,
    pub denominator: String,
    pub unit: String,
    /// How a percentile was picked, or empty.
    pub method: String,
    /// The figure's 95 % interval and its method, or why it has none.
    pub interval: String,
}

/// A second settings snapshot on the same card: the same trace under other choices (the seed's
/// 0.5 s threshold beside the original one), with its own figures, so both thresholds are one
/// artefact. Its choices go on top of the card's own.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CardSnapshot {
    /// The choices that differ from the card's own, as `key=value` pairs (at least `t`).
    pub choices: BTreeMap<String, String>,
    pub results: Vec<CardResult>,
}

impl CardSnapshot {
    /// A snapshot with nothing written yet: the card's result rows (name and unit, no value).
    pub fn blank(lang: Lang) -> CardSnapshot {
        CardSnapshot {
            choices: BTreeMap::new(),
            results: MetricCard::blank(lang).results,
        }
    }

    /// The snapshot as the core fills it for `trace` under `settings` (the card's settings
    /// with this snapshot's choices on top): the pairs that differ from `card_choices`, and
    /// every figure.
    pub fn prefill(
        trace: &Trace,
        card_choices: &BTreeMap<String, String>,
        settings: &Settings,
        lang: Lang,
    ) -> CardSnapshot {
        let metrics = Metrics::of(&trace.attempts, settings);
        CardSnapshot {
            choices: settings
                .to_pairs()
                .into_iter()
                .filter(|(k, v)| card_choices.get(*k) != Some(v))
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            results: results_of(trace, settings, &metrics, lang),
        }
    }
}

/// The metric card a learner fills: every definition behind the figures they report. The lab
/// pre-fills it from the core ([`MetricCard::prefill`]); the learner edits any field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MetricCard {
    /// The language the card is written in.
    pub lang: Lang,
    /// Which trace (file name, and the tool it was imported from).
    pub source: String,
    /// Where the clock was read.
    pub observation_point: String,
    /// What a rerun must hold fixed: model, prompts and lengths, arrival process, timeouts.
    pub conditions: String,
    pub window: String,
    pub percentile_method: String,
    /// How many samples each distribution rests on.
    pub sample_count: String,
    /// Attempts counted, successes, failures by outcome, warm-up excluded.
    pub attempts: String,
    /// What counts as a success and as jointly qualified.
    pub success_condition: String,
    pub failure_denominator: String,
    pub thresholds: String,
    /// GPU telemetry: how it was read, or "not verified".
    pub telemetry: String,
    pub results: Vec<CardResult>,
    pub notes: String,
    /// The choices the figures were computed with, as the lab's `key=value` pairs
    /// ([`Settings::to_pairs`]): what lets someone else recompute every figure. A key left out
    /// is a choice the card does not state.
    pub choices: BTreeMap<String, String>,
    /// The same trace under a second threshold, on the same card ([`CardSnapshot`]). Cards
    /// written before it existed have none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub second: Option<CardSnapshot>,
}

#[derive(Serialize)]
struct CardFile<'a> {
    kind: &'static str,
    version: u32,
    #[serde(flatten)]
    card: &'a MetricCard,
}

impl MetricCard {
    /// The fields, in card order (the ids of `course.json`'s `card_fields`).
    pub const FIELDS: [&'static str; 13] = [
        "source",
        "observation_point",
        "conditions",
        "window",
        "percentile_method",
        "sample_count",
        "attempts",
        "success_condition",
        "failure_denominator",
        "thresholds",
        "telemetry",
        "results",
        "notes",
    ];

    /// A field's name on the card.
    pub fn label(field: &str) -> Text {
        match field {
            "source" => t("Trace", "记录"),
            "observation_point" => t("Observation point", "观测点"),
            "conditions" => t("Conditions held fixed", "固定的条件"),
            "window" => t("Window", "窗口"),
            "percentile_method" => t("Percentile method", "分位数方法"),
            "sample_count" => t("Sample count", "样本数"),
            "attempts" => t("Attempts", "尝试"),
            "success_condition" => t("Success condition", "成功条件"),
            "failure_denominator" => t("Failure denominator", "失败率分母"),
            "thresholds" => t("Thresholds", "门槛"),
            "telemetry" => t("GPU telemetry", "GPU 遥测"),
            "results" => t("Results", "结果"),
            "notes" => t("Notes", "备注"),
            other => Text::new(other, other),
        }
    }

    fn text_fields(&self) -> [(&'static str, &String); 12] {
        [
            ("source", &self.source),
            ("observation_point", &self.observation_point),
            ("conditions", &self.conditions),
            ("window", &self.window),
            ("percentile_method", &self.percentile_method),
            ("sample_count", &self.sample_count),
            ("attempts", &self.attempts),
            ("success_condition", &self.success_condition),
            ("failure_denominator", &self.failure_denominator),
            ("thresholds", &self.thresholds),
            ("telemetry", &self.telemetry),
            ("notes", &self.notes),
        ]
    }

    /// The card as the core would fill it for `trace` under `settings`, in `lang`. Every line
    /// comes from the core's structured values: [`card::observation_point`], [`card::attempts_summary`],
    /// the figures (values, formula parts, labels) and the header, written with [`format`](mod@format).
    pub fn prefill(
        source: &str,
        trace: &Trace,
        settings: &Settings,
        metrics: &Metrics,
        lang: Lang,
    ) -> MetricCard {
        let zh = lang == Lang::Zh;
        let source_line = match &trace.header.source {
            Some(s) => {
                let version = s.version.as_deref().unwrap_or(if zh {
                    "版本未知"
                } else {
                    "version unknown"
                });
                if zh {
                    format!("{source}（导入自 {}，{version}）", s.tool)
                } else {
                    format!("{source} (imported from {}, {version})", s.tool)
                }
            }
            None => source.to_string(),
        };
        let window = match settings.window_s {
            Some(w) => {
                let start = trace
                    .header
                    .window
                    .map(|w| trim_num(w.start_ms))
                    .unwrap_or_else(|| "0".into());
                let cost = settings.window_cost.map(|c| {
                    format!("{} {}", trim_num(c), settings.currency)
                        .trim_end()
                        .to_string()
                });
                match (zh, cost) {
                    (false, Some(c)) => format!(
                        "{} s from {start} ms on the run's clock; it cost {c}",
                        trim_num(w)
                    ),
                    (false, None) => format!(
                        "{} s from {start} ms on the run's clock; cost not given",
                        trim_num(w)
                    ),
                    (true, Some(c)) => {
                        format!("从运行时钟 {start} 毫秒起的 {} 秒；花费 {c}", trim_num(w))
                    }
                    (true, None) => {
                        format!("从运行时钟 {start} 毫秒起的 {} 秒；未给出成本", trim_num(w))
                    }
                }
            }
            None => (if zh {
                "未设置窗口：goodput 与成本无定义"
            } else {
                "no window: goodput and cost are undefined"
            })
            .to_string(),
        };
        // The method as the core wrote it in the card's language (`method_text`); `method` is
        // the English line the files keep.
        let percentile_method = match &metrics.ttft_tail.method_text {
            Some(m) => m.get(lang).to_string(),
            None => settings.percentile.name().get(lang).to_string(),
        };
        let n = |f: &Figure| format::integer(f.n.unwrap_or(0) as u64);
        let sample_count = if zh {
            format!(
                "TTFT：{} 个（完整成功）；E2E：{} 个；ITL：{} 个事件间隔（按事件，不按 token）",
                n(&metrics.ttft_p50),
                n(&metrics.e2e_p50),
                n(&metrics.itl_p50)
            )
        } else {
            format!(
                "TTFT: {} (complete successes); E2E: {}; ITL: {} gaps between stream events (per event, not per token)",
                n(&metrics.ttft_p50),
                n(&metrics.e2e_p50),
                n(&metrics.itl_p50)
            )
        };
        let failure_denominator = match (
            &metrics.failure_rate.denominator_label,
            metrics.failure_rate.denominator,
        ) {
            (Some(label), Some(d)) => format!("{} = {}", label.get(lang), format::count_value(d)),
            _ => String::new(),
        };
        let slo = settings.slo_comparison.symbol();
        let thresholds = if zh {
            format!(
                "TTFT {} {} 秒（SLO 写作 {slo}）",
                settings.comparison.symbol(),
                trim_num(settings.ttft_threshold_s)
            )
        } else {
            format!(
                "TTFT {} {} s (the SLO is written with {slo})",
                settings.comparison.symbol(),
                trim_num(settings.ttft_threshold_s)
            )
        };
        let results = results_of(trace, settings, metrics, lang);
        let mut notes: Vec<String> = settings
            .mistakes()
            .iter()
            .map(|m| format!("⚠ {} — {}", m.label.get(lang), m.false_conclusion.get(lang)))
            .collect();
        notes.extend(trace.warnings.iter().cloned());
        if settings.population.failure_denominator == FailureDenominator::FailedRowsDeleted {
            notes.push(
                (if zh {
                    "失败行被删除：这张卡不能作为基线。"
                } else {
                    "Failed rows were deleted: this card cannot serve as a baseline."
                })
                .to_string(),
            );
        }
        MetricCard {
            lang,
            source: source_line,
            observation_point: card::observation_point(lang),
            conditions: conditions_line(trace, lang),
            window,
            percentile_method,
            sample_count,
            attempts: card::attempts_summary(metrics, lang),
            success_condition: success_condition_line(metrics, lang),
            failure_denominator,
            thresholds,
            telemetry: telemetry_line(trace, lang),
            results,
            notes: notes.join("\n"),
            choices: settings
                .to_pairs()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            second: None,
        }
    }

    /// A card with nothing written yet: one result row per figure the card reports (its name
    /// and unit, no value), so a learner can write before they look.
    pub fn blank(lang: Lang) -> MetricCard {
        let metrics = Metrics::of(&[], &Settings::default());
        let results = metrics
            .card_figures()
            .into_iter()
            .map(|f| CardResult {
                key: f.key.clone(),
                name: f.name.get(lang).to_string(),
                unit: format::unit_name(&f.unit).get(lang).to_string(),
                ..CardResult::default()
            })
            .collect();
        MetricCard {
            lang,
            results,
            ..MetricCard::default()
        }
    }

    /// Whether the learner has written at least one figure's value themselves: the lab's answer
    /// (a pre-fill, a check against the lab) comes only after the learner's own attempt.
    pub fn has_a_written_figure(&self) -> bool {
        self.results.iter().any(|r| !r.value.trim().is_empty())
    }

    /// A text field by its name in [`MetricCard::FIELDS`], for a form to edit.
    pub fn field_mut(&mut self, key: &str) -> Option<&mut String> {
        Some(match key {
            "source" => &mut self.source,
            "observation_point" => &mut self.observation_point,
            "conditions" => &mut self.conditions,
            "window" => &mut self.window,
            "percentile_method" => &mut self.percentile_method,
            "sample_count" => &mut self.sample_count,
            "attempts" => &mut self.attempts,
            "success_condition" => &mut self.success_condition,
            "failure_denominator" => &mut self.failure_denominator,
            "thresholds" => &mut self.thresholds,
            "telemetry" => &mut self.telemetry,
            "notes" => &mut self.notes,
            _ => return None,
        })
    }

    /// A text field by its name in [`MetricCard::FIELDS`].
    pub fn field(&self, key: &str) -> Option<&String> {
        self.text_fields()
            .into_iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    /// The fields still empty (a card someone else can recompute from has none but `notes`).
    pub fn missing(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = self
            .text_fields()
            .into_iter()
            .filter(|(k, v)| *k != "notes" && v.trim().is_empty())
            .map(|(k, _)| k)
            .collect();
        let incomplete = self.results.is_empty()
            || self.results.iter().any(|r| {
                r.name.trim().is_empty() || r.value.trim().is_empty() || r.unit.trim().is_empty()
            });
        if incomplete {
            out.push("results");
        }
        out
    }

    /// The card as Markdown, with the field names in `lang`.
    pub fn to_markdown(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        let mut out = format!("# {}\n\n", if zh { "指标口径卡" } else { "Metric card" });
        out.push_str(if zh {
            "| 项目 | 内容 |\n|---|---|\n"
        } else {
            "| Field | Value |\n|---|---|\n"
        });
        for (key, value) in self.text_fields() {
            if key == "notes" {
                continue;
            }
            let v = if value.trim().is_empty() {
                "—".to_string()
            } else {
                md_cell(value)
            };
            out.push_str(&format!("| {} | {v} |\n", Self::label(key).get(lang)));
        }
        out.push_str(&format!("\n## {}\n\n", Self::label("results").get(lang)));
        out.push_str(if zh {
            "| 指标 | 值 | 分子 | 分母 | 单位 | 方法 | 95 % 区间 |\n|---|---|---|---|---|---|---|\n"
        } else {
            "| Figure | Value | Numerator | Denominator | Unit | Method | 95 % interval |\n|---|---|---|---|---|---|---|\n"
        });
        for r in &self.results {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                cell(&r.name),
                cell(&r.value),
                cell(&r.numerator),
                cell(&r.denominator),
                cell(&r.unit),
                cell(&r.method),
                cell(&r.interval)
            ));
        }
        out.push_str(&format!(
            "\n## {}\n\n",
            if zh {
                "计算所用的选择"
            } else {
                "Choices the figures were computed with"
            }
        ));
        out.push_str(if zh {
            "| 选择 | 取值 | 代码 |\n|---|---|---|\n"
        } else {
            "| Choice | Stated | Code |\n|---|---|---|\n"
        });
        for key in PAIR_KEYS {
            let (said, code) = match self.choices.get(key) {
                Some(code) => (
                    pair_value_label(key, code).get(lang).to_string(),
                    format!("`{key}={}`", md_cell(code)),
                ),
                None => (
                    (if zh { "未写明" } else { "not stated" }).to_string(),
                    "—".to_string(),
                ),
            };
            out.push_str(&format!(
                "| {} | {} | {code} |\n",
                pair_label(key).get(lang),
                md_cell(&said)
            ));
        }
        if let Some(second) = &self.second {
            let stated: Vec<String> = second
                .choices
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{} {} (`{k}={}`)",
                        pair_label(k).get(lang),
                        pair_value_label(k, v).get(lang),
                        md_cell(v)
                    )
                })
                .collect();
            out.push_str(&format!(
                "\n## {}\n\n{}\n\n",
                if zh {
                    "第二组设置（同一份记录）"
                } else {
                    "Second snapshot (the same trace)"
                },
                if stated.is_empty() {
                    (if zh {
                        "与上面相同的选择：未写明"
                    } else {
                        "the same choices as above: none stated"
                    })
                    .to_string()
                } else {
                    stated.join("; ")
                }
            ));
            out.push_str(if zh {
                "| 指标 | 值 | 分子 | 分母 | 单位 |\n|---|---|---|---|---|\n"
            } else {
                "| Figure | Value | Numerator | Denominator | Unit |\n|---|---|---|---|---|\n"
            });
            for r in &second.results {
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} |\n",
                    cell(&r.name),
                    cell(&r.value),
                    cell(&r.numerator),
                    cell(&r.denominator),
                    cell(&r.unit)
                ));
            }
        }
        if !self.notes.trim().is_empty() {
            out.push_str(&format!("\n## {}\n\n", Self::label("notes").get(lang)));
            for line in self.notes.lines().filter(|l| !l.trim().is_empty()) {
                out.push_str(&format!("- {}\n", line.trim()));
            }
        }
        out
    }

    /// The card as a JSON file (`kind` [`CARD_KIND`], version 1), pretty-printed.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(&CardFile {
            kind: CARD_KIND,
            version: 1,
            card: self,
        })
        .expect("a card serialises");
        s.push('\n');
        s
    }

    /// Reads [`MetricCard::to_json`]'s file. Missing fields are empty; a wrong type is an error
    /// naming the field; nothing panics.
    pub fn from_json(text: &str) -> Result<MetricCard, ParseError> {
        read_export(text, CARD_KIND, "metric card", locate_card)
    }
}

/// Every figure the card reports, as the core computes it for `trace` under `settings`.
fn results_of(
    trace: &Trace,
    settings: &Settings,
    metrics: &Metrics,
    lang: Lang,
) -> Vec<CardResult> {
    let index = tracelab_core::Index::build(&trace.attempts, settings.population);
    let intervals = Intervals::compute(&index, settings, metrics);
    metrics
        .card_figures()
        .into_iter()
        .map(|f| {
            let part = |label: &Option<Text>, v: Option<f64>| match (label, v) {
                (Some(l), Some(v)) => format!("{} = {}", l.get(lang), format::count_value(v)),
                _ => String::new(),
            };
            CardResult {
                key: f.key.clone(),
                name: f.name.get(lang).to_string(),
                value: format::value(f, lang),
                numerator: part(&f.numerator_label, f.numerator),
                denominator: part(&f.denominator_label, f.denominator),
                unit: format::unit_name(&f.unit).get(lang).to_string(),
                method: f
                    .n
                    .and_then(|_| format::method_line(f, lang))
                    .unwrap_or_default(),
                interval: card::interval_text(f, &intervals, lang),
            }
        })
        .collect()
}

/// The card's prose lines the core writes for a trace (what a reader compares a learner's own
/// wording with): `observation_point`, `conditions`, `success_condition`, `telemetry`.
pub(crate) fn prose_line(field: &str, trace: &Trace, metrics: &Metrics, lang: Lang) -> String {
    match field {
        "observation_point" => card::observation_point(lang),
        "conditions" => conditions_line(trace, lang),
        "success_condition" => success_condition_line(metrics, lang),
        "telemetry" => telemetry_line(trace, lang),
        _ => String::new(),
    }
}

/// What counts as a success and as jointly qualified, from the joint rate's own numerator.
fn success_condition_line(metrics: &Metrics, lang: Lang) -> String {
    let zh = lang == Lang::Zh;
    match metrics.joint_rate.numerator_label.as_ref() {
        Some(label) if zh => format!("完整成功 = HTTP 成功且流正常读到结束；{}，逐个请求判定", label.zh),
        Some(label) => format!(
            "complete success = HTTP success and the stream read to its proper end; {}, judged request by request",
            label.en
        ),
        None => String::new(),
    }
}

/// How the GPU was read, or that it was not.
fn telemetry_line(trace: &Trace, lang: Lang) -> String {
    let zh = lang == Lang::Zh;
    if trace.header.capabilities.gpu_telemetry == GPU_UNSUPPORTED {
        (if zh {
            "不支持 — 未验证：不报告任何 GPU 数字"
        } else {
            "unsupported — not verified: no GPU figure is reported"
        })
        .to_string()
    } else if zh {
        format!(
            "{}，{} 个样本，与请求同一时钟",
            trace.header.capabilities.gpu_telemetry,
            format::integer(trace.gpu.len() as u64)
        )
    } else {
        format!(
            "{}, {} samples, on the same clock as the requests",
            trace.header.capabilities.gpu_telemetry,
            format::integer(trace.gpu.len() as u64)
        )
    }
}

/// The run's conditions in one line: what a rerun must hold fixed.
fn conditions_line(trace: &Trace, lang: Lang) -> String {
    let zh = lang == Lang::Zh;
    let c = &trace.header.conditions;
    let mut parts = Vec::new();
    let unknown = if zh { "未记录" } else { "not recorded" };
    let model = c.model.as_deref().unwrap_or(unknown);
    parts.push(if zh {
        format!("模型 {model}")
    } else {
        format!("model {model}")
    });
    if let Some(api) = &c.api {
        parts.push(format!("api {api}"));
    }
    if let Some(p) = &c.prompt_set {
        let sha = c
            .prompt_set_sha256
            .as_deref()
            .map(|s| format!(" (sha256 {}…)", s.chars().take(12).collect::<String>()))
            .unwrap_or_default();
        parts.push(if zh {
            format!("提示集 {p}{sha}")
        } else {
            format!("prompt set {p}{sha}")
        });
    }
    if let Some(m) = c.max_tokens {
        parts.push(format!("max_tokens {m}"));
    }
    match (c.arrival.as_deref(), c.rate_per_s, c.concurrency) {
        (Some(a), Some(r), _) => parts.push(if zh {
            format!("到达 {a}（开放，{} 次/秒）", trim_num(r))
        } else {
            format!("arrival {a} (open loop, {} /s)", trim_num(r))
        }),
        (Some(a), None, Some(n)) => parts.push(if zh {
            format!("到达 {a}（闭环，并发 {n}）")
        } else {
            format!("arrival {a} (closed loop, {n} in flight)")
        }),
        (Some(a), _, _) => parts.push(if zh {
            format!("到达 {a}")
        } else {
            format!("arrival {a}")
        }),
        (None, _, _) => parts.push(if zh {
            format!("到达过程{unknown}")
        } else {
            format!("arrival {unknown}")
        }),
    }
    if let Some(s) = c.seed {
        parts.push(format!("seed {s}"));
    }
    if let Some(r) = c.repetitions {
        parts.push(match (zh, r) {
            (true, _) => format!("重复 {r} 轮"),
            (false, 1) => "1 repetition".to_string(),
            (false, _) => format!("{r} repetitions"),
        });
    }
    if let Some(w) = c.warmup {
        parts.push(if zh {
            format!("预热 {w}")
        } else {
            format!("warm-up {w}")
        });
    }
    match (c.timeout_s, c.first_token_timeout_s) {
        (None, None) => {}
        (t, f) => {
            let s = |v: Option<f64>| {
                v.map(|v| format!("{} s", trim_num(v)))
                    .unwrap_or_else(|| "—".into())
            };
            parts.push(if zh {
                format!("超时：整体 {}，首 token {}", s(t), s(f))
            } else {
                format!("timeouts: whole request {}, first token {}", s(t), s(f))
            });
        }
    }
    parts.join(" · ")
}

fn card_result(v: &Value, p: &str) -> Found {
    let fields: Vec<(&str, bool, Locate)> = [
        "key",
        "name",
        "value",
        "numerator",
        "denominator",
        "unit",
        "method",
        "interval",
    ]
    .into_iter()
    .map(|f| (f, false, string as Locate))
    .collect();
    object(v, p, &fields, false)
}

/// Names the field that stops a card file from being read (see `locate.rs`).
pub(crate) fn locate_card(v: &Value, p: &str) -> Found {
    let mut fields: Vec<(&str, bool, Locate)> = vec![
        ("lang", false, leaf::<Lang>),
        ("results", false, |v, p| list(v, p, card_result)),
        ("choices", false, |v, p| map(v, p, string)),
        ("second", false, |v, p| {
            if v.is_null() {
                return None;
            }
            object(
                v,
                p,
                &[
                    ("choices", false, |v, p| map(v, p, string)),
                    ("results", false, |v, p| list(v, p, card_result)),
                ],
                false,
            )
        }),
    ];
    fields.extend(
        MetricCard::FIELDS
            .iter()
            .filter(|f| **f != "results")
            .map(|f| (*f, false, string as Locate)),
    );
    object(v, p, &fields, false)
}

/// A Markdown table cell of the card: a dash where nothing is written.
fn cell(s: &str) -> String {
    if s.trim().is_empty() {
        "—".to_string()
    } else {
        md_cell(s)
    }
}
