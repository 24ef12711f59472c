"""On a GPU: every reference passes every check, every known-wrong submission fails exactly
the checks it targets, each check in its own worker process. Skipped without a GPU.

Run: FLASHCOURSE_MODE=gpu python -m pytest tests/test_gpu_engine.py -v
"""

import pytest

import course
from autograder import registry
from autograder.exercise import grade_id_for
from autograder.runner import run_check
from autograder.submission import cell_from_text
from autograder.submissions import for_chapter
from kernels_ref.bench import reference_source

pytestmark = pytest.mark.skipif(not course.GPU, reason="needs a GPU")

CASES = []
for ex in registry.all_exercises():
    CASES += [(ex.id, "reference", chk) for chk in ex.checks]
    for w in for_chapter(ex.chapter):
        if w.exercise == ex.id:
            CASES += [(ex.id, w.name, chk) for chk in ex.checks]


@pytest.mark.parametrize("exercise_id,variant,check", CASES)
def test_check(exercise_id, variant, check):
    ex = registry.get(exercise_id)
    src = reference_source(ex)
    loses = []
    if variant != "reference":
        w = next(w for w in for_chapter(ex.chapter) if w.name == variant)
        src, loses = w.apply(src), w.loses
    r = run_check(exercise_id, check, [cell_from_text(src, variant)])
    print(f"{exercise_id} {variant} {check}: {'PASS' if r.passed else 'FAIL'} {r.seconds:.1f}s {r.message}")
    expect_pass = grade_id_for(exercise_id, check) not in loses
    assert r.passed == expect_pass, r.message
