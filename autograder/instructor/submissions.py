"""Known-wrong submissions: each breaks one thing and must lose exactly the points it targets.

A submission is a patch of a reference solution cell: EXERCISE names the exercise,
CELL the grade_id of the solution cell it replaces, PATCH a list of (old, new) string
replacements applied to the reference's notebook part (each `old` must occur once),
LOSES the grade_ids of the test cells it must fail.

A legitimate variant (a module named variant_*, LOSES = []) is the same kind of patch for something
the chapter allows (another reduction order, exp2 with log2(e), a Kahan sum, another tiling): it must
pass every check, on CPU and on a GPU. Tolerances are derived so that the variants pass and the
mutants of autograder/instructor/mutate.py fail.

The submissions live in submissions/<chapter>/ at the repository's root (test data, not part of the installed
package, hidden from runners and left out of the student pack: autograder.layout.INSTRUCTOR_DATA).
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass

from autograder.layout import ROOT

HERE = os.path.join(ROOT, "submissions")  # test data of the instructor's, not part of the installed package


@dataclass
class WrongSubmission:
    name: str
    chapter: str
    doc: str
    exercise: str
    cell: str
    patch: list
    loses: list

    @property
    def legit(self) -> bool:
        """A legitimate variant: must lose nothing."""
        return self.name.startswith("variant_")

    def apply(self, reference_source: str) -> str:
        src = reference_source
        for old, new in self.patch:
            n = src.count(old)
            if n != 1:
                raise ValueError(f"{self.chapter}/{self.name}: patch target occurs {n} times: {old!r}")
            src = src.replace(old, new)
        return src


def load(chapter: str, name: str):
    """The module submissions/<chapter>/<name>.py, loaded from its file (instructor data: trusted)."""
    path = os.path.join(HERE, chapter, f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"submissions.{chapter}.{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def for_chapter(chapter: str) -> list[WrongSubmission]:
    path = os.path.join(HERE, chapter)
    names = sorted(f[:-3] for f in os.listdir(path) if f.endswith(".py") and not f.startswith("_")) \
        if os.path.isdir(path) else []
    out = []
    for name in names:
        m = load(chapter, name)
        w = WrongSubmission(name, chapter, (m.__doc__ or "").strip().split("\n")[0],
                            m.EXERCISE, m.CELL, m.PATCH, m.LOSES)
        if w.legit and w.loses:
            raise ValueError(f"{chapter}/{w.name}: a legitimate variant must lose nothing (LOSES = [])")
        out.append(w)
    return out
