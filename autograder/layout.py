"""Where things are, by trust role: the repository root and what each role's folder may be seen by.

The folders of autograder/ are the trust model (docs/trust-model.md):
  declare/     the exercises, once each: inputs, references, checks, thresholds (both sides read them)
  boundary/    what crosses between the judge and a runner: the wire, lent GPU buffers, guard zones,
               CUDA-graph timing primitives, and the sandbox a runner is started in
  judge/       trusted: draws inputs, verifies outputs, times, scores; never runs a submission's code
  runner/      untrusted: runs a submission's code on buffers the judge lent and reports facts
  nbgrader/    nbgrader's side: the autograde step, the guard that refuses grading without it, templates
  instructor/  tools for instructors: the CLI, class grading, feedback, validate, mutate, the student pack
The live `check()` (autograder/notebook.py) runs in a student's kernel (a runner) and asks a judge.

What is instructor-only follows from this: the packages in INSTRUCTOR_PACKAGES and the folders in
INSTRUCTOR_DATA. A student pack leaves them out, and a runner's sandbox hides them.
"""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Python packages a student's check() never needs (the student pack refuses to ship a closure reaching them).
INSTRUCTOR_PACKAGES = ("autograder.instructor", "autograder.nbgrader")
# Folders (relative to the repository) that only an instructor may read: the reference solutions, the
# notebooks with solutions and hidden tests, the known-wrong and attack submissions, the instructor tools.
INSTRUCTOR_DATA = ("source", "kernels_ref", "submissions", *(p.replace(".", "/") for p in INSTRUCTOR_PACKAGES))
