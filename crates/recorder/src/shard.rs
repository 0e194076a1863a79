//! One recorder of several: `--shard I/N` (or Kubernetes' `JOB_COMPLETION_INDEX` with
//! `--shards N`) sends shard I's share of the work, and `--start-at` makes every shard begin at
//! the same wall-clock instant so the shards overlap.
//!
//! The split is by the global job number k (k mod N = I) over the one schedule every shard
//! computes alike, so the union of the shards is exactly the single-process run: the same
//! attempt ids, the same open-loop arrival instants (every N-th of the requested process, so the
//! superposition is that process whatever its arrival law), and the closed loop's concurrency
//! divided as evenly as it goes. The header says which shard it is, the shared run id and how
//! well the clock was synchronised (chrony's report, else "unknown"); never a hostname, pod name
//! or address.
//!
//! `--barrier HOST:PORT` makes the shards wait for each other ([`barrier`]): shard 0 listens, the
//! others tell it they are ready, and it announces one instant once all are (or once
//! `--barrier-timeout` has passed; a shard that comes later starts late, shifted, and says so).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

#[derive(Args, Debug, Default, Clone)]
pub struct ShardArgs {
    /// Run as shard I of N (0-based), e.g. 2/8: send every N-th request and 1/N of the load.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// With this, the shard index comes from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job).
    #[arg(long, value_name = "N", conflicts_with = "shard")]
    pub shards: Option<u32>,
    /// Wait for this UTC instant (RFC 3339, e.g. 2026-12-01T05:00:00Z) before the warm-up, so
    /// every shard starts together.
    #[arg(long, value_name = "RFC3339")]
    pub start_at: Option<String>,
    /// The id every shard of one run shares [default: derived from --start-at and the contract].
    #[arg(long, env = "TRACELAB_RUN_ID", value_name = "ID")]
    pub run_id: Option<String>,
    /// Wait until every shard is ready: shard 0 listens on PORT, the others connect to HOST:PORT
    /// (in Kubernetes, shard 0's pod name under a headless Service); all start together at
    /// --start-at or, if someone was later, 1 s after the last one is ready.
    #[arg(long, env = "TRACELAB_BARRIER", value_name = "HOST:PORT")]
    pub barrier: Option<String>,
    /// How long past --start-at (or from now) the barrier waits for the last shard before the
    /// ready ones start without it (it then starts late, shifted).
    #[arg(long, value_name = "SECONDS", default_value_t = 600.0)]
    pub barrier_timeout: f64,
}

/// Which shard this process is, of which run.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardPlan {
    pub index: u32,
    pub count: u32,
    pub run_id: String,
    /// `--barrier`: where the shards meet before they start, and how long shard 0 waits.
    pub barrier: Option<(String, Duration)>,
}

impl ShardPlan {
    /// Whether global job `k` is this shard's.
    pub fn owns(&self, k: u64) -> bool {
        k % u64::from(self.count) == u64::from(self.index)
    }

    /// How many of global jobs 0 … `total` − 1 are this shard's.
    pub fn jobs_of(&self, total: u64) -> u64 {
        (total + u64::from(self.count) - 1 - u64::from(self.index)) / u64::from(self.count)
    }

    /// This shard's part of `total` workers: the first `total mod N` shards take one more.
    pub fn share(&self, total: u32) -> u32 {
        total / self.count + u32::from(self.index < total % self.count)
    }
}

