"""Reference kernels: the one source of every solution in the notebooks.

Each file's part after the `%% notebook` line is what the notebook's solution cell
holds (solution regions marked as nbgrader marks them); `flashcourse build` copies
it into the source notebook, so notebook and reference cannot drift.
"""
import os

ROOT = os.path.dirname(os.path.abspath(__file__))
MARKERS = ("# %% notebook", "// %% notebook")


def notebook_part(path: str) -> str:
    """The part of a reference file that goes into the notebook."""
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.strip() in MARKERS:
            return "\n".join(lines[i + 1:]).strip("\n") + "\n"
    return text
