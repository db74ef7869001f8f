"""course_utils.book: the Sphinx extension behind the offline site."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from types import SimpleNamespace

import plotly.io as pio
from docutils import nodes
from sphinx.builders.html._assets import _JavaScript

from course_utils import book, plots


def mime(mime_type, content, cell_index=3, output_index=0):
    return SimpleNamespace(mime_type=mime_type, content=content, cell_index=cell_index, output_index=output_index)


def test_plotly_renderer_is_registered_with_myst_nb():
    names = {ep.value for ep in entry_points(group="myst_nb.mime_renderers")}
    assert "course_utils.book:PlotlyMimeRenderer" in names


def test_plotly_json_becomes_a_figure_that_uses_the_site_plotly():
    spec = json.loads(pio.to_json(plots.lines([1, 2], {"a": [3, 4]}, title="T", x_title="x", y_title="y")))
    [node] = book.PlotlyMimeRenderer.handle_mime(None, mime(plots.PLOTLY_MIME, spec), inline=False)
    assert isinstance(node, nodes.raw) and node["format"] == "html"
    assert 'id="figure-3-0"' in node.astext() and "plotly-graph-div" in node.astext()
    assert "cdn.plot.ly" not in node.astext()


def test_plotly_renderer_leaves_other_outputs_to_myst_nb():
    assert book.PlotlyMimeRenderer.handle_mime(None, mime("text/html", "<b>x</b>"), inline=False) is None
    assert book.PlotlyMimeRenderer.handle_mime(None, mime(plots.PLOTLY_MIME, {"data": []}), inline=True) is None


def test_plotly_json_is_preferred_to_its_html_twin_on_html_builders():
    priorities = {(b, m): p for b, m, p in book.PlotlyMimeRenderer.mime_priority_overrides}
    assert priorities[("html", plots.PLOTLY_MIME)] < 30  # myst-nb's text/html priority


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


def test_plotly_js_is_added_only_to_pages_with_figures():
    added = []
    app = SimpleNamespace(add_js_file=lambda name, **kw: added.append(name))
    book._add_plotly_where_needed(app, "p", "page.html", {"body": "<p>no figure</p>"}, None)
    assert added == []
    book._add_plotly_where_needed(app, "p", "page.html", {"body": '<div class="plotly-graph-div">'}, None)
    assert added == [book.PLOTLY_JS]


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
    config = SimpleNamespace(mathjax_path="https://cdn.example/mathjax.js", html_static_path=["_static"])
    book._configure(None, config)
    assert config.mathjax_path == f"mathjax/{book.MATHJAX_COMPONENT}"
    assert config.html_static_path == ["_static", str(book.STATIC_DIR)]
    assert (book.STATIC_DIR / "colab-badge.svg").is_file()


def test_the_assets_the_site_serves_exist():
    assert book.plotly_js_source().stat().st_size > 1_000_000
    assert (book.mathjax_source() / book.MATHJAX_COMPONENT).is_file()


def test_the_build_suppresses_no_warning_that_would_reveal_a_blank_figure():
    import yaml

    from course_utils.authoring.lessons import CONFIG

    sphinx_config = (yaml.safe_load(CONFIG.read_text()).get("sphinx") or {}).get("config") or {}
    suppressed = sphinx_config.get("suppress_warnings", [])
    assert not [w for w in suppressed if w.startswith("mystnb")], f"mystnb warnings are suppressed: {suppressed}"