/// `--shard`, `--shards` + `JOB_COMPLETION_INDEX`, `--start-at` and `--run-id` → the shard (if
/// any) and the start instant. `contract` (model, prompt set digest, load…) seeds the default id.
pub fn plan(
    args: &ShardArgs,
    job_completion_index: Option<&str>,
    contract: &str,
) -> Result<(Option<ShardPlan>, Option<SystemTime>), String> {
    let start_at = args
        .start_at
        .as_deref()
        .map(|s| {
            parse_rfc3339(s)
                .map_err(|why| format!("--start-at {why}; expected e.g. 2026-12-01T05:00:00Z"))
        })
        .transpose()?;
    let (index, count) = match (&args.shard, args.shards) {
        (Some(spec), _) => parse_spec(spec)?,
        (None, Some(count)) => {
            let Some(raw) = job_completion_index else {
                return Err("--shards needs JOB_COMPLETION_INDEX (set by a Kubernetes Indexed Job), or give --shard I/N".into());
            };
            let index = raw.trim().parse::<u32>().map_err(|_| {
                format!(
                    "JOB_COMPLETION_INDEX must be a whole number from 0 to {}, got `{raw}`",
                    count.saturating_sub(1)
                )
            })?;
            check(index, count, "JOB_COMPLETION_INDEX")?
        }
        (None, None) => {
            if args.run_id.is_some() || args.barrier.is_some() {
                return Err("--run-id and --barrier are for a run of shards; give --shard I/N or --shards N too".into());
            }
            return Ok((None, start_at));
        }
    };
    let barrier = match &args.barrier {
        None => None,
        Some(addr) => {
            if !addr.rsplit_once(':').is_some_and(|(host, port)| {
                !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0)
            }) {
                return Err(format!(
                    "--barrier must be HOST:PORT (shard 0's address and a port), got `{addr}`"
                ));
            }
            if !(args.barrier_timeout.is_finite() && args.barrier_timeout > 0.0) {
                return Err(format!(
                    "--barrier-timeout must be a number of seconds above 0, got {}",
                    args.barrier_timeout
                ));
            }
            Some((addr.clone(), Duration::from_secs_f64(args.barrier_timeout)))
        }
    };
    let run_id = match (&args.run_id, &start_at) {
        (Some(id), _) => {
            let ok = !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
            if !ok {
                return Err("--run-id must be 1 to 64 letters, digits, '.', '_' or '-'".into());
            }
            id.clone()
        }
        (None, Some(at)) => {
            let mut hash = Sha256::new();
            hash.update(format!("{}|{count}|{contract}", epoch_ms(*at)).as_bytes());
            hash.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
        }
        (None, None) => {
            return Err("a sharded run needs --start-at (so the shards overlap) or --run-id (so they can be merged)".into())
        }
    };
    Ok((
        Some(ShardPlan {
            index,
            count,
            run_id,
            barrier,
        }),
        start_at,
    ))
}

fn parse_spec(spec: &str) -> Result<(u32, u32), String> {
    let bad = || format!("--shard must be I/N with 0 ≤ I < N, e.g. 0/4, got `{spec}`");
    let (i, n) = spec.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    check(i, n, "--shard").map_err(|_| bad())
}

fn check(index: u32, count: u32, what: &str) -> Result<(u32, u32), String> {
    if count == 0 || count > 10_000 {
        return Err(format!(
            "the number of shards must be 1 to 10000, got {count}"
        ));
    }
    if index >= count {
        return Err(format!(
            "{what} is {index}, but shards are numbered 0 to {}",
            count - 1
        ));
    }
    Ok((index, count))
}

/// Sleeps until the wall clock reads `at`, and says how late this shard is past it (zero when on
/// time). A shard that comes up after the instant (a slow image pull, a node scaled up) is never
/// refused: it starts at once, its whole schedule shifted by its lateness, and says so (the
/// header's `shard.start_late_ms`, a `tracelab start` line); the merge places its attempts that
/// much later, so no request is sent early to catch up. More than a day ahead is refused (a typo).
pub fn wait_until(at: SystemTime) -> Result<Duration, String> {
    let now = SystemTime::now();
    if let Ok(late) = now.duration_since(at) {
        return Ok(late);
    }
    if at.duration_since(now).unwrap_or_default() > Duration::from_secs(86_400) {
        return Err("--start-at is more than a day ahead; is the date right?".into());
    }
    // In short steps, re-reading the wall clock: it may be slewed or stepped while we wait.
    loop {
        match at.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(Duration::from_millis(200))),
            _ => return Ok(SystemTime::now().duration_since(at).unwrap_or_default()),
        }
    }
}

/// The barrier: every shard reports ready to shard 0, which answers with one start instant once
/// all N are ready (`--start-at` if that is still ahead, else 1 s from then), or once the timeout
/// (from `--start-at`, or from now) has passed, with those that came. Shard 0 keeps answering
/// later shards with the same instant, already past: they start at once, late, shifted (see
/// [`wait_until`]). A shard that cannot reach shard 0 within the timeout starts at `--start-at`
/// (or now), late, and says why. One line each way: `ready INDEX RUN_ID`, then `go EPOCH_MS` or
/// `refused WHY`. Returns the instant to wait for.
pub fn barrier(
    shard: &ShardPlan,
    start_at: Option<SystemTime>,
    note: &dyn Fn(&str),
) -> Result<SystemTime, String> {
    let Some((addr, timeout)) = &shard.barrier else {
        return Ok(start_at.unwrap_or_else(SystemTime::now));
    };
    let from = start_at.map_or_else(SystemTime::now, |at| at.max(SystemTime::now()));
    let deadline =
        Instant::now() + from.duration_since(SystemTime::now()).unwrap_or_default() + *timeout;
    if shard.index == 0 {
        lead(shard, addr, start_at, deadline, note)
    } else {
        follow(shard, addr, start_at, deadline, note)
    }
}

