"""Mutation testing of the grader: `flashcourse mutate CH [--sample N] [--json PATH]`.

Each chapter's report is its entry of benchmarks/mutation/cpu.json ({"chapters": {chapter: report}}); a run
replaces only its chapters' entries. `--json PATH` writes one chapter's report to PATH instead.

Every reference solution of a chapter is mutated automatically, inside its solution regions only
(what a student writes): Python/NumPy/Triton cells through their AST, CUDA cells through token-level
rules. Each mutant replaces its exercise's cell in the chapter's reference cells and is graded, in a
warm runner of its own, by the exercise's quiet checks (correctness, hidden, memory; the timed
checks need a GPU and are left out in CPU mode) until one fails. A CUDA mutant (device functions are
libraries for later cells) is also graded by the later CUDA exercises of its chapter when its own
checks all pass.

A mutant is
  killed      some check fails (a wrong output, a crash, a compile error, a timeout);
  equivalent  it survives and either the committed table EQUIVALENT_FILE gives a reason, or its
              outputs are bit-identical to the reference's on every case of every quiet check
              (inputs of several fixed seeds): no check the grader could draw at those shapes tells
              them apart;
  survived    otherwise: a hole in the checks (or a legal variant the table should name).

Launch meta-parameters (num_warps, num_stages) are not mutated by the CPU run: the Triton interpreter
ignores them and only a GPU's timed checks can judge them.

On a GPU, `flashcourse mutate CH --gpu-recheck` grades what the CPU run could not settle, with every check
including the timed ones (each timed check has the GPU alone, as in class grading): the committed report's
equivalent and surviving mutants, and the timed mutants (`timed_mutants`: each Triton launch's num_warps
set to 1, which changes the speed and nothing else). It writes the chapter's entry of
benchmarks/mutation/gpu/<gpu>.json, one file per GPU model: {"device": ..., "chapters": {chapter: report}}.

Mutant ids are deterministic: `<file>:<line>:<col>:<rule>` (the line and column in the reference
file), so a sample (`--sample N`: every k-th mutant of the sorted list) and the table are stable.
"""
from __future__ import annotations

import ast
import copy
import difflib
import json
import os
import re
import tempfile
import threading
import time
import tomllib
from dataclasses import dataclass, field

from autograder.declare.submission import notebook_part

from autograder.layout import ROOT  # noqa: E402
EQUIVALENT_FILE = os.path.join(ROOT, "benchmarks", "mutation", "equivalent.toml")
REPORT_DIR = os.path.join(ROOT, "benchmarks", "mutation")
CPU_REPORT = os.path.join(REPORT_DIR, "cpu.json")
UNPROVABLE_HERE = {  # rules whose survivors the CPU mode cannot show equivalent by their outputs
    "drop_other": "a masked tl.load without other= leaves masked-off lanes undefined on a GPU; the Triton "
                  "interpreter fills them with 0, so equal outputs here prove nothing",
}
CHECK_TIMEOUT_S = 45.0  # a mutant that hangs costs this (the reference's slowest quiet check: ~7 s on CPU)
EQUIV_SEEDS = (11, 12)


@dataclass
class Mutant:
    id: str
    exercise: str
    file: str  # the reference file, relative to the repository root
    rule: str
    line: int  # in the reference file
    source: str  # the mutated notebook part (the cell's text, `%%cuda` included for CUDA)
    diff: str = ""


@dataclass
class Outcome:
    id: str
    status: str  # killed | survived | equivalent
    by: str = ""  # the check that killed it, or why it is equivalent
    message: str = ""
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)


# ---------------------------------------------------------------- where a student writes

def _regions(lines: list[str]) -> list[tuple[int, int]]:
    """1-based inclusive line ranges strictly between BEGIN/END SOLUTION markers."""
    out, start = [], None
    for i, line in enumerate(lines, 1):
        if "### BEGIN SOLUTION" in line:
            start = i + 1
        elif "### END SOLUTION" in line and start is not None:
            out.append((start, i - 1))
            start = None
    return out


def _inside(regions, a: int, b: int) -> bool:
    return any(lo <= a and b <= hi for lo, hi in regions)


def _file_offset(path: str) -> int:
    """Line number in the file of the notebook part's first line, minus one."""
    with open(path) as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        if line.strip() in ("# %% notebook", "// %% notebook"):
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            return j
    return 0


# ---------------------------------------------------------------- Python / NumPy / Triton (AST)

MINMAX = {"max": "min", "min": "max", "maximum": "minimum", "minimum": "maximum", "amax": "amin",
          "amin": "amax", "fmax": "fmin", "fmin": "fmax", "argmax": "argmin", "argmin": "argmax"}
CMP_FLIP = {ast.Lt: [ast.LtE], ast.LtE: [ast.Lt], ast.Gt: [ast.GtE], ast.GtE: [ast.Gt],
            ast.Eq: [ast.NotEq], ast.NotEq: [ast.Eq]}
CMP_SYM = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
ARITH_FLIP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
              ast.FloorDiv: ast.Mult, ast.LShift: ast.RShift, ast.RShift: ast.LShift, ast.Pow: ast.Mult}
ARITH_SYM = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.LShift: "<<",
             ast.RShift: ">>", ast.Pow: "**", ast.Mod: "%"}
NARROW = {"float32": "float16", "float64": "float32"}
NO_INT_MUTATION_KW = {"axis", "num_warps", "num_stages", "dim"}
META = re.compile(r"warps|stages")
ATOMS = (ast.Name, ast.Constant, ast.Call, ast.Attribute, ast.Subscript)


