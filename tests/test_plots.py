"""course_utils.plots: figure builders and the course renderer."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils import plots, rendering


def payload_of(html: str) -> dict:
    """The figure JSON a figure's HTML hands to Plotly.newPlot."""
    match = re.search(r"var fig = (\{.*\});\n", html)
    assert match, "no figure payload in the HTML"
    return json.loads(match.group(1).replace("<\\/", "</"))


def simple_figure(title="t") -> go.Figure:
    return plots.lines([1, 2, 3], {"a": [1, 4, 9]}, title=title, x_title="x", y_title="y")


def test_palette_is_okabe_ito_and_distinct():
    assert len(set(plots.PALETTE)) == len(plots.PALETTE) == 8
    assert plots.PALETTE[:3] == ("#0072B2", "#E69F00", "#009E73")
    assert plots.color(0) == plots.color(len(plots.PALETTE))


def test_heatmap_labels_values_and_orientation():
    values = np.arange(6).reshape(2, 3) / 10
    fig = plots.heatmap(values, ["a", "b", "c"], ["r0", "r1"], title="T", x_title="X", y_title="Y")
    trace = fig.data[0]
    np.testing.assert_array_equal(trace.z, values)
    assert list(trace.x) == ["a", "b", "c"] and list(trace.y) == ["r0", "r1"]
    assert trace.texttemplate == "%{z:.2f}"
    assert fig.layout.yaxis.autorange == "reversed"  # row 0 on top, as a matrix is read
    assert fig.layout.title.text == "T"
    assert fig.layout.xaxis.title.text == "X" and fig.layout.yaxis.title.text == "Y"


def test_heatmap_repeated_tokens_get_unique_labels():
    fig = plots.heatmap(np.zeros((2, 2)), ["the", "the"], ["a", "b"], title="T", x_title="X", y_title="Y")
    assert list(fig.data[0].x) == ["the (0)", "the (1)"]


def test_heatmap_without_annotations():
    fig = plots.heatmap(np.zeros((1, 1)), ["a"], ["b"], title="T", x_title="X", y_title="Y", annotate=False)
    assert fig.data[0].texttemplate is None


@pytest.mark.parametrize(
    "values, message",
    [
        (np.zeros(3), r"expected a 2-D matrix of values, got an array of shape \(3,\)"),
        (np.zeros((3, 2)), r"expected values of shape \(len\(y_labels\)=2, len\(x_labels\)=2\), got \(3, 2\)"),
    ],
)
def test_heatmap_rejects_mismatched_values(values, message):
    with pytest.raises(ValueError, match=message):
        plots.heatmap(values, ["a", "b"], ["r0", "r1"], title="T", x_title="X", y_title="Y")


def test_builders_require_titles_and_axis_labels():
    with pytest.raises(ValueError, match="expected a non-empty string for x_title"):
        plots.heatmap(np.zeros((1, 1)), ["a"], ["b"], title="T", x_title=" ", y_title="Y")
    with pytest.raises(ValueError, match="expected a non-empty string for title"):
        plots.lines([1], {"a": [1]}, title="", x_title="x", y_title="y")


def test_lines_curves_differ_by_colour_and_dash():
    fig = plots.lines([1, 2], {"a": [1, 2], "b": [2, 1], "c": [0, 0]}, title="T", x_title="x", y_title="y")
    assert [t.name for t in fig.data] == ["a", "b", "c"]
    assert len({t.line.color for t in fig.data}) == 3
    assert len({t.line.dash for t in fig.data}) == 3


def test_lines_log_axes():
    fig = plots.lines([1, 10], {"a": [1, 100]}, title="T", x_title="x", y_title="y", log_x=True, log_y=True)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


@pytest.mark.parametrize(
    "x, series, message",
    [
        ([], {"a": []}, "expected x to be a non-empty 1-D sequence"),
        ([1, 2], {}, "expected at least one series"),
        ([1, 2], {"a": [1, 2, 3]}, r"expected series 'a' to have 2 values like x, got shape \(3,\)"),
    ],
)
def test_lines_rejects_bad_input(x, series, message):
    with pytest.raises(ValueError, match=message):
        plots.lines(x, series, title="T", x_title="x", y_title="y")


