"""Reference kernels: the one source of every solution in the notebooks.

Each file's part after the `%% notebook` line is what the notebook's solution cell
holds (solution regions marked as nbgrader marks them); `flashcourse build` copies
it into the source notebook, so notebook and reference cannot drift.
"""
import os

from autograder.submission import NOTEBOOK_MARKERS as MARKERS, notebook_part  # noqa: F401  (one definition)

ROOT = os.path.dirname(os.path.abspath(__file__))