def _fname(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _is_inf(node) -> bool:
    """float('inf'), math.inf, np.inf, float('-inf')."""
    if isinstance(node, ast.Call) and _fname(node) == "float" and node.args \
            and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).strip("+-") == "inf":
        return True
    return isinstance(node, ast.Attribute) and node.attr == "inf"


def _py_edits(tree: ast.Module, regions):
    """(node, rule, replacement node or source text) for every mutation of the tree."""
    kw_of: dict[int, str] = {}
    parent: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for ch in ast.iter_child_nodes(node):
            parent[id(ch)] = node
        if isinstance(node, ast.keyword) and node.arg:
            kw_of[id(node.value)] = node.arg
    assigned_before: dict[int, set] = {}  # function -> names assigned so far (for re-assignments)

    for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        seen: set = {a.arg for a in fn.args.args}
        for st in ast.walk(fn):
            if isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets):
                names = {t.id for t in st.targets}
                assigned_before[id(st)] = names & seen
                seen |= names

    meta: set = set()  # launch meta-parameters (num_warps, num_stages): speed only, not mutated
    for node in ast.walk(tree):
        roots = []
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and META.search(t.id) for t in node.targets):
            roots = [node.value]
        elif isinstance(node, ast.keyword) and node.arg and META.search(node.arg):
            roots = [node.value]
        meta |= {id(n) for r in roots for n in ast.walk(r)}

    for node in ast.walk(tree):
        if not hasattr(node, "lineno") or not _inside(regions, node.lineno, node.end_lineno) or id(node) in meta:
            continue
        if isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
            continue
        new = lambda: copy.deepcopy(node)  # noqa: E731
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            op = type(node.ops[0])
            for alt in CMP_FLIP.get(op, []):
                m = new()
                m.ops = [alt()]
                yield node, f"cmp{CMP_SYM[op]}to{CMP_SYM[alt]}", m
            if op in (ast.Lt, ast.LtE, ast.Gt, ast.GtE):
                for d, tag in ((ast.Add, "+1"), (ast.Sub, "-1")):
                    m = new()
                    m.comparators = [ast.BinOp(m.comparators[0], d(), ast.Constant(1))]
                    yield node, f"bound{tag}", m
        elif isinstance(node, ast.BinOp):
            op = type(node.op)
            if op in ARITH_FLIP:
                m = new()
                m.op = ARITH_FLIP[op]()
                yield node, f"arith{ARITH_SYM[op]}to{ARITH_SYM[ARITH_FLIP[op]]}", m
            if op in (ast.Sub, ast.Div):
                yield node, "swap_operands", ast.BinOp(copy.deepcopy(node.right), node.op, copy.deepcopy(node.left))
            if op in (ast.Mult, ast.Div, ast.Add, ast.Sub):  # a dropped rescale, factor or term
                yield node, "drop_right", copy.deepcopy(node.left)
            if op is ast.Mult:
                yield node, "drop_left", copy.deepcopy(node.right)
        elif isinstance(node, ast.BoolOp):
            m = new()
            m.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            yield node, "boolop", m
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            if _is_inf(node.operand):
                yield node, "neginf_to_0", ast.Constant(0.0)
                yield node, "neginf_to_-1e30", ast.Constant(-1e30)
            elif not isinstance(node.operand, ast.Constant):
                yield node, "drop_neg", copy.deepcopy(node.operand)
        elif isinstance(node, ast.Call):
            name = _fname(node)
            if _is_inf(node) and not (isinstance(parent.get(id(node)), ast.UnaryOp)):
                yield node, "inf_to_1e30", ast.Constant(1e30)
            if name in MINMAX:
                m = new()
                if isinstance(m.func, ast.Attribute):
                    m.func.attr = MINMAX[name]
                else:
                    m.func.id = MINMAX[name]
                yield node, f"{name}_to_{MINMAX[name]}", m
                if len(node.args) == 2 and not node.keywords:  # a clamp or merge dropped
                    yield node, "clamp_keep_first", copy.deepcopy(node.args[0])
                    yield node, "clamp_keep_second", copy.deepcopy(node.args[1])
            if name == "where" and len(node.args) == 3:
                yield node, "where_true", copy.deepcopy(node.args[1])
                yield node, "where_false", copy.deepcopy(node.args[2])
            if name == "range" and len(node.args) >= 2:
                m = new()
                step = node.args[2] if len(node.args) == 3 else ast.Constant(1)
                m.args[1] = ast.BinOp(m.args[1], ast.Sub(), copy.deepcopy(step))
                yield node, "skip_tail", m
            if name == "to" and len(node.args) == 1 and isinstance(node.func, ast.Attribute):
                yield node, "drop_cast", copy.deepcopy(node.func.value)
            if name in ("exp", "exp2"):
                m = new()
                m.func.attr = "exp2" if name == "exp" else "exp"
                yield node, f"{name}_to_{m.func.attr}", m
            for i, kw in enumerate(node.keywords):
                if kw.arg in ("mask", "other", "keepdims"):
                    m = new()
                    del m.keywords[i]
                    yield node, f"drop_{kw.arg}", m
            if len(node.args) == 2 and not node.keywords and name not in MINMAX and name not in (
                    "arange", "range", "full", "zeros", "load", "store", "cdiv", "dot", "program_id"):
                m = new()
                m.args = [m.args[1], m.args[0]]
                yield node, "swap_args", m
        elif isinstance(node, ast.Attribute) and node.attr in NARROW and isinstance(node.value, ast.Name):
            m = new()
            m.attr = NARROW[node.attr]
            yield node, f"narrow_{node.attr}", m
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float) and \
                kw_of.get(id(node)) not in NO_INT_MUTATION_KW:
            v = node.value
            p = parent.get(id(node))
            if isinstance(p, ast.Call) and _fname(p) in ("program_id", "arange") and p.args and p.args[0] is node:
                continue
            if isinstance(v, int):
                yield node, "int+1", ast.Constant(v + 1)
                if v > 0:
                    yield node, "int-1", ast.Constant(v - 1)
            else:
                if v != 0:
                    yield node, "const_to_0", ast.Constant(0.0)
                if v not in (0.0, 1.0):
                    yield node, "const_to_1", ast.Constant(1.0)
                if 0 < abs(v) < 1e-3:
                    yield node, "eps_x100", ast.Constant(v * 100)
                if v == 0:
                    yield node, "zero_to_1", ast.Constant(1.0)
        elif isinstance(node, ast.If):
            yield node.test, "guard_never", ast.Constant(False)
            yield node.test, "guard_always", ast.Constant(True)
        elif isinstance(node, ast.IfExp):
            yield node, "ifexp_body", copy.deepcopy(node.body)
            yield node, "ifexp_else", copy.deepcopy(node.orelse)
        elif isinstance(node, (ast.AugAssign, ast.Expr)) and not (
                isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            yield node, "delete_stmt", "pass"
        elif isinstance(node, ast.Assign) and assigned_before.get(id(node)):
            yield node, "delete_update", "pass"


def _offsets(src: str) -> list[int]:
    starts, pos = [0], 0
    for line in src.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


def _splice(src: str, starts, node, text: str) -> str:
    a = starts[node.lineno - 1] + _char_col(src, starts, node.lineno, node.col_offset)
    b = starts[node.end_lineno - 1] + _char_col(src, starts, node.end_lineno, node.end_col_offset)
    return src[:a] + text + src[b:]


def _char_col(src: str, starts, lineno: int, byte_col: int) -> int:
    line = src[starts[lineno - 1]:starts[lineno]]
    return len(line.encode()[:byte_col].decode(errors="ignore"))


def python_mutants(src: str) -> list[tuple[str, int, int, str]]:
    """(rule, line, col, mutated source) of a Python cell, in source order; duplicates dropped."""
    tree = ast.parse(src)
    regions = _regions(src.split("\n"))
    starts = _offsets(src)
    base = ast.dump(tree)
    out, seen = [], set()
    for node, rule, repl in _py_edits(tree, regions):
        if isinstance(repl, str):
            text = repl
        else:
            ast.fix_missing_locations(repl)
            text = ast.unparse(repl)
            neg_const = isinstance(repl, ast.UnaryOp) and isinstance(repl.operand, ast.Constant)
            if not isinstance(repl, ATOMS) and not neg_const:
                text = f"({text})"
            elif isinstance(repl, ast.Constant) and isinstance(repl.value, (int, float)) and repl.value < 0:
                text = f"({text})"
        new = _splice(src, starts, node, text)
        try:
            d = ast.dump(ast.parse(new))
        except SyntaxError:
            continue
        if d == base or new in seen:
            continue
        seen.add(new)
        out.append((rule, node.lineno, node.col_offset, new))
    return out


# ---------------------------------------------------------------- CUDA (tokens)

TOKEN = re.compile(r"(?P<num>0[xX][0-9a-fA-F]+[uUlL]*|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[fFuUlL]*)"
                   r"|(?P<id>[A-Za-z_]\w*)"
                   r"|(?P<op><<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|&=|\|=|"
                   r"[-+*/%<>=!&|^~?:;,.(){}\[\]#])")
TYPES = {"float", "float2", "float4", "int", "unsigned", "const", "char", "void", "half", "__half", "double",
         "size_t", "bool", "long", "__nv_bfloat16", "auto", "uint32_t"}
CASTS = {"reinterpret_cast", "static_cast", "const_cast"}
CU_SWAP = {"<": ["<="], "<=": ["<"], ">": [">="], ">=": [">"], "==": ["!="], "!=": ["=="],
           "+=": ["-="], "-=": ["+="], "*=": ["/="], "/=": ["*="], ">>=": ["<<="], "<<=": [">>="],
           "<<": [">>"], ">>": ["<<"], "&&": ["||"], "||": ["&&"]}
CU_ARITH = {"+": "-", "-": "+", "*": "/", "/": "*"}
CU_NAMES = {"fmaxf": "fminf", "fminf": "fmaxf", "max": "min", "min": "max", "fmax": "fmin", "fmin": "fmax",
            "__shfl_xor_sync": "__shfl_down_sync", "__shfl_down_sync": "__shfl_xor_sync",
            "__expf": "exp2f", "expf": "exp2f"}
NAME_RULES = {"__expf": "exp_to_exp2", "expf": "exp_to_exp2"}


@dataclass
class Tok:
    kind: str
    text: str
    line: int
    col: int
    a: int  # offset in the source
    b: int


def _cuda_tokens(src: str) -> list[Tok]:
    toks, starts = [], _offsets(src)
    for ln, line in enumerate(src.split("\n"), 1):
        code = line.split("//", 1)[0]
        if code.lstrip().startswith("#"):
            continue
        for m in TOKEN.finditer(code):
            toks.append(Tok(m.lastgroup, m.group(), ln, m.start(), starts[ln - 1] + m.start(),
                            starts[ln - 1] + m.end()))
    return toks


def cuda_mutants(src: str) -> list[tuple[str, int, int, str]]:
    lines = src.split("\n")
    regions = _regions(lines)
    toks = _cuda_tokens(src)
    out, seen = [], {src}

    def add(rule, t: Tok, new: str):
        if new not in seen:
            seen.add(new)
            out.append((rule, t.line, t.col, new))

    def rep(t: Tok, text: str, b: int | None = None) -> str:
        return src[:t.a] + text + src[(t.b if b is None else b):]

    template = set()  # indices of < and > of casts' template arguments
    for i, t in enumerate(toks):
        if t.text in CASTS and i + 1 < len(toks) and toks[i + 1].text == "<":
            template.add(i + 1)
            for j in range(i + 2, len(toks)):
                if toks[j].text == ">":
                    template.add(j)
                    break
    for i, t in enumerate(toks):
        if not _inside(regions, t.line, t.line) or i in template:
            continue
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        binary = prev is not None and (prev.kind == "num" or prev.text in (")", "]") or
                                       (prev.kind == "id" and prev.text not in TYPES))
        if t.text in ("__syncthreads", "__syncwarp"):
            j = i + 1
            while j < len(toks) and toks[j].text != ";":
                j += 1
            end = toks[j].b if j < len(toks) else t.b
            add("drop_barrier", t, rep(t, "", end))
            stmt = src[t.a:end]
            if lines[t.line - 1].strip() == stmt:  # move the barrier one line up or down (within the region)
                for d, tag in ((-1, "up"), (1, "down")):
                    k = t.line - 1 + d
                    while 0 <= k < len(lines) and not lines[k].split("//", 1)[0].strip():
                        k += d
                    if 0 <= k < len(lines) and _inside(regions, k + 1, k + 1):
                        moved = list(lines)
                        moved[t.line - 1], moved[k] = moved[k], moved[t.line - 1]
                        add(f"move_barrier_{tag}", t, "\n".join(moved))
        elif t.text in CU_SWAP and (t.text not in ("<", ">", "<<", ">>") or binary):
            for alt in CU_SWAP[t.text]:
                add(f"op{t.text}to{alt}", t, rep(t, alt))
            if t.text in ("<", "<=", ">", ">="):
                add("bound+1", t, rep(t, t.text + " 1 +"))
                add("bound-1", t, rep(t, t.text + " -1 +"))
        elif t.text in CU_ARITH and binary:
            add(f"arith{t.text}to{CU_ARITH[t.text]}", t, rep(t, CU_ARITH[t.text]))
        elif t.kind == "id" and t.text in CU_NAMES and nxt is not None and nxt.text == "(":
            add(NAME_RULES.get(t.text, f"{t.text}_to_{CU_NAMES[t.text]}"), t, rep(t, CU_NAMES[t.text]))
        elif t.text == "INFINITY" or (t.text == "__int_as_float" and nxt is not None and i + 2 < len(toks)
                                      and toks[i + 2].text.lower().startswith("0xff800000")):
            start = prev if prev is not None and prev.text == "-" else t
            end = t.b if t.text == "INFINITY" else toks[i + 3].b
            add("inf_to_0", start, src[:start.a] + "0.f" + src[end:])
        elif t.kind == "num":
            if prev is not None and prev.text == "[" and "__shared__" in lines[t.line - 1]:
                continue
            is_float = bool(re.search(r"[.eE]", t.text)) and not t.text.lower().startswith("0x")
            if is_float:
                v = float(t.text.rstrip("fF"))
                if v != 0:
                    add("const_to_0", t, rep(t, "0.f"))
                if v not in (0.0, 1.0):
                    add("const_to_1", t, rep(t, "1.f"))
                if v == 0:
                    add("zero_to_1", t, rep(t, "1.f"))
                if 0 < abs(v) < 1e-3:
                    add("eps_x100", t, rep(t, repr(v * 100) + "f"))
            elif not t.text.lower().startswith("0x"):
                v = int(re.sub(r"[uUlL]+$", "", t.text))
                add("int+1", t, rep(t, str(v + 1)))
                if v > 0:
                    add("int-1", t, rep(t, str(v - 1)))
        elif t.text == "if" and nxt is not None and nxt.text == "(":
            depth, j = 0, i + 1
            while j < len(toks):
                depth += toks[j].text == "("
                depth -= toks[j].text == ")"
                if depth == 0:
                    break
                j += 1
            if j < len(toks):
                add("guard_never", t, src[:nxt.b] + "0" + src[toks[j].a:])
                add("guard_always", t, src[:nxt.b] + "1" + src[toks[j].a:])
        elif t.text == "float" and nxt is not None and nxt.kind == "id" and i + 2 < len(toks) \
                and toks[i + 2].text == "=" and (prev is None or prev.text in (";", "{", "}", ")")):
            new = rep(t, "__half")
            if "cuda_fp16.h" not in src:
                new = "#include <cuda_fp16.h>\n" + new
            add("narrow_float_to_half", t, new)
        elif t.text == "return" and nxt is not None and nxt.text == ";":
            add("drop_return", t, src[:t.a] + src[nxt.b:])
    return out


# ---------------------------------------------------------------- mutants of a chapter

def _diff(old: str, new: str, path: str, offset: int) -> str:
    a, b = old.split("\n"), new.split("\n")
    lines = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        lines.append(f"@@ {path}:{i1 + 1 + offset} @@")
        lines += [f"-{x}" for x in a[i1:i2]] + [f"+{x}" for x in b[j1:j2]]
    return "\n".join(lines)


def chapter_exercises(chapter: str) -> list:
    from autograder.declare import registry
    return [e for e in registry.all_exercises() if e.chapter == chapter]


def mutants_for_exercise(ex) -> list[Mutant]:
    path = os.path.join(ROOT, ex.solution)
    part = notebook_part(path)
    offset = _file_offset(path)
    cuda = ex.solution.endswith(".cu")
    raw = cuda_mutants(part) if cuda else python_mutants(part)
    out, ids = [], set()
    for rule, line, col, new in raw:
        mid = f"{ex.solution}:{line + offset}:{col}:{rule}"
        k = 2
        while mid in ids:  # two mutants of one rule at one place (e.g. both halves of a clamp)
            mid = f"{ex.solution}:{line + offset}:{col}:{rule}#{k}"
            k += 1
        ids.add(mid)
        out.append(Mutant(mid, ex.id, ex.solution, rule, line + offset,
                          ("%%cuda\n" + new) if cuda else new, _diff(part, new, ex.solution, offset)))
    return out


def mutants_for_chapter(chapter: str) -> list[Mutant]:
    return [m for ex in chapter_exercises(chapter) for m in mutants_for_exercise(ex)]


WARPS = re.compile(r"num_warps\s*=\s*")


def timed_mutants(chapter: str) -> list[Mutant]:
    """Mutants only a GPU's clock can kill: every Triton launch of a reference (inside its solution regions)
    with num_warps=1. The output is the same; a row is then reduced by 32 threads, which cannot keep enough
    loads in flight, so the bandwidth check must fail."""
    out = []
    for ex in chapter_exercises(chapter):
        if ex.solution.endswith(".cu"):
            continue
        path = os.path.join(ROOT, ex.solution)
        part, offset = notebook_part(path), _file_offset(path)
        lines = part.splitlines(keepends=True)
        for a, b in _regions([ln.rstrip("\n") for ln in lines]):
            for i in range(a - 1, b):
                for k in WARPS.finditer(lines[i]):
                    # a launch's keyword argument, not an assignment `num_warps = ...`
                    if not lines[i][:k.start()].rstrip().endswith((",", "(")):
                        continue
                    rest = lines[i][k.end():]
                    depth, j = 0, 0
                    while j < len(rest) and not (depth == 0 and rest[j] in ",)"):
                        depth += rest[j] in "([{"
                        depth -= rest[j] in ")]}"
                        j += 1
                    new_line = lines[i][:k.end()] + "1" + rest[j:]
                    new = "".join(lines[:i] + [new_line] + lines[i + 1:])
                    mid = f"{ex.solution}:{i + 1 + offset}:{k.start()}:timed_num_warps_1"
                    out.append(Mutant(mid, ex.id, ex.solution, "timed_num_warps_1", i + 1 + offset, new,
                                      _diff(part, new, ex.solution, offset)))
    return out


def sample(mutants: list[Mutant], n: int | None) -> list[Mutant]:
    """A deterministic sample: n mutants spread evenly over the list (every exercise and rule kept in order)."""
    if not n or n >= len(mutants):
        return list(mutants)
    step = len(mutants) / n
    return [mutants[int(i * step)] for i in range(n)]


# ---------------------------------------------------------------- grading a mutant

def _cells(chapter: str, upto, replace: dict):
    """The chapter's reference cells up to exercise `upto`, with exercise id -> source replaced."""
    from autograder.declare.submission import cell_from_text
    cells = []
    for ex in chapter_exercises(chapter):
        src = replace.get(ex.id) or _reference_source(ex)
        cells.append(cell_from_text(src, ex.id.split(".", 1)[1]))
        if ex.id == upto.id:
            break
    return cells


def _reference_source(ex) -> str:
    src = notebook_part(os.path.join(ROOT, ex.solution))
    return ("%%cuda\n" + src) if ex.solution.endswith(".cu") else src


def quiet_checks(ex) -> list[str]:
    from course import mode

    from autograder.declare.exercise import TIMED_CHECKS
    return [c for c in ex.checks if mode.GPU or c not in TIMED_CHECKS]


def _graded_by(m: Mutant) -> list:
    """The exercises whose checks grade mutant m: its own, then (CUDA) the chapter's later CUDA ones."""
    exs = chapter_exercises(_chapter_of(m.exercise))
    own = next(e for e in exs if e.id == m.exercise)
    later = exs[exs.index(own) + 1:]
    return [own] + ([e for e in later if e.kind == "cuda"] if own.kind == "cuda" else [])


def _chapter_of(exercise_id: str) -> str:
    from autograder.declare import registry
    return registry.get(exercise_id).chapter


def _check(s, ex_id: str, check: str, seed, timeout):
    """One check; on a GPU under the class grader's GPU lock (a timed check has the GPU alone)."""
    from autograder.declare.exercise import TIMED_CHECKS
    with _gpu_turn(check in TIMED_CHECKS):
        return s.check(ex_id, check, seed=seed, timeout=timeout)


def _gpu_turn(timed: bool):
    """On a GPU, the class grader's GPU lock (shared; exclusive for a timed check); nothing on CPU."""
    import contextlib

    from course import mode
    if not mode.GPU:
        return contextlib.nullcontext()
    from autograder.judge.gpulock import GpuLock, gpu_name
    lock = GpuLock(gpu_name())
    return lock.exclusive() if timed else lock.shared()


def grade(m: Mutant, timeout: float = CHECK_TIMEOUT_S, seed: int | None = None) -> Outcome:
    """Grade one mutant in a warm runner of its own: killed at the first failing check."""
    from autograder.judge.session import Session
    t0 = time.monotonic()
    graded = _graded_by(m)
    cells = _cells(graded[0].chapter, graded[-1], {m.exercise: m.source})
    with Session(cells) as s:
        for ex in graded:
            for check in quiet_checks(ex):
                r = _check(s, ex.id, check, seed, timeout)
                if not r.passed:
                    return Outcome(m.id, "killed", f"{ex.id}:{check}", r.render()[:300], time.monotonic() - t0)
    return Outcome(m.id, "survived", seconds=time.monotonic() - t0)


def _case_list(ex) -> list:
    from course import mode
    cases = [c for check in ex.cases for c in ex.cases[check] if mode.GPU or not c.gpu_only]
    if ex.memory is not None:
        cases.append(ex.memory.case)
    return cases


def outputs(cells, ex, seeds=EQUIV_SEEDS, timeout: float = 120.0) -> list:
    """The outputs of `cells` for ex on every quiet case and seed, as the judge receives them (None on failure)."""
    from course import mode

    from autograder.judge.grading import _make
    from autograder.judge.session import Session, _Remote
    outs = []
    with _gpu_turn(False), Session(cells) as s:  # its runner runs (loads, computes) under the GPU lock only
        try:
            s._start()
        except Exception:
            return [None]
        deadline = time.monotonic() + timeout
        for seed in seeds:
            for i, case in enumerate(_case_list(ex)):
                _, inputs = _make(ex, case, seed * 1000 + i, mode.DEVICE)
                try:
                    outs.append(_Remote(s, deadline).run(ex, inputs, False)["out"])
                except Exception as e:  # noqa: BLE001 - any failure: not provably equivalent
                    outs.append(f"failed: {type(e).__name__}")
    return outs


def _same(a, b) -> bool:
    import numpy as np
    import torch
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (torch.Tensor, np.ndarray)) or isinstance(b, (torch.Tensor, np.ndarray)):
        try:
            x, y = torch.as_tensor(a), torch.as_tensor(b)
        except Exception:  # noqa: BLE001
            return False
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        x, y = x.detach().cpu().contiguous(), y.detach().cpu().contiguous()
        if x.dtype.is_floating_point:
            both_nan = torch.isnan(x) & torch.isnan(y)
            return bool(torch.equal(torch.where(both_nan, 0, x), torch.where(both_nan, 0, y)))
        return bool(torch.equal(x, y))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b


