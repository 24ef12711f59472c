"""Build nbgrader source notebooks from their reviewable text (`source/CH/CH.nb.md`).

The text is Markdown. Code cells are fenced blocks whose info string says what they are:

    ```python setup                       read-only code cell (locked)
    ```python                             free code cell: the student may edit and run it
    ```python solution exercise=ID        solution cell; its code is the exercise's reference
                                          file (kernels_ref/...), so notebook and reference
                                          cannot drift; the body stays empty
    ```cuda solution exercise=ID          the same, as a %%cuda cell
    ```python test exercise=ID check=C points=N
                                          autograded test cell, generated from the declaration
    ```python solution id=NAME points=N   a free-answer (manually graded) code cell
A line `+++` splits Markdown into separate cells.
"""
from __future__ import annotations

import os
import re

import nbformat

from autograder.declare.exercise import grade_id_for

FENCE = re.compile(r"^```(python|cuda)\b(.*)$")
from autograder.layout import ROOT  # noqa: E402
STAMP_KEY = "flashcourse"


class NbTextError(ValueError):
    pass


def _attrs(text: str) -> dict:
    out = {}
    for tok in text.split():
        k, _, v = tok.partition("=")
        out[k] = v if _ else True
    return out


def _test_source(exercise_id: str, check: str) -> str:
    from autograder.declare import registry
    ex = registry.get(exercise_id)
    call = f'check("{exercise_id}", "{check}")'
    if check == "hidden":
        return (f'"""{ex.title}: hidden tests (more shapes, fresh adversarial rows); they run when '
                f'your notebook is graded."""\nfrom autograder import check\n'
                f"### BEGIN HIDDEN TESTS\n{call}\n### END HIDDEN TESTS")
    what = {"correctness": "correctness on the visible shapes",
            "bandwidth": "bandwidth on the GPU, as a fraction of the copy bandwidth",
            "throughput": "throughput on the GPU (TFLOP/s), as a fraction of PyTorch's measured in the same run",
            "memory": "memory: what your code allocates while it runs"}[check]
    return f'"""{ex.title}: {what}."""\nfrom autograder import check\n{call}'


def _solution_source(exercise_id: str, lang: str) -> str:
    from autograder.declare.submission import notebook_part

    from autograder.declare import registry
    ex = registry.get(exercise_id)
    body = notebook_part(os.path.join(ROOT, ex.solution)).rstrip("\n")
    return f"%%cuda\n{body}" if lang == "cuda" else body


def _meta(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    m = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution}
    if points is not None:
        m["points"] = points
    return {"nbgrader": m}


def parse(text: str, origin: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    lines = text.split("\n")
    md: list[str] = []
    ids: set[str] = set()

    def flush_md():
        chunk = "\n".join(md).strip("\n")
        md.clear()
        if chunk.strip():
            nb.cells.append(nbformat.v4.new_markdown_cell(chunk))

    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if line.strip() == "+++":
            flush_md()
            i += 1
            continue
        if not m:
            md.append(line)
            i += 1
            continue
        flush_md()
        lang, attrs = m.group(1), _attrs(m.group(2))
        body = []
        i += 1
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise NbTextError(f"{origin}: unclosed code fence opened as {line!r}")
        i += 1
        src = "\n".join(body)
        where = f"{origin}: cell {line!r}"
        meta = {}
        ex_id = attrs.get("exercise")
        if "test" in attrs:
            check = attrs.get("check", "correctness")
            if not ex_id or "points" not in attrs:
                raise NbTextError(f"{where}: a test cell needs exercise= and points=")
            gid = grade_id_for(ex_id, check)
            src = _test_source(ex_id, check)
            meta = _meta(gid, grade=True, locked=True, points=int(attrs["points"]))
        elif "solution" in attrs:
            if ex_id:
                if src.strip():
                    raise NbTextError(f"{where}: the body comes from the exercise's reference; leave it empty")
                src = _solution_source(ex_id, lang)
                gid = attrs.get("id") or ex_id.split(".", 1)[1]
            else:
                gid = attrs.get("id") or ""
                if not gid:
                    raise NbTextError(f"{where}: a solution cell needs exercise= or id=")
                if lang == "cuda":
                    src = "%%cuda\n" + src
            points = int(attrs["points"]) if "points" in attrs else None
            meta = _meta(gid, solution=True, grade=points is not None, points=points)
        elif "setup" in attrs:
            gid = attrs.get("id", f"setup{len(nb.cells)}")
            meta = _meta(gid, locked=True)
            src = ("%%cuda\n" + src) if lang == "cuda" else src
        else:
            gid = None
            src = ("%%cuda\n" + src) if lang == "cuda" else src
        if gid:
            if gid in ids:
                raise NbTextError(f"{where}: grade_id {gid!r} used twice")
            ids.add(gid)
        cell = nbformat.v4.new_code_cell(src, metadata=meta)
        nb.cells.append(cell)
    flush_md()
    for n, cell in enumerate(nb.cells):  # stable ids, so rebuilding changes nothing
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell["id"] = gid or f"c{n:03d}"
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        STAMP_KEY: {"generated_from": origin,
                    "note": f"Generated by `flashcourse build` from {origin}; do not edit, edit that file."},
    }
    return nb


def dumps(nb) -> str:
    return nbformat.writes(nb) + "\n"


def chapters() -> list[str]:
    src = os.path.join(ROOT, "source")
    return sorted(d for d in os.listdir(src) if os.path.isfile(os.path.join(src, d, f"{d}.nb.md")))


def text_path(chapter: str) -> str:
    return os.path.join(ROOT, "source", chapter, f"{chapter}.nb.md")


def notebook_path(chapter: str, kind: str = "source") -> str:
    return os.path.join(ROOT, kind, chapter, f"{chapter}.ipynb")


def build(chapter: str) -> str:
    """The source notebook's text, built from its .nb.md."""
    with open(text_path(chapter)) as f:
        text = f.read()
    return dumps(parse(text, f"source/{chapter}/{chapter}.nb.md"))
