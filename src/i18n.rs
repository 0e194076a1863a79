//! The lab's own words in both course languages. Figures' names and explanations come from the
//! core (`tracelab_core::Text`), so the terminal and the lab never disagree.

use tracelab_core::Lang;

/// Picks the browser's language the first time (zh-* → Chinese, anything else → English).
pub fn browser_lang() -> Lang {
    web_sys::window()
        .and_then(|w| w.navigator().language())
        .map(|tag| Lang::from_tag(&tag))
        .unwrap_or_default()
}

/// A UI string by key. Unknown keys are a programming error caught by the e2e test's screenshots.
pub fn tr(lang: Lang, key: &str) -> &'static str {
    let (en, zh) = match key {
        "title" => ("Trace Lab", "Trace Lab 追踪实验室"),
        "subtitle" => (
            "Step through an LLM-serving trace and watch every latency figure recompute.",
            "逐行查看一次大模型服务的请求记录，看每个时延指标如何重新计算。",
        ),
        "loading" => ("Loading the sample trace…", "正在加载示例记录…"),
        "load_failed" => ("Could not load the trace", "无法加载记录"),
        "trace" => ("Trace", "记录"),
        "attempts" => ("attempts", "次尝试"),
        "complete" => ("complete run", "运行完整"),
        "incomplete" => ("incomplete run (no footer)", "运行不完整（没有结束记录）"),
        "gpu" => ("GPU telemetry", "GPU 遥测"),
        "not_verified" => ("unsupported — not verified", "不支持 — 未验证"),
        "warmup" => ("warm-up", "预热"),
        "controls" => ("Settings", "设置"),
        "threshold" => ("TTFT threshold (s)", "TTFT 门槛（秒）"),
        "comparison" => ("Comparison", "比较方式"),
        "le_option" => ("≤ within the threshold", "≤ 不超过门槛"),
        "lt_option" => ("< strictly below", "< 严格小于"),
        "metrics" => ("Metrics", "指标"),
        "table" => ("Attempts", "尝试"),
        "col_id" => ("ID", "编号"),
        "col_outcome" => ("Outcome", "结果"),
        "col_ttft" => ("TTFT (s)", "TTFT（秒）"),
        "col_quality" => ("Quality", "质量"),
        "col_verdict" => ("Verdict", "判定"),
        "col_reason" => ("First failing reason", "首个不合格原因"),
        "qualified" => ("qualified", "合格"),
        "not_qualified" => ("not qualified", "不合格"),
        "missing" => ("missing", "缺失"),
        "language" => ("中文", "English"),
        "language_label" => ("Switch language", "切换语言"),
        "qualified_count" => ("Jointly qualified", "联合合格数"),
        _ => ("?", "?"),
    };
    match lang {
        Lang::En => en,
        Lang::Zh => zh,
    }
}
