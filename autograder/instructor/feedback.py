"""Feedback students would look at: `flashcourse feedback CH`.

From the result files of `flashcourse autograde CH` (results/CH/<student>.json, see autograder.instructor.classgrade):

* per student one self-contained HTML page, `feedback_html/CH/<student>.html`: the chapter, the GPU and the
  grading date; per test cell its name, the exercise and check it runs, points, pass/fail and the whole
  message (wrapped, never behind a scrollbar), what the student's solution cells printed, what needs
  attention; for a timed check a bar chart of the student's GB/s (or TFLOP/s) against the bar (threshold x
  copy bandwidth, or x PyTorch's baseline), the copy bandwidth (the baseline) and the reference kernel where a
  measurement on the same GPU model is committed (benchmarks/*.json);
* a class report, `feedback_html/CH/index.html` and `class.csv`: score histogram, pass rate per exercise and
  per check, the slowest and the most failing checks, and with `--leaderboard` the fastest passing timed
  kernels per exercise (students numbered in a stable anonymous order unless `--names`).

Pages are static: no JavaScript, no external request (pictures are PNG in data: URLs), a Content-Security-Policy
that allows neither scripts nor remote loads, and everything that came from a submission is escaped.
nbgrader's own `feedback/` folder is left alone.
"""
from __future__ import annotations

import base64
import csv
import glob
import hashlib
import html
import io
import json
import os
import re
import statistics

from autograder.instructor import classgrade
from autograder.judge.testcells import grade_cells
from autograder.judge.verdict import Kind, Measurement, Verdict

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
CHECK_NAMES = {"correctness": "correctness (the visible tests)", "hidden": "hidden tests",
               "bandwidth": "memory bandwidth (timed on the GPU)", "throughput": "throughput (timed on the GPU)",
               "memory": "memory use"}
WORDS = {"cuda": "CUDA", "triton": "Triton", "layernorm": "LayerNorm", "rmsnorm": "RMSNorm", "swiglu": "SwiGLU",
         "fp8": "FP8", "fp16": "FP16", "bf16": "BF16", "md": "(m, d)", "vec": "vectorised"}
STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 2em auto;
       max-width: 60em; padding: 0 1em; color: #1b1b1b; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { font-size: 1.25em; margin-top: 1.6em; }
