//! Exports for the tools people use: every attempt with its verdict as CSV (pandas,
//! spreadsheets), the metric card as Markdown and JSON, and Chrome trace-event JSON for
//! Perfetto and chrome://tracing ([`perfetto()`]). The lab's download buttons and
//! `tracelab export` both call these, so a file is the same wherever it was made.

mod perfetto;

pub use self::perfetto::{extent_us, perfetto, write_perfetto, PerfettoWriter, Slots};

use serde_json::{json, Value};

use crate::card;
use crate::format::{self, md_cell};
use crate::metrics::Metrics;
use crate::parse::csv_cell;
use crate::reproduce::{reproduce, resolution_note, ReproRow};
use crate::settings::Settings;
use crate::streamed::Streamed;
use crate::text::Lang;
use crate::trace::peer::{PeerUnit, Reproducibility};
use crate::trace::{Attempt, Completeness, Footer, Header, Trace};
use crate::verdict::{is_counted, verdict, Latency};
use crate::write::classroom_cells;

/// The verdict columns [`attempts_csv`] adds after the classroom CSV's own
/// ([`crate::write::CLASSROOM_COLUMNS`]), so the file still reads back with
/// [`crate::parse::parse_csv`].
pub const VERDICT_COLUMNS: [&str; 7] = [
    "stream_events",
    "counted",
    "complete_success",
    "latency",
    "qualified",
    "reason",
    "detail",
];

/// Every column of [`attempts_csv`], in order.
pub fn csv_columns() -> Vec<&'static str> {
    crate::write::CLASSROOM_COLUMNS
        .iter()
        .chain(VERDICT_COLUMNS.iter())
        .copied()
        .collect()
}

/// Every attempt with its verdict under `settings`, one row each (times in seconds, a missing
/// TTFT as an empty cell). `#` lines before the header row record the threshold, comparison,
/// window and cost the verdicts used (pandas: `read_csv(path, comment="#")`).
pub fn attempts_csv(trace: &Trace, settings: &Settings) -> String {
    let mut out = attempts_csv_head(&trace.header, settings);
    for a in &trace.attempts {
        out.push_str(&attempts_csv_row(a, settings));
    }
    out
}

/// [`attempts_csv`] up to its first row: the `#` lines and the column names. A streamed export
/// writes this, then [`attempts_csv_row`] per attempt in the file's order.
pub fn attempts_csv_head(header: &Header, settings: &Settings) -> String {
    let mut out = String::new();
    if let Some(source) = &header.source {
        out.push_str(&format!(
            "# source: {}\n",
            source.tool.replace(char::is_control, " ")
        ));
    }
    if let Some(w) = settings.window_s {
        out.push_str(&format!("# window_s: {w}\n"));
    }
    if let Some(c) = settings.window_cost {
        out.push_str(&format!(
            "# window_cost: {c}\n# currency: {}\n",
            settings.currency
        ));
    }
    out.push_str(&format!(
        "# ttft_threshold_s: {}\n",
        settings.ttft_threshold_s
    ));
    out.push_str(&format!("# comparison: {}\n", settings.comparison.code()));
    out.push_str(&csv_columns().join(","));
    out.push('\n');
    out
}

/// One attempt's row of [`attempts_csv`], with its newline.
pub fn attempts_csv_row(a: &Attempt, settings: &Settings) -> String {
    let v = verdict(a, settings);
    let mut row = classroom_cells(a);
    row.extend([
        a.events.len().to_string(),
        is_counted(a, &settings.population).to_string(),
        v.complete_success.to_string(),
        match v.latency {
            Latency::Within => "within",
            Latency::Over => "over",
            Latency::NoToken => "no_token",
        }
        .to_string(),
        v.qualified.to_string(),
        v.reason.map(|r| r.code().to_string()).unwrap_or_default(),
        a.detail.as_deref().map(csv_cell).unwrap_or_default(),
    ]);
    let mut line = row.join(",");
    line.push('\n');
    line
}