fn lead(
    shard: &ShardPlan,
    addr: &str,
    start_at: Option<SystemTime>,
    deadline: Instant,
    note: &dyn Fn(&str),
) -> Result<SystemTime, String> {
    let port: u16 = addr
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .unwrap_or_default();
    let listener = TcpListener::bind(("0.0.0.0", port))
        .map_err(|e| format!("--barrier: shard 0 cannot listen on port {port}: {e}"))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("--barrier: {e}"))?;
    let mut ready: Vec<(u32, TcpStream)> = Vec::new();
    while ready.len() + 1 < shard.count as usize && Instant::now() < deadline {
        match listener.accept() {
            Ok((stream, _)) => {
                if let Some(index) = greet(shard, stream.try_clone().ok(), &ready) {
                    ready.push((index, stream));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => return Err(format!("--barrier: shard 0 stopped listening: {e}")),
        }
    }
    // A second for the answer to reach every shard.
    let soon = SystemTime::now() + Duration::from_secs(1);
    let go = match start_at {
        Some(at) if at >= soon => at,
        _ => soon,
    };
    let missing = shard.count as usize - 1 - ready.len();
    note(&if missing == 0 {
        format!("all {} shards ready", shard.count)
    } else {
        format!("{missing} of {} shards not ready after the barrier's timeout: starting without them (they start late, shifted)", shard.count)
    });
    let line = format!("go {}\n", round3(epoch_ms(go)));
    for (_, stream) in &mut ready {
        let _ = stream.write_all(line.as_bytes());
    }
    // Later shards get the same instant, already past, for as long as this shard runs.
    let me = shard.clone();
    std::thread::spawn(move || {
        let _ = listener.set_nonblocking(false);
        for stream in listener.incoming().flatten() {
            if let (Some(_), Ok(mut out)) =
                (greet(&me, stream.try_clone().ok(), &[]), stream.try_clone())
            {
                let _ = out.write_all(line.as_bytes());
            }
        }
    });
    Ok(go)
}

/// Reads a shard's `ready` line; refuses another run's shard, shard 0, or an index already here.
fn greet(shard: &ShardPlan, stream: Option<TcpStream>, ready: &[(u32, TcpStream)]) -> Option<u32> {
    let mut stream = stream?;
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut line = String::new();
    BufReader::new(stream.try_clone().ok()?)
        .read_line(&mut line)
        .ok()?;
    let mut words = line.split_whitespace();
    let (Some("ready"), Some(index), Some(run)) = (
        words.next(),
        words.next().and_then(|i| i.parse::<u32>().ok()),
        words.next(),
    ) else {
        let _ = stream.write_all(b"refused not a tracelab shard's ready line\n");
        return None;
    };
    let why = if run != shard.run_id {
        Some(format!(
            "this barrier is run {}'s, not run {run}'s",
            shard.run_id
        ))
    } else if index == 0 || index >= shard.count || ready.iter().any(|(i, _)| *i == index) {
        Some(format!(
            "shard {index} is not one of shards 1 to {} still expected",
            shard.count - 1
        ))
    } else {
        None
    };
    match why {
        Some(why) => {
            let _ = stream.write_all(format!("refused {why}\n").as_bytes());
            None
        }
        None => Some(index),
    }
}

fn follow(
    shard: &ShardPlan,
    addr: &str,
    start_at: Option<SystemTime>,
    deadline: Instant,
    note: &dyn Fn(&str),
) -> Result<SystemTime, String> {
    let fallback = |why: String| {
        note(&format!(
            "{why}: starting at --start-at without the barrier"
        ));
        Ok(start_at.unwrap_or_else(SystemTime::now))
    };
    let mut stream = loop {
        match TcpStream::connect(addr) {
            Ok(stream) => break stream,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(250)),
            Err(e) => return fallback(format!("shard 0 at the barrier did not answer ({e})")),
        }
    };
    if let Err(e) = stream.write_all(format!("ready {} {}\n", shard.index, shard.run_id).as_bytes())
    {
        return fallback(format!("the barrier closed ({e})"));
    }
    // Shard 0 answers once all are ready: at most its timeout from now, and a margin.
    let left = deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(30);
    let _ = stream.set_read_timeout(Some(left));
    let mut line = String::new();
    if let Err(e) = BufReader::new(stream).read_line(&mut line) {
        return fallback(format!("the barrier did not answer ({e})"));
    }
    match line.trim().split_once(' ') {
        Some(("go", ms)) => match ms.parse::<f64>() {
            Ok(ms) if ms.is_finite() && ms > 0.0 => {
                Ok(UNIX_EPOCH + Duration::from_secs_f64(ms / 1000.0))
            }
            _ => Err(format!(
                "--barrier: shard 0 answered `{}`, not a start instant",
                line.trim()
            )),
        },
        Some(("refused", why)) => Err(format!("--barrier: shard 0 refused this shard: {why}")),
        _ => fallback(format!("the barrier answered `{}`", line.trim())),
    }
}

