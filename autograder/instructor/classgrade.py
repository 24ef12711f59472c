"""Grading a whole class: `flashcourse autograde CH` and `flashcourse collect CH`.

Two phases, so that the slow one runs in parallel, on several GPUs or cluster nodes, and can be killed
and resumed at any moment, while nbgrader's gradebook keeps exactly one writer:

1. **grade** (`grade_class`): every submission `submitted/<student>/CH/` is graded by a judge (this
   module's `grade_submission`, in a worker process of its own: `--jobs N`), through one warm sandboxed
   runner (autograder.judge.session). Which checks run comes from the instructor's source notebook, not the
   student's copy: a deleted or edited test cell is graded all the same. Which notebook of the folder is
   graded: `choose_notebook` (the newest; the summary says which and why); submitted/ is never written to.
   The result, every check's verdict and what each cell printed, is written atomically to
   `results/CH/<student>.json` with the submission's SHA-256: a later run skips a submission whose result
   matches it (unless `--force`), so a killed run loses at most the submissions in flight, and a
   resubmission is graded again. `--shard I/N` grades a deterministic slice (students sorted by id) and
   writes result files only, for a cluster (no sqlite across nodes).
   Timed checks hold their GPU alone: every check takes a lock of the GPU it runs on, shared for quiet
   checks, exclusive for timed ones, with a turnstile so that a waiting timed check is not starved.
2. **collect** (`collect`): nbgrader's own `autograde` (sanitize, restore the test cells from the
   gradebook, save the grades, late penalties) with IsolatedRegrade replaying the result files instead
   of grading (FLASHCOURSE_REPLAY), reading the graded notebooks from a staging tree (`_stage`): one
   process writes the gradebook, and collecting twice, or shards in any order, gives the same gradebook.
   Then a summary: a table per student and check, the submissions that need attention and why, and
   `results/CH/checks.csv`.
"""
from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime
import functools
import glob
import hashlib
import json
import os
import re
import sys
import tempfile
import time

from autograder.judge import testcells
from autograder.judge.gpulock import GpuLock, GpuTurns, gpu_name
from autograder.nbgrader.run import require_course_config
from autograder.judge.testcells import grade_cells
from autograder.judge.verdict import ATTENTION, Kind, Verdict

# 2: each check is a Verdict's fields (kind, detail, measurement, seed; autograder.judge.verdict), each test cell lists
# its calls; a result file of another version is not current, so its submission is graded again
VERSION = 2


class _Stdout:
    """The `out=` default of the functions here: whatever `sys.stdout` is when they write (a default of `sys.stdout`
    itself would keep the stream of import time, which a caller such as a test's capture may since have closed)."""

    def __getattr__(self, name):
        return getattr(sys.stdout, name)


STDOUT = _Stdout()


# ---------- what to grade ----------

def students(course: str, chapter: str) -> list[str]:
    base = os.path.join(course, "submitted")
    if not os.path.isdir(base):
        return []
    return sorted(s for s in os.listdir(base) if os.path.isdir(os.path.join(base, s, chapter)))


def shard(items: list[str], spec: str | None) -> list[str]:
    """`I/N`: the I-th of N deterministic slices (I from 0), of the sorted list."""
    if not spec:
        return items
    m = re.fullmatch(r"(\d+)/(\d+)", spec)
    if not m or not 0 <= int(m.group(1)) < int(m.group(2)):
        raise SystemExit(f"--shard {spec!r}: expected I/N with 0 <= I < N (e.g. 0/2 and 1/2)")
    i, n = int(m.group(1)), int(m.group(2))
    return sorted(items)[i::n]


@dataclasses.dataclass(frozen=True)
class Choice:
    """Which notebook of a submission folder is graded, and why (what the summary and the result file say).

    The folder is never written to (nbgrader's submitted/ is the instructor's record): nbgrader is handed a copy
    at the assignment's name in a staging tree (`_stage`). The newest notebook wins (by modification time; ties
    go to the assignment's own name, then to the first name in sorted order). Where there are several, notebooks
    that hold none of the chapter's graded cells (a scratch Untitled.ipynb) are passed over, unless no notebook
    holds any."""
    path: str | None  # the notebook graded (absolute), or None
    why: str  # "" for CH.ipynb alone in its folder, else what the summary says about the choice
    mtime_ns: int | None = None
    others: tuple[str, ...] = ()  # the folder's other notebooks (names)

    @property
    def name(self) -> str | None:
        return os.path.basename(self.path) if self.path else None

    def to_json(self) -> dict:
        return {"file": self.name, "why": self.why, "mtime_ns": self.mtime_ns, "others": list(self.others)}


