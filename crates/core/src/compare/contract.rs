//! The baseline contract between two runs: the conditions that must match before their figures
//! may be compared (model, API, lengths, prompt set, arrival process, concurrency, timeouts,
//! warm-up), and those that only warn (tool version, repetitions, window, arrival seed).

use serde::Serialize;

use crate::format::trim_num;
use crate::text::{Lang, Text};
use crate::trace::Header;

/// Whether a difference breaks the contract or only deserves a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strictness {
    Must,
    Warn,
}

/// One condition that differs, with both values as written in the headers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContractDiff {
    pub field: String,
    pub base: String,
    pub new: String,
    pub strictness: Strictness,
}

/// The verdict on the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ContractStatus {
    /// Every must-match condition is recorded and equal.
    Holds,
    /// A must-match condition differs (or is recorded on one side only).
    Broken,
    /// Nothing differs, but some must-match conditions are recorded in neither header.
    Unverified,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContractCheck {
    pub status: ContractStatus,
    pub differences: Vec<ContractDiff>,
    /// Must-match conditions neither header records (so they cannot be checked).
    pub not_recorded: Vec<String>,
}

/// The value written for a condition that a header does not record.
pub const NOT_RECORDED: &str = "(not recorded)";

impl ContractCheck {
    pub fn is_broken(&self) -> bool {
        self.status == ContractStatus::Broken
    }

    /// One line per difference: "✗ model: base llama-3 · new qwen-2 (must match)".
    pub fn lines(&self, lang: Lang) -> Vec<String> {
        let mut out = vec![self.status_text().get(lang).to_string()];
        for d in &self.differences {
            let (mark, kind) = match (d.strictness, lang) {
                (Strictness::Must, Lang::En) => ("✗", "must match"),
                (Strictness::Must, Lang::Zh) => ("✗", "必须一致"),
                (Strictness::Warn, Lang::En) => ("!", "warning only"),
                (Strictness::Warn, Lang::Zh) => ("!", "仅提醒"),
            };
            out.push(match lang {
                Lang::En => format!("  {mark} {}: base {} · new {} ({kind})", d.field, d.base, d.new),
                Lang::Zh => format!("  {mark} {}：基线 {} · 新 {}（{kind}）", d.field, d.base, d.new),
            });
        }
        if !self.not_recorded.is_empty() {
            let list = self.not_recorded.join(", ");
            out.push(match lang {
                Lang::En => format!("  ? recorded in neither header, so not checked: {list}"),
                Lang::Zh => format!("  ? 两份记录都没有写明，无法核对：{list}"),
            });
        }
        out
    }

    pub fn status_text(&self) -> Text {
        match self.status {
            ContractStatus::Holds => Text::new("Contract holds: every must-match condition is equal.", "契约成立：所有必须一致的条件都相同。"),
            ContractStatus::Broken => Text::new(
                "CONTRACT BROKEN: these runs were not measured under the same conditions; every difference below is labelled as such.",
                "契约被破坏：两次运行不是在相同条件下测得的；下面每个差异都会标明这一点。",
            ),
            ContractStatus::Unverified => Text::new(
                "Contract unverified: nothing recorded differs, but some conditions are recorded in neither header.",
                "契约未验证：记录下来的条件没有差异，但有些条件两份记录都没写。",
            ),
        }
    }
}

/// The must-match conditions every run has (the others, such as the rate of an open loop or the
/// burstiness of Poisson arrivals, only apply to some runs).
const ALWAYS_RECORDED: [&str; 7] = ["model", "api", "max_tokens", "prompt_set_sha256", "arrival", "timeout_s", "warmup"];

/// Compares the conditions in two headers.
pub fn check_contract(base: &Header, new: &Header) -> ContractCheck {
    let (b, n) = (&base.conditions, &new.conditions);
    let opt = |v: Option<String>| v.unwrap_or_else(|| NOT_RECORDED.to_string());
    let num = |v: Option<f64>| v.map(trim_num);
    let int = |v: Option<u32>| v.map(|v| v.to_string());
    let must: Vec<(&str, Option<String>, Option<String>)> = vec![
        ("model", b.model.clone(), n.model.clone()),
        ("api", b.api.clone(), n.api.clone()),
        ("max_tokens", int(b.max_tokens), int(n.max_tokens)),
        ("prompt_set", b.prompt_set.clone(), n.prompt_set.clone()),
        ("prompt_set_sha256", b.prompt_set_sha256.clone(), n.prompt_set_sha256.clone()),
        ("arrival", b.arrival.clone(), n.arrival.clone()),
        ("rate_per_s", num(b.rate_per_s), num(n.rate_per_s)),
        ("burstiness", num(b.burstiness), num(n.burstiness)),
        ("concurrency", int(b.concurrency), int(n.concurrency)),
        ("timeout_s", num(b.timeout_s), num(n.timeout_s)),
        ("first_token_timeout_s", num(b.first_token_timeout_s), num(n.first_token_timeout_s)),
        ("warmup", int(b.warmup), int(n.warmup)),
    ];
    let window = |h: &Header| h.window.map(|w| format!("{} s", trim_num(w.length_s)));
    let warn: Vec<(&str, Option<String>, Option<String>)> = vec![
        ("tool", Some(format!("{} {}", base.tool.name, base.tool.version)), Some(format!("{} {}", new.tool.name, new.tool.version))),
        ("repetitions", int(b.repetitions), int(n.repetitions)),
        ("window", window(base), window(new)),
        ("seed", b.seed.map(|s| s.to_string()), n.seed.map(|s| s.to_string())),
    ];
    let mut differences = Vec::new();
    let mut not_recorded = Vec::new();
    for (strictness, rows) in [(Strictness::Must, must), (Strictness::Warn, warn)] {
        for (field, bv, nv) in rows {
            if bv.is_none() && nv.is_none() {
                if strictness == Strictness::Must && ALWAYS_RECORDED.contains(&field) {
                    not_recorded.push(field.to_string());
                }
                continue;
            }
            if bv != nv {
                differences.push(ContractDiff { field: field.to_string(), base: opt(bv), new: opt(nv), strictness });
            }
        }
    }
    let status = if differences.iter().any(|d| d.strictness == Strictness::Must) {
        ContractStatus::Broken
    } else if !not_recorded.is_empty() {
        ContractStatus::Unverified
    } else {
        ContractStatus::Holds
    };
    ContractCheck { status, differences, not_recorded }
}
