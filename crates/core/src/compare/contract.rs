//! The baseline contract between two runs: the conditions that must match before their figures
//! may be compared (model, runtime and its version, API, lengths, prompt set, prefix reuse,
//! arrival process, concurrency, timeouts, warm-up), and those that only warn (tool version,
//! repetitions, window, arrival seed, the streams' fingerprint). A comparison made to change one
//! condition names it (`vary`): that difference is the variable under test, any other still
//! breaks the contract.

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
    /// A must-match condition recorded in one header only: it cannot be checked.
    OneSided,
    /// The condition the comparison set out to change (`--vary`).
    Varied,
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
    /// What the comparison set out to change, as asked (`runtime`, `concurrency`, …).
    pub varied: Vec<String>,
}

/// The conditions `vary` may name besides single fields: what each changes on purpose.
pub const VARY_GROUPS: [(&str, &[&str]); 5] = [
    // Another runtime names the same weights its own way and reports its own fingerprint.
    (
        "runtime",
        &[
            "runtime.engine",
            "runtime.engine_version",
            "runtime.model_id",
            "runtime.model_revision",
            "runtime.max_context",
            "system_fingerprint",
            "model",
        ],
    ),
    (
        "engine_version",
        &["runtime.engine_version", "system_fingerprint"],
    ),
    (
        "model",
        &["model", "runtime.model_id", "runtime.model_revision"],
    ),
    (
        "load",
        &["arrival", "rate_per_s", "burstiness", "concurrency", "seed"],
    ),
    ("prompts", &["prompt_set", "prompt_set_sha256"]),
];

/// The fields `vary` stands for, or an error naming what can be varied.
pub fn vary_fields(vary: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for v in vary {
        let v = v.trim();
        if let Some((_, fields)) = VARY_GROUPS.iter().find(|(g, _)| *g == v) {
            out.extend(fields.iter().map(|f| f.to_string()));
        } else if CONTRACT_FIELDS.contains(&v) {
            out.push(v.to_string());
        } else {
            let groups: Vec<&str> = VARY_GROUPS.iter().map(|(g, _)| *g).collect();
            return Err(format!(
                "--vary {v}: not a condition of the contract; name one of {} or a single condition: {}",
                groups.join(", "),
                CONTRACT_FIELDS.join(", ")
            ));
        }
    }
    Ok(out)
}

/// Every condition the contract compares, in the order it lists them.
pub const CONTRACT_FIELDS: [&str; 24] = [
    "model",
    "runtime.engine",
    "runtime.engine_version",
    "runtime.model_id",
    "runtime.model_revision",
    "runtime.max_context",
    "api",
    "max_tokens",
    "prompt_set",
    "prompt_set_sha256",
    "prefix_reuse.by_design",
    "prefix_reuse.before_run",
    "arrival",
    "rate_per_s",
    "burstiness",
    "concurrency",
    "timeout_s",
    "first_token_timeout_s",
    "warmup",
    "tool",
    "repetitions",
    "window",
    "seed",
    "system_fingerprint",
];

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
                (Strictness::OneSided, Lang::En) => {
                    ("?", "recorded in one run only, so not checked")
                }
                (Strictness::OneSided, Lang::Zh) => ("?", "只有一份记录写明，无法核对"),
                (Strictness::Varied, Lang::En) => {
                    ("~", "the variable under test, changed on purpose")
                }
                (Strictness::Varied, Lang::Zh) => ("~", "被测变量，有意改变"),
            };
            out.push(match lang {
                Lang::En => format!(
                    "  {mark} {}: base {} · new {} ({kind})",
                    d.field, d.base, d.new
                ),
                Lang::Zh => format!(
                    "  {mark} {}：基线 {} · 新 {}（{kind}）",
                    d.field, d.base, d.new
                ),
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
        let varied = self.varied.join(", ");
        match self.status {
            ContractStatus::Holds if !self.varied.is_empty() => Text::new(
                format!("Contract holds: {varied} changed on purpose; every other must-match condition is equal."),
                format!("契约成立：{varied} 是有意改变的；其余必须一致的条件都相同。"),
            ),
            ContractStatus::Holds => Text::new("Contract holds: every must-match condition is equal.", "契约成立：所有必须一致的条件都相同。"),
            ContractStatus::Broken => Text::new(
                "CONTRACT BROKEN: these runs were not measured under the same conditions; every difference below is labelled as such.",
                "契约被破坏：两次运行不是在相同条件下测得的；下面每个差异都会标明这一点。",
            ),
            ContractStatus::Unverified => Text::new(
                "Contract unverified: no condition recorded in both runs differs, but some are recorded in one run only or in neither, so they could not be checked.",
                "契约未验证：两份记录都写明的条件没有差异，但有些条件只有一份写明或都没写，无法核对。",
            ),
        }
    }
}

/// The must-match conditions every run has (the others, such as the rate of an open loop or the
/// burstiness of Poisson arrivals, only apply to some runs).
const ALWAYS_RECORDED: [&str; 7] = [
    "model",
    "api",
    "max_tokens",
    "prompt_set_sha256",
    "arrival",
    "timeout_s",
    "warmup",
];