.meta { color: #555; margin-top: 0; }
.cell { border: 1px solid #ccc; border-left: 6px solid #999; border-radius: 4px; padding: .6em 1em; margin: 1em 0; }
.cell.pass { border-left-color: #2e7d32; } .cell.fail { border-left-color: #c62828; }
.cell.notgraded { border-left-color: #ef6c00; }
.cell h3 { margin: .1em 0 .3em 0; font-size: 1.1em; }
.badge { display: inline-block; padding: 0 .5em; border-radius: 3px; font-size: .85em; font-weight: 600;
         color: #fff; vertical-align: middle; }
.badge.pass { background: #2e7d32; } .badge.fail { background: #c62828; } .badge.notgraded { background: #ef6c00; }
.points { float: right; font-weight: 600; }
pre, .msg { white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; overflow: visible;
            max-height: none; background: #f6f6f6; padding: .5em .7em; border-radius: 3px; font-size: .9em;
            font-family: ui-monospace, "DejaVu Sans Mono", monospace; margin: .3em 0; }
.check { margin: .6em 0; } .check-name { font-weight: 600; }
.attention { background: #fff4e5; border: 1px solid #ef6c00; border-radius: 4px; padding: .5em 1em; }
table { border-collapse: collapse; margin: .6em 0; } th, td { border: 1px solid #ccc; padding: .25em .6em; }
th { background: #f0f0f0; text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; height: auto; display: block; margin: .4em 0; }
.small { color: #555; font-size: .9em; }
"""


# ---------- reading ----------

def load_results(results: str) -> dict[str, dict]:
    """student -> result, for every result file of the folder (checks.csv and partial files ignored)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(results, "*.json"))):
        if os.path.basename(path).startswith("."):
            continue
        r = classgrade.read_result(path)
        if r is not None and r.get("student"):
            out[str(r["student"])] = r
    return out


def source_layout(course: str, chapter: str) -> tuple[list[str], dict[str, list]]:
    """The instructor's notebook, if the course has it: (graded cell ids in notebook order, test cell id ->
    [(exercise, check)])."""
    try:
        nb = classgrade.source_notebook(course, chapter)
    except (OSError, ValueError):
        return [], {}
    order = [c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in nb.cells]
    return [g for g in order if g], {g: list(v["calls"]) for g, v in grade_cells(nb).items()}


def humanise(grade_id: str) -> str:
    """test_softmax_triton_hidden -> "Softmax triton (hidden tests)"."""
    words = re.sub(r"^test_", "", str(grade_id)).split("_")
    suffix = ""
    if words and words[-1] in ("hidden", "bandwidth", "throughput", "memory") and len(words) > 1:
        suffix = {"hidden": " (hidden tests)", "bandwidth": " (bandwidth)", "throughput": " (throughput)",
                  "memory": " (memory)"}[words.pop()]
    words = [WORDS.get(w.lower(), w) for w in words if w]
    name = " ".join(words)
    return (name[:1].upper() + name[1:] if name else str(grade_id)) + suffix


def calls_of(grade_id: str, cell: dict, layout_calls: dict) -> list[tuple[str, str]]:
    """The checks a test cell runs: the instructor's notebook's, else those its result recorded."""
    return [tuple(c) for c in layout_calls.get(grade_id, cell.get("calls", []))]


def verdicts_of(r: dict) -> list[Verdict]:
    return [Verdict.from_json(c) for c in r.get("checks", [])]


def points_got(cell: dict) -> float:
    return float(cell.get("points", 0)) if cell.get("passed") else 0.0


def totals(r: dict) -> tuple[float, float]:
    cells = r.get("cells", {}).values()
    return sum(points_got(c) for c in cells), sum(float(c.get("points", 0)) for c in cells)


# ---------- timed checks: numbers and the chart ----------

_REFERENCES: list | None = None


def reference_rows() -> list[dict]:
    """Committed measurements of the reference kernels (benchmarks/*.json rows with variant "reference"),
    the grading engine's own runs (grading_v2_bench_*) first."""
    global _REFERENCES
    if _REFERENCES is None:
        from autograder.instructor.nbtext import ROOT
        paths = sorted(glob.glob(os.path.join(ROOT, "benchmarks", "*.json")),
                       key=lambda p: (not os.path.basename(p).startswith("grading_v2_bench"), p))
        rows = []
        for p in paths:
            try:
                with open(p) as f:
                    d = json.load(f)
            except (OSError, ValueError):
                continue
            if not isinstance(d, dict) or not isinstance(d.get("rows"), list):
                continue
            for r in d["rows"]:
                if isinstance(r, dict) and r.get("variant") == "reference" and r.get("fraction"):
                    rows.append(dict(r, device=r.get("device") or d.get("device"), file=os.path.basename(p)))
        _REFERENCES = rows
    return _REFERENCES


def reference_for(exercise: str, speed: Measurement) -> dict | None:
    """The reference kernel on the same GPU model and shape, as a fraction of the same roofline."""
    for r in reference_rows():
        if r.get("exercise") != exercise or r.get("device") != speed.device:
            continue
        if speed.shape and r.get("shape") and list(r["shape"]) != list(speed.shape):
            continue
        return {"fraction": float(r["fraction"]), "file": r["file"]}
    return None


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _plain(text: str) -> str:
    return str(text).replace("$", r"\$")  # no mathtext from a label


def speed_chart(exercise: str, check: str, speed: Measurement, passed: bool) -> tuple[str, str]:
    """(data URL of a PNG, alt text): the student's speed against the bar, the roofline and the reference."""
    from matplotlib.figure import Figure
    unit, roof, need = speed.unit, speed.roof, speed.need
    bars = [("your kernel", speed.value, "#2e7d32" if passed else "#c62828")]
    what = f"{100 * need:.0f}% of copy" if unit == "GB/s" else f"{need:.2f}x baseline"
    bars.append((f"the bar ({what})", need * roof, "#ef6c00"))
    ref = reference_for(exercise, speed)
    if ref:
        bars.append((f"reference kernel ({100 * ref['fraction']:.0f}%)" if unit == "GB/s"
                     else f"reference kernel ({ref['fraction']:.2f}x)", ref["fraction"] * roof, "#1565c0"))
    bars.append(("copy bandwidth" if unit == "GB/s" else "PyTorch baseline", roof, "#757575"))
    fig = Figure(figsize=(6.4, 0.5 + 0.42 * len(bars) + 0.5))
    ax = fig.subplots()
    labels = [_plain(b[0]) for b in bars][::-1]
    values = [b[1] for b in bars][::-1]
    ax.barh(labels, values, color=[b[2] for b in bars][::-1], height=0.6)
    for y, v in enumerate(values):
        ax.text(v, y, f" {v:,.0f}", va="center", fontsize=8)
    ax.set_xlim(0, max(values) * 1.18)
    ax.set_xlabel(unit)
    ax.set_title(_plain(f"{exercise} {check} on {speed.device}"), fontsize=9)
    ax.tick_params(labelsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    alt = "; ".join(f"{b[0]}: {b[1]:.0f} {unit}" for b in bars) + f" ({speed.device})"
    return _png(fig), alt


# ---------- the student's page ----------

def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _page(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{_e(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def _fmt(x: float) -> str:
    return f"{x:g}"


def _when(iso) -> str:
    """2026-11-23T17:32:28+00:00 -> 2026-11-23 17:32 UTC."""
    m = re.fullmatch(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d)(?::\d\d)?(?:\+00:00|Z)", str(iso))
    return f"{m.group(1)} {m.group(2)} UTC" if m else str(iso)


def _status(passed: bool, not_graded: bool) -> tuple[str, str]:
    if not_graded:
        return "notgraded", "NOT GRADED"
    return ("pass", "PASSED") if passed else ("fail", "FAILED")


def student_page(r: dict, order: list[str], layout_calls: dict, extra_attention: tuple = ()) -> str:
    student, chapter = str(r.get("student")), str(r.get("chapter"))
    device = str(r.get("device") or "unknown")
    got, total = totals(r)
    cells, solutions = r.get("cells", {}), r.get("solutions", {})
    checks = {(v.exercise, v.check): v for v in verdicts_of(r)}
    out = [f"<h1>{_e(chapter)}: feedback for {_e(student)}</h1>"]
    gpu = (f"GPU: <b>{_e(device)}</b>" if device != "cpu" else
           "graded without a GPU: timed checks were <b>not graded</b> yet")
    out.append(f"<p class=\"meta\">{gpu} · graded {_e(_when(r.get('graded_at', '?')))} · "
               f"notebook {_e(r.get('notebook') or 'none')}</p>")
    out.append(f"<p><b>Score: {_fmt(got)} / {_fmt(total)}</b> · "
               f"{sum(1 for c in cells.values() if c.get('passed'))} of {len(cells)} test cells passed</p>")
    attention = list(r.get("attention", [])) + list(extra_attention)
    not_graded = [g for g, c in cells.items() if c.get("not_graded")]
    if not_graded:
        attention.append(f"{len(not_graded)} test cell(s) need a GPU and were not graded on this machine: "
                         + ", ".join(not_graded))
    if attention:
        out.append("<h2>Needs attention</h2>\n<div class=\"attention\"><ul>"
                   + "".join(f"<li>{_e(a)}</li>" for a in attention) + "</ul></div>")
    out.append("<h2>Test cells</h2>")
    seq = [g for g in order if g in cells or g in solutions]
    seq += [g for g in list(cells) + list(solutions) if g not in seq]
    pending: list[str] = []
    for gid in seq:
        if gid in solutions and gid not in cells:
            pending.append(gid)
            continue
        if gid not in cells:
            continue
        out.append(_cell_html(gid, cells[gid], checks, layout_calls, solutions, pending))
        pending = []
    if pending:
        out.append("<h2>What your other solution cells printed</h2>")
        out += [_printed(g, solutions[g]) for g in pending]
    out.append("<p class=\"small\">Points as the grader's result file records them (flashcourse autograde); the "
               "gradebook holds the same unless your instructor changed a grade by hand.</p>")
    return _page(f"{chapter}: {student}", "\n".join(out))


def _printed(gid: str, text: str) -> str:
    return (f"<div class=\"check\"><span class=\"check-name\">Your cell <code>{_e(gid)}</code> printed:</span>"
            f"<pre>{_e(text)}</pre></div>")


def _cell_html(gid, cell, checks, layout_calls, solutions, pending) -> str:
    passed, ng = bool(cell.get("passed")), bool(cell.get("not_graded"))
    cls, word = _status(passed, ng)
    calls = calls_of(gid, cell, layout_calls)
    runs = ", ".join(f"{e} · {CHECK_NAMES.get(k, k)}" for e, k in calls) or "no check"
    h = [f"<section class=\"cell {cls}\" id=\"{_e(gid)}\">",
         f"<span class=\"points\">{_fmt(points_got(cell))} / {_fmt(float(cell.get('points', 0)))} points</span>",
         f"<h3>{_e(humanise(gid))} <span class=\"badge {cls}\">{word}</span></h3>",
         f"<div class=\"small\">test cell <code>{_e(gid)}</code> runs {_e(runs)}</div>"]
    if pending:
        h += [_printed(g, solutions[g]) for g in pending]
    shown = False
    for e, k in calls:
        v = checks.get((e, k))
        if v is None:
            continue
        shown = True
        ccls, cword = _status(v.passed, v.kind is Kind.NOT_GRADED)
        h.append(f"<div class=\"check\"><span class=\"check-name\">{_e(e)} [{_e(k)}]</span> "
                 f"<span class=\"badge {ccls}\">{cword}</span> <span class=\"small\">"
                 f"{v.seconds:.1f} s</span><div class=\"msg\">{_e(v.render())}</div>")
        if v.measurement is not None:
            src, alt = speed_chart(e, k, v.measurement, v.passed)
            h.append(f"<img src=\"{src}\" alt=\"{_e(alt)}\" width=\"614\">")
        h.append("</div>")
    if not shown:
        h.append(f"<div class=\"msg\">{_e(cell.get('text', ''))}</div>")
    h.append("</section>")
    return "\n".join(h)


# ---------- the class report ----------

def anonymous_labels(chapter: str, students: list[str]) -> dict[str, str]:
    """student -> "student k": numbered in the order of a hash of (chapter, id), the same for the same class."""
    ranked = sorted(students, key=lambda s: hashlib.sha256(f"{chapter}\0{s}".encode()).hexdigest())
    return {s: f"student {k}" for k, s in enumerate(ranked, 1)}


def _histogram(scores: list[float], total: float, chapter: str) -> str:
    from matplotlib.figure import Figure
    fig = Figure(figsize=(6.4, 2.8))
    ax = fig.subplots()
    top = max([total] + scores) or 1.0
    if top <= 40:  # one bar per point, centred on it
        ax.hist(scores, bins=[k - 0.5 for k in range(int(top) + 2)], color="#1565c0", edgecolor="white")
    else:
        ax.hist(scores, bins=20, range=(0, top), color="#1565c0", edgecolor="white")
    ax.set_xlabel(f"points (of {total:g})")
    ax.set_ylabel("students")
    ax.set_title(_plain(f"{chapter}: scores of {len(scores)} submissions"), fontsize=10)
    ax.yaxis.get_major_locator().set_params(integer=True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return _png(fig)


def class_report(chapter: str, results: dict[str, dict], order: list[str], *, leaderboard: bool,
                 names: bool, pages: dict[str, str]) -> tuple[str, list[list]]:
    """(index.html, class.csv rows)."""
    cell_ids = [g for g in order if any(g in r.get("cells", {}) for r in results.values())]
    cell_ids += sorted({g for r in results.values() for g in r.get("cells", {})} - set(cell_ids))
    rows = [["student", "points", "possible", *cell_ids]]
    scores, possible = [], 0.0
    for s in sorted(results):
        got, total = totals(results[s])
        scores.append(got)
        possible = max(possible, total)
        cells = results[s].get("cells", {})
        rows.append([s, _fmt(got), _fmt(total), *[_fmt(points_got(cells[g])) if g in cells else "" for g in cell_ids]])
    label = {s: s for s in results} if names else anonymous_labels(chapter, list(results))
    devices = sorted({str(r.get("device", "?")) for r in results.values()})
    dates = sorted(str(r.get("graded_at", ""))[:10] for r in results.values() if r.get("graded_at"))
    span = (dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}") if dates else "?"
    out = [f"<h1>{_e(chapter)}: class report</h1>",
           f"<p class=\"meta\">{len(results)} submissions · GPU: {_e(', '.join(devices) or '?')} · graded "
           f"{_e(span)}</p>"]
    verdicts = {s: verdicts_of(r) for s, r in results.items()}
    ng = sum(1 for vs in verdicts.values() for v in vs if v.kind is Kind.NOT_GRADED)
    if ng:
        out.append(f"<div class=\"attention\">{ng} timed checks were <b>not graded</b> (graded on a machine "
                   "without a GPU): they score 0 until graded on a GPU.</div>")
    if scores:
        out.append(f"<p>Mean {statistics.mean(scores):.1f}, median {statistics.median(scores):g} of "
                   f"{possible:g} points; full marks: {sum(1 for x in scores if x >= possible > 0)}.</p>")
        out.append(f"<img src=\"{_histogram(scores, possible, chapter)}\" alt=\"score histogram\" width=\"614\">")
    per_check: dict[tuple, dict] = {}
    for vs in verdicts.values():
        for v in vs:
            d = per_check.setdefault((v.exercise, v.check), {"passed": 0, "failed": 0, "not_graded": 0, "seconds": []})
            d["not_graded" if v.kind is Kind.NOT_GRADED else "passed" if v.passed else "failed"] += 1
            d["seconds"].append(v.seconds)
    per_ex: dict[str, dict] = {}
    for vs in verdicts.values():
        seen: dict[str, bool] = {}
        for v in vs:
            if v.kind is not Kind.NOT_GRADED:
                seen[v.exercise] = seen.get(v.exercise, True) and v.passed
        for e, ok in seen.items():
            d = per_ex.setdefault(e, {"all": 0, "n": 0})
            d["n"] += 1
            d["all"] += ok
    out.append("<h2>Pass rate per exercise</h2><p class=\"small\">Students who passed every graded check of the "
               "exercise (checks not graded are left out).</p>")
    out.append(_table(["exercise", "passed all", "graded", "rate"],
                      [[e, d["all"], d["n"], _pct(d["all"], d["n"])] for e, d in sorted(per_ex.items())]))
    out.append("<h2>Pass rate per check</h2>")
    out.append(_table(["exercise", "check", "passed", "failed", "not graded", "rate", "mean s", "max s"],
                      [[e, k, d["passed"], d["failed"], d["not_graded"], _pct(d["passed"], d["passed"] + d["failed"]),
                        f"{statistics.mean(d['seconds']):.1f}", f"{max(d['seconds']):.1f}"]
                       for (e, k), d in sorted(per_check.items())]))
    slow = sorted(per_check.items(), key=lambda kv: -max(kv[1]["seconds"]))[:10]
    out.append("<h2>Slowest checks</h2><p class=\"small\">Grading time per check (seconds of the judge).</p>")
    out.append(_table(["exercise", "check", "max s", "mean s", "runs"],
                      [[e, k, f"{max(d['seconds']):.1f}", f"{statistics.mean(d['seconds']):.1f}", len(d["seconds"])]
                       for (e, k), d in slow]))
    failing = sorted(((k, d) for k, d in per_check.items() if d["failed"]), key=lambda kv: (-kv[1]["failed"], kv[0]))
    out.append("<h2>Most failing checks</h2>")
    out.append(_table(["exercise", "check", "failed", "of graded"],
                      [[e, k, d["failed"], d["passed"] + d["failed"]] for (e, k), d in failing[:10]])
               if failing else "<p>No check failed.</p>")
    if leaderboard:
        out.append(_leaderboard(verdicts, label, names))
    attention = sorted(s for s, r in results.items() if r.get("attention"))
    if attention:
        who = ": " + ", ".join(_e(label[s]) for s in attention) if names else " (their pages say why)"
        out.append(f"<h2>Needs attention</h2><p>{len(attention)} submission(s){who}.</p>")
    if names and pages:
        out.append("<h2>Students</h2><ul>" + "".join(
            f"<li><a href=\"{_e(pages[s])}\">{_e(s)}</a> {_fmt(totals(results[s])[0])}/{_fmt(totals(results[s])[1])}"
            "</li>" for s in sorted(pages)) + "</ul>")
    out.append("<p class=\"small\">Per student and test cell: class.csv beside this page.</p>")
    return _page(f"{chapter}: class report", "\n".join(out)), rows


def _leaderboard(verdicts: dict[str, list[Verdict]], label: dict, names: bool) -> str:
    best: dict[tuple, list] = {}
    for s, vs in verdicts.items():
        for v in vs:
            if v.passed and v.measurement is not None:
                best.setdefault((v.exercise, v.check), []).append((v.measurement, s))
    out = ["<h2>Leaderboard: fastest passing kernels</h2>",
           "<p class=\"small\">Ranked by the fraction of the roofline (copy bandwidth, or PyTorch's baseline) "
           "measured in the same run, so GPUs compare; " +
           ("names shown." if names else "students are numbered in a fixed anonymous order.") + "</p>"]
    if not best:
        out.append("<p>No timed kernel passed yet.</p>")
    for (e, k), entries in sorted(best.items()):
        entries.sort(key=lambda t: (-t[0].fraction, label[t[1]]))
        unit = entries[0][0].unit
        out.append(f"<h3>{_e(e)} [{_e(k)}]</h3>")
        out.append(_table(["#", "student", unit, "of copy" if unit == "GB/s" else "of baseline", "GPU"],
                          [[n, label[s], f"{sp.value:,.0f}",
                            f"{100 * sp.fraction:.0f}%" if unit == "GB/s" else f"{sp.fraction:.2f}x",
                            sp.device] for n, (sp, s) in enumerate(entries[:10], 1)]))
    return "\n".join(out)


def _pct(a: int, n: int) -> str:
    return f"{100 * a / n:.0f}%" if n else "-"


def _table(head: list, rows: list[list]) -> str:
    h = "".join(f"<th>{_e(x)}</th>" for x in head)
    body = "".join("<tr>" + "".join(f"<td class=\"num\">{_e(x)}</td>" if isinstance(x, (int, float))
                                    or re.fullmatch(r"[\d.,%x-]+", str(x)) else f"<td>{_e(x)}</td>" for x in row)
                   + "</tr>" for row in rows)
    return f"<table><tr>{h}</tr>{body}</table>"


# ---------- writing ----------

def _write(path: str, text: str) -> None:
    tmp = path + ".part"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def safe_name(student: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._@+-]", "_", student).lstrip(".")
    return name or "student"


def feedback(course: str, chapter: str, *, results: str | None = None, out_dir: str | None = None,
             leaderboard: bool = False, names: bool = False, out=classgrade.STDOUT) -> int:
    course = os.path.abspath(course)
    results = os.path.abspath(results or os.path.join(course, "results", chapter))
    out_dir = os.path.abspath(out_dir or os.path.join(course, "feedback_html", chapter))
    found = load_results(results)
    found = {s: r for s, r in found.items() if r.get("chapter") in (None, chapter)}
    if not found:
        print(f"flashcourse feedback: no result files for {chapter} in {results}: grade first "
              f"(flashcourse autograde {chapter})", file=out)
        return 1
    order, layout_calls = source_layout(course, chapter)
    os.makedirs(out_dir, exist_ok=True)
    pages = {}
    for s, r in sorted(found.items()):
        name = safe_name(s)
        if name + ".html" in pages.values():  # two ids that differ only in odd characters
            name += "-" + hashlib.sha256(s.encode()).hexdigest()[:8]
        extra = []
        if os.path.isdir(os.path.join(course, "submitted", s, chapter)) and not classgrade.is_current(
                course, chapter, s, r):
            extra.append("the submission changed after it was graded: this page shows the grading of the earlier "
                         "version")
        _write(os.path.join(out_dir, name + ".html"), student_page(r, order, layout_calls, tuple(extra)))
        pages[s] = name + ".html"
    index, rows = class_report(chapter, found, order, leaderboard=leaderboard, names=names, pages=pages)
    _write(os.path.join(out_dir, "index.html"), index)
    with open(os.path.join(out_dir, "class.csv.part"), "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    os.replace(os.path.join(out_dir, "class.csv.part"), os.path.join(out_dir, "class.csv"))
    print(f"flashcourse feedback: {chapter}: {len(pages)} student pages, index.html and class.csv in {out_dir}",
          file=out)
    return 0
