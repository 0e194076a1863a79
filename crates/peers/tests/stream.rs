//! `tracelab report` reads a JSON Lines trace as a stream (`parse::stream`); the lab reads it
//! whole. The two must give the same card, JSON and warnings, and refuse a bad file with the
//! same error (file, line, field, message): on every sample, on every real peer file and
//! constructed fixture once imported, on files cut, broken and mutated at random (seeded), and
//! on the edges where the whole-file reader decides before reading any record (UTF-8, lines too
//! long to hold).

mod common;

use common::streamed::{agree, whole, Report};
use tracelab_core::{
    write, Comparison, FailureDenominator, MissingTtft, PercentileMethod, Settings, WarmupPolicy,
};
use tracelab_peers::import;

fn repo(path: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// The settings a report is asked for: the header's, and edits of every kind.
const TWEAKS: [fn(&mut Settings); 6] = [
    |_| {},
    |s| {
        s.ttft_threshold_s = 0.5;
        s.comparison = Comparison::Lt;
    },
    |s| {
        s.percentile = PercentileMethod::Linear;
        s.p = 99.0;
    },
    |s| {
        s.population.failure_denominator = FailureDenominator::FailedRowsDeleted;
        s.population.missing_ttft = MissingTtft::TreatAsZero;
        s.population.warmup = WarmupPolicy::Include;
    },
    |s| {
        s.population.failure_denominator = FailureDenominator::Successes;
        s.window_s = Some(30.0);
        s.window_cost = Some(2.5);
        s.percentile = PercentileMethod::Lower;
    },
    |s| {
        s.percentile = PercentileMethod::Higher;
        s.p = 99.9;
    },
];

fn samples() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(repo("public/samples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "the samples are there: {files:?}");
    files
}

#[test]
fn every_sample_reports_the_same_when_streamed() {
    for path in samples() {
        let name = path.display().to_string();
        let bytes = std::fs::read(&path).unwrap();
        for tweak in TWEAKS {
            assert!(
                agree(&name, &bytes, tweak),
                "{name} is a JSON Lines trace, so it is streamed"
            );
        }
    }
    // The classroom CSV is left to the whole-file reader.
    let csv = std::fs::read(repo("public/samples/ten-requests.csv")).unwrap();
    assert!(!agree("ten-requests.csv", &csv, |_| {}));
}

#[test]
fn imported_peer_files_and_constructed_fixtures_report_the_same_when_streamed() {
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    // The real fixtures are read in place (see common/mod.rs).
    for dir in [
        common::fixture_dir("peers"),
        repo("crates/peers/tests/data/constructed"),
    ] {
        let mut here: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}: {}", dir.display(), common::MISSING))
            .map(|e| e.unwrap().path())
            .filter(|p| !p.ends_with("SOURCES.md"))
            .collect();
        here.sort();
        files.extend(here);
    }
    let mut traces = 0;
    for path in files {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        // Summary-only files are refused by every reader; the per-request ones become traces.
        let Ok(imported) = import::load_any(&name, &text) else {
            continue;
        };
        for (i, t) in imported.traces.iter().enumerate() {
            let jsonl = write::to_jsonl(&t.trace);
            let name = format!("{name}#{i}.jsonl");
            for tweak in TWEAKS {
                assert!(agree(&name, jsonl.as_bytes(), tweak), "{name} is streamed");
            }
            traces += 1;
        }
    }
    assert!(traces >= 7, "vLLM, AIPerf, GenAI-Perf, guidellm, LLMPerf, SGLang and the constructed files import: {traces}");
}

/// SplitMix64, so every run mutates the same way.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Bytes that break records in the ways files break: truncation, a flipped byte, a deleted or
/// doubled line, invalid or cut UTF-8, a stray `\r`, a BOM, a duplicated id.
fn mutate(original: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut b = original.to_vec();
    for _ in 0..1 + rng.below(3) {
        // A file already cut to nothing has no byte left to change.
        if b.is_empty() {
            break;
        }
        let at = rng.below(b.len());
        match rng.below(10) {
            0 => b.truncate(at),
            1 => b[at] = b"{}[],:\"0123456789.-aez \n\r"[rng.below(25)],
            2 => {
                b.remove(at);
            }
            3 => b.splice(at..at, [0xff]).for_each(drop),
            4 => {
                let cut = &"失".as_bytes()[..1 + rng.below(2)];
                if rng.below(2) == 0 {
                    b.truncate(at);
                }
                b.splice(at.min(b.len())..at.min(b.len()), cut.iter().copied())
                    .for_each(drop);
            }
            5 => {
                // Double the line around `at`.
                let start = b[..at]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |i| i + 1);
                let end = b[at..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |i| at + i + 1);
                let line = b[start..end].to_vec();
                b.splice(end..end, line).for_each(drop);
            }
            6 => {
                let start = b[..at]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |i| i + 1);
                let end = b[at..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |i| at + i + 1);
                b.drain(start..end);
            }
            7 => b.splice(at..at, *b"\r").for_each(drop),
            8 => b.splice(0..0, "\u{feff}".bytes()).for_each(drop),
            _ => b
                .splice(at..at, *b"\n{\"kind\":\"mystery\"}\n")
                .for_each(drop),
        }
    }
    b
}

