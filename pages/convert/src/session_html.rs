//! The lab's session table (`src/components/sessions_table.rs` puts it in place as it is): the
//! per-turn rate, the share of sessions qualified and what independent turns would give side by
//! side, then one row per session (`tracelab_core::session::session_rows`: its id, turns, verdict
//! and first failing turn) with its turns below it, each with the core's per-attempt verdict. A
//! session's turns show while its `<tbody>` has the class `open` (the lab's button toggles it;
//! the sessions in `open` come open). Every value is the core's text, escaped; nothing is
//! computed here.

use tracelab_core::format::{integer, trim_num, value};
use tracelab_core::session::{session_rows, SessionFigure, Sessions};
use tracelab_core::{verdict, Attempt, Lang, Settings};
use tracelab_web::{lookup, Words};

use crate::peer_html::escape;

/// At most this many sessions are drawn (every figure counts them all).
const MAX_ROWS: usize = 2_000;

/// The table's own words (the figures and reasons are the core's).
const WORDS: &Words = &[
    ("sess_title", "Sessions", "会话"),
    ("sess_rows", "Sessions and their turns", "会话及其各轮"),
    (
        "sess_intro",
        "A session qualifies only when every one of its turns does. Open a session to see its turns; edit the threshold and watch the share of sessions qualified fall faster than the per-turn rate.",
        "一个会话只有在每一轮都合格时才合格。展开会话可查看它的各轮；修改门槛，看合格会话占比比按轮合格率下降得更快。",
    ),
    ("sess_turn_n", "turn {n}", "第 {n} 轮"),
    ("sess_col_session", "Session / turn", "会话 / 轮"),
    ("sess_col_turns", "Turns / attempt", "轮数 / 尝试"),
    ("sess_col_ttft", "TTFT (s)", "TTFT（秒）"),
    ("sess_col_verdict", "Verdict", "判定"),
    ("sess_col_first", "First failing turn / reason", "首个不合格的轮 / 原因"),
    ("sess_qualified", "qualified", "合格"),
    ("sess_not_qualified", "not qualified", "不合格"),
    ("sess_missing", "missing", "缺失"),
    (
        "sess_first_rows",
        "The first {shown} of {all} sessions are listed; the figures count every one.",
        "只列出 {all} 个会话中的前 {shown} 个；各项数字计入全部会话。",
    ),
    ("sess_interval", "95 % interval", "95 % 区间"),
];

/// The section's HTML for `attempts` under `settings`, in `lang`, the sessions whose ids are in
/// `open` drawn open; empty when no counted attempt names a session.
pub fn table(attempts: &[Attempt], settings: &Settings, lang: Lang, open: &[String]) -> String {
    let Some(figures) = Sessions::of(attempts, settings) else {
        return String::new();
    };
    let rows = session_rows(attempts, settings);
    let w = |key| lookup(WORDS, lang, key);
    let turn_n = |n: u32| escape(&w("sess_turn_n").replace("{n}", &integer(u64::from(n))));
    let said = |qualified: bool| {
        w(if qualified {
            "sess_qualified"
        } else {
            "sess_not_qualified"
        })
    };
    let colon = if lang == Lang::Zh { "：" } else { ": " };

    let mut h = format!(
        "<h2 id=\"sessions-h\">{} <span class=\"count\">({})</span></h2><p class=\"muted\">{}</p><div class=\"metric-grid session-figures\">",
        w("sess_title"),
        integer(rows.len() as u64),
        escape(w("sess_intro"))
    );
    for f in [
        &figures.turn_rate,
        &figures.session_share,
        &figures.predicted_share,
    ] {
        h.push_str(&figure(f, lang, w("sess_interval")));
    }
    h.push_str(&format!("</div><div class=\"table-scroll sessions-scroll\" tabindex=\"0\" role=\"region\" aria-label=\"{}\"><table data-testid=\"sessions-rows\"><thead><tr>", escape(w("sess_rows"))));
    // The verdict first, so a phone shows it without scrolling sideways.
    for (key, class) in [
        ("sess_col_session", ""),
        ("sess_col_verdict", ""),
        ("sess_col_first", ""),
        ("sess_col_turns", ""),
        ("sess_col_ttft", " class=\"num\""),
    ] {
        h.push_str(&format!("<th scope=\"col\"{class}>{}</th>", escape(w(key))));
    }
    h.push_str("</tr></thead>");
    for (k, row) in rows.iter().take(MAX_ROWS).enumerate() {
        let is_open = open.contains(&row.session_id);
        let id = escape(&row.session_id);
        let first = row
            .first_failing
            .map(|(turn, i)| {
                let why = verdict(&attempts[i], settings)
                    .reason
                    .map(|r| r.text().get(lang).to_string())
                    .unwrap_or_default();
                format!("{}{colon}{}", turn_n(turn), escape(&why))
            })
            .unwrap_or_default();
        h.push_str(&format!(
            "<tbody id=\"session-turns-{k}\" class=\"session{}\"><tr class=\"session-row{}\" data-testid=\"session-row\"><th scope=\"row\"><button type=\"button\" class=\"session-toggle mono\" aria-expanded=\"{is_open}\" aria-controls=\"session-turns-{k}\" data-session=\"{id}\" data-testid=\"session-toggle\">{id}</button></th><td data-testid=\"session-verdict\">{}</td><td data-testid=\"first-failing\">{first}</td><td>{}</td><td></td></tr>",
            if is_open { " open" } else { "" },
            if row.qualified { " qualified" } else { "" },
            said(row.qualified),
            integer(row.rows.len() as u64),
        ));
        for &i in &row.rows {
            let a = &attempts[i];
            let v = verdict(a, settings);
            let turn = a.session.as_ref().map_or(0, |s| s.turn);
            let ttft = v
                .ttft_s
                .map(trim_num)
                .unwrap_or_else(|| w("sess_missing").to_string());
            h.push_str(&format!(
                "<tr class=\"turn-row{}\" data-row=\"{i}\" data-testid=\"session-turn\"><td class=\"turn-label\">{}</td><td data-testid=\"verdict\">{}</td><td>{}</td><td class=\"mono\">{}</td><td class=\"num\">{}</td></tr>",
                if v.qualified { " qualified" } else { "" },
                turn_n(turn),
                said(v.qualified),
                escape(&v.reason.map(|r| r.text().get(lang).to_string()).unwrap_or_default()),
                escape(&a.id),
                escape(&ttft),
            ));
        }
        h.push_str("</tbody>");
    }
    h.push_str("</table></div>");
    if rows.len() > MAX_ROWS {
        h.push_str(&format!(
            "<p class=\"muted\" data-testid=\"sessions-cut\">{}</p>",
            escape(
                &w("sess_first_rows")
                    .replace("{shown}", &integer(MAX_ROWS as u64))
                    .replace("{all}", &integer(rows.len() as u64))
            )
        ));
    }
    h
}

