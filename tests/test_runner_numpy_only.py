"""NumPy/Python exercises are graded in a runner without torch, SciPy, CuPy or Triton (issue 44, item 3).

A runner for Exercise.kind == "python" is forked from a zygote that never imported torch (autograder.runner.numpy_only)
and, in the sandbox, sees no Python package but NumPy on its file system (sandbox.only_packages). Each defence is
also switched off here to show that the attack it stops works without it. CPU only."""
import importlib.util
import os
import textwrap

import pytest

from autograder.boundary import sandbox
from autograder.declare.submission import Cell
from autograder.judge import session as judge_session
from autograder.judge.session import ROOT, Session

SANDBOXED = sandbox.status()[0]
needs_sandbox = pytest.mark.skipif(not SANDBOXED, reason=f"no sandbox here: {sandbox.status()[1]}")

GOOD = Cell("python", textwrap.dedent("""
    def safe_softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
"""), "safe_softmax")


def _attack(name: str) -> Cell:
    from autograder.instructor.bench_grading import _cells
    from autograder.instructor.submissions import for_chapter
    w = next(w for w in for_chapter("ch01_softmax") if w.name == name)
    solution = next(c for c in _cells(os.path.join(ROOT, "source/ch01_softmax/ch01_softmax.ipynb"))
                    if c.origin == w.cell)
    return Cell("python", w.apply(solution.source), w.cell)


def test_the_python_exercises_are_the_numpy_ones():
    """Which exercises get the NumPy-only runner: every Exercise.kind == "python" of the declarations."""
    from autograder.declare import registry
    python = sorted(ex.id for ex in registry.all_exercises() if ex.kind == "python")
    assert "ch01.safe_softmax" in python and "ch03.online_normalizer" in python, python
    assert all(ex.kind in ("python", "triton", "cuda") for ex in registry.all_exercises())


def test_numpy_softmax_answered_with_torch_loses_its_points(monkeypatch):
    """submissions/ch01_softmax/attack_numpy_with_torch.py (every route to torch or SciPy a cell has) fails both of
    the exercise's checks with a message saying why; with NUMPY_RUNNERS off it passes them (full marks before)."""
    attack = _attack("attack_numpy_with_torch")
    with Session([attack]) as s:
        for check in ("correctness", "hidden"):
            r = s.check("ch01.safe_softmax", check)
            assert not r.passed and "without torch" in r.message, r.message
    with Session([GOOD]) as s:  # an honest NumPy answer still passes there
        assert s.check("ch01.safe_softmax", "correctness").passed
    monkeypatch.setattr(judge_session, "NUMPY_RUNNERS", False)
    with Session([attack]) as s:
        r = s.check("ch01.safe_softmax", "correctness")
        assert r.passed, r.message  # the attack works without the defence


PROBE = """
def safe_softmax(x):
    import ctypes, os, sys
    assert 'torch' not in sys.modules
    here = os.path.dirname(os.path.dirname(np.__file__))
    others = [n for n in os.listdir(here) if not n.startswith('numpy')]
    try:
        ctypes.CDLL({lib!r})
        loaded = True
    except OSError:
        loaded = False
    if others or loaded or os.path.exists({torch!r}):
        return np.zeros_like(x)  # torch (or another package) was reachable: fail on purpose
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)
"""


@needs_sandbox
def test_numpy_runner_file_system_holds_numpy_only(monkeypatch):
    """In the NumPy-only runner's sandbox the site-packages directory lists NumPy only, torch's directory is gone
    and libtorch cannot be loaded with ctypes; with the package restriction off (NUMPY_PACKAGES empty) the same probe
    finds them, so the restriction is what hides them."""
    torch_dir = os.path.dirname(importlib.util.find_spec("torch").origin)
    lib = os.path.join(torch_dir, "lib", "libc10.so")
    assert os.path.exists(lib), lib
    probe = Cell("python", PROBE.format(lib=lib, torch=os.path.join(torch_dir, "__init__.py")), "safe_softmax")
    with Session([probe]) as s:
        r = s.check("ch01.safe_softmax", "correctness")
        assert r.passed, r.message
    monkeypatch.setattr(judge_session, "NUMPY_PACKAGES", ())
    with Session([probe]) as s:
        r = s.check("ch01.safe_softmax", "correctness")
        assert not r.passed, r.message  # without it, torch's files are there to load


def test_a_notebook_mixing_numpy_and_triton_keeps_both(monkeypatch):
    """The NumPy exercise goes to its own runner; the other exercises of the notebook to the usual one (with torch),
    which still loads every cell: a Triton cell beside the NumPy one costs nothing in either."""
    triton = Cell("python", textwrap.dedent("""
        @triton.jit
        def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            i = tl.arange(0, BLOCK)
            tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n), mask=i < n)
    """), "helper")
    with Session([triton, GOOD]) as s:
        assert s.check("ch01.safe_softmax", "correctness").passed
        assert s.numpy is not None and s.numpy.proc is not None  # served by the NumPy-only runner
        assert s._proc is None  # the usual runner was not needed for it
        assert not any(e.get("cell") == 1 for e in s.numpy.errors), s.numpy.errors
