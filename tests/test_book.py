"""The self-study edition (`make book`, book/build.py) in a real browser.

Builds the book into build/book/ (or reuses it when it is up to date with its inputs), serves it on
127.0.0.1 and opens every page in Debian's headless chromium through Playwright, launched as
tests/test_browser.py does, with every outside host blocked (resolver rules, and a route that refuses
any request not to the local server). Checks: every page loads with no failed request; the math is
typeset by the site's own MathJax (every math element holds MathJax output, none an error); every
image decodes (naturalWidth > 0) and has alt text; every link within the site leads to an existing page or file, and
every #fragment to an element there; the pages that crawling from index.html reaches are all the
pages built. Also: each chapter shows its recorded GPU examples labelled with the GPU and date, its
"Run it yourself" box, and exercise cells without solutions.

Screenshots of each page go to $FLASHCOURSE_ARTIFACTS (default: a pytest temporary directory).
"""
import functools
import html
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import pytest
from test_browser import CHROMIUM, CHROMIUM_ARGS, _ensure_chromium, _ensure_playwright
from prose_util import private_hits  # what students and readers never meet (instructor files, runs)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOOK = os.path.join(ROOT, "build", "book")
BUILD = [sys.executable, os.path.join(ROOT, "book", "build.py")]
CHAPTERS = sorted(d for d in os.listdir(os.path.join(ROOT, "release")) if d.startswith("ch"))  # every chapter

# chapters whose example cells' GPU outputs course/figures/ does not hold yet (benchmarks/example_figures.py
# records them on a GPU); the book must then show no measurement for them
NO_RECORDED_EXAMPLE: set[str] = set()  # chapters whose GPU outputs are not recorded yet (the book shows none)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def book():
    """build/book/, built now unless it is up to date with its inputs (book/build.py --check)."""
    if subprocess.run([*BUILD, "--check"], cwd=ROOT).returncode != 0:
        r = subprocess.run(BUILD, cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"book/build.py failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    with open(os.path.join(BOOK, ".flashcourse-book.json")) as f:
        return json.load(f)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site(book):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=BOOK))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    path = os.environ.get("FLASHCOURSE_ARTIFACTS") or str(tmp_path_factory.mktemp("book-artifacts"))
    path = os.path.join(path, "book") if os.environ.get("FLASHCOURSE_ARTIFACTS") else path
    os.makedirs(path, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser(site):
    _ensure_chromium()
    _ensure_playwright()
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, chromium_sandbox=False, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900})
        context.set_default_timeout(30_000)
        outside: list[str] = []

        def route(r):
            if r.request.url.startswith(site) or r.request.url.startswith(("data:", "blob:", "about:")):
                r.continue_()
            else:
                outside.append(r.request.url)
                r.abort()
        context.route("**/*", route)
        context.outside = outside
        try:
            yield context
        finally:
            context.close()


TYPESET = """async () => {
  // MathJax 2: wait until its queue has run (startup and the page's typesetting).
  await new Promise(done => MathJax.Hub.Queue(() => done()));
  const math = [...document.querySelectorAll('.math.notranslate')];  // Sphinx's; MathJax's output has .math spans too
  const bare = math.filter(e => !e.querySelector('.MathJax, .MathJax_Display, .MathJax_SVG, .MathJax_CHTML'))
                   .map(e => e.textContent.slice(0, 80));
  const errors = [...document.querySelectorAll('.merror, .noError, .MathJax_Error, #MathJax_Message')]
                   .filter(e => e.id !== 'MathJax_Message' || (e.textContent.trim() && e.style.display !== 'none'))
                   .map(e => e.textContent.slice(0, 80));
  return {count: math.length, rendered: document.querySelectorAll('.MathJax, .MathJax_Display').length,
          bare, errors, local: [...document.scripts].filter(s => /MathJax\\.js/.test(s.src)).map(s => s.src)};
}"""

IMAGES = """async () => Promise.all([...document.images].map(async img => {
  img.loading = 'eager';
  try { await img.decode(); } catch (e) {}
  return {src: img.getAttribute('src'), width: img.naturalWidth, alt: img.alt};
}))"""

LINKS = """() => ({
  links: [...document.querySelectorAll('a[href]')].map(a => a.href),
  ids: [...document.querySelectorAll('[id]')].map(e => e.id),
})"""


def _page_url(site: str, rel: str) -> str:
    return urllib.parse.urljoin(site, rel)


