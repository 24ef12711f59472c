"""Jupyter server config for both views of the course (lab/serve.sh puts this directory on
JUPYTER_CONFIG_PATH).

Opening a notebook must not rewrite it. When a kernel connects, JupyterLab replaces the notebook's
`language_info` metadata with the kernel's own (ipykernel reports codemirror_mode, mimetype, ...
and the exact Python version, e.g. 3.11.7), which marks the notebook modified; the next save,
autosave included, writes that into the file, so merely opening release/CH/CH.ipynb in a checkout
left `git status` dirty, differently on every Python. On save, a notebook file that already exists
keeps its own `language_info` and `kernelspec` when the kernel's are of the same language/kernel.
(The student view serves the working copy, whose notebooks lab/workcopy.py writes with the kernel's own
language_info, so they do not even open modified; this hook covers the instructor view, on the course root,
and a copy made under another Python.)
"""
import json
import warnings


def keep_notebook_language(model, path, contents_manager, **kwargs):
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    try:
        with open(contents_manager._get_os_path(path), encoding="utf-8") as f:
            old = json.load(f).get("metadata", {})
    except (OSError, ValueError, AttributeError):
        return  # a new notebook, or not a file we can read: save what the front end sent
    new = model["content"].setdefault("metadata", {})
    for key in ("language_info", "kernelspec"):
        if isinstance(old.get(key), dict) and isinstance(new.get(key), dict) \
                and old[key].get("name") == new[key].get("name"):
            new[key] = old[key]


c = get_config()  # noqa: F821
# Jupyter applies this file once per application (the server, then JupyterLab); the second time
# the hook replaces itself, which traitlets reports as "Overriding existing pre_save_hook".
warnings.filterwarnings("ignore", "Overriding existing pre_save_hook", UserWarning)
c.ContentsManager.pre_save_hook = keep_notebook_language