def equivalent_by_outputs(m: Mutant, reference_outputs: dict) -> bool:
    """True if m's outputs equal the reference's bit for bit on every case of every graded exercise."""
    for ex in _graded_by(m):
        cells = _cells(ex.chapter, ex, {m.exercise: m.source})
        mine = outputs(cells, ex)
        if any(o is None or isinstance(o, str) for o in mine) or not _same(mine, reference_outputs[ex.id]):
            return False
    return True


def equivalent_table(section: str = "equivalent") -> dict[str, str]:
    """The committed table (EQUIVALENT_FILE): [equivalent] mutants argued equivalent, id -> reason;
    [not_equivalent] mutants whose outputs match the reference's here but that are wrong all the same
    (e.g. a shared-memory read past an array, which the CPU layer does not catch): never counted as
    equivalent."""
    if not os.path.exists(EQUIVALENT_FILE):
        return {}
    with open(EQUIVALENT_FILE, "rb") as f:
        data = tomllib.load(f)
    return {k: v["reason"] if isinstance(v, dict) else str(v) for k, v in data.get(section, {}).items()}


# ---------------------------------------------------------------- a chapter's run

def run_chapter(chapter: str, n_sample: int | None = None, jobs: int = 2, log=print,
                prove_equivalence: bool = True) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    from course import mode
    every = mutants_for_chapter(chapter)
    chosen = sample(every, n_sample)
    table = equivalent_table()
    wrong_anyway = equivalent_table("not_equivalent")
    t0 = time.monotonic()
    results: list[Outcome] = []

    ref_outs: dict = {}
    lock = threading.Lock()

    def reference_outputs(m: Mutant) -> dict:
        with lock:  # once per exercise (a second thread waits rather than computing it again)
            for ex in _graded_by(m):
                if ex.id not in ref_outs:
                    ref_outs[ex.id] = outputs(_cells(ex.chapter, ex, {}), ex)
            return ref_outs

    def one(m: Mutant) -> Outcome:
        try:
            o = grade(m)
            if o.status == "survived" and m.id in table:
                o.status, o.by = "equivalent", "table: " + table[m.id]
            elif o.status == "survived" and m.id in wrong_anyway:
                o.by = "not equivalent: " + wrong_anyway[m.id]
            elif o.status == "survived" and m.rule in UNPROVABLE_HERE and not mode.GPU:
                o.by = "not equivalent: " + UNPROVABLE_HERE[m.rule]
            elif o.status == "survived" and prove_equivalence and equivalent_by_outputs(m, reference_outputs(m)):
                o.status = "equivalent"
                o.by = f"bit-identical outputs on every quiet case ({len(EQUIV_SEEDS)} seeds)"
        except Exception as e:  # noqa: BLE001 - the harness failed, not the grader: say so
            o = Outcome(m.id, "error", message=f"{type(e).__name__}: {e}")
        log(f"{o.status:9} {o.seconds:5.1f}s {m.id} {o.by} {o.message[:120]}".replace("\n", " | "))
        return o

    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(one, chosen))
    by_id = {m.id: m for m in chosen}
    killed = sum(o.status == "killed" for o in results)
    equivalent = [o for o in results if o.status == "equivalent"]
    survived = [o for o in results if o.status == "survived"]
    errors = [o for o in results if o.status == "error"]
    non_eq = len(results) - len(equivalent) - len(errors)
    report = {
        "chapter": chapter,
        "mutants": len(results),
        "killed": killed,
        "equivalent": len(equivalent),
        "survived": [{"id": o.id, "file": by_id[o.id].file, "diff": by_id[o.id].diff,
                      **({"note": o.by} if o.by else {})} for o in survived],
        "kill_rate": round(killed / non_eq, 4) if non_eq else 1.0,
        "sampled": len(chosen) < len(every),
        "generated": len(every),
        "mode": mode.MODE,
        "checks": "quiet checks only (correctness, hidden, memory); timed checks need a GPU" if not mode.GPU
                  else "quiet checks (timed checks not run by the mutation run)",
        "seconds": round(time.monotonic() - t0, 1),
        "equivalent_mutants": [{"id": o.id, "why": o.by} for o in equivalent],
        "errors": [{"id": o.id, "message": o.message} for o in errors],
        "killed_slowly": sorted(o.id for o in results if o.status == "killed" and o.seconds > 15),
        "killed_by": _count(o.by.split(":")[-1] for o in results if o.status == "killed"),
        "by_rule": _rules(results, by_id),
    }
    if report["sampled"]:
        report["sample"] = f"every {len(every) / len(chosen):.2f}-th of {len(every)} generated mutants " \
                           f"(autograder.instructor.mutate.sample, deterministic)"
    return report


