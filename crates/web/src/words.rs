//! A page's own words: each page keeps one table of `(key, English, Chinese)`, looked up here the
//! same way everywhere (an unknown key shows itself, so a gap is noticed in a screenshot).

use tracelab_core::Lang;

/// A page's word table: `(key, English, Chinese)`.
pub type Words = [(&'static str, &'static str, &'static str)];

/// The word for `key` in `lang` from `table`; `⟨missing text⟩` when the key is not there.
pub fn lookup(table: &'static Words, lang: Lang, key: &str) -> &'static str {
    match table.iter().find(|(k, _, _)| *k == key) {
        Some((_, en, zh)) => match lang {
            Lang::En => en,
            Lang::Zh => zh,
        },
        None => "⟨missing text⟩",
    }
}
