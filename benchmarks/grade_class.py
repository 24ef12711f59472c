"""How fast a class is graded: a synthetic class, graded end to end as `flashcourse autograde` does.

    python benchmarks/grade_class.py CH --students N [--jobs J] [--mix blank|all] [--json OUT] [--keep DIR]

The class: N students cycling through the chapter's solution notebook, its blank release and, with
`--mix all`, every known-wrong, attack and variant submission (submissions/CH). Prints the
seconds of grading (parallel; `grade_s`), of the collecting left once grading ended (`collect_s`: nbgrader's
autograde replaying the results into the gradebook runs in batches while the class is graded, see
classgrade.Collector; this is the final batch and the summary) and from start to a complete gradebook
(`total_s`), the gradebook's rows, and whether each student got exactly the points expected (the
solution full marks where the checks run here, blank zero, a known-wrong submission all but what it
must lose).

`--keep DIR` builds the class in DIR and keeps it; run again with the same DIR and grading resumes where
it stopped (as `flashcourse autograde` does: finished submissions are kept). Each call's grading seconds
are appended to DIR/calls.json, so a class graded over several calls (a device call has a time limit)
reports the sum. A call stopped by SIGTERM or SIGINT (`timeout`, a scheduler) writes the seconds it graded
({"started", "cut_s"}: the submissions finished so far are kept, those in flight are graded again) and exits
with 124 (SIGTERM) or 130 (SIGINT); a call killed outright leaves only its start time there, and the sum says how
many were.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import signal
import sys
import tempfile
import time


import nbformat  # noqa: E402

from autograder.instructor import classgrade, nbtext  # noqa: E402
from autograder.nbgrader.run import _course_copy, _nbgrader  # noqa: E402
from autograder.instructor.submissions import for_chapter  # noqa: E402
from autograder.instructor.validate import _grade_cells, _runs_here, _scores  # noqa: E402


class _Progress(io.StringIO):
    """The run's output, kept; its grading progress and gradebook batch lines also go to stdout (the summary's
    table, one line per student, does not). Written from two threads (the collector's batches): one lock."""

    def __init__(self):
        import threading
        super().__init__()
        self._line, self._lock = "", threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            self._line += text
            while "\n" in self._line:
                ln, self._line = self._line.split("\n", 1)
                if ln.lstrip().startswith(("[", "gradebook:", "flashcourse:")):
                    sys.stdout.write(ln + "\n")
                    sys.stdout.flush()
            return super().write(text)


def main(argv=None) -> int:
    from course import mode
    ap = argparse.ArgumentParser()
    ap.add_argument("chapter")
    ap.add_argument("--students", type=int, default=8)
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--mix", choices=("blank", "all"), default="blank")
    ap.add_argument("--json")
    ap.add_argument("--keep", help="build the class here, keep it, resume an unfinished run")
    a = ap.parse_args(argv)
    ch = nbtext.chapters()[[c.startswith(a.chapter) for c in nbtext.chapters()].index(True)]
    source = nbformat.read(nbtext.notebook_path(ch), 4)
    grades = _grade_cells(source)
    tmp = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix=f"class-{ch}-")
    built = os.path.join(tmp, "built")  # written once the whole class is in place: a cut-off build starts again
    resume = bool(a.keep) and os.path.exists(built)
    try:
        if not resume:
            if os.path.isdir(tmp) and os.listdir(tmp) and not os.path.isdir(os.path.join(tmp, "submitted")):
                raise SystemExit(f"{tmp} is not empty and holds no class of this benchmark: not touching it")
            shutil.rmtree(tmp, ignore_errors=True)  # a class whose build was cut off: built again
            os.makedirs(tmp)
            _course_copy(tmp, ch)
            _nbgrader(["generate_assignment", ch, "--force"], tmp)
        blank = nbformat.read(os.path.join(tmp, "release", ch, f"{ch}.ipynb"), 4)
        kinds = [("blank", blank, set(grades))]
        if a.mix == "all":
            kinds.insert(0, ("solution", source, set()))
            for w in for_chapter(ch):
                nb = nbformat.from_dict(json.loads(json.dumps(source)))
                cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == w.cell)
                cell.source = w.apply(cell.source)
                kinds.append((w.name, nb, set(w.loses)))
        want = {}
        for k in range(a.students):
            name, nb, lost = kinds[k % len(kinds)]
            student = f"s{k:03d}-{name}"[:60]
            d = os.path.join(tmp, "submitted", student, ch)
            if not resume:
                os.makedirs(d)
                nbformat.write(nb, os.path.join(d, f"{ch}.ipynb"))
            want[student] = {g: 0.0 if g in lost or not all(_runs_here(e, c) for e, c in grades[g]["calls"])
                             else grades[g]["points"] for g in grades}
        if not resume:
            open(built, "w").close()
        t0 = time.perf_counter()
        log = os.path.join(tmp, "calls.json")  # each call's grading seconds; a call cut off: its start (+ cut_s)
        calls = json.load(open(log)) if a.keep and os.path.exists(log) else []
        if a.keep:
            started = time.time()
            with open(log, "w") as f:
                json.dump(calls + [{"started": started}], f)

            def _cut(signum, frame):  # record what this call graded, then stop (workers are this group's)
                with open(log, "w") as f:
                    json.dump(calls + [{"started": started, "cut_s": round(time.perf_counter() - t0, 1)}], f)
                try:  # the pipe to tee may be gone, or the main thread inside a write to it: raw write, errors ignored
                    os.write(2, f"grade_class: stopped by signal {signum} after {time.perf_counter() - t0:.1f} s of "
                                f"grading; run again with --keep {a.keep} to resume\n".encode())
                except OSError:
                    pass
                os._exit(124 if signum == signal.SIGTERM else 130)
            signal.signal(signal.SIGTERM, _cut)
            signal.signal(signal.SIGINT, _cut)
        _, times = classgrade.autograde_class(tmp, ch, jobs=a.jobs, out=_Progress())
        if a.keep:  # graded: a signal from here on must not record this call a second time as cut off
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)
        t1 = t0 + times["grade_s"]  # grading ended; the gradebook was filled in batches meanwhile
        t2 = time.perf_counter()  # the gradebook complete and the summary printed
        got = _scores(tmp, ch)
        wrong = sorted(s for s in want if got.get(s) != want[s])
        if a.keep:
            calls = calls + [round(t1 - t0, 1)]
            with open(log, "w") as f:
                json.dump(calls, f)
        out = {"chapter": ch, "mode": mode.MODE, "device": mode.device_name(), "cpus": os.cpu_count(),
               "students": a.students, "mix": a.mix, "jobs": a.jobs, "grade_s": round(t1 - t0, 1),
               "collect_s": times["collect_s"], "total_s": round(t2 - t0, 1), "gradebook_rows": len(got),
               "collect_batches": len(times["batches"]),
               "collect_batch_s": round(sum(b["seconds"] for b in times["batches"]), 1),
               **({"grade_s_calls": calls,  # a call cut off: {"started", "cut_s"}; killed outright: no cut_s
                   "grade_s_sum": round(sum(c if isinstance(c, (int, float)) else c.get("cut_s", 0)
                                            for c in calls), 1),
                   "calls_cut_off": sum(isinstance(c, dict) for c in calls),
                   "calls_cut_off_unmeasured": sum(isinstance(c, dict) and "cut_s" not in c for c in calls)}
                if calls else {}),
               "unexpected": wrong,
               "unexpected_detail": {s: {g: [got.get(s, {}).get(g), want[s][g]] for g in want[s]
                                         if got.get(s, {}).get(g) != want[s][g]} for s in wrong[:40]}}
        print(json.dumps(out, indent=1))
        if a.json:
            with open(a.json, "w") as f:
                json.dump(out, f, indent=1)
        return 1 if wrong or len(got) != a.students else 0
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