/// A shard's log lines, one format from start to end, so `kubectl logs -l job-name=… --prefix`
/// follows every shard at once: `tracelab <event> shard=I/N run=ID key=value …` (logfmt: one
/// event per line, a value with spaces in double quotes).
pub fn log_line(shard: &ShardPlan, event: &str, fields: &[(&str, String)]) -> String {
    let mut line = format!(
        "tracelab {event} shard={}/{} run={}",
        shard.index, shard.count, shard.run_id
    );
    for (key, value) in fields {
        if value.contains(char::is_whitespace) || value.contains('"') {
            line.push_str(&format!(" {key}=\"{}\"", value.replace('"', "'")));
        } else {
            line.push_str(&format!(" {key}={value}"));
        }
    }
    line
}

/// Milliseconds since the Unix epoch (negative before it).
pub fn epoch_ms(t: SystemTime) -> f64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64() * 1000.0,
        Err(e) => -e.duration().as_secs_f64() * 1000.0,
    }
}

/// RFC 3339 (`2026-12-01T05:00:00Z`, `…T05:00:00.125+08:00`) → the instant. Only the time
/// format is echoed in errors.
pub fn parse_rfc3339(text: &str) -> Result<SystemTime, String> {
    let ms = rfc3339_epoch_ms(text)
        .ok_or_else(|| format!("`{text}` is not an RFC 3339 date-time with a zone"))?;
    let d = Duration::from_secs_f64(ms.abs() / 1000.0);
    Ok(if ms >= 0.0 {
        UNIX_EPOCH + d
    } else {
        UNIX_EPOCH - d
    })
}

/// RFC 3339 → milliseconds since the Unix epoch (fractions kept to the microsecond).
pub fn rfc3339_epoch_ms(text: &str) -> Option<f64> {
    let t = text.trim();
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
    };
    if t.len() < 20
        || !matches!(&t[10..11], "T" | "t" | " ")
        || &t[4..5] != "-"
        || &t[7..8] != "-"
        || &t[13..14] != ":"
        || &t[16..17] != ":"
    {
        return None;
    }
    let (year, month, day) = (num(&t[0..4])?, num(&t[5..7])?, num(&t[8..10])?);
    let (hour, minute, second) = (num(&t[11..13])?, num(&t[14..16])?, num(&t[17..19])?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &t[19..];
    let mut frac = 0.0;
    if let Some(after) = rest.strip_prefix('.') {
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        frac = format!("0.{}", &after[..digits]).parse().ok()?;
        rest = &after[digits..];
    }
    let offset_min = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && &rest[3..4] == ":" => {
            let sign = match &rest[0..1] {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            sign * (num(&rest[1..3])? * 60 + num(&rest[4..6])?)
        }
        _ => return None,
    };
    // Days from civil (Howard Hinnant's algorithm), the inverse of clock.rs's.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_min * 60;
    Some(((secs as f64 + frac) * 1e6).round() / 1000.0)
}

/// How well this machine's clock agreed with true time when the run began.
#[derive(Debug, Clone, PartialEq)]
pub enum ClockSync {
    /// chrony's `tracking` report: the offset (ms, + = this clock fast) and its bound
    /// |offset| + root delay / 2 + root dispersion (chrony's documented maximum error).
    Chrony {
        offset_ms: f64,
        error_bound_ms: f64,
    },
    Unknown,
}

