"""A submission is a list of cells (Python or CUDA source) that define the exercise's names.

It comes from one of three places, and is loaded the same way in a fresh worker:
  - a notebook file: its nbgrader solution cells, in order (what the autograder grades);
  - a live notebook namespace: the named objects and what they use (for `check()` in a cell);
  - reference files in kernels_ref/ (for benchmarks and tests).
"""
from __future__ import annotations

import inspect
import os
import textwrap
import types
from dataclasses import asdict, dataclass

CUDA_MAGIC = "%%cuda"

# Executed before the cells, in the worker as in the notebook's first code cell.
SETUP = """\
import math
import numpy as np
import torch
import course
import triton
import triton.language as tl
"""


@dataclass
class Cell:
    kind: str  # "python" | "cuda"
    source: str
    origin: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def cell_from_text(source: str, origin: str = "") -> Cell:
    stripped = source.lstrip()
    if stripped.startswith(CUDA_MAGIC):
        # the magic's line stays as a blank line: compiler line numbers are the editor's
        return Cell("cuda", "\n" + (stripped.split("\n", 1)[1] if "\n" in stripped else ""), origin)
    return Cell("python", source, origin)


def solution_cells(nb) -> list[tuple]:
    """(notebook cell, Cell) for the solution cells of an nbgrader notebook (nbformat node), in order."""
    out = []
    for i, c in enumerate(nb.cells):
        meta = c.get("metadata", {}).get("nbgrader", {})
        if c.cell_type == "code" and meta.get("solution") and not meta.get("grade"):
            out.append((c, cell_from_text(c.source, meta.get("grade_id", f"cell {i}"))))
    return out


def cells_from_notebook(nb) -> list[Cell]:
    """The solution cells of an nbgrader notebook (nbformat node), in order."""
    return [c for _, c in solution_cells(nb)]


NOTEBOOK_MARKERS = ("# %% notebook", "// %% notebook")


def notebook_part(path: str) -> str:
    """The part of a reference file (kernels_ref/...) after its `%% notebook` line: what the notebook's
    solution cell holds. Read as text: the grader never imports the reference kernels."""
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.strip() in NOTEBOOK_MARKERS:
            return "\n".join(lines[i + 1:]).strip("\n") + "\n"
    return text


def cells_from_files(paths) -> list[Cell]:
    out = []
    for p in paths:
        with open(p) as f:
            src = f.read()
        kind = "cuda" if str(p).endswith(".cu") else "python"
        out.append(Cell(kind, src, os.path.basename(str(p))))
    return out


class MissingName(LookupError):
    pass