/// The peer tool's own figures beside ours, when the trace carries them (see [`reproduce`]).
pub fn peer_rows(trace: &Trace, settings: &Settings) -> Vec<ReproRow> {
    reproduce(trace, &trace.peer_figures(), settings)
}

/// A peer figure's number in its unit, to the precision a trace keeps (a microsecond) and a
/// reader can take in: "67.564 ms", "1.2346 s", "89", "11.03 %", "9.5516 /s".
pub fn peer_value(v: f64, unit: PeerUnit) -> String {
    use PeerUnit::*;
    match unit {
        Ratio => format!("{} %", format::round_to(v * 100.0, 2)),
        Count => format::round_to(v, 3),
        Ms => format!("{} ms", format::round_to(v, 3)),
        S => format!("{} s", format::round_to(v, 4)),
        _ => format!("{} {}", format::round_to(v, 4), unit.symbol()),
    }
}

/// The metric card as Markdown: the conditions, every figure with its formula parts and method,
/// the wrong choices in force, how an imported trace's tool defines its figures, and the tool's
/// own figures recomputed side by side.
pub fn card_markdown(
    source: &str,
    trace: &Trace,
    settings: &Settings,
    metrics: &Metrics,
    lang: Lang,
) -> String {
    card_markdown_of(
        source,
        &CardFacts::of_trace(trace, settings),
        settings,
        metrics,
        lang,
    )
}

/// What the card exports say of a trace besides its figures: from a whole trace
/// ([`CardFacts::of_trace`]) or from a streamed one (`tracelab export`, which never holds the
/// attempts), so both write the same card.
pub struct CardFacts<'a> {
    pub header: &'a Header,
    pub completeness: Completeness,
    /// No footer says the run finished cleanly.
    pub incomplete: bool,
    pub warnings: &'a [String],
    /// The peer tool's own figures recomputed ([`peer_rows`]): empty when the header has none.
    pub peer_rows: Vec<ReproRow>,
    /// The figures by session and by turn, when the attempts name sessions.
    pub sessions: Option<crate::session::Sessions>,
}

