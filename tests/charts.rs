//! The lab at any size, in headless Chromium: a constructed open-loop trace of 100,000 attempts
//! (`TRACELAB_BIG_N` for another size, 1,000,000 for the benchmark) uploaded as a learner would.
//! The run chart is bucketed, the labels keep their thousands separators and stay inside their
//! charts, the heat map and the histogram (canvas, painted by the second bundle, `pages/convert`) are read back pixel by pixel
//! at the threshold line and their fullest cell, and their text alternatives add up to the
//! trace. Load time, edit-to-paint and memory are printed as a benchmark, never asserted.

mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::webdriver::Browser;
use support::{dist, screenshot_path, static_server};
use tracelab_core::trace::{Conditions, Window};
use tracelab_core::{Attempt, Header, Outcome, Phase, Quality, Trace};

const QUALIFIED: &str = "[data-testid=value-qualified_count]";

/// A deterministic open-loop run: one attempt every 2 ms on the schedule, a stall a third of
/// the way in (the client falls behind, TTFTs grow), 3 % timeouts without a token, 8 % answers
/// that fail quality. Constructed here, not recorded: no public data is involved.
fn big_trace(n: usize) -> Trace {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let gap = 2.0;
    let mut attempts = Vec::with_capacity(n);
    for i in 0..n {
        let intended = i as f64 * gap;
        let in_stall = (n / 3..n / 3 + n / 20).contains(&i);
        let lag = if in_stall {
            40.0 + 200.0 * next()
        } else {
            0.5 * next()
        };
        let r = next();
        let outcome = if r < 0.03 {
            Outcome::TimeoutBeforeFirstToken
        } else {
            Outcome::Success
        };
        let ttft = outcome.is_success().then(|| {
            let base = 60.0 + 25.0 * (-next().max(1e-12).ln()) * 10.0 * next();
            ((if in_stall { base * 4.0 } else { base }) * 1000.0).round() / 1000.0
        });
        let quality = if !outcome.is_success() {
            Quality::NotEvaluated
        } else if next() < 0.08 {
            Quality::Fail
        } else {
            Quality::Pass
        };
        let mut a = Attempt::new(format!("a{i}"), outcome, ttft, quality);
        a.phase = Phase::Measure;
        a.intended_start_ms = Some(intended);
        a.start_ms = Some(((intended + lag) * 1000.0).round() / 1000.0);
        a.e2e_ms = Some(ttft.map_or(30_000.0, |t| (t + 300.0 + 900.0 * next()).round()));
        attempts.push(a);
    }
    let header = Header {
        window: Some(Window {
            start_ms: 0.0,
            length_s: n as f64 * gap / 1000.0,
        }),
        conditions: Conditions {
            arrival: Some("poisson".into()),
            rate_per_s: Some(1000.0 / gap),
            ..Conditions::default()
        },
        ..Header::default()
    };
    Trace {
        header,
        attempts,
        gpu: Vec::new(),
        engine: Vec::new(),
        footer: None,
        warnings: Vec::new(),
    }
}

