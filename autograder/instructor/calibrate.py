"""`flashcourse calibrate`: speed bars for the instructor's own GPU model, next to the shipped ones.

The shipped bars (autograder/declare/thresholds.toml) are fractions of the copy bandwidth (or of PyTorch's
TFLOP/s), measured on an H100 and an H200: such a fraction carries over between GPUs better than a GB/s
figure, but not exactly (a smaller L2, fewer SMs, another memory system). On the grading GPU,
`flashcourse calibrate` measures every reference kernel and every known-slow submission at the graded
shapes on the judge's clock (`python -m kernels_ref.bench`), and writes `thresholds.d/<gpu>.toml`:

    top = the slower of the reference and the legitimate variants (submissions named variant_*, which
          must pass: e.g. the same two passes without cache hints)
    bar = min(shipped bar, top / 1.3)            the reference keeps a 1.3x margin, as when shipped
    if that bar does not fail the known-slow kernel: the middle between the two (still at most shipped)

with every measurement written next to it. Grading on a GPU of that name uses the file's bars (the
judge's messages say which); others keep the shipped ones. A bar is never raised above the shipped one.
"""
from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

from autograder.declare import registry
from autograder.layout import ROOT

MARGIN = 1.3
DIR = registry.CALIBRATED_DIR


def slug(device: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", device.lower()).strip("_")


def bars(bench: dict) -> list[dict]:
    """One entry per exercise with a speed check: the shipped bar, the measurements, the calibrated bar."""
    shipped = registry.thresholds()
    out = []
    for ex in registry.all_exercises():
        if ex.bench is None:
            continue
        key = "min_fraction_of_copy" if ex.bench.flops is None else "min_fraction_of_baseline"
        # a record made before an exercise moved names it by its former id (registry.FORMER_IDS)
        at = [r for r in bench["rows"] if registry.FORMER_IDS.get(r.get("exercise"), r.get("exercise")) == ex.id
              and r.get("shape") == list(ex.bench.shape) and "fraction" in r]
        ref = next((r["fraction"] for r in at if r.get("variant") == "reference"), None)
        # the bench names every timed submission wrong/NAME; variant_* are legitimate and must pass
        legit = [r["fraction"] for r in at if str(r.get("variant", "")).startswith("wrong/variant_")]
        slow = max((r["fraction"] for r in at if str(r.get("variant", "")).startswith("wrong/")
                    and not str(r["variant"]).startswith("wrong/variant_")), default=None)
        # an exercise that awaits calibration ships no bar: the measurement alone sets it
        ship = shipped.get(ex.id, {}).get(key)
        ship = None if ship is None else float(ship)
        entry = {"exercise": ex.id, "key": key, "shipped": ship, "reference": ref, "slow": slow,
                 "variants": {r["variant"][len("wrong/"):]: r["fraction"] for r in at
                              if str(r.get("variant", "")).startswith("wrong/variant_")},
                 "peers": {r["variant"]: r["fraction"] for r in at
                           if r.get("variant") not in ("reference",) and not str(r["variant"]).startswith("wrong/")}}
        if ref is None:
            entry.update(bar=ship, why="the reference was not measured here: shipped bar kept" if ship is not None
                         else "the reference was not measured here: the check stays not graded")
        else:
            top = min([ref] + legit)
            what = "reference" if top == ref else "slowest legitimate variant"
            bar = top / MARGIN
            why = f"{what} / {MARGIN}"
            if slow is not None and bar <= slow:
                bar = (slow + top) / 2
                why = f"middle of known-slow and {what} ({what} / {MARGIN} would pass the known-slow kernel)"
            if ship is None:
                why += " (no shipped bar: the exercise awaited this calibration)"
            elif bar >= ship:
                bar, why = ship, "shipped bar (the measured margin allows it)"
            entry.update(bar=round(bar, 3), why=why)
            if slow is not None and entry["bar"] <= slow:
                entry["warning"] = "this bar does not fail the known-slow kernel on this GPU"
            elif entry["bar"] > top:
                entry["warning"] = f"the {what} does not reach this bar on this GPU"
        out.append(entry)
    return out


def write(bench: dict, out_dir: str = DIR, source: str | None = None) -> str:
    """Write thresholds.d/<gpu>.toml: a bar for every exercise whose reference was measured; the others keep
    the shipped bar (not copied here, so that a later change to thresholds.toml reaches this GPU too)."""
    device = bench["device"]
    entries = bars(bench)
    origin = (f"`flashcourse calibrate --bench {source}` (regenerated and compared by the tests)" if source else
              f"`flashcourse calibrate` on {datetime.date.today().isoformat()} from a run of "
              "python -m kernels_ref.bench on that GPU")
    lines = [f"# Speed bars for {device}, written by {origin}",
             "# (fractions on the judge's clock; see autograder/instructor/calibrate.py for the rule).",
             "# Not measured here, so graded with the shipped bars of thresholds.toml: "
             + (", ".join(e["exercise"] for e in entries if e["reference"] is None) or "none") + ".",
             f"device = {json.dumps(device)}", ""]
    for e in entries:
        if e["reference"] is None:
            continue
        lines.append(f"[{json.dumps(e['exercise'])}]")
        lines.append(f"{e['key']} = {e['bar']}")
        meas = ", ".join(f"{k} {v:.3f}" for k, v in (("reference", e["reference"]), ("known-slow", e["slow"]))
                         if v is not None)
        peers = ", ".join(f"{k} {v:.3f}" for k, v in list(e["variants"].items()) + list(e["peers"].items()))
        lines.append(f"# {e['why']}; shipped {e['shipped'] if e['shipped'] is not None else 'none'}; "
                     f"measured: {meas or 'nothing'}"
                     + (f"; {peers}" if peers else ""))
        if e.get("warning"):
            lines.append(f"# WARNING: {e['warning']}")
        lines.append("")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{slug(device)}.toml")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def main(bench_json: str | None = None, out_dir: str = DIR) -> int:
    given = bench_json is not None
    if bench_json is None:
        from course import mode
        if not mode.GPU:
            print("flashcourse calibrate measures the reference kernels on this machine's GPU, and it has none "
                  "(or give --bench FILE, a python -m kernels_ref.bench --json from the grading GPU)")
            return 2
        with tempfile.TemporaryDirectory() as tmp:
            bench_json = os.path.join(tmp, "bench.json")
            subprocess.run([sys.executable, "-m", "kernels_ref.bench", "--json", bench_json],
                           cwd=ROOT, check=True)
            with open(bench_json) as f:
                bench = json.load(f)
    else:
        with open(bench_json) as f:
            bench = json.load(f)
    path = write(bench, out_dir, source=bench_json if given else None)
    for e in bars(bench):
        ship = "none" if e["shipped"] is None else f"{e['shipped']:.2f}"
        got = "none" if e["bar"] is None else f"{e['bar']:.3f}"
        print(f"  {e['exercise']:34s} {ship:>4} -> {got}  ({e['why']})"
              + (f"  WARNING: {e['warning']}" if e.get("warning") else ""))
    print(f"wrote {path}: grading on a {bench['device']} now uses these bars")
    return 0