impl<'a> CardFacts<'a> {
    pub fn of_trace(trace: &'a Trace, settings: &Settings) -> CardFacts<'a> {
        CardFacts {
            header: &trace.header,
            completeness: trace.completeness(),
            incomplete: trace.is_incomplete(),
            warnings: &trace.warnings,
            peer_rows: peer_rows(trace, settings),
            sessions: crate::session::Sessions::of(&trace.attempts, settings),
        }
    }

    /// A streamed trace's facts. Its peer rows are empty: recomputing a tool's own figures needs
    /// the attempts, so a trace whose header carries them ([`Header::has_peer_figures`]) is
    /// exported whole.
    pub fn of_streamed(streamed: &'a Streamed) -> CardFacts<'a> {
        CardFacts {
            header: &streamed.header,
            completeness: streamed.completeness(),
            incomplete: !Footer::finished(streamed.footer),
            warnings: &streamed.warnings,
            peer_rows: Vec::new(),
            sessions: streamed.sessions.clone(),
        }
    }
}

/// [`card_markdown`] from [`CardFacts`].
pub fn card_markdown_of(
    source: &str,
    facts: &CardFacts,
    settings: &Settings,
    metrics: &Metrics,
    lang: Lang,
) -> String {
    let zh = lang == Lang::Zh;
    let head = card::head_of(
        source,
        facts.header,
        facts.completeness,
        settings,
        metrics,
        lang,
    );
    let mut out = format!("# {}\n\n{}\n\n", md_cell(&head.title), head.observation);
    for line in [&head.attempts, &head.settings, &head.trace] {
        out.push_str(&format!("- {}\n", md_cell(line)));
    }
    if let Some(s) = &facts.header.source {
        let version = s.version.as_deref().unwrap_or(if zh {
            "版本未知"
        } else {
            "version unknown"
        });
        let layout = s
            .layout
            .as_deref()
            .map(|l| format!(", {l}"))
            .unwrap_or_default();
        out.push_str(&if zh {
            format!("- 导入自：{}（{version}{layout}）\n", md_cell(&s.tool))
        } else {
            format!(
                "- Imported from: {} ({version}{layout})\n",
                md_cell(&s.tool)
            )
        });
    }
    out.push('\n');
    out.push_str(if zh {
        "| 指标 | 值 | 计算方式 | 说明 |\n"
    } else {
        "| Figure | Value | How it was computed | Note |\n"
    });
    out.push_str("|---|---|---|---|\n");
    for f in card::figures(metrics) {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            md_cell(f.name.get(lang)),
            md_cell(&format::value(f, lang)),
            md_cell(&card::figure_detail(f, lang)),
            md_cell(&format::remark(f, lang).unwrap_or_default())
        ));
    }
    if let Some(sessions) = &facts.sessions {
        // The section `report` prints: its first line the title, each other line an item.
        let mut lines = sessions.lines(lang).into_iter();
        if let Some(title) = lines.next() {
            out.push_str(&format!("\n## {}\n\n", md_cell(&title)));
        }
        for line in lines {
            out.push_str(&format!("- {}\n", md_cell(line.trim())));
        }
    }
    let mistakes = settings.mistakes();
    if !mistakes.is_empty() {
        out.push_str(if zh {
            "\n## ⚠ 错误的选择\n\n"
        } else {
            "\n## ⚠ Wrong choices in force\n\n"
        });
        for m in mistakes {
            out.push_str(&format!(
                "- **{}** — {}\n",
                md_cell(m.label.get(lang)),
                md_cell(m.false_conclusion.get(lang))
            ));
        }
    }
    if let Some(s) = &facts.header.source {
        if !s.definitions.is_empty() {
            out.push_str(&if zh {
                format!("\n## {} 如何定义它的指标\n\n", md_cell(&s.tool))
            } else {
                format!("\n## How {} defines its figures\n\n", md_cell(&s.tool))
            });
            for d in &s.definitions {
                out.push_str(&format!("- {}\n", md_cell(d)));
            }
        }
        let rows = &facts.peer_rows;
        if !rows.is_empty() {
            let tool = md_cell(&s.tool);
            out.push_str(&if zh {
                format!(
                    "\n## {tool} 自己的数字，重新计算\n\n| 指标 | {tool} 给出 | 按 {tool} 的方法重算 | 一致 | 按课程定义 | 说明 |\n|---|---|---|---|---|---|\n"
                )
            } else {
                format!(
                    "\n## {tool}'s own figures, recomputed\n\n| Figure | {tool} said | Recomputed with {tool}'s method | Match | Under the lesson's definitions | Note |\n|---|---|---|---|---|---|\n"
                )
            });
            let resolution = format!("\n{}\n", resolution_note().get(lang));
            for r in rows {
                let ours = r
                    .tool_method
                    .map(|v| peer_value(v, r.unit))
                    .unwrap_or_else(|| "—".into());
                let matches = match (r.matches, &r.reproducibility) {
                    (Some(true), _) => "✓",
                    (Some(false), Reproducibility::Approximate(_)) => "≈",
                    (Some(false), _) => "✗",
                    (None, _) => "—",
                };
                let lesson = r
                    .lesson
                    .map(|v| peer_value(v, r.unit))
                    .unwrap_or_else(|| "—".into());
                let mut note = Vec::new();
                match &r.reproducibility {
                    Reproducibility::Exact => {}
                    Reproducibility::Approximate(why) | Reproducibility::Not(why) => {
                        note.push(why.clone())
                    }
                }
                if r.lesson.is_some() {
                    note.push(r.how_lesson.get(lang).to_string());
                }
                if let Some(n) = &r.note {
                    note.push(n.get(lang).to_string());
                }
                out.push_str(&format!(
                    "| {} | {} | {} | {matches} | {} | {} |\n",
                    md_cell(r.label.get(lang)),
                    peer_value(r.tool_said, r.unit),
                    ours,
                    lesson,
                    md_cell(&note.join("; "))
                ));
            }
            out.push_str(&resolution);
        }
    }
    if !facts.warnings.is_empty() {
        out.push_str(if zh {
            "\n## 备注\n\n"
        } else {
            "\n## Notes\n\n"
        });
        for w in facts.warnings {
            out.push_str(&format!("- {}\n", md_cell(w)));
        }
    }
    out
}

