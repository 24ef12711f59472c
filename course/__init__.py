"""flashcourse: the library the notebooks import.

Importing it picks the mode (GPU when torch sees a CUDA device, else CPU with the
Triton interpreter; FLASHCOURSE_MODE=gpu|cpu overrides) and, inside IPython,
registers the %%cuda cell magic. Import it before defining any @triton.jit kernel.
"""
from .mode import DEVICE, GPU, GRADING, MODE, banner, device_name  # noqa: F401  (first: sets the mode)
from .cuda import CudaModule, compile_cuda  # noqa: F401
from .errors import CudaCompileError, NeedsGPU, NotImplementedYet  # noqa: F401
from . import plots, timing  # noqa: F401
from .demo import demo  # noqa: F401

if not GPU:  # the interpreter accepts kernels a GPU rejects: each launch first goes through Triton's GPU front end
    from . import triton_frontend

    triton_frontend.install()

__all__ = ["MODE", "GPU", "GRADING", "DEVICE", "banner", "device_name", "compile_cuda", "CudaModule",
           "NeedsGPU", "CudaCompileError", "NotImplementedYet", "demo", "setup"]


def setup(quiet: bool = False) -> None:
    """Register %%cuda in IPython and print the mode banner (course.MODE holds the mode)."""
    from . import magic
    magic.register()
    if not quiet:
        print(banner())


def load_ipython_extension(ipython):  # %load_ext course
    from . import magic
    magic.register(ipython)
