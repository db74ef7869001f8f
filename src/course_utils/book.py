"""The course's Sphinx extension: a site that draws every figure and formula with no network.

Listed in ``_config.yml`` under ``sphinx.extra_extensions``. It

- renders plotly figures (``application/vnd.plotly.v1+json`` outputs, which myst-nb alone would
  skip) as a ``<div>`` and a drawing script, through a myst-nb mime renderer plugin
  (:class:`PlotlyMimeRenderer`, registered as a ``myst_nb.mime_renderers`` entry point);
- serves a partial plotly.js bundle from the site itself (``plotly.js-cartesian-dist-min``: the
  trace types the course draws, 1.5 MB instead of the full 4.8 MB), fetched from the npm registry by
  ``make install`` (:func:`fetch_plotly_bundle`), on the pages that hold a plotly figure and only
  those, with ``_static/course-figures.js``, which draws each figure fitted to its width
  (:func:`course_utils.rendering.site_figure_html`);
- loads the page's heavy scripts after its first paint, so that a slow phone shows the text first:
  the theme's ``fontawesome.js`` (1.5 MB; a template, ``templates/static/webpack-macros.html``,
  wraps the theme's own), MathJax, plotly.js and the figures' script, in that order, are written as
  placeholders that ``_static/course-after-paint.js`` loads once the page has painted
  (:func:`_after_the_first_paint`, :func:`_mathjax_after_the_first_paint`);
- serves MathJax from the site itself (MathJax 3, bundled with ``sphinx-mathjax-offline``),
  loaded on the pages that hold a formula and only those;
- adds the course's small stylesheet (``_static/course.css``), and ``_static/course-controls.js``,
  which makes the theme's sidebar toggles open the site navigation and the page's contents on a
  phone or a tablet and names the colour-mode button by the mode it shows (each fix a no-op once
  the theme does it itself);
- names each folded cell's ``<summary>`` by the label it shows ("Show code cell source"), not
  myst-nb's "Toggle hidden content" (:func:`_name_folded_blocks_by_their_label`);
- loads each script once per page (sphinx-thebe's configuration is registered twice);
- offers each lesson's committed ``.ipynb``, outputs included, in the theme's download menu, next
  to its ``.md`` source, and the whole book's PDF once ``make pdf`` has written it;
- shows the Colab badge of each lesson from ``_static/colab-badge.svg``: the notebooks keep the
  badge's usual address, which Colab and GitHub display, while the site needs nothing remote.

It also makes ``jupyter-book build .`` with no make build the same book as ``make book``:

- the lessons' kernels run offline and reproducibly, with the variables the Makefile exports
  (:data:`LESSON_ENVIRONMENT`), over an encrypted connection where the kernel supports one (ipykernel
  otherwise warns once per kernel that it runs over TCP without encryption);
- the execution cache is dropped, and every page read again, when the installed ``course_utils``
  changes (jupyter-cache keys a lesson on its own code only): :func:`package_source_hash`;
- a missing plotly.js bundle stops the build at once, saying how to fetch it;
- no build, strict or not, first or repeated, publishes a lesson whose execution raised: the
  build fails naming the lesson and the cell (:func:`failed_cells`), and a failed lesson is read
  (executed) again at every build until it runs.

It suppresses no warning: a figure output that the book cannot render still fails the strict build.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tarfile
import urllib.request
import zlib
from pathlib import Path

from docutils import nodes
from sphinx.errors import SphinxError

from .rendering import PLOTLY_MIME, site_figure_html

COLAB_BADGE_URL = "https://colab.research.google.com/assets/colab-badge.svg"
STATIC_DIR = Path(__file__).parent / "static"
TEMPLATES_DIR = Path(__file__).parent / "templates"
PLOTLY_JS = "plotly.min.js"
# The partial plotly.js bundle of the site: the npm package of plotly.js's "cartesian" bundle, at the
# plotly.js version of the installed plotly package (tests/test_book.py checks they agree), checked
# against the registry's sha512 integrity. Its trace types include every type the lessons draw.
PLOTLY_BUNDLE_PACKAGE = "plotly.js-cartesian-dist-min"
PLOTLY_BUNDLE_VERSION = "4.1.1"
PLOTLY_BUNDLE_FILE = "plotly-cartesian.min.js"
PLOTLY_BUNDLE_INTEGRITY = "sha512-o8GrFeusncwBIxbBynRJpY4pkgVB6caM+JLpwrLYbbsO7dZ8FJ+SVN2Fr+L7kiG/Z6w4P5O0Jus/Qr5EefHVeg=="
PLOTLY_BUNDLE_TRACES = (
    "bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour", "image", "pie",
    "scatter", "scatterternary", "violin",
)
FIGURES_JS = "course-figures.js"
SEARCH_JS = "course-search.js"
CONTROLS_JS = "course-controls.js"
AFTER_PAINT_JS = "course-after-paint.js"
AFTER_PAINT_TYPE = "text/x-course-after-paint"  # a data block: neither fetched nor run until course-after-paint.js
NPM_REGISTRY = "https://registry.npmjs.org"
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


def plotly_bundle_path() -> Path:
    """Where :func:`fetch_plotly_bundle` keeps the partial plotly.js bundle: inside the virtual environment."""
    return Path(sys.prefix) / "share" / "course_utils" / f"{PLOTLY_BUNDLE_PACKAGE}-{PLOTLY_BUNDLE_VERSION}.js"


def _check_integrity(tarball: bytes, integrity: str, package: str) -> None:
    algorithm, _, expected = integrity.partition("-")
    actual = base64.b64encode(hashlib.new(algorithm, tarball).digest()).decode()
    if actual != expected:
        raise ValueError(f"the npm tarball of {package} has {algorithm} "
                         f"{actual}, expected {expected}: a corrupted or substituted download")


def _members(tarball: bytes, names, package: str) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        found = {}
        for name in names:
            try:
                member = archive.extractfile(name)
            except KeyError:
                member = None
            if member is None:
                raise ValueError(f"expected {name} in the npm tarball of {package}")
            found[name] = member.read()
        return found


def bundle_from_tarball(tarball: bytes) -> bytes:
    """The minified bundle inside the npm tarball of the bundle's package, after checking its integrity."""
    _check_integrity(tarball, PLOTLY_BUNDLE_INTEGRITY, PLOTLY_BUNDLE_PACKAGE)
    name = f"package/{PLOTLY_BUNDLE_FILE}"
    return _members(tarball, [name], PLOTLY_BUNDLE_PACKAGE)[name]


