//! The card's counts read right: successes with no output token are said, plurals agree, a
//! sub-millisecond ITL is not "0 s", and "no usage" is only blamed on a server that answered.

use tracelab_core::parse::parse_trace_bytes;
use tracelab_core::{card, format, tally, Index, Lang, Metrics, Settings, Trace};

fn trace(attempts: &[&str]) -> Trace {
    let mut text = String::from(
        r#"{"kind":"header","schema":"tracelab.trace","version":1,"tool":{"name":"t","version":"1"}}"#,
    );
    text.push('\n');
    for a in attempts {
        text.push_str(a);
        text.push('\n');
    }
    parse_trace_bytes("t.jsonl", text.as_bytes()).unwrap()
}

fn card_of(trace: &Trace, lang: Lang) -> (Metrics, String) {
    let settings = Settings::from_header(&trace.header);
    let m = Metrics::compute(
        &Index::build(&trace.attempts, settings.population),
        &settings,
    );
    let text = card::render_text("t.jsonl", trace, &settings, &m, lang);
    (m, text)
}

const OK: &str = r#"{"kind":"attempt","id":"a","phase":"measure","start_ms":0,"first_token_ms":100,"events":[[100,1],[100.566,1],[101.2,1]],"end_ms":102,"outcome":"success","quality":"not_evaluated"}"#;
const EOS_FIRST: &str = r#"{"kind":"attempt","id":"b","phase":"measure","start_ms":0,"end_ms":40,"outcome":"success","quality":"not_evaluated","output_tokens":0,"tokens_from_usage":true}"#;
const BROKEN: &str = r#"{"kind":"attempt","id":"c","phase":"measure","start_ms":0,"end_ms":40,"outcome":"stream_broken","detail":"[DONE] without a finish_reason or any token: the request was interrupted","quality":"not_evaluated"}"#;
const REFUSED: &str = r#"{"kind":"attempt","id":"d","phase":"measure","start_ms":0,"end_ms":1,"outcome":"connect_error","quality":"not_evaluated"}"#;

#[test]
fn successes_without_a_token_are_counted_and_said() {
    let t = trace(&[OK, EOS_FIRST, BROKEN]);
    let (m, en) = card_of(&t, Lang::En);
    assert_eq!(
        (m.successes, m.successes_without_token, m.ttft_p50.n),
        (2, 1, Some(1))
    );
    assert!(en.contains("Attempts: 3 counted — 2 complete successes (1 with no output token), 1 failure (stream_broken 1)"), "{en}");
    assert!(
        en.contains("1 of 2 complete successes carried no output token"),
        "{en}"
    );
    let (_, zh) = card_of(&t, Lang::Zh);
    assert!(
        zh.contains("完整成功 2（其中 1 个没有任何输出 token），失败 1"),
        "{zh}"
    );
    assert!(zh.contains("1 个完整成功的请求没有任何输出 token"), "{zh}");
    let json = m.summary_json(&Settings::from_header(&t.header));
    assert_eq!(json["successes_without_token"], 1);
}

#[test]
fn one_of_each_is_singular() {
    let (_, en) = card_of(&trace(&[OK, REFUSED]), Lang::En);
    assert!(
        en.contains("— 1 complete success, 1 failure (connect_error 1)"),
        "{en}"
    );
    let rows = trace(&[OK, REFUSED]);
    let sentence = tally(&rows.attempts, &Settings::from_header(&rows.header), 2).sentence("d");
    assert!(
        sentence.en.contains("1 success, 1 failure)"),
        "{}",
        sentence.en
    );
}

#[test]
fn a_sub_millisecond_itl_is_shown_in_ms() {
    let (m, en) = card_of(&trace(&[OK]), Lang::En);
    let itl = m.itl_p50.value.unwrap();
    assert!(itl > 0.0 && itl < 0.001, "{itl}");
    assert_eq!(format::value(&m.itl_p50, Lang::En), "0.566 ms");
    assert!(!en.contains(" 0 s "), "{en}");
    assert!(en.contains("P50 TTFT (successes)"), "{en}");
    assert!(en.contains("100 ms"), "TTFT 0.1 s reads 100 ms: {en}");
}

#[test]
fn no_usage_is_blamed_only_on_a_server_that_answered() {
    let why =
        |t: &Trace| format::remark(&card_of(t, Lang::En).0.output_tokens_per_s, Lang::En).unwrap();
    assert!(
        why(&trace(&[REFUSED])).starts_with("no complete successes"),
        "nobody answered"
    );
    assert_eq!(
        why(&trace(&[])),
        "no attempts are counted",
        "a probe file has no attempts"
    );
    assert!(
        why(&trace(&[OK])).contains("reported no usage"),
        "a success without usage"
    );
}

#[test]
fn the_card_names_the_latency_origin_and_counts_the_attempts_without_a_schedule() {
    // B was sent 700 ms after its intended start; C, a closed-loop attempt, has none.
    let t = trace(&[
        r#"{"kind":"attempt","id":"A","phase":"measure","intended_start_ms":0,"start_ms":0,"first_token_ms":400,"end_ms":900,"outcome":"success","quality":"pass"}"#,
        r#"{"kind":"attempt","id":"B","phase":"measure","intended_start_ms":1000,"start_ms":1700,"first_token_ms":2100,"end_ms":2600,"outcome":"success","quality":"pass"}"#,
        r#"{"kind":"attempt","id":"C","phase":"measure","start_ms":4000,"first_token_ms":4600,"end_ms":5000,"outcome":"success","quality":"pass"}"#,
    ]);
    let (m, actual) = card_of(&t, Lang::En);
    assert_eq!(m.qualified, 3);
    assert!(
        actual.contains("· latency from the actual start\n"),
        "{actual}"
    );
    assert!(actual.contains("P95 TTFT (successes, from the actual start)"));
    let mut settings = Settings::from_header(&t.header);
    settings.population.latency_from = tracelab_core::LatencyOrigin::Intended;
    let m = Metrics::compute(&Index::build(&t.attempts, settings.population), &settings);
    assert_eq!(
        m.qualified, 2,
        "B's 1.1 s from its intended start is over 1 s"
    );
    let en = card::render_text("t.jsonl", &t, &settings, &m, Lang::En);
    assert!(
        en.contains("· latency from the intended start (1 attempt had no intended start: from its actual start)"),
        "{en}"
    );
    assert!(
        en.contains("P95 TTFT (successes, from the intended start)"),
        "{en}"
    );
    let zh = card::render_text("t.jsonl", &t, &settings, &m, Lang::Zh);
    assert!(
        zh.contains("时延从计划开始时间算起（1 个尝试没有计划开始时间，从实际开始时间算起）"),
        "{zh}"
    );
    assert!(
        zh.contains("成功请求 TTFT P95（从计划开始时间算起）"),
        "{zh}"
    );
}
