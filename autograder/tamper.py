"""Monkeypatching guard for the worker: the submission runs in the grader's process, so it could
replace torch.isnan, numpy.abs or the grader's own functions. A Snapshot taken before the
submission's code runs notices any such replacement, puts the original back, and the check fails.
"""
from __future__ import annotations

import sys

# Modules (and their attributes) that grading relies on.
WATCHED = ("builtins", "math", "numpy", "torch", "torch.nn.functional", "torch.testing", "course",
           "course.cuda", "course.timing", "course.mode", "autograder", "autograder.grading",
           "autograder.registry", "autograder.exercise", "autograder.exercises.ch01_softmax",
           "autograder.exercises.ch02_reductions", "autograder.exercises.ch03_online_softmax",
           "autograder.exercises.ch04_flash_attention",
           "autograder.exercises.ch05_fused_norms", "autograder.exercises.ch06_low_precision", "tracemalloc",
           "autograder.submission", "autograder.worker", "autograder.execute", "autograder.wire", "json")


class Tampered(Exception):
    pass


class Snapshot:
    def __init__(self):
        import torch

        from . import registry
        self.modules = {n: dict(vars(sys.modules[n])) for n in WATCHED if n in sys.modules}
        from . import execute
        self.classes = {c: dict(vars(c)) for c in (torch.Tensor, execute.Outputs, execute._Reuse)}
        self.exercises = {ex.id: (ex, dict(vars(ex))) for ex in registry.all_exercises()}
        self.registry = dict(registry._EXERCISES)

    def restore(self) -> list[str]:
        """Put back whatever was replaced; return what was."""
        from . import registry
        changed = []
        for name, saved in self.modules.items():
            mod = sys.modules.get(name)
            if mod is None:
                continue
            for k, v in saved.items():
                if k.startswith("__") and k != "__builtins__":
                    continue
                if mod.__dict__.get(k, _MISSING) is not v:
                    changed.append(f"{name}.{k}")
                    setattr(mod, k, v)
        for cls, saved in self.classes.items():
            for k, v in saved.items():
                if cls.__dict__.get(k, _MISSING) is not v:
                    changed.append(f"{cls.__name__}.{k}")
                    setattr(cls, k, v)
        for ex_id, (ex, saved) in self.exercises.items():
            for k, v in saved.items():
                if k == "run" and getattr(vars(ex).get(k), "__wrapped_run__", None) is v:
                    continue  # the worker's own guard around run
                if vars(ex).get(k, _MISSING) is not v:
                    changed.append(f"exercise {ex_id}.{k}")
                    object.__setattr__(ex, k, v)  # declarations are frozen dataclasses
        if registry._EXERCISES != self.registry:
            changed.append("the exercise registry")
            registry._EXERCISES.clear()
            registry._EXERCISES.update(self.registry)
        return changed

    def check(self) -> None:
        changed = self.restore()
        if changed:
            raise Tampered(f"your code replaced {', '.join(sorted(set(changed))[:5])}: submissions may not "
                           "monkeypatch torch, numpy or the grader (put back; this check fails)")


_MISSING = object()
