"""Two claims of Chapters 1 and 2 measured on a GPU: what `__expf` returns where e^x is subnormal (built as a %%cuda
cell is; through CuPy's RawModule, which adds -ftz=true), and what a `__syncthreads()` inside a branch does (hang, or
wrong results).

    python -m benchmarks.claims_probe OUT.json      (needs a GPU and cupy; the barrier case runs in a child with a
                                                     time limit, so a hang is reported, not suffered)
"""
from __future__ import annotations

import json
import math
import subprocess
import sys

EXP_SRC = r'''
extern "C" __global__ void k_fast(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = __expf(x[i]); }
extern "C" __global__ void k_exp(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = expf(x[i]); }
'''

TREE_SRC = r'''
#define THREADS 256
extern "C" __global__ void tree_barrier_in_branch(const float* x, float* y, int cols) {
    __shared__ float s[THREADS];
    int t = threadIdx.x; const float* row = x + (size_t)blockIdx.x * cols;
    float acc = 0.f;
    for (int c = t; c < cols; c += THREADS) acc += row[c];
    s[t] = acc;
    __syncthreads();
    for (int k = THREADS / 2; k > 0; k >>= 1) {
        if (t < k) { s[t] += s[t + k]; __syncthreads(); }   // the barrier inside the branch
    }
    if (t == 0) y[blockIdx.x] = s[0];
}
extern "C" __global__ void tree_correct(const float* x, float* y, int cols) {
    __shared__ float s[THREADS];
    int t = threadIdx.x; const float* row = x + (size_t)blockIdx.x * cols;
    float acc = 0.f;
    for (int c = t; c < cols; c += THREADS) acc += row[c];
    s[t] = acc;
    __syncthreads();
    for (int k = THREADS / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) y[blockIdx.x] = s[0];
}
'''


def expf_case() -> dict:
    import cupy as cp
    import numpy as np
    xs = np.array([-80, -87, -87.3, -88, -90, -95, -100, -103, -104, -110], dtype=np.float32)
    out = {"x": xs.tolist(), "exact": [math.exp(float(v)) for v in xs]}
    import os
    import tempfile

    from course import cuda  # the %%cuda cell's compile: NVRTC, -arch=sm_90 -std=c++17, no -ftz
    cubin, _ = cuda._nvrtc_compile(EXP_SRC, cuda._arch())
    path = os.path.join(tempfile.mkdtemp(), "k.cubin")
    with open(path, "wb") as f:
        f.write(cubin)
    # CuPy's RawModule(code=...) adds -ftz=true to every compile (cupy/cuda/compiler.py); loading a cubin does not
    for label, mod in (("as_a_cuda_cell", cp.RawModule(path=path)),
                       ("cupy_rawmodule", cp.RawModule(code=EXP_SRC, options=("-std=c++17",))),
                       ("use_fast_math", cp.RawModule(code=EXP_SRC, options=("-std=c++17", "--use_fast_math")))):
        x = cp.asarray(xs)
        for name in ("k_fast", "k_exp"):
            y = cp.empty_like(x)
            mod.get_function(name)((1,), (len(xs),), (x, y, np.int32(len(xs))))
            out[f"{name}_{label}"] = cp.asnumpy(y).astype(float).tolist()
    return out


def barrier_child() -> None:
    import cupy as cp
    import numpy as np
    rows, cols, reps = 4096, 4096, 20
    rng = np.random.default_rng(0)
    x = cp.asarray(rng.standard_normal((rows, cols), dtype=np.float32))
    mod = cp.RawModule(code=TREE_SRC, options=("-arch=sm_90", "-std=c++17"))
    good = cp.empty(rows, dtype=cp.float32)
    mod.get_function("tree_correct")((rows,), (256,), (x, good, np.int32(cols)))
    ref = cp.asnumpy(x).astype(np.float64).sum(1)
    assert np.allclose(cp.asnumpy(good), ref, rtol=1e-4, atol=1e-2)
    wrong = []
    for _ in range(reps):
        y = cp.full(rows, cp.nan, dtype=cp.float32)
        mod.get_function("tree_barrier_in_branch")((rows,), (256,), (x, y, np.int32(cols)))
        cp.cuda.Device().synchronize()
        got = cp.asnumpy(y)
        wrong.append(int((~np.isclose(got, ref, rtol=1e-4, atol=1e-2)).sum()))
    print(json.dumps({"rows": rows, "cols": cols, "launches": reps, "finished": True, "wrong_rows_per_launch": wrong}))


def barrier_case(limit_s: float = 60) -> dict:
    try:
        r = subprocess.run([sys.executable, "-m", "benchmarks.claims_probe", "--barrier-child"], capture_output=True,
                           text=True, timeout=limit_s)
    except subprocess.TimeoutExpired:
        return {"finished": False, "hung_for_s": limit_s}
    if r.returncode != 0:
        return {"finished": False, "rc": r.returncode, "stderr": r.stderr[-2000:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:] == ["--barrier-child"]:
        barrier_child()
        return
    import cupy as cp
    props = cp.cuda.runtime.getDeviceProperties(0)
    out = {"gpu": props["name"].decode(), "cupy": cp.__version__, "expf": expf_case(),
           "barrier_in_branch": barrier_case()}
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
