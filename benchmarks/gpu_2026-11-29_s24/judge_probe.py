"""The real judge (grading.measure_bandwidth through a sandboxed runner, as `flashcourse validate` runs it) on
Chapter 1's Triton softmax: the reference against the same kernel that loads the first rows of each input with
evict_last and the rest with evict_first (pinning about 0.4 x L2 of each set, so that across the judge's two sets
of 8192 x 8192 float32 those rows could stay in L2 from one round to the next). Alternating, ROUNDS times each.
Run b adds evict_last_pin_default: the other rows loaded with the default policy (normal priority) instead.
(Twenty-fourth session, H200.) Usage: PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu python .../judge_probe.py OUT.json [b]"""
import json
import re
import sys

from autograder import registry
from autograder.runner import Session
from autograder.submission import cell_from_text
from kernels_ref.bench import chapter_cells, reference_source

ROUNDS = 3
LOAD = '    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))'
PINNED = ('    if row < pin_rows:\n'
          '        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"),'
          ' eviction_policy="evict_last")\n'
          '    else:\n'
          '        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"),'
          ' eviction_policy="evict_first")')
PATCH = [("y_row_stride, BLOCK: tl.constexpr):", "y_row_stride, BLOCK: tl.constexpr, pin_rows=0):"),
         (LOAD, PINNED),
         ("BLOCK=BLOCK, num_warps=num_warps)",
          "BLOCK=BLOCK, num_warps=num_warps,\n"
          "                         pin_rows=int(0.4 * __import__('torch').cuda.get_device_properties(0).L2_cache_size)"
          " // (cols * 4))")]


VARIANTS = ("reference", "evict_last_pin") + (("evict_last_pin_default",) if sys.argv[2:] == ["b"] else ())
ROUNDS = 2 if sys.argv[2:] == ["b"] else ROUNDS


def cells(variant):
    ex = registry.get("ch01.softmax_triton")
    cs = chapter_cells(ex)
    if variant == "reference":
        return cs
    src = reference_source(ex)
    patch = PATCH if variant == "evict_last_pin" else [(a, b.replace(', eviction_policy="evict_first"', ''))
                                                       for a, b in PATCH]
    for a, b in patch:
        assert a in src, a
        src = src.replace(a, b)
    return [cell_from_text(src, "softmax_triton") if c.origin == "softmax_triton" else c for c in cs]


doc = {"rows": []}
for r in range(ROUNDS):
    for variant in VARIANTS:
        with Session(cells(variant)) as s:
            res = s.check("ch01.softmax_triton", "bandwidth")
        m = re.search(r"([\d.]+)% of", res.message or "")
        doc["rows"].append({"round": r, "variant": variant, "passed": res.passed, "message": res.message,
                            "pct": float(m.group(1)) if m else None})
        print(r, variant, res.passed, (res.message or "")[:300], flush=True)
json.dump(doc, open(sys.argv[1], "w"), indent=1)
