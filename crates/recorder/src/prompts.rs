//! Prompt sets: JSON Lines of `{"id", "prompt", "rubric"?}`, and the built-in baseline.
//!
//! Only the ids reach the trace. A rubric is judged on the full answer in memory and only its
//! pass/fail is kept, so the quality figure never needs the response text on disk.

use std::collections::HashSet;

use serde::Deserialize;
use sha2::{Digest, Sha256};

/// The baseline set shipped with the recorder: three public synthetic prompts.
pub const BASELINE: &str = include_str!("../prompts/baseline.jsonl");
pub const BASELINE_NAME: &str = "baseline";

#[derive(Debug, Clone)]
pub struct PromptSet {
    /// What the header calls the set: `baseline`, or the file's name without its directory.
    pub name: String,
    pub sha256: String,
    pub prompts: Vec<Prompt>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prompt {
    pub id: String,
    pub prompt: String,
    #[serde(default)]
    pub rubric: Option<Rubric>,
}

/// A quality rubric fixed before the run. Every given rule must hold; matching ignores case.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rubric {
    /// At least one of these must appear.
    #[serde(default)]
    pub contains_any: Vec<String>,
    /// Every one of these must appear.
    #[serde(default)]
    pub contains_all: Vec<String>,
    /// The answer, trimmed, has at least this many characters.
    #[serde(default)]
    pub min_chars: Option<usize>,
    #[serde(default)]
    pub max_chars: Option<usize>,
}

impl Rubric {
    pub fn passes(&self, answer: &str) -> bool {
        let answer = answer.trim();
        let lower = answer.to_lowercase();
        let has = |needle: &String| lower.contains(&needle.to_lowercase());
        let chars = answer.chars().count();
        (self.contains_any.is_empty() || self.contains_any.iter().any(has))
            && self.contains_all.iter().all(has)
            && self.min_chars.is_none_or(|min| chars >= min)
            && self.max_chars.is_none_or(|max| chars <= max)
    }
}

impl PromptSet {
    pub fn baseline() -> PromptSet {
        PromptSet::parse(BASELINE_NAME, BASELINE).expect("the baseline prompt set is valid")
    }

    /// Parses a prompt file; `name` is used in the header and in error messages.
    pub fn parse(name: &str, text: &str) -> Result<PromptSet, String> {
        let mut prompts = Vec::new();
        let mut ids = HashSet::new();
        for (i, line) in text.lines().enumerate() {
            let where_ = || format!("{name} line {}", i + 1);
            if line.trim().is_empty() {
                continue;
            }
            let prompt: Prompt = serde_json::from_str(line).map_err(|e| {
                format!(
                    "{}: {e}; each line is {{\"id\": \"…\", \"prompt\": \"…\", \"rubric\": {{…}}}} (rubric optional: contains_any, contains_all, min_chars, max_chars)",
                    where_()
                )
            })?;
            // Ids go into the trace and into attempt ids, so keep them to plain, public names.
            if prompt.id.is_empty()
                || prompt.id.len() > 64
                || !prompt
                    .id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
            {
                return Err(format!(
                    "{}: the id `{}` must be 1–64 characters of letters, digits, `_`, `-` or `.` (it is written into the trace)",
                    where_(),
                    prompt.id
                ));
            }
            if prompt.prompt.trim().is_empty() {
                return Err(format!("{}: prompt `{}` is empty", where_(), prompt.id));
            }
            if !ids.insert(prompt.id.clone()) {
                return Err(format!(
                    "{}: the id `{}` is used twice; give every prompt its own id",
                    where_(),
                    prompt.id
                ));
            }
            prompts.push(prompt);
        }
        if prompts.is_empty() {
            return Err(format!(
                "{name} holds no prompts; add one JSON object per line"
            ));
        }
        let sha256 = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(PromptSet {
            name: name.to_string(),
            sha256,
            prompts,
        })
    }

    /// Reads a prompt file. The header keeps only the file's name, never its directory (which
    /// could name the user).
    pub fn load(path: &std::path::Path) -> Result<PromptSet, String> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "prompts".into());
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the prompt file {}: {e}", path.display()))?;
        PromptSet::parse(&name, &text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_has_three_prompts_with_rubrics() {
        let set = PromptSet::baseline();
        assert_eq!(set.prompts.len(), 3);
        assert!(set.prompts.iter().all(|p| p.rubric.is_some()));
        assert_eq!(set.sha256.len(), 64);
    }

    #[test]
    fn rubric_rules() {
        let r = Rubric {
            contains_any: vec!["Latency".into(), "delay".into()],
            min_chars: Some(10),
            ..Rubric::default()
        };
        assert!(r.passes("  the LATENCY is low  "));
        assert!(!r.passes("latency"), "too short");
        assert!(!r.passes("throughput only, nothing else"));
        let all = Rubric {
            contains_all: vec!["a".into(), "b".into()],
            max_chars: Some(3),
            ..Rubric::default()
        };
        assert!(all.passes("ab"));
        assert!(!all.passes("abcd"));
        assert!(Rubric::default().passes(""));
    }

    #[test]
    fn bad_files_say_what_to_fix() {
        assert!(PromptSet::parse("p.jsonl", "")
            .unwrap_err()
            .contains("holds no prompts"));
        assert!(PromptSet::parse("p.jsonl", "{\"id\":\"a\"}")
            .unwrap_err()
            .contains("p.jsonl line 1"));
        let dup = "{\"id\":\"a\",\"prompt\":\"x\"}\n{\"id\":\"a\",\"prompt\":\"y\"}";
        assert!(PromptSet::parse("p.jsonl", dup)
            .unwrap_err()
            .contains("used twice"));
        let bad_id = "{\"id\":\"a b\",\"prompt\":\"x\"}";
        assert!(PromptSet::parse("p.jsonl", bad_id)
            .unwrap_err()
            .contains("letters, digits"));
        let typo = "{\"id\":\"a\",\"prompt\":\"x\",\"rubric\":{\"contains\":[\"x\"]}}";
        assert!(PromptSet::parse("p.jsonl", typo)
            .unwrap_err()
            .contains("unknown field"));
    }
}
