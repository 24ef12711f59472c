"""`python -m benchmarks [TOOL [ARGS ...]]`: the benchmark tools' one entry point (run from the repository root).

Without a tool, lists them with the first line of each one's docstring; `python -m benchmarks TOOL --help` (or its
docstring) says what a tool takes. Every tool is also `python -m benchmarks.TOOL ARGS`.
"""
from __future__ import annotations

import ast
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def tools() -> dict[str, str]:
    out = {}
    for name in sorted(os.listdir(HERE)):
        if name.endswith(".py") and not name.startswith("_"):
            with open(os.path.join(HERE, name), encoding="utf-8") as f:
                doc = ast.get_docstring(ast.parse(f.read())) or ""
            out[name[:-3]] = doc.strip().splitlines()[0] if doc.strip() else ""
    return out


def main(argv: list[str]) -> int:
    known = tools()
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        width = max(map(len, known))
        for name, line in known.items():
            print(f"  {name.ljust(width)}  {line}")
        return 0
    tool, rest = argv[0], argv[1:]
    if tool not in known:
        print(f"unknown tool {tool!r}; `python -m benchmarks` lists them", file=sys.stderr)
        return 2
    sys.argv = [f"benchmarks/{tool}.py", *rest]
    runpy.run_module(f"benchmarks.{tool}", run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
