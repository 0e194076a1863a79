#!/usr/bin/env python3
"""Peak memory and time of everything that handles a whole trace: `tracelab report`, `export`
in every format and `merge` of a run's shards, on a simulated trace of N attempts.

Usage: export.py OUT_DIR TRACELAB [--attempts N[,N…]] [--shards K] [--keep]

For each N: `tracelab simulate` writes an open-loop trace of N attempts (64 slots, exponential
service of 50 ms, Poisson arrivals at 1,000/s: some queueing, a few stream events each); the
same attempts are dealt round-robin into K shards, each with the header a `record --shard I/K`
run writes (`shard` object, its own wall-clock anchor), for `merge`. Each command runs once;
its peak resident memory is the kernel's for that process (`os.wait4`'s `ru_maxrss`), its time
the wall clock. Nothing here is asserted: the figures go to the closing notes (docs/benchmarks.md).
Constructed data only; every file stays in OUT_DIR (deleted after each N unless --keep).
"""

import json
import os
import shutil
import subprocess
import sys
import time


def run(argv, stdout=subprocess.DEVNULL):
    """Runs argv, returns (seconds, peak RSS in bytes); fails loudly on a non-zero exit."""
    started = time.monotonic()
    with subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE) as child:
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        err = child.stderr.read().decode(errors="replace")
    seconds = time.monotonic() - started
    if child.returncode != 0:
        sys.exit(f"bench-export: {' '.join(map(str, argv))} exited {child.returncode}:\n{err}")
    return seconds, usage.ru_maxrss * 1024  # Linux reports kilobytes


def split_into_shards(trace, k, out_dir):
    """Deals the trace's attempts round-robin into k shard files, streaming (a line at a time).
    Each shard's header is the trace's with the `shard` object `record --shard I/K` writes and
    a wall-clock anchor of its own (1 ms apart), so merge re-times every shard."""
    paths = [os.path.join(out_dir, f"shard-{i}.jsonl") for i in range(k)]
    outs = [open(p, "w", encoding="utf-8") for p in paths]
    try:
        with open(trace, encoding="utf-8") as f:
            header = json.loads(f.readline())
            for i, out in enumerate(outs):
                h = dict(header)
                h["shard"] = {
                    "index": i,
                    "count": k,
                    "run_id": "bench-export",
                    "clock_sync": {"source": "chrony", "offset_ms": 0.0, "error_bound_ms": 0.5},
                }
                h["wall_clock_anchor_utc"] = f"2026-12-01T05:00:00.{i:03d}Z"
                out.write(json.dumps(h, ensure_ascii=False) + "\n")
            n, attempts, footer = 0, [0] * k, None
            for line in f:
                kind = line[line.find('"kind"') :][:30]
                if '"attempt"' in kind:
                    outs[n % k].write(line)
                    attempts[n % k] += 1
                    n += 1
                elif '"footer"' in kind:
                    footer = json.loads(line)
                else:  # GPU and engine samples: the first shard's machine kept them
                    outs[0].write(line)
            if footer is not None:
                for i, out in enumerate(outs):
                    shard_footer = dict(footer, attempts=attempts[i])
                    if i > 0:
                        shard_footer["gpu_samples"] = 0
                    out.write(json.dumps(shard_footer) + "\n")
    finally:
        for out in outs:
            out.close()
    return paths


# `tracelab simulate` writes at most this many requests in one run.
SIMULATE_MAX = 1_000_000

# Attempt fields that are times on the run's clock (`events` holds `[time, tokens]` pairs).
TIMES = ["intended_start_ms", "start_ms", "first_byte_ms", "first_token_ms", "end_ms"]


