"""CUDA cells: NVRTC compile (no GPU needed), error lines, report, stubs, argument types."""
import numpy as np
import pytest
import torch

import course
from course.cuda import CudaModule, Param, _as_arg, find_kernels, parse_ptxas_report
from course.errors import CudaCompileError, NotImplementedYet

GOOD = r'''
#define T 128
extern "C" __global__ void scale(const float* __restrict__ x, float* y, float a, int n) {
    __shared__ float buf[T];
    int i = blockIdx.x * T + threadIdx.x;
    buf[threadIdx.x] = i < n ? x[i] : -INFINITY;
    __syncthreads();
    if (i < n) y[i] = a * buf[threadIdx.x] + (FLT_MAX > 0.f ? 0.f : 1.f);
}
'''


def test_compiles_and_reports_resources():
    mod = CudaModule(GOOD)
    k = mod.scale
    assert k.name == "scale"
    assert k.resources.registers > 0
    assert k.resources.shared_bytes == 128 * 4
    assert [p.name for p in k.signature.params] == ["x", "y", "a", "n"]
    assert "scale:" in mod.summary() and "registers" in mod.summary()


def test_compile_error_points_at_the_cell_line():
    bad = GOOD.replace("a * buf", "b * buf")
    with pytest.raises(CudaCompileError) as e:
        CudaModule(bad)
    line = 1 + bad.split("\n").index(next(ln for ln in bad.split("\n") if "b * buf" in ln))
    assert f"line {line}: error" in str(e.value)
    assert '"b" is undefined' in str(e.value)


def test_kernel_needs_extern_c():
    with pytest.raises(CudaCompileError, match='extern "C"'):
        find_kernels("__global__ void k(float* x) {}")


def test_stub_is_reported_not_compiled():
    mod = CudaModule(GOOD.replace("__syncthreads();", "// YOUR CODE HERE\n    NOT_IMPLEMENTED();"))
    assert not mod.implemented and "Not implemented yet" in mod.summary()
    with pytest.raises(NotImplementedYet, match="not implemented yet"):
        mod.scale(1, 128, ())


def test_stub_in_a_comment_does_not_count():
    assert CudaModule(GOOD + "\n// NOT_IMPLEMENTED();\n").implemented


def test_scalar_arguments_take_the_kernel_types():
    assert _as_arg(3, Param("n", "int", False), "k").dtype == np.int32
    assert _as_arg(2.5, Param("a", "float", False), "k").dtype == np.float32
    t = torch.zeros(4)
    if not course.GPU:
        assert _as_arg(t, Param("x", "float", True), "k") == t.data_ptr()
    with pytest.raises(TypeError, match="tensor"):
        _as_arg(t, Param("n", "int", False), "k")


def test_wrong_argument_count():
    with pytest.raises(TypeError, match="takes 4 arguments"):
        CudaModule(GOOD).scale(1, 128, (1, 2))


def test_the_same_cell_runs_in_either_mode():
    x = torch.randn(1000, device=course.DEVICE)
    y = torch.full_like(x, float("nan"))
    CudaModule(GOOD).scale((8,), (128,), (x, y, 2.0, 1000))
    assert torch.equal(y, 2 * x)


def test_ptxas_report_parser():
    log = """ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, 2048 bytes smem, 380 bytes cmem[0]"""
    r = parse_ptxas_report(log)["k"]
    assert (r.registers, r.shared_bytes, r.stack_bytes, r.spill_stores) == (40, 2048, 8, 4)
    assert "SPILLS" in str(r)


def test_library_cells_resolve_names_as_bound_now():
    """Re-running an edited library cell updates later compiles, also through another library."""
    from course.magic import run_cell
    ns: dict = {}
    run_cell("__device__ float twice(float v) { return 2.f * v; }", ns)
    run_cell("__device__ float four(float v) { return twice(twice(v)); }", ns)
    run_cell("__device__ float twice(float v) { return v + v + 0.f; }", ns)  # edited and re-run
    mod = run_cell('extern "C" __global__ void k(float* y) { y[0] = four(1.f) + twice(1.f); }', ns)
    sources = [lib.source for lib in mod.libraries]
    assert sources == ["__device__ float twice(float v) { return v + v + 0.f; }",
                       "__device__ float four(float v) { return twice(twice(v)); }"], sources


def test_live_check_sends_library_cells_in_dependency_order():
    from autograder.declare.submission import cells_from_namespace
    from course.magic import run_cell
    ns: dict = {}
    run_cell("__device__ float twice(float v) { return 2.f * v; }", ns)
    run_cell("__device__ float four(float v) { return twice(twice(v)); }", ns)
    run_cell("__device__ float twice(float v) { return v + v; }", ns)
    run_cell("__device__ float eight(float v) { return twice(four(v)); }", ns)
    cells = cells_from_namespace(ns, ["eight"])
    fresh: dict = {}
    for c in cells:  # replaying them in a fresh namespace compiles, in this order
        run_cell(c.source, fresh)
    assert cells[-1].source.startswith("__device__ float eight")
    assert [c.source for c in cells].count("__device__ float twice(float v) { return 2.f * v; }") == 0


def test_the_cuda_magic_shows_a_clean_error_quoting_the_line_it_names(capsys):
    """No "UsageError:" (IPython's prefix for a magic's usage errors), no traceback, and the offending source line
    quoted beside its number with NVRTC's caret under it (JupyterLab hides line numbers by default)."""
    from IPython.testing.globalipapp import start_ipython

    from course import magic
    ip = start_ipython()
    magic.register(ip)
    r = ip.run_cell('%%cuda\nextern "C" __global__ void k(float* y, int n) {\n    int i = threadIdx.x;\n'
                    '    y[i] = x_undefined;\n}\n')
    e = r.error_in_exec
    assert isinstance(e, magic.CudaCellError) and isinstance(e, CudaCompileError)
    shown = "\n".join(e._render_traceback_())
    assert "UsageError" not in shown and "Traceback" not in shown
    lines = shown.splitlines()
    assert lines[0] == "\x1b[0;31mCUDA compile error\x1b[0m", lines
    assert lines[1] == 'line 4: error: identifier "x_undefined" is undefined', lines
    assert lines[2] == "     4 |     y[i] = x_undefined;", lines
    assert lines[3] == "       |            ^", lines  # under the name, as NVRTC placed it
    assert len(lines) == 4, lines  # NVRTC's own unnumbered copy of the line is not repeated


def test_quoted_lines_of_a_library_cell_and_lines_without_source():
    from course.magic import quote_lines
    cell = "\nextern \"C\" __global__ void k() {\n  bad();\n}"
    lib = "__device__ float f(float v) {\n  return w;\n}"
    text = quote_lines("line 3: error: bad\ncell of f, line 2: error: w\nline 99: error: past the end\nnote", cell,
                       {"cell of f": lib})
    assert text.splitlines() == ["line 3: error: bad", "     3 |   bad();", "cell of f, line 2: error: w",
                                 "     2 |   return w;", "line 99: error: past the end", "note"]
