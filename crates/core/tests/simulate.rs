//! The load-model simulation: checked against queueing theory at fixed seeds (each check states
//! its tolerance and prints measured vs theoretical, `cargo test -- --nocapture`), worked
//! by hand on a stall, and round-tripped through the trace format.

use tracelab_core::parse::parse_trace;
use tracelab_core::simulate::theory::{
    erlang_c, mm1_time_in_system, mmc_mean_wait, response_time_law,
};
use tracelab_core::simulate::*;
use tracelab_core::{write, Index, Metrics, Settings, Trace};

fn open(
    slots: u32,
    service: Service,
    rate: f64,
    arrival: ArrivalName,
    requests: u32,
    seed: u64,
) -> Params {
    Params {
        slots,
        service,
        first_token_share: 0.0,
        load: Load::Open {
            rate_per_s: rate,
            arrival,
            burstiness: 1.0,
        },
        requests,
        seed,
        stall: None,
    }
}

/// Times in seconds from the written trace: (wait before the first token, time in system).
fn times(trace: &Trace, skip: usize) -> Vec<(f64, f64)> {
    trace.attempts[skip..]
        .iter()
        .map(|a| (a.ttft_ms.unwrap() / 1000.0, a.e2e_ms.unwrap() / 1000.0))
        .collect()
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    s / n as f64
}

/// Through the file, as every reader sees it.
fn written(p: &Params) -> Trace {
    let trace = simulate(p).unwrap();
    parse_trace("sim.jsonl", &write::to_jsonl(&trace)).unwrap()
}

#[test]
fn mm1_mean_time_in_system_is_one_over_mu_minus_lambda() {
    // λ = 0.8/s, μ = 1/s: W = 1/(μ − λ) = 5 s. 200,000 requests, the first 2,000 dropped as the
    // queue fills from empty. Tolerance 3 %: at ρ = 0.8 the waits are strongly correlated, so the
    // sample mean of 200k of them still varies by about 1 % from seed to seed.
    for (lambda, tol) in [(0.5, 0.02), (0.8, 0.03)] {
        let trace = written(&open(
            1,
            Service::Exponential { mean_s: 1.0 },
            lambda,
            ArrivalName::Poisson,
            200_000,
            42,
        ));
        let measured = mean(times(&trace, 2_000).into_iter().map(|t| t.1));
        let theory = mm1_time_in_system(lambda, 1.0).unwrap();
        println!("M/M/1 λ={lambda} μ=1: mean time in system measured {measured:.4} s, theory {theory:.4} s");
        assert!(
            (measured - theory).abs() / theory < tol,
            "λ={lambda}: measured {measured}, theory {theory}, tolerance {tol}"
        );
    }
}

#[test]
fn mmc_waiting_probability_is_erlang_c() {
    // c = 4 slots, λ = 3/s, μ = 1/s (ρ = 0.75). With the first-token share at 0 a request's TTFT is
    // exactly its wait in the queue, so "waited" is TTFT > 0. Tolerance: 0.01 absolute on the
    // probability, 3 % on the mean wait.
    let (c, lambda) = (4, 3.0);
    let trace = written(&open(
        c,
        Service::Exponential { mean_s: 1.0 },
        lambda,
        ArrivalName::Poisson,
        200_000,
        7,
    ));
    let t = times(&trace, 2_000);
    let p_wait = t.iter().filter(|x| x.0 > 0.0).count() as f64 / t.len() as f64;
    let wq = mean(t.iter().map(|x| x.0));
    let (p_theory, wq_theory) = (
        erlang_c(c, lambda, 1.0).unwrap(),
        mmc_mean_wait(c, lambda, 1.0).unwrap(),
    );
    println!("M/M/4 λ=3 μ=1: P(wait) measured {p_wait:.4}, Erlang C {p_theory:.4}; mean wait measured {wq:.4} s, theory {wq_theory:.4} s");
    assert!(
        (p_wait - p_theory).abs() < 0.01,
        "P(wait) {p_wait} vs {p_theory}"
    );
    assert!(
        (wq - wq_theory).abs() / wq_theory < 0.03,
        "Wq {wq} vs {wq_theory}"
    );
}