impl ClockSync {
    /// Asks chrony (`chronyc -n tracking`, 2 s at most); anything else is `Unknown`.
    pub fn query() -> ClockSync {
        let child = Command::new("chronyc")
            .args(["-n", "tracking"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = child else {
            return ClockSync::Unknown;
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        loop {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => break,
                Ok(None) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return ClockSync::Unknown;
                }
            }
        }
        let mut text = String::new();
        if let Some(mut out) = child.stdout.take() {
            let _ = std::io::Read::read_to_string(&mut out, &mut text);
        }
        parse_tracking(&text)
    }

    /// The bound on this clock's error, when known.
    pub fn bound_ms(&self) -> Option<f64> {
        match self {
            ClockSync::Chrony { error_bound_ms, .. } => Some(*error_bound_ms),
            ClockSync::Unknown => None,
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            ClockSync::Chrony {
                offset_ms,
                error_bound_ms,
            } => {
                json!({"source": "chrony", "offset_ms": round3(*offset_ms), "error_bound_ms": round3(*error_bound_ms)})
            }
            ClockSync::Unknown => json!({"source": "unknown"}),
        }
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Reads `chronyc tracking`: `System time : 0.000123 seconds fast of NTP time`, `Root delay`,
/// `Root dispersion`, `Leap status`. Its `Reference ID` (an address) is not read.
pub fn parse_tracking(text: &str) -> ClockSync {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key.trim() == name).then(|| value.trim().to_string())
        })
    };
    let seconds = |v: &str| {
        v.split_whitespace()
            .next()?
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
    };
    let (Some(system), Some(delay), Some(dispersion)) = (
        field("System time"),
        field("Root delay"),
        field("Root dispersion"),
    ) else {
        return ClockSync::Unknown;
    };
    if field("Leap status").is_some_and(|s| s.contains("Not synchronised")) {
        return ClockSync::Unknown;
    }
    let (Some(offset), Some(delay), Some(dispersion)) =
        (seconds(&system), seconds(&delay), seconds(&dispersion))
    else {
        return ClockSync::Unknown;
    };
    let offset = if system.contains("slow") {
        -offset
    } else {
        offset
    };
    ClockSync::Chrony {
        offset_ms: offset * 1000.0,
        error_bound_ms: (offset.abs() + delay / 2.0 + dispersion) * 1000.0,
    }
}