/// One figure's box: its name, its value with its counts, its interval with the method (or, where
/// it has none, what it is).
fn figure(f: &SessionFigure, lang: Lang, interval_word: &str) -> String {
    let fig = &f.figure;
    let shown = escape(&value(fig, lang));
    let counts = match (fig.numerator, fig.denominator) {
        (Some(n), Some(d)) => format!(
            "<span class=\"counts\"> ({} / {})</span>",
            integer(n as u64),
            integer(d as u64)
        ),
        _ => String::new(),
    };
    let interval = match (&f.interval, &f.interval_method, &fig.undefined) {
        (_, _, Some(why)) => why.get(lang).to_string(),
        (Some(b), Some(m), _) => {
            let b = tracelab_core::compare::bounds_text(b, &fig.unit, lang);
            match lang {
                Lang::En => format!("{interval_word} {b} ({})", m.get(lang)),
                Lang::Zh => format!("{interval_word} {b}（{}）", m.get(lang)),
            }
        }
        _ => fig
            .note
            .as_ref()
            .or(fig.method_text.as_ref())
            .map(|t| t.get(lang).to_string())
            .unwrap_or_default(),
    };
    format!(
        "<div class=\"metric\" data-testid=\"session-figure-{}\"><h3>{}</h3><p class=\"value\">{shown}{counts}</p><p class=\"interval\">{}</p></div>",
        escape(&fig.key),
        escape(fig.name.get(lang)),
        escape(&interval)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelab_core::trace::{Outcome, Quality, SessionTurn};

    fn turn(session: &str, k: u32, ttft_ms: f64) -> Attempt {
        let mut a = Attempt::new(
            format!("{session}-{k}"),
            Outcome::Success,
            Some(ttft_ms),
            Quality::Pass,
        );
        a.start_ms = Some(f64::from(k));
        a.e2e_ms = Some(ttft_ms + 100.0);
        a.session = Some(SessionTurn {
            session_id: session.into(),
            turn: k,
            history_tokens: None,
            cached_tokens: None,
        });
        a
    }

    #[test]
    fn the_rows_say_the_cores_verdicts_escaped_and_open_where_asked() {
        let attempts = vec![
            turn("a<b", 1, 200.0),
            turn("a<b", 2, 200.0),
            turn("s2", 1, 200.0),
            turn("s2", 2, 800.0),
        ];
        let settings = Settings {
            ttft_threshold_s: 0.5,
            ..Settings::default()
        };
        let h = table(&attempts, &settings, Lang::En, &["s2".to_string()]);
        assert!(h.contains("data-session=\"a&lt;b\""), "{h}");
        assert!(!h.contains("a<b"), "{h}");
        assert!(
            h.contains("<tbody id=\"session-turns-0\" class=\"session\">"),
            "{h}"
        );
        assert!(
            h.contains("<tbody id=\"session-turns-1\" class=\"session open\">"),
            "{h}"
        );
        assert!(
            h.contains("aria-expanded=\"true\" aria-controls=\"session-turns-1\""),
            "{h}"
        );
        assert!(
            h.contains("50 %<span class=\"counts\"> (1 / 2)</span>"),
            "{h}"
        );
        assert!(
            h.contains("75 %<span class=\"counts\"> (3 / 4)</span>"),
            "{h}"
        );
        assert!(
            h.contains("<td data-testid=\"first-failing\">turn 2: latency</td>"),
            "{h}"
        );
        let zh = table(&attempts, &settings, Lang::Zh, &[]);
        assert!(zh.contains("第 2 轮：时延"), "{zh}");
        assert!(zh.contains("合格会话占比（每一轮都合格）"), "{zh}");
        // At 1 s both sessions qualify.
        let wide = Settings {
            ttft_threshold_s: 1.0,
            ..Settings::default()
        };
        assert!(table(&attempts, &wide, Lang::En, &[])
            .contains("100 %<span class=\"counts\"> (2 / 2)</span>"));
        // No sessions, no section.
        let plain = vec![Attempt::new(
            "x",
            Outcome::Success,
            Some(1.0),
            Quality::Pass,
        )];
        assert_eq!(table(&plain, &settings, Lang::En, &[]), "");
    }
}
