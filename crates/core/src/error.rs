//! Errors that say what is wrong and where: the file, the line and the field.

use std::fmt;

use crate::text::Text;

/// A problem found while reading a trace. Nothing in the core panics on bad input; every path
/// ends here with enough detail for a learner to fix the file.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// The file's name as the user knows it (may be empty when reading from memory).
    pub file: String,
    /// 1-based line number, when the problem is on one line.
    pub line: Option<usize>,
    /// The field (JSON key or CSV column) at fault.
    pub field: Option<String>,
    pub message: String,
}

impl ParseError {
    pub fn new(message: impl Into<String>) -> ParseError {
        ParseError {
            file: String::new(),
            line: None,
            field: None,
            message: message.into(),
        }
    }

    pub fn at_line(mut self, line: usize) -> ParseError {
        self.line = Some(line);
        self
    }

    pub fn field(mut self, field: impl Into<String>) -> ParseError {
        self.field = Some(field.into());
        self
    }

    pub fn in_file(mut self, file: impl Into<String>) -> ParseError {
        self.file = file.into();
        self
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut wrote_place = false;
        if !self.file.is_empty() {
            write!(f, "{}", self.file)?;
            wrote_place = true;
        }
        if let Some(line) = self.line {
            if wrote_place {
                write!(f, ", ")?;
            }
            write!(f, "line {line}")?;
            wrote_place = true;
        }
        if let Some(field) = &self.field {
            if wrote_place {
                write!(f, ", ")?;
            }
            write!(f, "field `{field}`")?;
            wrote_place = true;
        }
        if wrote_place {
            write!(f, ": ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ParseError {}

/// A setting that cannot be used (window ≤ 0, negative cost, p outside (0, 100]), or a value a
/// learner typed for it that is not a number. The message is in both languages: the lab shows it
/// under the box, the terminal prints the English one.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsError {
    pub setting: &'static str,
    pub message: Text,
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "setting `{}`: {}", self.setting, self.message.en)
    }
}

impl std::error::Error for SettingsError {}
