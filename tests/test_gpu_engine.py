"""On a GPU: every reference passes every check, every known-wrong submission fails exactly
the checks it targets. Skipped without a GPU.

Run: FLASHCOURSE_MODE=gpu python -m pytest tests/test_gpu_engine.py -v
"""

import pytest

import course
from autograder.declare import registry
from autograder.declare.exercise import TIMED_CHECKS, grade_id_for
from autograder.judge.session import run_check
from autograder.declare.submission import cell_from_text
from autograder.instructor.submissions import for_chapter
from kernels_ref.bench import chapter_cells, reference_source

pytestmark = pytest.mark.skipif(not course.GPU, reason="needs a GPU")

def _affected(w, ex) -> bool:
    """Exercises a wrong submission can change: its own, and those whose cells it must fail."""
    return w.exercise == ex.id or any(grade_id_for(ex.id, c) in w.loses for c in ex.checks)


CASES = []
for ex in registry.all_exercises():
    CASES += [(ex.id, "reference", chk) for chk in ex.checks]
    for w in for_chapter(ex.chapter):
        if _affected(w, ex):
            CASES += [(ex.id, w.name, chk) for chk in ex.checks]


def submission_cells(ex, variant: str):
    """The chapter's reference cells up to ex, with the wrong submission's patch applied."""
    if variant == "reference":
        return chapter_cells(ex), []
    w = next(w for w in for_chapter(ex.chapter) if w.name == variant)
    target = registry.get(w.exercise)
    cells = chapter_cells(ex)
    key = target.id.split(".", 1)[1]
    cells = [cell_from_text(w.apply(reference_source(target)), key) if c.origin == key else c for c in cells]
    return cells, w.loses


@pytest.mark.parametrize("exercise_id,variant,check", CASES)
def test_check(exercise_id, variant, check):
    ex = registry.get(exercise_id)
    cells, loses = submission_cells(ex, variant)
    r = run_check(exercise_id, check, cells)
    print(f"{exercise_id} {variant} {check}: {'PASS' if r.passed else 'FAIL'} {r.seconds:.1f}s {r.message}")
    expect_pass = grade_id_for(exercise_id, check) not in loses
    assert r.passed == expect_pass, r.message


def main(argv) -> int:
    """Without pytest (the GPU machines lack xdist): python tests/test_gpu_engine.py [chapter ...].
    As grading does it: one warm runner per submission serves all its checks. Quiet checks of
    several submissions run at once; then the timed checks, one submission at a time on a quiet GPU.
    Also runs in CPU mode (timed checks skipped): the same expectations, before spending GPU time."""
    from collections import defaultdict
    from concurrent.futures import ThreadPoolExecutor

    from autograder.judge.session import Session
    quiet_only = "--quiet-only" in argv or not course.GPU  # skip timed checks (before thresholds exist)
    argv = [a for a in argv if not a.startswith("--")]
    chosen = [c for c in CASES if (not argv or registry.get(c[0]).chapter.startswith(tuple(argv)))
              and not (quiet_only and c[2] in TIMED_CHECKS)]
    groups = defaultdict(list)  # (chapter, variant) -> checks; the cells are the chapter's, patched
    for ex_id, variant, check in chosen:
        groups[(registry.get(ex_id).chapter, variant)].append((ex_id, check))

    def one_group(key, timed: bool):
        chapter, variant = key
        todo = [c for c in groups[key] if (c[1] in TIMED_CHECKS) == timed]
        if not todo:
            return []
        last = max((registry.get(e) for e, _ in groups[key]), key=lambda ex: len(chapter_cells(ex)))
        cells, loses = submission_cells(last, variant)
        oks = []
        with Session(cells) as s:
            for ex_id, check in todo:
                r = s.check(ex_id, check)
                ok = r.passed == (grade_id_for(ex_id, check) not in loses)
                print(f"{'ok ' if ok else 'BAD'} {ex_id} {variant} {check}: {'PASS' if r.passed else 'FAIL'} "
                      f"{r.seconds:.1f}s {r.message[:300]}".replace("\n", " | "), flush=True)
                oks.append(ok)
        return oks
    with ThreadPoolExecutor(6 if course.GPU else 2) as pool:
        oks = [ok for part in pool.map(lambda k: one_group(k, False), list(groups)) for ok in part]
    for key in groups:
        oks += one_group(key, True)
    print(f"{sum(oks)} as expected, {len(oks) - sum(oks)} not")
    return 0 if all(oks) else 1


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv[1:]))
