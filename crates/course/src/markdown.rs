//! The `[[step:…]]` and `[[exercise:…]]` markers in a lesson's Markdown, outside code fences, and
//! the worked answers (`[[worked:EX1,EX2]]` … `[[/worked]]`) that open once those exercises are
//! answered: predict, then reveal.

/// A piece of a lesson's Markdown: text to render, or a marker line the lab turns into a step
/// button or an exercise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    Markdown(&'a str),
    Step(&'a str),
    Exercise(&'a str),
    /// A worked answer: the exercise ids that open it (comma-separated, as written in the marker)
    /// and its Markdown, shown once every one of them is answered or the learner asks for it.
    Worked(&'a str, &'a str),
    /// "Judge first" on a sample (its file name): the learner calls each row, qualified or not
    /// and why, before the lab beside shows its verdict, scored by the core.
    Judge(&'a str),
}

/// The exercise ids of a [`Segment::Worked`] marker (`"stream-ttft,stream-e2e"`).
pub fn worked_exercises(list: &str) -> Vec<&str> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The line that closes a worked answer.
const WORKED_END: &str = "[[/worked]]";

/// A marker found in a lesson's Markdown, with its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub kind: &'static str,
    pub id: String,
    pub line: usize,
}

fn marker_of(line: &str) -> Option<(&'static str, &str)> {
    let inner = line.trim().strip_prefix("[[")?.strip_suffix("]]")?;
    let (kind, id) = inner.split_once(':')?;
    let kind = match kind {
        "step" => "step",
        "exercise" => "exercise",
        "worked" => "worked",
        "judge" => "judge",
        _ => return None,
    };
    let id = id.trim();
    let list = kind == "worked";
    let ok = !id.is_empty()
        && id.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') || (list && c == ',')
        })
        && (!list || worked_exercises(id).len() == id.split(',').count());
    ok.then_some((kind, id))
}

/// Whether `c` is written without spaces between words: CJK ideographs, kana, hangul, and the
/// full-width punctuation that sits between them.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x303F // CJK symbols and punctuation (、。「」)
        | 0x3040..=0x30FF // kana
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF // ideographs
        | 0xAC00..=0xD7AF // hangul
        | 0xFF00..=0xFFEF) // full-width forms (，：（）)
}

/// A paragraph's line breaks between two CJK characters removed, so the rendered text has no
/// space there: Markdown turns a line break inside a paragraph into a space, which Chinese does
/// not write ("平均服务 时间"). A break beside Latin text or a number stays (a space there is
/// how the course writes "每秒 3.2 个"). Headings, table rows and fenced code are left alone.
pub fn join_cjk_lines(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut fence = Fence::default();
    let mut lines = md.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        let code = fence.in_code(line);
        let body = line.trim_end_matches(['\n', '\r']);
        let joins = !code
            && !matches!(body.trim_start().chars().next(), Some('#' | '|'))
            && body.chars().last().is_some_and(is_cjk)
            && lines
                .peek()
                .and_then(|next| next.chars().next())
                .is_some_and(is_cjk);
        out.push_str(if joins { body } else { line });
    }
    out
}

/// Tracks fenced code blocks (```` ``` ```` or `~~~`) line by line: markers inside code are text.
#[derive(Default)]
struct Fence(Option<&'static str>);

impl Fence {
    /// Whether `line` is a fence line or inside a fenced block.
    fn in_code(&mut self, line: &str) -> bool {
        let trimmed = line.trim();
        if let Some(f) = self.0 {
            if trimmed.starts_with(f) {
                self.0 = None;
            }
            return true;
        }
        self.0 = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f));
        self.0.is_some()
    }
}

