"""`cargo xtask bench-wire`: the recorder and guidellm side by side, judged by a packet capture.

For each framing (how the scripted server cuts its stream) and each concurrency, one scripted
server process serves both clients in turn while tcpdump captures the loopback port; judge.py
then pairs each client's records with the wire's. Prints one table and writes every capture,
trace, report and the results (results.json) under the output folder.

usage: bench.py --rejudge OUT_DIR   (judge the kept files again)
       bench.py OUT_DIR TRACELAB SCRIPTED_SERVE [GUIDELLM] [--concurrency 1,64,512]
                [--framing coalesced,split:2] [--rounds N]
                [--llama LLAMA_SERVER:MODEL.gguf [--llama-concurrency 1]]

With --llama, llama.cpp's C++ `llama-server` (--metrics --parallel 4) is judged too, recorder
only: its usage carries no serial, so requests pair in the order they went out (it closes each
connection after its reply, so each request has a connection of its own). That pairing is exact
in a closed loop of one; above one, two requests that start within microseconds of each other
can leave the wire in the other order, so judge llama-server at higher concurrency with care.
"""

import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import judge  # noqa: E402

TTFT_MS, ITL_MS, TOKENS = 20, 5, 16


def start_server(serve, framing):
    proc = subprocess.Popen(
        [serve, "--ttft-ms", str(TTFT_MS), "--itl-ms", str(ITL_MS), "--tokens", str(TOKENS),
         "--framing", framing, "--threads", "1"],
        stdout=subprocess.PIPE, text=True,
    )
    line = proc.stdout.readline()
    if "listening on" not in line:
        raise SystemExit(f"scripted-serve did not start: {line!r}")
    return proc, int(line.rsplit(":", 1)[1])


def start_capture(path, port):
    proc = subprocess.Popen(
        ["tcpdump", "-i", "lo", "-s", "0", "-B", "262144", "--time-stamp-precision", "nano",
         "-U", "-w", path, f"tcp port {port}"],
        stderr=subprocess.PIPE, text=True,
    )
    line = proc.stderr.readline()  # "listening on lo …" once the capture runs
    if "listening" not in line:
        raise SystemExit(f"tcpdump did not start (it needs CAP_NET_RAW): {line!r}")
    # "listening" comes as the capture is set up, not once it sees packets: a moment for it,
    # or a client's first SYN can be missed.
    time.sleep(1)
    return proc


def stop(proc):
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_recorder(tracelab, port, c, rounds, out):
    prompts = out + ".prompts.jsonl"
    with open(prompts, "w") as f:
        for i in range(c):
            f.write(json.dumps({"id": f"p{i}", "prompt": f"say something, request {i}"}) + "\n")
    subprocess.run(
        [tracelab, "record", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m",
         "--prompts", prompts, "--repetitions", str(rounds), "--warmup-rounds", "1",
         "--concurrency", str(c), "--max-tokens", str(TOKENS), "--gpu", "off",
         "--no-runtime-probe", "-q", "--force", "-o", out],
        check=True,
    )


def run_guidellm(guidellm, port, c, rounds, out):
    data = out + ".prompts.jsonl"
    with open(data, "w") as f:
        for i in range(c * (rounds + 1)):
            f.write(json.dumps({"prompt": f"say something, request {i}"}) + "\n")
    subprocess.run(
        [guidellm, "run",
         "--backend", f"kind=openai_http,target=http://127.0.0.1:{port},model=m,validate_backend=false",
         "--profile", f"kind=concurrent,streams={c}",
         "--data", f"kind=json_file,path={data}",
         "--constraint", f"kind=max_requests,count={c * (rounds + 1)}",
         "--output", f"kind=json,path={out}",
         "--disable-console"],
        check=True, stdout=subprocess.DEVNULL,
    )


