"""Judges what bench/gpu/device-check brought back (called by bench/gpu/judge, which replays the spool first).

  judge.py RESULTS REPORT_DIR COLLECTOR_URL SPOOL_COPY JAR REPLAY_LINE

RESULTS: the device-check's files. SPOOL_COPY: the agent's batches, read here before the replay consumed them (the
per-second readings the collector keeps only as a rolling window). COLLECTOR_URL: the collector the spool was replayed
into; its /v1/runs gives what trainwatch itself concluded. JAR: trainwatch's runnable jar, for `estimate --json`.
REPLAY_LINE: what the replay said.
Writes REPORT_DIR/report.json and REPORT_DIR/report.md.
"""
import gzip
import json
import os
import statistics
import subprocess
import sys
import urllib.request

MIB = 1 << 20


class JudgeError(Exception):
    """Bad or missing input: one line, no stack trace."""


def read_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise JudgeError(f"cannot read {what} {path}: {e}") from None


def read_rows(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_batches(spool):
    """The agent's sample batches in the order it sent them (file names carry the ordinal and request path)."""
    names = sorted(n for n in os.listdir(spool) if n.endswith(".json.gz") and "samples" in n)
    batches = []
    for name in names:
        with gzip.open(os.path.join(spool, name)) as f:
            batches.append(json.load(f))
    return batches


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"min": min(values), "median": statistics.median(values), "max": max(values), "n": len(values)}


def gpu_readings(batches, run_id, probe_pid):
    """What the agent read per GPU over the run: memory (the GPU's and the probe's process), utilisation, hardware
    activity, clocks, power, and which PIDs the agent attributed to the run."""
    pids, samples = set(), []
    for b in batches:
        for run in b.get("runs") or []:
            if run.get("run_id") == run_id:
                pids.update(run.get("pids") or [])
        samples.extend(b.get("gpus") or [])

    def process_memory(g):
        for p in g.get("processes") or []:
            if p.get("pid") == probe_pid:
                return p.get("used_memory_bytes")
        return None

    activity = {}
    for g in samples:
        for k, v in (g.get("activity") or {}).items():
            if isinstance(v, (int, float)):
                activity.setdefault(k, []).append(v)
    reasons = sorted({r for g in samples for r in g.get("clock_event_reasons") or []})
    return {
        "samples": len(samples),
        "attributed_pids": sorted(pids),
        "probe_pid_attributed": probe_pid in pids,
        "probe_process_memory_bytes": spread([process_memory(g) for g in samples]),
        "gpu_memory_used_bytes": spread([g.get("memory_used_bytes") for g in samples]),
        "utilization_ratio": spread([g.get("utilization_ratio") for g in samples]),
        "activity": {k: spread(v) for k, v in sorted(activity.items())},
        "sm_clock_mhz": spread([g["sm_clock_hz"] / 1e6 for g in samples if g.get("sm_clock_hz") is not None]),
        "sm_clock_max_mhz": spread([g["sm_clock_max_hz"] / 1e6 for g in samples
                                    if g.get("sm_clock_max_hz") is not None]),
        "clock_event_reasons": reasons,
        "power_watts": spread([g.get("power_watts") for g in samples]),
        "temperature_celsius": spread([g.get("temperature_celsius") for g in samples]),
        "per_second": [(g.get("ts"), process_memory(g), g.get("utilization_ratio"),
                        (g.get("activity") or {}).get("sm_active_ratio")) for g in samples],
    }


def unanswered_fields(sample):
    """Fields the one-shot sample left out or null: what this driver does not answer (NOT_SUPPORTED and the like)."""
    if not isinstance(sample, list) or not sample:
        return []
    known = ["memory_used_bytes", "memory_reserved_bytes", "utilization_ratio", "memory_utilization_ratio",
             "sm_clock_hz", "sm_clock_max_hz", "mem_clock_hz", "power_watts", "power_limit_watts",
             "temperature_celsius", "pstate", "processes", "energy_joules", "pcie_rx_bytes_per_second",
             "nvlink_rx_bytes_total", "ecc_volatile_uncorrected_total", "fan_ratio"]
    return sorted({k for g in sample for k in known if g.get(k) is None})


def estimate(jar, gpu_name, args):
    cmd = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", jar, "estimate", "--json", "--gpu",
           gpu_name] + args
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["exit status %d" % done.returncode])[-1]}
    e = json.loads(done.stdout)
    return {"step_seconds": e["step_seconds"], "peak_memory_bytes": e["peak_memory_bytes"], "fits": e["fits"],
            "gpu": e["spec"].get("gpu"), "breakdown": e.get("breakdown", {})}


