"""The course's Sphinx extension: a site that draws every figure and formula with no network.

Listed in ``_config.yml`` under ``sphinx.extra_extensions``. It

- renders plotly figures (``application/vnd.plotly.v1+json`` outputs, which myst-nb alone would
  skip) as a ``<div>`` and a drawing script, through a myst-nb mime renderer plugin
  (:class:`PlotlyMimeRenderer`, registered as a ``myst_nb.mime_renderers`` entry point);
- serves plotly.js from the site itself, as ``_static/plotly.min.js``, and loads it once, in the
  ``<head>`` of the pages that hold a plotly figure and only those (the figures' own scripts,
  written by :mod:`course_utils.plots`, then find ``window.Plotly``);
- serves MathJax from the site itself (MathJax 3, bundled with ``sphinx-mathjax-offline``);
- adds the course's small stylesheet (``_static/course.css``);
- loads each script once per page (sphinx-thebe's configuration is registered twice);
- shows the Colab badge of each lesson from ``_static/colab-badge.svg``: the notebooks keep the
  badge's usual address, which Colab and GitHub display, while the site needs nothing remote.

It suppresses no warning: a figure output that the book cannot render still fails the strict build.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from docutils import nodes

from .plots import PLOTLY_MIME, figure_html

COLAB_BADGE_URL = "https://colab.research.google.com/assets/colab-badge.svg"
STATIC_DIR = Path(__file__).parent / "static"
PLOTLY_JS = "plotly.min.js"
MATHJAX_DIR = "mathjax"
# MathJax 3: TeX in, SVG out (glyphs are drawn as paths, so no web fonts are fetched). Kept:
# the combined component, the TeX extensions it may autoload, the menu and a11y components.
MATHJAX_COMPONENT = "tex-svg.js"
MATHJAX_SKIP = ("sre", "*chtml*", "mml-*", "node-main.js", "tex-mml-svg.js", "tex-svg-full.js")


def plotly_js_source() -> Path:
    """The plotly.min.js shipped inside the installed ``plotly`` package."""
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / PLOTLY_JS
    if not path.is_file():
        raise FileNotFoundError(f"expected plotly.js at {path}; is the plotly package installed completely?")
    return path


def mathjax_source() -> Path:
    """The MathJax 3 tree shipped inside the installed ``sphinx-mathjax-offline`` package."""
    import importlib

    package = importlib.import_module("sphinx-mathjax-offline")  # the distribution's odd but real name
    path = Path(package.__file__).parent / "static" / "mathjax"
    if not (path / MATHJAX_COMPONENT).is_file():
        raise FileNotFoundError(f"expected {MATHJAX_COMPONENT} in {path}; is sphinx-mathjax-offline installed completely?")
    return path


class PlotlyMimeRenderer:
    """myst-nb plugin: draw ``application/vnd.plotly.v1+json`` outputs on HTML pages.

    Preferred over the figure's ``text/html`` twin (priority 25 < 30), whose script may fetch
    plotly.js from a CDN for Colab; the site's figures use the site's own plotly.js only.
    """

    mime_priority_overrides = [(builder, PLOTLY_MIME, 25) for builder in ("html", "dirhtml", "singlehtml")]

    @staticmethod
    def handle_mime(renderer, data, inline: bool):
        if data.mime_type != PLOTLY_MIME or inline:
            return None
        div_id = f"figure-{data.cell_index}-{data.output_index}"
        html = figure_html(data.content, div_id, fetch_plotly_js=False)
        return [nodes.raw(text=html, format="html", classes=["output", "text_html", "plotly-figure"])]


def _configure(app, config) -> None:
    config.mathjax_path = f"{MATHJAX_DIR}/{MATHJAX_COMPONENT}"
    config.html_static_path = [*config.html_static_path, str(STATIC_DIR)]


def _add_plotly_where_needed(app, pagename, templatename, context, doctree) -> None:
    if "plotly-graph-div" in context.get("body", ""):
        # Called during html-page-context, add_js_file adds the script to this page only.
        app.add_js_file(PLOTLY_JS, priority=200)


def _load_each_script_once(app, pagename, templatename, context, doctree) -> None:
    # sphinx-thebe registers its inline configuration twice under jupyter-book, and the second
    # `const THEBE_JS_URL = ...` is a JavaScript error on every page.
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        attributes = tuple(sorted((k, str(v)) for k, v in getattr(script, "attributes", {}).items()))
        key = (getattr(script, "filename", None) or "", attributes)  # whatever its priority
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique


def _colab_only_where_a_notebook_exists(app, pagename, templatename, context, doctree) -> None:
    """Drop the theme's Colab launch button from pages without a committed ``.ipynb`` twin.

    The theme offers Colab on every executed page; for the book's own pages (intro, cheat sheet,
    status) it would open their ``.md`` source, which Colab cannot open. Runs after the theme
    (priority 501) has added its buttons.
    """
    source = Path(app.env.doc2path(pagename)) if pagename in app.env.all_docs else None
    if source is not None and source.with_suffix(".ipynb").is_file():
        return
    groups = context.get("header_buttons") or []
    for group in groups:
        if group.get("label") == "launch-buttons":
            group["buttons"] = [b for b in group.get("buttons", []) if "colab" not in str(b.get("url", ""))]
    context["header_buttons"] = [g for g in groups if g.get("label") != "launch-buttons" or g.get("buttons")]


def _serve_colab_badge_locally(app, doctree, docname) -> None:
    depth = docname.count("/")
    for image in doctree.findall(nodes.image):
        if image.get("uri") == COLAB_BADGE_URL:
            image["uri"] = "../" * depth + "_static/colab-badge.svg"


def _copy_assets(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    shutil.copy2(plotly_js_source(), static / PLOTLY_JS)
    shutil.copytree(
        mathjax_source(), static / MATHJAX_DIR, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*MATHJAX_SKIP)
    )


# Pages computed from files Sphinx does not watch (the introduction reads the lesson files, the
# status page the installed versions): read again at every build, and so executed again (their
# front matter sets myst-nb's execution_mode to "force", so the execution cache is not used).
ALWAYS_REREAD = ("book/intro", "book/status")


def _reread_computed_pages(app, env, added, changed, removed) -> list[str]:
    return [docname for docname in ALWAYS_REREAD if docname in env.found_docs]


def setup(app):
    app.add_css_file("course.css")
    app.connect("env-get-outdated", _reread_computed_pages)
    app.connect("config-inited", _configure)
    app.connect("html-page-context", _add_plotly_where_needed)
    app.connect("html-page-context", _load_each_script_once, priority=900)
    app.connect("html-page-context", _colab_only_where_a_notebook_exists, priority=600)
    app.connect("doctree-resolved", _serve_colab_badge_locally)
    app.connect("build-finished", _copy_assets)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