#[test]
fn closed_loop_obeys_the_response_time_law() {
    // N = 10 clients, think Z = 2 s, 2 slots, exponential service with mean 0.5 s. The law
    // R = N/X − Z holds for any distribution; over a finite run it is off only by the requests
    // in progress at the end. Tolerance 1 %.
    let (n, z) = (10, 2.0);
    let p = Params {
        slots: 2,
        service: Service::Exponential { mean_s: 0.5 },
        first_token_share: 0.2,
        load: Load::Closed {
            clients: n,
            think_s: z,
        },
        requests: 100_000,
        seed: 3,
        stall: None,
    };
    let trace = written(&p);
    let r = mean(times(&trace, 0).into_iter().map(|t| t.1));
    let x = summarize(&trace).throughput_per_s.unwrap();
    let law = response_time_law(n, x, z);
    println!("closed N=10 Z=2 s, 2 slots, exp(0.5 s): X {x:.4}/s, mean R measured {r:.4} s, N/X − Z {law:.4} s");
    assert!((r - law).abs() / law < 0.01, "R {r} vs N/X − Z {law}");
    // And never more requests in flight than clients.
    assert!(summarize(&trace).in_flight.iter().all(|s| s.1 <= n));
}

/// One slot, 0.5 s per request, and a 5 s stall 10 s in.
fn stalled(load: Load) -> Params {
    Params {
        slots: 1,
        service: Service::Fixed { s: 0.5 },
        first_token_share: 0.2,
        load,
        requests: 20,
        seed: 1,
        stall: Some(Stall {
            at_s: 10.0,
            for_s: 5.0,
        }),
    }
}

#[test]
fn a_stall_worked_by_hand() {
    // Open loop, one request a second: the request sent at 10 s is frozen until 15 s and ends at
    // 15.5 s; those sent at 11…19 s queue behind it, each 0.5 s less late than the one before.
    let open = written(&stalled(Load::Open {
        rate_per_s: 1.0,
        arrival: ArrivalName::Constant,
        burstiness: 1.0,
    }));
    let e2e: Vec<f64> = open
        .attempts
        .iter()
        .map(|a| a.e2e_ms.unwrap() / 1000.0)
        .collect();
    let mut expected = vec![0.5; 10];
    expected.extend((0..10).map(|i| 5.5 - 0.5 * i as f64));
    assert_eq!(e2e, expected);
    // Its first token came 0.1 s into service, before the stall? No: it started at 10 s, inside
    // the stall, so its first token is at 15.1 s.
    assert_eq!(open.attempts[10].ttft_ms, Some(5100.0));
    // Closed loop, one client thinking 0.5 s: only the request in service when the stall came
    // sees it, and no request is sent during the stall.
    let closed = written(&stalled(Load::Closed {
        clients: 1,
        think_s: 0.5,
    }));
    let slow: Vec<f64> = closed
        .attempts
        .iter()
        .map(|a| a.e2e_ms.unwrap() / 1000.0)
        .filter(|&e| e > 0.5)
        .collect();
    assert_eq!(slow, [5.5]);
    assert!(!closed.attempts.iter().any(
        |a| (10_000.0..15_000.0).contains(&a.start_ms.unwrap()) && a.start_ms != Some(10_000.0)
    ));
    // P95 (nearest rank, 19th of 20): calm for the closed loop, 5 s for the open one.
    assert_eq!(summarize(&closed).p95_s, Some(0.5));
    assert_eq!(summarize(&open).p95_s, Some(5.0));
}

#[test]
fn a_stall_started_mid_service_adds_its_length() {
    // Sent at 9.8 s, 0.5 s of work: 0.2 s before the stall, 0.3 s after it, so it ends at 15.3 s.
    let mut p = stalled(Load::Open {
        rate_per_s: 1.0,
        arrival: ArrivalName::Constant,
        burstiness: 1.0,
    });
    p.stall = Some(Stall {
        at_s: 9.2,
        for_s: 5.0,
    });
    let trace = written(&p);
    // The request sent at 9 s: first token at 9.1 s (before the stall), end at 9.5 + 5 = 14.5 s.
    assert_eq!(trace.attempts[9].ttft_ms, Some(100.0));
    assert_eq!(trace.attempts[9].e2e_ms, Some(5500.0));
}

