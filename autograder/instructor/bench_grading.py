"""`flashcourse bench --grading [CH ...]`: how fast the engine grades, and how steady its timing is.

For each chapter: the solution notebook's cells (source/CH/CH.ipynb) and the blank release
(release/CH/CH.ipynb) graded through a Session (a warm sandboxed runner and the judge), every
check of the chapter, as nbgrader's IsolatedRegrade does (nbgrader itself is not needed: the GPU
machines lack it). Reports the runner's start and load, each check's time, the whole chapter, the
per-check overhead of an unimplemented exercise, and (--repeat N) the solution graded N times:
identical scores and the spread of every timed fraction. Writes JSON with --json.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time

from course import mode

from autograder.judge import grading
from autograder.declare import registry
from autograder.declare.exercise import TIMED_CHECKS
from autograder.judge.session import Session
from autograder.declare.submission import cell_from_text


from autograder.layout import ROOT  # noqa: E402


def _cells(path: str) -> list:
    with open(path) as f:
        nb = json.load(f)
    out = []
    for i, c in enumerate(nb["cells"]):
        meta = c.get("metadata", {}).get("nbgrader", {})
        if c["cell_type"] == "code" and meta.get("solution") and not meta.get("grade"):
            src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            out.append(cell_from_text(src, meta.get("grade_id", f"cell {i}")))
    return out


def _checks(chapter: str) -> list[tuple[str, str]]:
    out = [(ex.id, c) for ex in registry.all_exercises() if ex.chapter == chapter for c in ex.checks]
    return [c for c in out if c[1] not in TIMED_CHECKS] + [c for c in out if c[1] in TIMED_CHECKS]


def grade(chapter: str, kind: str) -> dict:
    path = os.path.join(ROOT, "source" if kind == "solution" else "release", chapter, f"{chapter}.ipynb")
    cells = _cells(path)
    t0 = time.perf_counter()
    rows = []
    with Session(cells) as s:
        s._start()
        started = time.perf_counter() - t0
        for ex_id, check in _checks(chapter):
            grading.MEASURED.clear()
            r = s.check(ex_id, check)
            rows.append({"exercise": ex_id, "check": check, "passed": r.passed, "seconds": r.seconds,
                         "kind": r.kind.value, "message": r.render()[:400]})
            if grading.MEASURED:  # where a timed check spent its time, judge and runner
                m = grading.MEASURED[-1]
                rows[-1]["phases"], rows[-1]["runner_phases"] = m.get("phases"), m.get("runner_phases")
    total = time.perf_counter() - t0
    return {"chapter": chapter, "kind": kind, "start_and_load_s": started, "total_s": total, "checks": rows}


def main(argv: list[str]) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="flashcourse bench --grading")
    ap.add_argument("chapters", nargs="*")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    known = sorted({ex.chapter for ex in registry.all_exercises()})
    chapters = [k for k in known if not a.chapters or k.startswith(tuple(a.chapters))]  # ch02 = ch02_reductions
    device = mode.device_name()
    out = {"device": device, "mode": mode.MODE, "runs": []}
    for ch in chapters:
        for kind in ("blank", "solution"):
            for i in range(a.repeat if kind == "solution" else 1):
                r = grade(ch, kind)
                r["repeat"] = i
                out["runs"].append(r)
                quiet = [c["seconds"] for c in r["checks"] if c["check"] not in TIMED_CHECKS]
                print(f"{ch} {kind}#{i}: start+load {r['start_and_load_s']:.1f} s, all {len(r['checks'])} checks "
                      f"{r['total_s']:.1f} s (median check {statistics.median(quiet) if quiet else 0:.2f} s), "
                      f"passed {sum(c['passed'] for c in r['checks'])}", flush=True)
                for c in r["checks"]:
                    if c["check"] in TIMED_CHECKS or not c["passed"] and kind == "solution":
                        print(f"   {c['exercise']} [{c['check']}] {'pass' if c['passed'] else 'FAIL'} "
                              f"{c['seconds']:.1f} s: {c['message'][:240]}", flush=True)
                        if c.get("phases"):
                            print(f"      judge {c['phases']} runner {c.get('runner_phases')}", flush=True)
    from autograder.judge.session import _Lending
    out["gpu_buffers"] = "files" if not mode.GPU else f"files ({_Lending.broken})" if _Lending.broken \
        else "lent by CUDA IPC"
    print(f"GPU buffers: {out['gpu_buffers']}", flush=True)
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
