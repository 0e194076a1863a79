//! The peer panel's table (`tracelab_core::export::PeerTable`, the core's rows in the reader's
//! language) written as HTML for the lab to put in place: the tool's figure, ours with the tool's
//! method (coloured by its mark: match, approx, mismatch), ours under the lesson's definitions,
//! and why they differ. Every value is the core's text, escaped; nothing is computed here.

use tracelab_core::export::PeerTable;
use tracelab_core::Lang;
use tracelab_web::{lookup, Words};

/// The table's own words (the rows are the core's).
const WORDS: &Words = &[
    (
        "peer_match",
        "figures recomputed with the tool's method equal the tool's to floating-point rounding",
        "用工具自己的方法重算，结果与工具的数字在浮点舍入范围内一致",
    ),
    ("peer_figure", "Figure", "指标"),
    ("peer_said", "The tool said", "工具给出"),
    (
        "peer_method",
        "We recompute, tool's method",
        "按工具方法重算",
    ),
    (
        "peer_lesson",
        "Under the lesson's definitions",
        "按课程定义",
    ),
    ("peer_why", "What moves, and why", "变化及原因"),
];

/// Text as HTML text or an attribute's value.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The summary line ("12 / 12 figures recomputed … equal the tool's") and the table.
pub fn table(t: &PeerTable, lang: Lang) -> String {
    let w = |key| escape(lookup(WORDS, lang, key));
    let mut h = format!(
        "<p data-testid=\"peer-summary\">{} / {} {}</p>",
        t.matched,
        t.reproducible,
        w("peer_match")
    );
    h.push_str("<div class=\"table-scroll\"><table class=\"peer-table\" data-testid=\"peer-table\"><thead><tr>");
    for (key, class) in [
        ("peer_figure", ""),
        ("peer_said", " class=\"num\""),
        ("peer_method", " class=\"num\""),
        ("peer_lesson", " class=\"num\""),
        ("peer_why", ""),
    ] {
        h.push_str(&format!("<th scope=\"col\"{class}>{}</th>", w(key)));
    }
    h.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        // Only the three marks the style sheet colours become a class.
        let mark = if matches!(r.mark.as_str(), "match" | "approx" | "mismatch") {
            format!(" {}", r.mark)
        } else {
            String::new()
        };
        h.push_str(&format!(
            "<tr data-testid=\"peer-row\" data-key=\"{}\"><th scope=\"row\">{}<br><span class=\"mono muted\">{}</span></th><td class=\"num\">{}</td><td class=\"num{mark}\">{}</td><td class=\"num\">{}</td><td class=\"why-cell\">{}</td></tr>",
            escape(&r.key),
            escape(&r.label),
            escape(&r.tool_key),
            escape(&r.said),
            escape(&r.ours),
            escape(&r.lesson),
            escape(&r.why),
        ));
    }
    h.push_str("</tbody></table></div>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelab_core::export::PeerTableRow;

    #[test]
    fn every_value_is_escaped_and_each_mark_colours_its_cell() {
        let row = |key: &str, mark: &str| PeerTableRow {
            key: key.into(),
            label: "P99 <TTFT>".into(),
            tool_key: "p99_ttft_ms".into(),
            said: "1 & 2".into(),
            ours: "67.56 ms ✓".into(),
            lesson: "\"70 ms\"".into(),
            why: "it's".into(),
            mark: mark.into(),
        };
        let t = PeerTable {
            matched: 1,
            reproducible: 2,
            rows: vec![row("ttft_p99", "match"), row("x\"><script>", "bogus")],
        };
        let h = table(&t, Lang::Zh);
        assert!(
            h.starts_with("<p data-testid=\"peer-summary\">1 / 2 用工具自己的方法重算"),
            "{h}"
        );
        assert!(
            h.contains("<th scope=\"col\" class=\"num\">工具给出</th>"),
            "{h}"
        );
        assert!(
            h.contains("data-key=\"ttft_p99\"")
                && h.contains("<td class=\"num match\">67.56 ms ✓</td>"),
            "{h}"
        );
        assert!(
            h.contains("P99 &lt;TTFT&gt;")
                && h.contains("1 &amp; 2")
                && h.contains("&quot;70 ms&quot;")
                && h.contains("it&#39;s"),
            "{h}"
        );
        assert!(
            !h.contains("<script>")
                && h.contains("data-key=\"x&quot;&gt;&lt;script&gt;\"")
                && !h.contains("num bogus"),
            "{h}"
        );
    }
}