def test_mimebundle_has_plotly_json_and_html_with_the_same_figure():
    fig = simple_figure()
    bundle = rendering.figure_mimebundle(fig)
    assert set(bundle) == {rendering.PLOTLY_MIME, "text/html"}
    spec = bundle[rendering.PLOTLY_MIME]
    y = spec["data"][0]["y"]  # numpy arrays travel as plotly.js typed arrays (base64)
    assert y["dtype"] == "f8"
    np.testing.assert_array_equal(np.frombuffer(base64.b64decode(y["bdata"]), dtype="<f8"), [1, 4, 9])
    assert payload_of(bundle["text/html"])["data"] == spec["data"]


def test_mimebundle_div_ids_are_deterministic_digests():
    first, second = rendering.figure_mimebundle(simple_figure()), rendering.figure_mimebundle(simple_figure())
    id1 = re.search(r'id="(fig-\d+-[0-9a-f]{10})"', first["text/html"]).group(1)
    id2 = re.search(r'id="(fig-\d+-[0-9a-f]{10})"', second["text/html"]).group(1)
    assert id1.split("-")[2] == id2.split("-")[2]  # same figure, same digest
    assert int(id2.split("-")[1]) == int(id1.split("-")[1]) + 1  # next figure of this kernel
    other = rendering.figure_mimebundle(simple_figure(title="other"))["text/html"]
    assert id1.split("-")[2] not in other


def test_mimebundle_rejects_non_figures():
    with pytest.raises(TypeError, match="expected a plotly.graph_objects.Figure, got dict"):
        rendering.figure_mimebundle({"data": []})


def test_html_fetches_plotly_only_where_the_page_has_none():
    spec = json.loads(pio.to_json(simple_figure()))
    colab = rendering.figure_html(spec, "fig-a")
    site = rendering.figure_html(spec, "fig-a", fetch_plotly_js=False)
    assert "if (window.Plotly)" in colab and f"plotly-{rendering.get_plotlyjs_version()}.min.js" in colab
    assert "cdn.plot.ly" not in site and "createElement" not in site
    assert 'Plotly.newPlot("fig-a"' in site


def test_html_cannot_be_broken_out_of_by_a_title():
    spec = json.loads(pio.to_json(simple_figure(title="</script><script>alert(1)</script>")))
    html = rendering.figure_html(spec, "fig-x", fetch_plotly_js=False)
    assert html.count("</script>") == 1
    assert payload_of(html)["layout"]["title"]["text"] == "</script><script>alert(1)</script>"


@pytest.mark.parametrize("bad", ["1fig", "fig a", 'x"><script>', ""])
def test_html_rejects_bad_div_ids(bad):
    with pytest.raises(ValueError, match="expected an HTML id"):
        rendering.figure_html({"data": []}, bad)


def test_html_rejects_non_specs():
    with pytest.raises(ValueError, match="expected a figure spec"):
        rendering.figure_html([], "fig-a")


def test_course_renderer_is_used_by_figures_in_a_kernel():
    rendering.use_course_renderer()
    rendering.use_course_renderer()  # idempotent
    assert pio.renderers.default == rendering.RENDERER_NAME
    bundle = simple_figure()._repr_mimebundle_()
    assert set(bundle) == {rendering.PLOTLY_MIME, "text/html"}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), min_size=1, max_size=20), st.text(max_size=30))
def test_html_payload_round_trips_any_data_and_title(ys, title):
    fig = go.Figure(go.Scatter(y=ys), layout=dict(title=dict(text=title)))
    spec = json.loads(pio.to_json(fig, engine="json"))
    payload = payload_of(rendering.figure_html(spec, "fig-h", fetch_plotly_js=False))
    assert payload["data"] == spec["data"]
    assert payload["layout"].get("title", {}).get("text", "") == title