def _npm_tarball(package: str, version: str, registry: str | None) -> bytes:
    registry = (registry or os.environ.get("npm_config_registry") or NPM_REGISTRY).rstrip("/")
    url = f"{registry}/{package}/-/{package.rpartition('/')[2]}-{version}.tgz"
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.read()


def _write(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".part").write_bytes(content)
    path.with_suffix(".part").replace(path)


def fetch_plotly_bundle(registry: str | None = None) -> Path:
    """Download the partial plotly.js bundle from the npm registry once (``make install`` does it)."""
    path = plotly_bundle_path()
    if not path.is_file():
        _write(path, bundle_from_tarball(_npm_tarball(PLOTLY_BUNDLE_PACKAGE, PLOTLY_BUNDLE_VERSION, registry)))
    return path


def plotly_bundle_source() -> Path:
    """The partial plotly.js bundle fetched by ``make install``; a clear error when it is missing."""
    path = plotly_bundle_path()
    if not path.is_file():
        raise FileNotFoundError(
            f"expected the partial plotly.js bundle at {path}: run `make install` "
            f"(or `{sys.executable} -m course_utils.book fetch-assets`) with access to the npm registry"
        )
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
        # unique across the book, not only the page: the single-page build (make pdf) holds every lesson
        source = getattr(renderer, "source", None) if renderer is not None else None
        prefix = f"{Path(source).stem}-" if source else ""
        div_id = f"figure-{prefix}{data.cell_index}-{data.output_index}"
        html = site_figure_html(data.content, div_id)
        return [nodes.raw(text=html, format="html", classes=["output", "text_html", "plotly-figure"])]