def compare_rows(rows, readings, trainwatch, gpu_name):
    """Each measured row beside the estimator's figures for the same spec; the row's NVML process memory from the
    agent's readings within the row's time, beside what PyTorch reserved (the difference: CUDA context and more)."""
    out = []
    for r in rows:
        item = {"id": r["id"], "model": r["row"]["model"], "tiny": r.get("tiny", False),
                "estimate_args": r["estimate_args"], "seconds": r["ended"] - r["started"]}
        if "skipped" in r:
            item["skipped"] = r["skipped"]
            out.append(item)
            continue
        item["fits"] = r.get("fits")
        item["measured_step_s"] = r.get("step_median_s")
        item["max_memory_allocated_bytes"] = r.get("max_memory_allocated_bytes")
        item["max_memory_reserved_bytes"] = r.get("max_memory_reserved_bytes")
        in_row = [s for s in readings["per_second"] if s[0] is not None and r["started"] <= s[0] <= r["ended"]]
        memory = [s[1] for s in in_row if s[1] is not None]
        item["agent_process_memory_bytes"] = max(memory) if memory else None
        item["utilization_ratio"] = spread([s[2] for s in in_row])
        item["sm_active_ratio"] = spread([s[3] for s in in_row])
        if item["agent_process_memory_bytes"] and item["max_memory_reserved_bytes"]:
            item["beyond_reserved_bytes"] = item["agent_process_memory_bytes"] - item["max_memory_reserved_bytes"]
        est = estimate(trainwatch, gpu_name, r["estimate_args"])
        item["estimate"] = est
        if "step_seconds" in est and item["measured_step_s"]:
            item["step_ratio"] = item["measured_step_s"] / est["step_seconds"]
        measured_memory = r.get("nvml_process_bytes") or item["agent_process_memory_bytes"]
        if "peak_memory_bytes" in est and measured_memory and not item["tiny"]:
            item["memory_ratio"] = measured_memory / est["peak_memory_bytes"]
        item["comparable"] = not item["tiny"]
        out.append(item)
    return out


def collector_verdict(collector, run_id):
    """What the collector concluded from the replayed run: steps from the log, observed figures, anomalies."""
    runs = get(collector + "/v1/runs").get("runs", [])
    ids = [r.get("run_id") for r in runs]
    if run_id not in ids:
        return {"found": False, "runs": ids}
    run = get(collector + "/v1/runs/" + run_id)
    anomalies = run.get("anomalies") or []
    return {"found": True, "runs": ids, "observed": run.get("observed", {}), "ended": run.get("ended"),
            "ending": run.get("ending"), "anomalies": anomalies,
            "false_alarms": [a.get("kind") for a in anomalies]}


def checks(report):
    """The verdicts the report leads with: each a name, pass or fail, and the figures behind it."""
    v, g, s = report["collector"], report["readings"], report["summary"]
    observed = v.get("observed", {})
    step_lines = sum(r.get("steps_logged", 0) for r in report["raw_rows"])
    measured = [r for r in report["rows"] if r.get("measured_step_s")]
    return [
        ("rows measured", bool(measured), f"{len(measured)} of {len(report['rows'])} rows"),
        ("run seen by the collector", v.get("found", False), f"run {s.get('run_id')} among {v.get('runs')}"),
        ("steps read from the log", observed.get("last_step") == step_lines,
         f"last step {observed.get('last_step')}, the probe logged {step_lines}"),
        ("probe PID attributed", g["probe_pid_attributed"],
         f"probe {s.get('probe_pid')}, attributed {g['attributed_pids']}"),
        ("GPU readings during the run", g["samples"] > 0, f"{g['samples']} GPU samples"),
        ("no false alarm on a healthy run", v.get("found", False) and not v.get("false_alarms"),
         f"anomalies {v.get('false_alarms')}"),
    ]


def fmt(value, unit=""):
    if value is None:
        return "-"
    if unit == "MiB":
        return f"{value / MIB:,.0f} MiB"
    if isinstance(value, float):
        return f"{value:.3f}{unit}"
    return f"{value}{unit}"


