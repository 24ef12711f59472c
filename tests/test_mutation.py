"""Mutation testing of the grader (autograder.instructor.mutate, benchmarks/mutation/cpu.json: one entry per chapter).

Fast: the generator itself (every mutant parses or differs by tokens only, ids are unique and stable,
the committed reports name mutants the generator still makes).
Slow (about 1-2 minutes on 2 cores in CPU mode): a deterministic sample of the mutants each committed
report counts as killed is graded again; every one must still be killed, so the kill rate cannot
silently fall.
"""
import ast
import os

import pytest

from autograder.instructor import mutate
from autograder.declare import registry

CHAPTERS = sorted({ex.chapter for ex in registry.all_exercises()})
PER_CHAPTER = int(os.environ.get("FLASHCOURSE_MUTATION_SAMPLE", "5"))


def _report(chapter):
    rep = mutate.cpu_report(chapter)
    if rep is None:
        pytest.skip(f"no committed mutation report for {chapter}")
    return rep


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_mutants_are_well_formed_and_stable(chapter):
    first = mutate.mutants_for_chapter(chapter)
    again = mutate.mutants_for_chapter(chapter)
    assert [m.id for m in first] == [m.id for m in again]
    assert len({m.id for m in first}) == len(first), "mutant ids must be unique"
    assert {m.exercise for m in first} == {ex.id for ex in mutate.chapter_exercises(chapter)}, \
        "every exercise of the chapter gets mutants"
    for m in first:
        ref = mutate._reference_source(registry.get(m.exercise))
        assert m.source != ref and m.diff, m.id
        path, line, col, rule = m.id.split("#")[0].split(":")
        assert path == m.file and int(line) == m.line and rule == m.rule
        if not m.file.endswith(".cu"):
            ast.parse(m.source)
        else:
            assert m.source.startswith("%%cuda\n")
    assert mutate.sample(first, 7) == mutate.sample(again, 7)


def test_rules_hit_the_classes_the_issue_names():
    rules = {m.rule for ch in CHAPTERS for m in mutate.mutants_for_chapter(ch)}
    for want in ("drop_barrier", "move_barrier_up", "fmaxf_to_fminf", "inf_to_0", "narrow_float_to_half",
                 "__shfl_xor_sync_to___shfl_down_sync", "cmp<to<=", "bound+1", "bound-1", "max_to_min",
                 "maximum_to_minimum", "swap_operands", "guard_never", "where_false", "drop_mask", "skip_tail",
                 "eps_x100", "const_to_0", "narrow_float32", "drop_cast", "delete_stmt", "delete_update"):
        assert any(r.startswith(want) for r in rules), want


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_committed_report_names_current_mutants(chapter):
    rep = _report(chapter)
    ids = {m.id for m in mutate.mutants_for_chapter(chapter)}
    named = [s["id"] for s in rep["survived"]] + [e["id"] for e in rep.get("equivalent_mutants", [])]
    stale = [i for i in named if i not in ids]
    assert not stale, f"the report names mutants the generator no longer makes (re-run flashcourse mutate): {stale}"
    assert rep["killed"] + rep["equivalent"] + len(rep["survived"]) + len(rep.get("errors", [])) == rep["mutants"]


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_killed_mutants_stay_killed(chapter):
    rep = _report(chapter)
    every = mutate.mutants_for_chapter(chapter)
    tested = mutate.sample(every, len(every) if not rep.get("sampled") else rep["mutants"])
    not_killed = {s["id"] for s in rep["survived"]} | {e["id"] for e in rep.get("equivalent_mutants", [])} \
        | {e["id"] for e in rep.get("errors", [])} | set(rep.get("killed_slowly", []))
    killed = [m for m in tested if m.id not in not_killed]
    chosen = mutate.sample(killed, PER_CHAPTER)
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(lambda m: mutate.grade(m, timeout=30.0), chosen))
    alive = [f"{o.id}: {o.status}" for o in outcomes if o.status != "killed"]
    assert not alive, f"mutants the committed report counts as killed now survive: {alive}"


@pytest.mark.parametrize("exercise_id", [ex.id for ex in registry.all_exercises()])
def test_declared_edge_classes_are_covered(exercise_id):
    """Each exercise's edge classes (Exercise.edges) are graded by some quiet case, in CPU mode and on a GPU."""
    ex = registry.get(exercise_id)
    for gpu in (False, True):
        assert not ex.uncovered_edges(gpu), f"{exercise_id} ({'GPU' if gpu else 'CPU'} mode): no case covers " \
                                            f"{ex.uncovered_edges(gpu)}"
