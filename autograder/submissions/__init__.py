"""Known-wrong submissions: each breaks one thing and must lose exactly the points it targets.

A submission is a patch of a reference solution cell: EXERCISE names the exercise,
CELL the grade_id of the solution cell it replaces, PATCH a list of (old, new) string
replacements applied to the reference's notebook part (each `old` must occur once),
LOSES the grade_ids of the test cells it must fail.

A legitimate variant (a module named variant_*, LOSES = []) is the same kind of patch for something
the chapter allows (another reduction order, exp2 with log2(e), a Kahan sum, another tiling): it must
pass every check, on CPU and on a GPU. Tolerances are derived so that the variants pass and the
mutants of autograder/mutate.py fail.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))


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


def for_chapter(chapter: str) -> list[WrongSubmission]:
    pkg = f"{__name__}.{chapter}"
    path = os.path.join(HERE, chapter)
    out = []
    for info in sorted(pkgutil.iter_modules([path]), key=lambda i: i.name):
        m = importlib.import_module(f"{pkg}.{info.name}")
        w = WrongSubmission(info.name, chapter, (m.__doc__ or "").strip().split("\n")[0],
                            m.EXERCISE, m.CELL, m.PATCH, m.LOSES)
        if w.legit and w.loses:
            raise ValueError(f"{chapter}/{w.name}: a legitimate variant must lose nothing (LOSES = [])")
        out.append(w)
    return out