#[test]
fn mutated_files_report_or_fail_alike() {
    let mut rng = Rng(15);
    let (mut streamed, mut refused, mut read) = (0, 0, 0);
    for path in samples() {
        let original = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for i in 0..150 {
            let bytes = mutate(&original, &mut rng);
            let tweak = TWEAKS[i % TWEAKS.len()];
            if agree(&name, &bytes, tweak) {
                streamed += 1;
                match whole(&name, &bytes, tweak) {
                    Report::Refused(_) => refused += 1,
                    Report::Card { .. } => read += 1,
                }
            }
        }
    }
    // Not a vacuous comparison: many mutants were streamed, both refused and read.
    assert!(
        streamed > 600 && refused > 150 && read > 150,
        "streamed {streamed}: refused {refused}, read {read}"
    );
}

const HEADER: &str = r#"{"kind":"header","schema":"tracelab.trace","version":1,"tool":{"name":"test","version":"1"},"capabilities":{"workload_executed":true,"inference_benchmark":true,"gpu_telemetry":"nvml"},"conditions":{"arrival":"poisson","rate_per_s":5}}"#;

fn attempt(id: &str, start: u32) -> String {
    format!(
        r#"{{"kind":"attempt","id":"{id}","business_id":"b{id}","phase":"measure","quality":"pass","intended_start_ms":{start},"start_ms":{s},"first_token_ms":{t},"events":[[{t},1],[{e1},2],[{e2},1]],"end_ms":{end},"outcome":"success","output_tokens":4,"tokens_from_usage":true}}"#,
        s = start + 1,
        t = start + 150,
        e1 = f64::from(start) + 180.123,
        e2 = f64::from(start) + 230.5,
        end = start + 400
    )
}

fn trace(lines: &[String]) -> Vec<u8> {
    let mut out = format!("{HEADER}\n");
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out.into_bytes()
}

#[track_caller]
fn refused_alike(name: &str, bytes: &[u8]) -> String {
    assert!(agree(name, bytes, |_| {}), "{name} is streamed");
    match whole(name, bytes, |_| {}) {
        Report::Refused(e) => e,
        Report::Card { .. } => panic!("{name} should be refused"),
    }
}