def _configure(app, config) -> None:
    config.mathjax_path = f"{MATHJAX_DIR}/{MATHJAX_COMPONENT}"
    config.html_static_path = [*config.html_static_path, str(STATIC_DIR)]
    config.templates_path = [*config.templates_path, str(TEMPLATES_DIR)]


def _after_the_first_paint(app, context, name: str, priority: int) -> None:
    """Add ``_static/<name>`` to this page as a placeholder that course-after-paint.js turns into a
    script once the page has painted; placeholders load in the order of their ``priority``."""
    uri = context["pathto"](f"_static/{name}", 1)
    source = STATIC_DIR / name
    if source.is_file():  # a new file, a new address: a browser's cached copy is not reused (as Sphinx's ?v=)
        uri += f"?v={zlib.crc32(source.read_bytes()) & 0xFFFFFFFF:08x}"
    # Called during html-page-context, add_js_file adds the script to this page only.
    app.add_js_file(None, priority=priority, type=AFTER_PAINT_TYPE, **{"data-src": uri})


def _add_plotly_where_needed(app, pagename, templatename, context, doctree) -> None:
    if "course-figure-spec" in context.get("body", ""):
        # after MathJax (priority 500: the formulas are in the text being read), plotly.js, then the figures
        _after_the_first_paint(app, context, PLOTLY_JS, priority=600)
        _after_the_first_paint(app, context, FIGURES_JS, priority=601)


def _mathjax_only_where_there_is_math(app, pagename, templatename, context, doctree) -> None:
    # myst-nb sets Sphinx's html_assets_policy to "always", which adds MathJax to every page.
    if doctree is None or next(doctree.findall(nodes.math), None) or next(doctree.findall(nodes.math_block), None):
        return
    scripts = context.get("script_files")
    if scripts:
        scripts[:] = [s for s in scripts if MATHJAX_DIR not in str(getattr(s, "filename", s) or "")
                      and "MathJax" not in str(getattr(s, "attributes", {}).get("body", ""))]


def _mathjax_after_the_first_paint(app, pagename, templatename, context, doctree) -> None:
    # MathJax (2 MB) deferred ran before the first paint as plotly.js did: it waits for the paint too
    from sphinx.builders.html._assets import _JavaScript

    scripts = context.get("script_files") or []
    for i, script in enumerate(scripts):
        name = str(getattr(script, "filename", "") or "")  # "_static/mathjax/..." (Sphinx 7.4) or "mathjax/..."
        if name.endswith(f"{MATHJAX_DIR}/{MATHJAX_COMPONENT}"):
            uri = context["pathto"](name if name.startswith("_static/") else f"_static/{name}", 1)
            scripts[i] = _JavaScript(None, priority=script.priority, type=AFTER_PAINT_TYPE, **{"data-src": uri})


def glossary_terms(glossary_markdown: str) -> list[str]:
    """The terms of a MyST ``{glossary}`` block: its unindented lines (definitions are indented)."""
    block = glossary_markdown.split("{glossary}", 1)[-1].split("```", 1)[0]
    return [line.strip() for line in block.splitlines() if line.strip() and not line[0].isspace() and not line.startswith(":")]


def teaching_lessons(terms: list[str], lessons: dict[str, str]) -> dict[str, str]:
    """For each term (lower-cased), the docname of the lesson that uses it most (ties: the earlier lesson).

    ``lessons`` maps a docname (``lessons/04_self_attention``) to the lesson's text. Terms no
    lesson uses are left out.
    """
    teaches = {}
    for term in terms:
        pattern = re.compile(rf"(?<!\w){re.escape(term)}(?!\w)", re.IGNORECASE)
        counts = {docname: len(pattern.findall(text)) for docname, text in sorted(lessons.items())}
        best = max(counts, key=lambda docname: (counts[docname], -sorted(counts).index(docname)), default=None)
        if best is not None and counts[best]:
            teaches[term.lower()] = best
    return teaches


