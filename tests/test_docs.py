"""The documentation as a map: every relative link of README.md, BENCHMARKS.md and docs/ resolves to a file of the
repository (and a #fragment to a heading of a Markdown target), and the pages carry no work log."""
from __future__ import annotations

import glob
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = sorted(["README.md", "BENCHMARKS.md"] + [os.path.relpath(p, ROOT) for p in
                                                 glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True)])
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1", re.S | re.M)


def _text(rel: str) -> str:
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def links(rel: str) -> list[str]:
    """The link targets of a Markdown page, outside fenced code blocks."""
    return LINK.findall(FENCE.sub("", _text(rel)))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(rel: str) -> set[str]:
    return {slug(m) for m in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", _text(rel)), re.M)}


def test_the_pages_exist():
    for page in ("docs/README.md", "docs/students.md", "docs/trust-model.md", "docs/how-grading-works.md",
                 "docs/adding-an-exercise.md", "docs/benchmarks.md", "docs/instructors/release.md",
                 "docs/instructors/grade-a-class.md", "docs/instructors/feedback.md", "docs/instructors/cluster.md",
                 "docs/instructors/gpu-calibration.md"):
        assert page in PAGES, f"{page} is missing"


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_resolves(page):
    bad = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...: not ours to check
            continue
        path, _, fragment = target.partition("#")
        resolved = os.path.normpath(os.path.join(ROOT, os.path.dirname(page), path)) if path else \
            os.path.join(ROOT, page)
        if not resolved.startswith(ROOT + os.sep) or not os.path.exists(resolved):
            bad.append(f"{target}: no such file")
        elif fragment and resolved.endswith(".md") and fragment not in anchors(os.path.relpath(resolved, ROOT)):
            bad.append(f"{target}: no heading #{fragment} in {os.path.relpath(resolved, ROOT)}")
    assert not bad, f"{page}: " + "; ".join(bad)


def test_every_docs_page_is_in_the_index():
    listed = {os.path.normpath(os.path.join("docs", t.partition("#")[0])) for t in links("docs/README.md")}
    missing = [p for p in PAGES if p.startswith("docs/") and p != "docs/README.md" and p not in listed]
    assert not missing, f"docs/README.md does not list {missing}"


def test_the_readme_is_a_map_not_a_chronicle():
    text = _text("README.md")
    assert len(text.splitlines()) <= 160, "README.md should stay about 150 lines: move detail into docs/"
    for pattern, what in ((r"\bsessions?\b", "a work period"), (r"\b20\d\d-\d\d-\d\d\b", "a date"),
                          (r"gpu_20\d\d|_s\d+\b", "a run folder")):
        hit = re.search(pattern, text)
        assert hit is None, f"README.md names {what} ({hit.group(0)!r}): say what is true now, not when"
    assert "make test" in text and "make test-slurm" in text  # the commands CI runs (.ci/run)


@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("docs/")])
def test_no_numbered_work_periods(page):
    hit = re.search(r"\b(first|second|third|\w+th) session\b", _text(page), re.I)
    assert hit is None, f"{page} cites a work period ({hit.group(0)!r}): cite the data file instead"
