//! Python's `json.dumps` writes a non-finite float as the bare token `Infinity`, `-Infinity` or
//! `NaN` (its default `allow_nan=True`); strict JSON has no such token, so serde refuses the
//! file. SGLang `bench_serving` writes `"request_rate": Infinity` for its default rate, in every
//! result. This finds those tokens outside strings and rewrites each as a string (`"Infinity"`),
//! which the importers' number reader turns back into the float it stands for; the caller keeps
//! the rewrite only for tools known to write them (`import::sniff::PYTHON_JSON_TOOLS`).

/// One token found, where, and under which key.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Token {
    pub token: &'static str,
    /// 1-based line and column (in characters) of the token.
    pub line: usize,
    pub column: usize,
    /// The object key the value sits under, the nearest one before it.
    pub key: Option<String>,
}

const TOKENS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];

/// The text with every token outside strings quoted, and the tokens; `None` when there is none.
pub(super) fn rewrite(text: &str) -> Option<(String, Vec<Token>)> {
    let mut out = String::with_capacity(text.len() + 16);
    let mut tokens = Vec::new();
    let (mut line, mut column) = (1usize, 1usize);
    let mut key: Option<String> = None;
    let mut last_string: Option<String> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '"' {
            // A string: copied as it is, escapes and all.
            let mut body = String::new();
            out.push(c);
            column += 1;
            let mut escaped = false;
            for (_, d) in chars.by_ref() {
                out.push(d);
                advance(d, &mut line, &mut column);
                if escaped {
                    escaped = false;
                    body.push(d);
                } else if d == '\\' {
                    escaped = true;
                } else if d == '"' {
                    break;
                } else {
                    body.push(d);
                }
            }
            last_string = Some(body);
            continue;
        }
        if c == ':' {
            key = last_string.take();
        } else if !c.is_whitespace() {
            last_string = None;
        }
        let rest = &text[i..];
        let preceded_by_word = text[..i]
            .chars()
            .next_back()
            .is_some_and(|p| p.is_ascii_alphanumeric() || p == '_' || p == '.');
        let found = (!preceded_by_word)
            .then(|| TOKENS.iter().find(|t| rest.starts_with(**t)))
            .flatten()
            .filter(|t| {
                !rest[t.len()..]
                    .chars()
                    .next()
                    .is_some_and(|n| n.is_ascii_alphanumeric() || n == '_')
            });
        if let Some(token) = found {
            tokens.push(Token {
                token,
                line,
                column,
                key: key.clone(),
            });
            out.push('"');
            out.push_str(token);
            out.push('"');
            column += token.len();
            for _ in 1..token.len() {
                chars.next();
            }
            continue;
        }
        out.push(c);
        advance(c, &mut line, &mut column);
    }
    (!tokens.is_empty()).then_some((out, tokens))
}

/// Moves the 1-based line and column past one character of the input.
fn advance(c: char, line: &mut usize, column: &mut usize) {
    if c == '\n' {
        *line += 1;
        *column = 1;
    } else {
        *column += 1;
    }
}

/// The warning an imported trace carries: which tokens, where, and how they were read.
pub(super) fn describe(tokens: &[Token]) -> String {
    let shown: Vec<String> = tokens
        .iter()
        .take(5)
        .map(|t| match &t.key {
            Some(k) => format!("`{}` at `{k}` (line {})", t.token, t.line),
            None => format!("`{}` (line {}, column {})", t.token, t.line, t.column),
        })
        .collect();
    let more = if tokens.len() > 5 {
        format!(" and {} more", tokens.len() - 5)
    } else {
        String::new()
    };
    format!(
        "this file holds {} bare {} that Python's json.dumps writes for a non-finite number (not valid JSON, but what this tool \
         writes): {}{more}; each is read as the number it stands for — an infinite request rate means every request was sent \
         at once, and a figure written as NaN or Infinity has no value to compare",
        tokens.len(),
        if tokens.len() == 1 { "token" } else { "tokens" },
        shown.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_outside_strings_are_quoted_and_located() {
        let text = "{\"backend\": \"sglang\", \"request_rate\": Infinity,\n \"x\": [1, NaN, -Infinity], \"s\": \"NaN Infinity \\\" NaN\"}";
        let (out, tokens) = rewrite(text).expect("three tokens");
        assert_eq!(
            out,
            "{\"backend\": \"sglang\", \"request_rate\": \"Infinity\",\n \"x\": [1, \"NaN\", \"-Infinity\"], \"s\": \"NaN Infinity \\\" NaN\"}"
        );
        let seen: Vec<(&str, usize, usize, Option<&str>)> = tokens
            .iter()
            .map(|t| (t.token, t.line, t.column, t.key.as_deref()))
            .collect();
        assert_eq!(
            seen,
            vec![
                ("Infinity", 1, 39, Some("request_rate")),
                ("NaN", 2, 11, Some("x")),
                ("-Infinity", 2, 16, Some("x"))
            ]
        );
        assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok());
        assert!(describe(&tokens).starts_with("this file holds 3 bare tokens"));
    }

    #[test]
    fn words_that_only_contain_a_token_are_left_alone() {
        assert_eq!(rewrite("{\"a\": NaNx}"), None);
        assert_eq!(rewrite("{\"a\": xNaN}"), None);
        assert_eq!(rewrite("[\"Infinity\", 1e5]"), None);
    }
}
