"""Run the engine's checks for chapters in CPU mode, as tests/test_gpu_engine.py does on a GPU:
python tests/cpu_check.py ch04_flash_attention [--only VARIANT]. Checks that need a GPU are skipped."""
import os
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from autograder import registry  # noqa: E402
from autograder.exercise import TIMED_CHECKS, grade_id_for  # noqa: E402
from autograder.runner import run_check  # noqa: E402
from autograder.submissions import for_chapter  # noqa: E402
from tests.test_gpu_engine import CASES, submission_cells  # noqa: E402


def main(argv):
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    chapters = [a for a in argv if a.startswith("ch")]
    chosen = [c for c in CASES if registry.get(c[0]).chapter in chapters and c[2] not in TIMED_CHECKS
              and (only is None or c[1] == only)]

    def one(case):
        ex_id, variant, check = case
        cells, loses = submission_cells(registry.get(ex_id), variant)
        r = run_check(ex_id, check, cells)
        ok = r.passed == (grade_id_for(ex_id, check) not in loses)
        print(f"{'ok ' if ok else 'BAD'} {ex_id} {variant} {check}: {'PASS' if r.passed else 'FAIL'} "
              f"{r.seconds:.1f}s {r.message[:400]}".replace("\n", " | "), flush=True)
        return ok
    with ThreadPoolExecutor(2) as pool:
        oks = list(pool.map(one, chosen))
    print(f"{sum(oks)} as expected, {len(oks) - sum(oks)} not")
    _ = for_chapter
    return 0 if all(oks) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
