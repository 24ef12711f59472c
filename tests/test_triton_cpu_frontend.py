"""CPU mode runs Triton's GPU front end on every kernel launch (course/triton_frontend.py).

The interpreter accepts kernels the GPU compiler rejects; these tests show that a launch in CPU mode now raises
what a GPU launch raises (the exception and text of Triton's own front end, for sm_90), and that the course's
reference kernels (every @triton.jit of kernels_ref/chNN_*/, launched as their wrappers launch them, in the
dtypes the exercises use) pass, with every @triton.jit function of those files compiled as a kernel or a callee.
The reference launches are checked without being interpreted (the front end only), so this file runs in seconds.
"""
import glob
import importlib
import os

import course
import pytest
import torch
import triton
import triton.language as tl

pytestmark = pytest.mark.skipif(course.GPU, reason="CPU mode only: on a GPU, Triton's compiler itself runs")

from course import triton_frontend  # noqa: E402
from triton.compiler.errors import CompilationError  # noqa: E402
from triton.runtime.interpreter import InterpretedFunction  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCALE = 0.5  # a plain Python float: the interpreter reads it, the GPU compiler refuses it
SCALE_C = tl.constexpr(0.5)
GLOBAL_MESSAGE = ("Cannot access global variable SCALE from within @jit'ed function. Triton kernels can only "
                  "access global variables that are instanstiated as constexpr")  # sic: Triton's spelling


@triton.jit
def scale_global_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=m) * SCALE, mask=m)


@triton.jit
def scale_constexpr_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=m) * SCALE_C, mask=m)


@triton.jit
def _times_global(x):
    return x * SCALE


@triton.jit
def scale_in_helper_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    tl.store(y_ptr + i, _times_global(tl.load(x_ptr + i, mask=m)), mask=m)


@triton.jit
def arange_runtime_bound_kernel(y_ptr, n):
    i = tl.arange(0, n)  # n is not a tl.constexpr
    tl.store(y_ptr + i, i.to(tl.float32))


@triton.jit
def arange_kernel(y_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(y_ptr + i, i.to(tl.float32))


@triton.jit
def row_max_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):  # tl.max / x.sum(): @jit functions of triton.language
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr, tl.max(x, axis=0) + x.sum(axis=0) + tl.cdiv(BLOCK, 2))


def _raises(launch) -> BaseException:
    with pytest.raises(Exception) as info:
        launch()
    return info.value


def test_global_float_rejected_at_the_first_launch_with_the_gpu_message():
    x, y = torch.randn(16), torch.zeros(16)
    e = _raises(lambda: scale_global_kernel[(1,)](x, y, 16, BLOCK=16))
    assert type(e) is CompilationError  # the class a GPU launch raises
    assert GLOBAL_MESSAGE in str(e) and "mask=m) * SCALE, mask=m)" in str(e)
    assert triton_frontend.NOTE in getattr(e, "__notes__", [])
    assert torch.equal(y, torch.zeros(16))  # rejected before the interpreter ran it
    e = _raises(lambda: scale_global_kernel[(1,)](x, y, 16, BLOCK=16))  # and at every launch, as on a GPU
    assert GLOBAL_MESSAGE in str(e)


def test_global_float_in_a_called_jit_function_rejected():
    x, y = torch.randn(16), torch.zeros(16)
    e = _raises(lambda: scale_in_helper_kernel[(1,)](x, y, 16, BLOCK=16))
    assert isinstance(e, CompilationError)
    assert GLOBAL_MESSAGE in repr(e.__cause__) or GLOBAL_MESSAGE in str(e.__cause__)


def test_constexpr_global_passes_and_runs():
    x, y = torch.randn(16), torch.zeros(16)
    scale_constexpr_kernel[(1,)](x, y, 12, BLOCK=16)
    assert torch.equal(y[:12], x[:12] * 0.5) and torch.equal(y[12:], torch.zeros(4))


def test_triton_language_jit_functions_pass():
    x, y = torch.arange(8, dtype=torch.float32), torch.zeros(1)
    row_max_kernel[(1,)](x, y, BLOCK=8)
    assert y.item() == 7 + 28 + 4


