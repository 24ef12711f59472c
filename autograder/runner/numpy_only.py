"""A runner for NumPy/Python exercises (Exercise.kind == "python"): a process that never imported torch.

The judge (autograder.judge.session, NUMPY_RUNNERS) grades a NumPy/Python exercise in a runner of its own, started
with FLASHCOURSE_RUNNER=numpy: forked by a zygote that imported NumPy and the grader's declarations only (never
torch, SciPy, CuPy or Triton), or a fresh `python -m autograder.runner.worker`. In the sandbox its file system has
no Python package but NumPy (autograder.boundary.sandbox.only_packages: every site-packages and dist-packages
directory is an empty tmpfs with NumPy bound back), so `import torch`, `import scipy`, a path added to sys.path,
importlib on a file or ctypes on libtorch all fail: there is nothing to load, in memory or on disk. Nothing in
this process can switch that off; an import hook would be no defence (it lives in the student's process).

Without the sandbox (not root) the process still starts without torch, but the packages' files stay reachable:
the judge says so (sandbox.status()).

This module prepares such a process before any student code runs: the `course` package is entered without its
__init__ (which imports torch): only course.mode and course.errors, which the runner's code uses; a `%%cuda` cell
is not run here (the exercises served here are Python); the cells' setup imports math and NumPy only.
"""
from __future__ import annotations

import os
import sys
import types

ENV = "FLASHCOURSE_RUNNER"  # =numpy: this runner serves NumPy/Python exercises only
SETUP = "import math\nimport numpy as np\n"
# What must never be in such a process (checked when it starts; the judge also reads its mapped files)
FOREIGN = ("torch", "scipy", "cupy", "triton", "jax", "tensorflow")
WHY = ("this exercise is graded in a runner without torch, SciPy, CuPy or Triton (a NumPy/Python exercise is "
       "answered with NumPy and Python)")


def wanted() -> bool:
    return os.environ.get(ENV) == "numpy"


class NoTorch(ImportError):
    pass


def _magic_stub() -> types.ModuleType:
    mod = types.ModuleType("course.magic")

    def run_cell(source, ns):
        raise NoTorch(f"a %%cuda cell is not run here: {WHY}")
    mod.run_cell = run_cell
    return mod


def prepare() -> None:
    """Make this process a NumPy-only runner (before any student code; idempotent). Raises if torch or another
    foreign package is already imported: a child of such a process would have it in memory."""
    there = [m for m in sys.modules if m.split(".")[0] in FOREIGN]
    if there:
        raise RuntimeError(f"a NumPy-only runner must not have imported {', '.join(sorted(there)[:5])}")
    import importlib.util

    import numpy  # noqa: F401
    if "course" not in sys.modules:
        spec = importlib.util.find_spec("course")
        pkg = types.ModuleType("course")
        pkg.__path__ = list(spec.submodule_search_locations)
        pkg.__file__ = spec.origin
        pkg.__package__ = "course"
        pkg.__spec__ = spec
        sys.modules["course"] = pkg
        from course import errors, mode
        pkg.mode, pkg.errors = mode, errors
        for k in ("MODE", "GPU", "DEVICE", "GRADING"):
            setattr(pkg, k, getattr(mode, k))
        sys.modules["course.magic"] = pkg.magic = _magic_stub()
    from autograder.declare import submission
    submission.SETUP = SETUP
