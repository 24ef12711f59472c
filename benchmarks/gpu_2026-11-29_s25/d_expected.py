"""Run d's Chapter 6 validate ran out of its 560 s after 24 of 31 submissions, so `validate` printed no table. This
recomputes, on the CPU, what `validate` would have expected of each graded submission in GPU mode (every test cell's
points, less the cells its declaration says it LOSES) and compares the totals the judge logged (d_validate.log).
Usage: python .../d_expected.py [LOG]"""
import os
import re
import sys

import nbformat

from autograder import validate as v
from autograder.submissions import for_chapter

CH = "ch06_low_precision"
log = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "d", "d_validate.log")
grades = v._grade_cells(nbformat.read(v.notebook_path(CH), 4))
total = sum(g["points"] for g in grades.values())
want = {"solution": total, "blank": 0.0}
for w in for_chapter(CH):
    label = (w.name if w.legit else f"wrong-{w.name}").replace("_", "-")
    want[label] = total - sum(grades[g]["points"] for g in set(w.loses))
got = {m[0]: (float(m[1]), float(m[2])) for m in re.findall(r"\] ([\w-]+): ([\d.]+)/([\d.]+) in", open(log).read())}
bad = 0
for name, (have, of) in sorted(got.items()):
    ok = of == total and abs(have - want[name]) < 1e-9
    bad += not ok
    print(f"{name:50} got {have:g}/{of:g}  expected {want[name]:g}  {'ok' if ok else 'MISMATCH'}")
print(f"{len(got)} of {len(want)} submissions graded; {len(got) - bad} as expected, {bad} not; not graded: "
      + ", ".join(sorted(set(want) - set(got))))