def test_arange_with_a_runtime_bound_rejected():
    e = _raises(lambda: arange_runtime_bound_kernel[(1,)](torch.zeros(16), 16))
    assert isinstance(e, CompilationError) and "arange's arguments must be of type tl.constexpr" in str(e)


def test_non_power_of_two_arange_rejected():
    e = _raises(lambda: arange_kernel[(1,)](torch.zeros(16), BLOCK=12))
    assert isinstance(e, CompilationError) and "arange's range must be a power of 2" in str(e)
    arange_kernel[(1,)](y := torch.zeros(16), BLOCK=16)  # the same kernel at a power of 2: passes and runs
    assert torch.equal(y, torch.arange(16, dtype=torch.float32))


def test_unknown_launch_option_rejected():
    x, y = torch.randn(16), torch.zeros(16)
    e = _raises(lambda: scale_constexpr_kernel[(1,)](x, y, 16, BLOCK=16, num_warp=4))  # the interpreter drops it
    assert isinstance(e, KeyError) and "Keyword argument num_warp was specified but unrecognised" in str(e)


def test_switched_off(monkeypatch):
    monkeypatch.setenv("FLASHCOURSE_GPU_FRONTEND", "0")
    x, y = torch.randn(16), torch.zeros(16)
    scale_global_kernel[(1,)](x, y, 16, BLOCK=16)  # the interpreter alone accepts it
    assert torch.equal(y, x * 0.5)


# --- the course's reference kernels ---------------------------------------------------------------------------

def _reference_modules() -> list[str]:
    names = []
    for path in sorted(glob.glob(os.path.join(ROOT, "kernels_ref", "ch[0-9][0-9]_*", "*.py"))):
        with open(path) as f:
            if "@triton.jit" in f.read():
                names.append(os.path.relpath(path, ROOT)[:-3].replace(os.sep, "."))
    return names


