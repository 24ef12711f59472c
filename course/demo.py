"""`with course.demo():` around a demonstration that uses an exercise's function.

While that function is still the exercise's stub (it raises NotImplementedError), the cell prints one line saying
what to solve first and the notebook goes on, so Run All reaches the end of a chapter before every exercise is done.
Any other error is shown as usual.
"""
from __future__ import annotations

import contextlib
import traceback


def _stub_name(e: BaseException) -> str:
    """The function that raised: the innermost frame of the traceback (a stub raises in its own body)."""
    frames = traceback.extract_tb(e.__traceback__)
    return frames[-1].name if frames else "an exercise"


@contextlib.contextmanager
def demo(example: str | None = None):
    """`example`: the recorded figure (course/figures/EXAMPLE.png) to show instead, as CPU mode shows it."""
    try:
        yield
    except NotImplementedError as e:  # also course.NotImplementedYet (a CUDA kernel still holding its stub)
        what = str(e).split("\n")[0] if str(e) else f"{_stub_name(e)} is not written yet (it is still the stub)"
        print(f"– This cell uses an exercise you have not solved yet: {what}. "
              "Solve it above, then run this cell again; the rest of the notebook runs on.")
        if example:
            from . import plots
            print("What it shows, as recorded on a GPU:")
            plots.example(example)
