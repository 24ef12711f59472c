"""The committed JupyterLab extension (%%cuda cells highlighted as C++) is built and matches its source.

Cheap checks only (no node, no browser): course/labextension/ is generated from labextension/ by the
command in course/labextension/README.md.
"""
import copy
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "labextension")
BUILT = os.path.join(ROOT, "course", "labextension", "@flashcourse", "cuda-cells")


def _load(path):
    with open(path) as f:
        return json.load(f)


def test_built_extension_has_an_existing_entry_point():
    pkg = _load(os.path.join(BUILT, "package.json"))
    assert pkg["name"] == "@flashcourse/cuda-cells"
    build = pkg["jupyterlab"]["_build"]
    assert build["extension"] == "./extension"
    entry = os.path.join(BUILT, build["load"])
    assert build["load"].startswith("static/remoteEntry.") and os.path.isfile(entry), build["load"]
    static = os.path.join(BUILT, "static")
    code = "".join(open(os.path.join(static, f)).read() for f in os.listdir(static) if f.endswith(".js"))
    assert "@flashcourse/cuda-cells:plugin" in code and "text/x-c++src" in code and "%%cuda" in code
    assert "@flashcourse/cuda-cells:validate-note" in code and "flashcourseMode" in code  # the Validate note


def test_built_extension_matches_the_source_package_json():
    source = _load(os.path.join(SOURCE, "package.json"))
    built = copy.deepcopy(_load(os.path.join(BUILT, "package.json")))
    assert built["version"] == source["version"]
    del built["jupyterlab"]["_build"]
    # The builder copies package.json and adds jupyterlab._build: anything else differing means a stale build.
    assert built == source, "course/labextension is stale: rebuild it (see course/labextension/README.md)"


def test_build_is_stamped_as_generated():
    readme = open(os.path.join(ROOT, "course", "labextension", "README.md")).read()
    assert "do not edit" in readme.lower() and "npm run build" in readme
