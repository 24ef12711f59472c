"""`flashcourse validate CH`: grade known submissions through nbgrader and compare with what
each must score.

Submissions: the solution (source notebook: full marks), the blank release (zero), and each
known-wrong submission of submissions/CH (the solution with one cell patched:
it loses exactly the test cells it names). Checks that cannot run in this mode (bandwidth and
throughput, bf16 cases, CUDA exercises marked needs_gpu) are expected to score zero, with the "needs a GPU" message;
without a GPU, a known-wrong submission that loses only such checks is not graded (it would score as the solution).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time

import nbformat

from course import mode

from autograder.declare import registry
from autograder.declare.exercise import TIMED_CHECKS
from autograder.nbgrader.run import _course_copy, _nbgrader
from autograder.instructor.nbtext import notebook_path
from autograder.instructor.submissions import for_chapter
from autograder.judge.testcells import grade_cells


def _runs_here(exercise_id: str, check: str) -> bool:
    ex = registry.get(exercise_id)
    if mode.GPU:
        return not (check in TIMED_CHECKS and registry.awaits_calibration(exercise_id, check))
    return check not in TIMED_CHECKS and not ex.needs_gpu


_grade_cells = grade_cells  # (the name benchmarks/grade_class.py imports)


def label(w) -> str:
    """A known submission's student id in validate's course: wrong-<name>, or variant-<name> (full marks)."""
    return (w.name if w.legit else f"wrong-{w.name}").replace("_", "-")


def patched(source, w, grades: dict, chapter: str):
    """The solution notebook with w's one solution cell patched."""
    nb = nbformat.from_dict(json.loads(json.dumps(source)))
    cell = next((c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == w.cell), None)
    if cell is None:
        raise SystemExit(f"{w.name}: no solution cell {w.cell!r} in {chapter}")
    cell.source = w.apply(cell.source)
    for gid in w.loses:
        if gid not in grades:
            raise SystemExit(f"{w.name}: LOSES names {gid!r}, which is not a test cell of {chapter}")
    return nb


def _runnable(grades: dict, gid: str) -> bool:
    g = grades[gid]
    return g["points"] > 0 and all(_runs_here(e, c) for e, c in g["calls"])


def graded_here(chapter: str) -> list:
    """The known submissions of the chapter that this mode can tell from the solution: not those whose lost
    test cells all need a GPU (without one they score as the solution)."""
    grades = grade_cells(nbformat.read(notebook_path(chapter), 4))
    return [w for w in for_chapter(chapter) if w.legit or any(_runnable(grades, g) for g in w.loses)]


def judge_known_wrongs(chapter: str, names: list[str] | None = None, jobs: int = 2) -> int:
    """The judge alone on known-wrong submissions (`names`: their labels; default all graded here): each one's
    patched notebook graded as grading does it (its solution cells in one sandboxed runner, the judge's checks,
    autograder.judge.testcells.grade), but only on the test cells it can change: those calling its own exercise or
    an exercise of a cell it must lose. Each of those must fail exactly when it is one of the lost cells.
    No nbgrader: `validate` grades a whole notebook through nbgrader and checks the cells of the other
    exercises too. Prints a line per submission; returns the number of cells that scored otherwise."""
    from concurrent.futures import ThreadPoolExecutor

    from autograder.declare.submission import cells_from_notebook
    from autograder.judge.testcells import grade
    t0 = time.time()
    source = nbformat.read(notebook_path(chapter), 4)
    grades = grade_cells(source)
    chosen = [w for w in graded_here(chapter) if not w.legit and (names is None or label(w) in names)]
    unknown = sorted(set(names or ()) - {label(w) for w in chosen})
    if unknown:
        raise SystemExit(f"no known-wrong submission graded here named {', '.join(unknown)} in {chapter}")

    def one(w) -> tuple[str, int]:
        nb = patched(source, w, grades, chapter)
        exercises = {w.exercise} | {e for gid in w.loses for e, _ in grades[gid]["calls"]}
        cells = {gid: g["calls"] for gid, g in grades.items()
                 if _runnable(grades, gid) and any(e in exercises for e, _ in g["calls"])}
        graded = grade(cells_from_notebook(nb), cells)
        bad = [f"{gid} {'passed' if v.passed else 'failed'}" for gid, v in graded.cells.items()
               if v.passed == (gid in w.loses)]
        lost = sorted(g for g, v in graded.cells.items() if not v.passed)
        line = f"{'BAD' if bad else 'ok '} {label(w)}: {len(cells)} cells judged, lost {', '.join(lost) or 'none'}"
        return line + (f"; not as expected: {', '.join(bad)}" if bad else ""), len(bad)
    with ThreadPoolExecutor(jobs) as pool:
        done = list(pool.map(one, chosen))
    for line, _ in done:
        print(line, flush=True)
    n_bad = sum(n for _, n in done)
    print(f"judge_known_wrongs {chapter} · {mode.MODE} mode: {len(chosen)} submissions, {n_bad} cells scored "
          f"otherwise; {time.time() - t0:.0f} s", flush=True)
    return n_bad


