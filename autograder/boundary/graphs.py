"""The primitives a timed batch relies on: CUDA-graph capture, and the replay loop with its waits.

The judge times its own roofline (the copy of the same bytes) with them, and a runner times a submission's
calls with them, bound before any submission code runs (bind_primitives), so both clocks are the same code.
"""
from __future__ import annotations

def capture(calls):
    """A CUDA graph of one call of each of `calls`, or None where the calls cannot be captured
    (a host sync or a host-side decision inside them): then they are timed as plain launches."""
    import torch
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            for c in calls:
                c()
    except Exception:  # the capture failed: the stream is invalidated; start clean
        torch.cuda.synchronize()
        return None
    torch.cuda.synchronize()
    return g


_PRIMITIVES: tuple | None = None  # (wait for the GPU, replay a graph): bound before any submission code runs


def bind_primitives() -> tuple:
    """The two things the judge's clock around a timed batch relies on, bound once: the C function
    that waits for the device (torch.cuda.synchronize minus its Python wrapper) and the C replay of
    torch._C._CUDAGraph, called on the graph (an attribute the submission set on the graph object, a
    `replay` or the `_tracker` that torch's Python replay consults, does not count).
    The worker binds them before its tamper Snapshot and the submission's code; the Snapshot then
    watches this module's _PRIMITIVES (a tuple: replaced, it is put back) and the rest."""
    global _PRIMITIVES
    if _PRIMITIVES is None:
        import torch
        _PRIMITIVES = (getattr(torch._C, "_cuda_synchronize", None) or torch.cuda.synchronize,
                       getattr(getattr(torch._C, "_CUDAGraph", None), "replay", None) or torch.cuda.CUDAGraph.replay)
    return _PRIMITIVES


def replay(graph, calls, rounds: int, gate_cycles: int = 0) -> None:
    """`rounds` rounds of `calls` (graph replays where captured), waited for."""
    import torch
    wait, replay_graph = bind_primitives()
    wait()
    if gate_cycles:
        torch.cuda._sleep(gate_cycles)
    for _ in range(rounds):
        if graph is not None:
            replay_graph(graph)
        else:
            for c in calls:
                c()
    wait()
