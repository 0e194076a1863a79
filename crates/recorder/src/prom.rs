//! One line of the Prometheus text exposition format (0.0.4): `NAME{label="v",…} VALUE
//! [TIMESTAMP]`, read with the labels the caller asks for and no others, so a hostname, pod,
//! UUID or path in a label is dropped as it is read. Shared by the DCGM and engine scrapers.

/// A series' name, the labels kept, and its value (`+Inf`/`-Inf` kept; `NaN` refused).
pub struct Series<'a> {
    pub name: &'a str,
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
}

/// Reads one sample line, keeping only the labels named in `keep`. None for a comment, a blank
/// line, or a line that is not a sample.
pub fn parse_line<'a>(line: &'a str, keep: &[&'static str]) -> Option<Series<'a>> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let name_end = line.find(|c: char| c == '{' || c.is_whitespace())?;
    let name = &line[..name_end];
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(after) = rest.strip_prefix('{') {
        let mut chars = after.char_indices();
        // Walk label pairs; values are quoted and may hold escaped quotes, commas and braces.
        let end = loop {
            let (start, c) = chars.next()?;
            if c == '}' {
                break start + 1;
            }
            if c == ',' || c.is_whitespace() {
                continue;
            }
            let eq = after[start..].find('=')? + start;
            let key = after[start..eq].trim();
            while chars.next()?.0 < eq {}
            let (_, quote) = chars.next()?;
            if quote != '"' {
                return None;
            }
            let mut value = String::new();
            loop {
                let (_, c) = chars.next()?;
                match c {
                    '\\' => value.push(chars.next()?.1),
                    '"' => break,
                    c => value.push(c),
                }
            }
            if let Some(k) = keep.iter().find(|k| **k == key) {
                labels.push((*k, value));
            }
        };
        rest = &after[end..];
    }
    let value: f64 = match rest.split_whitespace().next()? {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().ok()?,
    };
    (!value.is_nan()).then_some(Series {
        name,
        labels,
        value,
    })
}

impl Series<'_> {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_labels_asked_for_are_kept() {
        let s = parse_line(
            r#"X{gpu="1",Hostname="a\"b,}c",le="+Inf"} 12 1700000000000"#,
            &["gpu", "le"],
        )
        .unwrap();
        assert_eq!((s.name, s.value), ("X", 12.0));
        assert_eq!(
            s.labels,
            vec![("gpu", "1".to_string()), ("le", "+Inf".to_string())]
        );
        assert!(parse_line("# HELP X y", &[]).is_none());
        assert!(parse_line(r#"X{gpu="0"} NaN"#, &[]).is_none());
        assert!(parse_line(r#"X{gpu="0" 1"#, &[]).is_none());
        assert_eq!(parse_line("Y +Inf", &[]).unwrap().value, f64::INFINITY);
    }
}
