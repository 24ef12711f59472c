"""Exceptions shared by the course library and the grader."""


class NeedsGPU(RuntimeError):
    """Raised where CPU mode cannot do what was asked (run CUDA, time a kernel)."""


class CudaCompileError(RuntimeError):
    """NVRTC rejected a CUDA cell; the message carries the cell's line numbers."""


class NotImplementedYet(NotImplementedError):
    """An exercise still holds its stub."""
