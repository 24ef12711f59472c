"""The student's working copy of the course, which `make lab` serves (lab/serve.sh student runs this).

    python lab/workcopy.py COURSE WORK

COURSE is the course root (release/CH/CH.ipynb for each chapter); WORK is the working copy, created on first
use. A chapter's notebook is copied to WORK/CH/CH.ipynb when it is not there yet, and never overwritten: a
chapter added to the course later is copied in, a notebook the student already has is kept, and when its
release has changed since it was copied, one line says so. To get a fresh copy of a chapter, rename or delete
WORK/CH/CH.ipynb and start again.

What the copy changes in a notebook, in its metadata only (cells, ids and nbgrader's checksums are the
release's):
- `language_info` becomes what this Python's ipykernel reports (version and all). The release holds the stub
  {"name": "python"}; JupyterLab replaces it with the kernel's when the kernel connects, which marked every
  chapter modified right after it opened. With the kernel's own, the notebook opens unmodified.
- `flashcourse.copied_from` records the release file and its SHA-256, to tell when the release has changed.

The chapters link to files outside their folder (`../../course/GLOSSARY.md`, `../../course/diagrams/*.png`).
JupyterLab resolves a link against the server root and stops at it, so from WORK/CH `../../course/X` is
WORK/course/X (and on disk, with WORK = COURSE/work, it is COURSE/course/X as well). Every file the notebooks
link to is copied there, and the Markdown files copied follow their own links; these are the course's, not the
student's: they are brought up to date at every start.

Standard library only; written the way Jupyter writes notebooks (nbformat's JSON layout), so that saving an
untouched copy leaves its file as it is.
"""
import hashlib
import json
import os
import posixpath
import re
import shutil
import sys
import urllib.parse

PREFIX = "flashcourse:"
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|\bsrc=[\"']([^\"']+)[\"']")


def chapters(course: str) -> list[str]:
    """Chapters with a release notebook release/CH/CH.ipynb, sorted."""
    release = os.path.join(course, "release")
    if not os.path.isdir(release):
        return []
    return sorted(ch for ch in os.listdir(release) if os.path.isfile(os.path.join(release, ch, f"{ch}.ipynb")))


def dumps(nb: dict) -> str:
    """A notebook as nbformat writes it (so as a Jupyter server saves it)."""
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


_language_info = None


def kernel_language_info() -> dict | None:
    """The language_info ipykernel reports for this Python (None without ipykernel)."""
    global _language_info
    if _language_info is None:
        try:
            from ipykernel.ipkernel import IPythonKernel
            _language_info = dict(IPythonKernel.language_info)
        except Exception:  # noqa: BLE001  (no ipykernel here: keep the release's stub)
            _language_info = {}
    return _language_info or None


def copy_notebook(src: str, dst: str, rel_src: str) -> None:
    with open(src, encoding="utf-8") as f:
        nb = json.load(f)
    meta = nb.setdefault("metadata", {})
    info = kernel_language_info()
    if info and meta.get("language_info", {}).get("name", info["name"]) == info["name"]:
        meta["language_info"] = info
    stamp = meta.setdefault("flashcourse", {})
    if isinstance(stamp, dict):
        stamp["copied_from"] = {"path": rel_src, "sha256": sha256(src)}
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    tmp = f"{dst}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(dumps(nb))
    os.replace(tmp, dst)


def copied_from(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            found = json.load(f)["metadata"]["flashcourse"]["copied_from"]
        return found if isinstance(found, dict) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def links(text: str) -> list[str]:
    """Relative link and image targets of Markdown (or HTML) text, without #fragment or ?query."""
    out = []
    for m in LINK.finditer(text):
        target = urllib.parse.unquote((m.group(1) or m.group(2)).split("#")[0].split("?")[0])
        if target and not urllib.parse.urlparse(target).scheme and not target.startswith("/"):
            out.append(target)
    return out


def markdown_of(path: str) -> str:
    if path.endswith(".ipynb"):
        with open(path, encoding="utf-8") as f:
            cells = json.load(f).get("cells", [])
        return "\n".join("".join(c.get("source", "")) for c in cells if c.get("cell_type") == "markdown")
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def linked_files(course: str, chs: list[str]) -> dict[str, str]:
    """{path in the working copy: file in the course} of every file the chapters link to, and the files those
    Markdown files link to. A link from WORK/D resolves as JupyterLab resolves it: from the server root, never
    above it."""
    out: dict[str, str] = {}
    todo = [(f"release/{ch}/{ch}.ipynb", ch) for ch in chs]  # (file in the course, its folder in the copy)
    seen = set()
    while todo:
        rel, work_dir = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        for target in links(markdown_of(os.path.join(course, rel))):
            src = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
            dst = posixpath.normpath(posixpath.join("/", work_dir, target)).lstrip("/")
            if src.startswith("../") or src.endswith(".ipynb") or not os.path.isfile(os.path.join(course, src)):
                continue
            out[dst] = src
            if src.endswith(".md"):
                todo.append((src, posixpath.dirname(dst)))
    return out


def same(a: str, b: str) -> bool:
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def update(course: str, work: str, out=sys.stdout) -> dict:
    """Bring the working copy up: missing chapters copied, the linked course files refreshed; returns
    {"copied": [...], "kept": [...], "changed": [...]} (chapters)."""
    course, work = os.path.abspath(course), os.path.abspath(work)
    chs = chapters(course)
    if not chs:
        raise SystemExit(f"{PREFIX} no release notebooks under {course}/release")
    fresh = not os.path.isdir(work)
    os.makedirs(work, exist_ok=True)
    shown = os.path.relpath(work) if not os.path.relpath(work).startswith("..") else work
    done = {"copied": [], "kept": [], "changed": []}
    for ch in chs:
        rel_src = f"release/{ch}/{ch}.ipynb"
        src, dst = os.path.join(course, rel_src), os.path.join(work, ch, f"{ch}.ipynb")
        if not os.path.lexists(dst):
            copy_notebook(src, dst, rel_src)
            done["copied"].append(ch)
            continue
        done["kept"].append(ch)
        record = copied_from(dst)
        if record and record.get("sha256") != sha256(src):
            done["changed"].append(ch)
            print(f"{PREFIX} {rel_src} has changed since your {shown}/{ch}/{ch}.ipynb was copied from it; yours is "
                  f"kept (for the new version, rename yours and start again)", file=out)
    for dst_rel, src_rel in sorted(linked_files(course, chs).items()):
        src, dst = os.path.join(course, src_rel), os.path.join(work, dst_rel)
        if not same(src, dst):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
    if fresh:
        print(f"{PREFIX} your working copy of the course is {shown}/ (the chapters' notebooks; yours from now on)",
              file=out)
    elif done["copied"]:
        print(f"{PREFIX} copied into {shown}/: {', '.join(done['copied'])}", file=out)
    return done


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    update(*argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