fn n_attempts() -> usize {
    std::env::var("TRACELAB_BIG_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

/// Writes the trace once per size and test process, into cargo's scratch folder for tests
/// (`target/tmp`, so a run leaves nothing in /tmp: the 1 M file is 225 MB); returns its path and
/// its size in bytes.
fn trace_file(trace: &Trace) -> (PathBuf, u64) {
    static WRITTEN: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
    let n = trace.attempts.len();
    let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("big-{n}.jsonl"));
    let mut written = WRITTEN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if !written.contains(&n) {
        // Written beside and renamed into place: another test process reading the same file
        // keeps the one it opened.
        let partial = file.with_extension(format!("jsonl.{}", std::process::id()));
        std::fs::write(&partial, tracelab_core::write::to_jsonl(trace)).unwrap();
        std::fs::rename(&partial, &file).unwrap();
        written.push(n);
    }
    let size = std::fs::metadata(&file).unwrap().len();
    (file, size)
}

fn open_lab(width: u32, height: u32, lang: &str) -> Browser {
    let base = static_server::serve(dist());
    let b = Browser::start(width, height, lang);
    b.goto(&format!("{base}/"));
    b.wait_text(QUALIFIED, |t| t == "5");
    b
}

fn upload(b: &Browser, file: &std::path::Path, n: usize) -> Duration {
    let t0 = Instant::now();
    b.type_into("[data-testid=upload]", file.to_str().unwrap());
    let count = format!("({})", tracelab_core::format::integer(n as u64));
    b.wait_text_for("#attempts-h", Duration::from_secs(900), |t| {
        t.contains(&count)
    });
    t0.elapsed()
}

/// Waits for a canvas to be painted (its data attributes set); returns them.
fn painted(b: &Browser, css: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let v = b.execute(
            "const c = document.querySelector(arguments[0]); return c && c.dataset.plot ? {plot: c.dataset.plot, threshold: c.dataset.thresholdPx, fullest: c.dataset.fullest, width: c.width} : null;",
            json!([css]),
        );
        if !v.is_null() {
            return v;
        }
        if let Some(e) = b.try_find("[data-testid=dist-error]") {
            panic!("the canvas views failed: {}", b.text(&e));
        }
        assert!(Instant::now() < deadline, "{css} was never painted");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A data attribute of an element once the bundle has set it.
fn painted_attr(b: &Browser, css: &str, name: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let v = b.execute("const c = document.querySelector(arguments[0]); return c ? (c.dataset[arguments[1]] || null) : null;", json!([css, name]));
        if let Some(v) = v.as_str() {
            return v.to_string();
        }
        assert!(Instant::now() < deadline, "{css} never got data-{name}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every pixel of one column of a canvas, top to bottom.
fn pixel_column(b: &Browser, css: &str, x: i64) -> Vec<[u8; 3]> {
    let v = b.execute(
        "const [css, x] = arguments; const c = document.querySelector(css); const d = c.getContext('2d').getImageData(x, 0, 1, c.height).data; const out = []; for (let i = 0; i < d.length; i += 4) out.push([d[i], d[i + 1], d[i + 2]]); return out;",
        json!([css, x]),
    );
    serde_json::from_value(v).unwrap()
}

/// The colour of each pixel in a (2r+1)² box around (x, y) of a canvas.
fn pixels(b: &Browser, css: &str, x: i64, y: i64, r: i64) -> Vec<[u8; 3]> {
    let v = b.execute(
        "const [css, x, y, r] = arguments; const c = document.querySelector(css); const d = c.getContext('2d').getImageData(x - r, y - r, 2 * r + 1, 2 * r + 1).data; const out = []; for (let i = 0; i < d.length; i += 4) out.push([d[i], d[i + 1], d[i + 2]]); return out;",
        json!([css, x, y, r]),
    );
    serde_json::from_value(v).unwrap()
}

fn near(p: [u8; 3], q: [u8; 3]) -> bool {
    p.iter()
        .zip(q)
        .all(|(a, b)| (i16::from(*a) - i16::from(b)).abs() <= 12)
}

fn ints(s: &str) -> Vec<i64> {
    s.split(',')
        .map(|v| {
            v.trim()
                .parse()
                .unwrap_or_else(|_| panic!("not a number in {s:?}"))
        })
        .collect()
}

/// The sum of a text table's `column`th column, from 1 (thousands separators read back).
fn table_total(b: &Browser, css: &str, column: usize) -> u64 {
    let cells: Vec<String> = serde_json::from_value(b.execute(
        "return [...document.querySelectorAll(arguments[0] + ' tbody tr td:nth-child(' + arguments[1] + ')')].map(td => td.textContent)",
        json!([css, column]),
    ))
    .unwrap();
    cells
        .iter()
        .map(|c| {
            c.replace(',', "")
                .parse::<u64>()
                .unwrap_or_else(|_| panic!("{c:?}"))
        })
        .sum()
}

/// Edit-to-paint: the threshold box's input event to the second animation frame after it (the
/// frame that shows the edit has been painted), in the page's own clock.
const EDIT_TO_PAINT_JS: &str = r#"
const [value] = arguments;
window.__edit = null;
const i = document.querySelector('[data-testid=threshold-input]');
const t0 = performance.now();
i.value = value;
i.dispatchEvent(new Event('input', {bubbles: true}));
requestAnimationFrame(() => requestAnimationFrame(() => { window.__edit = performance.now() - t0; }));
"#;

fn edit_to_paint(b: &Browser, value: &str) -> f64 {
    let before = b.text_of(QUALIFIED);
    b.execute(EDIT_TO_PAINT_JS, json!([value]));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let v = b.execute("return window.__edit", json!([]));
        if let Some(ms) = v.as_f64() {
            assert_ne!(
                b.text_of(QUALIFIED),
                before,
                "the edit to {value} s changed the qualified count"
            );
            return ms;
        }
        assert!(Instant::now() < deadline, "no frame after the edit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The memory of this test's Chromium (every process under the one started with its profile):
/// the sum of the processes' resident sets (shared pages counted in each process that maps them)
/// and of their proportional sets (shared pages split between the processes: what the browser
/// really holds), in bytes, with the proportional set of each kind of process (browser,
/// renderer, gpu-process, utility…). `None` where /proc is not there to read.
fn chromium_memory() -> Option<Value> {
    let marker = format!("tracelab-e2e-{}-", std::process::id());
    let mut procs: Vec<(u32, u32, u64, String)> = Vec::new();
    for entry in std::fs::read_dir("/proc").ok()? {
        let Ok(pid) = entry.ok()?.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let after = stat
            .rsplit_once(')')
            .map(|(_, r)| r.to_string())
            .unwrap_or_default();
        let ppid: u32 = after
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let rss_pages: u64 = after
            .split_whitespace()
            .nth(21)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        procs.push((pid, ppid, rss_pages * 4096, cmd));
    }
    let roots: Vec<u32> = procs
        .iter()
        .filter(|(_, _, _, c)| c.contains(&marker) && !c.contains("--type="))
        .map(|p| p.0)
        .collect();
    let mut keep: Vec<u32> = roots.clone();
    loop {
        let more: Vec<u32> = procs
            .iter()
            .filter(|p| keep.contains(&p.1) && !keep.contains(&p.0))
            .map(|p| p.0)
            .collect();
        if more.is_empty() {
            break;
        }
        keep.extend(more);
    }
    if roots.is_empty() {
        return None;
    }
    let pss_of = |pid: u32| -> u64 {
        let rollup =
            std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
        rollup
            .lines()
            .find_map(|l| l.strip_prefix("Pss:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    };
    let (mut rss, mut pss) = (0, 0);
    let mut by_kind = serde_json::Map::new();
    for (pid, _, r, cmd) in procs.iter().filter(|p| keep.contains(&p.0)) {
        let kind = cmd
            .split(['\0', ' '])
            .find_map(|a| a.strip_prefix("--type="))
            .unwrap_or("browser")
            .to_string();
        let p = pss_of(*pid);
        rss += r;
        pss += p;
        let entry = by_kind.entry(kind).or_insert(json!(0));
        *entry = json!(entry.as_u64().unwrap_or(0) + p);
    }
    Some(json!({"rss_sum": rss, "pss": pss, "pss_by_process": by_kind}))
}

/// The linear memory of the lab's WebAssembly and of its second bundle's (`convert/`), in bytes:
/// a module's memory only grows, so this is the most each has held at once.
fn wasm_memory(b: &Browser) -> Value {
    b.execute(
        r#"window.__wasm_memory = null;
        (async () => {
            const lab = document.querySelector('script[type=module]').textContent.match(/from '([^']+)'/)[1];
            const size = async url => { try { const m = await import(url); return (await m.default()).memory.buffer.byteLength; } catch (e) { return null; } };
            window.__wasm_memory = { lab: await size(lab), convert: await size(new URL('convert/convert.js', document.baseURI).href) };
        })();"#,
        json!([]),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let v = b.execute("return window.__wasm_memory", json!([]));
        if !v.is_null() || Instant::now() > deadline {
            return v;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Scrolls the attempts table to its end and clicks the last row; waits until the step panel
/// says it is selected.
fn select_last_row(b: &Browser, n: usize) {
    let last_row = format!("[data-testid=attempt-row][aria-rowindex='{}']", n + 1);
    let deadline = Instant::now() + Duration::from_secs(30);
    // Scrolled to the end, the row is rendered and clicked in one go (rows are drawn again as
    // the view moves, so one found a moment earlier may be gone).
    let click = format!("const s = document.querySelector('.table-scroll'); s.scrollTop = s.scrollHeight; s.dispatchEvent(new Event('scroll')); const r = document.querySelector(\"{last_row}\"); if (r) r.click(); return !!r;");
    while b.execute(&click, json!([])) != json!(true) {
        assert!(
            Instant::now() < deadline,
            "the table's last row never rendered"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let grouped = tracelab_core::format::integer(n as u64);
    b.wait_text_for("[data-testid=position]", Duration::from_secs(60), |t| {
        t == format!("{grouped} / {grouped}")
    });
}

/// The threshold edits each timing makes, in order (each moves the qualified count).
const EDITS: [&str; 15] = [
    "0.25", "0.5", "0.3", "0.8", "0.4", "1", "0.6", "0.35", "0.9", "0.45", "0.7", "0.2", "0.55",
    "1.2", "0.65",
];

/// A series of edit-to-paint times as the benchmarks print it: median, max and every time.
fn timings(times: &[f64]) -> Value {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    json!({"median": sorted[sorted.len() / 2], "max": sorted[sorted.len() - 1], "all": times})
}

#[test]
#[ignore = "needs the built lab and Chromium: run `cargo xtask test`"]
fn a_big_trace_is_bucketed_read_back_from_canvas_and_edits_stay_instant() {
    let n = n_attempts();
    let trace = big_trace(n);
    let failures = trace
        .attempts
        .iter()
        .filter(|a| !a.outcome.is_success())
        .count();
    let successes = n - failures;
    let (file, file_bytes) = trace_file(&trace);
    drop(trace);
    let b = open_lab(1280, 1000, "en-US");
    let load = upload(&b, &file, n);

    // Counts with thousands separators, through the core's formatter.
    let grouped = tracelab_core::format::integer(n as u64);
    let metrics = b.text_of("[data-testid=metric-qualified_count]");
    assert!(
        metrics.contains(&format!("of {grouped} attempts")),
        "{metrics}"
    );
    // Nowhere on the page a count of five digits or more without them: the formulas, the
    // percentile's ranks and n, the intervals' order statistics, the summary, the row numbers,
    // the step's tally and running figures (on the last row, where they are largest). (A run of
    // digits after a letter is an id, after a point a fraction; one before ".jsonl" is in the
    // file's name.)
    let ungrouped = || {
        b.execute(
            "const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT); const found = []; let t; \
             while ((t = walk.nextNode())) { const e = t.parentElement; \
               if (e && e.checkVisibility() && /(^|[^\\d.,\\w])\\d{5,}(?!\\d|\\.[A-Za-z])/.test(t.textContent)) found.push((e.closest('[data-testid]')?.dataset.testid || e.tagName) + ': ' + t.textContent.trim().slice(0, 120)); } \
             return found;",
            json!([]),
        )
    };
    assert_eq!(
        ungrouped(),
        json!([]),
        "counts written without thousands separators, row 1"
    );
    select_last_row(&b, n);
    assert_eq!(
        ungrouped(),
        json!([]),
        "counts written without thousands separators, last row"
    );
    // Back to row 1, which the rest of this test reads.
    b.execute("const s = document.querySelector('.table-scroll'); s.scrollTop = 0; s.dispatchEvent(new Event('scroll'));", json!([]));
    b.wait_text("[data-testid=attempt-row][aria-rowindex='2'] th", |t| {
        t == "a0"
    });
    b.click("[data-testid=attempt-row][aria-rowindex='2']");
    b.wait_text("[data-testid=position]", |t| t == format!("1 / {grouped}"));
    // The failures' strip holds its whole label inside the chart.
    let strip = b.text_of("[data-testid=no-ttft-count]");
    assert_eq!(
        strip,
        tracelab_core::format::count(failures, "failure", "failures")
    );
    let inside = b.execute(
        "const svg = document.querySelector('[data-testid=ttft-chart]').getBoundingClientRect(); const t = document.querySelector('[data-testid=no-ttft-count]').getBoundingClientRect(); return t.right <= svg.right + 0.5 && t.left >= svg.left;",
        json!([]),
    );
    assert_eq!(
        inside,
        json!(true),
        "the failures label is cut off: {strip}"
    );
    // The selected attempt's TTFT follows the card's duration rule.
    if b.try_find("[data-testid=request-ttft]").is_some() {
        let request = b.text_of("[data-testid=request-ttft]");
        let ms: f64 = request
            .trim_start_matches("TTFT ")
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let written = if request.ends_with(" ms") {
            ms / 1000.0
        } else {
            ms
        };
        assert_eq!(
            request,
            format!("TTFT {}", tracelab_core::format::duration(written)),
            "{request}"
        );
    }

    // The run chart is bucketed: no bar per attempt; the bundle's lanes above it hold the
    // share qualified (green) and failed (red), the starts against the schedule, the lag and
    // the requests in flight.
    assert!(
        b.find_all("[data-testid=run-bar]").is_empty(),
        "one bar per attempt at {n}"
    );
    let lanes = painted_attr(&b, "[data-testid=run-lanes]", "lanes");
    assert_eq!(lanes, "rates,starts,lag,flight");
    let buckets: usize = painted_attr(&b, "[data-testid=run-lanes]", "buckets")
        .parse()
        .unwrap();
    assert!((20..=400).contains(&buckets), "{buckets} buckets");
    let x_mid = b.execute("const c = document.querySelector('[data-testid=run-lanes]'); return Math.round(c.width / 2)", json!([])).as_i64().unwrap();
    let column = pixel_column(&b, "[data-testid=run-lanes]", x_mid);
    assert!(
        column.iter().any(|p| near(*p, [31, 138, 76])),
        "no qualified-rate line in the middle of the run"
    );
    assert!(
        column.iter().any(|p| near(*p, [179, 38, 30])),
        "no failure-rate line in the middle of the run"
    );
    b.click("#run-table-box summary");
    b.wait_text("[data-testid=run-buckets-table] tbody", |t| !t.is_empty());
    assert_eq!(
        table_total(&b, "[data-testid=run-buckets-table]", 2),
        n as u64,
        "every attempt started in one bucket"
    );

    // The canvas views opened by themselves for a big trace: read back the threshold line
    // and the fullest cell, then their text alternatives.
    let heat = painted(&b, "[data-testid=heat-map]");
    let plot = ints(heat["plot"].as_str().unwrap());
    let ty: i64 = heat["threshold"]
        .as_str()
        .unwrap()
        .parse()
        .expect("a threshold line on the TTFT map");
    let mid = (plot[0] + plot[2]) / 2;
    let red = [179, 38, 30];
    assert!(
        pixels(&b, "[data-testid=heat-map]", mid, ty, 1)
            .iter()
            .any(|p| near(*p, red)),
        "no threshold line at y = {ty}"
    );
    let fullest = ints(heat["fullest"].as_str().unwrap());
    let dark = [8, 48, 107];
    assert!(
        pixels(&b, "[data-testid=heat-map]", fullest[2], fullest[3], 1)
            .iter()
            .any(|p| near(*p, dark)),
        "the fullest cell is not the darkest colour"
    );
    let legend = b.text_of("[data-testid=heat-legend]");
    assert!(
        legend.contains(&format!(
            "failed, in the band above (not plotted as 0): {}",
            tracelab_core::format::integer(failures as u64)
        )),
        "{legend}"
    );
    b.execute(
        "document.querySelector('[data-testid=heat-legend] + details').open = true",
        json!([]),
    );
    b.wait_text("[data-testid=heat-table] tbody", |t| !t.is_empty());
    assert_eq!(
        table_total(&b, "[data-testid=heat-table]", 3),
        n as u64,
        "every attempt once: a cell or the failures band"
    );

    let hist = painted(&b, "[data-testid=histogram]");
    let hplot = ints(hist["plot"].as_str().unwrap());
    let tx: i64 = hist["threshold"]
        .as_str()
        .unwrap()
        .parse()
        .expect("a threshold line on the TTFT histogram");
    assert!(
        pixels(
            &b,
            "[data-testid=histogram]",
            tx,
            (hplot[1] + hplot[3]) / 2,
            1
        )
        .iter()
        .any(|p| near(*p, red)),
        "no threshold line at x = {tx}"
    );
    let bin = ints(hist["fullest"].as_str().unwrap());
    assert!(
        pixels(&b, "[data-testid=histogram]", bin[2], bin[3], 2)
            .iter()
            .any(|p| near(*p, [107, 117, 128])),
        "the fullest bin is not drawn"
    );
    let hl = b.text_of("[data-testid=hist-legend]");
    assert!(
        hl.contains("P50 = ") && hl.contains("P95 = ") && hl.contains("95 % interval"),
        "{hl}"
    );
    b.execute(
        "document.querySelector('[data-testid=hist-legend] + details').open = true",
        json!([]),
    );
    b.wait_text("[data-testid=hist-table] tbody", |t| !t.is_empty());
    assert_eq!(
        table_total(&b, "[data-testid=hist-table]", 2),
        successes as u64
    );
    // Close the tables again: the benchmark times what a learner sees by default.
    b.execute("for (const d of document.querySelectorAll('.distribution details, #run-table-box')) d.open = false", json!([]));

    // A threshold edit moves the line: the canvas is painted again with the line elsewhere.
    let mut times = Vec::new();
    for (k, v) in EDITS.iter().enumerate() {
        times.push(edit_to_paint(&b, v));
        if k == 0 {
            let deadline = Instant::now() + Duration::from_secs(30);
            while b.execute(
                "return document.querySelector('[data-testid=heat-map]').dataset.thresholdPx",
                json!([]),
            ) == json!(ty.to_string())
            {
                assert!(Instant::now() < deadline, "the threshold line did not move");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
    let heap = b.execute(
        "return performance.memory ? performance.memory.usedJSHeapSize : null",
        json!([]),
    );
    let rss = chromium_memory();
    b.screenshot(&screenshot_path(&format!("big-{n}-1280-en")));
    println!(
        "BIG TRACE {}",
        json!({
            "attempts": n, "file_bytes": file_bytes, "upload_to_table_ms": load.as_millis() as u64,
            "edit_to_paint_ms": timings(&times),
            "js_heap_bytes": heap, "wasm_memory_bytes": wasm_memory(&b), "chromium_memory_bytes": rss,
        })
    );
}

/// Only the benchmark, with nothing the lab before the canvas views lacked, so the same numbers
/// can be taken on an older build (`TRACELAB_DIST`): load, edit-to-paint, memory.
#[test]
#[ignore = "needs the built lab and Chromium: run `cargo xtask test`"]
fn benchmark_edit_to_paint() {
    let n = n_attempts();
    let (file, file_bytes) = trace_file(&big_trace(n));
    let b = open_lab(1280, 1000, "en-US");
    // What the browser holds with the ten-request sample open, before the upload.
    std::thread::sleep(Duration::from_secs(2));
    let before = chromium_memory();
    let load = upload(&b, &file, n);
    // Let the first paint of every view settle before timing edits.
    std::thread::sleep(Duration::from_secs(3));
    let times: Vec<f64> = EDITS.iter().map(|v| edit_to_paint(&b, v)).collect();
    // Again with the last row selected: the step panel's running figures then cover every row.
    let t0 = Instant::now();
    select_last_row(&b, n);
    let select_last_ms = t0.elapsed().as_millis() as u64;
    std::thread::sleep(Duration::from_secs(1));
    let times_last: Vec<f64> = EDITS.iter().map(|v| edit_to_paint(&b, v)).collect();
    let heap = b.execute(
        "return performance.memory ? performance.memory.usedJSHeapSize : null",
        json!([]),
    );
    println!(
        "EDIT TO PAINT {}",
        json!({
            "attempts": n, "file_bytes": file_bytes, "upload_to_table_ms": load.as_millis() as u64,
            "edit_to_paint_ms": timings(&times),
            "select_last_row_ms": select_last_ms,
            "edit_to_paint_last_row_selected_ms": timings(&times_last),
            "js_heap_bytes": heap, "wasm_memory_bytes": wasm_memory(&b), "chromium_memory_bytes": chromium_memory(),
            "chromium_memory_bytes_with_the_sample": before,
        })
    );
}

#[test]
#[ignore = "needs the built lab and Chromium: run `cargo xtask test`"]
fn the_big_views_keep_their_labels_at_every_width_in_both_languages() {
    let n = n_attempts();
    let trace = big_trace(n);
    let (file, _) = trace_file(&trace);
    drop(trace);
    for (width, lang) in [
        (360, "zh-CN"),
        (360, "en-US"),
        (1024, "zh-CN"),
        (1280, "en-US"),
        (1280, "zh-CN"),
        (1920, "en-US"),
    ] {
        let b = open_lab(width, 1400, lang);
        upload(&b, &file, n);
        painted(&b, "[data-testid=heat-map]");
        painted(&b, "[data-testid=histogram]");
        // Every SVG label of the charts lies inside its chart (nothing cut at an edge).
        let clipped = b.execute(
            "const out = []; for (const svg of document.querySelectorAll('.chart-svg')) { const s = svg.getBoundingClientRect(); for (const t of svg.querySelectorAll('text')) { const r = t.getBoundingClientRect(); if (r.width > 0 && (r.left < s.left - 0.5 || r.right > s.right + 0.5)) out.push((svg.closest('[data-testid]')?.dataset.testid || svg.getAttribute('aria-label') || 'svg') + ': ' + t.textContent + ' at ' + Math.round(r.left - s.left) + '..' + Math.round(r.right - s.left) + ' of ' + Math.round(s.width)); } } return out;",
            json!([]),
        );
        assert_eq!(clipped, json!([]), "{width} px {lang}: labels cut off");
        // The canvases fit their boxes.
        let fits = b.execute(
            "return [...document.querySelectorAll('.distribution canvas')].every(c => c.getBoundingClientRect().right <= c.parentElement.getBoundingClientRect().right + 0.5)",
            json!([]),
        );
        assert_eq!(
            fits,
            json!(true),
            "{width} px {lang}: a canvas overflows its box"
        );
        let lang_tag = &lang[..2];
        b.execute(
            "document.querySelector('[data-testid=ttft-chart]').scrollIntoView()",
            json!([]),
        );
        b.screenshot(&screenshot_path(&format!("big-charts-{width}-{lang_tag}")));
        b.execute(
            "document.querySelector('[data-testid=distribution]').scrollIntoView()",
            json!([]),
        );
        b.screenshot(&screenshot_path(&format!("big-canvas-{width}-{lang_tag}")));
    }
}