def test_significant_rounds_relative_to_each_value():
    np.testing.assert_array_equal(
        plots.significant([0.0, 1.23456789, -9.87654321e-27, 123456789.0]),
        [0.0, 1.235, -9.877e-27, 123500000.0],
    )
    kept = plots.significant([np.inf, -np.inf, np.nan])
    assert np.isinf(kept[:2]).all() and np.isnan(kept[2])


def test_last_bit_differences_do_not_change_a_figure():
    values = np.array([[0.1 + 0.2, 1 / 3], [2 / 3, 1e-20 / 3]])
    nudged = values * (1 + 1e-15)
    first = plots.heatmap(values, ["a", "b"], ["c", "d"], title="T", x_title="X", y_title="Y")
    second = plots.heatmap(nudged, ["a", "b"], ["c", "d"], title="T", x_title="X", y_title="Y")
    assert pio.to_json(first) == pio.to_json(second)
    curve = plots.lines([1, 2], {"a": values[0]}, title="T", x_title="x", y_title="y")
    assert pio.to_json(curve) == pio.to_json(plots.lines([1, 2], {"a": nudged[0]}, title="T", x_title="x", y_title="y"))


def test_figure_is_labelled_by_its_title_for_screen_readers():
    spec = json.loads(pio.to_json(simple_figure(title='Vanishing <b>"gradients"</b><br>over distance')))
    assert rendering.figure_title(spec) == 'Vanishing "gradients" over distance'
    html = rendering.figure_html(spec, "fig-a")
    assert 'role="img" aria-label="Vanishing &quot;gradients&quot; over distance"' in html
    assert 'aria-label="interactive figure"' in rendering.figure_html({"data": []}, "fig-b")


def test_log_axes_write_powers_of_ten_not_si_prefixes():
    """A gradient of 1e-4 reads as 10⁻⁴ on a log axis, not as "100µ"."""
    fig = plots.lines([1, 10, 100], {"a": [1e-6, 1e-5, 1e-4]}, title="T", x_title="x", y_title="y",
                      log_x=True, log_y=True)
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"
    assert fig.layout.xaxis.exponentformat == fig.layout.yaxis.exponentformat == "power"
    linear = plots.lines([1, 2], {"a": [1, 2]}, title="T", x_title="x", y_title="y")
    assert linear.layout.yaxis.exponentformat is None


def test_heatmap_outlines_the_row_a_paragraph_points_to():
    fig = plots.heatmap(np.eye(3), ["a", "b", "c"], ["a", "b", "c"], title="t", x_title="x", y_title="y",
                        outline_row=1)  # fmt: skip
    (shape,) = fig.layout.shapes
    assert (shape.y0, shape.y1, shape.x0, shape.x1) == (0.5, 1.5, -0.5, 2.5)  # row 1, every column
    with pytest.raises(ValueError, match="outline_row to be a row index in 0 .. 2"):
        plots.heatmap(np.eye(3), ["a", "b", "c"], ["a", "b", "c"], title="t", x_title="x", y_title="y", outline_row=3)


def test_lines_tick_the_sampled_values_and_mark_a_point():
    fig = plots.lines([64, 128, 512], {"w": [1.0, 4.0, 64.0]}, title="t", x_title="x", y_title="y", log_x=True,
                      log_y=True, x_ticks=[64, 128, 512], marks=[("w", 512, "T = 512: 64 MiB")])  # fmt: skip
    assert list(fig.layout.xaxis.tickvals) == [64, 128, 512] and list(fig.layout.xaxis.ticktext) == ["64", "128", "512"]
    (note,) = fig.layout.annotations
    assert note.text == "T = 512: 64 MiB" and note.arrowcolor  # set: the site lightens it in dark mode
    assert (note.x, note.y) == pytest.approx((np.log10(512), np.log10(64)))  # log axes: the point, in log10
    with pytest.raises(ValueError, match="mark at one of the x values"):
        plots.lines([1, 2], {"w": [1, 2]}, title="t", x_title="x", y_title="y", marks=[("w", 3, "no")])
    with pytest.raises(ValueError, match="mark on one of the series"):
        plots.lines([1, 2], {"w": [1, 2]}, title="t", x_title="x", y_title="y", marks=[("v", 1, "no")])
