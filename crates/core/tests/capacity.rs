//! The capacity answer of a sweep (`capacity.rs`) on constructed steps whose every count is
//! known: passes, fails and inconclusive against each kind of target, the answer's interval, the
//! knee, failures kept in the denominator, bad loads refused; and a simulated M/M/c sweep whose
//! answer agrees with Erlang C.

use tracelab_core::capacity::{
    check_loads, saturation, Capacity, LoadKind, Measure, SimulatedLoad, SimulatedSweep,
    SimulatedSweepPlan, Step, StepVerdict, SweepFile, SweepStep, Target,
};
use tracelab_core::parse::parse_trace;
use tracelab_core::simulate::theory::erlang_c;
use tracelab_core::simulate::*;
use tracelab_core::write::to_jsonl;
use tracelab_core::{Comparison, Lang, Quality, Settings, Trace};

/// A step of `fast` qualified answers (TTFT 0.2 s), `slow` successes over any threshold up to
/// 3 s (TTFT 5 s) and `failed` connection errors, over a 10 s window.
fn step(fast: usize, slow: usize, failed: usize) -> Trace {
    let mut csv = String::from("# window_s: 10\nid,outcome,ttft_s,quality\n");
    let mut id = 0;
    let mut row = |s: &str| {
        id += 1;
        csv.push_str(&format!("R{id},{s}\n"));
    };
    (0..fast).for_each(|_| row("success,0.2,pass"));
    (0..slow).for_each(|_| row("success,5,pass"));
    (0..failed).for_each(|_| row("connect_error,,not_evaluated"));
    parse_trace("step.csv", &csv).unwrap()
}

fn steps<'a>(loads: &[f64], traces: &'a [Trace]) -> Vec<Step<'a>> {
    loads
        .iter()
        .zip(traces)
        .enumerate()
        .map(|(i, (l, t))| Step {
            load: *l,
            name: format!("step-{:02}", i + 1),
            trace: t,
            interrupted: false,
        })
        .collect()
}

fn target(spec: &str) -> Target {
    Target::parse(spec).unwrap()
}

#[test]
fn passes_inconclusive_fails_and_the_answer_between() {
    // 40/40 qualified: Wilson [0.912, 1] clears 0.8. 30/40: [0.598, 0.858] straddles it.
    // 10/40: [0.142, 0.406] lies wholly below. 2/40 at the last step fails too.
    let traces = [
        step(40, 0, 0),
        step(30, 10, 0),
        step(10, 30, 0),
        step(2, 38, 0),
    ];
    let loads = [1.0, 2.0, 4.0, 8.0];
    let c = Capacity::compute(
        LoadKind::Concurrency,
        &steps(&loads, &traces),
        &Settings::default(),
        target("joint_rate>=0.8"),
    )
    .unwrap();
    let verdicts: Vec<StepVerdict> = c.steps.iter().map(|s| s.verdict).collect();
    assert_eq!(
        verdicts,
        [
            StepVerdict::Passes,
            StepVerdict::Inconclusive,
            StepVerdict::Fails,
            StepVerdict::Fails
        ]
    );
    let b = c.steps[1].joint_rate.interval.unwrap();
    assert!(b.lo.unwrap() < 0.8 && b.hi.unwrap() > 0.8, "{b:?}");
    assert_eq!(c.answer.last_pass, Some(1.0));
    assert_eq!(c.answer.first_fail, Some(4.0));
    assert_eq!(c.answer.inconclusive, vec![2.0]);
    // 40/40 → 30/40: Newcombe's interval of the drop is wholly below 0, so the knee is at 1.
    assert_eq!(c.knee, Some(1.0));
    let en = c.render_text(Lang::En);
    assert!(
        en.contains("capacity lies between concurrency 1 (passes) and concurrency 4 (fails)"),
        "{en}"
    );
    assert!(en.contains("inconclusive: concurrency 2"), "{en}");
    assert!(en.contains("Knee: concurrency 1"), "{en}");
    let zh = c.render_text(Lang::Zh);
    assert!(
        zh.contains("容量介于 并发 1（通过）与 并发 4（未通过）之间"),
        "{zh}"
    );
    println!("{en}\n{zh}");
}

#[test]
fn failures_stay_in_the_denominator() {
    // 30 qualified of 40 attempts, the other 10 failed: 75 %, not 30/30.
    let traces = [step(30, 0, 10)];
    let c = Capacity::compute(
        LoadKind::Rate,
        &steps(&[2.0], &traces),
        &Settings::default(),
        target("joint_rate>=0.9"),
    )
    .unwrap();
    assert_eq!(c.steps[0].joint_rate.value, Some(0.75));
    assert_eq!((c.steps[0].attempts, c.steps[0].failures), (40, 10));
    assert_eq!(
        c.steps[0].verdict,
        StepVerdict::Fails,
        "Wilson(30, 40) tops out at 0.858 < 0.9"
    );
    assert_eq!(c.answer.last_pass, None);
    assert!(c
        .answer_text(Lang::En)
        .contains("no step passes; rate 2 /s already fails"));
}

