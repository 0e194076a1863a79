//! The lessons page's own words in both course languages (the lessons themselves are Markdown).

use tracelab_core::Lang;

const STRINGS: &[(&str, &str, &str)] = &[
    ("title", "Trace Lab — lessons", "Trace Lab 课程"),
    ("course", "Draw the system first, then define fast and slow", "先画出系统，再定义快与慢"),
    ("loading", "Loading the course…", "正在加载课程…"),
    ("lessons_nav", "Lessons", "课程"),
    ("language", "中文", "English"),
    ("language_label", "Switch language", "切换语言"),
    ("open_lab", "Open the lab in its own tab", "在新标签页打开实验室"),
    ("lab_frame", "The lab, driven by this lesson", "由本课驱动的实验室"),
    ("step_done", "The lab now shows this step.", "实验室已切换到这一步。"),
    ("check", "Check", "检查"),
    ("save", "Save", "保存"),
    ("right", "Right", "正确"),
    ("wrong", "Not yet", "还不对"),
    ("expected", "The core computes", "核心计算结果为"),
    ("show_answer", "Show the core's figure", "显示核心计算结果"),
    ("not_a_number", "Not a number: write digits, e.g. 0.5. Nothing was checked.", "这不是数字：请填写数字，例如 0.5。本次没有检查。"),
    ("your_answer", "Your answer", "你的答案"),
    ("numerator", "Numerator", "分子"),
    ("denominator", "Denominator", "分母"),
    ("unit", "Unit", "单位"),
    ("choose", "— choose —", "— 请选择 —"),
    ("notes", "Your notes on this lesson", "本课笔记"),
    ("saved_here", "Notes, answers and ticks are saved only in this browser. Export them to keep them.", "笔记、答案和勾选只保存在本浏览器中。请导出以便保存。"),
    ("export_progress", "Export my progress", "导出我的进度"),
    ("import_progress", "Import progress from a file", "从文件导入进度"),
    ("imported", "Progress imported.", "进度已导入。"),
    ("solved", "exercises solved", "道练习已答对"),
    ("card", "Metric card", "指标口径卡"),
    ("card_intro", "Fill it in yourself, or pre-fill it from what the lab shows now; then correct and complete it.", "你可以自己填写，也可以按实验室当前的设置预填，然后修改和补充。"),
    ("prefill", "Pre-fill from the lab", "按实验室预填"),
    ("export_md", "Download as Markdown", "下载 Markdown"),
    ("export_json", "Download as JSON", "下载 JSON"),
    ("copy", "Copy to clipboard", "复制到剪贴板"),
    ("copied", "Copied.", "已复制。"),
    ("results", "The card as it will be exported", "导出时的口径卡"),
    ("missing_fields", "Still empty:", "尚未填写："),
    ("self_check", "Self-check", "自我检查"),
    ("self_check_intro", "Tick each criterion only when you have checked it yourself: nothing here ticks itself.", "只有在你亲自核对之后才勾选：这里不会自动勾选。"),
    ("teacher", "Teacher mode: answers are hidden.", "教师模式：答案已隐藏。"),
    ("print", "Print a worksheet", "打印练习单"),
    ("diagram", "The system path", "系统路径图"),
    ("min_checked", "Tick at least", "至少勾选"),
    ("items", "items", "项"),
];

/// The page's word for `key` in `lang`.
pub fn w(lang: Lang, key: &str) -> &'static str {
    tracelab_web::lookup(STRINGS, lang, key)
}