def reclassify(report: dict) -> dict:
    """Apply the current table (EQUIVALENT_FILE, UNPROVABLE_HERE) to a report without grading again:
    survivors the table names equivalent move to equivalent, equivalents it names wrong move to survived."""
    from course import mode
    table, wrong_anyway = equivalent_table(), equivalent_table("not_equivalent")
    by_id = {m.id: m for m in mutants_for_chapter(report["chapter"])}
    survived, equivalent = [], []
    for s in report["survived"]:
        if s["id"] in table:
            equivalent.append({"id": s["id"], "why": "table: " + table[s["id"]]})
        else:
            survived.append(s)
    for e in report.get("equivalent_mutants", []):
        m = by_id.get(e["id"])
        why = wrong_anyway.get(e["id"]) or (UNPROVABLE_HERE.get(m.rule) if m is not None and not mode.GPU else None)
        if why and e["id"] not in table:
            survived.append({"id": e["id"], "file": m.file if m else "", "diff": m.diff if m else "",
                             "note": "not equivalent: " + why})
        else:
            equivalent.append(e)
    report = dict(report, survived=survived, equivalent_mutants=equivalent, equivalent=len(equivalent))
    non_eq = report["mutants"] - len(equivalent) - len(report.get("errors", []))
    report["kill_rate"] = round(report["killed"] / non_eq, 4) if non_eq else 1.0
    return report


