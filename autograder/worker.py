"""One graded check in a fresh process: `python -m autograder.worker < job.json`.

The job: {"exercise", "check", "cells", "seed"}. The last line of stdout is
RESULT_TAG followed by {"passed", "message"}. Everything the submission prints
stays in this process's output, which the parent shows only on failure.
"""
from __future__ import annotations

import json
import sys
import tempfile
import traceback

RESULT_TAG = "@@flashcourse-result@@"


def _emit(passed: bool, message: str) -> None:
    sys.stdout.flush()
    sys.__stdout__.write(f"\n{RESULT_TAG}{json.dumps({'passed': passed, 'message': message})}\n")
    sys.__stdout__.flush()


def _user_frames(tb) -> str:
    """The part of a traceback that lies in the submission's cells."""
    lines = [ln for ln in traceback.format_exception(tb) if "/cell" in ln or not ln.startswith("  File")]
    return "".join(lines[-6:]).strip()


def _guarded(run, snap):
    """The exercise's run, followed by a tamper check (the submission's code runs inside it)."""
    def guarded(*args, **kwargs):
        out = run(*args, **kwargs)
        snap.check()
        return out
    guarded.__wrapped_run__ = run  # the bare run, for timed loops: no grader work may be timed
    guarded.tamper_check = snap.check
    return guarded


def main() -> int:
    job = json.load(sys.stdin)
    from autograder import registry
    from autograder.grading import Failure, run_check
    from autograder.submission import Cell, MissingName, defines, load
    from autograder.tamper import Snapshot, Tampered
    from course.errors import CudaCompileError, NeedsGPU, NotImplementedYet

    ex = registry.get(job["exercise"])
    import torch._dynamo  # noqa: F401  (imported lazily by the grader's audit; it rewraps torch.manual_seed)
    import torch.profiler  # noqa: F401
    import torch.utils._python_dispatch  # noqa: F401
    import triton.language  # noqa: F401
    snap = Snapshot()  # before any of the submission's code runs
    with tempfile.TemporaryDirectory(prefix="flashcourse-") as tmp:
        try:
            tampered: list[str] = []

            def after_cell(cell, names):  # tampering counts against the exercise whose cell did it
                changed = snap.restore()
                if changed and (set(names) & set(ex.entry) or not cells_define(ex.entry)):
                    tampered.extend(changed)

            cells = [Cell(**c) for c in job["cells"]]
            cells_define = lambda names: any(defines(c, names) for c in cells)  # noqa: E731
            errors: list = []  # cells that raised: they cost only the exercises that need them
            ns = load(cells, tmp, after_cell=after_cell, errors=errors)
            own = [e for c, e in errors if defines(c, ex.entry)]
            if own:
                raise own[0]
            if tampered:
                raise Tampered(f"your code replaced {', '.join(sorted(set(tampered))[:5])}: submissions may "
                               "not monkeypatch torch, numpy or the grader (put back; this check fails)")
            ex.run = _guarded(ex.run, snap)
            missing = [n for n in ex.entry if n not in ns]
            if missing:
                why = "".join(f"; cell {c.origin} failed: {type(e).__name__}: {str(e)[:300]}" for c, e in errors)
                raise MissingName(f"the submission does not define {', '.join(missing)}{why}")
            summary = run_check(ex, job["check"], ns, int(job["seed"]))
        except Failure as e:
            _emit(False, f"{e} (seed {job['seed']})")
        except Tampered as e:
            _emit(False, str(e))
        except (NotImplementedYet, NotImplementedError) as e:
            _emit(False, f"not implemented yet: {e}" if str(e) else
                  "not implemented yet: replace `raise NotImplementedError()` with your code")
        except CudaCompileError as e:
            _emit(False, f"CUDA compile error:\n{e}")
        except NeedsGPU as e:
            _emit(False, str(e))
        except MissingName as e:
            _emit(False, str(e))
        except BaseException as e:  # the submission raised: show where, in its own cells
            _emit(False, f"your code raised {type(e).__name__}: {e}\n{_user_frames(e)}")
        else:
            _emit(True, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