def _names_used(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_used(const)
    return names


def _literal(obj, depth: int = 0) -> bool:
    """Is `obj` plain data that its repr() rebuilds exactly: bool, int, float, str, None, and tuples, lists and dicts
    of them (nested a few levels)?"""
    if isinstance(obj, (bool, int, float, str, type(None))):
        ok = True
    elif isinstance(obj, (tuple, list)) and depth < 4 and len(obj) <= 100_000:
        ok = all(_literal(v, depth + 1) for v in obj)
    elif isinstance(obj, dict) and depth < 4 and len(obj) <= 100_000:
        ok = all(_literal(k, depth + 1) and _literal(v, depth + 1) for k, v in obj.items())
    else:
        return False
    if not ok or depth:
        return ok
    import ast
    try:
        return ast.literal_eval(repr(obj)) == obj
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False  # nan, inf: repr is not a literal


def cells_from_namespace(ns: dict, names) -> list[Cell]:
    """The sources of `names` in a live namespace and, first, of what they use."""
    from course.cuda import CompileFailed, CudaKernel, DeviceFunction, _StubKernel, libraries_used

    cells: list[Cell] = []
    seen: set[str] = set()
    modules_seen: set[int] = set()
    main = ns.get("__name__", "__main__")

    def add_libraries(libs) -> None:
        for lib in libs:
            if id(lib.source) not in modules_seen:
                modules_seen.add(id(lib.source))
                cells.append(Cell("cuda", lib.source, lib.functions[0]))

    def visit(name: str, required: bool) -> None:
        if name in seen:
            return
        seen.add(name)
        if name not in ns:
            if required:
                raise MissingName(f"`{name}` is not defined: run the cell that defines it first")
            return
        obj = ns[name]
        if isinstance(obj, CompileFailed):
            raise MissingName(obj.why)
        if isinstance(obj, _StubKernel) and getattr(obj, "module", None) is None and required:
            from course.errors import NotImplementedYet
            raise NotImplementedYet(obj.why)
        if isinstance(obj, DeviceFunction):  # its library cell, after the libraries that one uses
            add_libraries(libraries_used(name, ns))
            return
        if isinstance(obj, (CudaKernel, _StubKernel)):
            module = getattr(obj, "module", None)
            src = module.source if module is not None else ns.get("__cuda_sources__", {}).get(name)
            if src is None:
                raise MissingName(f"cannot find the CUDA source of `{name}`: run its %%cuda cell again")
            add_libraries(module.libraries if module is not None else [])
            if id(src) not in modules_seen:
                modules_seen.add(id(src))
                cells.append(Cell("cuda", src, name))
            return
        fn = getattr(obj, "fn", None) if type(obj).__name__ in ("JITFunction", "InterpretedFunction") else None
        target = fn if fn is not None else obj
        if isinstance(target, types.FunctionType) and target.__module__ == main:
            for dep in sorted(_names_used(target.__code__)):
                visit(dep, False)
            try:
                src = inspect.getsource(obj if fn is None else fn)
            except (OSError, TypeError):
                raise MissingName(f"cannot read the source of `{name}`: define it in a code cell") from None
            cells.append(Cell("python", textwrap.dedent(src), name))
        elif isinstance(obj, types.ModuleType):
            mod = obj.__name__
            line = f"import {mod}" if mod == name else f"import {mod} as {name}"
            cells.append(Cell("python", line, name))
        elif _literal(obj):  # a number, a string, or a table of them (e.g. an exercise's given constants)
            cells.append(Cell("python", f"{name} = {obj!r}", name))
        elif required:
            raise MissingName(f"`{name}` is a {type(obj).__name__}; the grader expects a function or kernel")

    for n in names:
        visit(n, True)
    return cells


def _strip_magics(src: str) -> str:
    """Blank out IPython line magics and shell escapes, keeping line numbers."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in src.split("\n"))


def load(cells: list[Cell], workdir: str, after_cell=None, errors: list | None = None, before_cell=None) -> dict:
    """Execute the cells in a fresh namespace; each Python cell lives in its own file
    so that tracebacks and Triton's inspect.getsource find its lines.
    after_cell(cell, names), if given, runs after each cell with the names it (re)bound.
    errors, if given, collects (cell, exception) for cells that raise, and loading goes on:
    a broken cell then costs only the exercises that need it."""
    from course.magic import run_cell

    ns: dict = {"__name__": "submission", "__builtins__": __builtins__}
    exec(compile(SETUP, "<setup>", "exec"), ns)
    for i, cell in enumerate(cells):
        before = {k: id(v) for k, v in ns.items()}
        if before_cell is not None:
            before_cell(cell)
        try:
            _exec_cell(i, cell, ns, workdir, run_cell)
        except Exception as e:
            if errors is None:
                raise
            errors.append((cell, e))
        if after_cell is not None:
            after_cell(cell, [k for k, v in ns.items() if before.get(k) != id(v)])
    return ns


def defines(cell: Cell, names) -> bool:
    """Whether a cell defines one of `names` (a Python def/assignment, a kernel or device function)."""
    import re
    return any(re.search(rf"(\b(def|void|float|double|int|auto|half|float2|float4)\s+{n}\s*\(|^{n}\s*=)",
                         cell.source, re.M) for n in names)


def _exec_cell(i: int, cell: Cell, ns: dict, workdir: str, run_cell) -> None:
    if cell.kind == "cuda":
        print(run_cell(cell.source, ns).summary())  # what the %%cuda magic shows under the cell
        return
    path = os.path.join(workdir, f"cell{i}_{''.join(ch for ch in cell.origin if ch.isalnum() or ch == '_')}.py")
    src = _strip_magics(cell.source)
    with open(path, "w") as f:
        f.write(src)
    exec(compile(src, path, "exec"), ns)
