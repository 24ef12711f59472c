"""The example figures that GPU cells show in CPU mode (`course.plots.example`), measured on a GPU.

    python benchmarks/example_figures.py [--out DIR] [CHAPTER ...]   # on a machine with an NVIDIA GPU
    python benchmarks/example_figures.py --check                     # anywhere: every example is there

An example cell is a code cell of a source notebook (source/CH/CH.ipynb, built from CH.nb.md) whose
CPU branch calls `course.plots.example("NAME")`. For each chapter that has one, a fresh Python runs
the notebook's code cells in order up to its last example cell, as tests/run_cells.py does (no
Jupyter: test cells skipped, %%cuda cells through the same magic, each cell from a file so that
Triton can read a kernel's source back). The solution cells are the course's reference solutions,
so "your kernel" in these figures is the reference. The figure an example cell draws on the GPU is
saved as DIR/NAME.png (a cell that draws none, such as a table of numbers, records only its
printed lines); DIR/figures.json records, per example, the GPU, date, versions, chapter and cell,
and what the cell printed. DIR defaults to course/figures. Writes nothing under DIR but those.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURES = os.path.join(ROOT, "course", "figures")
EXAMPLE = re.compile(r"""course\.plots\.example\(\s*["']([A-Za-z0-9_]+)["']""")
COMMAND = "python benchmarks/example_figures.py"
WHAT = "the course's reference solutions in place of your kernels"
DPI = 90


def chapters() -> list[str]:
    src = os.path.join(ROOT, "source")
    return sorted(d for d in os.listdir(src) if os.path.isfile(os.path.join(src, d, f"{d}.ipynb")))


def _cells(chapter: str) -> list[dict]:
    with open(os.path.join(ROOT, "source", chapter, f"{chapter}.ipynb")) as f:
        nb = json.load(f)  # plain JSON: the GPU machines have no nbformat
    for c in nb["cells"]:
        if isinstance(c["source"], list):
            c["source"] = "".join(c["source"])
    return nb["cells"]


def example_cells(chapter: str) -> list[tuple[int, str]]:
    """(cell index, example name) of each example cell of a chapter's source notebook."""
    out = []
    for i, c in enumerate(_cells(chapter)):
        if c["cell_type"] == "code":
            out += [(i, name) for name in EXAMPLE.findall(c["source"])]
    return out


def _md_line(chapter: str, name: str) -> int | None:
    with open(os.path.join(ROOT, "source", chapter, f"{chapter}.nb.md")) as f:
        for n, line in enumerate(f, 1):
            if EXAMPLE.search(line) and EXAMPLE.search(line).group(1) == name:
                return n
    return None


class _Tee:
    def __init__(self, stream):
        self.stream, self.parts = stream, []

    def write(self, s):
        self.parts.append(s)
        return self.stream.write(s)

    def flush(self):
        self.stream.flush()


def _figure_problems(fig, device: str) -> list[str]:
    """What a reader would miss: a named device in the title, labelled axes, plotted data."""
    import math
    problems = []
    titles = [fig._suptitle.get_text() if fig._suptitle else ""] + [ax.get_title() for ax in fig.axes]
    if not any(device in t for t in titles):
        problems.append(f"no title names {device}")
    if not any(ax.get_xlabel() for ax in fig.axes) or not any(ax.get_ylabel() for ax in fig.axes):
        problems.append("an axis without a label")
    for ax in fig.axes:
        ys = [y for line in ax.get_lines() for y in line.get_ydata() if not isinstance(y, str)]
        if not any(math.isfinite(float(y)) and y != 0 for y in ys):
            problems.append(f"axes {ax.get_title()!r} has no data")
    return problems


def run_chapter(chapter: str, out: str, result_path: str) -> int:
    """In a fresh process: run the chapter's cells, save the example figures, write a JSON result."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import course
    from course.magic import run_cell
    if not course.GPU:
        print("example figures need a GPU (FLASHCOURSE_MODE=gpu)", file=sys.stderr)
        return 2
    import torch
    import triton
    device = torch.cuda.get_device_name()
    cells = _cells(chapter)
    wanted = dict(example_cells(chapter))
    last = max(wanted)
    tmp = tempfile.mkdtemp(prefix=f"examples-{chapter}-")
    ns: dict = {"__name__": "__main__"}
    drawn: list = []
    plt.show = lambda *a, **k: drawn.extend(plt.figure(n) for n in plt.get_fignums() if plt.figure(n) not in drawn)
    result = {"chapter": chapter, "examples": {}, "errors": []}
    for i, cell in enumerate(cells[:last + 1]):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] != "code" or meta.get("grade"):
            continue
        src = cell["source"]
        tee = _Tee(sys.stdout) if i in wanted else None
        print(f"--- {chapter} cell {i} ({meta.get('grade_id', 'free')})", flush=True)
        t0 = time.perf_counter()
        try:
            if tee:
                sys.stdout = tee
            if src.lstrip().startswith("%%cuda"):
                print(run_cell(src.split("\n", 1)[1], ns).summary())
            else:
                f = os.path.join(tmp, f"cell{i}.py")
                with open(f, "w") as fh:
                    fh.write(src)
                exec(compile(src, f, "exec"), ns)
        except Exception as e:  # noqa: BLE001
            import traceback
            traceback.print_exc(limit=3)
            result["errors"].append(f"cell {i}: {type(e).__name__}: {e}")
        finally:
            sys.stdout = sys.__stdout__
        if tee:
            name = wanted[i]
            figs = drawn + [plt.figure(n) for n in plt.get_fignums() if plt.figure(n) not in drawn]
            entry = {"chapter": chapter, "notebook": f"source/{chapter}/{chapter}.ipynb", "cell": i,
                     "cell_id": cell.get("id"), "text": f"source/{chapter}/{chapter}.nb.md",
                     "text_line": _md_line(chapter, name), "device": device,
                     "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
                     "torch": torch.__version__, "triton": triton.__version__, "what": WHAT,
                     "printed": "".join(tee.parts), "seconds": round(time.perf_counter() - t0, 1),
                     "figure": None}
            if len(figs) > 1:
                result["errors"].append(f"{name}: cell {i} drew {len(figs)} figures, expected one")
            elif figs:
                entry["figure"] = f"{name}.png"
                entry["problems"] = _figure_problems(figs[0], device)
                figs[0].savefig(os.path.join(out, entry["figure"]), dpi=DPI, bbox_inches="tight")
            if not any(e.startswith(f"cell {i}:") for e in result["errors"]):
                result["examples"][name] = entry
        plt.close("all")
        drawn.clear()
    with open(result_path, "w") as f:
        json.dump(result, f, indent=1)
    return 1 if result["errors"] else 0


def write_manifest(out: str, examples: dict) -> str:
    path = os.path.join(out, "figures.json")
    old = {}
    if os.path.isfile(path):
        with open(path) as f:
            old = json.load(f).get("examples", {})
    merged = {**old, **examples}
    manifest = {"note": f"generated by `{COMMAND}` on a GPU machine — do not edit; rerun it to replace. "
                        "Read by course.plots.example(NAME) in CPU mode.",
                "examples": dict(sorted(merged.items()))}
    with open(path, "w") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return path


def check(out: str = FIGURES) -> int:
    """Every example that the chapters call is in the manifest, with its figure; sizes."""
    with open(os.path.join(out, "figures.json")) as f:
        manifest = json.load(f)
    assert "do not edit" in manifest["note"]
    bad, total = 0, 0
    for ch in chapters():
        for i, name in example_cells(ch):
            e = manifest["examples"].get(name)
            if e is None:
                print(f"MISSING {name} ({ch} cell {i})")
                bad += 1
                continue
            size = 0
            if e["figure"]:
                p = os.path.join(out, e["figure"])
                size = os.path.getsize(p) if os.path.isfile(p) else -1
                if size < 0:
                    print(f"MISSING {p}")
                    bad += 1
            total += max(size, 0)
            print(f"{name:28} {ch:22} cell {i:3}  {e['device']}, {e['date']}  "
                  f"{(str(size // 1024) + ' KB') if e['figure'] else 'printed lines only':>18}"
                  f"  {'; '.join(e.get('problems') or [])}")
    print(f"{total // 1024} KB of figures; {bad} missing")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("chapters", nargs="*")
    ap.add_argument("--out", default=FIGURES)
    ap.add_argument("--timeout", type=float, default=300, help="seconds per chapter")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return run_chapter(a.child, a.out, a.result)
    if a.check:
        return check(a.out)
    os.makedirs(a.out, exist_ok=True)
    todo = a.chapters or [ch for ch in chapters() if example_cells(ch)]
    env = {**os.environ, "FLASHCOURSE_MODE": "gpu", "PYTHONUNBUFFERED": "1"}
    env.pop("NBGRADER_EXECUTION", None)
    rows, rc = [], 0
    for ch in todo:
        res = os.path.join(tempfile.mkdtemp(), "result.json")
        t0 = time.time()
        try:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", ch, "--out", a.out,
                                "--result", res], env=env, cwd=ROOT, timeout=a.timeout)
            code = p.returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
        result = json.load(open(res)) if os.path.isfile(res) else {"examples": {}, "errors": [f"exit {code}"]}
        write_manifest(a.out, result["examples"])  # after each chapter: a cut-off run keeps what it made
        rows.append((ch, time.time() - t0, sorted(result["examples"]), result["errors"]))
        rc |= bool(result["errors"]) or code != 0
    print("\nchapter                  seconds  examples / errors")
    for ch, s, names, errs in rows:
        print(f"{ch:24} {s:7.0f}  {', '.join(names) or '-'}  {'; '.join(errs)}")
        for n in names:
            e = json.load(open(os.path.join(a.out, "figures.json")))["examples"][n]
            if e.get("problems"):
                print(f"    {n}: {'; '.join(e['problems'])}")
    return int(rc)


if __name__ == "__main__":
    sys.exit(main())
