"""Plots the chapters draw: bandwidth against size, with the copy roofline; and, in CPU mode, the
example figures measured on a real GPU (`example`)."""
from __future__ import annotations

import json
import os

FIGURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "figures")
MANIFEST = os.path.join(FIGURES, "figures.json")


def bandwidth_plot(xs, series: dict, *, roofline: float | None = None, xlabel: str = "row length",
                   title: str = "", ax=None):
    """series: {label: [GB/s per x]}; roofline: the copy bandwidth in GB/s."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    for label, ys in series.items():
        ax.plot(xs, ys, marker="o", label=label)
    if roofline:
        ax.axhline(roofline, color="k", ls="--", lw=1, label=f"copy {roofline:.0f} GB/s")
    ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("GB/s (read + write)")
    ax.set_ylim(bottom=0)
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    return ax


def _in_notebook() -> bool:
    """True inside a Jupyter kernel, where IPython can show an image (not in a terminal)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


def example_entry(name: str) -> dict | None:
    """The manifest's record of example `name` (recorded on a GPU machine by the course's maintainers), or None."""
    try:
        with open(MANIFEST) as f:
            return json.load(f).get("examples", {}).get(name)
    except (OSError, ValueError):
        return None


def example(name: str, what: str | None = None) -> str | None:
    """Show what a GPU cell drew and printed on a real GPU, for CPU mode.

    The figure is `course/figures/NAME.png`; the GPU, date and what was measured come from
    `course/figures/figures.json`, recorded on a GPU machine by running the chapter's cell with the
    reference solutions. Prints a caption, then shows the figure (an image inside
    Jupyter, else its path), then the lines that run printed. Returns the figure's path, if any."""
    entry = example_entry(name)
    if entry is None:
        print(f"No example figure {name!r} in {MANIFEST} (this copy of the course has no recorded GPU example for it). "
              "On a machine with an NVIDIA GPU this cell measures your own kernels.")
        return None
    what = what or entry.get("what", "")
    print(f"Example measured on {entry['device']}, {entry['date']}" + (f" ({what})" if what else "")
          + ". On a machine with an NVIDIA GPU this cell measures your own kernels.")
    path = None
    if entry.get("figure"):
        path = os.path.join(FIGURES, entry["figure"])
        if not os.path.isfile(path):
            print(f"(the figure {path} is missing)")
            path = None
        elif _in_notebook():
            from IPython.display import Image, display
            display(Image(filename=path))
        else:
            print(f"figure: {path}")
    printed = (entry.get("printed") or "").rstrip()
    if printed:
        print(f"What the cell printed on that {entry['device']}:")
        print("\n".join("    " + line for line in printed.splitlines()))
    return path