/// The metric card as one JSON value: the same content as [`card_markdown`], with every figure's
/// formula parts (numerator, denominator, unit, method, n) in both languages.
pub fn card_json_value(
    source: &str,
    trace: &Trace,
    settings: &Settings,
    metrics: &Metrics,
    lang: Lang,
) -> Value {
    let index = crate::Index::build(&trace.attempts, settings.population);
    // One view of the run for the checks, the reuse split and the five checks (each computed once).
    let view = card::CardView::of_trace(trace, settings, &index);
    card_json_value_of(
        source,
        &CardFacts::of_trace(trace, settings),
        &view,
        settings,
        metrics,
        lang,
    )
}

/// [`card_json_value`] from [`CardFacts`] and the card's view of the run (a whole trace's or a
/// streamed one's: [`card::CardView`]).
pub fn card_json_value_of(
    source: &str,
    facts: &CardFacts,
    view: &card::CardView,
    settings: &Settings,
    metrics: &Metrics,
    lang: Lang,
) -> Value {
    let head = card::head_of(
        source,
        facts.header,
        facts.completeness,
        settings,
        metrics,
        lang,
    );
    let intervals = crate::compare::Intervals::compute(view.index, settings, metrics);
    let baseline = card::baseline_alone(
        facts.header,
        view.warmup_attempts,
        settings,
        metrics,
        &intervals,
        &view.gpu,
        &view.engine,
    );
    let figures: Vec<Value> = card::figures(metrics)
        .iter()
        .map(|f| {
            let mut v = serde_json::to_value(f).expect("a figure always serialises");
            let o = v.as_object_mut().expect("an object");
            o.insert("display".into(), json!(format::value(f, lang)));
            o.insert("formula".into(), json!(format::formula(f, lang)));
            o.insert("detail".into(), json!(card::figure_detail(f, lang)));
            o.insert("remark".into(), json!(format::remark(f, lang)));
            v
        })
        .collect();
    let mistakes: Vec<Value> = settings
        .mistakes()
        .iter()
        .map(|m| json!({"setting": m.setting, "label": m.label, "false_conclusion": m.false_conclusion}))
        .collect();
    let imported = facts.header.source.as_ref().map(|s| {
        json!({
            "tool": s.tool,
            "version": s.version,
            "layout": s.layout,
            "definitions": s.definitions,
        })
    });
    json!({
        "kind": "tracelab.metric_card",
        "source": source,
        "lang": lang.code(),
        "title": head.title,
        "observation_point": head.observation,
        "lines": {"attempts": head.attempts, "settings": head.settings, "trace": head.trace},
        "attempts": {
            "counted": metrics.attempts,
            "successes": metrics.successes,
            "failures": metrics.failures,
            "failures_by_outcome": metrics.failures_by_outcome.iter().map(|(o, n)| json!({"outcome": o, "count": n})).collect::<Vec<_>>(),
            "warmup_excluded": metrics.warmup_excluded,
            "failed_rows_deleted": metrics.failed_rows_deleted,
            "qualified": metrics.qualified,
        },
        "settings": settings,
        "trace": {
            "complete": !facts.incomplete,
            "gpu_telemetry": facts.header.capabilities.gpu_telemetry,
            "conditions": facts.header.conditions,
            "warnings": facts.warnings,
        },
        "imported_from": imported,
        "figures": figures,
        "mistakes": mistakes,
        "peer_figures": facts.peer_rows,
        "sessions": facts.sessions.as_ref().map_or(Value::Null, crate::session::Sessions::json),
        "peer_figures_resolution": resolution_note().get(lang),
        "first_token": settings.population.first_token,
        "latency_from": settings.population.latency_from,
        "intervals": card::intervals_json(metrics, &intervals),
        "run_checks": card::view_run_checks(view, settings, metrics, &intervals, lang),
        "reuse": view.reuse,
        "baseline": baseline,
    })
}