#[test]
fn lag_gpu_and_intervals_of_an_open_loop_run_with_telemetry() {
    let mut lines: Vec<String> = (0..40)
        .map(|i| attempt(&format!("A{i}"), i * 200))
        .collect();
    for t in 0..80 {
        lines.push(format!(
            r#"{{"kind":"gpu","t_ms":{},"gpu":0,"util_pct":{},"mem_used_mib":{},"mem_total_mib":81920}}"#,
            t * 100,
            (t * 7) % 100,
            1000 + t * 13
        ));
    }
    lines.push(r#"{"kind":"footer","finished_cleanly":true,"attempts":41}"#.into());
    let bytes = trace(&lines);
    for tweak in TWEAKS {
        assert!(agree("open.jsonl", &bytes, tweak));
    }
    let Report::Card { en, json, .. } = whole("open.jsonl", &bytes, |_| {}) else {
        panic!()
    };
    assert!(
        en.contains("Client lag") && en.contains("slow ran at"),
        "{en}"
    );
    assert!(
        json.contains("the footer counts 41 attempts but the file holds 40"),
        "{json}"
    );
}

#[test]
fn a_bad_record_before_bytes_that_are_not_utf8_is_reported_as_the_whole_file_reader_does() {
    let mut bytes = trace(&[
        attempt("A", 0),
        "{\"kind\":\"attempt\",\"id\":1}".into(),
        attempt("B", 10),
    ]);
    let e = refused_alike("order.jsonl", &bytes);
    assert!(e.contains("line 3"), "{e}");
    // The whole-file reader checks UTF-8 before any record: a later bad byte wins.
    bytes.extend_from_slice(b"{\"kind\":\"mystery\",\"x\":\"\xff\"}\n");
    let e = refused_alike("order.jsonl", &bytes);
    assert!(e.contains("line 5") && e.contains("not UTF-8"), "{e}");
}

#[test]
fn duplicate_ids_name_the_first_line() {
    let lines: Vec<String> = (0..3000)
        .map(|i| attempt(&format!("A{}", i % 2999), i))
        .collect();
    let e = refused_alike("dup.jsonl", &trace(&lines));
    assert!(
        e.contains("line 3001") && e.contains("first used on line 2"),
        "{e}"
    );
}

#[test]
fn a_bad_option_is_reported_after_the_file_reads() {
    let tweak: fn(&mut Settings) = |s| s.window_s = Some(-1.0);
    let good = trace(&[attempt("A", 0)]);
    assert!(agree("opt.jsonl", &good, tweak));
    assert!(matches!(whole("opt.jsonl", &good, tweak), Report::Refused(e) if e.contains("window")));
    let bad = trace(&[attempt("A", 0), "{\"kind\":\"attempt\"}".into()]);
    assert!(agree("opt.jsonl", &bad, tweak));
    assert!(matches!(whole("opt.jsonl", &bad, tweak), Report::Refused(e) if e.contains("line 3")));
}

#[test]
fn lines_too_long_to_hold_are_measured_and_checked_as_they_pass() {
    let big = "x".repeat(9 * 1024 * 1024);
    let long = format!(r#"{{"kind":"mystery","detail":"{big}"}}"#);
    // Followed by good lines; with a `\r` before its newline; with a bad byte inside; at the end
    // of the file cut in the middle of a character.
    let cases: Vec<Vec<u8>> = vec![
        trace(&[attempt("A", 0), long.clone(), attempt("B", 5)]),
        trace(&[attempt("A", 0), format!("{long}\r")]),
        {
            let mut b = trace(&[attempt("A", 0)]);
            b.extend_from_slice(&long.as_bytes()[..5_000_000]);
            b.push(0xff);
            b.extend_from_slice(&long.as_bytes()[5_000_000..]);
            b
        },
        {
            let mut b = trace(&[attempt("A", 0)]);
            b.extend_from_slice(&long.as_bytes()[..9_000_000]);
            b.extend_from_slice(b"\r");
            b.extend_from_slice(&"失".as_bytes()[..2]);
            b
        },
        {
            let mut b = trace(&[long.clone(), attempt("A", 0)]);
            b.extend_from_slice(b"{\"x\":\"\xc3\"}\n");
            b
        },
    ];
    for (i, bytes) in cases.iter().enumerate() {
        let e = refused_alike(&format!("long{i}.jsonl"), bytes);
        assert!(e.contains("MiB") || e.contains("not UTF-8"), "{e}");
    }
}
