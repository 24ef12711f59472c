"""Run a notebook's code cells in order without Jupyter (the GPU machines have none), saving each
figure as a PNG: `python tests/run_cells.py source/CH/CH.ipynb OUTDIR`.

Test cells are skipped (the grader is exercised elsewhere); `%%cuda` cells go through the same
magic as in JupyterLab. Prints each cell's output and ends with the number of cells that raised."""
import os
import sys
import traceback

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402


def main(path: str, out: str) -> int:
    from course.magic import run_cell
    os.makedirs(out, exist_ok=True)
    nb = nbformat.read(path, 4)
    ns: dict = {"__name__": "__main__"}
    figures, failed = 0, 0

    def show(*args, **kwargs):
        nonlocal figures
        for num in plt.get_fignums():
            figures += 1
            plt.figure(num).savefig(os.path.join(out, f"{os.path.basename(path)}-{figures}.png"), dpi=80)
        plt.close("all")

    plt.show = show
    for i, cell in enumerate(nb.cells):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or meta.get("grade"):
            continue
        src = cell.source
        print(f"--- cell {i} ({meta.get('grade_id', 'free')})", flush=True)
        try:
            if src.lstrip().startswith("%%cuda"):
                print(run_cell(src.split("\n", 1)[1], ns).summary())
            else:  # from a file, as in Jupyter: Triton reads a kernel's source back
                f = os.path.join(out, f"cell{i}.py")
                with open(f, "w") as fh:
                    fh.write(src)
                exec(compile(src, f, "exec"), ns)
        except Exception:  # noqa: BLE001
            failed += 1
            traceback.print_exc(limit=3)
    print(f"{figures} figures saved, {failed} cells raised", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main(sys.argv[1], sys.argv[2]))