#[test]
fn the_threshold_and_comparison_recompute_every_verdict() {
    let traces = [step(40, 0, 0), step(40, 0, 0)];
    let loads = [1.0, 2.0];
    let ok = Capacity::compute(
        LoadKind::Rate,
        &steps(&loads, &traces),
        &Settings::default(),
        target("joint_rate>=90%"),
    )
    .unwrap();
    assert_eq!(ok.answer.last_pass, Some(2.0));
    assert_eq!(ok.answer.first_fail, None);
    assert!(ok
        .answer_text(Lang::En)
        .contains("no step failed, so capacity is at least rate 2 /s"));
    // A threshold of exactly 0.2 s with `<`: the 0.2 s answers no longer qualify.
    let strict = Settings {
        ttft_threshold_s: 0.2,
        comparison: Comparison::Lt,
        ..Settings::default()
    };
    let c = Capacity::compute(
        LoadKind::Rate,
        &steps(&loads, &traces),
        &strict,
        target("joint_rate>=0.9"),
    )
    .unwrap();
    assert!(c
        .steps
        .iter()
        .all(|s| s.verdict == StepVerdict::Fails && s.qualified == 0));
    let le = Settings {
        ttft_threshold_s: 0.2,
        ..Settings::default()
    };
    let c = Capacity::compute(
        LoadKind::Rate,
        &steps(&loads, &traces),
        &le,
        target("joint_rate>=0.9"),
    )
    .unwrap();
    assert!(c.steps.iter().all(|s| s.verdict == StepVerdict::Passes));
}

#[test]
fn p95_ttft_and_goodput_targets() {
    // 80 answers at 0.2 s: the P95's interval is [0.2, 0.2] s (an upper bound exists from
    // n = 72); 8 answers: no upper bound exists, so it cannot pass; 40 with 20 at 5 s: its lower
    // bound is 5 s.
    let traces = [step(80, 0, 0), step(8, 0, 0), step(20, 20, 0)];
    let loads = [1.0, 2.0, 3.0];
    let c = Capacity::compute(
        LoadKind::Speedup,
        &steps(&loads, &traces),
        &Settings::default(),
        target("ttft_p95<=1"),
    )
    .unwrap();
    let verdicts: Vec<StepVerdict> = c.steps.iter().map(|s| s.verdict).collect();
    assert_eq!(
        verdicts,
        [
            StepVerdict::Passes,
            StepVerdict::Inconclusive,
            StepVerdict::Fails
        ]
    );
    assert!(c.steps[1].why.as_ref().unwrap().en.contains("bound"));
    assert_eq!(
        (c.answer.last_pass, c.answer.first_fail),
        (Some(1.0), Some(3.0))
    );
    // Goodput over the 10 s window: 80 qualified → exact Poisson [6.34, 9.96] /s clears 2;
    // 8 → [0.35, 1.58] /s lies below 2; 20 → [1.22, 3.09] straddles it.
    let c = Capacity::compute(
        LoadKind::Speedup,
        &steps(&loads, &traces),
        &Settings::default(),
        target("goodput>=2"),
    )
    .unwrap();
    let verdicts: Vec<StepVerdict> = c.steps.iter().map(|s| s.verdict).collect();
    assert_eq!(
        verdicts,
        [
            StepVerdict::Passes,
            StepVerdict::Fails,
            StepVerdict::Inconclusive
        ]
    );
    assert_eq!(c.answer.first_fail, Some(2.0));
    // A step above the first failing one that cannot be judged is not named as inconclusive
    // below the answer, and a pass there would be flagged as not monotone.
    assert!(c.answer.inconclusive.is_empty());
    let g = c.steps[0].goodput.interval.unwrap();
    assert!(
        (g.lo.unwrap() - 6.343).abs() < 0.01 && (g.hi.unwrap() - 9.957).abs() < 0.01,
        "{g:?}"
    );
}

#[test]
fn an_interrupted_step_is_shown_but_never_judged() {
    let traces = [step(40, 0, 0), step(0, 0, 40)];
    let mut s = steps(&[1.0, 2.0], &traces);
    s[1].interrupted = true;
    let c = Capacity::compute(
        LoadKind::Concurrency,
        &s,
        &Settings::default(),
        target("joint_rate>=0.9"),
    )
    .unwrap();
    assert_eq!(c.steps[1].verdict, StepVerdict::Interrupted);
    assert_eq!((c.answer.last_pass, c.answer.first_fail), (Some(1.0), None));
    assert_eq!(c.knee, None, "an interrupted step gives no knee");
}

