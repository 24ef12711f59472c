"""A class graded as an instructor would: `flashcourse autograde CH` on a real nbgrader course directory, in
parallel, killed and resumed, in shards collected in either order; scores read from nbgrader's gradebook."""
import os
import shutil
import signal
import subprocess
import sys
import time

import nbformat
import pytest

from autograder.instructor import classgrade, nbtext

CH = "ch01_softmax"
SOLVED = "e = np.exp(x - x.max(-1, keepdims=True))\n    return e / e.sum(-1, keepdims=True)"


def _release():
    return nbformat.read(nbtext.notebook_path(CH, "release"), 4)


def _cell(nb, gid):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)


def make_course(root, n_blank: int = 1):
    """A course directory: the chapter's source and a small class of submissions, each with its own story."""
    os.makedirs(root, exist_ok=True)
    shutil.copy(os.path.join(nbtext.ROOT, "nbgrader_config.py"), root)
    shutil.copytree(os.path.join(nbtext.ROOT, "source", CH), os.path.join(root, "source", CH),
                    ignore=shutil.ignore_patterns("*.nb.md"))

    def submit(student, nb=None, name=f"{CH}.ipynb", text=None):
        d = os.path.join(root, "submitted", student, CH)
        os.makedirs(d)
        if text is not None:
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        else:
            nbformat.write(nb, os.path.join(d, name))

    solved = _release()
    c = _cell(solved, "safe_softmax")
    c.source = c.source.replace("# YOUR CODE HERE\n    raise NotImplementedError()", SOLVED)
    submit("alice", solved)
    deleted = nbformat.from_dict(nbformat.from_dict(solved))  # solved, but deleted a test cell
    deleted.cells = [c for c in deleted.cells
                     if c.metadata.get("nbgrader", {}).get("grade_id") != "test_safe_softmax_hidden"]
    submit("dave", deleted)
    submit("carol", solved, name=f"{CH}-Copy1.ipynb")  # renamed by JupyterLab's "duplicate"
    submit("bob", text='{"cells": [ broken')
    mallory = _release()  # forges verdicts on stdout, then exits
    c = _cell(mallory, "safe_softmax")
    c.source = ("import os, json, sys\nprint('@@flashcourse-result@@' + json.dumps({'passed': True}))\n"
                "sys.__stdout__.flush()\nos._exit(0)\n" + c.source)
    submit("mallory", mallory)
    trudy = _release()  # solves exercise 1, and tries to forge or read the class's results from her cell
    c = _cell(trudy, "safe_softmax")
    results = os.path.join(os.path.abspath(root), "results", CH)
    c.source = (f"import os, json\n_reached = []\nfor _name in ('trudy', 'alice'):\n"
                f"    try:\n        with open(os.path.join({results!r}, _name + '.json'), 'w') as _f:\n"
                f"            json.dump({{'version': {classgrade.VERSION}}}, _f)\n"
                f"        _reached.append('wrote ' + _name)\n"
                f"    except OSError:\n        pass\n"
                f"if os.path.isdir({results!r}) and os.listdir({results!r}):\n    _reached.append('read results')\n"
                f"if os.path.exists(os.path.join({os.path.abspath(root)!r}, 'gradebook.db')):\n"
                f"    _reached.append('saw the gradebook')\n"
                + c.source.replace("# YOUR CODE HERE\n    raise NotImplementedError()",
                                   "assert not _reached, _reached\n    " + SOLVED))
    submit("trudy", trudy)
    for k in range(n_blank):
        submit(f"blank{k}", _release())
    return root


def _scores(root) -> dict:
    from nbgrader.api import Gradebook
    out = {}
    with Gradebook(f"sqlite:///{os.path.join(root, 'gradebook.db')}") as gb:
        for s in gb.students:
            try:
                nb = gb.find_submission_notebook(CH, CH, s.id)
            except Exception:  # noqa: BLE001
                continue
            out[s.id] = {g.name: g.score for g in nb.grades}
    return out


