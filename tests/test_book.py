"""course_utils.book: the Sphinx extension behind the offline site."""

from __future__ import annotations

import json
import re
import zlib
from importlib.metadata import entry_points
from pathlib import Path
from types import SimpleNamespace

import plotly.io as pio
from docutils import nodes
from sphinx.builders.html._assets import _JavaScript

from course_utils import book, plots, rendering


def mime(mime_type, content, cell_index=3, output_index=0):
    return SimpleNamespace(mime_type=mime_type, content=content, cell_index=cell_index, output_index=output_index)


def test_plotly_renderer_is_registered_with_myst_nb():
    names = {ep.value for ep in entry_points(group="myst_nb.mime_renderers")}
    assert "course_utils.book:PlotlyMimeRenderer" in names


def test_plotly_json_becomes_a_figure_that_uses_the_site_plotly():
    spec = json.loads(pio.to_json(plots.lines([1, 2], {"a": [3, 4]}, title="T", x_title="x", y_title="y")))
    [node] = book.PlotlyMimeRenderer.handle_mime(None, mime(rendering.PLOTLY_MIME, spec), inline=False)
    assert isinstance(node, nodes.raw) and node["format"] == "html"
    assert 'id="figure-3-0"' in node.astext() and "plotly-graph-div" in node.astext()
    assert "cdn.plot.ly" not in node.astext()
    # drawn by the deferred course-figures.js from the spec, not by an inline script that needs Plotly
    assert '<script type="application/json" class="course-figure-spec" data-figure="figure-3-0">' in node.astext()
    assert "Plotly.newPlot" not in node.astext()


def test_site_figures_are_labelled_figures_whose_controls_a_screen_reader_reaches():
    spec = json.loads(pio.to_json(plots.lines([1, 2], {"a": [3, 4]}, title="Loss <b>falls</b>", x_title="x", y_title="y")))
    html = rendering.site_figure_html(spec, "f1")
    assert 'role="figure" aria-label="Loss falls"' in html  # role="img" would hide sliders and menus
    payload = html.split('data-figure="f1">', 1)[1].removesuffix("</script>")
    assert json.loads(payload)["layout"]["title"]["text"] == "Loss <b>falls</b>"


def test_a_site_figure_title_cannot_close_its_script():
    spec = {"data": [], "layout": {"title": {"text": "</script><script>alert(1)"}}}
    assert "</script><script>" not in rendering.site_figure_html(spec, "f1")


def test_figure_ids_are_unique_across_the_book():
    spec = json.loads(pio.to_json(plots.lines([1, 2], {"a": [3, 4]}, title="T", x_title="x", y_title="y")))
    ids = set()
    for source in ("/book/lessons/04_self_attention.md", "/book/lessons/05_masking.md"):
        [node] = book.PlotlyMimeRenderer.handle_mime(SimpleNamespace(source=source), mime(rendering.PLOTLY_MIME, spec), inline=False)
        ids.add(node.astext().split('id="', 1)[1].split('"', 1)[0])
    assert ids == {"figure-04_self_attention-3-0", "figure-05_masking-3-0"}


def test_plotly_renderer_leaves_other_outputs_to_myst_nb():
    assert book.PlotlyMimeRenderer.handle_mime(None, mime("text/html", "<b>x</b>"), inline=False) is None
    assert book.PlotlyMimeRenderer.handle_mime(None, mime(rendering.PLOTLY_MIME, {"data": []}), inline=True) is None


def test_plotly_json_is_preferred_to_its_html_twin_on_html_builders():
    priorities = {(b, m): p for b, m, p in book.PlotlyMimeRenderer.mime_priority_overrides}
    assert priorities[("html", rendering.PLOTLY_MIME)] < 30  # myst-nb's text/html priority


