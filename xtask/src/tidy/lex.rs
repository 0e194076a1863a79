//! A small Rust lexer for the workspace tidy (`layers.rs`, `view.rs` and the checks in
//! `tidy.rs`): enough to find paths and literals, with comments, strings and character literals
//! out of the way, so every check reads source the same way.

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Ident(String),
    /// A numeric literal as written (`1_000.0`, `1e-3`, `100u32`).
    Number(String),
    /// `::`
    PathSep,
    Punct(char),
}

/// Tokens with their 1-based line. Comments (line, nested block), strings (plain, byte, raw)
/// and character literals are dropped; lifetimes are told apart from character literals.
pub fn lex(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let ident_start = |ch: char| ch.is_alphabetic() || ch == '_';
    let ident_char = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        let ch = c[i];
        match ch {
            '\n' => {
                line += 1;
                i += 1;
            }
            _ if ch.is_whitespace() => i += 1,
            '/' if c.get(i + 1) == Some(&'/') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if c.get(i + 1) == Some(&'*') => {
                let mut depth = 0;
                while i < c.len() {
                    if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        line += usize::from(c[i] == '\n');
                        i += 1;
                    }
                }
            }
            // Raw strings: r"…", r#"…"#, br#"…"#.
            'r' | 'b' if raw_string_start(&c, i).is_some() => {
                let (hashes, body) = raw_string_start(&c, i).unwrap();
                i = body;
                loop {
                    if i >= c.len() {
                        break;
                    }
                    if c[i] == '"' && (0..hashes).all(|k| c.get(i + 1 + k) == Some(&'#')) {
                        i += 1 + hashes;
                        break;
                    }
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
            '"' => i = skip_string(&c, i + 1, &mut line),
            'b' if c.get(i + 1) == Some(&'"') => i = skip_string(&c, i + 2, &mut line),
            'b' if c.get(i + 1) == Some(&'\'') => i = skip_char(&c, i + 1),
            '\'' => {
                // A character literal ('a', '\n', '\u{1F600}') or a lifetime ('a, 'static).
                if c.get(i + 1) == Some(&'\\') || c.get(i + 2) == Some(&'\'') {
                    i = skip_char(&c, i);
                } else {
                    i += 1;
                    while i < c.len() && ident_char(c[i]) {
                        i += 1;
                    }
                }
            }
            _ if ident_start(ch) => {
                let start = i;
                while i < c.len() && ident_char(c[i]) {
                    i += 1;
                }
                out.push((Tok::Ident(c[start..i].iter().collect()), line));
            }
            _ if ch.is_ascii_digit() => {
                let start = i;
                i = number_end(&c, i);
                out.push((Tok::Number(c[start..i].iter().collect()), line));
            }
            ':' if c.get(i + 1) == Some(&':') => {
                out.push((Tok::PathSep, line));
                i += 2;
            }
            _ => {
                out.push((Tok::Punct(ch), line));
                i += 1;
            }
        }
    }
    out
}

/// `(number of #, index of the body)` when a raw string starts at `i`.
fn raw_string_start(c: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if c[j] == 'b' {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    // Not the tail of an identifier such as `bar"`: the lexer only gets here at a token start.
    j += 1;
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some((hashes, j + 1))
}

fn skip_string(c: &[char], mut i: usize, line: &mut usize) -> usize {
    while i < c.len() {
        match c[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            ch => {
                *line += usize::from(ch == '\n');
                i += 1;
            }
        }
    }
    i
}

/// From the opening quote of a character literal to just past its closing quote.
fn skip_char(c: &[char], mut i: usize) -> usize {
    i += 1;
    while i < c.len() {
        match c[i] {
            '\\' => i += 2,
            '\'' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// The end of a numeric literal starting at `i`: digits and `_`, a fraction (not a method call
/// `1.max(…)` or a range `0..n`), an exponent, a type suffix (`f64`, `usize`).
fn number_end(c: &[char], mut i: usize) -> usize {
    let alnum = |ch: char| ch.is_ascii_alphanumeric() || ch == '_';
    if c[i] == '0' && matches!(c.get(i + 1), Some('x' | 'o' | 'b')) {
        i += 2;
        while i < c.len() && alnum(c[i]) {
            i += 1;
        }
        return i;
    }
    let digits = |i: &mut usize| {
        while *i < c.len() && (c[*i].is_ascii_digit() || c[*i] == '_') {
            *i += 1;
        }
    };
    digits(&mut i);
    if c.get(i) == Some(&'.')
        && c.get(i + 1)
            .is_none_or(|n| n.is_ascii_digit() || !(n.is_alphabetic() || *n == '_' || *n == '.'))
    {
        i += 1;
        digits(&mut i);
    }
    if matches!(c.get(i), Some('e' | 'E')) {
        let mut j = i + 1;
        if matches!(c.get(j), Some('+' | '-')) {
            j += 1;
        }
        if c.get(j).is_some_and(char::is_ascii_digit) {
            i = j;
            digits(&mut i);
        }
    }
    while i < c.len() && alnum(c[i]) {
        i += 1;
    }
    i
}
/// The first name of each item of the `{ … }` group that opens at `toks[open]` (`use
/// crate::{a::b, c}` → `a`, `c`), each with its line, and the index of the group's closing brace.
pub fn group_heads(toks: &[(Tok, usize)], open: usize) -> (Vec<(String, usize)>, usize) {
    let mut heads = Vec::new();
    let (mut level, mut expect) = (0, true);
    let mut j = open;
    while j < toks.len() {
        match &toks[j].0 {
            Tok::Punct('{') => {
                level += 1;
                expect = level == 1;
            }
            Tok::Punct('}') => {
                level -= 1;
                if level == 0 {
                    break;
                }
            }
            Tok::Punct(',') if level == 1 => expect = true,
            Tok::Ident(name) if level == 1 && expect => {
                heads.push((name.clone(), toks[j].1));
                expect = false;
            }
            _ => expect = false,
        }
        j += 1;
    }
    (heads, j)
}
