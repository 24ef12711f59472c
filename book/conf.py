"""Sphinx configuration of the self-study edition (`make book`, through book/build.py).

book/build.py copies this file next to prepared copies of the release notebooks (build/book-src/) and
runs Sphinx there; nothing is executed, and MathJax is served from the site itself (no network).
"""
project = "flashcourse"
author = "the flashcourse authors"
copyright = "the flashcourse authors"

extensions = ["myst_nb", "sphinx.ext.mathjax"]
root_doc = "index"
exclude_patterns = ["_build", ".doctrees", "**.ipynb_checkpoints"]

# The notebooks are shown as they are, with the recorded GPU outputs book/build.py put in the copies.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "html_image"]
myst_dmath_double_inline = True
myst_update_mathjax = False  # the MathJax configuration is ours, below

# MathJax 2.7 from the jupyter-server-mathjax package, copied under _static/mathjax by book/build.py.
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax2_config = {
    "tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]],
                "processEscapes": True, "ignoreClass": "tex2jax_ignore|highlight"},
    # HTML-CSS output everywhere (the combined configuration would pick native MathML in Chromium)
    "MMLorHTML": {"prefer": "HTML"},
    "HTML-CSS": {"availableFonts": [], "webFont": "STIX-Web", "imageFont": None,
                 "preferredFont": None},
    "menuSettings": {"zoom": "None"},
    "showMathMenu": False,
    "messageStyle": "none",
}

html_theme = "sphinx_book_theme"
html_title = "flashcourse · GPU kernels, self-study edition"
html_static_path = ["_static"]
html_css_files = ["flashcourse.css"]
html_favicon = "_static/favicon.svg"
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    "use_download_button": False,
    "use_repository_button": False,
    "use_fullscreen_button": False,
    "show_toc_level": 2,
    "home_page_in_toc": True,
    "navigation_with_keys": False,
}
# %%cuda cells are C++ under a Python notebook's lexer: Pygments then highlights them in its relaxed mode.
suppress_warnings = ["myst.header", "misc.highlighting_failure"]