def choose_notebook(course: str, chapter: str, student: str) -> Choice:
    """The notebook of submitted/<student>/<chapter>/ to grade (see Choice); reads the folder, writes nothing."""
    d = os.path.join(course, "submitted", student, chapter)
    try:
        names = sorted(n for n in os.listdir(d) if n.endswith(".ipynb") and not n.startswith(".")
                       and os.path.isfile(os.path.join(d, n)))
    except OSError:
        names = []
    if not names:
        return Choice(None, f"no notebook in submitted/{student}/{chapter}/")
    own = f"{chapter}.ipynb"
    mtime = {n: os.stat(os.path.join(d, n)).st_mtime_ns for n in names}
    pool, foreign = names, []
    if len(names) > 1:
        ids = _graded_ids(course, chapter)
        mine = [n for n in names if _holds_any(os.path.join(d, n), ids)]
        if mine:
            pool, foreign = mine, [n for n in names if n not in mine]
    pick = min(pool, key=lambda n: (-mtime[n], n != own, n))
    others = tuple(n for n in names if n != pick)
    if len(names) == 1:
        why = "" if pick == own else f"renamed: graded {pick}"
    else:
        tied = [n for n in pool if n != pick and mtime[n] == mtime[pick]]
        why = f"{len(names)} notebooks: graded the newest, {pick}"
        if tied:
            why += f" (as new as {', '.join(tied)}: chosen by name)"
        rest = [n for n in others if n not in foreign]
        if rest:
            why += f"; not graded: {', '.join(rest)}"
        if foreign:
            why += f"; not this chapter's notebook: {', '.join(foreign)}"
    return Choice(os.path.join(d, pick), why, mtime[pick], others)


def find_notebook(course: str, chapter: str, student: str) -> tuple[str | None, list[str]]:
    """The notebook to grade, and what the instructor is told about the choice (choose_notebook)."""
    c = choose_notebook(course, chapter, student)
    return c.path, [c.why] if c.why else []


@functools.lru_cache(maxsize=64)
def _graded_ids_of(path: str, mtime_ns: int) -> frozenset:
    import nbformat
    nb = nbformat.read(path, 4)
    return frozenset(c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in nb.cells) - {None}


def _graded_ids(course: str, chapter: str) -> frozenset:
    """The grade ids of the chapter's source notebook (its graded and read-only cells)."""
    path = os.path.join(course, "source", chapter, f"{chapter}.ipynb")
    try:
        return _graded_ids_of(path, os.stat(path).st_mtime_ns)
    except (OSError, ValueError):
        return frozenset()


def _holds_any(path: str, ids: frozenset) -> bool:
    """Whether a notebook file holds one of the chapter's cells (by nbgrader grade id)."""
    try:
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
        return any(isinstance(c, dict) and (c.get("metadata") or {}).get("nbgrader", {}).get("grade_id") in ids
                   for c in nb.get("cells", []))
    except (OSError, ValueError, AttributeError, TypeError):
        return False


def source_notebook(course: str, chapter: str):
    import nbformat
    return nbformat.read(os.path.join(course, "source", chapter, f"{chapter}.ipynb"), 4)


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ---------- phase 1: grade one submission ----------

def grade_submission(course: str, chapter: str, student: str, cells_of_source: dict | None = None) -> dict:
    """Grade one submission (in this process: it is the judge); the result as written to its file."""
    import nbformat

    from course import mode

    from autograder.declare.submission import solution_cells
    t0 = time.perf_counter()
    cells_of_source = cells_of_source or grade_cells(source_notebook(course, chapter))
    choice = choose_notebook(course, chapter, student)
    path, attention = choice.path, [choice.why] if choice.why else []
    result = {"version": VERSION, "student": student, "chapter": chapter, "mode": mode.MODE,
              "device": mode.device_name() if mode.GPU else "cpu", "graded_at": _now(), "notebook": None,
              "sha256": None, "choice": choice.to_json(), "attention": attention, "cells": {}, "solutions": {},
              "checks": []}
    nb = None
    if path is not None:
        result["notebook"], result["sha256"] = os.path.relpath(path, course), sha256(path)
        try:
            nb = nbformat.read(path, 4)
        except Exception as e:  # noqa: BLE001  (not JSON, not a notebook: this submission only)
            attention.append(f"not a valid notebook ({type(e).__name__}: {str(e)[:200]})")
    if nb is None:
        why_none = attention[-1] if attention else "no notebook to grade"
        for gid, g in cells_of_source.items():
            result["cells"][gid] = {"passed": False, "text": f"not graded: {why_none}", "not_graded": False,
                                    "calls": [list(c) for c in g["calls"]], "points": g["points"]}
        result["seconds"] = round(time.perf_counter() - t0, 2)
        return result
    present = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    for gid, g in cells_of_source.items():
        if gid not in present:
            attention.append(f"test cell {gid} was deleted: graded from the instructor's copy")
        elif _released(present[gid].source) != _released(g["source"]):
            attention.append(f"test cell {gid} was edited: graded from the instructor's copy")
    pairs = solution_cells(nb)
    if not nb.cells:
        attention.append("the notebook has no cells")
    turns = GpuTurns(GpuLock(gpu_name()) if mode.GPU else None)
    graded = testcells.grade([c for _, c in pairs], {gid: g["calls"] for gid, g in cells_of_source.items()},
                             turns=turns)
    for v in graded.verdicts.values():
        result["checks"].append(v.to_json(limit=4000))
        if v.kind in ATTENTION:
            attention.append(f"{v.exercise} [{v.check}]: {v.render().splitlines()[0][:160]}")
    for i, (cell, _) in enumerate(pairs):
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid and graded.printed.get(i):
            result["solutions"][gid] = graded.printed[i][:20000]
    for gid, g in cells_of_source.items():
        result["cells"][gid] = dict(graded.cells[gid].to_json(), points=g["points"])
    result["seconds"] = round(time.perf_counter() - t0, 2)
    return result