def _tune_search(app, pagename, templatename, context, doctree) -> None:
    if pagename != "search":
        return
    source = Path(app.srcdir)
    glossary = source / "book" / "glossary.md"
    terms = glossary_terms(glossary.read_text(encoding="utf-8")) if glossary.is_file() else []
    lessons = {f"lessons/{p.stem}": p.read_text(encoding="utf-8") for p in sorted(source.glob("lessons/[0-9][0-9]_*.md"))}
    teaches = json.dumps(teaching_lessons(terms, lessons), sort_keys=True)
    app.add_js_file(None, body=f"window.COURSE_TEACHES = {teaches};", priority=200)
    app.add_js_file(SEARCH_JS, priority=201)


def _list_citations_as_list_items(app, pagename, templatename, context, doctree) -> None:
    # docutils writes a bibliography as role="list" holding role="doc-biblioentry" entries, a
    # deprecated role that screen readers do not take for list items (axe: aria-required-children).
    if "doc-biblioentry" in context.get("body", ""):
        context["body"] = context["body"].replace('role="doc-biblioentry"', 'role="listitem"')


FOLDED_BLOCK_SUMMARY = '<summary aria-label="Toggle hidden content">'


def _name_folded_blocks_by_their_label(app, pagename, templatename, context, doctree) -> None:
    # myst-nb names every folded cell (hide-input, hide-output, hide-cell) "Toggle hidden content",
    # whose visible label is "Show code cell source": a control's accessible name must contain the
    # label it shows (WCAG 2.5.3; axe: label-content-name-mismatch). Without the aria-label the name
    # is the label shown, "Show ..." or "Hide ...", and <details> tells whether it is open.
    if FOLDED_BLOCK_SUMMARY in context.get("body", ""):
        context["body"] = context["body"].replace(FOLDED_BLOCK_SUMMARY, "<summary>")


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


def notebook_twin(app, pagename: str) -> Path | None:
    """The committed ``.ipynb`` paired with the page's ``.md`` source (the lessons), else None."""
    source = Path(app.env.doc2path(pagename)) if pagename in app.env.all_docs else None
    if source is None or source.suffix != ".md" or not source.with_suffix(".ipynb").is_file():
        return None
    return source.with_suffix(".ipynb")


def _offer_the_notebook_for_download(app, pagename, templatename, context, doctree) -> None:
    """Offer the lesson's committed ``.ipynb`` (the notebook Colab opens and nbval checks) in the
    theme's download menu, next to the ``.md`` source.

    The theme's launch buttons copy the build's own executed notebook to ``_sources/`` and link it;
    this runs after them (priority 501) and puts the committed notebook in its place, adding the
    link if the theme did not.
    """
    notebook = notebook_twin(app, pagename)
    if notebook is None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(notebook, target)
    context["ipynb_source"] = f"{pagename}.ipynb"
    for group in context.get("header_buttons") or []:
        if group.get("label") == "download-buttons" and not any(
            b.get("label") == "download-notebook-button" for b in group["buttons"]
        ):
            group["buttons"].insert(0, {
                "type": "link", "url": f"{context['pathto']('_sources', 1)}/{pagename}.ipynb", "text": ".ipynb",
                "icon": "fas fa-code", "tooltip": "Download notebook file", "label": "download-notebook-button",
            })


BOOK_PDF = "attention-step-by-step.pdf"


def book_pdf(app) -> Path:
    """Where ``make pdf`` writes the book's PDF: ``_build/pdf/`` next to the site's folder."""
    return Path(app.outdir).parent / "pdf" / BOOK_PDF