def test_each_script_is_loaded_once_whatever_its_priority():
    scripts = [
        _JavaScript("a.js", priority=500),
        _JavaScript(None, priority=500, body="const X = 1"),
        _JavaScript("", priority=501, body="const X = 1"),
        _JavaScript("a.js", priority=800),
        _JavaScript("b.js", priority=500, **{"async": "async"}),
    ]
    context = {"script_files": scripts}
    book._load_each_script_once(None, "page", "page.html", context, None)
    assert [(s.filename, s.attributes.get("body")) for s in context["script_files"]] == [
        ("a.js", None),
        (None, "const X = 1"),
        ("b.js", None),
    ]


def _page_context(body: str) -> dict:
    return {"body": body, "pathto": lambda name, resource: f"../{name}"}


def test_plotly_js_is_added_only_to_pages_with_figures():
    added = []
    app = SimpleNamespace(add_js_file=lambda name, **kw: added.append(kw["data-src"]))
    book._add_plotly_where_needed(app, "p", "page.html", _page_context("<p>no figure</p>"), None)
    assert added == []
    book._add_plotly_where_needed(app, "p", "page.html", _page_context(rendering.site_figure_html({"data": []}, "f")), None)
    assert [uri.partition("?")[0] for uri in added] == [f"../_static/{book.PLOTLY_JS}", f"../_static/{book.FIGURES_JS}"]


def test_plotly_js_and_the_figures_script_wait_for_the_first_paint_in_that_order():
    """Placeholders (a data block: no src, a type that is not JavaScript), plotly.js first; the figures'
    script named by its content (a changed file, a new address), as Sphinx's ?v= does."""
    added = []
    app = SimpleNamespace(add_js_file=lambda name, **kw: added.append((name, kw)))
    book._add_plotly_where_needed(app, "p", "page.html", _page_context(rendering.site_figure_html({"data": []}, "f")), None)
    assert [name for name, _ in added] == [None, None]
    assert [kw["type"] for _, kw in added] == [book.AFTER_PAINT_TYPE] * 2
    assert not any("defer" in kw or "async" in kw for _, kw in added)
    assert added[0][1]["priority"] < added[1][1]["priority"]
    figures = (book.STATIC_DIR / book.FIGURES_JS).read_bytes()
    assert added[1][1]["data-src"].endswith(f"?v={zlib.crc32(figures) & 0xFFFFFFFF:08x}")


def test_the_after_paint_loader_reads_the_placeholders_the_book_writes():
    loader = (book.STATIC_DIR / book.AFTER_PAINT_JS).read_text(encoding="utf-8")
    assert f'var TYPE = "{book.AFTER_PAINT_TYPE}";' in loader
    assert "placeholder.dataset.src" in loader  # the data-src attribute


