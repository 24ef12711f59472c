"""Runners cannot starve the machine (issue 44, item 4): memory, HOME, output and a notebook's time are limited.

Each runner has a memory limit (a cgroup v2 of its own where the judge can make one, else RLIMIT_DATA), a HOME that
is a tmpfs of its own with a size cap (mounted by the judge), its output read by the judge from a pipe with a cap
(no file on the judge's disk), and each notebook a time budget for all its checks. A runner that allocates, writes
or prints without bound loses its own check, with a message that says which limit; the notebook's other checks and
other notebooks graded beside it keep their marks. Each limit is also shown to be what stops its attack (a bounded
version of the attack passes without the limit). CPU, as root for the sandbox's parts; the GPU test is for a GPU.
"""
import os
import textwrap
import threading

import pytest

from autograder.boundary import sandbox
from autograder.declare.submission import Cell, notebook_part
from autograder.judge import session as js
from autograder.judge.session import ROOT, Session

SANDBOXED = sandbox.status()[0]
needs_sandbox = pytest.mark.skipif(not SANDBOXED, reason=f"no sandbox here: {sandbox.status()[1]}")
MiB = 1 << 20


def _cell(src: str, origin: str) -> Cell:
    return Cell("python", textwrap.dedent(src), origin)


def _ref(path: str, origin: str) -> Cell:
    return Cell("python", notebook_part(os.path.join(ROOT, path)), origin)


MERGE = _ref("kernels_ref/ch03_online_softmax/merge.py", "merge")
NORMALIZER = _ref("kernels_ref/ch03_online_softmax/online_normalizer.py", "online_normalizer")
SOFTMAX = _ref("kernels_ref/ch01_softmax/safe_softmax.py", "safe_softmax")

# Each attack answers right once its side effect is done (so only the limit can make it fail), `N` MiB of it, or
# without bound where N is None; the bounded ones do it on their first call only.
ALLOCATES = """
DONE = []
def safe_softmax(x):
    keep, n = [], 0
    while (N is None or n < N) and not DONE:
        keep.append(np.ones(16 << 20, dtype=np.uint8))  # 16 MiB, written: resident
        n += 16
    DONE.append(1)
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)
"""
WRITES = """
DONE = []
def merge(a, b):
    import os
    with open(os.path.join(os.path.expanduser("~"), "fill.bin"), "ab") as f:
        block, n = b"x" * (1 << 20), 0
        while (N is None or n < N) and not DONE:
            f.write(block)
            n += 1
    DONE.append(1)
    import math
    (ma, da), (mb, db) = a, b
    m = max(ma, mb)
    return (m, 0.0) if m == -math.inf else (m, da * math.exp(ma - m) + db * math.exp(mb - m))
"""
PRINTS = """
DONE = []
def online_normalizer(stream):
    import math, sys
    line, n = "y" * 1023 + "\\n", 0
    while (N is None or n < N * 1024) and not DONE:
        sys.stdout.write(line)
        n += 1
    DONE.append(1)
    m, d = -math.inf, 0.0
    for x in stream:
        if x > m:
            d = d * math.exp(m - x) if m > -math.inf else 0.0
            m = x
        if x > -math.inf:
            d += math.exp(x - m)
    return m, d
"""


def _attack(template: str, origin: str, n_mib) -> Cell:
    return _cell(f"N = {n_mib!r}\n" + template, origin)


@pytest.fixture
def small_limits(monkeypatch):
    """Limits small enough to reach in a second: 1 GiB of memory, a 192 MiB HOME, 4 MiB of output."""
    monkeypatch.setattr(js, "RUNNER_MEMORY", 1 << 30)
    monkeypatch.setattr(js, "HOME_BYTES", 192 * MiB)
    monkeypatch.setattr(js, "OUTPUT_CAP", 4 * MiB)


