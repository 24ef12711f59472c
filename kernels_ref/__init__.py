"""Reference kernels: the one source of every solution in the notebooks.

Each file's part after the `%% notebook` line is what the notebook's solution cell
holds (solution regions marked as nbgrader marks them); `flashcourse build` copies
it into the source notebook, so notebook and reference cannot drift.
"""
import os

from autograder.declare.submission import NOTEBOOK_MARKERS as MARKERS, notebook_part  # noqa: F401  (one definition)

ROOT = os.path.dirname(os.path.abspath(__file__))


_SMS: dict = {}


def sm_count(device) -> int:
    """Streaming multiprocessors of a CUDA device (a torch.device or its name), cached: the persistent grids'
    size (kernels_ref/ch04_flash_attention/flash_attention_gluon.py, ch03_online_softmax/softmax_long_rows_gluon.py)."""
    import torch
    index = torch.device(device).index
    index = torch.cuda.current_device() if index is None else index
    if index not in _SMS:
        _SMS[index] = torch.cuda.get_device_properties(index).multi_processor_count
    return _SMS[index]