#[test]
fn bad_loads_and_targets_are_refused_with_what_to_do() {
    assert!(check_loads(&[])
        .unwrap_err()
        .en
        .contains("at least one load"));
    let e = check_loads(&[1.0, 4.0, 4.0]).unwrap_err();
    assert!(
        e.en.contains("step 3 (4) is not above step 2 (4)"),
        "{}",
        e.en
    );
    assert!(check_loads(&[2.0, 1.0])
        .unwrap_err()
        .en
        .contains("sort them"));
    assert!(check_loads(&[0.0])
        .unwrap_err()
        .en
        .contains("a finite number above 0"));
    assert!(check_loads(&[f64::INFINITY])
        .unwrap_err()
        .en
        .contains("a finite number above 0"));
    let traces = [step(1, 0, 0), step(1, 0, 0)];
    assert!(Capacity::compute(
        LoadKind::Rate,
        &steps(&[2.0, 1.0], &traces),
        &Settings::default(),
        target("joint_rate>=0.9")
    )
    .is_err());
    for bad in [
        "joint_rate>0.9",
        "p95<=1",
        "joint_rate>=1.5",
        "ttft_p95<=-1",
        "goodput>=x",
    ] {
        assert!(Target::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(target("joint_rate >= 90%").value, 0.9);
    assert_eq!(target("ttft_p95<=1.5").measure, Measure::TtftP95);
}

/// M/M/c with c = 4 slots and μ = 1/s, the first-token share at 0 so a request's TTFT is its
/// wait in the queue. P(W > t) = C(c, λ/μ)·e^{−(cμ−λ)t} (Erlang C), so "P95 TTFT ≤ t" holds while
/// P(W > t) ≤ 5 %, and (every answer passing quality) the joint rate under TTFT ≤ t is
/// P(W ≤ t). The theory's crossing load λ* is found by bisection; the simulated sweep's answer
/// must bracket it: last passing load ≤ λ* < first failing load, one grid step apart
/// (the tolerance is the grid's 0.25 /s).
#[test]
fn simulated_mmc_sweep_agrees_with_erlang_c() {
    let (c, mu, t) = (4u32, 1.0, 0.5);
    let p_late = |lambda: f64| {
        erlang_c(c, lambda, mu).map_or(1.0, |pc| pc * (-(c as f64 * mu - lambda) * t).exp())
    };
    let crossing = |share: f64| {
        let (mut lo, mut hi) = (0.01, 3.99);
        for _ in 0..60 {
            let mid = (lo + hi) / 2.0;
            if p_late(mid) > share {
                hi = mid
            } else {
                lo = mid
            }
        }
        lo
    };
    let loads: Vec<f64> = (0..9).map(|i| 1.5 + 0.25 * i as f64).collect(); // 1.5 … 3.5 /s
    let traces: Vec<Trace> = loads
        .iter()
        .enumerate()
        .map(|(i, &lambda)| {
            let p = Params {
                slots: c,
                service: Service::Exponential { mean_s: 1.0 / mu },
                first_token_share: 0.0,
                load: Load::Open {
                    rate_per_s: lambda,
                    arrival: ArrivalName::Poisson,
                    burstiness: 1.0,
                },
                requests: 40_000,
                seed: 11 + i as u64,
                stall: None,
            };
            let mut trace = simulate(&p).unwrap();
            // The simulator does not judge answers; here every answer passes, so the joint rate
            // is the share served within t.
            trace
                .attempts
                .iter_mut()
                .for_each(|a| a.quality = Quality::Pass);
            trace
        })
        .collect();
    let settings = Settings {
        ttft_threshold_s: t,
        ..Settings::default()
    };
    for (spec, share) in [("ttft_p95<=0.5", 0.05), ("joint_rate>=0.9", 0.10)] {
        let theory = crossing(share);
        let cap = Capacity::compute(
            LoadKind::Rate,
            &steps(&loads, &traces),
            &settings,
            target(spec),
        )
        .unwrap();
        let (pass, fail) = (
            cap.answer.last_pass.unwrap(),
            cap.answer.first_fail.unwrap(),
        );
        println!(
            "M/M/4 μ=1, {spec}: Erlang C crossing λ* = {theory:.3} /s; simulated sweep: passes at {pass} /s, fails at {fail} /s, inconclusive {:?}",
            cap.answer.inconclusive
        );
        for s in &cap.steps {
            println!(
                "  λ = {}: joint {:.4} {:?}, P95 TTFT {:?} {:?}, theory P(W > {t}) = {:.4} — {:?}",
                s.load,
                s.joint_rate.value.unwrap(),
                s.joint_rate.interval.map(|b| (b.lo, b.hi)),
                s.ttft_p95.value,
                s.ttft_p95.interval.map(|b| (b.lo, b.hi)),
                p_late(s.load),
                s.verdict
            );
        }
        assert!(
            pass <= theory && theory < fail,
            "{spec}: theory λ* = {theory} outside [{pass}, {fail})"
        );
        assert!(
            fail - pass <= 0.25 + 1e-9 + 0.25 * cap.answer.inconclusive.len() as f64,
            "{spec}: the answer spans {pass}…{fail}"
        );
        assert!(
            cap.answer.inconclusive.len() <= 1,
            "{spec}: at 40,000 requests a step is inconclusive only beside λ*"
        );
    }
}

/// The lab's constructed sample sweep (`public/samples/sweep-demo/`): a simulated M/M/4 sweep
/// (mean service 1 s, 200 requests a step) at five rates, written as `tracelab sweep` writes a
/// folder. `TRACELAB_BLESS=1` rewrites it; otherwise the files on disk must be what this writes.
const SWEEP_DEMO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../public/samples/sweep-demo"
);

fn sweep_demo() -> SimulatedSweep {
    SimulatedSweep {
        slots: 4,
        mean_service_s: 1.0,
        rates: vec![1.0, 2.0, 2.5, 3.0, 3.5],
        requests_per_step: 200,
        seed: 7,
    }
}

#[test]
fn the_sample_sweep_is_what_its_generator_writes_and_its_answer() {
    let simulated = sweep_demo().run().unwrap();
    let file = SweepFile {
        kind: LoadKind::Rate,
        loads: sweep_demo().rates,
        steps: simulated
            .iter()
            .map(|(l, f, _)| SweepStep {
                load: *l,
                file: f.clone(),
                interrupted: false,
            })
            .collect(),
        contract_sha256: None,
        target: Some("joint_rate>=0.9".into()),
        threshold_s: Some(1.0),
        comparison: Some(Comparison::Le),
        stopped: None,
        interrupted: false,
        simulated: Some(sweep_demo().plan().record()),
    };
    let mut files = vec![("sweep.json".to_string(), file.to_json())];
    files.extend(simulated.iter().map(|(_, f, t)| (f.clone(), to_jsonl(t))));
    if std::env::var_os("TRACELAB_BLESS").is_some() {
        std::fs::create_dir_all(SWEEP_DEMO).unwrap();
        for (name, text) in &files {
            std::fs::write(format!("{SWEEP_DEMO}/{name}"), text).unwrap();
        }
    }
    for (name, text) in &files {
        let on_disk = std::fs::read_to_string(format!("{SWEEP_DEMO}/{name}"))
            .unwrap_or_else(|e| panic!("{name}: {e} (TRACELAB_BLESS=1 writes it)"));
        assert!(
            &on_disk == text,
            "{name} differs from its generator; rerun with TRACELAB_BLESS=1 and review the diff"
        );
    }
    // Read back as the page reads it: the sweep file, then each step's trace.
    let read = SweepFile::parse("sweep.json", &files[0].1).unwrap();
    assert_eq!(read, file);
    let traces: Vec<Trace> = read
        .steps
        .iter()
        .map(|s| {
            parse_trace(
                &s.file,
                &std::fs::read_to_string(format!("{SWEEP_DEMO}/{}", s.file)).unwrap(),
            )
            .unwrap()
        })
        .collect();
    let loads: Vec<f64> = read.steps.iter().map(|s| s.load).collect();
    let cap = Capacity::compute(
        read.kind,
        &steps(&loads, &traces),
        &Settings::default(),
        target("joint_rate>=0.9"),
    )
    .unwrap();
    println!("{}", cap.render_text(Lang::En));
    assert!(cap
        .render_text(Lang::En)
        .starts_with("Simulated, not measured: every step comes from tracelab's simulator"));
    assert_eq!(cap.simulated, vec![1.0, 2.0, 2.5, 3.0, 3.5]);
    assert!(cap
        .simulated_text(Lang::Zh)
        .unwrap()
        .starts_with("模拟结果，不是测量"));
    // 200 requests a step, each step's attempts queueing behind each other: from 2.5 /s on the
    // steps are worth too few independent samples to clear 90 % (they were called passing while
    // the intervals took the attempts as independent draws).
    assert_eq!(cap.answer.last_pass, Some(2.0));
    assert_eq!(cap.answer.first_fail, Some(3.5));
    assert_eq!(cap.answer.inconclusive, vec![2.5, 3.0]);
    assert_eq!(
        cap.knee,
        Some(1.0),
        "99.5 % at 1 /s to 95 % at 2 /s is a drop beyond noise"
    );
    for (i, s) in cap.steps.iter().enumerate() {
        let why = cap.why_text(i, Lang::En);
        match s.verdict {
            StepVerdict::Passes => assert!(why.contains("lies wholly at or above 90 %"), "{why}"),
            StepVerdict::Fails => assert!(why.contains("lies wholly below 90 %"), "{why}"),
            _ => assert!(why.contains("straddles 90 %"), "{why}"),
        }
        assert!(!cap.why_text(i, Lang::Zh).is_empty());
        assert_eq!(cap.figure_rows(i, Lang::En).len(), 4);
    }
    // A stricter threshold moves the answer down.
    let strict = Settings {
        ttft_threshold_s: 0.5,
        comparison: Comparison::Lt,
        ..Settings::default()
    };
    let cap2 = Capacity::compute(
        read.kind,
        &steps(&loads, &traces),
        &strict,
        target("joint_rate>=0.9"),
    )
    .unwrap();
    println!("{}", cap2.answer_text(Lang::En));
    assert!(
        cap2.answer.first_fail.unwrap() < 3.5,
        "{}",
        cap2.answer_text(Lang::En)
    );
}

#[test]
fn bad_sweep_files_are_refused_by_field() {
    for (text, field) in [
        ("{}", "tracelab_sweep"),
        (r#"{"tracelab_sweep":1,"kind":"speed","steps":[]}"#, "kind"),
        (
            r#"{"tracelab_sweep":1,"kind":"rate","steps":[{"load":1,"file":"../x.jsonl"}]}"#,
            "steps[].file",
        ),
    ] {
        let e = SweepFile::parse("sweep.json", text).unwrap_err();
        assert!(e.en.contains(field), "{}", e.en);
    }
    let e = SweepFile::parse("sweep.json", r#"{"tracelab_sweep":1,"kind":"rate","steps":[{"load":2,"file":"a"},{"load":1,"file":"b"}]}"#).unwrap_err();
    assert!(e.en.contains("loads must increase"), "{}", e.en);
    assert!(SweepFile::parse("sweep.json", "not json")
        .unwrap_err()
        .en
        .contains("not JSON"));
}

/// The early-stop rule both sweeps use (`capacity::saturation`): a failure rate whose whole
/// interval lies above the bound, a step that fails the target, nothing on a passing step or
/// on an inconclusive one, never on an interrupted one.
#[test]
fn the_stop_rule_names_why_a_step_is_saturated() {
    let traces = [
        step(40, 0, 0),
        step(30, 10, 0),
        step(2, 38, 0),
        step(5, 0, 35),
    ];
    let loads = [1.0, 2.0, 3.0, 4.0];
    let t = target("joint_rate>=0.8");
    let c = Capacity::compute(
        LoadKind::Rate,
        &steps(&loads, &traces),
        &Settings::default(),
        t,
    )
    .unwrap();
    assert_eq!(saturation(&c.steps[0], &t, 0.5), None, "passes");
    assert_eq!(
        saturation(&c.steps[1], &t, 0.5),
        None,
        "inconclusive: not saturated yet"
    );
    let fails = saturation(&c.steps[2], &t, 0.5).unwrap();
    assert!(
        fails
            .en
            .contains("fails the target (joint qualification rate ≥ 80 %)"),
        "{}",
        fails.en
    );
    assert!(fails.zh.contains("未达到目标"), "{}", fails.zh);
    // 35 of 40 failed: Wilson [0.74, 0.95] lies above 0.5 (the failure rule comes first).
    let failing = saturation(&c.steps[3], &t, 0.5).unwrap();
    assert!(
        failing
            .en
            .contains("failure rate's whole 95 % interval lies above 0.5"),
        "{}",
        failing.en
    );
    let mut s = steps(&loads, &traces);
    s[3].interrupted = true;
    let c = Capacity::compute(LoadKind::Rate, &s, &Settings::default(), t).unwrap();
    assert_eq!(
        saturation(&c.steps[3], &t, 0.5),
        None,
        "an interrupted step is never judged"
    );
}

/// A simulated sweep at each kind of load (rates, concurrencies, a real workload file's
/// speed-ups with a per-token service): every step's trace is the simulator's (marked in its
/// header), seeded seed + step, the same plan the same traces; the sweep file written and read
/// back with its comparison and the simulator's record; a measured step among simulated ones
/// breaks the contract.
#[test]
fn simulated_sweeps_at_every_kind_of_load() {
    let server = Params {
        slots: 2,
        service: Service::Exponential { mean_s: 0.5 },
        first_token_share: 0.2,
        load: Load::Closed {
            clients: 1,
            think_s: 0.0,
        },
        requests: 300,
        seed: 5,
        stall: None,
    };
    let rates = SimulatedSweepPlan {
        server: server.clone(),
        load: SimulatedLoad::Rates {
            arrival: ArrivalName::Poisson,
            burstiness: 1.0,
        },
        loads: vec![1.0, 3.0],
    };
    let closed = SimulatedSweepPlan {
        server: server.clone(),
        load: SimulatedLoad::Concurrencies { think_s: 0.0 },
        loads: vec![1.0, 8.0],
    };
    // Read in place through the test kit (an empty TRACELAB_FIXTURES names no folder).
    let workload = tracelab_core::workload::read(
        "AzureLLMInferenceTrace_conv.csv",
        &tracelab_testkit::read_fixture("workloads/AzureLLMInferenceTrace_conv.csv"),
    )
    .unwrap();
    let replay = tracelab_core::workload::Replay {
        speedup: 1.0,
        from_s: 0.0,
        for_s: Some(60.0),
        max_idle_s: None,
    };
    let tokens = TokenCost {
        per_input_token_s: 0.0,
        per_output_token_s: 0.002,
    };
    let speedups = SimulatedSweepPlan {
        server: server.clone(),
        load: SimulatedLoad::Speedups {
            workload,
            replay,
            tokens: Some(tokens),
        },
        loads: vec![1.0, 4.0],
    };
    for (plan, kind) in [
        (&rates, LoadKind::Rate),
        (&closed, LoadKind::Concurrency),
        (&speedups, LoadKind::Speedup),
    ] {
        plan.check().unwrap();
        assert_eq!(plan.kind(), kind);
        let a = plan.step(1).unwrap();
        assert_eq!(
            to_jsonl(&a.trace),
            to_jsonl(&plan.step(1).unwrap().trace),
            "{kind:?}: the same plan, the same trace"
        );
        assert_ne!(to_jsonl(&a.trace), to_jsonl(&plan.step(0).unwrap().trace));
        let sim = a.trace.header.simulation.as_ref().unwrap().read().unwrap();
        assert_eq!(sim.seed, 6, "step 2 uses seed + 1");
        assert!(a.trace.attempts.iter().all(|x| x.quality == Quality::Pass));
        assert_eq!(
            a.file,
            format!(
                "step-02-{}-{}.jsonl",
                kind.code(),
                tracelab_core::format::trim_num(plan.loads[1])
            )
        );
        match kind {
            LoadKind::Rate => assert_eq!(a.trace.header.conditions.rate_per_s, Some(3.0)),
            LoadKind::Concurrency => assert_eq!(a.trace.header.conditions.concurrency, Some(8)),
            LoadKind::Speedup => {
                assert_eq!(sim.tokens, Some(tokens));
                assert!(
                    sim.describe(Lang::En)
                        .contains("+ 0.002 s per output token"),
                    "{}",
                    sim.describe(Lang::En)
                );
                let planned = a.replayed.as_ref().unwrap();
                assert_eq!(planned.requests.len(), a.trace.attempts.len());
                // Four times faster: the last arrival a quarter of the way in.
                let last = |s: &tracelab_core::capacity::SimulatedStep| {
                    s.replayed.as_ref().unwrap().requests.last().unwrap().at_ms
                };
                assert!((last(&plan.step(0).unwrap()) / 4.0 - last(&a)).abs() < 0.001);
            }
            LoadKind::SessionRate => unreachable!("no session plan in this list"),
        }
    }
    assert!(SimulatedSweepPlan {
        loads: vec![1.5, 2.0],
        ..closed.clone()
    }
    .check()
    .unwrap_err()
    .en
    .contains("not a whole number"));
    assert!(SimulatedSweepPlan {
        loads: vec![2.0, 1.0],
        ..rates.clone()
    }
    .check()
    .unwrap_err()
    .en
    .contains("loads must increase"));
    let bad = SimulatedSweepPlan {
        server: Params {
            slots: 0,
            ..server.clone()
        },
        ..rates.clone()
    };
    assert!(
        bad.step(0).unwrap_err().en.contains("step 1: --slots"),
        "{}",
        bad.step(0).unwrap_err().en
    );

    // sweep.json: comparison and the simulator's record round-trip; a bad comparison is refused.
    let file = SweepFile {
        kind: LoadKind::Rate,
        loads: vec![1.0, 3.0],
        steps: vec![SweepStep {
            load: 1.0,
            file: "step-01-rate-1.jsonl".into(),
            interrupted: false,
        }],
        contract_sha256: None,
        target: Some("ttft_p95<=0.5".into()),
        threshold_s: Some(0.5),
        comparison: Some(Comparison::Lt),
        stopped: Some((1, "saturated".into())),
        interrupted: false,
        simulated: Some(rates.record()),
    };
    let read = SweepFile::parse("sweep.json", &file.to_json()).unwrap();
    assert_eq!(read, file);
    assert_eq!(read.simulated.as_ref().unwrap()["measured"], false);
    assert_eq!(
        read.simulated.as_ref().unwrap()["service"]["kind"],
        "exponential"
    );
    let e =
        SweepFile::parse("sweep.json", &file.to_json().replace("\"lt\"", "\"about\"")).unwrap_err();
    assert!(e.en.contains("`comparison`"), "{}", e.en);

    // One measured step among simulated ones: said, and a broken contract.
    let traces = [rates.step(0).unwrap().trace, step(40, 0, 0)];
    let c = Capacity::compute(
        LoadKind::Rate,
        &steps(&[1.0, 3.0], &traces),
        &Settings::default(),
        target("joint_rate>=0.5"),
    )
    .unwrap();
    assert_eq!(c.simulated, vec![1.0]);
    assert!(
        c.simulated_text(Lang::En)
            .unwrap()
            .contains("rate 1 /s is simulated, not measured"),
        "{:?}",
        c.simulated_text(Lang::En)
    );
    assert!(
        c.contract
            .iter()
            .any(|t| t.en.contains("simulated and the others measured")),
        "{:?}",
        c.contract
    );
    let measured = [step(40, 0, 0)];
    assert_eq!(
        Capacity::compute(
            LoadKind::Rate,
            &steps(&[1.0], &measured),
            &Settings::default(),
            target("joint_rate>=0.5")
        )
        .unwrap()
        .simulated_text(Lang::En),
        None
    );
}

/// One simulated step at `rate`, as `tracelab simulate-sweep` writes it.
fn simulated_step(rate: f64, requests: u32, seed: u64) -> Trace {
    let p = Params {
        slots: 4,
        service: Service::Exponential { mean_s: 1.0 },
        first_token_share: 0.2,
        load: Load::Open {
            rate_per_s: rate,
            arrival: ArrivalName::Poisson,
            burstiness: 1.0,
        },
        requests,
        seed,
        stall: None,
    };
    simulate(&p).unwrap()
}

#[test]
fn a_step_file_cut_short_is_shown_not_judged() {
    let whole = to_jsonl(&simulated_step(1.0, 400, 3));
    // Cut in the middle of an attempt's line, as a crash or a full disk leaves it: no footer.
    let cut = &whole[..whole.len() * 4 / 9];
    let cut = parse_trace("step-01.jsonl", cut).unwrap();
    assert!(cut.is_incomplete());
    let traces = [cut];
    let c = Capacity::compute(
        LoadKind::Rate,
        &steps(&[1.0], &traces),
        &Settings::default(),
        target("joint_rate>=0.5"),
    )
    .unwrap();
    assert_eq!(c.steps[0].verdict, StepVerdict::Interrupted);
    assert_eq!(c.answer.last_pass, None);
    let why = c.why_text(0, Lang::En);
    assert!(
        why.contains("the file is incomplete") && why.contains("attempts read"),
        "{why}"
    );
    assert!(c.why_text(0, Lang::Zh).contains("文件不完整"));
}

#[test]
fn a_step_file_from_another_step_is_refused() {
    // step-02's file replaced by step-01's: its header says 1 /s where sweep.json says 1.5 /s.
    let traces = [simulated_step(1.0, 200, 3), simulated_step(1.0, 200, 3)];
    let err = Capacity::compute(
        LoadKind::Rate,
        &steps(&[1.0, 1.5], &traces),
        &Settings::default(),
        target("joint_rate>=0.5"),
    )
    .unwrap_err();
    assert!(
        err.en.contains("step-02")
            && err.en.contains("rate 1 /s")
            && err.en.contains("rate 1.5 /s")
            && err.en.contains("another step"),
        "{}",
        err.en
    );
    assert!(err.zh.contains("sweep.json"), "{}", err.zh);
}

#[test]
fn goodput_rises_with_load_so_a_low_step_that_falls_short_is_no_ceiling() {
    // 10 s windows: 5, 20 and 30 qualified → goodput 0.5, 2 and 3 /s against goodput >= 1.5.
    let traces = [step(5, 0, 0), step(20, 0, 0), step(30, 0, 0)];
    let c = Capacity::compute(
        LoadKind::Rate,
        &steps(&[0.5, 2.0, 3.0], &traces),
        &Settings::default(),
        target("goodput>=1.5"),
    )
    .unwrap();
    assert_eq!(c.steps[0].verdict, StepVerdict::Fails);
    assert_eq!(
        c.answer.first_fail, None,
        "a low load that falls short is not where capacity ends"
    );
    assert_eq!(c.answer.short_of_goodput, vec![0.5]);
    let en = c.answer_text(Lang::En);
    assert!(
        !en.contains("start the sweep lower") && en.contains("offered too little load"),
        "{en}"
    );
    // Nothing passes: the advice follows the target's direction.
    let traces = [step(5, 0, 0), step(6, 0, 0)];
    let c = Capacity::compute(
        LoadKind::Rate,
        &steps(&[0.5, 0.6], &traces),
        &Settings::default(),
        target("goodput>=1.5"),
    )
    .unwrap();
    let en = c.answer_text(Lang::En);
    assert!(
        en.contains("extend the sweep to higher loads") && !en.contains("start the sweep lower"),
        "{en}"
    );
}

#[test]
fn a_p95_target_on_short_steps_says_what_n_it_needs() {
    // 50 TTFTs of 0.2 s: the P95 has no upper bound below n = 72.
    let traces = [step(50, 0, 0)];
    let c = Capacity::compute(
        LoadKind::Rate,
        &steps(&[1.0], &traces),
        &Settings::default(),
        target("ttft_p95<=0.5"),
    )
    .unwrap();
    assert_eq!(c.steps[0].verdict, StepVerdict::Inconclusive);
    let json = serde_json::to_value(&c).unwrap();
    let why = json["steps"][0]["why"]["en"]
        .as_str()
        .expect("why is not null");
    assert!(
        why.contains("n ≥ 72") && why.contains("50 TTFT samples"),
        "{why}"
    );
}

/// A session step: `sessions` conversations of `turns` turns each over a 100 s window, every
/// turn a quick qualified answer (0.2 s) except one late turn (5 s) in each of the first `bad`
/// sessions. Built from the classroom CSV, each attempt then made a turn of its session.
fn session_step(sessions: usize, turns: u32, bad: usize) -> Trace {
    let mut csv = String::from("# window_s: 100\nid,outcome,ttft_s,quality\n");
    for s in 0..sessions {
        for k in 1..=turns {
            let late = s < bad && k == turns;
            csv.push_str(&format!(
                "S{s}T{k},success,{},pass\n",
                if late { 5.0 } else { 0.2 }
            ));
        }
    }
    let mut t = parse_trace("sessions.csv", &csv).unwrap();
    for (i, a) in t.attempts.iter_mut().enumerate() {
        a.session = Some(tracelab_core::trace::SessionTurn {
            session_id: format!("s{}", i / turns as usize),
            turn: (i % turns as usize) as u32 + 1,
            history_tokens: None,
            cached_tokens: None,
        });
    }
    t
}

#[test]
fn a_session_sweep_is_judged_on_sessions_where_turns_alone_would_pass() {
    // Step 2: 8 of 40 sessions have one late turn of 10. Per turn 392 of 400 qualify (Wilson
    // 96.1 % … 99.4 %: joint_rate>=0.9 passes), but 32 of 40 sessions (Wilson 65.2 % … 89.5 %)
    // lies wholly below 90 %: session_share>=0.9 fails, with the session as the unit.
    let traces = [session_step(40, 10, 0), session_step(40, 10, 8)];
    let loads = [0.5, 1.0];
    let s = Settings {
        ttft_threshold_s: 1.0,
        ..Settings::default()
    };
    let per_turn = Capacity::compute(
        LoadKind::SessionRate,
        &steps(&loads, &traces),
        &s,
        target("joint_rate>=0.9"),
    )
    .unwrap();
    assert_eq!(per_turn.steps[1].verdict, StepVerdict::Passes);
    let c = Capacity::compute(
        LoadKind::SessionRate,
        &steps(&loads, &traces),
        &s,
        target("session_share>=90%"),
    )
    .unwrap();
    assert_eq!(c.target.measure, Measure::SessionShare);
    assert_eq!(c.steps[0].verdict, StepVerdict::Passes);
    assert_eq!(c.steps[1].verdict, StepVerdict::Fails);
    let ss = c.steps[1].sessions.as_ref().unwrap();
    assert_eq!((ss.sessions, ss.qualified_sessions), (40, 32));
    let b = ss.session_share.interval.unwrap();
    assert!(
        (b.lo.unwrap() - 0.652).abs() < 1e-3 && (b.hi.unwrap() - 0.895).abs() < 1e-3,
        "{b:?}"
    );
    // 32 qualified sessions over 100 s.
    assert_eq!(ss.session_goodput.value, Some(0.32));
    assert_eq!(
        (c.answer.last_pass, c.answer.first_fail),
        (Some(0.5), Some(1.0))
    );
    // The knee on sessions: 40/40 → 32/40 is a drop beyond noise (Newcombe on sessions).
    assert_eq!(c.knee, Some(0.5));
    let en = c.render_text(Lang::En);
    assert!(en.contains("session rate 1 /s — fails"), "{en}");
    assert!(en.contains("sessions 40, qualified sessions 32"), "{en}");
    assert!(
        en.contains("sessions qualified (every turn qualified): 80 %"),
        "{en}"
    );
    assert!(
        en.contains("the intervals take the session as the unit"),
        "{en}"
    );
    assert!(
        c.why_text(1, Lang::En).contains("lies wholly below 90 %"),
        "{}",
        c.why_text(1, Lang::En)
    );
    let zh = c.render_text(Lang::Zh);
    assert!(
        zh.contains("会话速率 1 个/秒") && zh.contains("合格会话占比（每一轮都合格）"),
        "{zh}"
    );
    assert!(zh.contains("拐点：会话速率 0.5 个/秒"), "{zh}");
    // Session goodput as the target; a sweep without sessions cannot be judged on it.
    let g = Capacity::compute(
        LoadKind::SessionRate,
        &steps(&loads, &traces),
        &s,
        target("session_goodput>=0.35"),
    )
    .unwrap();
    assert_eq!(g.steps[1].verdict, StepVerdict::Inconclusive);
    let plain = [step(40, 0, 0)];
    let n = Capacity::compute(
        LoadKind::Rate,
        &steps(&[1.0], &plain),
        &s,
        target("session_share>=0.9"),
    )
    .unwrap();
    assert_eq!(n.steps[0].verdict, StepVerdict::Inconclusive);
    assert!(n.steps[0].why.as_ref().unwrap().en.contains("no sessions"));
    assert_eq!(
        LoadKind::from_code("session_rate"),
        Some(LoadKind::SessionRate)
    );
}