def _logged_outcomes(path: str, ids: set) -> dict:
    """Outcomes already printed by an earlier --gpu-recheck call that was cut off (its log lines, as `one`
    prints them): a device call has a time limit, and these need not be graded again."""
    out = {}
    pat = re.compile(r"^(killed|survived)\s+([0-9.]+)s (\S+) \[[^\]]*\] ?(\S*) ?(.*)$")  # errors: graded again
    with open(path) as f:
        for line in f:
            m = pat.match(line.rstrip("\n"))
            if m and m.group(3) in ids:
                by = m.group(4) if m.group(1) == "killed" else ""
                msg = m.group(5) if m.group(1) == "killed" else (m.group(4) + " " + m.group(5)).strip()
                out[m.group(3)] = Outcome(m.group(3), m.group(1), by, msg, float(m.group(2)))
    return out


def gpu_recheck(chapter: str, jobs: int = 4, log=print, ids: list[str] | None = None,
                done_log: str | None = None) -> dict:
    """On a GPU: grade, with every check (timed ones included), the mutants the committed CPU report left
    unsettled (equivalent or survived) and the timed mutants. Killed here means the GPU tells them apart
    from the reference: a wrong output a CPU cannot see, or a speed below the exercise's bar."""
    from concurrent.futures import ThreadPoolExecutor

    from course import mode
    if not mode.GPU:
        raise SystemExit("--gpu-recheck needs a GPU (it runs the timed checks)")
    cpu = cpu_report(chapter)
    if cpu is None:
        raise SystemExit(f"no committed CPU mutation report for {chapter} in {CPU_REPORT}")
    unsettled = [e["id"] for e in cpu.get("equivalent_mutants", [])] + [s["id"] for s in cpu["survived"]]
    by_id = {m.id: m for m in mutants_for_chapter(chapter)}
    chosen = [by_id[i] for i in unsettled if i in by_id] + timed_mutants(chapter)
    if ids:
        chosen = [m for m in chosen if any(x in m.id for x in ids)]
    cpu_status = {e["id"]: "equivalent" for e in cpu.get("equivalent_mutants", [])}
    cpu_status.update({s["id"]: "survived" for s in cpu["survived"]})
    t0 = time.monotonic()

    def one(m: Mutant) -> Outcome:
        try:
            o = grade(m, timeout=60.0)
        except Exception as e:  # noqa: BLE001 - the harness failed, not the grader: say so
            o = Outcome(m.id, "error", message=f"{type(e).__name__}: {e}")
        log(f"{o.status:9} {o.seconds:5.1f}s {m.id} [{cpu_status.get(m.id, 'timed mutant')} on CPU] {o.by} "
            f"{o.message[:160]}".replace("\n", " | "))
        return o

    earlier = _logged_outcomes(done_log, {m.id for m in chosen}) if done_log else {}
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(one, [m for m in chosen if m.id not in earlier]))
    results = [earlier.get(m.id) or next(o for o in results if o.id == m.id) for m in chosen]
    rows = [{"id": o.id, "cpu": cpu_status.get(o.id, "timed mutant"), "gpu": o.status, "by": o.by,
             "message": o.message[:400], "seconds": round(o.seconds, 1),
             **({"graded": "in an earlier call (its log line)"} if o.id in earlier else {})} for o in results]
    timed = [r for r in rows if r["cpu"] == "timed mutant"]
    return {"chapter": chapter, "device": mode.device_name(), "mode": mode.MODE,
            "checks": "every check, timed ones included (each timed check with the GPU alone)",
            "rechecked": len(rows), "seconds": round(time.monotonic() - t0, 1),
            "cpu_survivors_killed_here": sum(r["cpu"] == "survived" and r["gpu"] == "killed" for r in rows),
            "cpu_equivalents_killed_here": sum(r["cpu"] == "equivalent" and r["gpu"] == "killed" for r in rows),
            "timed_mutants": len(timed), "timed_mutants_killed": sum(r["gpu"] == "killed" for r in timed),
            "errors": sum(r["gpu"] == "error" for r in rows), "mutants": rows}