/// [`card_json_value`] as pretty-printed text, ending with a newline.
pub fn card_json(
    source: &str,
    trace: &Trace,
    settings: &Settings,
    metrics: &Metrics,
    lang: Lang,
) -> String {
    json_text(&card_json_value(source, trace, settings, metrics, lang))
}

/// A card's JSON value as [`card_json`] writes it: pretty-printed, ending with a newline.
pub fn json_text(value: &Value) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("json");
    s.push('\n');
    s
}

/// The lab's downloads. The lab's own bundle carries none of the writers: it asks the bundle
/// that does (`pages/convert`, [`write_export`]) for the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportKind {
    Csv,
    CardMd,
    CardJson,
    Perfetto,
}

impl ExportKind {
    /// The downloaded file's name, from the trace's own (`run.jsonl` → `run-verdicts.csv`).
    pub fn file_name(self, source: &str) -> String {
        let stem = source.rsplit_once('.').map_or(source, |(s, _)| s);
        let suffix = match self {
            ExportKind::Csv => "verdicts.csv",
            ExportKind::CardMd => "metric-card.md",
            ExportKind::CardJson => "metric-card.json",
            ExportKind::Perfetto => "perfetto.json",
        };
        format!("{stem}-{suffix}")
    }

    pub fn mime(self) -> &'static str {
        match self {
            ExportKind::Csv => "text/csv",
            ExportKind::CardMd => "text/markdown",
            ExportKind::CardJson | ExportKind::Perfetto => "application/json",
        }
    }
}

/// One download's text: the trace as the learner has it (what-if edits applied), under the
/// settings in force, with the figures recomputed by the same core the lab shows them from.
/// `source` is the trace's file or sample name, as the card names it. The lab's second bundle
/// writes it from the trace it holds (`pages/convert`).
pub fn write_export(
    kind: ExportKind,
    source: &str,
    trace: &Trace,
    settings: &Settings,
    lang: Lang,
) -> String {
    match kind {
        ExportKind::Csv => attempts_csv(trace, settings),
        ExportKind::CardMd => card_markdown(
            source,
            trace,
            settings,
            &Metrics::of(&trace.attempts, settings),
            lang,
        ),
        ExportKind::CardJson => card_json(
            source,
            trace,
            settings,
            &Metrics::of(&trace.attempts, settings),
            lang,
        ),
        ExportKind::Perfetto => perfetto(trace, settings),
    }
}

/// The lab's side-by-side panel of an imported trace, written out: the tool's figure, ours with
/// the tool's method and its mark, ours under the lesson's definitions, and why they differ.
/// The lab shows it as it is (it is computed in the lab's second bundle, with the importers).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PeerTable {
    /// How many of the exactly reproducible figures match: "12 / 12".
    pub matched: usize,
    pub reproducible: usize,
    pub rows: Vec<PeerTableRow>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PeerTableRow {
    pub key: String,
    pub label: String,
    pub tool_key: String,
    pub said: String,
    /// Ours with the tool's method and its mark ("67.56 ms ✓"), or "—".
    pub ours: String,
    pub lesson: String,
    pub why: String,
    /// `match`, `approx`, `mismatch` or empty: how the view colours `ours`.
    pub mark: String,
}