def test_the_theme_macro_override_still_finds_the_fontawesome_tag_it_replaces():
    """templates/static/webpack-macros.html rewrites the theme's deferred fontawesome.js tag as a
    placeholder; were the theme to write that tag otherwise, the rewrite would silently do nothing."""
    import pydata_sphinx_theme

    theme = (Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static" / "webpack-macros.html")
    override = (book.TEMPLATES_DIR / "static" / "webpack-macros.html").read_text(encoding="utf-8")
    replaced = re.search(r"replace\('([^']+)', '([^']+)'\)", override)
    assert replaced, "expected a replace('<old>', '<new>') filter in the override"
    old, new = replaced.groups()
    assert new == f'<script type="{book.AFTER_PAINT_TYPE}" data-src="'
    head_js = theme.read_text(encoding="utf-8").split("{% macro head_js_preload() %}")[1].split("{% endmacro %}")[0]
    tags = [line.strip() for line in head_js.splitlines() if line.strip().startswith(old)]
    assert len(tags) == 1 and "_static/scripts/fontawesome.js" in tags[0], head_js
    # and the override defines every macro the theme's file does
    assert set(re.findall(r"macro (\w+)\(", theme.read_text(encoding="utf-8"))) == set(re.findall(r"macro (\w+)\(", override))


def _doctree(*children):
    doctree = nodes.document(None, None)
    for child in children:
        doctree += child
    return doctree


def test_mathjax_is_loaded_only_on_pages_with_math():
    def scripts():
        return [_JavaScript("mathjax/tex-svg.js", priority=500, defer="defer"),
                _JavaScript(None, priority=500, body="window.MathJax = {}"), _JavaScript("a.js", priority=500)]

    without = {"script_files": scripts()}
    book._mathjax_only_where_there_is_math(None, "p", "page.html", without, _doctree(nodes.paragraph(text="x")))
    assert [s.filename for s in without["script_files"]] == ["a.js"]
    for math in (nodes.math(text="x^2"), nodes.math_block(text="x^2")):
        with_math = {"script_files": scripts()}
        book._mathjax_only_where_there_is_math(None, "p", "page.html", with_math, _doctree(nodes.paragraph("", "", math)))
        assert len(with_math["script_files"]) == 3


def test_mathjax_waits_for_the_first_paint_and_comes_before_the_figures():
    for name in (f"_static/{book.MATHJAX_DIR}/{book.MATHJAX_COMPONENT}", f"{book.MATHJAX_DIR}/{book.MATHJAX_COMPONENT}"):
        context = {"script_files": [_JavaScript(None, priority=500, body="window.MathJax = {}"),
                                    _JavaScript(name, priority=500, defer="defer")],
                   "pathto": lambda name, resource: f"../{name}"}
        book._mathjax_after_the_first_paint(None, "p", "page.html", context, None)
        config, mathjax = context["script_files"]
        assert config.attributes["body"] == "window.MathJax = {}"  # its configuration still runs first, inline
        assert mathjax.filename is None and "defer" not in mathjax.attributes
        assert mathjax.attributes["type"] == book.AFTER_PAINT_TYPE
        assert mathjax.attributes["data-src"] == f"../_static/{book.MATHJAX_DIR}/{book.MATHJAX_COMPONENT}"
    added = []
    app = SimpleNamespace(add_js_file=lambda name, **kw: added.append(kw["priority"]))
    book._add_plotly_where_needed(app, "p", "page.html", _page_context(rendering.site_figure_html({"data": []}, "f")), None)
    assert min(added) > mathjax.priority  # placeholders load in page order: the formulas, then the figures


def test_the_plotly_bundle_matches_the_plotly_package():
    from plotly.offline import get_plotlyjs_version

    # the figures' JSON is written by the plotly package for its plotly.js version
    assert book.PLOTLY_BUNDLE_VERSION == get_plotlyjs_version()
    assert {"scatter", "bar", "heatmap"} <= set(book.PLOTLY_BUNDLE_TRACES)


def _tarball(files: dict[str, bytes]) -> bytes:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_a_bundle_tarball_is_checked_against_its_integrity(monkeypatch):
    import base64
    import hashlib

    import pytest

    tarball = _tarball({f"package/{book.PLOTLY_BUNDLE_FILE}": b"Plotly"})
    digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
    monkeypatch.setattr(book, "PLOTLY_BUNDLE_INTEGRITY", digest)
    assert book.bundle_from_tarball(tarball) == b"Plotly"
    with pytest.raises(ValueError, match="corrupted or substituted"):
        book.bundle_from_tarball(tarball + b"x")


def test_the_checkers_print_text_symbols_not_emoji():
    """Every symbol in the checkers' messages is one of engine.SYMBOLS, text symbols that need no emoji
    font (the site test draws each one); none carries the emoji variation selector U+FE0F."""
    import inspect

    from course_utils.checks import engine

    assert engine.PASSED in engine.success_message("f", 1) and engine.NOT_ATTEMPTED in engine.not_attempted_message("f")
    symbols = {ch for ch in inspect.getsource(engine) if 0x2190 <= ord(ch) and ch not in "…→—–×≤≥"}
    assert symbols <= set(engine.SYMBOLS), sorted(symbols - set(engine.SYMBOLS))
    assert all(ord(ch) < 0x1F000 and "\ufe0f" not in ch for ch in engine.SYMBOLS)


def test_a_missing_bundle_says_how_to_fetch_it(monkeypatch, tmp_path):
    import pytest

    monkeypatch.setattr(book.sys, "prefix", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="make install"):
        book.plotly_bundle_source()


def test_colab_badge_image_is_served_from_the_site():
    doctree = nodes.document(None, None)
    doctree += nodes.image(uri=book.COLAB_BADGE_URL)
    doctree += nodes.image(uri="https://example.org/other.svg")
    book._serve_colab_badge_locally(None, doctree, "lessons/01_rnn_recap")
    assert [img["uri"] for img in doctree.findall(nodes.image)] == [
        "../_static/colab-badge.svg",
        "https://example.org/other.svg",
    ]


def test_configuration_serves_mathjax_and_static_files_locally():
    config = SimpleNamespace(mathjax_path="https://cdn.example/mathjax.js", html_static_path=["_static"],
                             templates_path=["_templates"])
    book._configure(None, config)
    assert config.mathjax_path == f"mathjax/{book.MATHJAX_COMPONENT}"
    assert config.html_static_path == ["_static", str(book.STATIC_DIR)]
    assert config.templates_path == ["_templates", str(book.TEMPLATES_DIR)]  # after the book's own
    assert (book.STATIC_DIR / "colab-badge.svg").is_file()


def test_the_assets_the_site_serves_exist():
    assert book.plotly_js_source().stat().st_size > 1_000_000  # the full plotly.js, for Colab's frames
    assert 1_000_000 < book.plotly_bundle_source().stat().st_size < 2_000_000  # the site's partial bundle
    assert (book.mathjax_source() / book.MATHJAX_COMPONENT).is_file()


def test_the_build_suppresses_no_warning_that_would_reveal_a_blank_figure():
    import yaml

    from course_utils.authoring.lessons import CONFIG

    sphinx_config = (yaml.safe_load(CONFIG.read_text()).get("sphinx") or {}).get("config") or {}
    suppressed = sphinx_config.get("suppress_warnings", [])
    assert not [w for w in suppressed if w.startswith("mystnb")], f"mystnb warnings are suppressed: {suppressed}"


def test_bibliography_entries_are_list_items_of_their_list():
    context = {"body": '<div role="list" class="citation-list"><div class="citation" role="doc-biblioentry">x</div></div>'}
    book._list_citations_as_list_items(None, "book/references", "page.html", context, None)
    assert context["body"] == '<div role="list" class="citation-list"><div class="citation" role="listitem">x</div></div>'


def test_folded_cells_are_named_by_the_label_they_show():
    """myst-nb's summary of a folded cell, as myst-nb 1.x writes it, loses its aria-label "Toggle hidden
    content", so that its name is its visible "Show code cell source" (axe: label-content-name-mismatch)."""
    summary = ('<details class="admonition hide above-input">\n<summary aria-label="Toggle hidden content">\n'
               '<p class="collapsed admonition-title">Show code cell source</p>\n')
    context = {"body": summary * 2}
    book._name_folded_blocks_by_their_label(None, "book/status", "page.html", context, None)
    assert "aria-label" not in context["body"] and context["body"].count("<summary>") == 2
    assert "Show code cell source" in context["body"]


def test_glossary_terms_are_the_unindented_lines_of_the_glossary_block():
    text = "# Glossary\n\n```{glossary}\n:sorted:\n\nsoftmax\n  Turns scores into weights.\n\npadding mask\n  Hides pads.\n```\n"
    assert book.glossary_terms(text) == ["softmax", "padding mask"]


def test_the_lesson_that_uses_a_term_most_teaches_it():
    lessons = {
        "lessons/04_self_attention": "softmax here, Softmax there, softmax(s)",
        "lessons/05_masking": "a softmax, a padding mask and a padding-mask",
        "lessons/07_distillation": "softmaxes are not softmax? softmax! no padding",
    }
    teaches = book.teaching_lessons(["softmax", "padding mask", "LayerNorm"], lessons)
    assert teaches == {"softmax": "lessons/04_self_attention", "padding mask": "lessons/05_masking"}
    tie = book.teaching_lessons(["mask"], {"lessons/06_b": "mask", "lessons/05_a": "mask"})
    assert tie == {"mask": "lessons/05_a"}


def test_the_search_page_gets_the_course_scorer_before_searchtools():
    added = []
    app = SimpleNamespace(add_js_file=lambda name, **kw: added.append((name, kw)), srcdir=str(book.Path(__file__).parents[1]))
    book._tune_search(app, "lessons/04_self_attention", "page.html", {}, None)
    assert added == []
    book._tune_search(app, "search", "search.html", {}, None)
    (_, config), (name, _) = added
    assert name == book.SEARCH_JS and '"softmax": "lessons/04_self_attention"' in config["body"]
    assert '"layernorm": "lessons/06_encoder"' in config["body"]


def _app_with_pages(tmp_path, *pages):
    env = SimpleNamespace(all_docs=set(pages), doc2path=lambda name: str(tmp_path / "src" / f"{name}.md"))
    return SimpleNamespace(env=env, outdir=str(tmp_path / "html"), builder=SimpleNamespace(format="html"))


def test_a_lessons_committed_notebook_is_offered_for_download(tmp_path):
    (tmp_path / "src" / "lessons").mkdir(parents=True)
    (tmp_path / "src" / "lessons" / "01_x.md").write_text("# X")
    (tmp_path / "src" / "lessons" / "01_x.ipynb").write_text('{"cells": []}')
    (tmp_path / "src" / "intro.md").write_text("# Intro")
    app = _app_with_pages(tmp_path, "lessons/01_x", "intro")
    (tmp_path / "html" / "_sources" / "lessons").mkdir(parents=True)
    (tmp_path / "html" / "_sources" / "lessons" / "01_x.ipynb").write_text("the build's executed notebook")
    menu = {"label": "download-buttons", "buttons": [{"label": "download-source-button"}]}
    context = {"header_buttons": [menu], "pathto": lambda name, resource: f"../{name}"}
    book._offer_the_notebook_for_download(app, "lessons/01_x", "page.html", context, None)
    assert context["ipynb_source"] == "lessons/01_x.ipynb"
    assert (tmp_path / "html" / "_sources" / "lessons" / "01_x.ipynb").read_text() == '{"cells": []}'
    assert menu["buttons"][0]["url"] == "../_sources/lessons/01_x.ipynb"
    book._offer_the_notebook_for_download(app, "lessons/01_x", "page.html", context, None)
    assert [b["label"] for b in menu["buttons"]] == ["download-notebook-button", "download-source-button"]
    context = {}
    book._offer_the_notebook_for_download(app, "intro", "page.html", context, None)
    assert context == {}, "a page with no committed notebook offers none"


def test_the_single_page_builder_gets_the_node_visitors_of_the_html_builder():
    visit = (lambda *a: None, lambda *a: None)
    handlers = {"html": {"HideCodeCellNode": visit, "shared": visit}, "singlehtml": {"shared": "own"}}
    app = SimpleNamespace(registry=SimpleNamespace(translation_handlers=handlers),
                          builder=SimpleNamespace(name="singlehtml", format="html"))
    book._html_node_visitors_for_every_html_builder(app)
    assert handlers["singlehtml"] == {"shared": "own", "HideCodeCellNode": visit}


def test_the_pilots_report_does_not_drop_the_books_execution_cache(tmp_path):
    """The teacher pilot rewrites its report as each job ends; no lesson reads it, so the hash the book
    keys its execution cache on ignores it, and any other file of the package counts."""
    from course_utils.authoring import pilot

    assert pilot.REPORT.parent.name in book.NOT_READ_BY_LESSONS
    (tmp_path / "pilots").mkdir()
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "pilots" / "teacher_pilot.json").write_text("{}")
    before = book.package_source_hash(tmp_path)
    (tmp_path / "pilots" / "teacher_pilot.json").write_text('{"jobs": {"one": 1}}')
    assert book.package_source_hash(tmp_path) == before
    (tmp_path / "code.py").write_text("x = 2\n")
    assert book.package_source_hash(tmp_path) != before