def _offer_the_book_pdf(app, pagename, templatename, context, doctree) -> None:
    """A "Download PDF" entry (the whole book) in the theme's download menu, once ``make pdf`` has
    written the PDF; the theme's own ".pdf" entry prints the page alone. Runs after the theme."""
    if app.builder.name != "html" or not book_pdf(app).is_file():
        return
    for group in context.get("header_buttons") or []:
        if group.get("label") == "download-buttons":
            group["buttons"].append({
                "type": "link", "url": context["pathto"](BOOK_PDF, 1), "text": "Download PDF (the whole book)",
                "tooltip": "Download the whole book as one PDF", "icon": "fas fa-book", "label": "download-book-pdf-button",
            })


def _colab_only_where_a_notebook_exists(app, pagename, templatename, context, doctree) -> None:
    """Drop the theme's Colab launch button from pages without a committed ``.ipynb`` twin.

    The theme offers Colab on every executed page; for the book's own pages (intro, cheat sheet,
    status) it would open their ``.md`` source, which Colab cannot open. Runs after the theme
    (priority 501) has added its buttons.
    """
    if notebook_twin(app, pagename) is not None:
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


def _html_node_visitors_for_every_html_builder(app) -> None:
    """Give the single-page builder (``make pdf``) the node visitors registered for "html".

    Sphinx looks a node's visitor up by the builder's name, and by its format ("html") only when no
    extension registered a visitor for that name. One does for "singlehtml", so myst-nb's nodes
    registered for "html" alone (the cells of hidden input) had none there, and the build failed.
    """
    handlers = app.registry.translation_handlers
    if app.builder.format == "html" and app.builder.name != "html" and app.builder.name in handlers:
        for node, methods in handlers.get("html", {}).items():
            handlers[app.builder.name].setdefault(node, methods)


def _copy_assets(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    shutil.copy2(plotly_bundle_source(), static / PLOTLY_JS)
    if app.builder.name == "html" and book_pdf(app).is_file():
        shutil.copy2(book_pdf(app), Path(app.outdir) / BOOK_PDF)
    shutil.copytree(
        mathjax_source(), static / MATHJAX_DIR, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*MATHJAX_SKIP)
    )


# Pages computed from files Sphinx does not watch (the introduction reads the lesson files, the
# status page the installed versions): read again at every build, and so executed again (their
# front matter sets myst-nb's execution_mode to "force", so the execution cache is not used).
ALWAYS_REREAD = ("book/intro", "book/status")


def _reread_computed_pages(app, env, added, changed, removed) -> list[str]:
    return [docname for docname in ALWAYS_REREAD if docname in env.found_docs]


# What the Makefile exports, set for the lessons' kernels of any build (they inherit the environment):
# the lessons run offline, with a fixed hash seed, and the kernel's debugger warning off.
LESSON_ENVIRONMENT = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "PYTHONHASHSEED": "0",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
}
SOURCE_STAMP = "course_utils-source.sha256"


class LessonExecutionError(SphinxError):
    """A lesson's execution raised: the book must not be published with its traceback."""

    category = "Lesson execution failed"


class MissingAssetError(SphinxError):
    """Something the build needs and a plain ``jupyter-book build`` cannot fetch by itself."""

    category = "Missing asset"


# Folders of course_utils that no lesson reads: the teacher pilot's report (issue 58), rewritten as each
# of its jobs ends; counting it would drop the book's execution cache while the pilot runs.
NOT_READ_BY_LESSONS = ("pilots",)


