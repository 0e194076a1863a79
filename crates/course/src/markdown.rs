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
