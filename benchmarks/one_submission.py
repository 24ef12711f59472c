"""Grade one known-wrong (or variant, attack) submission of a chapter through one warm runner, every check
of the chapter, and print each check's time and message: for finding out why a submission is slow to grade.

    python benchmarks/one_submission.py EXERCISE_ID SUBMISSION      (e.g. ch01.softmax_triton triton_monkeypatch)
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from autograder import registry  # noqa: E402
from autograder.runner import Session  # noqa: E402
from test_gpu_engine import submission_cells  # noqa: E402


def main(exercise_id: str, name: str) -> int:
    ex = registry.get(exercise_id)
    cells, loses = submission_cells(ex, name)
    t0 = time.perf_counter()
    with Session(cells) as s:
        s._start()
        print(f"{name}: runner start and cells {time.perf_counter() - t0:.1f} s; loses {loses}", flush=True)
        for other in registry.all_exercises():
            if other.chapter != ex.chapter:
                continue
            for check in other.checks:
                r = s.check(other.id, check)
                print(f"  {other.id} [{check}] {'pass' if r.passed else 'FAIL'} {r.seconds:.1f} s: {r.message[:160]}",
                      flush=True)
        if s.proc is not None:
            print("runner output (tail):\n" + s.proc.tail(20), flush=True)
    print(f"total {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