def judge_llama(tracelab, llama, out_dir, concurrencies, rounds):
    binary, model = llama.rsplit(":", 1)
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(os.path.join(out_dir, "llama-server.log"), "w")
    server = subprocess.Popen(
        [binary, "--model", model, "--host", "127.0.0.1", "--port", str(port), "--ctx-size",
         "8192", "--threads", "1", "--no-webui", "--metrics", "--parallel", "4"],
        stdout=log, stderr=log,
    )
    import urllib.request

    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1).read()
            break
        except Exception:
            time.sleep(0.2)
    rows = []
    try:
        for c in concurrencies:
            name = f"llama-server-c{c}"
            pcap = os.path.join(out_dir, name + ".pcap")
            cap = start_capture(pcap, port)
            trace = os.path.join(out_dir, name + ".recorder.jsonl")
            load = [os.getloadavg()[0]]
            run_recorder(tracelab, port, c, rounds or max(4, 1000 // c), trace)
            time.sleep(1.5)  # the last packets through the capture's buffer before it stops
            stop(cap)
            row = judged({"framing": "llama-server", "concurrency": c, "load_1min": load,
                          "capture": pcap, "port": port,
                          "clients": [["recorder-ordered", trace, None]]})
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        stop(server)
    return rows


def judged(row):
    """Judges one capture's clients; `row` keeps what it was judged from, so `--rejudge` can
    judge the same files again with a changed judge."""
    ordered = any(client == "recorder-ordered" for client, _, _ in row["clients"])
    wire = judge.wire_requests(row["capture"], row["port"], "order" if ordered else "serial")
    for client, path, window in row["clients"]:
        if client == "guidellm":
            records = judge.guidellm_records(path)
        elif client == "recorder":
            records = judge.recorder_records(path)
        else:
            records = judge.recorder_in_order(path, wire)
        r = judge.judge(wire, records, window)
        if client != "guidellm":
            bound, p99 = judge.recorder_stated(path)
            r["stated_bound_ms"], r["stated_p99_ms"] = bound, p99
            if bound is not None:
                r["covered"] = sum(x <= bound for x in r["late"]) / len(r["late"])
                # The rule: true (covers ≥ 99 %) and tight (≤ 2 × the wire's P99 + 0.2 ms).
                r["tight"] = bound <= 2 * r["late_p99"] + 0.2
        del r["late"]
        row["recorder" if client != "guidellm" else "guidellm"] = r
    return row


def table(results):
    print(f"{'framing':<12} {'c':>4} {'load':>5} {'client':<9} {'n':>5} {'TTFT err p50':>12} "
          f"{'p99':>8} {'late p50':>9} {'p99':>8} {'max':>8} {'send p99':>9} {'stated':>8} "
          f"{'covered':>8} {'tight':>6}")
    for row in results:
        for i, tool in enumerate(("recorder", "guidellm")):
            r = row.get(tool)
            if not r:
                continue
            stated = r.get("stated_bound_ms")
            load = row["load_1min"][min(i, len(row["load_1min"]) - 1)]
            print(f"{row['framing']:<12} {row['concurrency']:>4} {load:>5.1f} {tool:<9} "
                  f"{r['paired']:>5} {r['ttft_err_p50']:>12.3f} {r['ttft_err_p99']:>8.3f} "
                  f"{r['late_p50']:>9.3f} {r['late_p99']:>8.3f} {r['late_max']:>8.3f} "
                  f"{r['send_p99']:>9.3f} {'' if stated is None else f'{stated:.3f}':>8} "
                  f"{'' if 'covered' not in r else format(r['covered'], '.1%'):>8} "
                  f"{'' if 'tight' not in r else ('yes' if r['tight'] else 'no'):>6}")
    print("(ms; TTFT error = client TTFT − wire TTFT; late = first-token stamp − wire, clocks "
          "aligned by the smallest; send = request's last byte on the wire − client start; load = "
          "1-minute load average as the client started)")


def main(argv):
    if len(argv) == 3 and argv[1] == "--rejudge":
        with open(os.path.join(argv[2], "results.json")) as f:
            results = [judged(row) for row in json.load(f)]
        with open(os.path.join(argv[2], "results.json"), "w") as f:
            json.dump(results, f, indent=1)
        table(results)
        return
    args, opts = [], {"--concurrency": "1,64,512", "--framing": "coalesced,split:2", "--rounds": None,
                      "--llama": None, "--llama-concurrency": "1"}
    it = iter(argv[1:])
    for a in it:
        if a in opts:
            opts[a] = next(it)
        else:
            args.append(a)
    if len(args) < 3:
        raise SystemExit(__doc__)
    out_dir, tracelab, serve = args[:3]
    guidellm = args[3] if len(args) > 3 else None
    os.makedirs(out_dir, exist_ok=True)
    results = []
    if opts["--llama"]:
        results += judge_llama(tracelab, opts["--llama"], out_dir,
                               [int(x) for x in opts["--llama-concurrency"].split(",")],
                               int(opts["--rounds"]) if opts["--rounds"] else None)
    for framing in [f for f in opts["--framing"].split(",") if f]:
        for c in [int(x) for x in opts["--concurrency"].split(",")]:
            rounds = int(opts["--rounds"]) if opts["--rounds"] else max(4, 1000 // c)
            name = f"{framing.replace(':', '')}-c{c}"
            server, port = start_server(serve, framing)
            pcap = os.path.join(out_dir, name + ".pcap")
            cap = start_capture(pcap, port)
            load, windows = [], []
            trace = os.path.join(out_dir, name + ".recorder.jsonl")
            load.append(os.getloadavg()[0])
            began = time.time_ns()
            run_recorder(tracelab, port, c, rounds, trace)
            windows.append((began, time.time_ns()))
            tools = ["recorder", trace]
            if guidellm:
                report = os.path.join(out_dir, name + ".guidellm.json")
                load.append(os.getloadavg()[0])
                began = time.time_ns()
                run_guidellm(guidellm, port, c, rounds, report)
                windows.append((began, time.time_ns()))
                tools += ["guidellm", report]
            time.sleep(1.5)  # the last packets through the capture's buffer before it stops
            stop(cap)
            stop(server)
            row = judged({"framing": framing, "concurrency": c, "load_1min": load,
                          "capture": pcap, "port": port,
                          "clients": [[t, p, w] for t, p, w in zip(tools[::2], tools[1::2], windows)]})
            results.append(row)
            with open(os.path.join(out_dir, "results.json"), "w") as f:
                json.dump(results, f, indent=1)
            print(json.dumps(row), flush=True)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print()
    table(results)


if __name__ == "__main__":
    main(sys.argv)
