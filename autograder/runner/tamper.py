"""Monkeypatching guard for the worker: the submission runs in the grader's process, so it could
replace torch.isnan, numpy.abs or the grader's own functions. A Snapshot taken before the
submission's code runs notices any such replacement, puts the original back, and the check fails.

A replacement may also keep the name and change what is behind it: a function's code object,
defaults or closure cells swapped in place (`course.timing.bench.__code__ = ...`), or a method of a class the runner
relies on (torch.cuda.Event.elapsed_time, torch.cuda.CUDAGraph.replay), replaced or shadowed by one
added to a subclass. The Snapshot watches those too. The verdict does not rest on any of this (the
judge verifies outputs in its own process and times on its own clock); it turns an attempt into a
clear message, and keeps the runner's own code (the timed batch's replay and its final wait for the
GPU, autograder.runner.execute) what the judge sent it to run.
"""
from __future__ import annotations

import sys
import types

# Modules (and their attributes) that grading relies on.
WATCHED = ("builtins", "math", "numpy", "torch", "torch.nn.functional", "torch.testing", "course",
           "course.cuda", "course.timing", "course.mode", "autograder", "autograder.judge.grading",
           "autograder.declare.registry", "autograder.declare.exercise", "autograder.declare.exercises",
           "autograder.declare.submission", "autograder.runner.worker", "autograder.runner.execute",
           "autograder.boundary.wire", "autograder.boundary.graphs", "autograder.boundary.guards", "tracemalloc",
           "json")
# and every chapter's declaration module (autograder.declare.exercises.chNN_*) loaded when the Snapshot is taken
CHAPTERS = "autograder.declare.exercises."
# Modules of others where only what can be called is compared: their data may change as they work
# (torch.cuda sets _initialized and default_generators when CUDA starts); their functions may not.
CALLABLES_ONLY = ("torch.cuda",)


class Tampered(Exception):
    pass


def _is_callable(v) -> bool:
    return isinstance(v, (types.FunctionType, types.BuiltinFunctionType, type))


def _functions(owner: str, ns: dict):
    """(label, function) for each Python function in a namespace (static and class methods unwrapped)."""
    for k, v in ns.items():
        v = v.__func__ if isinstance(v, (staticmethod, classmethod)) else v
        if isinstance(v, types.FunctionType):
            yield f"{owner}.{k}", v


def _insides(fn) -> tuple:
    """Compared by identity, item by item: code, defaults, keyword defaults (the dict, and what it holds, since it
    can be changed in place), closure cells' contents."""
    kw = fn.__kwdefaults__
    return fn.__code__, fn.__defaults__, kw, tuple((kw or {}).items()), tuple(_cell_contents(fn))


def _same(now: tuple, saved: tuple) -> bool:
    code, defaults, kw, kw_items, cells = now
    return (code is saved[0] and defaults is saved[1] and kw is saved[2] and len(kw_items) == len(saved[3])
            and all(k == k0 and v is v0 for (k, v), (k0, v0) in zip(kw_items, saved[3]))
            and len(cells) == len(saved[4]) and all(a is b for a, b in zip(cells, saved[4])))


def _cell_contents(fn):
    """What each closure cell of fn holds (cell_contents is writable: a swap would keep the function and its code)."""
    for cell in fn.__closure__ or ():
        try:
            yield cell.cell_contents
        except ValueError:  # an empty cell
            yield _MISSING


class Snapshot:
    def __init__(self):
        torch = sys.modules.get("torch")  # absent in a NumPy-only runner (autograder.runner.numpy_only)

        from autograder.declare import registry
        watched = WATCHED + tuple(sorted(n for n in sys.modules if n.startswith(CHAPTERS)))
        self.modules = {n: dict(vars(sys.modules[n])) for n in watched if n in sys.modules}
        self.modules.update({n: {k: v for k, v in vars(sys.modules[n]).items() if _is_callable(v)}
                             for n in CALLABLES_ONLY if n in sys.modules})
        from autograder.runner import execute
        classes = [execute.Outputs, execute._Reuse]
        if torch is not None:
            classes.append(torch.Tensor)
            for c in (torch.cuda.Event, torch.cuda.CUDAGraph):  # and their bases (torch._C's): what timing calls
                classes += [b for b in c.__mro__ if b is not object]
        self.classes = {c: dict(vars(c)) for c in classes}
        # what is inside each watched function (a swapped code object keeps the function's identity)
        found = [f for n, saved in self.modules.items() for f in _functions(n, saved)]
        found += [f for c, saved in self.classes.items() for f in _functions(c.__name__, saved)]
        self.insides = {id(fn): (label, fn, _insides(fn)) for label, fn in found}
        self.exercises = {ex.id: (ex, dict(vars(ex))) for ex in registry.all_exercises()}
        self.registry = dict(registry._EXERCISES)

    def restore(self) -> list[str]:
        """Put back whatever was replaced; return what was."""
        from autograder.declare import registry
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
            for k in [k for k in cls.__dict__ if k not in saved]:  # added: it would shadow a base's
                if any(k in vars(b) for b in cls.__mro__[1:]):
                    changed.append(f"{cls.__name__}.{k}")
                    delattr(cls, k)
        for label, fn, saved in self.insides.values():
            if not _same(_insides(fn), saved):
                changed.append(f"{label} (its code)")
                fn.__code__, fn.__defaults__, fn.__kwdefaults__ = saved[:3]
                if saved[2] is not None:
                    saved[2].clear()
                    saved[2].update(saved[3])
                for cell, v in zip(fn.__closure__ or (), saved[4]):
                    if v is _MISSING:
                        del cell.cell_contents
                    else:
                        cell.cell_contents = v
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