def _t(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


def _launch_ch01_softmax_triton(m, mp):
    for cols in (1000, 4096, 9000):
        m.softmax_triton(_t(4, cols), _t(4, cols))


def _launch_ch02_row_sum_triton(m, mp):
    for cols in (1000, 4096):
        m.row_sum_triton(_t(4, cols), _t(4))


def _launch_ch03_online_softmax_triton(m, mp):
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        m.online_softmax_triton(_t(4, 3000, dtype=dtype), _t(4, 3000, dtype=dtype))


def _launch_ch03_softmax_split_rows(m, mp):
    for dtype in (torch.float32, torch.bfloat16):
        x, y = _t(4, 1000, dtype=dtype), _t(4, 1000, dtype=dtype)
        m.softmax_rows(x, y)
        m.softmax_rows(x, y, rows=2)
        m.softmax_two_pass(x, y, block=256)
        if dtype != torch.float32:
            continue
        for hold in ("e", "x"):
            m.softmax_split_rows(x, y, chunk=256, warps=4, programs=8, hold=hold)  # the GPU's path: PHASE 0
            m.softmax_split_rows(x, y, chunk=256, warps=4, programs=8, hold=hold, phases=True)
        mp.setattr(m, "_split_allowed", lambda x, cfg: True)  # the host's choices as on a GPU with 4 SMs
        mp.setattr(m, "_sm_count", lambda device: 4)
        mp.setattr(m, "_programs_per_sm", lambda *args, **kwargs: 1)
        mp.setattr(m.long_rows, "_waits_allowed", lambda x: True)
        for cfg in {str(c): c for configs in m.CONFIGS.values() for _, c in configs}.values():
            m.run_config(_t(4, 20000, dtype=dtype), _t(4, 20000, dtype=dtype), cfg)
    m.online_softmax_triton(x, y)


def _launch_ch03_softmax_long_rows(m, mp):
    m.softmax_long_rows(_t(4, 1000, dtype=torch.float16), _t(4, 1000, dtype=torch.float16), block=256, programs=4)
    for dtype in (torch.float32,):
        x, y = _t(4, 1000, dtype=dtype), _t(4, 1000, dtype=dtype)
        m.softmax_long_rows(x, y, block=256, programs=4)
        m.softmax_long_rows(x, y, block=256, programs=0, hints=False, reverse=True, stages=2)
        m.softmax_long_rows(x, y, block=256, programs=4, k=2, phases=True)
        m.softmax_chunks(x, y, chunk=512, block=256, phases=True)
        m.softmax_chunks(x, y, chunk=512, block=256, phases=True, fresh=True, prescale=True, hints=False)
        mp.setattr(m, "_waits_allowed", lambda x: True)  # the GPU's paths: programs that wait for each other
        m.softmax_long_rows(x, y, block=256, programs=4, k=2)
        m.softmax_chunks(x, y, chunk=512, block=256)
        m.softmax_chunks(x, y, chunk=512, block=256, fresh=True, prescale=True)
        mp.undo()


def _attention_inputs(D, dtype=torch.float16, T=128):
    return [_t(1, 2, T, D, dtype=dtype) for _ in range(4)]


def _launch_ch04_flash_attention_triton(m, mp):
    for D in (64, 128):
        for causal in (False, True):
            m.flash_attention(*_attention_inputs(D), causal)
            m.flash_attention(*_attention_inputs(D, T=100), causal)


def _launch_ch04_flash_attention_hopper(m, mp):
    for tma in (0, 1, 2):
        for ws, pipe in ((False, False), (True, False), (False, True)):
            m.flash_attention(*_attention_inputs(64), tma == 1, m.Config(128, 64, 4, 3, tma, ws, pipe))
    for D in (64, 128):
        m.flash_attention(*_attention_inputs(D), True)  # CONFIGS' choice
        m.flash_attention(*_attention_inputs(D, T=100), False)


def _launch_ch05_rmsnorm_triton(m, mp):
    for dtype in (torch.float32, torch.bfloat16):
        m.rmsnorm_triton(_t(4, 1000, dtype=dtype), _t(1000, dtype=dtype), _t(4, 1000, dtype=dtype), 1e-6)


def _launch_ch05_add_rmsnorm_triton(m, mp):
    for dtype in (torch.float32, torch.bfloat16):
        x, r, y, h = (_t(4, 1000, dtype=dtype) for _ in range(4))
        m.add_rmsnorm_triton(x, r, _t(1000, dtype=dtype), y, h, 1e-6)


def _launch_ch05_layernorm_triton(m, mp):
    for dtype in (torch.float32, torch.bfloat16):
        m.layernorm_triton(_t(4, 1000, dtype=dtype), _t(1000, dtype=dtype), _t(1000, dtype=dtype),
                           _t(4, 1000, dtype=dtype), 1e-5)


def _launch_ch05_swiglu_rmsnorm_fp8(m, mp):
    gate, up, res = (_t(4, 1000, dtype=torch.bfloat16) for _ in range(3))
    gamma, q, scale = _t(1000, dtype=torch.bfloat16), _t(4, 1000, dtype=torch.float8_e4m3fn), _t(4)
    m.swiglu_rmsnorm_fp8(gate, up, res, gamma, q, scale, 1e-6)  # CPU mode: stages float32
    # the GPU's launch: the kernel stores e4m3 itself
    m.swiglu_rmsnorm_fp8_kernel[(4,)](gate, up, res, gamma, q, scale, 1000, 1e-6, BLOCK=1024, num_warps=2)


def _launch_ch06_softmax_lowp_triton(m, mp):
    for dtype in (torch.bfloat16, torch.float8_e4m3fn):
        m.softmax_lowp(_t(4, 1000, dtype=dtype), _t(4), _t(4, 1000, dtype=torch.bfloat16))


def _ce_inputs(cols, dtype=torch.bfloat16):
    return _t(4, cols, dtype=dtype), torch.tensor([1, -100, 3, 0]), _t(4), _t(4, cols, dtype=dtype)


def _launch_ch07_cross_entropy_triton(m, mp):
    for dtype in (torch.float32, torch.bfloat16):
        m.cross_entropy(*_ce_inputs(3000, dtype))
        m.cross_entropy(*_ce_inputs(3000, dtype), z_weight=0.0, smoothing=0.1)


def _launch_ch07_cross_entropy_split(m, mp):
    for smoothing in (0.0, 0.1):
        for exp2, stages in ((True, 1), (False, 2)):
            m.cross_entropy_split(*_ce_inputs(3000), smoothing=smoothing, chunk=1024, block=256, exp2=exp2,
                                  stages=stages)
    m.cross_entropy(*_ce_inputs(3000))


def _launch_ch07_linear_cross_entropy_triton(m, mp):
    for dtype, (n, h, v) in ((torch.float16, (70, 40, 300)), (torch.bfloat16, (8, 16, 3)), (torch.float16, (5, 99, 1))):
        m.linear_cross_entropy(_t(n, h, dtype=dtype), _t(v, h, dtype=dtype), torch.randint(0, v, (n,)), _t(n), _t(n))


def _launch_ch08_rmsnorm_backward_triton(m, mp):
    for dtype in (torch.float32, torch.bfloat16):
        x, dy, dx = (_t(8, 1000, dtype=dtype) for _ in range(3))
        m.rmsnorm_backward(x, _t(1000, dtype=dtype), dy, dx, _t(1000, dtype=dtype), 1e-6)


def _launch_ch08_layernorm_backward_triton(m, mp):
    for dtype in (torch.float32, torch.bfloat16):
        x, dy, dx = (_t(8, 1000, dtype=dtype) for _ in range(3))
        m.layernorm_backward(x, _t(1000, dtype=dtype), dy, dx, _t(1000, dtype=dtype), _t(1000, dtype=dtype), 1e-5)


def _launch_ch08_softmax_backward_triton(m, mp):
    for dtype in (torch.float32, torch.bfloat16):
        y, dy, dx = (_t(4, 1000, dtype=dtype) for _ in range(3))
        m.softmax_backward(y, dy, dx)


def _launch_ch08_flash_attention_backward_triton(m, mp):
    for dtype, D, causal in ((torch.float16, 64, False), (torch.float16, 64, True), (torch.bfloat16, 128, True)):
        q, k, v, o = _attention_inputs(D, dtype)
        lse = _t(1, 2, 128)
        m.attention_forward(q, k, v, o, lse, causal)
        do, dq, dk, dv = _attention_inputs(D, dtype)
        m.flash_attention_backward(q, k, v, o, lse, do, dq, dk, dv, causal)


LAUNCHES = {name[len("_launch_"):]: fn for name, fn in globals().items() if name.startswith("_launch_")}


@pytest.fixture
def front_end_only(monkeypatch):
    """Launches go through the front-end check only (not interpreted); yields the set of @triton.jit functions the
    front end generated code for (the launched kernels and every function they call)."""
    from triton.compiler import code_generator

    generated = set()
    init = code_generator.CodeGenerator.__init__

    def recording_init(self, *args, jit_fn, **kwargs):
        generated.add(jit_fn.fn.__code__)
        init(self, *args, jit_fn=jit_fn, **kwargs)

    def check_only(self, *args, grid, warmup, **kwargs):
        triton_frontend.check_launch(self, args, kwargs)

    monkeypatch.setattr(code_generator.CodeGenerator, "__init__", recording_init)
    monkeypatch.setattr(InterpretedFunction, "run", check_only)
    yield generated


@pytest.mark.parametrize("module", _reference_modules())
def test_reference_kernels_pass(module, front_end_only, monkeypatch):
    chapter, stem = module.split(".")[1:]
    key = f"{chapter[:4]}_{stem}"
    assert key in LAUNCHES, f"{module} has @triton.jit kernels: add _launch_{key} to this file"
    m = importlib.import_module(module)
    with monkeypatch.context() as mp:
        LAUNCHES[key](m, mp)  # raises what the GPU's front end would
    jitted = {name for name, v in vars(m).items() if isinstance(v, InterpretedFunction) and v.fn.__module__ == module}
    assert jitted, module
    missing = sorted(name for name in jitted if getattr(m, name).fn.__code__ not in front_end_only)
    assert not missing, f"{module}: never compiled by the launches above: {missing}"


def test_reference_modules_found():
    mods = _reference_modules()
    assert len(mods) >= 15 and "kernels_ref.ch01_softmax.softmax_triton" in mods
