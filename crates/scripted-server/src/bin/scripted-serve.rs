//! `scripted-serve`: the scripted server as a process of its own, for benchmarks that judge a
//! client by the wire (a packet capture) rather than by anything inside the client's process.
//!
//! Every completion streams a role chunk, `--tokens` tokens (the first after `--ttft-ms`, then
//! `--itl-ms` apart), a finish chunk, usage and `[DONE]`. Its usage reports `prompt_tokens` as
//! the request's serial number (1, 2, … in the order the server read them): a label that every
//! client keeps from the usage and the capture shows in the bytes, so the client's record and
//! the wire's can be paired request by request without storing any text.
//!
//! `--framing` cuts the stream as real servers do: `per-event` (one event per write),
//! `coalesced` (the role chunk and the first token in one write, then tokens two to a write) or
//! `split:MS` (every event in two writes MS apart). It prints `listening on 127.0.0.1:PORT` and
//! serves until killed.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tracelab_scripted_server::{Script, ScriptedServer, Step};

#[derive(Clone, Copy)]
enum Framing {
    PerEvent,
    Coalesced,
    Split(Duration),
}

struct Args {
    ttft: Duration,
    itl: Duration,
    tokens: u32,
    framing: Framing,
    threads: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        ttft: Duration::from_millis(50),
        itl: Duration::from_millis(10),
        tokens: 16,
        framing: Framing::PerEvent,
        threads: 1,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value (try --help)"))?;
        let ms = |v: &str| -> Result<Duration, String> {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .map(|x| Duration::from_secs_f64(x / 1000.0))
                .ok_or_else(|| format!("{flag} {v}: not a number of milliseconds ≥ 0"))
        };
        match flag.as_str() {
            "--ttft-ms" => args.ttft = ms(&value)?,
            "--itl-ms" => args.itl = ms(&value)?,
            "--tokens" => {
                args.tokens = value
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--tokens {value}: not a whole number ≥ 1"))?
            }
            "--threads" => {
                args.threads = value
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--threads {value}: not a whole number ≥ 1"))?
            }
            "--framing" => {
                args.framing = match value.as_str() {
                    "per-event" => Framing::PerEvent,
                    "coalesced" => Framing::Coalesced,
                    other => match other.strip_prefix("split:") {
                        Some(gap) => Framing::Split(ms(gap)?),
                        None => {
                            return Err(format!(
                                "--framing {other}: expected per-event, coalesced or split:MS"
                            ))
                        }
                    },
                }
            }
            other => {
                return Err(format!(
                "unknown option {other}; options: --ttft-ms --itl-ms --tokens --framing --threads"
            ))
            }
        }
    }
    Ok(args)
}

fn script(args: &Args, serial: u32) -> Script {
    let mut steps = vec![];
    match args.framing {
        // Nothing between the role chunk and the first token: one write carries both, and then
        // every write after the first carries two tokens.
        Framing::Coalesced => {
            steps.extend([Step::Sleep(args.ttft), Step::Role]);
            for i in 0..args.tokens {
                if i > 0 && i % 2 == 1 {
                    steps.push(Step::Sleep(args.itl));
                }
                steps.push(Step::Token("tok ".into()));
            }
        }
        Framing::PerEvent | Framing::Split(_) => {
            steps.extend([Step::Role, Step::Sleep(args.ttft)]);
            for i in 0..args.tokens {
                if i > 0 {
                    steps.push(Step::Sleep(args.itl));
                }
                steps.push(Step::Token("tok ".into()));
            }
        }
    }
    steps.extend([
        Step::Finish,
        Step::Usage {
            prompt: serial,
            completion: args.tokens,
        },
        Step::Done,
    ]);
    let mut script = Script::new(steps);
    match args.framing {
        Framing::Coalesced => script.coalesce = true,
        Framing::Split(gap) => script.split = Some(gap),
        Framing::PerEvent => {}
    }
    script
}

fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("scripted-serve: {e}");
            std::process::exit(2);
        }
    };
    let threads = args.threads;
    let serial = AtomicU32::new(0);
    let server = ScriptedServer::start_with_threads(threads, move |_prompt| {
        script(&args, serial.fetch_add(1, Ordering::SeqCst) + 1)
    });
    server.answer(
        "/v1/models",
        r#"{"object":"list","data":[{"id":"m","object":"model","owned_by":"scripted"}]}"#,
    );
    println!("listening on {}", server.addr);
    loop {
        std::thread::park();
    }
}
