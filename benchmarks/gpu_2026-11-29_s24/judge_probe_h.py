"""The real judge on two of Chapter 1's known-wrong submissions, alternating, 2 rounds: triton_one_warp (one warp a
row) and attack_evict_last_residency (the same kernel with the first rows of each input loaded evict_last, hoping to
find them in L2 in the judge's next round). (Twenty-fourth session, run h, H200.)
Usage: PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu python .../judge_probe_h.py OUT.json"""
import json
import re
import sys

from autograder import registry
from autograder.runner import Session
from autograder.submission import cell_from_text
from autograder.submissions import for_chapter
from kernels_ref.bench import chapter_cells, reference_source

ex = registry.get("ch01.softmax_triton")
doc = {"rows": []}
for r in range(2):
    for name in ("triton_one_warp", "attack_evict_last_residency"):
        w = next(w for w in for_chapter("ch01_softmax") if w.name == name)
        src = w.apply(reference_source(ex))
        cells = [cell_from_text(src, "softmax_triton") if c.origin == "softmax_triton" else c
                 for c in chapter_cells(ex)]
        with Session(cells) as s:
            res = s.check(ex.id, "bandwidth")
        m = re.search(r"([\d.]+) GB/s = ([\d.]+)% of", res.message or "")
        doc["rows"].append({"round": r, "submission": name, "passed": res.passed, "message": res.message,
                            "gbps": float(m.group(1)) if m else None})
        print(r, name, res.passed, (res.message or "")[:160], flush=True)
json.dump(doc, open(sys.argv[1], "w"), indent=1)