def validate(chapter: str, keep: str | None = None, only: list[str] | None = None) -> int:
    t0 = time.time()
    source = nbformat.read(notebook_path(chapter), 4)
    grades = grade_cells(source)
    subs: dict[str, tuple] = {}  # student -> (notebook, doc, lost cells)

    def runnable_points(gid: str) -> float:
        g = grades[gid]
        return g["points"] if all(_runs_here(e, c) for e, c in g["calls"]) else 0.0

    subs["solution"] = (source, "the reference solution", set())
    for w in for_chapter(chapter):
        subs[label(w)] = (patched(source, w, grades, chapter), w.doc, set(w.loses))

    # Without a GPU a known-wrong submission whose lost cells all need one would score exactly as the solution:
    # it is graded on a GPU only (named below; --only grades it anyway). Its patch was still applied above.
    gpu_only = [] if mode.GPU or only else sorted(
        k for k, (_, _, lost) in subs.items() if lost and not any(runnable_points(g) for g in lost))
    for k in gpu_only:
        del subs[k]
    unknown = sorted(set(only or ()) - set(subs) - {"blank"})
    if unknown:  # a misspelt name would otherwise validate less than asked, silently
        raise SystemExit(f"--only: no submission {', '.join(unknown)} in {chapter}; there are: blank, "
                         + ", ".join(sorted(subs)))
    subs = {k: v for k, v in subs.items() if not only or k in only}
    tmp = keep or tempfile.mkdtemp(prefix=f"validate-{chapter}-")
    try:
        if keep and os.path.exists(keep):
            shutil.rmtree(keep)
        os.makedirs(tmp, exist_ok=True)
        _course_copy(tmp, chapter)
        _nbgrader(["generate_assignment", chapter, "--force"], tmp)
        blank = nbformat.read(os.path.join(tmp, "release", chapter, f"{chapter}.ipynb"), 4)
        if not only or "blank" in only:
            subs["blank"] = (blank, "the release as students get it", set(grades))
        for student, (nb, _, _) in subs.items():
            d = os.path.join(tmp, "submitted", student, chapter)
            os.makedirs(d, exist_ok=True)
            nbformat.write(nb, os.path.join(d, f"{chapter}.ipynb"))
        print(f"autograding {len(subs)} submissions of {chapter} in {mode.MODE} mode ...", flush=True)
        if gpu_only:
            print(f"not graded here ({len(gpu_only)}: they lose only checks that need a GPU, so they would score as "
                  f"the solution): {', '.join(gpu_only)}", flush=True)
        # as an instructor grades a class: worker judges in parallel, then one writer records the results
        # through nbgrader's autograde (autograder.instructor.classgrade)
        import io

        from autograder.instructor.classgrade import grade_class, record_and_summarise
        results, _ = grade_class(tmp, chapter, force=True)
        said = io.StringIO()
        # collect's replay and summary; the assignment is in the gradebook already (generate_assignment above)
        if record_and_summarise(os.path.abspath(tmp), chapter, results, out=said) != 0:
            print(said.getvalue()[-3000:], flush=True)
        got = _scores(tmp, chapter)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)

    rows, bad = [], 0
    for student, (_, doc, lost) in subs.items():
        for gid in grades:
            want = 0.0 if gid in lost else runnable_points(gid)
            have = got.get(student, {}).get(gid)
            ok = have is not None and abs(have - want) < 1e-9
            bad += not ok
            rows.append({"student": student, "cell": gid, "expected": want, "got": have, "ok": ok,
                         "runs_here": runnable_points(gid) > 0 or grades[gid]["points"] == 0})
    seconds = time.time() - t0
    _print(chapter, rows, subs, grades, seconds)
    out = os.environ.get("FLASHCOURSE_VALIDATE_JSON")
    if out:  # one file for every chapter validated into it (`flashcourse validate ch01 ch02 --json F`)
        done = {}
        if os.path.exists(out):
            with open(out) as f:
                done = json.load(f)
        if done.get("mode") != mode.MODE or done.get("device") != mode.device_name():
            done = {}
        done.update(mode=mode.MODE, device=mode.device_name(), date=time.strftime("%Y-%m-%d"))
        done.setdefault("chapters", {})[chapter] = {
            "seconds": round(seconds), "match": len(rows) - bad, "mismatch": bad,
            "submissions": len({r["student"] for r in rows}), "rows": rows}
        with open(out, "w") as f:
            json.dump(done, f, indent=1)
    return bad


def _scores(course_dir: str, chapter: str) -> dict:
    from nbgrader.api import Gradebook
    out: dict = {}
    with Gradebook(f"sqlite:///{os.path.join(course_dir, 'gradebook.db')}") as gb:
        for sub in gb.assignment_submissions(chapter):
            nb = sub.notebooks[0]
            out[sub.student.id] = {g.name: float(g.auto_score or 0) for g in nb.grades}
    return out


def _print(chapter, rows, subs, grades, seconds) -> None:
    print(f"\nflashcourse validate {chapter} · {mode.MODE} mode · {mode.device_name()}")
    cells = list(grades)
    width = max(len(s) for s in subs) + 2
    print(" " * width + "  ".join(f"{c[:24]:>24}" for c in cells))
    by = {(r["student"], r["cell"]): r for r in rows}
    for s in subs:
        line = f"{s:<{width}}"
        for c in cells:
            r = by[(s, c)]
            got = "-" if r["got"] is None else f"{r['got']:g}"
            mark = (" gpu" if not r["runs_here"] else "") + ("" if r["ok"] else " ✗")
            line += "  " + f"{got}/{r['expected']:g}{mark}".rjust(24)
        print(line)
    n_bad = sum(not r["ok"] for r in rows)
    print(f"(got/expected points per test cell; 'gpu': the check needs a GPU, so 0 is expected here) "
          f"{len(rows) - n_bad} match, {n_bad} mismatch; {seconds:.0f} s")
