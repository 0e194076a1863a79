//! The samples shipped with the lab (`public/samples/`, copied to `dist/samples/`), with their
//! labels: the lab's picker lists them, the compare page's pickers too (its set first).

/// A sample: its file name, its label in English and in Chinese.
pub type Sample = (&'static str, &'static str, &'static str);

/// The samples shipped with the lab, in the lab's order.
pub const SAMPLES: [Sample; 7] = [
    (
        "ten-requests.jsonl",
        "The lesson's ten requests (JSON Lines)",
        "课程中的十个请求（JSON Lines）",
    ),
    (
        "ten-requests.csv",
        "The lesson's ten requests (classroom CSV)",
        "课程中的十个请求（课堂 CSV）",
    ),
    (
        "streaming-example.jsonl",
        "One streamed request (timeline)",
        "一个流式请求（时间线）",
    ),
    (
        "baseline-a.jsonl",
        "Baseline run (constructed)",
        "基线运行（构造）",
    ),
    (
        "baseline-rerun.jsonl",
        "Its rerun (constructed)",
        "它的重跑（构造）",
    ),
    (
        "baseline-slower.jsonl",
        "A slower run (constructed)",
        "变慢的运行（构造）",
    ),
    (
        "reasoning-first-token.jsonl",
        "A reasoning model: which token ends TTFT (constructed)",
        "推理模型：TTFT 截止于哪个 token（构造）",
    ),
];

/// The sample files with the lesson's compare set (`baseline-…`) first: the compare page's order.
pub fn compare_order() -> Vec<&'static str> {
    let (set, rest): (Vec<&str>, Vec<&str>) = SAMPLES
        .iter()
        .map(|s| s.0)
        .partition(|f| f.starts_with("baseline-"));
    set.into_iter().chain(rest).collect()
}

/// Whether `name` is one of the samples.
pub fn is_sample(name: &str) -> bool {
    SAMPLES.iter().any(|s| s.0 == name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_compare_set_comes_first() {
        assert_eq!(
            super::compare_order(),
            [
                "baseline-a.jsonl",
                "baseline-rerun.jsonl",
                "baseline-slower.jsonl",
                "ten-requests.jsonl",
                "ten-requests.csv",
                "streaming-example.jsonl",
                "reasoning-first-token.jsonl"
            ]
        );
    }
}
