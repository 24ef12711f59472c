"""The shape of autograder/: its folders are the trust roles (autograder/layout.py) and each role imports only the
roles below it; no import cycles (function-local imports count: they hide a cycle, they do not break it); and no code
that reads a verdict back out of its sentence (verdicts are data: autograder.judge.verdict)."""
import ast
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "autograder")


def _modules() -> dict[str, str]:
    """Dotted name -> path of every module of the package (packages by their __init__.py)."""
    out = {}
    for d, dirs, files in os.walk(PKG):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(d, f), ROOT)[:-3].split(os.sep)
                out[".".join(rel[:-1] if rel[-1] == "__init__" else rel)] = os.path.join(d, f)
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports, at module level or inside any function."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        is_pkg = path.endswith("__init__.py")
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".")[:len(name.split(".")) - node.level + (1 if is_pkg else 0)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod for a in node.names]
            for t in targets:
                while t and t not in mods:  # autograder.x.y (a name in module x) -> autograder.x
                    t = t.rpartition(".")[0]
                if t and t != name:
                    graph[name].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_sees_function_local_imports():
    g = import_graph()
    assert "autograder.judge.session" in g["autograder.judge.testcells"]  # imported inside grade()
    assert "autograder.judge.grading" in g["autograder.judge.session"]  # imported inside Session.check
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_autograder_has_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles in autograder/ (function-local imports included): " + "; ".join(
        " <-> ".join(c) for c in found)


# Which roles each role may import (besides itself, autograder.layout and the package's __init__). The judge and the
# runner stand side by side on the boundary and the declarations and never import each other: the judge starts the
# runner's programs by name and is handed a runner; a runner reports facts the judge checks.
ROLES = {
    "declare": {"boundary"},
    "boundary": set(),
    "judge": {"declare", "boundary"},
    "runner": {"declare", "boundary"},
    "notebook": {"declare", "boundary", "judge"},  # the live check(): asks a judge from the student's kernel
    "nbgrader": {"declare", "boundary", "judge", "instructor"},
    "instructor": {"declare", "boundary", "judge", "runner", "nbgrader"},
}


def _role(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] not in ("layout",) else None


def test_every_module_has_a_role():
    assert {_role(m) for m in _modules()} - {None} == set(ROLES), "a module outside the roles of autograder/layout.py"


def test_each_role_imports_only_the_roles_below_it():
    wrong = [f"{m} imports {t}" for m, targets in import_graph().items() for t in targets
             if _role(m) and _role(t) and _role(t) != _role(m) and _role(t) not in ROLES[_role(m)]]
    assert not wrong, "\n".join(wrong)


def test_the_judge_imports_nothing_of_the_runner():
    assert not [t for m, ts in import_graph().items() if m.startswith("autograder.judge") for t in ts
                if t.startswith("autograder.runner")]
    g = import_graph()
    assert "autograder.boundary.guards" in g["autograder.judge.grading"]  # the detector sees the judge's imports


def test_the_role_test_catches_a_wrong_arrow():
    assert "judge" not in ROLES["runner"] and "runner" not in ROLES["judge"] and "instructor" not in ROLES["judge"]


# A verdict is read by its fields (kind, measurement, ...), never parsed out of its sentence.
VERDICT_TEXT = re.compile(r"\b(message|msg)\b|\brender\(\)|\[[\"']text[\"']\]|get\([\"']text[\"']|\bevalue\b")
PARSING = [
    re.compile(r"re\.(search|match|fullmatch|findall|finditer|sub|split)\((?P<args>.*)"),
    re.compile(r"\.(startswith|endswith)\(\s*[\"'](not graded|not run|not timed|timed out|died)"),
    re.compile(r"[\"'](not graded|not run|not timed|timed out|died|GB/s|TFLOP/s|needs >=)[^\"']*[\"']\s+(not\s+)?in\s+"
               r"(?P<args>.*)"),
]


def verdict_parsing(source: str) -> list[tuple[int, str]]:
    """Lines that read a verdict's sentence back: a regex over a message or a cell's text, a verdict kind tested
    by a prefix, or by a substring of a message."""
    hits = []
    for n, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0] if not line.lstrip().startswith(("'", '"')) else line
        for p in PARSING:
            m = p.search(code)
            if m and ("args" not in m.groupdict() or VERDICT_TEXT.search(m.group("args") or "")):
                hits.append((n, line.strip()))
                break
    return hits


def test_the_parsing_detector_finds_what_it_must():
    bad = ['m = re.search(r"([\\d.]+) GB/s", check["message"])', 'gated = r.message.startswith("not graded")',
           'if "timed out" in r.message or "died" in r.message:', 'found = re.findall(r"^x", cell.get("text", ""))',
           'if "GB/s" in v.render():', 'm = re.search(r"needs >= ([\\d.]+)%", c["text"])']
    assert [n for n, _ in verdict_parsing("\n".join(bad))] == [1, 2, 3, 4, 5, 6]
    fine = ['m = re.fullmatch(r"(\\d+)/(\\d+)", spec)', 'if "not implemented yet" in str(e):',
            'text = v.render()', 'if v.kind is Kind.TIMED_OUT:', 'v = int(re.sub(r"[uUlL]+$", "", t.text))']
    assert verdict_parsing("\n".join(fine)) == []


def test_no_verdict_is_parsed_back_from_its_sentence():
    found = []
    for name, path in _modules().items():
        with open(path) as f:
            found += [f"{os.path.relpath(path, ROOT)}:{n}: {line}" for n, line in verdict_parsing(f.read())]
    assert not found, "verdicts are data (autograder.judge.verdict): read their fields\n" + "\n".join(found)