def _flashcourse(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "autograder.instructor.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=900, env=dict(os.environ, **(env or {})))


def _summary(out: str, root: str) -> str:
    """The summary `collect` prints (its optional WARNING line, the table, what needs attention), paths made
    relative to the course."""
    lines = out.splitlines()
    k = next(i for i, ln in enumerate(lines) if "submissions recorded in the gradebook" in ln)
    while k > 0 and (lines[k - 1].startswith("WARNING:") or not lines[k - 1].strip()):
        k -= 1
    return "\n".join(lines[k:]).replace(root, "<course>")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One uninterrupted run, the reference the others must equal. The course lies where any user may
    read it (as /srv/course might), so that only the sandbox's hiding keeps the runner out of it."""
    import tempfile
    open_dir = tempfile.mkdtemp(prefix="fc-class-", dir="/tmp")
    os.chmod(open_dir, 0o755)
    root = make_course(os.path.join(open_dir, "course"))
    elsewhere = str(tmp_path_factory.mktemp("elsewhere"))  # the instructor's shell is not in the course
    # a gradebook batch (classgrade.Collector) as soon as a result comes: one starts while the class is graded
    r = _flashcourse("autograde", CH, "--course-dir", root, "--jobs", "2", cwd=elsewhere,
                     env={"FLASHCOURSE_COLLECT_BATCH": "1"})
    yield root, r, _scores(root)
    shutil.rmtree(open_dir, ignore_errors=True)


@pytest.mark.slow
def test_a_class_is_graded_in_parallel_and_every_story_is_told(graded):
    root, r, scores = graded
    out = r.stdout + r.stderr
    assert r.returncode in (0, 1), out
    full = scores["alice"]
    assert full["test_safe_softmax"] == 2 and full["test_safe_softmax_hidden"] == 2, full
    assert scores["carol"] == full, "a renamed notebook is graded as the notebook it is"
    assert scores["dave"]["test_safe_softmax_hidden"] == 2, "a deleted test cell is restored and graded"
    assert sum(scores["blank0"].values()) == 0 and scores["blank0"].keys() == full.keys()
    assert sum(scores.get("bob", {}).values()) == 0  # not a notebook: no points, and said so
    assert sum(scores["mallory"].values()) == 0  # forged result lines and an exit buy nothing
    # a cell that reaches for the results, the gradebook or another student's file finds nothing to use
    assert scores["trudy"]["test_safe_softmax"] == 2 and scores["trudy"]["test_safe_softmax_hidden"] == 2
    assert "was edited" not in out  # untouched test cells (their hidden tests stripped) are not "edited"
    for needle in (f"carol: renamed: graded {CH}-Copy1.ipynb", "test cell test_safe_softmax_hidden was deleted",
                   "not a valid notebook",
                   "NOT graded", "needs attention"):
        assert needle.lower() in out.lower(), (needle, out[-3000:])
    assert os.path.exists(os.path.join(root, "results", CH, "checks.csv"))
    assert not os.path.exists(os.path.join(root, "submitted", "carol", CH, f"{CH}.ipynb"))  # submitted/ untouched
    again = _flashcourse("autograde", CH, cwd=root)  # resumable: nothing left to grade
    assert "0 to grade" in again.stdout, again.stdout
    assert _scores(root) == scores


@pytest.mark.slow
def test_killed_and_resumed_gives_the_same_gradebook(graded, tmp_path):
    _, _, want = graded
    root = make_course(str(tmp_path))
    for _ in range(1):  # killed while grading (after its first result), then left to finish
        p = subprocess.Popen([sys.executable, "-m", "autograder.instructor.cli", "autograde", CH, "--jobs", "2"],
                             cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 300
        results = os.path.join(root, "results", CH)
        start = len(os.listdir(results)) if os.path.isdir(results) else 0
        while time.time() < deadline and p.poll() is None:
            if os.path.isdir(results) and len([f for f in os.listdir(results) if f.endswith(".json")]) > start:
                break
            time.sleep(0.2)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    r = _flashcourse("autograde", CH, "--jobs", "2", cwd=root)
    assert "already graded (kept" in r.stdout, r.stdout
    assert _scores(root) == want


@pytest.mark.slow
def test_shards_collected_in_either_order_or_twice_give_the_same_gradebook(graded, tmp_path):
    src, _, want = graded
    results = os.path.join(src, "results", CH)
    for order in ((0, 1), (1, 0)):
        root = str(tmp_path / f"order{order[0]}")  # the same course and submissions, nothing graded yet
        shutil.copytree(src, root, ignore=shutil.ignore_patterns("results", "gradebook.db", "autograded"))
        for i in order:  # a shard's results, as a cluster node would write them (here: copied)
            shard = classgrade.shard(classgrade.students(root, CH), f"{i}/2")
            os.makedirs(os.path.join(root, "results", CH), exist_ok=True)
            for s in shard:
                shutil.copy(os.path.join(results, f"{s}.json"), os.path.join(root, "results", CH))
            r = _flashcourse("collect", CH, cwd=root)
            assert "needs attention" in r.stdout
        assert _scores(root) == want
        if order == (0, 1):  # and collecting again changes nothing
            _flashcourse("collect", CH, cwd=root)
            assert _scores(root) == want


@pytest.mark.slow
def test_a_pipelined_run_records_in_batches_while_grading_and_equals_a_collect_after(graded, tmp_path):
    """The gradebook is filled in batches while the judges grade (one writer at a time); what it holds in the
    end, and the summary, are those of one `flashcourse collect` of the same results after grading."""
    src, r, want = graded
    out = r.stdout
    # a collector's batch starts only while grading (none after it ends): with a batch of 1, one starts on the
    # first result; on CPU the class is graded in about 15 s and a replay takes 5-15 s, so few end before it
    assert len([ln for ln in out.splitlines() if "gradebook: batch" in ln and " recorded " in ln]) >= 1, out
    root = str(tmp_path / "after")  # the same results, collected after grading, into a fresh gradebook
    shutil.copytree(src, root, ignore=shutil.ignore_patterns("gradebook.db", "autograded", ".flashcourse-*"))
    after = _flashcourse("collect", CH, cwd=root)
    assert _scores(root) == want
    assert _summary(after.stdout, root) == _summary(out, src), (after.stdout, out)
    with open(os.path.join(src, "results", CH, "checks.csv")) as a, open(os.path.join(root, "results", CH,
                                                                                    "checks.csv")) as b:
        assert a.read() == b.read()


@pytest.mark.slow
def test_the_collector_records_batches_while_results_come_and_the_end_equals_a_collect(graded, tmp_path):
    """Results arriving two at a time (as from judges): the collector records a batch for each pair while more
    are to come; after the final replay the gradebook and summary are those of `collect` after grading."""
    import io
    src, r, want = graded
    root = str(tmp_path / "course")
    shutil.copytree(src, root, ignore=shutil.ignore_patterns("gradebook.db", "autograded", ".flashcourse-*"))
    results = os.path.join(root, "results", CH)
    out = io.StringIO()
    c = classgrade.Collector(root, CH, results, batch=2, every=600, out=out)
    c.start()
    everyone = classgrade.students(root, CH)
    for k in range(0, len(everyone), 2):
        for s in everyone[k:k + 2]:
            c.add(s)
        if k + 2 < len(everyone):  # still "grading": wait for this pair's batch
            deadline = time.time() + 120
            while len(c.batches) < k // 2 + 1 and time.time() < deadline:
                time.sleep(0.2)
    c.stop()
    assert len(c.batches) >= 3, out.getvalue()  # 7 students: pairs 1-3 recorded before the last result came
    assert c.generated and "bob" not in c.recorded and len(c.recorded) >= 4, (c.recorded, out.getvalue())
    assert classgrade.record_and_summarise(root, CH, results, c.recorded, out=out) == 1  # bob: nbgrader cannot read it
    assert _scores(root) == want
    assert _summary(out.getvalue(), root) == _summary(r.stdout, src)


def test_shards_are_a_partition():
    names = [f"s{k:03d}" for k in range(17)]
    parts = [classgrade.shard(names, f"{i}/3") for i in range(3)]
    assert sorted(sum(parts, [])) == names and all(parts)
    with pytest.raises(SystemExit):
        classgrade.shard(names, "3/3")


def test_gpu_lock_lets_quiet_work_share_and_timed_work_wait(tmp_path):
    """Two processes sharing one GPU: a timed check (exclusive) never overlaps a quiet one (shared)."""
    log = tmp_path / "log"
    script = f"""
import sys, time
from autograder.instructor.classgrade import GpuLock
lock = GpuLock("test-{os.getpid()}")
kind = sys.argv[1]
with (lock.exclusive() if kind == "timed" else lock.shared()):
    with open({str(log)!r}, "a") as f:
        f.write(f"{{kind}} start {{time.monotonic()}}\\n")
    time.sleep(0.6)
    with open({str(log)!r}, "a") as f:
        f.write(f"{{kind}} end {{time.monotonic()}}\\n")
"""
    env = dict(os.environ, PYTHONPATH=nbtext.ROOT)
    procs = [subprocess.Popen([sys.executable, "-c", script, "quiet"], env=env)]
    time.sleep(0.2)
    procs += [subprocess.Popen([sys.executable, "-c", script, k], env=env) for k in ("timed", "quiet")]
    for p in procs:
        assert p.wait(30) == 0
    events = sorted((float(t), k, e) for k, e, t in (ln.split() for ln in log.read_text().splitlines()))
    timed = [t for t, k, e in events if k == "timed"]
    for t, k, e in events:
        if k == "quiet":
            assert not timed[0] < t < timed[1], f"quiet work {e} at {t} inside the timed window {timed}"


def test_a_gpu_worker_imports_course_without_starting_cuda():
    """A spawned worker imports `course` before it learns its GPU; with the environment the parent hands it, that
    import must not probe CUDA (the probe starts the driver, which then ignores CUDA_VISIBLE_DEVICES: on two
    H100s every judge landed on GPU 0)."""
    code = ("import torch\n"
            "def probe(*a, **k):\n"
            "    raise SystemExit('CUDA probed while importing course')\n"
            "torch.cuda.is_available = probe\n"
            "torch.cuda.device_count = probe\n"
            "import course\n"
            "from course import mode\n"
            "assert mode.GPU, mode.MODE\n")
    env = dict(os.environ, **classgrade.GPU_WORKER_ENV)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    env = dict(os.environ, FLASHCOURSE_MODE="gpu")
    env.pop("FLASHCOURSE_MODE_PROBED", None)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert "CUDA probed" in r.stderr + r.stdout  # without it, the import probes: the test can fail


def test_a_submissions_timed_checks_take_the_gpu_alone_once_together():
    """GpuTurns: quiet checks share the GPU one by one; the first timed check takes it alone, and the later timed
    checks of the same submission keep it, until close() (one wait for the quiet checks beside it, not one per
    timed check)."""
    import contextlib

    from autograder.instructor.classgrade import GpuTurns
    events = []

    class Lock:
        @contextlib.contextmanager
        def _hold(self, kind):
            events.append(f"take {kind}")
            yield
            events.append(f"give {kind}")

        def shared(self):
            return self._hold("shared")

        def exclusive(self):
            return self._hold("exclusive")

    with GpuTurns(Lock()) as turns:
        for timed in (False, False, True, True, True):
            with turns.for_check(timed):
                events.append("check")
        turns.close()
        events.append("feedback")
    assert events == ["take shared", "check", "give shared", "take shared", "check", "give shared",
                      "take exclusive", "check", "check", "check", "give exclusive", "feedback"]
    with GpuTurns(None) as turns, turns.for_check(True):  # CPU mode: no lock, nothing taken
        pass


# ---------- no grading without the course's configuration ----------

def _planted(root: str, marker: str) -> None:
    """A submission with a cell of its own that would leave a file on the host if anything executed it unsandboxed
    (as nbgrader's own Execute step does when the course's nbgrader_config.py is missing)."""
    nb = _release()
    nb.cells.insert(1, nbformat.v4.new_code_cell(f"open({marker!r}, 'w').write('ran')"))  # a cell of her own
    d = os.path.join(root, "submitted", "eve", CH)
    os.makedirs(d)
    nbformat.write(nb, os.path.join(d, f"{CH}.ipynb"))


@pytest.mark.parametrize("config", [None, "c = get_config()\nc.CourseDirectory.course_id = 'x'\n",
                                    "from nbgrader.preprocessors import Execute, SaveAutoGrades\n"
                                    "from autograder.nbgrader.plugins import IsolatedRegrade\n"
                                    "c = get_config()\n"
                                    "c.Autograde.autograde_preprocessors = [IsolatedRegrade, Execute, SaveAutoGrades]"
                                    "\n",
                                    "from nbconvert.preprocessors import Preprocessor\n"
                                    "from nbgrader.preprocessors import SaveAutoGrades\n"
                                    "class IsolatedRegrade(Preprocessor):\n    pass\n"
                                    "c = get_config()\n"
                                    "c.Autograde.autograde_preprocessors = [IsolatedRegrade, SaveAutoGrades]\n"
                                    ])
def test_a_course_without_its_config_is_refused_before_anything_runs(tmp_path, config):
    """Without the course's nbgrader_config.py (or with one whose autograde would execute notebooks itself)
    `flashcourse autograde` and `collect` refuse with a clear message: nothing graded, no gradebook, and the
    submission's code never ran."""
    root = make_course(str(tmp_path / "course"), n_blank=1)
    os.remove(os.path.join(root, "nbgrader_config.py"))
    if config is not None:
        with open(os.path.join(root, "nbgrader_config.py"), "w") as f:
            f.write(config)
    marker = str(tmp_path / "ran-on-the-host")
    _planted(root, marker)
    why = ("has no nbgrader_config.py" if config is None else "no Autograde.autograde_preprocessors"
           if config.startswith("c = ") else "lacks flashcourse's IsolatedRegrade" if "class IsolatedRegrade" in config
           else "contains nbgrader's Execute")
    for args in (("autograde", CH, "--course-dir", root), ("autograde", CH, "--course-dir", root, "--shard", "0/2"),
                 ("collect", CH, "--course-dir", root)):
        r = _flashcourse(*args, cwd=str(tmp_path))
        assert r.returncode != 0, (args, r.stdout, r.stderr)
        assert "refusing to grade" in r.stderr and why in r.stderr, (args, r.stderr)
    assert not os.path.exists(marker)
    assert not os.path.exists(os.path.join(root, "gradebook.db"))
    assert not os.path.exists(os.path.join(root, "results"))


def test_every_nbgrader_autograde_flashcourse_starts_is_guarded(tmp_path):
    """The gradebook's writer refuses by itself too (a config removed after the pre-flight check): nbgrader's
    autograde never starts, the planted cell never runs."""
    root = make_course(str(tmp_path / "course"), n_blank=0)
    os.remove(os.path.join(root, "nbgrader_config.py"))
    marker = str(tmp_path / "ran-on-the-host")
    _planted(root, marker)
    r = classgrade._nbgrader_writer(["autograde", CH, "--force"], root, replay_dir=str(tmp_path / "results"))
    assert r.returncode == 3 and "refusing to run nbgrader autograde" in r.stderr, r.stderr
    assert not os.path.exists(marker)


@pytest.mark.slow
def test_without_the_guard_nbgrader_would_run_the_submission_on_the_host(tmp_path):
    """The attack the guard stops, shown real: plain `nbgrader autograde` in a course directory without the config
    executes the submission's cell outside any sandbox."""
    root = make_course(str(tmp_path / "course"), n_blank=0)
    for s in ("alice", "bob", "carol", "dave", "mallory", "trudy"):
        shutil.rmtree(os.path.join(root, "submitted", s))
    marker = str(tmp_path / "ran-on-the-host")
    _planted(root, marker)
    env = dict(os.environ, PYTHONPATH=nbtext.ROOT, FLASHCOURSE_MODE="cpu",
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))  # `alembic`
    g = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", CH, "--force"], cwd=root, env=env,
                       capture_output=True, text=True, timeout=300)  # with the config: the gradebook knows CH
    os.remove(os.path.join(root, "nbgrader_config.py"))
    a = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", CH, "--force",
                        "--CourseDirectory.course_id=flashcourse", "--ExecutePreprocessor.timeout=300"], cwd=root,
                       env=env, capture_output=True, text=True, timeout=900)
    assert g.returncode == 0, g.stderr[-3000:]
    assert os.path.exists(marker), a.stderr[-3000:]


