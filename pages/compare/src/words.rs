//! The compare page's own words in both course languages (figure names and verdicts are the core's).

use tracelab_core::Lang;

const STRINGS: &[(&str, &str, &str)] = &[
    ("title", "Trace Lab — compare runs", "Trace Lab — 比较两次运行"),
    ("subtitle", "Is the new run really different, or is it noise?", "新的运行真的不同，还是只是噪声？"),
    ("language", "中文", "English"),
    ("language_label", "Switch language", "切换语言"),
    ("back", "Back to the lab", "返回实验室"),
    ("base", "Base run", "基线运行"),
    ("new", "Compare with…", "与……比较"),
    ("sample", "Sample", "样本"),
    ("choose", "— choose a sample —", "— 选择样本 —"),
    ("upload", "or open a file", "或打开文件"),
    ("pick_both", "Choose a base run and a run to compare with it.", "请选择一个基线运行和一个要与之比较的运行。"),
    ("contract", "Contract", "契约"),
    ("five_checks", "Before either run counts as a baseline: the five checks", "两次运行能否作为基线：五项检查"),
    ("first_token", "TTFT ends at", "TTFT 截止于"),
    ("latency_from", "Latency measured from", "时延的起点"),
    ("judged_with", "Both runs judged with", "两次运行的评判设置"),
    ("threshold_box", "TTFT threshold", "TTFT 门槛"),
    ("comparison", "Within the threshold means", "“在门槛内”的写法"),
    ("percentile_method", "Percentile method", "分位数方法"),
    ("link_ignored", "Not used from the link:", "链接中未采用的部分："),
    ("figure", "Figure", "指标"),
    ("difference", "Difference (new − base)", "差值（新 − 基线）"),
    ("interval", "95 % interval of the difference", "差值的 95 % 区间"),
    ("verdict", "Verdict", "结论"),
    ("verdict_rule", "How the verdict is decided", "结论如何判定"),
    ("method", "Method", "方法"),
    ("own_interval", "95 % interval", "95 % 区间"),
    ("chart_title", "TTFT of successes: both distributions (ECDF)", "成功请求的 TTFT：两个分布（经验累积分布）"),
    ("chart_desc", "Share of successes with a TTFT at or below x. The dashed line is the threshold; each bar at the tail percentile spans its 95 % interval.", "横轴 x 处的高度是 TTFT 不超过 x 的成功请求所占比例。虚线是门槛；尾部分位数处的横条是它的 95 % 区间。"),
    ("threshold", "threshold", "门槛"),
    ("open_above", "no upper bound", "无上界"),
    ("bootstrap", "Percentile differences: bootstrap", "分位数差值：自助法"),
    ("boot_detail", "seed {seed}, {n} resamples", "种子 {seed}，重抽样 {n} 次"),
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
