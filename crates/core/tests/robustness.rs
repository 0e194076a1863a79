//! Inputs that once panicked, overflowed or turned a figure infinite: each is refused at the
//! parser with the field named, or read without a panic. Found by review and by fuzzing
//! (`cargo xtask fuzz`).

use tracelab_core::parse::parse_trace;
use tracelab_core::{Index, Lang, MetricCard, Metrics, ParseError, Settings, Trace};

const HEADER: &str = r#"{"kind":"header","schema":"tracelab.trace","version":1,"tool":{"name":"test","version":"1"}}"#;

fn header_with(extra: &str) -> String {
    format!(r#"{{"kind":"header","schema":"tracelab.trace","version":1,"tool":{{"name":"t","version":"1"}},{extra}}}"#)
}

#[track_caller]
fn refused(name: &str, text: &str, field: &str) -> ParseError {
    match parse_trace(name, text) {
        Ok(t) => panic!("{name} should be refused, read {} attempts", t.attempts.len()),
        Err(e) => {
            assert_eq!(e.field.as_deref(), Some(field), "field of: {e}");
            e
        }
    }
}

fn metrics(trace: &Trace, settings: &Settings) -> Metrics {
    let index = Index::build(&trace.attempts, settings.population);
    Metrics::compute(&index, settings)
}

#[test]
fn prompt_set_hash_must_be_hex() {
    for bad in ["ééééééééééééé", "sha:9f2c", "", "9f 2c"] {
        let text = format!("{}\n", header_with(&format!(r#""conditions":{{"prompt_set":"p","prompt_set_sha256":"{bad}"}}"#)));
        let e = refused("h.jsonl", &text, "conditions.prompt_set_sha256");
        assert_eq!(e.line, Some(1), "{e}");
        assert!(e.message.contains("hexadecimal"), "{e}");
    }
    let good = format!("{}\n", header_with(r#""conditions":{"prompt_set":"p","prompt_set_sha256":"9F2c4e0b1d7a3c5e"}"#));
    parse_trace("h.jsonl", &good).unwrap();
}

#[test]
fn card_shortens_a_multibyte_hash_without_panicking() {
    // A trace built in code (not through the parser) may still hold any string.
    let mut trace = parse_trace("t.jsonl", &format!("{HEADER}\n")).unwrap();
    trace.header.conditions.prompt_set = Some("p".into());
    trace.header.conditions.prompt_set_sha256 = Some("é".repeat(20));
    let settings = Settings::from_header(&trace.header);
    let m = metrics(&trace, &settings);
    let card = MetricCard::prefill("t.jsonl", &trace, &settings, &m, Lang::En);
    assert!(card.conditions.contains(&"é".repeat(12)), "{}", card.conditions);
    assert!(!card.conditions.contains(&"é".repeat(13)), "{}", card.conditions);
}