def test_book_in_browser(book, site, browser, artifacts):
    t0 = time.time()
    built = sorted(os.path.relpath(os.path.join(d, f), BOOK) for d, _, fs in os.walk(BOOK) for f in fs
                   if f.endswith(".html") and not os.path.relpath(d, BOOK).startswith("_static"))
    assert {f"{ch}.html" for ch in CHAPTERS} | {"index.html", "glossary.html"} <= set(built), built

    page = browser.new_page()
    failed: list[str] = []
    # MathJax 2's HTML-CSS output declares a font `MathJax_Blank` at url('about:blank') on purpose, to time
    # font loading; that one request fails by design and is not a missing file.
    page.on("requestfailed", lambda r: r.url == "about:blank" and r.resource_type == "font"
            or failed.append(f"{r.url} ({r.failure})"))
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.url} (HTTP {r.status})"))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))

    ids: dict[str, set] = {}  # page URL (no fragment) -> element ids
    links: dict[str, set] = {}  # link target -> pages that link there
    math_pages = {}
    for rel in built:
        url = _page_url(site, rel)
        failed.clear()
        errors.clear()
        page.goto(url, wait_until="load")
        assert not failed, f"{rel}: failed requests: {failed}"
        if page.evaluate("() => !!document.querySelector('.math.notranslate')"):
            page.wait_for_function("() => window.MathJax && window.MathJax.Hub", timeout=30_000)
            math = page.evaluate(TYPESET)
            assert math["local"] and all(s.startswith(site) for s in math["local"]), f"{rel}: MathJax from {math}"
            assert not math["bare"], f"{rel}: {len(math['bare'])} math elements not typeset: {math['bare'][:5]}"
            assert not math["errors"], f"{rel}: MathJax errors: {math['errors'][:5]}"
            assert math["rendered"] >= math["count"] > 0
            math_pages[rel] = math["count"]
            page.wait_for_load_state("networkidle")  # fonts asked for by the typeset math
        images = page.evaluate(IMAGES)
        broken = [i for i in images if i["width"] <= 0]
        assert not broken, f"{rel}: images that do not decode: {broken}"
        assert all(i["alt"].strip() for i in images), f"{rel}: images without alt text: {images}"
        found = page.evaluate(LINKS)
        ids[url] = set(found["ids"])
        for href in found["links"]:
            if href.startswith(site):
                links.setdefault(href, set()).add(rel)
        assert not failed, f"{rel}: failed requests: {failed}"
        assert not errors, f"{rel}: JavaScript errors: {errors}"
        if rel in {f"{ch}.html" for ch in CHAPTERS} | {"index.html", "glossary.html"}:
            page.screenshot(path=os.path.join(artifacts, rel.replace("/", "_") + ".png"))

    for ch in CHAPTERS:  # the chapters hold math
        assert math_pages.get(f"{ch}.html", 0) > 0, f"{ch}: no typeset math ({math_pages})"

    # every internal link: the page or file exists, and a #fragment names an element of that page
    broken = []
    for href, where in sorted(links.items()):
        target, _, fragment = href.partition("#")
        if target not in ids:
            resp = page.request.get(target)
            if not resp.ok:
                broken.append(f"{href} (HTTP {resp.status}) from {sorted(where)[:3]}")
                continue
            if "text/html" in (resp.headers.get("content-type") or ""):
                failed.clear()
                page.goto(target, wait_until="load")
                ids[target] = set(page.evaluate(LINKS)["ids"])
            else:
                ids[target] = None  # a file: no fragments to check
        fragment = urllib.parse.unquote(fragment)
        if fragment and ids[target] is not None and fragment not in ids[target]:
            broken.append(f"{href} (no element #{fragment}) from {sorted(where)[:3]}")
    assert not broken, "broken internal links:\n" + "\n".join(broken)

    # crawling from the front page reaches every chapter and the glossary
    seen, todo = set(), [_page_url(site, "index.html")]
    graph = {}
    for href, where in links.items():
        for rel in where:
            graph.setdefault(_page_url(site, rel), set()).add(href.partition("#")[0])
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        todo += [u for u in graph.get(url, ()) if u.endswith(".html")]
    for rel in [f"{ch}.html" for ch in CHAPTERS] + ["glossary.html"]:
        assert _page_url(site, rel) in seen, f"{rel} is not reachable from index.html"
    assert not browser.outside, f"requests to outside hosts: {sorted(set(browser.outside))[:10]}"
    print(f"\nbook: {len(built)} pages, {len(links)} internal links, math on {len(math_pages)} pages, "
          f"{time.time() - t0:.1f} s in the browser; screenshots in {artifacts}")


def _text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_book_content(book):
    """What the build adds: the labelled GPU examples, the run-it-yourself box, tasks without solutions."""
    with open(os.path.join(ROOT, "course", "figures", "figures.json")) as f:
        examples = json.load(f)["examples"]
    for ch in CHAPTERS:
        with open(os.path.join(BOOK, f"{ch}.html")) as f:
            html = _text(f.read())
        assert "Run it yourself" in html and "make lab" in html and "google.colab" in html, ch
        shown = book["chapters"][ch]["examples"]
        if ch in NO_RECORDED_EXAMPLE:  # its GPU outputs are not recorded yet: the book shows none
            assert not shown, ch
        else:
            assert shown, f"{ch}: no recorded GPU example shown"
        for name in shown:
            e = examples[name]
            assert f"measured on {e['device']} on {e['date']} with the reference solutions" in html, (ch, name)
            if e.get("printed"):
                assert e["printed"].splitlines()[0].strip()[:40] in html, (ch, name)
        assert book["chapters"][ch]["tasks"] > 0 and "Exercise: your code goes in this cell" in html, ch
        assert "YOUR CODE HERE" in html, f"{ch}: exercise stubs missing"
        assert "BEGIN SOLUTION" not in html and "BEGIN HIDDEN TESTS" not in html, ch
        hits = private_hits(html)
        assert not hits, f"{ch}.html names material readers do not have:\n  " + "\n  ".join(hits)
    # every recorded example with a notebook cell is shown somewhere
    assert {n for e in book["chapters"].values() for n in e["examples"]} == set(examples)