/// The header's `shard` object. `late`: how far past `start_at` the shard began (see
/// [`wait_until`]).
pub fn header_extra(
    shard: &ShardPlan,
    start_at: Option<SystemTime>,
    late: Option<Duration>,
    sync: &ClockSync,
) -> Map<String, Value> {
    let mut s = Map::new();
    s.insert("index".into(), json!(shard.index));
    s.insert("count".into(), json!(shard.count));
    s.insert("run_id".into(), json!(shard.run_id));
    if let Some(at) = start_at {
        s.insert("start_at_epoch_ms".into(), json!(round3(epoch_ms(at))));
        s.insert(
            "start_late_ms".into(),
            json!(round3(late.unwrap_or_default().as_secs_f64() * 1000.0)),
        );
    }
    s.insert("clock_sync".into(), sync.to_json());
    let mut extra = Map::new();
    extra.insert("shard".into(), Value::Object(s));
    extra
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_and_shares() {
        let args = |shard: &str| ShardArgs {
            shard: Some(shard.into()),
            run_id: Some("r1".into()),
            ..ShardArgs::default()
        };
        let (s, _) = plan(&args("1/3"), None, "c").unwrap();
        let s = s.unwrap();
        assert_eq!((s.index, s.count, s.run_id.as_str()), (1, 3, "r1"));
        assert_eq!(
            [0, 1, 2].map(|i| ShardPlan {
                index: i,
                ..s.clone()
            }
            .share(8)),
            [3, 3, 2]
        );
        assert_eq!((0..9).filter(|&k| s.owns(k)).collect::<Vec<_>>(), [1, 4, 7]);
        for total in [0, 1, 7, 8, 9] {
            let counted: Vec<u64> = (0..3)
                .map(|i| {
                    ShardPlan {
                        index: i,
                        ..s.clone()
                    }
                    .jobs_of(total)
                })
                .collect();
            let owned: Vec<u64> = (0..3)
                .map(|i| {
                    (0..total)
                        .filter(|&k| {
                            ShardPlan {
                                index: i,
                                ..s.clone()
                            }
                            .owns(k)
                        })
                        .count() as u64
                })
                .collect();
            assert_eq!(counted, owned, "{total} jobs");
        }
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2"] {
            assert!(
                plan(&args(bad), None, "c")
                    .unwrap_err()
                    .contains("--shard must be I/N"),
                "{bad}"
            );
        }
        let k8s = ShardArgs {
            shards: Some(4),
            start_at: Some("2026-12-01T05:00:00Z".into()),
            ..ShardArgs::default()
        };
        let (s, at) = plan(&k8s, Some("3"), "c").unwrap();
        let s = s.unwrap();
        assert_eq!((s.index, s.count), (3, 4));
        assert_eq!(
            s.run_id,
            plan(&k8s, Some("0"), "c").unwrap().0.unwrap().run_id,
            "shards derive the same id"
        );
        assert_ne!(
            s.run_id,
            plan(&k8s, Some("0"), "other contract")
                .unwrap()
                .0
                .unwrap()
                .run_id
        );
        assert!(at.is_some());
        assert!(plan(&k8s, None, "c")
            .unwrap_err()
            .contains("JOB_COMPLETION_INDEX"));
        assert!(plan(&k8s, Some("4"), "c").unwrap_err().contains("0 to 3"));
        let barrier = |addr: &str, timeout: f64| ShardArgs {
            barrier: Some(addr.into()),
            barrier_timeout: timeout,
            ..args("1/3")
        };
        let (s, _) = plan(
            &barrier("tracelab-shards-0.tracelab-shards:7077", 600.0),
            None,
            "c",
        )
        .unwrap();
        assert_eq!(
            s.unwrap().barrier,
            Some((
                "tracelab-shards-0.tracelab-shards:7077".to_string(),
                Duration::from_secs(600)
            ))
        );
        for (addr, timeout, why) in [
            ("host", 600.0, "HOST:PORT"),
            (":7077", 600.0, "HOST:PORT"),
            ("h:0", 600.0, "HOST:PORT"),
            ("h:1", 0.0, "above 0"),
        ] {
            assert!(
                plan(&barrier(addr, timeout), None, "c")
                    .unwrap_err()
                    .contains(why),
                "{addr} {timeout}"
            );
        }
        let alone = ShardArgs {
            barrier: Some("h:1".into()),
            ..ShardArgs::default()
        };
        assert!(plan(&alone, None, "c").unwrap_err().contains("--shard"));
        let no_id = ShardArgs {
            shard: Some("0/2".into()),
            ..ShardArgs::default()
        };
        assert!(plan(&no_id, None, "c").unwrap_err().contains("--start-at"));
    }

    #[test]
    fn rfc3339() {
        assert_eq!(rfc3339_epoch_ms("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(
            rfc3339_epoch_ms("2025-03-01T09:30:00.125Z"),
            Some(1_740_821_400_125.0)
        );
        assert_eq!(
            rfc3339_epoch_ms("2025-03-01T17:30:00.125+08:00"),
            Some(1_740_821_400_125.0)
        );
        assert_eq!(
            rfc3339_epoch_ms("2000-02-29T00:00:00.0051Z"),
            Some(951_782_400_005.1)
        );
        for bad in [
            "2025-03-01 09:30:00",
            "2025-13-01T00:00:00Z",
            "yesterday",
            "2025-03-01T09:30:00.Z",
        ] {
            assert_eq!(rfc3339_epoch_ms(bad), None, "{bad}");
        }
    }

    /// The layout of chrony's documented `chronyc tracking` example (numbers ours).
    #[test]
    fn chrony_tracking() {
        let text = "Reference ID    : CB00710F (203.0.113.15)\nStratum         : 3\n\
            Ref time (UTC)  : Fri Jan 27 09:49:17 2017\nSystem time     : 0.000006523 seconds slow of NTP time\n\
            Last offset     : -0.000006747 seconds\nRMS offset      : 0.000035822 seconds\n\
            Frequency       : 3.225 ppm slow\nResidual freq   : -0.000 ppm\nSkew            : 0.129 ppm\n\
            Root delay      : 0.013639022 seconds\nRoot dispersion : 0.001100737 seconds\n\
            Update interval : 64.2 seconds\nLeap status     : Normal\n";
        let ClockSync::Chrony {
            offset_ms,
            error_bound_ms,
        } = parse_tracking(text)
        else {
            panic!("not parsed")
        };
        assert!((offset_ms + 0.006523).abs() < 1e-9);
        assert!(
            (error_bound_ms - (0.006523 + 6.819511 + 1.100737)).abs() < 1e-6,
            "{error_bound_ms}"
        );
        assert_eq!(
            parse_tracking(&text.replace("Normal", "Not synchronised")),
            ClockSync::Unknown
        );
        assert_eq!(
            parse_tracking("506 Cannot talk to daemon"),
            ClockSync::Unknown
        );
    }
}
