//! Lesson 05's claims about peer tools, each pinned to the real file it can be checked on
//! (`../shared/fixtures/`, read in place): when a claim or a fixture changes, this fails.

mod common;

use common::shared;
use tracelab_core::Settings;
use tracelab_peers::import::{self, load_any, reproduce};

fn lesson(lang: &str) -> String {
    let path = format!(
        "{}/../../lessons/05-peers.{lang}.md",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// "guidellm's ITL and TPOT can be recomputed": the figures the lesson quotes are the importer's
/// recomputation on the guidellm 0.5 fixture, to the 8 decimals quoted.
#[test]
fn the_guidellm_figures_the_lesson_quotes_are_recomputed_from_the_fixture() {
    let name = "peers/guidellm050_qwen3_4b_concurrent_benchmarks.json";
    let trace = load_any(name, &shared(name)).unwrap().single(name).unwrap();
    let rows = reproduce(
        &trace,
        &import::figures(&trace),
        &Settings::from_header(&trace.header),
    );
    let recomputed = |key: &str| {
        let row = rows
            .iter()
            .find(|r| r.key == key)
            .unwrap_or_else(|| panic!("no row {key}"));
        assert_eq!(row.matches, Some(true), "{key}");
        format!("{:.8}", row.tool_method.unwrap())
    };
    let (itl, tpot) = (
        recomputed("itl_per_request_mean"),
        recomputed("tpot_from_start_mean"),
    );
    assert_eq!(
        (itl.as_str(), tpot.as_str()),
        ("24.17877651", "24.32290418")
    );
    for lang in ["en", "zh"] {
        let text = lesson(lang);
        assert!(
            text.contains(&itl) && text.contains(&tpot),
            "05-peers.{lang} quotes {itl} and {tpot}"
        );
        assert!(
            !text.contains("cannot be recomputed from the file")
                && !text.contains("无法从文件中重算"),
            "05-peers.{lang}"
        );
    }
}

/// "LLMPerf's TTFT stops at the first chunk with non-empty content": on a real stream whose first
/// chunk carries only the role (`"content":""`), LLMPerf's rule (`if delta.get("content")`) skips
/// it, so its TTFT and this course's both stop at the first non-empty token.
#[test]
fn llmperf_skips_the_role_only_chunk_of_a_real_stream() {
    for file in [
        "streams/vllm0240_crusoe_llama33_70b_usage_chunk.sse",
        "streams/openai_gpt4omini_text_role_first_usage_chunk.sse",
    ] {
        let chunks: Vec<serde_json::Value> = shared(file)
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).unwrap())
            .collect();
        let delta = |c: &serde_json::Value| c["choices"][0]["delta"].clone();
        assert!(
            delta(&chunks[0]).get("role").is_some() && delta(&chunks[0])["content"] == "",
            "{file}: role-only first chunk"
        );
        let llmperf_first = chunks
            .iter()
            .position(|c| delta(c)["content"].as_str().is_some_and(|s| !s.is_empty()));
        assert_eq!(
            llmperf_first,
            Some(1),
            "{file}: LLMPerf's first counted chunk is the first with text"
        );
    }
    let en = lesson("en");
    assert!(en.contains("first streamed chunk whose `delta.content` is not empty"));
    assert!(lesson("zh").contains("`delta.content` 非空"));
}

/// AIPerf's ITL/TPOT are *like* vLLM's, not the same: the Chinese text says 类似, with why.
#[test]
fn aiperf_itl_is_similar_to_vllms_not_the_same_in_both_languages() {
    let zh = lesson("zh");
    assert!(!zh.contains("与 vLLM 的 ITL 相同") && !zh.contains("与 vLLM 的 TPOT 相同"));
    assert!(zh.contains("与 vLLM 的 ITL 类似") && zh.contains("分词器"));
    assert!(lesson("en").contains("similar, not the same"));
}
