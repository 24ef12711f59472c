"""The chapters' text as a student reads it: quoted numbers match the data they come from, no
reference to material students do not have, every picture exists, glossary links resolve, and the
diagrams are up to date with the script that draws them.

A number quoted in a chapter is either derived in the text or measured; each measured one is listed
in MEASURED below with the data file it comes from (which names its GPU), and each number the text
says a cell computes is recomputed here (COMPUTED tests). Change a measurement and this fails until
the text follows.
"""
from __future__ import annotations

from prose_util import *  # noqa: F403  (the chapters' text, its data files and the helpers that read them)


def _student_text(chapter: str) -> str:
    """What a student reads of a chapter: the release notebook's cells (markdown and code)."""
    nb = json.loads(load(f"release/{chapter}/{chapter}.ipynb"))
    return "\n".join("".join(c["source"]) for c in nb["cells"])


def _reader_text(chapter: str) -> str:
    """The chapter's text as the book shows it: source/CH/CH.nb.md without the fences' info strings."""
    return "\n".join(ln for ln in text(chapter).splitlines() if not ln.startswith("```"))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_reference_to_material_students_do_not_have(chapter):
    for where, body in ((f"source/{chapter}/{chapter}.nb.md", _reader_text(chapter)),
                        (f"release/{chapter}/{chapter}.ipynb", _student_text(chapter))):
        hits = private_hits(body)
        assert not hits, f"{where} names material students do not have ({len(hits)}):\n  " + "\n  ".join(hits)


def test_glossary_mentions_nothing_private():
    body = load("course/GLOSSARY.md")
    for pat in PRIVATE:
        assert not re.search(pat, body, re.IGNORECASE), pat


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_image_exists_from_source_and_release(chapter):
    for ref in IMAGE.findall(text(chapter)):
        assert not re.match(r"[a-z]+://", ref), f"{chapter}: {ref} is not a file of the course"
        for folder in ("source", "release"):  # both are two levels down: one relative path serves both
            path = os.path.normpath(os.path.join(ROOT, folder, chapter, ref))
            assert os.path.isfile(path), f"{chapter}: {ref} does not exist (from {folder}/{chapter}/)"
            assert path.startswith(os.path.join(ROOT, "course") + os.sep), \
                f"{chapter}: {ref} is outside course/, which the student pack ships"
            assert os.path.getsize(path) < 60_000, f"{ref}: keep diagrams under 60 KB"


def test_diagrams_are_stamped_with_their_script():
    with open(os.path.join(DIAGRAMS, "make_diagrams.py"), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    stamp = open(os.path.join(DIAGRAMS, "STAMP"), encoding="utf-8").read().split("\n")
    assert stamp[0].endswith(digest), \
        "course/diagrams/make_diagrams.py changed: run `python course/diagrams/make_diagrams.py`"
    pngs = sorted(f for f in os.listdir(DIAGRAMS) if f.endswith(".png"))
    assert sorted(s for s in stamp[1:] if s) == pngs


def test_every_diagram_is_shown_somewhere():
    shown = {os.path.basename(ref) for ch in CHAPTERS for ref in IMAGE.findall(text(ch))}
    for png in os.listdir(DIAGRAMS):
        if png.endswith(".png"):
            assert png in shown, f"course/diagrams/{png} is not referenced by any chapter"


def test_diagrams_redraw_to_the_same_pictures(tmp_path):
    import importlib.util

    from PIL import Image

    spec = importlib.util.spec_from_file_location("make_diagrams", os.path.join(DIAGRAMS, "make_diagrams.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    drawn = mod.draw(str(tmp_path))
    assert sorted(os.path.basename(p) for p in drawn) == sorted(f for f in os.listdir(DIAGRAMS) if f.endswith(".png"))
    for p in drawn:
        committed = os.path.join(DIAGRAMS, os.path.basename(p))
        assert Image.open(p).size == Image.open(committed).size, f"{os.path.basename(p)}: redraw it"
        assert os.path.getsize(p) < 60_000


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_glossary_links_resolve_and_terms_are_linked(chapter):
    links = LINK.findall(text(chapter))
    assert links, f"{chapter} never links the glossary"
    known = anchors()
    for _, anchor in links:
        assert not anchor or anchor in known, f"{chapter}: GLOSSARY.md#{anchor} does not exist"
    linked = {a for _, a in links if a}
    missing = [t for t in REQUIRED.get(chapter, []) if t not in linked]
    assert not missing, f"{chapter}: link these terms to the glossary on first use: {missing}"


def test_student_pack_ships_the_glossary_and_the_diagrams():
    from autograder.instructor.student_pack import files_under

    shipped = set(files_under("course"))
    assert "course/GLOSSARY.md" in shipped
    for png in os.listdir(DIAGRAMS):
        if png.endswith(".png"):
            assert f"course/diagrams/{png}" in shipped, f"course/diagrams/{png}: commit it (the pack ships git files)"