def gpu_report_path(device: str) -> str:
    """The GPU recheck's file for one GPU model: benchmarks/mutation/gpu/<gpu>.json."""
    gpu = re.sub(r"[^a-z0-9]+", "_", device.lower()).strip("_")
    return os.path.join(REPORT_DIR, "gpu", f"{gpu}.json")


def cpu_report(chapter: str) -> dict | None:
    """The committed CPU report of a chapter (its entry of CPU_REPORT), or None if it has none."""
    if not os.path.exists(CPU_REPORT):
        return None
    with open(CPU_REPORT) as f:
        return json.load(f)["chapters"].get(chapter)


def write_chapter_entry(report: dict, path: str, **fields) -> None:
    """Put one chapter's report into a merged file ({**fields, "chapters": {chapter: report}}) under the chapter's
    name, keeping the other chapters' entries (read, replace that entry, write to a temporary file and rename
    it over the old one). `fields`: the file's other top-level keys (the GPU recheck's device)."""
    doc = {**fields, "chapters": {}}
    if os.path.exists(path):
        with open(path) as f:
            doc = {**json.load(f), **fields}
    doc["chapters"] = dict(sorted({**doc.get("chapters", {}), report["chapter"]: report}.items()))
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".part-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.chmod(tmp, 0o644)  # mkstemp makes it private
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _count(items) -> dict:
    out: dict = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return dict(sorted(out.items()))