def test_a_runner_that_allocates_without_bound_loses_its_check(small_limits, monkeypatch):
    with Session([_attack(ALLOCATES, "safe_softmax", None), MERGE]) as s:
        r = s.check("ch01.safe_softmax", "correctness")
        assert not r.passed and "memory" in r.message, r.message
        assert s.check("ch03.merge", "correctness").passed  # the next check: a fresh runner, nothing held
    # the limit is what stops it: 1.5 GiB fails under 1 GiB, and passes with the limit raised
    bounded = _attack(ALLOCATES, "safe_softmax", 1536)
    with Session([bounded]) as s:
        r = s.check("ch01.safe_softmax", "correctness")
        # RLIMIT_DATA: a MemoryError in the runner ("ran out of memory"); a cgroup (as on the H200 host): the kernel's
        # OOM kill, reported as such ("used more than 1 GiB ... the kernel stopped it")
        assert not r.passed and ("out of memory" in r.message or "used more than 1 GiB" in r.message), r.message
    monkeypatch.setattr(js, "RUNNER_MEMORY", 4 << 30)
    with Session([bounded]) as s:
        r = s.check("ch01.safe_softmax", "correctness")
        assert r.passed, r.message


@needs_sandbox
def test_a_runner_that_fills_its_home_loses_its_check(small_limits, monkeypatch):
    with Session([_attack(WRITES, "merge", None), SOFTMAX]) as s:
        r = s.check("ch03.merge", "correctness")
        assert not r.passed and "filled the disk space" in r.message and "192 MiB" in r.message, r.message
        assert s.check("ch01.safe_softmax", "correctness").passed  # a fresh runner, a fresh HOME
    assert not [n for n in os.listdir("/dev/shm") if n.startswith(f"flashcourse-run-{os.getpid()}-")]
    # the cap is what stops it: 256 MiB fails in a 192 MiB HOME, and passes in a plain directory (no tmpfs)
    bounded = _attack(WRITES, "merge", 256)
    with Session([bounded]) as s:
        assert not s.check("ch03.merge", "correctness").passed
    monkeypatch.setattr(js, "_cap_home", lambda path: 0)
    with Session([bounded]) as s:
        r = s.check("ch03.merge", "correctness")
        assert r.passed, r.message


def test_a_runner_that_prints_without_bound_loses_its_check(small_limits, monkeypatch):
    with Session([_attack(PRINTS, "online_normalizer", None), SOFTMAX]) as s:
        r = s.check("ch03.online_normalizer", "correctness")
        assert not r.passed and "printed more than 4 MiB" in r.message, r.message
        assert s.check("ch01.safe_softmax", "correctness").passed
    # the cap is what stops it: 8 MiB of output fails under 4 MiB, passes under 64 MiB; the judge keeps its end only
    bounded = _attack(PRINTS, "online_normalizer", 8)
    with Session([bounded]) as s:
        assert not s.check("ch03.online_normalizer", "correctness").passed
    monkeypatch.setattr(js, "OUTPUT_CAP", 64 * MiB)
    with Session([bounded]) as s:
        r = s.check("ch03.online_normalizer", "correctness")
        assert r.passed, r.message
        p = s.numpy.proc
        assert p.printed_bytes >= 8 * MiB and len(p.out) <= 2 * js.OUTPUT_KEPT


def test_a_cell_that_prints_without_bound_while_loading_costs_only_its_exercise(small_limits):
    flood = _cell("""
        import sys
        while True:
            sys.stdout.write("z" * 1023 + "\\n")
        def merge(a, b):
            return a
    """, "merge")
    with Session([SOFTMAX, flood]) as s:
        r = s.check("ch03.merge", "correctness")
        assert not r.passed and "printed more than" in r.message, r.message
        assert s.check("ch01.safe_softmax", "correctness").passed


