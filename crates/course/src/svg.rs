//! The ids a hand-written SVG (the system-path diagram) gives its elements, so a lesson's step can point at one.

/// The `id`s of a hand-written SVG's elements.
pub fn svg_ids(svg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("id=\"") {
        let before = rest[..i].chars().last();
        let after = &rest[i + 4..];
        if before.is_some_and(char::is_whitespace) {
            if let Some(end) = after.find('"') {
                out.push(after[..end].to_string());
            }
        }
        rest = after;
    }
    out
}