/// Compares the conditions in two headers.
pub fn check_contract(base: &Header, new: &Header) -> ContractCheck {
    check_contract_varying(base, new, &[]).expect("no condition to vary")
}

/// Compares the conditions in two headers, `vary` naming what the comparison set out to change
/// (groups of [`VARY_GROUPS`] or single fields of [`CONTRACT_FIELDS`]).
pub fn check_contract_varying(
    base: &Header,
    new: &Header,
    vary: &[String],
) -> Result<ContractCheck, String> {
    let varied_fields = vary_fields(vary)?;
    let (b, n) = (&base.conditions, &new.conditions);
    let rt = |h: &Header, f: fn(&crate::trace::Runtime) -> Option<String>| {
        h.conditions.runtime.as_ref().and_then(f)
    };
    let reuse = |h: &Header, f: fn(&crate::trace::PrefixReuse) -> String| {
        h.conditions.prefix_reuse.as_ref().map(f)
    };
    let opt = |v: Option<String>| v.unwrap_or_else(|| NOT_RECORDED.to_string());
    let num = |v: Option<f64>| v.map(trim_num);
    let int = |v: Option<u32>| v.map(|v| v.to_string());
    let must: Vec<(&str, Option<String>, Option<String>)> = vec![
        ("model", b.model.clone(), n.model.clone()),
        (
            "runtime.engine",
            rt(base, |r| r.engine.clone()),
            rt(new, |r| r.engine.clone()),
        ),
        (
            "runtime.engine_version",
            rt(base, |r| r.engine_version.clone()),
            rt(new, |r| r.engine_version.clone()),
        ),
        (
            "runtime.model_id",
            rt(base, |r| r.model_id.clone()),
            rt(new, |r| r.model_id.clone()),
        ),
        (
            "runtime.model_revision",
            rt(base, |r| r.model_revision.clone()),
            rt(new, |r| r.model_revision.clone()),
        ),
        (
            "runtime.max_context",
            rt(base, |r| r.max_context.map(|c| c.to_string())),
            rt(new, |r| r.max_context.map(|c| c.to_string())),
        ),
        ("api", b.api.clone(), n.api.clone()),
        ("max_tokens", int(b.max_tokens), int(n.max_tokens)),
        ("prompt_set", b.prompt_set.clone(), n.prompt_set.clone()),
        (
            "prompt_set_sha256",
            b.prompt_set_sha256.clone(),
            n.prompt_set_sha256.clone(),
        ),
        (
            "prefix_reuse.by_design",
            reuse(base, |p| p.by_design.to_string()),
            reuse(new, |p| p.by_design.to_string()),
        ),
        (
            "prefix_reuse.before_run",
            reuse(base, |p| p.before_run.clone()),
            reuse(new, |p| p.before_run.clone()),
        ),
        ("arrival", b.arrival.clone(), n.arrival.clone()),
        ("rate_per_s", num(b.rate_per_s), num(n.rate_per_s)),
        ("burstiness", num(b.burstiness), num(n.burstiness)),
        ("concurrency", int(b.concurrency), int(n.concurrency)),
        ("timeout_s", num(b.timeout_s), num(n.timeout_s)),
        (
            "first_token_timeout_s",
            num(b.first_token_timeout_s),
            num(n.first_token_timeout_s),
        ),
        ("warmup", int(b.warmup), int(n.warmup)),
    ];
    let window = |h: &Header| h.window.map(|w| format!("{} s", trim_num(w.length_s)));
    let warn: Vec<(&str, Option<String>, Option<String>)> = vec![
        (
            "tool",
            Some(format!("{} {}", base.tool.name, base.tool.version)),
            Some(format!("{} {}", new.tool.name, new.tool.version)),
        ),
        ("repetitions", int(b.repetitions), int(n.repetitions)),
        ("window", window(base), window(new)),
        (
            "seed",
            b.seed.map(|s| s.to_string()),
            n.seed.map(|s| s.to_string()),
        ),
        (
            "system_fingerprint",
            rt(base, |r| r.system_fingerprint.clone()),
            rt(new, |r| r.system_fingerprint.clone()),
        ),
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
                let strictness = if varied_fields.iter().any(|v| v == field) {
                    Strictness::Varied
                } else if strictness == Strictness::Must && (bv.is_none() || nv.is_none()) {
                    // A table typed by hand (or an older recorder) that does not say is not a
                    // run measured differently: unchecked, not broken.
                    Strictness::OneSided
                } else {
                    strictness
                };
                differences.push(ContractDiff {
                    field: field.to_string(),
                    base: opt(bv),
                    new: opt(nv),
                    strictness,
                });
            }
        }
    }
    let status = if differences.iter().any(|d| d.strictness == Strictness::Must) {
        ContractStatus::Broken
    } else if !not_recorded.is_empty()
        || differences
            .iter()
            .any(|d| d.strictness == Strictness::OneSided)
    {
        ContractStatus::Unverified
    } else {
        ContractStatus::Holds
    };
    let varied = vary.iter().map(|v| v.trim().to_string()).collect();
    Ok(ContractCheck {
        status,
        differences,
        not_recorded,
        varied,
    })
}