#[test]
fn matched_throughput_comparison_shows_what_the_closed_loop_hides() {
    // 8 slots, 16 clients thinking 4 s, exponential service of mean 1 s, a 20 s stall 60 s in.
    let closed = Params {
        slots: 8,
        service: Service::Exponential { mean_s: 1.0 },
        first_token_share: 0.2,
        load: Load::Closed {
            clients: 16,
            think_s: 4.0,
        },
        requests: 1_000,
        seed: 11,
        stall: Some(Stall {
            at_s: 60.0,
            for_s: 20.0,
        }),
    };
    let cmp = compare_loads(&closed, Arrival::Poisson, 1.0).unwrap();
    // 16 clients in cycles of about 5 s: about 3.2 requests a second.
    assert!(
        (cmp.rate_per_s - 3.2).abs() < 0.2,
        "matched rate {}",
        cmp.rate_per_s
    );
    let (c, o) = (&cmp.closed_summary, &cmp.open_summary);
    println!(
        "stall demo: rate {:.3}/s; closed P50 {:.2} P95 {:.2} max {:.2}; open P50 {:.2} P95 {:.2} max {:.2}",
        cmp.rate_per_s,
        c.p50_s.unwrap(),
        c.p95_s.unwrap(),
        c.max_s.unwrap(),
        o.p50_s.unwrap(),
        o.p95_s.unwrap(),
        o.max_s.unwrap()
    );
    // Both saw the full 20 s stall at least once …
    assert!(c.max_s.unwrap() > 20.0 && o.max_s.unwrap() > 20.0);
    // … but only 16 closed-loop requests were in flight for it, so its P95 stays near the service
    // time, while the open loop kept sending into the stall.
    assert!(c.p95_s.unwrap() < 5.0, "closed P95 {:?}", c.p95_s);
    assert!(o.p95_s.unwrap() > 10.0, "open P95 {:?}", o.p95_s);
    assert!(
        cmp.closed_p95_calmer(),
        "the page may say the closed loop's P95 stays calm here"
    );
    // 64 clients with no think time on 8 slots: the closed loop's own queue makes its P95 the
    // worse one, and the page must not call it calm.
    let crowded = Params {
        load: Load::Closed {
            clients: 64,
            think_s: 0.0,
        },
        ..closed.clone()
    };
    let busy = compare_loads(&crowded, Arrival::Poisson, 1.0).unwrap();
    println!(
        "64 clients: closed P95 {:?}, open P95 {:?}",
        busy.closed_summary.p95_s, busy.open_summary.p95_s
    );
    assert!(
        !busy.closed_p95_calmer(),
        "closed P95 {:?} vs open {:?}",
        busy.closed_summary.p95_s,
        busy.open_summary.p95_s
    );
    let peak = |s: &LoadSummary| s.in_flight.iter().map(|x| x.1).max().unwrap();
    assert!(peak(c) <= 16);
    assert!(peak(o) > 40, "open peak in flight {}", peak(o));
    // The open loop's arrivals are the matched rate's, its header says so.
    match cmp
        .open
        .header
        .simulation
        .as_ref()
        .unwrap()
        .read()
        .unwrap()
        .load
    {
        Load::Open { rate_per_s, .. } => assert_eq!(rate_per_s, cmp.rate_per_s),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_same_seed_gives_the_same_file_and_the_header_says_everything() {
    let p = Params {
        slots: 3,
        service: Service::Exponential { mean_s: 0.4 },
        first_token_share: 0.25,
        load: Load::Open {
            rate_per_s: 5.0,
            arrival: ArrivalName::Poisson,
            burstiness: 0.5,
        },
        requests: 500,
        seed: 99,
        stall: Some(Stall {
            at_s: 30.0,
            for_s: 2.5,
        }),
    };
    let a = write::to_jsonl(&simulate(&p).unwrap());
    assert_eq!(a, write::to_jsonl(&simulate(&p).unwrap()));
    assert_ne!(
        a,
        write::to_jsonl(
            &simulate(&Params {
                seed: 100,
                ..p.clone()
            })
            .unwrap()
        )
    );
    let trace = parse_trace("sim.jsonl", &a).unwrap();
    let sim = trace
        .header
        .simulation
        .clone()
        .expect("marked as simulated")
        .read()
        .unwrap();
    assert_eq!(sim.slots, 3);
    assert_eq!(sim.service, ServiceRecord::Exponential { mean_s: 0.4 });
    assert_eq!(sim.first_token_share, Some(0.25));
    assert_eq!(sim.load, p.load);
    assert_eq!((sim.requests, sim.seed), (500, 99));
    assert_eq!(sim.stall, p.stall);
    let c = &trace.header.conditions;
    assert_eq!(
        (c.arrival.as_deref(), c.rate_per_s, c.burstiness, c.seed),
        (Some("poisson"), Some(5.0), Some(0.5), Some(99))
    );
    assert!(!trace.header.capabilities.inference_benchmark);
    assert_eq!(trace.attempts.len(), 500);
    assert!(!trace.is_incomplete());
    // Intended start = arrival, start = send, end − start = time in system.
    for att in &trace.attempts {
        assert_eq!(att.intended_start_ms, att.start_ms);
        assert!(att.ttft_ms.unwrap() <= att.e2e_ms.unwrap());
    }
    // And the metrics compute on it as on any trace.
    let settings = Settings::from_header(&trace.header);
    let metrics = Metrics::compute(
        &Index::build(&trace.attempts, settings.population),
        &settings,
    );
    assert_eq!(metrics.attempts, 500);
    assert!(metrics.ttft_p50.value.is_some());
}

#[test]
fn empirical_service_draws_only_measured_successes() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../public/samples/ten-requests.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("public/samples/ten-requests.jsonl");
    let source = parse_trace("ten-requests.jsonl", &text).unwrap();
    let e = Empirical::from_trace("ten-requests.jsonl", &source).unwrap();
    let successes: Vec<_> = source
        .attempts
        .iter()
        .filter(|a| a.outcome.is_success() && a.e2e_ms.is_some())
        .collect();
    assert_eq!(e.samples.len(), successes.len());
    // One slot far below capacity: nothing queues, so each simulated attempt is one of the
    // successes, with its own TTFT and E2E.
    let p = Params {
        slots: 64,
        service: Service::Empirical(e),
        first_token_share: DEFAULT_FIRST_TOKEN_SHARE,
        load: Load::Open {
            rate_per_s: 0.01,
            arrival: ArrivalName::Constant,
            burstiness: 1.0,
        },
        requests: 200,
        seed: 5,
        stall: None,
    };
    let trace = written(&p);
    for a in &trace.attempts {
        assert!(
            successes
                .iter()
                .any(|s| (s.ttft_ms.unwrap() - a.ttft_ms.unwrap()).abs() < 1e-3
                    && (s.e2e_ms.unwrap() - a.e2e_ms.unwrap()).abs() < 1e-3),
            "{} is not one of the source's successes",
            a.id
        );
    }
    assert_eq!(trace.header.defaults, source.header.defaults);
    let sim = trace.header.simulation.unwrap().read().unwrap();
    assert_eq!(
        sim.service,
        ServiceRecord::Trace {
            file: "ten-requests.jsonl".into(),
            successes: successes.len()
        }
    );
    assert_eq!(sim.first_token_share, None);

    // A trace without successes gives no service time, and says so.
    let mut failed = source.clone();
    failed.attempts.retain(|a| !a.outcome.is_success());
    let err = Empirical::from_trace("failed.jsonl", &failed).unwrap_err();
    assert_eq!(err.field, "service");
    assert!(
        err.message.contains("failed.jsonl") && err.message.contains("no measured success"),
        "{err}"
    );
}

#[test]
fn bad_parameters_name_the_flag() {
    assert_eq!(
        ServiceSpec::parse("exponential:0.5"),
        Ok(ServiceSpec::Exponential(0.5))
    );
    assert_eq!(ServiceSpec::parse("fixed:2"), Ok(ServiceSpec::Fixed(2.0)));
    assert_eq!(
        ServiceSpec::parse("trace:run.jsonl"),
        Ok(ServiceSpec::Trace("run.jsonl".into()))
    );
    for bad in [
        "exponential",
        "exponential:-1",
        "fixed:0",
        "fixed:abc",
        "normal:1",
        "trace:",
    ] {
        let err = ServiceSpec::parse(bad).unwrap_err();
        assert_eq!(err.field, "service", "{bad}");
    }
    assert_eq!(
        Stall::parse("10:5"),
        Ok(Stall {
            at_s: 10.0,
            for_s: 5.0
        })
    );
    for bad in ["10", "10:0", "-1:5", "a:b", "10:inf"] {
        assert_eq!(Stall::parse(bad).unwrap_err().field, "stall", "{bad}");
    }
    let ok = open(
        1,
        Service::Fixed { s: 1.0 },
        1.0,
        ArrivalName::Constant,
        10,
        0,
    );
    assert!(ok.check().is_ok());
    let cases: [(Params, &str); 6] = [
        (
            Params {
                slots: 0,
                ..ok.clone()
            },
            "slots",
        ),
        (
            Params {
                requests: 0,
                ..ok.clone()
            },
            "requests",
        ),
        (
            Params {
                load: Load::Closed {
                    clients: 0,
                    think_s: 0.0,
                },
                ..ok.clone()
            },
            "closed",
        ),
        (
            Params {
                load: Load::Closed {
                    clients: 1,
                    think_s: -1.0,
                },
                ..ok.clone()
            },
            "think",
        ),
        (
            Params {
                load: Load::Open {
                    rate_per_s: 0.0,
                    arrival: ArrivalName::Poisson,
                    burstiness: 1.0,
                },
                ..ok.clone()
            },
            "rate",
        ),
        (
            Params {
                load: Load::Open {
                    rate_per_s: 1.0,
                    arrival: ArrivalName::Poisson,
                    burstiness: 0.0,
                },
                ..ok.clone()
            },
            "burstiness",
        ),
    ];
    for (p, field) in cases {
        assert_eq!(simulate(&p).unwrap_err().field, field);
    }
}

/// The stall demonstration of lesson 4, as two samples: the same server (8 slots, exponential
/// service of mean 1 s, a 20 s stall 60 s in) under 16 closed-loop clients thinking 4 s, and
/// under a Poisson open loop at 3.2/s (what those clients reach without the stall).
fn stall_samples() -> [(&'static str, Params); 2] {
    let closed = Params {
        slots: 8,
        service: Service::Exponential { mean_s: 1.0 },
        first_token_share: DEFAULT_FIRST_TOKEN_SHARE,
        load: Load::Closed {
            clients: 16,
            think_s: 4.0,
        },
        requests: 600,
        seed: 11,
        stall: Some(Stall {
            at_s: 60.0,
            for_s: 20.0,
        }),
    };
    let open = Params {
        load: Load::Open {
            rate_per_s: 3.2,
            arrival: ArrivalName::Poisson,
            burstiness: 1.0,
        },
        ..closed.clone()
    };
    [
        ("sim-stall-closed.jsonl", closed),
        ("sim-stall-open.jsonl", open),
    ]
}

#[test]
fn the_stall_samples_are_what_the_simulation_writes() {
    for (name, params) in stall_samples() {
        let path = format!("{}/../../public/samples/{name}", env!("CARGO_MANIFEST_DIR"));
        let generated = write::to_jsonl(&simulate(&params).unwrap());
        if std::env::var_os("TRACELAB_BLESS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e} (TRACELAB_BLESS=1 writes it)"));
        assert!(
            on_disk == generated,
            "{name} differs from the simulation; rerun with TRACELAB_BLESS=1 and review the diff"
        );
    }
}
