//! The `[[step:…]]` and `[[exercise:…]]` markers in a lesson's Markdown, outside code fences.

/// A piece of a lesson's Markdown: text to render, or a marker line the lab turns into a step
/// button or an exercise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    Markdown(&'a str),
    Step(&'a str),
    Exercise(&'a str),
}

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
        _ => return None,
    };
    let id = id.trim();
    let ok = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
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

/// Splits a lesson's Markdown at its marker lines (`[[step:ID]]` or `[[exercise:ID]]`, each alone
/// on its line, outside code blocks). Blank stretches between markers are dropped.
pub fn segments(markdown: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    let mut fence = Fence::default();
    for line in markdown.split_inclusive('\n') {
        let here = offset;
        offset += line.len();
        if fence.in_code(line) {
            continue;
        }
        if let Some((kind, id)) = marker_of(line) {
            let before = &markdown[start..here];
            if !before.trim().is_empty() {
                out.push(Segment::Markdown(before));
            }
            out.push(if kind == "step" { Segment::Step(id) } else { Segment::Exercise(id) });
            start = offset;
        }
    }
    let rest = &markdown[start..];
    if !rest.trim().is_empty() {
        out.push(Segment::Markdown(rest));
    }
    out
}

/// Every marker of a lesson's Markdown, and the lines that look like a marker but are not one
/// (a marker must stand alone on its line).
pub fn markers(markdown: &str) -> (Vec<Marker>, Vec<String>) {
    let mut found = Vec::new();
    let mut bad = Vec::new();
    let mut fence = Fence::default();
    for (i, line) in markdown.lines().enumerate() {
        if fence.in_code(line) {
            continue;
        }
        match marker_of(line) {
            Some((kind, id)) => found.push(Marker { kind, id: id.to_string(), line: i + 1 }),
            None if line.contains("[[step:") || line.contains("[[exercise:") => bad.push(format!(
                "line {}: a `[[step:ID]]` or `[[exercise:ID]]` marker must stand alone on its line (ids: letters, digits, `-`, `_`, `.`)",
                i + 1
            )),
            None => {}
        }
    }
    (found, bad)
}