def _released(source: str) -> str:
    """A test cell as students get it: nbgrader's hidden-test regions removed (they are in the source only)."""
    return re.sub(r"[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?", "", source, flags=re.S).strip()


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def write_atomic(path: str, data: dict) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".part-")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_result(path: str) -> dict | None:
    try:
        with open(path) as f:
            r = json.load(f)
        return r if isinstance(r, dict) and r.get("version") == VERSION else None
    except (OSError, ValueError):
        return None


def is_current(course: str, chapter: str, student: str, result: dict | None) -> bool:
    """Does this result belong to the submission as it is now? Not after a resubmission: another notebook is
    the one to grade now (a newer one, under any name), or the graded one is newer than when it was graded, or
    its content differs (SHA-256)."""
    if result is None:
        return False
    c = choose_notebook(course, chapter, student)
    if c.path is None:
        return result.get("sha256") is None
    if os.path.relpath(c.path, course) != result.get("notebook"):
        return False
    graded_mtime = (result.get("choice") or {}).get("mtime_ns")
    if graded_mtime is not None and c.mtime_ns is not None and c.mtime_ns > graded_mtime:
        return False
    return sha256(c.path) == result.get("sha256")


# ---------- phase 1 for a class: parallel workers ----------

_WORKER: dict = {}


GPU_WORKER_ENV = {"FLASHCOURSE_MODE": "gpu", "FLASHCOURSE_MODE_PROBED": "1"}


def _init_worker(gpus, course: str, chapter: str) -> None:
    """In each worker process, before CUDA: the GPU it grades on.

    CUDA reads CUDA_VISIBLE_DEVICES once, when the driver starts. A spawned worker imports this module (and
    `course`) before it runs this function, so that import must not start the driver: the parent passes
    GPU_WORKER_ENV (the mode is known, no probe). Measured on two H100s (2026-11-26), where the probe ran: every
    judge on GPU 0, half of the runners on GPU 1 reading the judge's buffers across the link, and their timed
    checks failed. Hence the check below: a worker that sees more than its one GPU stops the run, loudly."""
    if gpus is not None:
        gpu = str(gpus.get())
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
        import torch
        seen = torch.cuda.device_count()
        if seen != 1:
            raise RuntimeError(f"a grading worker meant for GPU {gpu} sees {seen} GPUs: CUDA started before "
                               "CUDA_VISIBLE_DEVICES was set (see autograder.instructor.classgrade._init_worker)")
    os.chdir(course)  # the sandbox hides the instructor's files of the working directory: this course's
    _WORKER.update(course=course, chapter=chapter)


def _grade_to_file(student: str, out_dir: str) -> dict:
    path = os.path.join(out_dir, f"{student}.json")
    before = read_result(path)
    r = grade_submission(_WORKER["course"], _WORKER["chapter"], student)
    resubmitted = resubmission(before, r)
    if resubmitted:
        r["resubmitted"] = resubmitted
        r["attention"].insert(0, resubmitted)
    write_atomic(path, r)
    return _brief(r)