def repeat(part, n, out_path):
    """A trace of n attempts from a simulated one of fewer: its attempts again and again, each
    copy after the one before on the clock (shifted by the part's span) with ids of its own; the
    footer counts them all. Streams a line at a time."""
    with open(part, encoding="utf-8") as f:
        header = f.readline()
        attempts_in_part, span, footer = 0, 0.0, None
        for line in f:
            record = json.loads(line)
            if record.get("kind") == "attempt":
                attempts_in_part += 1
                span = max(span, *(record.get(k) or 0.0 for k in TIMES))
            elif record.get("kind") == "footer":
                footer = record
    span = float(int(span) + 1)
    written = 0
    with open(out_path, "w", encoding="utf-8") as out:
        out.write(header)
        copy = 0
        while written < n:
            with open(part, encoding="utf-8") as f:
                f.readline()
                for line in f:
                    if written >= n:
                        break
                    record = json.loads(line)
                    if record.get("kind") != "attempt":
                        continue
                    if copy:
                        shift = copy * span
                        for key in TIMES:
                            if record.get(key) is not None:
                                record[key] = round(record[key] + shift, 3)
                        if "events" in record:
                            record["events"] = [[round(t + shift, 3), k] for t, k in record["events"]]
                        for key in ("id", "business_id"):
                            if key in record:
                                record[key] = f"{record[key]}-{copy}"
                    out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
                    written += 1
            copy += 1
        if footer is not None:
            out.write(json.dumps(dict(footer, attempts=written), separators=(",", ":")) + "\n")


def mb(b):
    return f"{b / 1e6:,.0f} MB"


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    out_root, tracelab = args[0], args[1]
    counts, shards, keep = [1_000_000], 4, False
    rest = args[2:]
    while rest:
        flag = rest.pop(0)
        if flag == "--attempts":
            counts = [int(x.replace("_", "")) for x in rest.pop(0).split(",")]
        elif flag == "--shards":
            shards = int(rest.pop(0))
        elif flag == "--keep":
            keep = True
        else:
            sys.exit(f"bench-export: unknown option {flag}\n{__doc__}")
    results = []
    for n in counts:
        out_dir = os.path.join(out_root, str(n))
        shutil.rmtree(out_dir, ignore_errors=True)
        os.makedirs(out_dir)
        trace = os.path.join(out_dir, "trace.jsonl")
        part = min(n, SIMULATE_MAX)
        simulated = trace if part == n else os.path.join(out_dir, "part.jsonl")
        seconds, peak = run([
            tracelab, "simulate", "--slots", "64", "--service", "exponential:0.05",
            "--rate", "1000", "--requests", str(part), "--seed", "1", "--output", simulated,
        ])
        if simulated != trace:
            repeat(simulated, n, trace)
            os.remove(simulated)
        size = os.path.getsize(trace)
        print(f"\n{n:,} attempts: trace {mb(size)} (simulate {seconds:.1f} s, {mb(peak)})", flush=True)
        rows = [("report", [tracelab, "report", trace])]
        for fmt, ext in [("csv", "csv"), ("parquet", "parquet"), ("perfetto", "json"),
                         ("card-md", "md"), ("card-json", "json")]:
            rows.append((f"export {fmt}", [tracelab, "export", trace, "--format", fmt,
                                           "--output", os.path.join(out_dir, f"out-{fmt}.{ext}"),
                                           "--force"]))
        print(f"{'command':<20} {'seconds':>8} {'peak RSS':>12} {'× file':>7} {'output':>12}")
        for name, argv in rows:
            seconds, peak = run(argv)
            out = argv[argv.index("--output") + 1] if "--output" in argv else None
            out_size = os.path.getsize(out) if out else None
            results.append({"attempts": n, "file_bytes": size, "command": name,
                            "seconds": round(seconds, 2), "peak_rss_bytes": peak,
                            "output_bytes": out_size})
            print(f"{name:<20} {seconds:>8.1f} {mb(peak):>12} {peak / size:>7.2f} "
                  f"{mb(out_size) if out_size else '':>12}", flush=True)
        paths = split_into_shards(trace, shards, out_dir)
        if not keep:
            os.remove(trace)
            for fmt in ["csv.csv", "parquet.parquet", "perfetto.json"]:
                os.remove(os.path.join(out_dir, f"out-{fmt}"))
        merged = os.path.join(out_dir, "merged.jsonl")
        seconds, peak = run([tracelab, "merge", *paths, "--output", merged, "--force", "--quiet"])
        results.append({"attempts": n, "file_bytes": size, "command": f"merge {shards} shards",
                        "seconds": round(seconds, 2), "peak_rss_bytes": peak,
                        "output_bytes": os.path.getsize(merged)})
        print(f"{'merge ' + str(shards) + ' shards':<20} {seconds:>8.1f} {mb(peak):>12} "
              f"{peak / size:>7.2f} {mb(os.path.getsize(merged)):>12}", flush=True)
        if not keep:
            shutil.rmtree(out_dir)
    with open(os.path.join(out_root, "results.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    print(f"\nresults: {os.path.join(out_root, 'results.json')}")


if __name__ == "__main__":
    main()
