//! The capacity page's own words in both course languages (figures, verdicts, the answer and
//! every reason are the core's).

use tracelab_core::Lang;

const STRINGS: &[(&str, &str, &str)] = &[
    ("title", "Trace Lab — capacity of a load sweep", "Trace Lab — 负载扫描的容量"),
    ("subtitle", "How much load before users stop being served well?", "负载加到多少时，用户就得不到良好服务？"),
    ("language", "中文", "English"),
    ("language_label", "Switch language", "切换语言"),
    ("back", "Back to the lab", "返回实验室"),
    ("load", "Load a sweep", "载入一次扫描"),
    ("sample", "Sample", "样本"),
    ("choose", "— choose a sample —", "— 选择样本 —"),
    ("sample_demo", "M/M/4, 5 rates (simulated)", "M/M/4，5 个速率（模拟）"),
    ("upload", "or the sweep folder's files (sweep.json and every step's .jsonl)", "或扫描文件夹中的文件（sweep.json 与每一步的 .jsonl）"),
    ("simulate", "or a sweep on the simulator (M/M/c, open loop)", "或在模拟器上扫描（M/M/c，开放到达）"),
    ("slots", "slots c", "槽位数 c"),
    ("mean", "mean service (s)", "平均服务时间（秒）"),
    ("rates", "rates (requests/s)", "速率（请求/秒）"),
    ("requests", "requests per step", "每步请求数"),
    ("seed", "seed", "种子"),
    ("run", "Run the simulated sweep", "运行模拟扫描"),
    ("loaded", "Loaded", "已载入"),
    ("none", "Choose the sample, open a sweep folder's files, or run a sweep on the simulator.", "请选择样本、打开扫描文件夹中的文件，或在模拟器上运行一次扫描。"),
    ("judge", "Judge with", "评判设置"),
    ("threshold", "TTFT threshold (s)", "TTFT 门槛（秒）"),
    ("threshold_word", "threshold", "门槛"),
    ("comparison", "TTFT qualifies when", "TTFT 合格条件"),
    ("target", "Target", "目标"),
    ("measure_joint", "joint qualification rate ≥", "联合合格率 ≥"),
    ("measure_ttft", "P95 TTFT (s) ≤", "P95 TTFT（秒）≤"),
    ("measure_goodput", "goodput (/s) ≥", "goodput（每秒）≥"),
    ("steps", "Every step", "每一步"),
    ("attempts", "attempts {a}, failures {f}, qualified {q}", "尝试 {a}，失败 {f}，合格 {q}"),
    ("interval", "95 % interval", "95 % 区间"),
    ("why", "why", "原因"),
    ("knee_mark", "knee", "拐点"),
    ("stopped", "The sweep stopped after step {n}: {why}", "扫描在第 {n} 步后停止：{why}"),
    ("chart_title", "Joint qualification rate and P95 TTFT against offered load", "联合合格率与 P95 TTFT 随所给负载的变化"),
    ("chart_desc", "Blue: joint qualification rate (left axis) with its 95 % interval as a bar; orange: P95 TTFT of successes (right axis) with its interval; green dashed: the target; grey dashed: the TTFT threshold; the vertical line: the knee.", "蓝色：联合合格率（左轴），竖条为 95 % 区间；橙色：成功请求的 P95 TTFT（右轴）及其区间；绿色虚线：目标；灰色虚线：TTFT 门槛；竖线：拐点。"),
    ("session_no_line", "(a target on sessions is read in the table: the chart plots the attempts' joint rate)", "（会话目标请看表格：此图画的是尝试的联合合格率）"),
    ("goodput_no_line", "(a goodput target is read in the table: goodput has no axis here)", "（goodput 目标请看表格：此图没有 goodput 轴）"),
];

/// The page's word for `key` in `lang` (`tracelab_web::lookup`: a missing key shows itself).
pub fn w(lang: Lang, key: &str) -> &'static str {
    tracelab_web::lookup(STRINGS, lang, key)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_word_has_both_languages() {
        for (k, en, zh) in super::STRINGS {
            assert!(!en.is_empty() && !zh.is_empty(), "{k}");
        }
    }
}
