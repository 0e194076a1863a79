"""Writes the constructed peer files with failures and their tools' printed aggregates.

Known-answer source for `tests/peer_layouts.rs` (`*_with_failures` tests). Every number here is
made up; the per-request records are written first and each tool's aggregates are then computed
from them with that tool's own rules, independently of Trace Lab's Rust code:

* vLLM `vllm bench serve --save-result --save-detailed` (vllm/benchmarks/serve.py,
  `calculate_metrics` and `benchmark`): samples over the successful requests only; mean `np.mean`,
  median `np.median`, std `np.std` (ddof 0), percentiles `np.percentile` (linear); TPOT per
  success with more than one output token = (latency − TTFT) / (output tokens − 1); ITL = every
  gap in `itls`, pooled; a failed request counts 0 output tokens; rates divide by `duration`
  (the benchmark's own clock around the whole run; here: the last end + 3 ms).
* Ray LLMPerf (token_benchmark_ray.py, `metrics_summary`): pandas over the records without an
  error; `Series.quantile` (linear, the same as `np.percentile`), `Series.std` (ddof 1); error
  rate = errors / every request started; the error-code histogram is `str(dict(value_counts()))`;
  the two run rates divide by the run's wall time (end_time − start_time), which the file does not
  save (here: 20.0 s). The leaderboard's summaries write some minima and maxima as strings
  ("550"), so these do too.
* NVIDIA GenAI-Perf (genai-perf/genai_perf/profile_data_parser/llm_profile_data_parser.py,
  `_parse_requests` and `_preprocess_response`; metrics/statistics.py): responses without answer
  content (`delta.content` of a chat chunk; role-only, reasoning-only, `[DONE]`) are removed first,
  and a request left with none is skipped; over the kept requests: TTFT = first response −
  timestamp, TTST = second − first (when there is one), request_latency = last response −
  timestamp, ITL = round((latency − TTFT) / (output tokens − 1)) and per-user rate = 1 / ITL (when
  more than one response and token), request_count = the kept requests; benchmark duration = last
  response − first timestamp over the kept requests; request_throughput = len(requests) — all of
  them, the skipped ones included — / duration; output_token_throughput = Σ output tokens /
  duration. Statistics in ns, then scaled to ms: `np.mean`, `np.percentile` (linear) at 1, 5, 10,
  25, 50, 75, 90, 95, 99, `np.min`, `np.max`, `np.std` (ddof 0). GenAI-Perf counts tokens with the
  model's tokenizer; this script's stand-in tokenizer counts whitespace-separated words.
* guidellm 0.5 (`benchmarks.json`; src/guidellm/benchmark/schemas/generative/metrics.py,
  `GenerativeMetrics.compile`, and the per-request properties of `GenerativeRequestStats`):
  TTFT = first token − request start, ITL = (last token − first token) / (output tokens − 1),
  TPOT = (last token − request start) / output tokens, latency = request end − request start; every
  metric is compiled per status (successful, errored, incomplete) and over all three (total), each
  request's value `or 0.0`; ITL is weighted by output tokens − 1 and TPOT by output tokens; a
  distribution merges equal values (weights summed), drops zero weights, and takes mean and std
  (ddof 0) with the weights as probabilities and each percentile as the first value whose
  cumulative probability reaches p (`np.searchsorted(cdf, p, side="left")`); an empty one is
  written as zeros. request_totals counts the requests that overlap the measured window;
  requests_per_second's mean = the requests ending inside the window / its length;
  request_concurrency's mean = each request's time inside the window, summed, / its length.
* SGLang (`python -m sglang.bench_serving --output-details`): the existing
  `sglang_bench_serving_output_details.jsonl` is checked, not rewritten: its printed figures are
  recomputed here from its own per-request arrays (successes only; `concurrency` = Σ E2E / duration).

Run: `python3 make_failing_runs.py` (any Python 3 with numpy) rewrites the JSON files and
checks the SGLang one; it prints what it wrote. Output is deterministic.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def stats_vllm(prefix, values, out, percentiles=(99,)):
    a = np.array(values, dtype=float)
    out[f"mean_{prefix}_ms"] = float(np.mean(a)) * 1000
    out[f"median_{prefix}_ms"] = float(np.median(a)) * 1000
    out[f"std_{prefix}_ms"] = float(np.std(a)) * 1000
    for p in percentiles:
        out[f"p{p}_{prefix}_ms"] = float(np.percentile(a, p)) * 1000


def vllm():
    # (start s, input tokens, output tokens, ttft s, itls s, error)
    ok = ""
    requests = [
        (0.000, 120, 4, 0.110, [0.021, 0.019, 0.025], ok),
        (0.050, 130, 5, 0.125, [0.020, 0.022, 0.018, 0.024], ok),
        (0.100, 110, 0, 0.0, [], "Traceback (most recent call last):\naiohttp.client_exceptions.ClientResponseError: 429, message='Too Many Requests'"),
        (0.150, 140, 3, 0.140, [0.030, 0.028], ok),
        (0.200, 125, 6, 0.118, [0.019, 0.021, 0.020, 0.023, 0.022], ok),
        (0.250, 100, 0, 0.210, [0.031, 0.029], "Traceback (most recent call last):\naiohttp.client_exceptions.ServerDisconnectedError: Server disconnected"),
        (0.300, 135, 1, 0.131, [], ok),
        (0.350, 128, 4, 0.122, [0.026, 0.024, 0.027], ok),
        (0.400, 115, 0, 0.0, [], "Traceback (most recent call last):\nasyncio.exceptions.TimeoutError"),
        (0.450, 150, 5, 0.150, [0.023, 0.025, 0.021, 0.022], ok),
        (0.500, 118, 2, 0.109, [0.033], ok),
        (0.550, 122, 4, 0.117, [0.020, 0.019, 0.024], ok),
    ]
    # A success's latency: TTFT + its gaps + the stream's end 2 ms after the last token.
    latencies = [t + sum(g) + 0.002 if not e else 0.0 for (_, _, _, t, g, e) in requests]
    starts = [r[0] for r in requests]
    ends = [s + (l if l else r[3] + sum(r[4]) + 0.001) for s, l, r in zip(starts, latencies, requests)]
    duration = max(ends) + 0.003
    succ = [i for i, r in enumerate(requests) if not r[5]]
    out_lens = [r[2] if not r[5] else 0 for r in requests]
    total_in = sum(requests[i][1] for i in succ)
    total_out = sum(out_lens)
    d = {
        "date": "20251201-120000",
        "endpoint_type": "openai-chat",
        "backend": "openai-chat",
        "label": None,
        "model_id": "constructed/model",
        "tokenizer_id": "constructed/model",
        "num_prompts": len(requests),
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": 4,
        "duration": duration,
        "completed": len(succ),
        "failed": len(requests) - len(succ),
        "total_input_tokens": total_in,
        "total_output_tokens": total_out,
        "request_throughput": len(succ) / duration,
        "request_goodput": None,
        "output_throughput": total_out / duration,
        "total_token_throughput": (total_in + total_out) / duration,
    }
    ttfts = [requests[i][3] for i in succ]
    tpots = [(latencies[i] - requests[i][3]) / (requests[i][2] - 1) for i in succ if requests[i][2] > 1]
    itls = [g for i in succ for g in requests[i][4]]
    e2els = [latencies[i] for i in succ]
    pct = (50, 90, 99)
    stats_vllm("ttft", ttfts, d, pct)
    stats_vllm("tpot", tpots, d, pct)
    stats_vllm("itl", itls, d, pct)
    stats_vllm("e2el", e2els, d, pct)
    d.update({
        "input_lens": [r[1] for r in requests],
        "output_lens": out_lens,
        "ttfts": [r[3] for r in requests],
        "itls": [r[4] for r in requests],
        "start_times": [1764590400.0 + s for s in starts],
        "generated_texts": ["constructed answer" if not r[5] else "" for r in requests],
        "errors": [r[5] for r in requests],
    })
    path = os.path.join(HERE, "vllm_bench_serve_with_failures.json")
    with open(path, "w") as f:
        json.dump(d, f, indent=1)
        f.write("\n")
    print(f"{path}: {len(succ)} ok, {len(requests) - len(succ)} failed, duration {duration}")


def pandas_stats(name, values, out):
    a = np.array(values, dtype=float)
    for q in (25, 50, 75, 90, 95, 99):
        out[f"results_{name}_quantiles_p{q}"] = float(np.percentile(a, q))
    out[f"results_{name}_mean"] = float(np.mean(a))
    out[f"results_{name}_min"] = float(np.min(a))
    out[f"results_{name}_max"] = float(np.max(a))
    out[f"results_{name}_stddev"] = float(np.std(a, ddof=1))


def llmperf():
    ok = (None, "")
    # (error, ttft, e2e, itl per token, chunk rate, input, output)
    rows = [
        (ok, 0.41, 4.52, 0.0297, 11.1, 550, 151),
        (ok, 0.39, 4.61, 0.0302, 10.9, 550, 150),
        ((429, ""), 0, 0, 0.0, 0, 550, 1),
        (ok, 0.44, 4.48, 0.0295, 11.2, 551, 151),
        ((-100, "Output too few tokens 62"), 0.38, 2.01, 0.0301, 30.8, 550, 62),
        (ok, 0.52, 4.93, 0.0317, 10.1, 550, 149),
        ((429, ""), 0, 0, 0.0, 0, 550, 1),
        (ok, 0.36, 4.40, 0.0290, 11.4, 549, 152),
        (ok, 0.47, 4.71, 0.0309, 10.7, 550, 151),
        ((429, ""), 0, 0, 0.0, 0, 550, 1),
        (ok, 0.40, 3.05, 0.0301, 10.8, 550, 100),
        ((-100, "Output too few tokens 88"), 0.43, 2.83, 0.0305, 30.1, 550, 88),
        (ok, 0.61, 4.99, 0.0321, 9.9, 552, 150),
        (ok, 0.42, 4.55, 0.0300, 11.0, 550, 151),
    ]
    records = []
    for (code, msg), ttft, e2e, itl, rate, n_in, n_out in rows:
        records.append({
            "error_code": code,
            "error_msg": msg,
            "inter_token_latency_s": itl,
            "ttft_s": ttft,
            "end_to_end_latency_s": e2e,
            "request_output_throughput_token_per_s": rate,
            "number_total_tokens": n_in + n_out,
            "number_output_tokens": n_out,
            "number_input_tokens": n_in,
        })
    good = [r for r in records if r["error_code"] is None]
    s = {
        "version": "2023-08-31",
        "name": "constructed_550_150_summary",
        "model": "constructed/model",
        "mean_input_tokens": 550,
        "stddev_input_tokens": 0,
        "mean_output_tokens": 150,
        "stddev_output_tokens": 0,
        "num_concurrent_requests": 3,
    }
    for name in ("inter_token_latency_s", "ttft_s", "end_to_end_latency_s", "request_output_throughput_token_per_s",
                 "number_input_tokens", "number_output_tokens"):
        pandas_stats(name, [r[name] for r in good], s)
    for name in ("number_input_tokens", "number_output_tokens"):
        for stat in ("min", "max"):
            s[f"results_{name}_{stat}"] = str(int(s[f"results_{name}_{stat}"]))
    codes = [float(r["error_code"]) for r in records if r["error_code"] is not None]
    counts = {}
    for c in codes:
        counts[c] = counts.get(c, 0) + 1
    ordered = sorted(counts.items(), key=lambda kv: -kv[1])  # pandas value_counts: most frequent first
    run_s = 20.0
    s.update({
        "results_num_requests_started": len(records),
        "results_error_rate": len(codes) / len(records),
        "results_number_errors": len(codes),
        "results_error_code_frequency": "{" + ", ".join(f"{c}: {n}" for c, n in ordered) + "}",
        "results_mean_output_throughput_token_per_s": sum(r["number_output_tokens"] for r in good) / run_s,
        "results_num_completed_requests": len(good),
        "results_num_completed_requests_per_min": len(good) / run_s * 60,
        "timestamp": 1764590400,
    })
    for name, data in (("llmperf_with_failures_individual_responses.json", records), ("llmperf_with_failures_summary.json", s)):
        with open(os.path.join(HERE, name), "w") as f:
            json.dump(data, f, indent=4)
            f.write("\n")
    print(f"LLMPerf: {len(good)} ok, {len(codes)} errors {s['results_error_code_frequency']}")


def chunk(delta, finish=None):
    body = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "constructed/model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return {"response": "data: " + json.dumps(body, separators=(",", ":")) + "\n\n"}


def genai_perf_stats(values_ns, out, name, scale=1e-6, unit="ms"):
    a = np.array(values_ns, dtype=float)
    d = {"unit": unit, "avg": float(np.mean(a)) * scale}
    for p in (1, 5, 10, 25, 50, 75, 90, 95, 99):
        d[f"p{p}"] = float(np.percentile(a, p)) * scale
    d["min"] = float(np.min(a)) * scale
    d["max"] = float(np.max(a)) * scale
    d["std"] = float(np.std(a)) * scale
    out[name] = d


def genai_perf():
    t0 = 1764590400_000_000_000
    ms = 1_000_000
    # (start ms, prompt, [(at ms, kind, text)]) — kind: role, reasoning, content, finish, done
    R, T, C, F, D = "role", "reasoning", "content", "finish", "done"
    requests = [
        (0, "explain the cache", [(20, R, ""), (95, C, "The cache"), (121, C, " keeps recent"), (150, C, " blocks warm."), (152, F, ""), (153, D, "")]),
        (2, "name a colour", [(15, R, ""), (64, C, "Teal."), (66, F, ""), (67, D, "")]),
        (160, "think first", [(170, R, ""), (240, T, "Let me"), (270, T, " think."), (330, C, "Forty"), (362, C, " two"), (391, C, " it is."), (393, F, ""), (394, D, "")]),
        (70, "reason until the budget runs out", [(80, R, ""), (140, T, "Consider"), (170, T, " every"), (201, T, " case"), (203, F, ""), (204, D, "")]),
        (210, "say nothing", [(230, R, ""), (290, F, ""), (291, D, "")]),
        (300, "count to three", [(318, R, ""), (402, C, "One,"), (425, C, " two,"), (451, C, " three"), (480, C, " done."), (481, F, ""), (482, D, "")]),
        (397, "a request the server never answered", []),
        (400, "summarise the log", [(410, R, ""), (505, C, "Three"), (540, C, " errors,"), (566, C, " one"), (599, C, " warning"), (633, C, " today."), (635, F, ""), (636, D, "")]),
        (485, "greet", [(500, R, ""), (571, C, "Hello"), (600, C, " there."), (602, F, ""), (603, D, "")]),
        (640, "list two primes", [(651, R, ""), (742, C, "Two and"), (770, C, " three."), (772, F, ""), (773, D, "")]),
    ]
    out_requests = []
    kept = []
    for start, prompt, responses in requests:
        stamps, outputs = [], []
        for at, kind, text in responses:
            stamps.append(t0 + at * ms)
            if kind == R:
                outputs.append(chunk({"role": "assistant"}))
            elif kind == T:
                outputs.append(chunk({"reasoning_content": text}))
            elif kind == C:
                outputs.append(chunk({"content": text}))
            elif kind == F:
                outputs.append(chunk({}, "stop" if any(k == C for _, k, _ in responses) else "length"))
            else:
                outputs.append({"response": "data: [DONE]\n\n"})
        payload = {"messages": [{"role": "user", "content": prompt}], "model": "constructed/model", "stream": True}
        out_requests.append({
            "timestamp": t0 + start * ms,
            "request_inputs": {"payload": json.dumps(payload, separators=(",", ":"))},
            "response_timestamps": stamps,
            "response_outputs": outputs,
        })
        content = [(t0 + at * ms, text) for at, kind, text in responses if kind == C]
        if content:
            kept.append((t0 + start * ms, prompt, content))
    # GenAI-Perf over the kept requests.
    latency, ttft, ttst, itl, per_user, isl, osl = [], [], [], [], [], [], []
    for ts, prompt, content in kept:
        stamps = [c[0] for c in content]
        lat = stamps[-1] - ts
        first = stamps[0] - ts
        latency.append(lat)
        ttft.append(first)
        if len(stamps) > 1:
            ttst.append(stamps[1] - stamps[0])
        n_out = len("".join(c[1] for c in content).split())
        osl.append(n_out)
        isl.append(len(prompt.split()))
        if len(stamps) > 1 and n_out > 1:
            i = round((lat - first) / (n_out - 1))
            itl.append(i)
            per_user.append(1 / (i / 1e9))
    duration_s = (max(ts + (c[-1][0] - ts) for ts, _, c in kept) - min(ts for ts, _, _ in kept)) / 1e9
    agg = {
        "request_throughput": {"unit": "requests/sec", "avg": len(requests) / duration_s},
    }
    genai_perf_stats(latency, agg, "request_latency")
    agg["request_count"] = {"unit": "count", "avg": float(len(kept))}
    genai_perf_stats(ttft, agg, "time_to_first_token")
    genai_perf_stats(ttst, agg, "time_to_second_token")
    genai_perf_stats(itl, agg, "inter_token_latency")
    agg["output_token_throughput"] = {"unit": "tokens/sec", "avg": sum(osl) / duration_s}
    genai_perf_stats(per_user, agg, "output_token_throughput_per_user", scale=1.0, unit="tokens/sec/user")
    genai_perf_stats(osl, agg, "output_sequence_length", scale=1.0, unit="tokens")
    genai_perf_stats(isl, agg, "input_sequence_length", scale=1.0, unit="tokens")
    agg["input_config"] = {
        "model_names": ["constructed/model"],
        "subcommand": "profile",
        "endpoint": {"type": "chat", "streaming": True, "service_kind": "openai", "output_format": "openai_chat_completions"},
        "perf_analyzer": {"stimulus": {"concurrency": 2}, "measurement": {"mode": "request_count", "num": len(requests)}},
        "output": {"profile_export_file": "profile_export.json"},
    }
    export = {
        "service_kind": "openai",
        "endpoint": "v1/chat/completions",
        "experiments": [{"experiment": {"mode": "concurrency", "value": 2}, "requests": out_requests}],
        "version": "constructed",
    }
    for name, data in (("genai_perf_with_failures_profile_export.json", export),
                       ("genai_perf_with_failures_profile_export_genai_perf.json", agg)):
        with open(os.path.join(HERE, name), "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
    print(f"GenAI-Perf: {len(kept)} kept of {len(requests)}, duration {duration_s} s")


def guidellm_summary(pairs):
    """guidellm's distribution of (value, weight) pairs: the statistics this fixture writes."""
    merged = {}
    for v, w in pairs:
        merged[v] = merged.get(v, 0.0) + w
    items = sorted((v, w) for v, w in merged.items() if w > 0)
    zero = {"mean": 0.0, "median": 0.0, "std_dev": 0.0, "min": 0.0, "max": 0.0,
            "percentiles": {"p90": 0.0, "p95": 0.0, "p99": 0.0, "p999": 0.0}}
    if not items:
        return zero
    values = np.array([v for v, _ in items])
    weights = np.array([w for _, w in items])
    total = weights.sum()
    probs = weights / total if total > 1e-6 else np.full(len(items), 1.0 / len(items))
    mean = float(np.sum(values * probs))
    cdf = np.cumsum(probs)

    def pct(q):
        return float(values[min(int(np.searchsorted(cdf, q, side="left")), len(values) - 1)])

    return {
        "mean": mean,
        "median": pct(0.5),
        "std_dev": float(np.sqrt(np.sum((values - mean) ** 2 * probs))),
        "min": float(values[0]),
        "max": float(values[-1]),
        "percentiles": {"p90": pct(0.9), "p95": pct(0.95), "p99": pct(0.99), "p999": pct(0.999)},
    }