/// Splits a lesson's Markdown at its marker lines (`[[step:ID]]`, `[[exercise:ID]]` or `[[judge:SAMPLE]]`, each alone
/// on its line, outside code blocks); a `[[worked:…]]` line up to its `[[/worked]]` is one
/// [`Segment::Worked`] (an unclosed one runs to the end). Blank stretches between markers are
/// dropped.
pub fn segments(markdown: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    let mut fence = Fence::default();
    let mut worked: Option<&str> = None;
    for line in markdown.split_inclusive('\n') {
        let here = offset;
        offset += line.len();
        if fence.in_code(line) {
            continue;
        }
        if let Some(list) = worked {
            if line.trim() == WORKED_END {
                out.push(Segment::Worked(list, &markdown[start..here]));
                worked = None;
                start = offset;
            }
            continue;
        }
        if let Some((kind, id)) = marker_of(line) {
            let before = &markdown[start..here];
            if !before.trim().is_empty() {
                out.push(Segment::Markdown(before));
            }
            match kind {
                "step" => out.push(Segment::Step(id)),
                "exercise" => out.push(Segment::Exercise(id)),
                "judge" => out.push(Segment::Judge(id)),
                _ => worked = Some(id),
            }
            start = offset;
        }
    }
    let rest = &markdown[start..];
    match worked {
        Some(list) => out.push(Segment::Worked(list, rest)),
        None if !rest.trim().is_empty() => out.push(Segment::Markdown(rest)),
        None => {}
    }
    out
}

/// Every marker of a lesson's Markdown (a worked answer's with kind `worked` and its exercise
/// list as id), and the lines that look like a marker but are not one (a marker must stand alone
/// on its line; a worked answer is closed by `[[/worked]]` and holds no marker).
pub fn markers(markdown: &str) -> (Vec<Marker>, Vec<String>) {
    let mut found = Vec::new();
    let mut bad = Vec::new();
    let mut fence = Fence::default();
    let mut open: Option<usize> = None;
    for (i, line) in markdown.lines().enumerate() {
        if fence.in_code(line) {
            continue;
        }
        if line.trim() == WORKED_END {
            if open.take().is_none() {
                bad.push(format!(
                    "line {}: `{WORKED_END}` closes no `[[worked:…]]`",
                    i + 1
                ));
            }
            continue;
        }
        match marker_of(line) {
            Some((kind, id)) if open.is_some() => bad.push(format!(
                "line {}: [[{kind}:{id}]] inside the worked answer opened on line {}: close it with `{WORKED_END}` first",
                i + 1,
                open.unwrap_or_default()
            )),
            Some((kind, id)) => {
                if kind == "worked" {
                    open = Some(i + 1);
                }
                found.push(Marker { kind, id: id.to_string(), line: i + 1 })
            }
            None if line.contains("[[step:") || line.contains("[[exercise:") || line.contains("[[worked:") => bad.push(format!(
                "line {}: a `[[step:ID]]`, `[[exercise:ID]]` or `[[worked:ID,ID]]` marker must stand alone on its line (ids: letters, digits, `-`, `_`, `.`)",
                i + 1
            )),
            None => {}
        }
    }
    if let Some(line) = open {
        bad.push(format!(
            "line {line}: the worked answer is never closed (add a line `{WORKED_END}`)"
        ));
    }
    (found, bad)
}

#[cfg(test)]
mod cjk_tests {
    use super::join_cjk_lines;

    #[test]
    fn a_break_between_two_cjk_characters_is_removed_and_others_stay() {
        assert_eq!(
            join_cjk_lines("平均服务\n时间 1 秒，每秒\n3.2 个请求。\n\n下一段\n"),
            "平均服务时间 1 秒，每秒\n3.2 个请求。\n\n下一段\n"
        );
        // Full-width punctuation counts; Latin on either side keeps the break.
        assert_eq!(join_cjk_lines("样例，\n闭环"), "样例，闭环");
        assert_eq!(join_cjk_lines("a\nb\n"), "a\nb\n");
        // A heading or a table row is its own line; code is code.
        assert_eq!(join_cjk_lines("## 标题\n正文\n"), "## 标题\n正文\n");
        assert_eq!(join_cjk_lines("| 列 |\n| 值 |\n"), "| 列 |\n| 值 |\n");
        assert_eq!(
            join_cjk_lines("```\n代码\n代码\n```\n"),
            "```\n代码\n代码\n```\n"
        );
    }

    #[test]
    fn the_chinese_lessons_render_without_a_space_inside_a_sentence() {
        let lesson = include_str!("../../../lessons/04-baseline.zh.md");
        let joined = join_cjk_lines(lesson);
        assert!(
            joined.contains("平均服务时间 1 秒"),
            "lesson 4's sample paragraph"
        );
        assert!(
            joined.contains("第 60 秒起停顿 20 秒"),
            "lesson 4's sample paragraph"
        );
    }
}