def markdown(report):
    s, g = report["summary"], report["readings"]
    lines = [f"# GPU check: {report['gpu']} ({'tiny sizes, CPU check' if s.get('tiny') else 'full size'})", "",
             f"Run {s.get('run_id')}, probe PID {s.get('probe_pid')}, exits: probe {s.get('probe_exit')}, agent "
             f"{s.get('agent_exit')}, one-shot sample {s.get('once_exit')}; {s.get('spool_entries')} spooled "
             f"shipments, replay: {report['replay']}", "", "| check | result | figures |", "|---|---|---|"]
    lines += [f"| {name} | {'pass' if ok else 'FAIL'} | {why} |" for name, ok, why in report["checks"]]
    lines += ["", "## What the agent read", "",
              f"* process memory of the probe (NVML): {spread_text(g['probe_process_memory_bytes'], 'MiB')}",
              f"* GPU memory used: {spread_text(g['gpu_memory_used_bytes'], 'MiB')}",
              f"* utilisation: {spread_text(g['utilization_ratio'])}",
              f"* SM clock: {spread_text(g['sm_clock_mhz'])} MHz, its maximum {spread_text(g['sm_clock_max_mhz'])} MHz; "
              f"clock event reasons seen: {', '.join(g['clock_event_reasons']) or 'none'}",
              f"* power: {spread_text(g['power_watts'])} W; temperature {spread_text(g['temperature_celsius'])} C",
              f"* hardware activity: " + ("; ".join(f"{k} {spread_text(v)}" for k, v in g["activity"].items())
                                          or "none reported"),
              f"* not answered by this driver in the one-shot sample: {', '.join(report['unanswered']) or 'none'}",
              "", "## Measured against the estimator", "",
              f"The rows took {sum(r['seconds'] for r in report['rows']):.0f} s in all (the `seconds` column: building, "
              "warm-up and timed steps; bench/gpu/kit/plan.tsv has what was planned).", "",
              "| row | seconds | model | measured step s | estimated step s | ratio | reserved | NVML process | beyond reserved "
              "| estimated peak | memory ratio | utilisation | SM active | note |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        e = r.get("estimate", {})
        note = r.get("skipped") or e.get("error") or ("tiny: not comparable" if r["tiny"] else "")
        lines.append(f"| {r['id']} | {r['seconds']:.0f} | {r['model']} | {fmt(r.get('measured_step_s'))} | {fmt(e.get('step_seconds'))} "
                     f"| {fmt(r.get('step_ratio'))} | {fmt(r.get('max_memory_reserved_bytes'), 'MiB')} "
                     f"| {fmt(r.get('agent_process_memory_bytes'), 'MiB')} | {fmt(r.get('beyond_reserved_bytes'), 'MiB')} "
                     f"| {fmt(e.get('peak_memory_bytes'), 'MiB')} "
                     f"| {fmt(r.get('memory_ratio'))} | {median_text(r.get('utilization_ratio'))} "
                     f"| {median_text(r.get('sm_active_ratio'))} | {note} |")
    return "\n".join(lines) + "\n"


def median_text(s):
    return "-" if not s else f"{s['median']:.2f}"


def spread_text(s, unit=""):
    if not s:
        return "-"
    return f"{fmt(s['min'], unit)} / {fmt(s['median'], unit)} / {fmt(s['max'], unit)} (min / median / max)"


def main(argv):
    if len(argv) != 6:
        raise JudgeError("usage: judge.py RESULTS REPORT_DIR COLLECTOR_URL SPOOL_COPY TRAINWATCH REPLAY_LINE")
    results, report_dir, collector, spool, trainwatch, replay = argv
    summary = read_json(os.path.join(results, "summary.json"), "the device-check summary")
    sample = read_json(os.path.join(results, "sample.json"), "the one-shot sample") \
        if os.path.getsize(os.path.join(results, "sample.json")) else []
    rows = read_rows(os.path.join(results, "rows.jsonl"))
    gpu_name = sample[0]["name"] if sample else (rows[0]["gpu"] if rows else "h100-sxm")
    readings = gpu_readings(read_batches(spool), summary.get("run_id"), summary.get("probe_pid"))
    report = {"gpu": gpu_name, "summary": summary, "replay": replay, "raw_rows": rows,
              "unanswered": unanswered_fields(sample), "readings": readings,
              "collector": collector_verdict(collector, summary.get("run_id")),
              "rows": compare_rows(rows, readings, trainwatch, gpu_name)}
    report["checks"] = checks(report)
    report["readings"].pop("per_second")
    os.makedirs(report_dir, exist_ok=True)
    with open(os.path.join(report_dir, "report.json"), "w", encoding="utf-8") as f:
        json.dump({k: v for k, v in report.items() if k != "raw_rows"}, f, indent=1)
    with open(os.path.join(report_dir, "report.md"), "w", encoding="utf-8") as f:
        f.write(markdown(report))
    failed = [name for name, ok, _ in report["checks"] if not ok]
    print(f"judge: {len(report['checks']) - len(failed)} of {len(report['checks'])} checks pass"
          + (f"; failed: {', '.join(failed)}" if failed else "") + f"; report in {report_dir}/report.md")
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except JudgeError as e:
        print(f"judge: {e}", file=sys.stderr)
        sys.exit(2)