# ---------- the grader never writes into submitted/: renames, several notebooks, resubmissions, regrades ----------

def _tree(root: str) -> dict:
    """Every file under root: its relative path, SHA-256 and modification time (byte-for-byte, and untouched)."""
    import hashlib
    out = {}
    for d, dirs, files in os.walk(root):
        for name in dirs + files:
            p = os.path.join(d, name)
            st = os.lstat(p)
            data = hashlib.sha256(open(p, "rb").read()).hexdigest() if os.path.isfile(p) else "dir"
            out[os.path.relpath(p, root)] = (data, st.st_mtime_ns)
    return out


def _put(root, student, name, nb, mtime=None):
    d = os.path.join(root, "submitted", student, CH)
    os.makedirs(d, exist_ok=True)
    nbformat.write(nb, os.path.join(d, name))
    if mtime is not None:
        os.utime(os.path.join(d, name), ns=(mtime, mtime))


def _solved():
    nb = _release()
    c = _cell(nb, "safe_softmax")
    c.source = c.source.replace("# YOUR CODE HERE\n    raise NotImplementedError()", SOLVED)
    return nb


def test_the_notebook_to_grade_is_chosen_without_writing_and_the_newest_wins(tmp_path):
    root = str(tmp_path)
    shutil.copytree(os.path.join(nbtext.ROOT, "source", CH), os.path.join(root, "source", CH),
                    ignore=shutil.ignore_patterns("*.nb.md"))
    t = 1_700_000_000 * 10**9
    _put(root, "erin", "my work.ipynb", _solved())
    _put(root, "frank", f"{CH}.ipynb", _release(), t)
    _put(root, "frank", f"{CH}-Copy1.ipynb", _solved(), t + 10**9)
    _put(root, "frank", "Untitled.ipynb", nbformat.v4.new_notebook(), t + 2 * 10**9)  # scratch, newest
    _put(root, "gina", f"{CH}-Copy1.ipynb", _solved(), t)  # a tie: the assignment's own name wins, then by name
    _put(root, "gina", f"{CH}.ipynb", _solved(), t)
    _put(root, "hal", "b.ipynb", _solved(), t)
    _put(root, "hal", "a.ipynb", _solved(), t)
    before = _tree(os.path.join(root, "submitted"))
    c = {s: classgrade.choose_notebook(root, CH, s) for s in ("erin", "frank", "gina", "hal", "nobody")}
    assert (c["erin"].name, c["erin"].why) == ("my work.ipynb", "renamed: graded my work.ipynb")
    assert c["frank"].name == f"{CH}-Copy1.ipynb"
    assert c["frank"].why == (f"3 notebooks: graded the newest, {CH}-Copy1.ipynb; not graded: {CH}.ipynb; not this "
                              "chapter's notebook: Untitled.ipynb"), c["frank"].why
    assert c["gina"].name == f"{CH}.ipynb" and "as new as" in c["gina"].why
    assert c["hal"].name == "a.ipynb"
    assert c["nobody"].path is None and "no notebook" in c["nobody"].why
    assert _tree(os.path.join(root, "submitted")) == before


