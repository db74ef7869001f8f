"""Lesson 04's box diagrams: one query's whole path (x -> q, k, v -> scores -> weights -> output)
and multi-head attention's split / attend / merge. The numbers drawn in the boxes are those of the
computation (checked against course_utils.attention and torch, not only against the builders'
own helpers), both layouts fit the widths they are designed for, and bad inputs get clear errors."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
import torch

from course_utils import attention, figures, positional
from course_utils.data import running_example
from course_utils.figures import canvas

EXAMPLE = running_example()
TOKENS = list(EXAMPLE.tokens)
X = EXAMPLE.embeddings + positional.sinusoidal_encoding(5, 4)  # (T, D)
RNG = np.random.default_rng(0)
W_Q, W_K, W_V = (RNG.standard_normal((4, 4)) for _ in range(3))
LOVE = TOKENS.index("love")
NUMBER = re.compile(r"−?\d+\.\d\d")


def numbers(text: str) -> list[float]:
    """Every number written in a box, in order (the true minus sign read as '-')."""
    plain = html.unescape(re.sub(r"<[^>]+>", "", text))
    return [float(n.replace("−", "-")) for n in NUMBER.findall(plain)]


def boxes(layout) -> list[str]:
    return [a["text"] for a in layout["annotations"] if not a.get("showarrow")]


def arrows(layout) -> list[dict]:
    return [a for a in layout["annotations"] if a.get("showarrow")]


def close(drawn, expected):
    np.testing.assert_allclose(drawn, np.round(np.ravel(expected), 2), atol=0.0051)


@pytest.mark.parametrize("query", range(5))
def test_the_query_path_draws_the_numbers_of_scaled_dot_product_attention(query):
    fig = figures.query_path_figure(X, W_Q, W_K, W_V, TOKENS, query)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    outputs, weights = attention.scaled_dot_product_attention(Q, K, V)
    scores = K @ Q[query] / 2.0  # d_k = 4
    for layout in (fig.to_plotly_json()["layout"], fig.layout.meta["narrow_layout"]):
        assert canvas.clashes_of(layout) == []
        for name, expected in [("x", X), ("q", Q[query][None]), ("K", K), ("V", V),
                               ("wv", weights[query][:, None] * V), ("output", outputs[query][None])]:  # fmt: skip
            np.testing.assert_allclose(cell_texts(layout, name), expected, atol=0.051, err_msg=name)
        for key, expected in (("score", scores), ("weight", weights[query])):
            bars = named(layout, f"{key} ")
            labels = {a["name"]: float(a["text"].replace("−", "-")) for a in layout["annotations"]
                      if a.get("name", "").startswith(f"{key} ")}  # fmt: skip
            np.testing.assert_allclose([labels[f"{key} {j}"] for j in range(5)], expected, atol=0.0051)
            (zero,) = [s for s in layout["shapes"] if s.get("name") == f"{key} zero"]
            drawn = np.array([0.0 if f"{key} {j}" not in bars else  # a bar too short to draw
                              (bars[f"{key} {j}"]["x1"] if expected[j] > 0 else bars[f"{key} {j}"]["x0"]) - zero["x0"]
                              for j in range(5)])  # fmt: skip  (signed: from the zero line to the bar's end)
            big = int(np.argmax(np.abs(expected)))
            np.testing.assert_allclose(drawn / drawn[big], expected / expected[big], atol=0.01)  # as long as
        outlined = [s["name"] for s in layout["shapes"] if " row " in s.get("name", "")]
        assert outlined == [f"x row {query}", "output row 0"]


def test_the_query_path_reads_left_to_right_and_fits_a_phone_screen():
    fig = figures.query_path_figure(X, W_Q, W_K, W_V, TOKENS, LOVE)
    for layout in (fig.to_plotly_json()["layout"], fig.layout.meta["narrow_layout"]):
        arrows = [a for a in layout["annotations"] if a.get("showarrow")]
        assert all(a["x"] >= a["ax"] for a in arrows)  # every arrow points right, or down
        assert all(a["y"] >= a["ay"] for a in arrows)
        steps = {a["text"][:2]: a for a in layout["annotations"] if re.match(r"\d\. ", a["text"])}
        assert sorted(steps) == ["1.", "2.", "3.", "4.", "5."]
        for a, b in zip("1234", "2345"):  # each step right of the one before, or under it
            first, then = steps[f"{a}."], steps[f"{b}."]
            assert then["x"] > first["x"] or then["y"] > first["y"]
    narrow = fig.layout.meta["narrow_layout"]
    assert narrow["xaxis"]["range"][1] <= 340 and narrow["height"] <= 780
    assert fig.layout.title.text == "One query's path through self-attention: “love”"


@pytest.mark.parametrize("query", [0, LOVE, 4])
def test_the_multi_head_figure_draws_the_numbers_of_torch_multihead_attention(query):
    params = attention.AttentionParams.random(4, seed=4)
    fig = figures.multi_head_figure(X, params, 2, TOKENS, query)
    layer = params.to_torch_multihead(n_heads=2)  # float64, batch_first
    x = torch.from_numpy(X)[None]
    with torch.no_grad():
        torch_output, torch_weights = layer(x, x, x, need_weights=True, average_attn_weights=False)
    q, k, v = (X @ getattr(params, f"W_{n}") + getattr(params, f"b_{n}") for n in "qkv")  # (T, D) each
    for layout in (fig.to_plotly_json()["layout"], fig.layout.meta["narrow_layout"]):
        assert canvas.clashes_of(layout) == []
        np.testing.assert_allclose(cell_texts(layout, "Q"), q, atol=0.051)
        tints = {s["name"]: s["fillcolor"] for s in layout["shapes"] if s.get("name", "").startswith("Q ")}
        assert [tints[f"Q 0 {j}"] for j in range(4)] == [figures.self_attention.HEAD_TINTS[j // 2] for j in range(4)]
        for h in range(2):  # head h: columns 2h, 2h + 1 of Q, K and V (the package's split)
            for name, full in (("Q", q), ("K", k), ("V", v)):
                np.testing.assert_allclose(cell_texts(layout, f"{name}{h}"), attention.split_heads(full[None], 2)[0, h],
                                           atol=0.051)  # fmt: skip
            bars = named(layout, f"weight {h} ")
            drawn = np.array([length(bars[f"weight {h} {j}"]) if f"weight {h} {j}" in bars else 0 for j in range(5)])
            expected = torch_weights[0, h, query].numpy()
            np.testing.assert_allclose(drawn / drawn.max(), expected / expected.max(), atol=0.01)  # as long as
            labels = [a["text"] for a in layout["annotations"] if a.get("name", "").startswith(f"weight {h} ")]
            np.testing.assert_allclose([float(t) for t in labels], expected, atol=0.0051)
            assert f"Q{h} row {query}" in [s.get("name") for s in layout["shapes"]]  # the query's row outlined
            assert f"K{h} row {query}" not in [s.get("name") for s in layout["shapes"]]
        context = torch_weights[0].numpy() @ attention.split_heads(v[None], 2)[0]  # (H, T, d_head)
        np.testing.assert_allclose(cell_texts(layout, "merged"), attention.merge_heads(context[None])[0], atol=0.051)
        np.testing.assert_allclose(cell_texts(layout, "out"), torch_output[0].numpy(), atol=0.051)
        assert "(T, D/H) = (5, 2) each" in " ".join(a["text"] for a in layout["annotations"])
    assert len([a for a in fig.layout.annotations if a.showarrow]) == 2 + 2  # split into both heads, both merged


def test_the_largest_weight_of_head_0_for_love_is_its_longest_bar():
    params = attention.AttentionParams.random(4, seed=4)
    fig = figures.multi_head_figure(X, params, 2, TOKENS, LOVE)
    bars = named(fig.to_plotly_json()["layout"], "weight 0 ")
    weights = attention.multi_head_attention(X[None], params, 2)[1][0, 0, LOVE]
    assert max(bars, key=lambda n: length(bars[n])) == f"weight 0 {int(np.argmax(weights))}"


def test_the_shape_journey_moves_the_arrays_as_numpy_does_and_draws_every_cell_where_it_lands():
    x = np.random.default_rng(0).standard_normal((2, 5, 4))
    steps = figures.shape_journey_steps(x, 2)
    assert [shape for _, shape, _ in steps] == ["(B, T, D)", "(B, T, H, D/H)", "(B, H, T, D/H)", "(B, H, T, D/H)",
                                                "(B, T, H, D/H)", "(B, T, D)"]  # fmt: skip
    assert [a.shape for _, _, a in steps] == [(2, 5, 4), (2, 5, 2, 2), (2, 2, 5, 2), (2, 2, 5, 2), (2, 5, 2, 2), (2, 5, 4)]
    np.testing.assert_array_equal(steps[2][2], attention.split_heads(x, 2))
    np.testing.assert_array_equal(steps[-1][2], x)  # back where it started
    fig = figures.shape_journey_figure(x, 2)
    for layout in (fig.to_plotly_json()["layout"], fig.layout.meta["narrow_layout"]):
        assert canvas.clashes_of(layout) == []
        cells = {s["name"]: s for s in layout["shapes"] if s.get("name", "").startswith("step ")}
        for k in range(6):
            assert len([n for n in cells if n.startswith(f"step {k} b")]) == x.size  # every entry, once
            for b in range(2):
                for t in range(5):
                    for h in range(2):
                        cell = cells[f"step {k} b{b} t{t} h{h} i0"]
                        assert cell["fillcolor"] == figures.self_attention.HEAD_TINTS[h]
        # (B, H, T, D/H): head 1's matrix lies under head 0's, one token a row; (B, T, H, D/H): beside it
        assert cells["step 2 b0 t0 h1 i0"]["y0"] > cells["step 2 b0 t4 h0 i0"]["y1"]
        assert cells["step 2 b0 t0 h1 i0"]["x0"] == cells["step 2 b0 t0 h0 i0"]["x0"]
        assert cells["step 1 b0 t0 h1 i0"]["x0"] > cells["step 1 b0 t0 h0 i1"]["x1"]
        assert cells["step 1 b0 t0 h1 i0"]["y0"] == cells["step 1 b0 t0 h0 i0"]["y0"]
        texts = " ".join(a["text"] for a in layout["annotations"])
        for shape in ["= (2, 5, 4)", "= (2, 5, 2, 2)", "= (2, 2, 5, 2)"]:
            assert shape in texts
    assert fig.layout.meta["narrow_layout"]["height"] <= 780


def test_the_numbers_helpers_agree_with_the_package():
    params = attention.AttentionParams.random(4, seed=1)
    output, weights = attention.multi_head_attention(X[None], params, 2)
    n = figures.multi_head_numbers(X, params, 2, LOVE)
    np.testing.assert_allclose(n["output"], output[0, LOVE], atol=1e-12)
    np.testing.assert_allclose(n["weights"], weights[0, :, LOVE], atol=1e-12)
    p = figures.query_path_numbers(X, W_Q, W_K, W_V[:, :3], LOVE)  # d_v = 3 != d_k
    out, w = attention.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V[:, :3])
    np.testing.assert_allclose(p["output"], out[LOVE], atol=1e-12)
    np.testing.assert_allclose(p["weights"], w[LOVE], atol=1e-12)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: figures.query_path_figure(X[0], W_Q, W_K, W_V, TOKENS, 2), r"x to be a finite 2-D array"),
        (lambda: figures.query_path_figure(X, W_Q[:3], W_K, W_V, TOKENS, 2), r"expected W_Q \(D=4, d_k\)"),
        (lambda: figures.query_path_figure(X, W_Q, W_K[:, :3], W_V, TOKENS, 2), r"W_K \(D=4, d_k\)"),
        (lambda: figures.query_path_figure(X, W_Q, W_K, W_V, TOKENS[:4], 2), r"one token per row of x, 5"),
        (lambda: figures.query_path_figure(X, W_Q, W_K, W_V, TOKENS, 5), r"token index in 0 \.\. 4, got 5"),
        (lambda: figures.query_path_figure(X, W_Q, W_K, W_V, TOKENS, True), r"token index"),
        (lambda: figures.query_path_figure(X, W_Q, W_K, W_V, ["x" * 9] * 5, 0), r"1 to 8 characters"),
        (lambda: figures.query_path_figure(np.ones((5, 8)), *np.ones((3, 8, 8)), TOKENS, 0), r"at most 5 numbers"),
        (lambda: figures.query_path_figure(X * np.nan, W_Q, W_K, W_V, TOKENS, 0), r"finite"),
        (lambda: figures.multi_head_figure(X, attention.AttentionParams.random(4), 3, TOKENS, 0), r"dividing D=4"),
        (lambda: figures.multi_head_figure(X, attention.AttentionParams.random(6), 2, TOKENS, 0), r"d_model D=4"),
        (lambda: figures.multi_head_figure(X, {"W_q": 1}, 2, TOKENS, 0), r"an AttentionParams"),
        (lambda: figures.multi_head_figure(X, attention.AttentionParams.random(4), 4, TOKENS, 0), r"at most 2 heads"),
        (lambda: figures.shape_journey_figure(np.ones((5, 4)), 2), r"x of shape \(B, T, D\)"),
        (lambda: figures.shape_journey_figure(np.ones((2, 5, 4)), 3), r"dividing D=4"),
        (lambda: figures.shape_journey_figure(np.ones((3, 5, 4)), 2), r"at most 2 sentences"),
    ],
)
def test_bad_inputs_get_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------------------------------------
# The soft search in the plane of the keys

STORE_KEYS = np.array([[3.0, 0.0], [2.5, 0.5], [0.0, 3.0]])
STORE_VALUES = np.array([[4.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
STORE_QUERIES = {"an animal": np.array([1.0, 0.0]), "a bit of both": np.array([0.6, 0.4])}


def named(layout, prefix: str) -> dict[str, dict]:
    """The shapes of a canvas figure whose names start with ``prefix``, by name."""
    return {s["name"]: s for s in layout["shapes"] if s.get("name", "").startswith(prefix)}


def length(shape) -> float:
    return abs(shape["x1"] - shape["x0"])


def arrow_tip(origin_arrow):
    """The tip of an arrow, as a point of the plane (origin at ``origin_arrow``'s tail, y up)."""
    origin = np.array([origin_arrow["ax"], origin_arrow["ay"]])
    return lambda a: (np.array([a["x"], a["y"]]) - origin) * [1, -1]


def test_the_soft_search_draws_weights_as_bars_and_each_answer_as_a_blend_of_the_values():
    fig = figures.soft_search_figure(STORE_KEYS, STORE_VALUES, ["cat", "dog", "car"], STORE_QUERIES)
    weights = np.array([attention.softmax(STORE_KEYS @ q) for q in STORE_QUERIES.values()])  # (2 queries, 3 keys)
    outputs = weights @ STORE_VALUES  # (2, 2): legs, wheels
    for layout in (fig.to_plotly_json()["layout"], fig.layout.meta["narrow_layout"]):
        assert canvas.clashes_of(layout) == []  # no label on a label, a line, an arrow or a bar's edge
        values = named(layout, "value ")
        per_value = length(values["value 0 0"]) / STORE_VALUES[0, 0]  # pixels per leg
        for name, shape in values.items():
            j, d = map(int, name.split()[1:])
            assert length(shape) == pytest.approx(STORE_VALUES[j, d] * per_value, abs=0.15)
        bars = named(layout, "weight ")
        per_weight = length(bars["weight 0 0"]) / weights[0, 0]
        for name, shape in bars.items():
            i, j = map(int, name.split()[1:])
            assert length(shape) == pytest.approx(weights[i, j] * per_weight, abs=0.15)  # as long as the weight
        assert length(bars["weight 1 0"]) - length(bars["weight 1 1"]) > 5  # 0.41 and 0.37 look different
        for i in range(2):
            for d in range(2):  # the answer: every item's value, scaled by its weight, end to end
                parts = [s for n, s in named(layout, f"gets {i} {d} ").items()]
                assert sum(map(length, parts)) == pytest.approx(outputs[i, d] * per_value, abs=0.5)
                for shape in parts:
                    j = int(shape["name"].split()[-1])
                    assert length(shape) == pytest.approx(weights[i, j] * STORE_VALUES[j, d] * per_value, abs=0.15)
        texts = " ".join(a["text"] for a in layout["annotations"])
        for w in weights.ravel():
            assert f"{w:.2f}" in texts
        for out in outputs.ravel():
            assert f"<b>{out:.1f}</b>" in texts
        arrows = {a["name"]: a for a in layout["annotations"] if a.get("showarrow")}
        tip = arrow_tip(arrows["key 0"])
        per_unit = tip(arrows["key 0"])[0] / STORE_KEYS[0, 0]
        for j, key in enumerate(STORE_KEYS):
            np.testing.assert_allclose(tip(arrows[f"key {j}"]), key * per_unit, atol=0.15)
        for i, q in enumerate(STORE_QUERIES.values()):  # at the keys' scale: 4 times longer
            np.testing.assert_allclose(tip(arrows[f"query {i}"]), 4 * q * per_unit, atol=0.15)
    assert "queries drawn 4× longer" in " ".join(a.text for a in fig.layout.annotations)
    assert fig.layout.meta["narrow_layout"]["xaxis"]["range"][1] <= 340  # a phone's figure box
    assert fig.layout.meta["narrow_layout"]["height"] <= 780  # seen whole on a phone


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: figures.soft_search_figure(STORE_KEYS[:, :1], STORE_VALUES, ["a", "b", "c"], STORE_QUERIES), r"keys \(N, 2\)"),
        (lambda: figures.soft_search_figure(STORE_KEYS, STORE_VALUES, ["a", "b"], STORE_QUERIES), "one item name per key"),
        (lambda: figures.soft_search_figure(STORE_KEYS, STORE_VALUES, ["a", "b", "c"], {}), "non-empty dict"),
        (lambda: figures.soft_search_figure(STORE_KEYS, STORE_VALUES, ["a", "b", "c"], {"q": [1, 2, 3]}), r"shape \(2,\)"),
        (lambda: figures.soft_search_figure(STORE_KEYS, STORE_VALUES, list("abc"), STORE_QUERIES, value_names=["x"]), "one value name"),
        (lambda: figures.soft_search_figure(STORE_KEYS, -STORE_VALUES, list("abc"), STORE_QUERIES), "non-negative values"),
    ],
)
def test_the_soft_search_refuses_bad_inputs(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------------------------------------
# Self-attention in matrix form


def cell_texts(layout, name: str) -> np.ndarray:
    """The numbers written in the cells of matrix ``name``, as a matrix."""
    cells = {}
    for a in layout["annotations"]:
        parts = a.get("name", "").split()
        if len(parts) == 3 and parts[0] == name:
            cells[int(parts[1]), int(parts[2])] = float(a["text"].replace("−", "-"))
    rows, cols = max(i for i, _ in cells) + 1, max(j for _, j in cells) + 1
    return np.array([[cells[i, j] for j in range(cols)] for i in range(rows)])


@pytest.mark.parametrize("query", [None, LOVE])
def test_the_matrix_form_draws_every_matrix_of_scaled_dot_product_attention(query):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V[:, :3]  # d_v = 3: the outputs' shape is V's
    fig = figures.attention_matrices_figure(Q, K, V, TOKENS, query=query)
    outputs, weights = attention.scaled_dot_product_attention(Q, K, V)
    scores = Q @ K.T / 2.0  # sqrt(d_k = 4)
    for layout in (fig.to_plotly_json()["layout"], fig.layout.meta["narrow_layout"]):
        assert canvas.clashes_of(layout) == []
        for name, expected, decimals in [("Q", Q, 1), ("K", K.T, 1), ("S", scores, 1), ("W", weights, 2),
                                         ("V", V, 1), ("O", outputs, 1)]:  # fmt: skip
            drawn = cell_texts(layout, name)
            assert drawn.shape == expected.shape, name  # Kᵀ drawn (d_k, T), the keys as columns
            np.testing.assert_allclose(drawn, expected, atol=0.5 * 10**-decimals + 1e-9, err_msg=name)
        texts = " ".join(a["text"] for a in layout["annotations"])
        for shape in ["(T, d_k) = (5, 4)", "(d_k, T) = (4, 5)", "(T, T) = (5, 5)", "(T, d_v) = (5, 3)"]:
            assert shape in texts
        outlined = sorted(s["name"] for s in layout["shapes"] if " row " in s.get("name", ""))
        assert outlined == ([] if query is None else [f"{m} row {LOVE}" for m in "OQSW"])
        rows = [a["text"] for a in layout["annotations"] if a.get("name", "").startswith("row W")]
        assert rows == [html.escape(t) for t in TOKENS]
    narrow = fig.layout.meta["narrow_layout"]
    assert narrow["xaxis"]["range"][1] <= 340 and narrow["height"] <= 780


def test_the_matrix_form_refuses_what_it_cannot_draw():
    with pytest.raises(ValueError, match=r"queries \(T_q, d_k\), keys \(T_k, d_k\)"):
        figures.attention_matrices_figure(X, X[:, :3], X, TOKENS)
    with pytest.raises(ValueError, match="at most 6 tokens"):
        figures.attention_matrices_figure(np.ones((7, 2)), np.ones((7, 2)), np.ones((7, 2)), list("abcdefg"))
    with pytest.raises(ValueError, match="one token per row"):
        figures.attention_matrices_figure(X, X, X, TOKENS[:4])


def test_one_querys_weights_are_bars_with_their_values_and_the_nouns_marked():
    weights = attention.softmax(np.array([0.0, 3.0, 0.0, 1.0, 0.5]))
    kinds = ["", "singular noun", "plural noun", "", "plural noun"]
    tokens = ["[CLS]", "drir", "ideas", "it", "ideas"]  # a word may repeat
    marks = {kind: [k == kind for k in kinds] for kind in ("singular noun", "plural noun")}
    fig = figures.query_weights_figure(weights, tokens, query=3, marks=marks, title="Which word does 'it' attend to?")
    drawn = {}
    for trace in fig.data:
        for y, x, text in zip(trace.y, trace.x, trace.text):
            drawn[int(y)] = (x, text, trace.name)
    assert sorted(drawn) == list(range(5))
    for i in range(5):
        assert drawn[i][0] == pytest.approx(weights[i], abs=1e-3) and drawn[i][1] == f"{weights[i]:.2f}"
        assert drawn[i][2] == (kinds[i] or "other word")
    assert list(fig.layout.yaxis.tickvals) == ["0", "1", "2", "3", "4"]  # every token keeps its label
    assert [t.rstrip("\u00a0") for t in fig.layout.yaxis.ticktext] == [
        "[CLS]", "drir (sg. noun)", "ideas (pl. noun)", "<b>it</b> (the query)", "ideas (pl. noun)"]
    hatches = {t.name: t.marker.pattern.shape for t in fig.data}
    assert hatches["plural noun"] == "/" and hatches["singular noun"] == ""  # read without colour too
    with pytest.raises(ValueError, match="kinds among"):
        figures.query_weights_figure(weights, tokens, query=3, marks={"verb": [1, 0, 0, 0, 0]}, title="t")
    with pytest.raises(ValueError, match="each token marked once"):
        figures.query_weights_figure(weights, tokens, query=3, marks={k: [0, 1, 0, 0, 0] for k in marks}, title="t")