def test_a_notebook_has_a_time_budget_for_all_its_checks(monkeypatch):
    """Each check runs well within its own timeout; together they run past the notebook's budget: the check running
    when it ends is stopped, the checks left are not run, and each says why. With a larger budget all of them pass."""
    slow = _cell("""
        import time
        def safe_softmax(x):
            time.sleep(1.2)  # three cases a check: about 4 s
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
        def merge(a, b):
            import math
            (ma, da), (mb, db) = a, b
            m = max(ma, mb)
            return (m, 0.0) if m == -math.inf else (m, da * math.exp(ma - m) + db * math.exp(mb - m))
    """, "slow")

    def grade(budget):
        monkeypatch.setitem(js.NOTEBOOK_BUDGET, "cpu", budget)
        monkeypatch.setitem(js.NOTEBOOK_BUDGET, "gpu", budget)
        with Session([slow]) as s:
            return [s.check("ch01.safe_softmax", "correctness", timeout=20),
                    s.check("ch01.safe_softmax", "hidden", timeout=20), s.check("ch03.merge", "correctness")]
    first, second, third = grade(7.0)
    assert first.passed, first.message
    assert not second.passed and "time budget" in second.message, second.message
    assert not third.passed and "time budget" in third.message and third.seconds < 1, third.message
    assert all(v.passed for v in grade(60.0))


def test_a_class_is_graded_beside_a_notebook_that_starves_the_machine(small_limits):
    """Two notebooks graded at once by one judge (as a class's worker does, a Session each): one allocates, fills its
    HOME and prints without bound, one is honest. The bad one loses exactly those three checks, the good one keeps
    every mark."""
    from autograder.judge.testcells import grade
    calls = {"test_safe_softmax": [("ch01.safe_softmax", "correctness")],
             "test_merge": [("ch03.merge", "correctness")],
             "test_online_normalizer": [("ch03.online_normalizer", "correctness")]}
    bad = [_attack(ALLOCATES, "safe_softmax", None), _attack(WRITES, "merge", None),
           _attack(PRINTS, "online_normalizer", None)]
    good = [SOFTMAX, MERGE, NORMALIZER]
    out = {}

    def run(name, cells):
        out[name] = grade(cells, calls)

    threads = [threading.Thread(target=run, args=(n, c)) for n, c in (("bad", bad), ("good", good))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(out["good"].cells[g].passed for g in calls), {g: c.text for g, c in out["good"].cells.items()}
    assert not any(out["bad"].cells[g].passed for g in calls), {g: c.text for g, c in out["bad"].cells.items()}
    text = {g: out["bad"].cells[g].text for g in calls}
    assert "memory" in text["test_safe_softmax"], text
    assert "printed more than" in text["test_online_normalizer"], text
    if SANDBOXED:
        assert "filled the disk space" in text["test_merge"], text


def _gpu() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.skipif(not _gpu(), reason="needs a GPU: the memory limit must leave CUDA working")
def test_the_memory_limit_leaves_cuda_working_on_a_gpu(monkeypatch):
    """On a GPU: a Triton kernel's checks, the timed one included, pass under a 4 GiB memory limit (RLIMIT_DATA, or
    the cgroup where there is one; never RLIMIT_AS, which breaks CUDA's address reservations), and a runner that
    allocates host memory without bound still loses only its own check."""
    from autograder.instructor.bench_grading import _cells
    monkeypatch.setattr(js, "RUNNER_MEMORY", 4 << 30)
    cells = _cells(os.path.join(ROOT, "source/ch01_softmax/ch01_softmax.ipynb"))
    with Session(cells) as s:
        for check in ("correctness", "hidden", "bandwidth"):
            r = s.check("ch01.softmax_triton", check)
            assert r.passed, (check, r.message)
    hog = _cell("""
        def softmax_triton(x, y):
            keep = []
            while True:
                keep.append(np.ones(16 << 20, dtype=np.uint8))
    """, "softmax_triton")
    with Session([hog, SOFTMAX]) as s:
        r = s.check("ch01.softmax_triton", "correctness")
        assert not r.passed and "memory" in r.message, r.message
        assert s.check("ch01.safe_softmax", "correctness").passed