@pytest.mark.slow
def test_submitted_is_never_written_and_renames_resubmissions_and_regrades_are_reported(tmp_path):
    """nbgrader is handed staged copies: submitted/ is byte-for-byte unchanged (no copy at the assignment's name
    beside a renamed notebook); the summary and the result files say which notebook was graded and why, after a
    --force regrade too; a resubmission (another notebook, or the graded one changed) is graded again."""
    import json
    root = str(tmp_path / "course")
    os.makedirs(root)
    shutil.copy(os.path.join(nbtext.ROOT, "nbgrader_config.py"), root)
    shutil.copytree(os.path.join(nbtext.ROOT, "source", CH), os.path.join(root, "source", CH),
                    ignore=shutil.ignore_patterns("*.nb.md"))
    t = 1_700_000_000 * 10**9
    _put(root, "carol", f"{CH}-Copy1.ipynb", _solved())
    _put(root, "erin", "my work.ipynb", _solved())
    _put(root, "frank", f"{CH}.ipynb", _release(), t)
    _put(root, "frank", f"{CH}-Copy1.ipynb", _solved(), t + 10**9)
    with open(os.path.join(root, "submitted", "frank", CH, "timestamp.txt"), "w") as f:
        f.write("2030-01-01 00:00:00.000000 UTC")  # as nbgrader's collect writes it
    sub = os.path.join(root, "submitted")
    results = os.path.join(root, "results", CH)

    def run(*extra):
        before = _tree(sub)
        r = _flashcourse("autograde", CH, "--jobs", "2", *extra, cwd=root,
                         env={"FLASHCOURSE_COLLECT_BATCH": "1000"})  # one replay, at the end
        assert _tree(sub) == before, "the grader wrote into submitted/"
        assert not [n for n in os.listdir(root) if n.startswith(classgrade.STAGING)]  # staging trees removed
        return r.stdout + r.stderr

    out = run()
    scores = _scores(root)
    assert scores["carol"]["test_safe_softmax"] == 2 and scores["erin"] == scores["carol"], scores
    assert scores["frank"] == scores["carol"], "the newest notebook (the solved copy) is graded"
    assert not os.path.exists(os.path.join(sub, "carol", CH, f"{CH}.ipynb"))
    newest = f"2 notebooks: graded the newest, {CH}-Copy1.ipynb; not graded: {CH}.ipynb"
    for needle in (f"carol: renamed: graded {CH}-Copy1.ipynb", "erin: renamed: graded my work.ipynb",
                   f"frank: {newest}"):
        assert needle in out, (needle, out[-3000:])
    with open(os.path.join(results, "erin.json")) as f:
        r = json.load(f)
    assert r["notebook"] == f"submitted/erin/{CH}/my work.ipynb"
    assert r["choice"]["file"] == "my work.ipynb" and r["choice"]["why"] == "renamed: graded my work.ipynb"

    out = run("--force")  # a regrade: the same choices, said again
    assert "3 to grade with" in out, out[-3000:]
    for needle in (f"carol: renamed: graded {CH}-Copy1.ipynb", "erin: renamed: graded my work.ipynb",
                   f"frank: {newest}"):
        assert needle in out, (needle, out[-3000:])
    assert "resubmitted" not in out

    _put(root, "carol", f"{CH}-Copy1.ipynb", _release())  # the renamed notebook resubmitted (changed)
    _put(root, "frank", f"{CH}-Copy2.ipynb", _release(), t + 5 * 10**9)  # a newer notebook under a new name
    os.utime(os.path.join(sub, "erin", CH, "my work.ipynb"))  # saved again, same content
    out = run()
    assert "0 already graded" in out and "3 to grade (3 resubmitted since graded)" in out, out[-3000:]
    assert "already graded (kept" in out
    scores = _scores(root)
    assert sum(scores["carol"].values()) == 0 and sum(scores["frank"].values()) == 0, scores
    assert scores["erin"]["test_safe_softmax"] == 2
    for needle in (f"carol: resubmitted: {CH}-Copy1.ipynb changed since it was graded, graded again",
                   f"frank: resubmitted: {CH}-Copy2.ipynb graded, newer than {CH}-Copy1.ipynb (graded before)",
                   f"frank: 3 notebooks: graded the newest, {CH}-Copy2.ipynb",
                   "erin: resubmitted: my work.ipynb saved again since it was graded (same content), graded again"):
        assert needle in out, (needle, out[-3000:])
    again = run()
    assert "0 to grade" in again and "resubmitted" not in again.split("needs attention")[0], again[-3000:]