def resubmission(before: dict | None, now: dict) -> str:
    """What changed since an earlier result of the same student ("" if nothing did: a --force regrade)."""
    if not before or not now.get("notebook"):
        return ""
    was, name = os.path.basename(before.get("notebook") or "") or None, os.path.basename(now["notebook"])
    if was is None:
        return f"resubmitted: {name} graded (there was no notebook before)"
    if was != name:
        return f"resubmitted: {name} graded, newer than {was} (graded before)"
    if before.get("sha256") != now.get("sha256"):
        return f"resubmitted: {name} changed since it was graded, graded again"
    m0, m1 = (before.get("choice") or {}).get("mtime_ns"), (now.get("choice") or {}).get("mtime_ns")
    if m0 is not None and m1 is not None and m1 > m0:
        return f"resubmitted: {name} saved again since it was graded (same content), graded again"
    return ""


def _brief(r: dict) -> dict:
    got = sum(c["points"] for c in r["cells"].values() if c["passed"])
    total = sum(c["points"] for c in r["cells"].values())
    return {"student": r["student"], "got": got, "total": total, "seconds": r.get("seconds", 0.0),
            "attention": r.get("attention", [])}


def visible_gpus() -> list[str]:
    from course import mode
    if not mode.GPU:
        return []
    v = os.environ.get("CUDA_VISIBLE_DEVICES")
    if v is not None:
        return [x.strip() for x in v.split(",") if x.strip()]
    import subprocess
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
        n = len([ln for ln in out.splitlines() if ln.startswith("GPU ")])
    except (OSError, subprocess.SubprocessError):
        n = 1
    return [str(i) for i in range(max(1, n))]


# `--jobs`'s default on GPUs, as measured on H100s (BENCHMARKS.md: 4 per GPU on two, 6 on one; quiet checks are
# mostly compiles, on the CPU), at most one worker per usable CPU core
WORKERS_PER_GPU = 4