def guidellm():
    t0 = 1764590400.0
    measure_start, measure_end = t0 + 0.5, t0 + 6.5
    # (status, id, start, first token, last token, end, prompt, output, error)
    rows = [
        ("successful", "ok-1", 0.52, 0.70, 2.10, 2.12, 80, 50, None),
        ("successful", "ok-2", 0.55, 0.74, 1.95, 1.97, 95, 41, None),
        ("successful", "ok-3", 0.60, 0.81, 2.60, 2.61, 72, 61, None),
        ("successful", "ok-4", 2.13, 2.30, 3.90, 3.92, 88, 55, None),
        ("successful", "ok-5", 1.98, 2.19, 3.20, 3.21, 80, 35, None),
        ("successful", "ok-6", 2.62, 2.79, 4.79, 4.80, 101, 67, None),
        ("successful", "ok-7", 3.93, 4.11, 5.41, 5.43, 80, 44, None),
        ("successful", "ok-8", 4.81, 4.98, 6.40, 6.55, 77, 48, None),  # ends after the window
        ("errored", "err-500", 3.22, None, None, 3.26, 90, None,
         "Server error '500 Internal Server Error' for url 'http://localhost:8000/v1/chat/completions'"),
        ("errored", "err-disconnect", 5.44, 5.60, 5.80, 5.81, 83, 6,
         "RemoteProtocolError: peer closed connection without sending complete message body (incomplete chunked read)"),
        ("errored", "err-timeout", 3.27, None, None, 6.27, 79, None, "ReadTimeout"),
        ("incomplete", "cut-tokens", 5.82, 5.99, 6.30, 6.45, 92, 4, None),
        ("incomplete", "cut-early", 6.28, None, None, 6.45, 85, None, None),
    ]
    per_status = {"successful": [], "errored": [], "incomplete": []}
    for status, rid, start, first, last, end, prompt, output, error in rows:
        s, e = t0 + start, t0 + end
        f = None if first is None else t0 + first
        l = None if last is None else t0 + last
        ttft = None if f is None else (f - s) * 1000.0
        itl = (l - f) * 1000.0 / (output - 1) if (f is not None and l is not None and output and output > 1) else None
        tpot = (l - s) * 1000.0 / output if (l is not None and output) else None
        total = (prompt or 0) + (output or 0) if (prompt is not None or output is not None) else None
        per_status[status].append({
            "type_": "generative_request_stats",
            "request_id": rid,
            "info": {
                "request_id": rid,
                "status": {"successful": "completed", "errored": "errored", "incomplete": "cancelled"}[status],
                "timings": {
                    "targeted_start": s,
                    "request_start": s,
                    "first_request_iteration": f,
                    "first_token_iteration": f,
                    "last_token_iteration": l,
                    "request_end": e,
                },
                "error": error,
            },
            "request_start_time": s,
            "request_end_time": e,
            "request_latency": e - s,
            "prompt_tokens": prompt,
            "output_tokens": output,
            "total_tokens": total,
            "time_to_first_token_ms": ttft,
            "time_per_output_token_ms": tpot,
            "inter_token_latency_ms": itl,
        })
    window = measure_end - measure_start
    every = per_status["successful"] + per_status["errored"] + per_status["incomplete"]
    groups = {"successful": per_status["successful"], "errored": per_status["errored"],
              "incomplete": per_status["incomplete"], "total": every}
    z = lambda v: v or 0.0  # guidellm's `or 0.0`
    metrics = {"request_totals": {"successful": len(per_status["successful"]), "errored": len(per_status["errored"]),
                                  "incomplete": len(per_status["incomplete"]), "total": len(every)}}
    values = {
        "time_to_first_token_ms": lambda r: (z(r["time_to_first_token_ms"]), 1.0),
        "request_latency": lambda r: (z(r["request_latency"]), 1.0),
        "inter_token_latency_ms": lambda r: (z(r["inter_token_latency_ms"]), (r["output_tokens"] or 1.0) - 1.0),
        "time_per_output_token_ms": lambda r: (z(r["time_per_output_token_ms"]), z(r["output_tokens"])),
        "prompt_token_count": lambda r: (z(r["prompt_tokens"]), 1.0),
        "output_token_count": lambda r: (z(r["output_tokens"]), 1.0),
        "total_token_count": lambda r: (z(r["total_tokens"]), 1.0),
    }
    for name, fn in values.items():
        metrics[name] = {status: guidellm_summary([fn(r) for r in reqs]) for status, reqs in groups.items()}
    metrics["requests_per_second"] = {
        status: {"mean": sum(1 for r in reqs if measure_start <= r["request_end_time"] <= measure_end) / window}
        for status, reqs in groups.items()
    }
    metrics["request_concurrency"] = {
        status: {"mean": sum(max(0.0, min(r["request_end_time"], measure_end) - max(r["request_start_time"], measure_start))
                             for r in reqs) / window}
        for status, reqs in groups.items()
    }
    strategy = {"type_": "concurrent", "worker_count": 3, "max_concurrency": 3, "streams": 3, "rampup_duration": 0.0}
    benchmark = {
        "type_": "generative_benchmark",
        "config": {"strategy": strategy},
        "scheduler_metrics": {
            "start_time": t0,
            "request_start_time": t0 + rows[0][2],
            "measure_start_time": measure_start,
            "measure_end_time": measure_end,
            "request_end_time": max(r["request_end_time"] for r in every),
            "end_time": t0 + 6.6,
            "requests_made": dict(metrics["request_totals"]),
        },
        "metrics": metrics,
        "requests": per_status,
        "start_time": measure_start,
        "end_time": measure_end,
        "duration": window,
        "warmup_duration": 0.0,
        "cooldown_duration": 0.0,
    }
    out = {
        "metadata": {"version": 1, "guidellm_version": "0.5.0"},
        "args": {"target": "http://localhost:8000", "profile": "concurrent", "rate": [3.0], "model": "constructed/model"},
        "benchmarks": [benchmark],
    }
    path = os.path.join(HERE, "guidellm050_with_failures_benchmarks.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"guidellm: {metrics['request_totals']}")


def sglang_check():
    path = os.path.join(HERE, "sglang_bench_serving_output_details.jsonl")
    for n, line in enumerate(open(path), 1):
        d = json.loads(line)
        succ = [i for i, e in enumerate(d["errors"]) if not e]
        dur = d["duration"]
        ttfts = np.array([d["ttfts"][i] for i in succ])
        itls = np.array([g for i in succ for g in d["itls"][i]])
        # SGLang's latency of a success here: TTFT + its gaps (the file keeps no end time).
        e2e = np.array([d["ttfts"][i] + sum(d["itls"][i]) for i in succ])
        outs = [d["output_lens"][i] for i in succ]
        ins = [d["input_lens"][i] for i in succ]
        want = {
            "completed": len(succ),
            "total_input_tokens": sum(ins),
            "total_output_tokens": sum(outs),
            "request_throughput": len(succ) / dur,
            "input_throughput": sum(ins) / dur,
            "output_throughput": sum(outs) / dur,
            "concurrency": float(np.sum(e2e)) / dur,
            "mean_ttft_ms": float(np.mean(ttfts)) * 1000,
            "median_ttft_ms": float(np.median(ttfts)) * 1000,
            "p99_ttft_ms": float(np.percentile(ttfts, 99)) * 1000,
            "mean_itl_ms": float(np.mean(itls)) * 1000,
            "p99_itl_ms": float(np.percentile(itls, 99)) * 1000,
        }
        for k, v in want.items():
            assert abs(d[k] - v) <= 1e-9 * max(1.0, abs(v)), (path, n, k, d[k], v)
        print(f"{path} line {n}: {len(want)} printed figures check out")


if __name__ == "__main__":
    vllm()
    llmperf()
    genai_perf()
    guidellm()
    sglang_check()
