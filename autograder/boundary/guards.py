"""Guard zones: every output the judge reads lives inside a larger buffer whose ends hold a canary.

The runner allocates outputs this way (autograder.runner.execute.Outputs) and the judge checks the zones
(autograder.judge.grading), so both sides share these definitions and nothing else.
"""
from __future__ import annotations

import contextlib

GUARD = 4096  # elements on each side of an output
CANARY = 1234.5


class Failure(AssertionError):
    pass


def check_guards(made) -> None:
    """(buffer, n, canary) triples: the zones either side of each output must hold the canary."""
    for buf, n, canary in made:
        if buf.numel() != n + 2 * GUARD:
            raise Failure(f"a guarded buffer came back with {buf.numel()} elements, not {n + 2 * GUARD}")
        zones = (("before", buf[:GUARD]), ("after", buf[GUARD + n:]))
        for where, zone in zones:
            hit = (zone.float() != canary).nonzero()
            if len(hit):
                raise Failure(
                    f"out-of-bounds write: {len(hit)} element(s) written just {where} the output "
                    f"tensor ({n} elements); check your masks and index bounds")


# Torch ops the grader's own code runs inside an audited call (the output factory's fills, a declaration's check
# function) are not the submission's: the runner's audit (autograder.runner.execute) skips them.
_GRADER = {"depth": 0}


@contextlib.contextmanager
def _grader_ops():
    """Torch ops the grader itself runs inside an audited call are not the student's."""
    _GRADER["depth"] += 1
    try:
        yield
    finally:
        _GRADER["depth"] -= 1