def _rules(results, by_id) -> dict:
    out: dict = {}
    for o in results:
        rule = by_id[o.id].rule
        out.setdefault(rule, {"killed": 0, "survived": 0, "equivalent": 0, "error": 0})[o.status] += 1
    return dict(sorted(out.items()))


def main(chapters: list[str], n_sample: int | None = None, json_path: str | None = None,
         jobs: int = 2, list_only: bool = False, only: str | None = None, recheck: bool = False) -> int:
    """`only`: grade just the mutants whose id contains this text (a file, a rule); no report is written."""
    from concurrent.futures import ThreadPoolExecutor
    bad = 0
    if recheck:
        from course import mode
        for chapter in chapters:
            r = gpu_recheck(chapter, jobs, log=lambda s: print(s, flush=True), ids=[only] if only else None,
                            done_log=os.environ.get("FLASHCOURSE_MUTGPU_DONE") or None)
            path = json_path or gpu_report_path(mode.device_name())
            write_chapter_entry(r, path, device=r["device"])
            print(f"{chapter} on {r['device']}: {r['rechecked']} rechecked in {r['seconds']:.0f} s; CPU survivors "
                  f"killed here {r['cpu_survivors_killed_here']}, CPU equivalents killed here "
                  f"{r['cpu_equivalents_killed_here']}, timed mutants killed {r['timed_mutants_killed']} of "
                  f"{r['timed_mutants']}, errors {r['errors']} -> {path}", flush=True)
            bad += bool(r["errors"])
        return 1 if bad else 0
    if only == "reclassify":  # apply the current table to the committed reports
        for chapter in chapters:
            report = cpu_report(chapter)
            if report is None:
                raise SystemExit(f"no committed CPU mutation report for {chapter} in {CPU_REPORT}")
            report = reclassify(report)
            write_chapter_entry(report, CPU_REPORT)
            print(f"{chapter}: {report['mutants']} mutants, {report['killed']} killed, {report['equivalent']} "
                  f"equivalent, {len(report['survived'])} survived; kill rate {100 * report['kill_rate']:.1f}%")
        return 0
    if only:
        for chapter in chapters:
            ms = [m for m in sample(mutants_for_chapter(chapter), n_sample) if only in m.id]
            with ThreadPoolExecutor(jobs) as pool:
                for o in pool.map(grade, ms):
                    print(f"{o.status:9} {o.seconds:5.1f}s {o.id} {o.by} {o.message[:160]}".replace("\n", " | "),
                          flush=True)
        return 0
    for chapter in chapters:
        if list_only:
            ms = sample(mutants_for_chapter(chapter), n_sample)
            for m in ms:
                print(m.id)
            print(f"{chapter}: {len(ms)} mutants")
            continue
        report = run_chapter(chapter, n_sample, jobs, log=lambda s: print(s, flush=True))
        if json_path:
            path = json_path if len(chapters) == 1 else os.path.join(json_path, f"{chapter}.json")
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            with open(path, "w") as f:
                json.dump(report, f, indent=1)
                f.write("\n")
        else:
            path = CPU_REPORT
            write_chapter_entry(report, path)
        n_eq = report["equivalent"]
        print(f"{chapter}: {report['mutants']} mutants, {report['killed']} killed, {n_eq} equivalent, "
              f"{len(report['survived'])} survived, {len(report['errors'])} errors; kill rate "
              f"{100 * report['kill_rate']:.1f}% of non-equivalent; {report['seconds']:.0f} s -> {path}")
        bad += report["kill_rate"] < 0.95 or bool(report["errors"])
    return 1 if bad else 0
