"""The split last round's machine code against the kernel without it (twenty-first session; no GPU needed): both
compiled from commit 9246b30's flash_attention_gluon.py (SEAM_64, D 64, no mask, sm_90a, the triton in use), then
cuobjdump's SASS: registers, instructions in all, and every loop that holds the softmax's exponentials (a backward
branch; the innermost ones are the consumer warpgroups' loops over key tiles): its length and instruction mix.
Usage: python benchmarks/gpu_2026-11-29_s21/split_sass.py (from the repository root, with git)."""
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter

import triton

sys.path.insert(0, os.getcwd())
tmp = tempfile.mkdtemp()
src = subprocess.run(["git", "show", "9246b30:kernels_ref/ch04_flash_attention/flash_attention_gluon.py"],
                     capture_output=True, text=True, check=True).stdout
path = os.path.join(tmp, "fag_split.py")
open(path, "w").write(src)
spec = importlib.util.spec_from_file_location("kernels_ref.ch04_flash_attention.fag_split", path)
g = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = g
spec.loader.exec_module(g)
bindir = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
print("triton", triton.__version__)
for name, cfg in (("without the split", g.SEAM_64), ("with the split", g.SEAM_64._replace(split=True))):
    k = g.compile_offline(cfg, 64, False)
    cubin = os.path.join(tmp, "k.cubin")
    open(cubin, "wb").write(k.asm["cubin"])
    sass = subprocess.run([os.path.join(bindir, "cuobjdump"), "-sass", cubin], capture_output=True, text=True).stdout
    res = subprocess.run([os.path.join(bindir, "cuobjdump"), "-res-usage", cubin], capture_output=True,
                         text=True).stdout
    instrs = [(int(m.group(1), 16), m.group(2)) for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", sass)]
    regs = re.search(r"REG:\d+", res).group(0)
    print(f"== {name}: {len(instrs)} instructions, {regs}")
    for addr, ins in instrs:
        m = re.search(r"BRA\s+(?:`\()?0x([0-9a-f]+)", ins)
        if m and int(m.group(1), 16) < addr:
            lo = int(m.group(1), 16)
            body = [i for a, i in instrs if lo <= a <= addr]
            mufu = sum("MUFU.EX2" in i for i in body)
            if 32 <= mufu <= 70 and len(body) < 600:  # a loop over key tiles: one tile's exponentials
                ops = Counter((i.split()[1] if i.startswith("@") else i.split()[0]).split(".")[0] for i in body)
                print(f"  loop {lo:#x}-{addr:#x}: {len(body)} instructions,", ", ".join(
                    f"{op} {n}" for op, n in sorted(ops.items()) if op in ("MUFU", "HGMMA", "FFMA", "FMNMX", "FADD",
                                                                           "FMUL", "F2FP", "SHFL", "SYNCS")))
