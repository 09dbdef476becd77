"""The sweep's rows (bench/gpu/sweep.json) as the estimator sees them; no PyTorch needed (bench/gpu/pack uses it).

  sweep.py plan SWEEP CATALOG   one line per row: id, planned setup seconds, steps, `trainwatch estimate` flags
  sweep.py price SETUP STEPS    `trainwatch estimate --json` on stdin: fits, step seconds, planned seconds, model
"""
import json
import sys

# probe.py's defaults: warm-up and timed steps per row, and the extra warm-up of a torch.compile row
WARMUP_STEPS = 2
TIMED_STEPS = 5
COMPILE_WARMUP_STEPS = 2
# Planned seconds outside the steps: building a model and moving it to the GPU (a 12B model: its 48 GB of fp32
# initialisation), and torch.compile's compilation of a DiT-sized model (tens of seconds, cached kernels none).
BUILD_SECONDS = 10
BUILD_SECONDS_PER_BILLION = 3
COMPILE_SECONDS = 60


def estimate_args(row, video):
    """The `trainwatch estimate` flags of a row (the GPU is added by whoever runs it)."""
    args = ["--model", row["model"], "--batch", str(row["batch"]), "--resolution", str(row["res"]),
            "--precision", row["precision"], "--weights", row["weights"], "--optimizer", row["optimizer"],
            "--grad-checkpointing" if row["ckpt"] else "--no-grad-checkpointing",
            "--ema" if row["ema"] else "--no-ema", "--features", "precomputed", "--attention", row["attention"],
            "--kernels", row["kernels"]]
    if video:
        args += ["--frames", str(row["frames"])]
    if row.get("lora_rank"):
        args += ["--lora-rank", str(row["lora_rank"])]
    if row.get("base_weights"):
        args += ["--base-weights", row["base_weights"]]
    return args


def planned(row, params):
    """(setup seconds, steps) a row is planned to take besides its steps' own time."""
    compiled = row["kernels"] == "compiled"
    setup = BUILD_SECONDS + BUILD_SECONDS_PER_BILLION * params / 1e9 + (COMPILE_SECONDS if compiled else 0)
    return setup, WARMUP_STEPS + TIMED_STEPS + (COMPILE_WARMUP_STEPS if compiled else 0)


def rows_of(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return doc["rows"] if isinstance(doc, dict) else doc


def main(argv):
    if len(argv) == 3 and argv[0] == "price":
        e = json.load(sys.stdin)
        total = float(argv[1]) + int(argv[2]) * e["step_seconds"]
        print(f"{str(e['fits']).lower()}\t{e['step_seconds']:.3f}\t{total:.1f}\t{e['spec']['model']}")
        return 0
    if len(argv) != 3 or argv[0] != "plan":
        print("usage: sweep.py plan SWEEP CATALOG | sweep.py price SETUP STEPS", file=sys.stderr)
        return 2
    with open(argv[2], encoding="utf-8") as f:
        catalog = {m["id"]: m for m in json.load(f)}
    for row in rows_of(argv[1]):
        entry = catalog[row["model"]]
        setup, steps = planned(row, entry["params"])
        print(f"{row['id']}\t{setup:.0f}\t{steps}\t{' '.join(estimate_args(row, entry['video']))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
