"""The book's "Run it yourself" box (book/build.py): where readers get the course from."""
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "book"))
import build  # noqa: E402


def _repo(path, *remotes):
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for name, url in remotes:
        subprocess.run(["git", "-C", str(path), "remote", "add", name, url], check=True)
    return str(path)


@pytest.mark.parametrize("remotes, want", [
    ([("origin", "https://github.com/example/flashcourse.git")], "https://github.com/example/flashcourse.git"),
    ([("origin", "https://someone:ghp_secret@github.com/example/flashcourse.git")],
     "https://github.com/example/flashcourse.git"),  # no credentials in a published page
    ([("origin", "git@github.com:example/flashcourse.git")], "https://github.com/example/flashcourse.git"),
    ([("origin", "ssh://git@gitlab.example.org/teach/flashcourse.git")],
     "https://gitlab.example.org/teach/flashcourse.git"),
    ([("fork", "https://github.com/me/flashcourse"), ("origin", "https://github.com/example/flashcourse")],
     "https://github.com/example/flashcourse"),  # origin first
    ([("origin", "/srv/git/flashcourse.git")], None),  # a local path is no address for a reader
    ([], None),
])
def test_the_box_reads_the_repository_url_from_git(tmp_path, remotes, want):
    assert build.repo_url(_repo(tmp_path / "r", *remotes), environ={}) == want


def test_the_variable_wins_and_is_documented(tmp_path):
    root = _repo(tmp_path / "r", ("origin", "https://github.com/example/flashcourse.git"))
    assert build.repo_url(root, environ={build.REPO_URL_VAR: "https://example.org/c.git"}) == "https://example.org/c.git"
    with open(os.path.join(build.ROOT, "docs", "students.md")) as f:
        assert build.REPO_URL_VAR in f.read()


def test_without_an_address_the_box_says_how_to_get_the_course(monkeypatch):
    monkeypatch.setattr(build, "repo_url", lambda *a, **k: None)
    box = build.run_box("ch01_softmax", {})
    assert "<URL" not in box and "git clone" not in box
    assert "does not know the course repository's address" in box and build.REPO_URL_VAR in box
    monkeypatch.setattr(build, "repo_url", lambda *a, **k: "https://github.com/example/flashcourse.git")
    box = build.run_box("ch01_softmax", {})
    assert "git clone https://github.com/example/flashcourse.git flashcourse" in box
    assert "git clone --depth 1 https://github.com/example/flashcourse.git /content/flashcourse" in box
    assert "does not know" not in box