def grade_class(course: str, chapter: str, *, jobs: int | None = None, shard_spec: str | None = None,
                results: str | None = None, force: bool = False, out=STDOUT,
                collector: Collector | None = None) -> tuple[str, list[dict]]:
    """Phase 1 over the class (or one shard): the results folder and one brief per graded submission. A
    `collector` (not with a shard) is handed the results kept from an earlier run and each new one as it comes,
    and started once the workers are about to start."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    course = os.path.abspath(course)
    results = os.path.abspath(results or os.path.join(course, "results", chapter))
    everyone = students(course, chapter)
    mine = shard(everyone, shard_spec)
    before = {s: read_result(os.path.join(results, f"{s}.json")) for s in mine}
    todo = [s for s in mine if force or not is_current(course, chapter, s, before[s])]
    changed = 0 if force else sum(1 for s in todo if before[s] is not None)  # resubmitted since graded
    gpus = visible_gpus()
    if jobs is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        # the cores this process may use (Slurm's binding included); on GPUs WORKERS_PER_GPU workers each
        jobs = min(cores, WORKERS_PER_GPU * len(gpus)) if gpus else cores
    jobs = max(1, min(jobs, len(todo) or 1))
    from autograder.boundary import sandbox
    boxed, why = sandbox.status()
    if not boxed and todo:  # said before any student code runs, and again in the summary
        print(f"WARNING: NO SANDBOX ({why}): student code will run with this user's rights, able to read and write "
              "what this user can. Grade as root on Linux for the sandbox.", file=out, flush=True)
    where = ", ".join("GPU " + g for g in gpus) if gpus else "CPU (no GPU: timed checks are not graded)"
    print(f"flashcourse: {chapter}: {len(mine)} submissions{f' in shard {shard_spec}' if shard_spec else ''}, "
          f"{len(mine) - len(todo)} already graded (kept; --force regrades), {len(todo)} to grade"
          f"{f' ({changed} resubmitted since graded)' if changed else ''} with "
          f"{jobs} worker(s) on {where}", file=out, flush=True)
    briefs, failed, t0 = [], 0, time.perf_counter()
    if collector is not None:
        for s in sorted(set(mine) - set(todo)):
            collector.add(s)
    if not todo:
        return results, briefs
    ctx = multiprocessing.get_context("spawn")  # fresh workers: no CUDA state, their own GPU
    queue = None
    if gpus:
        os.environ.update(GPU_WORKER_ENV)  # inherited by the workers spawned below: no CUDA before their GPU is set
        queue = ctx.Queue()
        for k in range(jobs):
            queue.put(gpus[k % len(gpus)])
    if collector is not None:
        collector.start()  # after the environment above is set: its replays copy os.environ
    with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_worker,
                             initargs=(queue, course, chapter)) as pool:
        futures = {pool.submit(_grade_to_file, s, results): s for s in todo}
        for k, f in enumerate(as_completed(futures), 1):
            s = futures[f]
            try:
                b = f.result()
            except Exception as e:  # noqa: BLE001  (a worker died: this submission is left for the next run)
                failed += 1
                print(f"  [{k}/{len(todo)}] {s}: NOT GRADED ({type(e).__name__}: {str(e)[:200]}); run again to "
                      "retry", file=out, flush=True)
                continue
            briefs.append(b)
            if collector is not None:
                collector.add(s)
            el = time.perf_counter() - t0
            eta = el / k * (len(todo) - k)
            print(f"  [{k}/{len(todo)}] {s}: {b['got']:g}/{b['total']:g} in {b['seconds']:.1f} s"
                  f"{' (needs attention)' if b['attention'] else ''} | done {k - failed}, failed {failed}, "
                  f"left {len(todo) - k}, ETA {eta:.0f} s", file=out, flush=True)
    if failed:
        print(f"flashcourse: {failed} submission(s) NOT graded (a worker failed): run again to retry them",
              file=out, flush=True)
    return results, briefs


# ---------- phase 2: collect into the gradebook (one writer) ----------

GRADEBOOK_LOCK = ".flashcourse-gradebook.lock"


def _nbgrader_writer(args: list[str], course: str, replay_dir: str | None = None, background: bool = False,
                     out=STDOUT, stage=None):
    """nbgrader, the gradebook's one writer: a subprocess holding an flock on the course's gradebook lock. The
    child inherits the locked descriptor, so a child orphaned by a killed `flashcourse` keeps the lock until it
    ends, and the next run waits for it instead of writing beside it (sqlite: jupyter/nbgrader#174). With
    `replay_dir` nbgrader's execute step replays the result files there (FLASHCOURSE_REPLAY): no student code
    runs, no GPU is opened (CUDA_VISIBLE_DEVICES is emptied), no GPU lock is taken. `background` (a batch
    recorded while judges grade): at a lower CPU priority. `stage`: a context manager made once the lock is held,
    around nbgrader's run, giving extra arguments (`_stage`)."""
    import fcntl
    import shutil
    import subprocess

    from autograder.nbgrader.run import GUARD_MODULE, ROOT
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # nbgrader runs `alembic`
    if replay_dir is not None:
        env["FLASHCOURSE_REPLAY"] = replay_dir
        env["CUDA_VISIBLE_DEVICES"] = ""
    cmd = [sys.executable, "-m", GUARD_MODULE, *args]  # nbgrader itself, refused without the course config
    if background and shutil.which("nice"):
        cmd = ["nice", "-n", "10", *cmd]
    fd = os.open(os.path.join(course, GRADEBOOK_LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"flashcourse: waiting for another writer of {course}/gradebook.db to finish", file=out, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        with (stage() if stage else contextlib.nullcontext([])) as extra:
            r = subprocess.run(cmd + extra, cwd=course, env=env, capture_output=True, text=True, pass_fds=(fd,))
    finally:
        os.close(fd)
    log = os.environ.get("FLASHCOURSE_NBGRADER_LOG")
    if log:  # the whole of nbgrader's output, for diagnosis
        with open(log, "a") as f:
            f.write((r.stdout or "") + (r.stderr or ""))
    return r


def _generate(course: str, chapter: str, out=STDOUT) -> None:
    """The assignment and its test cells, in the gradebook (once per collect, before any replay)."""
    with tempfile.TemporaryDirectory() as tmp:
        args = ["generate_assignment", chapter, "--force", f"--CourseDirectory.release_directory={tmp}"]
        r = _nbgrader_writer(args, course, out=out)
    if r.returncode != 0:
        tail = "\n".join(((r.stdout or "") + (r.stderr or "")).splitlines()[-30:])
        raise SystemExit(f"nbgrader {' '.join(args)} failed (exit {r.returncode}):\n{tail}")


def _key(result: dict) -> tuple:
    """Which result of a student was recorded: the notebook it graded and when."""
    return result.get("sha256"), result.get("graded_at")


def _record(course: str, chapter: str, results: str, batch: list[str], background: bool = False,
            out=STDOUT) -> tuple[set, object, list[str]]:
    """One replay (`nbgrader autograde CH --force` on a staging tree of `batch` alone: `_stage`) recording
    `batch`, students with a current result. Returns the students it recorded, nbgrader's process and its error
    lines. nbgrader goes on past a student it cannot record and names them at the end ("... for student 'x'"); a
    failure naming no student (the database, a crash) counts against the whole batch."""
    staged: dict[str, str] = {}  # student -> why not staged
    args = ["autograde", chapter, "--force"]
    r = _nbgrader_writer(args, course, replay_dir=results, background=background, out=out,
                         stage=lambda: _stage(course, chapter, results, batch, staged))
    text = (r.stdout or "") + (r.stderr or "")
    errors = [ln.split("] ", 1)[-1] for ln in text.splitlines() if "ERROR" in ln and "checksum" not in ln]
    failed = set(re.findall(r"There was an error processing assignment '[^']*' for student '([^']*)'", text))
    failed &= set(batch)
    if r.returncode != 0 and not failed:  # a failure that names no student: the whole batch
        failed = set(batch)
    for s, why in sorted(staged.items()):
        if why:
            failed.add(s)
            errors.append(f"{s}: not recorded: {why}")
    return set(batch) - failed, r, errors


STAGING = ".flashcourse-staging-"  # in the course directory, one per replay, removed after it


@contextlib.contextmanager
def _stage(course: str, chapter: str, results: str, batch: list[str], staged: dict):
    """What nbgrader's autograde reads as its submitted/ for one replay: a staging tree of the batch only
    (`--CourseDirectory.submitted_directory`), so that nothing is ever written into submitted/ and everyone else
    is left out. Each student's folder is copied (timestamp.txt and other files, for nbgrader's late penalty and
    its copies into autograded/) without its notebooks, and the notebook the judge graded is copied in at the
    assignment's name; one whose copy no longer has the graded SHA-256 is left out (`staged[s]` says why: it is
    not recorded, and the summary says it changed since it was graded). Called holding the gradebook lock, so a
    staging tree left by a killed run is no longer in use and is removed first. Private (mode 0700): a runner's
    sandboxed user cannot read it."""
    import shutil
    for old in glob.glob(os.path.join(glob.escape(course), STAGING + "*")):
        shutil.rmtree(old, ignore_errors=True)
    top = tempfile.mkdtemp(prefix=STAGING, dir=course)
    try:
        for s in batch:
            staged[s] = ""
            r = read_result(os.path.join(results, f"{s}.json"))
            dest = os.path.join(top, s, chapter)
            try:
                shutil.copytree(os.path.join(course, "submitted", s, chapter), dest, symlinks=True,
                                ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints", "__pycache__"))
                if r and r.get("notebook"):
                    nb = os.path.join(dest, f"{chapter}.ipynb")
                    shutil.copy2(os.path.join(course, r["notebook"]), nb)
                    if sha256(nb) != r.get("sha256"):
                        os.remove(nb)
                        staged[s] = "its notebook changed since it was graded"
            except OSError as e:
                staged[s] = f"could not copy its submission ({type(e).__name__}: {e})"
        # relative to the course root: nbgrader puts this name in a regular expression unescaped, and mkdtemp's
        # names are letters, digits and _ after the prefix
        yield [f"--CourseDirectory.submitted_directory={os.path.relpath(top, course)}"]
    finally:
        shutil.rmtree(top, ignore_errors=True)


def collect(course: str, chapter: str, results: str | None = None, out=STDOUT) -> int:
    """Merge the result files into gradebook.db through nbgrader autograde (replaying, not grading); print
    the summary; 0 if every submission with a result was recorded."""
    course = os.path.abspath(course)
    require_course_config(course)
    results = os.path.abspath(results or os.path.join(course, "results", chapter))
    _generate(course, chapter, out=out)
    return record_and_summarise(course, chapter, results, {}, out=out)


def record_and_summarise(course: str, chapter: str, results: str, recorded: dict | None = None,
                         out=STDOUT) -> int:
    """The last replay, of every current result not yet in `recorded` (student -> _key of the result a batch
    recorded), then the summary over everyone, as a collect of the whole class prints it."""
    everyone = students(course, chapter)
    have = {s: read_result(os.path.join(results, f"{s}.json")) for s in everyone}
    current = {s: r for s, r in have.items() if is_current(course, chapter, s, r)}
    stale = sorted(s for s, r in have.items() if r is not None and s not in current)
    missing = sorted(s for s, r in have.items() if r is None)
    todo = sorted(s for s, r in current.items() if (recorded or {}).get(s) != _key(r))
    ok = True
    if todo:
        _, r, errors = _record(course, chapter, results, todo, out=out)
        if r.returncode != 0 or errors:
            ok = r.returncode == 0
            print("nbgrader reported:\n  " + "\n  ".join(errors[-20:]), file=out)
    disagree = summary(course, chapter, results, current, stale, missing, out=out)
    return 0 if ok and not disagree else 1


class Collector:
    """Records finished submissions in the gradebook while the judges grade the rest: one background thread,
    one nbgrader writer at a time. A batch (one replay, everyone else excluded) starts once `batch` new current
    results wait (default max(10, 10% of the class); FLASHCOURSE_COLLECT_BATCH), or `every` seconds after the
    last batch if any wait (default 30; FLASHCOURSE_COLLECT_EVERY). generate_assignment runs once, before the
    first batch. A batch's failures are printed and left unrecorded: the final replay (`record_and_summarise`)
    retries them.
    The replay runs no student code and takes no GPU lock (it is CPU work in a subprocess, niced)."""

    def __init__(self, course: str, chapter: str, results: str, *, batch: int | None = None,
                 every: float | None = None, out=STDOUT):
        import threading
        self.course, self.chapter, self.results, self.out = course, chapter, results, out
        n = len(students(course, chapter))
        self.batch = max(1, batch or int(os.environ.get("FLASHCOURSE_COLLECT_BATCH") or 0)
                         or max(10, -(-n // 10)))
        self.every = every or float(os.environ.get("FLASHCOURSE_COLLECT_EVERY") or 30)
        self.recorded: dict[str, tuple] = {}
        self.batches: list[dict] = []
        self.generated = False
        self._pending: set[str] = set()
        self._stop = False
        self._cv = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="flashcourse-collector", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def add(self, student: str) -> None:
        with self._cv:
            self._pending.add(student)
            self._cv.notify()

    def stop(self) -> None:
        """Grading has ended: a batch in flight is finished (not killed), no new one starts."""
        with self._cv:
            self._stop = True
            self._cv.notify()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        last = time.monotonic()
        while True:
            with self._cv:
                while not self._stop and not (len(self._pending) >= self.batch or
                                              (self._pending and time.monotonic() - last >= self.every)):
                    self._cv.wait(timeout=max(0.1, self.every - (time.monotonic() - last)) if self._pending else None)
                if self._stop:
                    return
                take = sorted(self._pending)
                self._pending.clear()
            try:
                self._batch(take)
            except BaseException as e:  # noqa: BLE001  (never silent, never fatal: the final replay redoes it)
                print(f"flashcourse: gradebook batch failed ({type(e).__name__}: {str(e)[:300]}); its students are "
                      "recorded at the end", file=self.out, flush=True)
            last = time.monotonic()

    def _batch(self, take: list[str]) -> None:
        t0 = time.perf_counter()
        keys = {}
        for s in take:
            r = read_result(os.path.join(self.results, f"{s}.json"))
            if is_current(self.course, self.chapter, s, r):
                keys[s] = _key(r)
        if not keys:
            return
        if not self.generated:
            _generate(self.course, self.chapter, out=self.out)
            self.generated = True
        done, r, errors = _record(self.course, self.chapter, self.results, sorted(keys), background=True,
                                  out=self.out)
        for s in done:
            self.recorded[s] = keys[s]
        k = len(self.batches) + 1
        self.batches.append({"students": len(keys), "recorded": len(done), "exit": r.returncode,
                             "seconds": round(time.perf_counter() - t0, 2)})
        print(f"  gradebook: batch {k} recorded {len(done)}/{len(keys)} submissions in "
              f"{time.perf_counter() - t0:.1f} s while grading ({len(self.recorded)} recorded so far)",
              file=self.out, flush=True)
        failed = sorted(set(keys) - done)
        if failed or r.returncode != 0:
            print(f"  gradebook: batch {k}: nbgrader exit {r.returncode}, NOT recorded: {', '.join(failed) or '-'} "
                  "(retried at the end)\n    " + "\n    ".join(errors[-8:]), file=self.out, flush=True)
        elif errors:  # recorded, but nbgrader said something: shown, as collect shows it
            print(f"  gradebook: batch {k}: nbgrader reported:\n    " + "\n    ".join(errors[-8:]), file=self.out,
                  flush=True)


def autograde_class(course: str, chapter: str, *, jobs: int | None = None, results: str | None = None,
                    force: bool = False, batch: int | None = None, every: float | None = None,
                    out=STDOUT) -> tuple[int, dict]:
    """`flashcourse autograde CH` without a shard: grade the class and record it in the gradebook as results come
    (Collector), then record the rest and summarise as `collect` does. Returns collect's exit status and the
    timings: grade_s (grading), collect_s (what remained once grading ended), total_s, batches."""
    course = os.path.abspath(course)
    require_course_config(course)  # before any submission is graded: nbgrader must replay the judge's verdicts
    results = os.path.abspath(results or os.path.join(course, "results", chapter))
    t0 = time.perf_counter()
    collector = Collector(course, chapter, results, batch=batch, every=every, out=out)
    try:
        grade_class(course, chapter, jobs=jobs, results=results, force=force, out=out, collector=collector)
    finally:
        collector.stop()  # on an exception too: no writer is left running behind it
    t1 = time.perf_counter()
    if not collector.generated:
        _generate(course, chapter, out=out)
    rc = record_and_summarise(course, chapter, results, collector.recorded, out=out)
    t2 = time.perf_counter()
    return rc, {"grade_s": round(t1 - t0, 1), "collect_s": round(t2 - t1, 1), "total_s": round(t2 - t0, 1),
                "batches": collector.batches}


def summary(course, chapter, results, current: dict, stale: list, missing: list, out=STDOUT) -> int:
    """The table (student x test cell), what needs attention, and checks.csv beside the results; the number of
    students whose gradebook score differs from the judge's (each named, never silent)."""
    from nbgrader.api import Gradebook
    scores = {}
    with Gradebook(f"sqlite:///{os.path.join(course, 'gradebook.db')}") as gb:
        for s in current:
            try:
                sub = gb.find_submission_notebook(chapter, chapter, s)
                scores[s] = {g.name: g.score for g in sub.grades}
            except Exception:  # noqa: BLE001  (not recorded: said below)
                scores[s] = None
    verdicts = {s: [Verdict.from_json(c) for c in r["checks"]] for s, r in current.items()}
    not_graded = sum(1 for vs in verdicts.values() for v in vs if v.kind is Kind.NOT_GRADED)
    if not_graded:
        print(f"WARNING: {not_graded} checks were NOT GRADED (no GPU on the machine that graded them, or a GPU "
              "that cannot run them: see each check's message): they score 0 until graded where they can run",
              file=out)
    cells = sorted({g for r in current.values() for g in r["cells"]})
    disagree: list[tuple[str, str]] = []
    print(f"\n{chapter}: {len(current)} submissions recorded in the gradebook", file=out)
    print("student".ljust(16) + "score".rjust(9) + "  failed test cells", file=out)
    for s in sorted(current):
        sc = scores.get(s)
        total = sum(c["points"] for c in current[s]["cells"].values())
        got = sum(v for v in sc.values() if v) if sc else 0.0
        judged = sum(c["points"] for c in current[s]["cells"].values() if c["passed"])
        if sc is not None and abs(got - judged) > 1e-9:  # the gradebook was not filled from the judge's verdicts
            disagree.append((s, f"the gradebook says {got:g}/{total:g} but the judge gave {judged:g}: nbgrader did "
                                "not replay the judge's verdicts (is this course's nbgrader_config.py in place?)"))
        bad = [g for g in cells if g in current[s]["cells"] and not current[s]["cells"][g]["passed"]]
        shown = f"{got:g}/{total:g}" if sc is not None else "NOT RECORDED"
        if sc is not None and abs(got - judged) > 1e-9:
            shown = f"{got:g}?{judged:g}"
        print(s[:15].ljust(16) + shown.rjust(9) + "  " + (", ".join(bad) if bad else "-"), file=out)
    attention = disagree + [(s, why) for s in sorted(current) for why in current[s].get("attention", [])]
    attention += [(s, "not recorded in the gradebook (see nbgrader's messages)") for s in sorted(current)
                  if scores.get(s) is None]
    attention += [(s, "submission changed since it was graded: run autograde again") for s in stale]
    attention += [(s, "not graded yet (no result): run autograde (or its shard) again") for s in missing]
    if attention:
        print(f"\nneeds attention ({len(attention)}):", file=out)
        for s, why in attention:
            print(f"  {s}: {why}", file=out)
    path = os.path.join(results, "checks.csv")
    os.makedirs(results, exist_ok=True)
    with open(path + ".part", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", "exercise", "check", "passed", "not_graded", "seconds", "gbps", "tflops",
                    "fraction", "device", "message", "kind", "need"])
        for s in sorted(current):
            for v in verdicts[s]:
                m = v.measurement
                text = v.render()
                w.writerow([s, v.exercise, v.check, int(v.passed), int(v.kind is Kind.NOT_GRADED), round(v.seconds, 3),
                            m.value if m and m.unit == "GB/s" else "", m.value if m and m.unit == "TFLOP/s" else "",
                            m.fraction if m else "", current[s].get("device", ""),
                            text.splitlines()[0][:300] if text else "", v.kind.value, m.need if m else ""])
    os.replace(path + ".part", path)
    print(f"\nper check: {path}", file=out)
    if disagree:
        print(f"ERROR: {len(disagree)} gradebook score(s) differ from the judge's: do not release these grades",
              file=out)
    return len(disagree)