def package_source_hash(package_dir: Path | None = None) -> str:
    """sha256 of every file of the installed ``course_utils`` (its code, styles and bundled models),
    but those of :data:`NOT_READ_BY_LESSONS`.

    A lesson's outputs depend on this code as much as on its own cells, which are all that
    jupyter-cache compares; the build keys its cache on this hash as well.
    """
    package_dir = Path(package_dir or Path(__file__).parent)
    if not package_dir.is_dir():
        raise FileNotFoundError(f"expected the course_utils package folder, got {package_dir}")
    digest = hashlib.sha256()
    for path in sorted(package_dir.rglob("*")):
        if path.relative_to(package_dir).parts[0] in NOT_READ_BY_LESSONS:
            continue
        if path.is_file() and "__pycache__" not in path.parts and not path.name.endswith((".pyc", ".egg-info")):
            digest.update(path.relative_to(package_dir).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def mark_execution_cache(cache_dir: Path, source_hash: str | None = None) -> Path:
    """Record in ``cache_dir`` that its executed notebooks are those of this ``course_utils``."""
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    stamp = cache_dir / SOURCE_STAMP
    stamp.write_text((source_hash or package_source_hash()) + "\n", encoding="utf-8")
    return stamp


def execution_cache_is_current(cache_dir: Path, source_hash: str | None = None) -> bool:
    """Whether ``cache_dir`` holds notebooks executed with this ``course_utils`` (:func:`mark_execution_cache`)."""
    stamp = Path(cache_dir) / SOURCE_STAMP
    if not stamp.is_file():
        return False
    return stamp.read_text(encoding="utf-8").strip() == (source_hash or package_source_hash())


def _execution_cache_dir(app) -> Path:
    configured = getattr(app.config, "nb_execution_cache_path", "") or ""
    return Path(configured) if configured else Path(app.outdir).parent / ".jupyter_cache"


def encrypt_kernel_transport() -> bool:
    """Have jupyter_client give each kernel it starts CurveZMQ keys where the kernel supports them.

    ipykernel (7.x) warns "Kernel is running over TCP without encryption" at every start
    otherwise. myst-nb starts its kernels through jupyter-cache and nbclient, which pass no
    configuration to the kernel manager, so the setting is the manager's default here: "auto"
    encrypts a kernel whose kernelspec declares ``supported_encryption: curve`` (ipykernel's does)
    and leaves any other as it was. Returns whether this jupyter_client has the setting.
    """
    import zmq
    from jupyter_client.manager import KernelManager

    trait = KernelManager.class_traits().get("transport_encryption")
    if trait is None or not zmq.has("curve"):
        return False
    trait.default_value = "auto"
    return True


def _prepare_lesson_execution(app, config) -> None:
    os.environ.update(LESSON_ENVIRONMENT)
    encrypt_kernel_transport()
    from .authoring import kernel_retry

    kernel_retry.install()  # a lesson's kernel that dies at start is started again
    # jupyter-cache compares a lesson's cells only: after a change of course_utils its cached outputs
    # are another code's. The cache goes, and so do the pages read from it (the environment).
    cache_dir, current = _execution_cache_dir(app), package_source_hash()
    if not execution_cache_is_current(cache_dir, current):
        stale = [path for path in (cache_dir, Path(app.doctreedir), Path(app.outdir).parent / "jupyter_execute")
                 if path.exists()]
        for path in stale:
            shutil.rmtree(path)
        if stale:
            from sphinx.util import logging

            logging.getLogger(__name__).info(
                "course_utils changed since the lessons were cached: execution cache and pages dropped")
        mark_execution_cache(cache_dir, current)


def _fail_at_once_without_the_plotly_bundle(app) -> None:
    if app.builder.format != "html":
        return
    try:
        plotly_bundle_source()
    except FileNotFoundError as error:
        raise MissingAssetError(str(error)) from None


def failed_cells(notebook) -> list[str]:
    """Each code cell of an executed notebook that has an error output it was not allowed to have
    (no ``raises-exception`` tag), as ``"code cell N: ErrorName: message"`` (N counts code cells from 1)."""
    failures = []
    code_cells = [cell for cell in notebook.get("cells", []) if cell.get("cell_type") == "code"]
    for number, cell in enumerate(code_cells, start=1):
        tags = cell.get("metadata", {}).get("tags", [])
        if "raises-exception" in tags:
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                source = "".join(cell.get("source", "")).strip().splitlines()
                first = source[0] if source else ""
                failures.append(f"code cell {number} ({first[:60]!r}): {output.get('ename')}: {output.get('evalue')}")
                break
    return failures


def _execution_failures(app, env) -> list[str]:
    """Every page whose execution failed or whose executed notebook holds an error output."""
    output_folder = Path(getattr(getattr(env, "mystnb_config", None), "output_folder", "")
                         or Path(app.outdir).parent / "jupyter_execute")
    failures = []
    for docname, data in sorted(getattr(env, "nb_metadata", {}).items()):
        if docname not in env.found_docs:
            continue
        executed = output_folder.joinpath(*f"{docname}.ipynb".split("/"))
        cells = failed_cells(json.loads(executed.read_text(encoding="utf-8"))) if executed.is_file() else []
        exec_data = data.get("exec_data") or {}
        if exec_data.get("succeeded") is False and not cells:
            cells = [f"{exec_data.get('error') or 'the execution'} (see the build's reports/ folder)"]
        source = env.doc2path(docname, False) if hasattr(env, "doc2path") else docname
        failures.extend(f"{source}, {cell}" for cell in cells)
    return failures


def _reread_failed_lessons(app, env, added, changed, removed) -> list[str]:
    """A page whose execution failed is read (so executed) again: nothing of it is kept."""
    return [docname for docname, data in getattr(env, "nb_metadata", {}).items()
            if (data.get("exec_data") or {}).get("succeeded") is False]


def _reread_everything_after_a_package_change(app, env, added, changed, removed) -> list[str]:
    current = package_source_hash()
    if getattr(env, "course_utils_source", None) == current:
        return []
    env.course_utils_source = current
    return sorted(env.found_docs)


def _refuse_failed_lessons(app, env) -> None:
    failures = _execution_failures(app, env)
    if failures:
        # Raised while reading, before Sphinx saves its environment or writes a page: the next build
        # reads these lessons again, and fails again until they run.
        raise LessonExecutionError(
            "a lesson's execution raised; the book is not built until it runs:\n  " + "\n  ".join(failures))


def setup(app):
    app.add_css_file("course.css")
    app.add_js_file(CONTROLS_JS, defer="defer")
    app.add_js_file(AFTER_PAINT_JS, **{"async": "async"})
    app.connect("config-inited", _prepare_lesson_execution)
    app.connect("builder-inited", _fail_at_once_without_the_plotly_bundle)
    app.connect("env-get-outdated", _reread_failed_lessons)
    app.connect("env-get-outdated", _reread_everything_after_a_package_change)
    app.connect("env-updated", _refuse_failed_lessons)
    app.connect("env-get-outdated", _reread_computed_pages)
    app.connect("config-inited", _configure)
    app.connect("builder-inited", _html_node_visitors_for_every_html_builder)
    app.connect("html-page-context", _add_plotly_where_needed)
    app.connect("html-page-context", _mathjax_only_where_there_is_math, priority=900)
    app.connect("html-page-context", _mathjax_after_the_first_paint, priority=901)
    app.connect("html-page-context", _list_citations_as_list_items)
    app.connect("html-page-context", _name_folded_blocks_by_their_label)
    app.connect("html-page-context", _tune_search)
    app.connect("html-page-context", _load_each_script_once, priority=900)
    app.connect("html-page-context", _colab_only_where_a_notebook_exists, priority=600)
    app.connect("html-page-context", _offer_the_notebook_for_download, priority=600)
    app.connect("html-page-context", _offer_the_book_pdf, priority=600)
    app.connect("doctree-resolved", _serve_colab_badge_locally)
    app.connect("build-finished", _copy_assets)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    if sys.argv[1:] not in (["fetch-assets"], ["fetch-plotly"]):
        sys.exit(f"usage: {sys.executable} -m course_utils.book fetch-assets (got {sys.argv[1:]})")
    print(fetch_plotly_bundle())
