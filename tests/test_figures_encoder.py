"""Lesson 06's mechanism pictures: one token's vector before and after LayerNorm, and a post-LN
block beside a pre-LN one. The drawn numbers are the computed ones; bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import BertConfig

from course_utils import encoder_pieces, figures
from course_utils.data import running_example
from course_utils.encoder import EncoderConfig
from course_utils.figures.boxes import number
from course_utils.figures.encoder import BLOCK_WIDTH

RUNNING_CONFIG = EncoderConfig(vocab_size=6, max_position_embeddings=8, dim=4, n_heads=2, n_layers=2, hidden_dim=16)


def _layer_norm(x):
    return encoder_pieces.layer_norm(x, np.ones(x.shape[-1]), np.zeros(x.shape[-1]))


def _lines(fig):
    """The mean and ±1 std lines of each panel: {(label, row): y}."""
    return {t.name: t.y[0] for t in fig.data if t.type == "scatter"}


@pytest.mark.parametrize("token", range(5))
def test_the_layer_norm_figure_draws_the_running_example_row_and_its_layer_norm(token):
    example = running_example()
    X = example.embeddings  # (T, D)
    normalised = _layer_norm(X)
    fig = figures.layer_norm_figure(X[token], normalised[token], token=example.tokens[token])
    before, after = (t for t in fig.data if t.type == "bar")
    # figures carry 4 significant digits: half a unit of the 4th digit
    np.testing.assert_allclose(before.y, X[token], rtol=5e-4)
    np.testing.assert_allclose(after.y, normalised[token], rtol=5e-4)
    assert list(before.text) == [number(v) for v in X[token]]  # the values written on the bars
    assert list(after.text) == [number(v) for v in normalised[token]]
    lines = _lines(fig)
    mean, std = X[token].mean(), X[token].std()  # the biased std, as LayerNorm divides by it
    np.testing.assert_allclose([lines["mean (before)"], lines["+1 std (before)"], lines["−1 std (before)"]],
                               [mean, mean + std, mean - std], rtol=5e-4, atol=1e-12)  # fmt: skip
    np.testing.assert_allclose([lines["mean (after)"], lines["+1 std (after)"], lines["−1 std (after)"]],
                               [0, 1, -1], atol=1e-3)  # fmt: skip
    titles = [a.text for a in fig.layout.annotations if a.yref == "paper"]
    assert f"mean {number(mean)}, std {number(std)}" in titles[0] and example.tokens[token] in titles[0]
    assert "mean 0.00, std 1.00" in titles[1]
    labels = [a.text for a in fig.layout.annotations if a.yref != "paper"]
    assert labels.count("mean") == 2 and labels.count("+1 std") == 2 and labels.count("−1 std") == 2
    assert fig.layout.title.text


@pytest.mark.parametrize("D", [2, 7, 768])
def test_the_layer_norm_numbers_are_each_rows_mean_and_std_for_any_width_and_torch_tensors(D):
    x = torch.randn(D, generator=torch.Generator().manual_seed(D), dtype=torch.float64) * 3 + 2
    y = torch.nn.functional.layer_norm(x, (D,), eps=1e-12)
    found = figures.layer_norm_numbers(x, y)
    np.testing.assert_allclose(found["before"], x.numpy(), rtol=5e-4)
    np.testing.assert_allclose(found["after"], y.numpy(), rtol=5e-4)
    np.testing.assert_allclose(found["mean"], [x.mean().item(), 0], rtol=5e-4, atol=1e-9)
    np.testing.assert_allclose(found["std"], [x.std(unbiased=False).item(), 1], rtol=5e-4)
    assert len([t for t in figures.layer_norm_figure(x, y, token="t").data if t.type == "bar"][0].y) == D


@pytest.mark.parametrize(
    "before, after, token, error, message",
    [
        (np.ones((2, 4)), np.ones((2, 4)), "love", ValueError, r"expected before to be a finite vector \(D,\)"),
        ([1.0], [0.0], "love", ValueError, "with D >= 2, got shape \\(1,\\)"),
        ([1.0, np.nan], [0.0, 0.0], "love", ValueError, "expected before to be a finite vector"),
        ([1.0, 2.0, 3.0], [0.0, 1.0], "love", ValueError, r"expected after of the shape of before \(3,\), got \(2,\)"),
        (["a", "b"], [0.0, 1.0], "love", TypeError, "expected before to be a numeric vector"),
        ([1.0, 2.0], {"a": 1}, "love", TypeError, "expected after to be a numeric vector"),
        ([1.0, 2.0], [-1.0, 1.0], "", ValueError, "expected a non-empty string for token"),
        ([1.0, 2.0], [-1.0, 1.0], None, ValueError, "expected a non-empty string for token"),
    ],
)
def test_the_layer_norm_figure_refuses_bad_rows(before, after, token, error, message):
    with pytest.raises(error, match=message):
        figures.layer_norm_figure(before, after, token=token)


def _block_parts(annotations, shapes=None):
    """Each column's LayerNorms, sub-layers and sums, top to bottom: {column: [(text, x, y)]}."""
    columns: dict[int, list] = {}
    for a in annotations:
        a = a if isinstance(a, dict) else a.to_plotly_json()
        text = (a.get("text") or "").split("<br>")[0]
        if text in {"LayerNorm", "<b>+</b>", "multi-head self-attention", "feed-forward network"}:
            column = 0 if a["x"] < BLOCK_WIDTH and a["y"] > -0.5 else 1
            columns.setdefault(column, []).append((text, a["x"], a["y"]))
    return {c: sorted(parts, key=lambda p: -p[2]) for c, parts in columns.items()}


POST_LN = ["multi-head self-attention", "<b>+</b>", "LayerNorm", "feed-forward network", "<b>+</b>", "LayerNorm"]
PRE_LN = ["LayerNorm", "multi-head self-attention", "<b>+</b>", "LayerNorm", "feed-forward network", "<b>+</b>"]


def _check_columns(columns, stream_x):
    """Post-LN's LayerNorms on the stream (at the +'s x), pre-LN's on the branch (the sub-layer's x)."""
    post, pre = columns[0], columns[1]
    assert [p[0] for p in post] == POST_LN
    assert [p[0] for p in pre] == PRE_LN
    for parts in (post, pre):
        pluses = {x for text, x, _ in parts if text == "<b>+</b>"}
        branches = {x for text, x, _ in parts if "network" in text or "attention" in text}
        norms = {x for text, x, _ in parts if text == "LayerNorm"}
        assert len(pluses) == len(branches) == len(norms) == 1
        assert norms == (pluses if parts is post else branches)
    assert {x for text, x, _ in post if text == "<b>+</b>"} == {stream_x[0]}
    assert {x for text, x, _ in pre if text == "<b>+</b>"} == {stream_x[1]}


def test_post_and_pre_ln_side_by_side_and_stacked_on_a_phone():
    config = EncoderConfig(dim=8, n_heads=2, hidden_dim=32, n_layers=1)
    fig = figures.post_pre_ln_figure(config)
    texts = " ".join(a.text for a in fig.layout.annotations if a.text)
    for expected in ("x: (T, 8)", "2 heads of 4", "8 → 32, GELU, → 8", "output (T, 8)", "residual",
                     "LayerNorm(x + f(x))", "x + f(LayerNorm(x))", "post-LN", "pre-LN"):  # fmt: skip
        assert expected in texts, expected
    assert texts.count("x: (T, 8)") == 2 and texts.count("2 heads of 4") == 2
    # side by side: pre-LN's drawing is post-LN's moved right, on the same rows
    wide = _block_parts(fig.layout.annotations)
    _check_columns(wide, stream_x=(2.0, 2.0 + BLOCK_WIDTH + 0.8))
    assert [p[2] for p in wide[0] if p[0] == "<b>+</b>"] == [p[2] for p in wide[1] if p[0] == "<b>+</b>"]
    # on a phone: one column, post-LN above pre-LN
    narrow = fig.layout.meta["narrow_layout"]
    assert {"annotations", "shapes", "height", "xaxis", "yaxis"} <= set(narrow)
    xs = [a["x"] for a in narrow["annotations"]]
    assert max(xs) < BLOCK_WIDTH and narrow["xaxis"]["range"][1] <= 10.0
    notes = narrow["annotations"]
    post_y = min(a["y"] for a in notes if "post-LN" in (a.get("text") or ""))
    pre_y = max(a["y"] for a in notes if "pre-LN" in (a.get("text") or ""))
    assert post_y > pre_y
    stacked = {0: [], 1: []}
    for text, x, y in sorted(_block_parts(notes)[0] + _block_parts(notes).get(1, []), key=lambda p: -p[2]):
        stacked[0 if y > pre_y else 1].append((text, x, y))
    _check_columns(stacked, stream_x=(2.0, 2.0))
    assert narrow["height"] > fig.layout.height and len(narrow["shapes"]) == len(fig.layout.shapes)
    assert fig.layout.title.text and fig.layout.template.layout.paper_bgcolor == "white"  # plots.TEMPLATE


def test_the_block_figure_draws_either_arrangement():
    pre = figures.block_figure(RUNNING_CONFIG, arrangement="pre-LN")
    order = [t for t, _, _ in _block_parts(pre.layout.annotations)[0]]
    assert order == PRE_LN and "pre-LN" in pre.layout.title.text
    post = figures.block_figure(RUNNING_CONFIG)
    assert [t for t, _, _ in _block_parts(post.layout.annotations)[0]] == POST_LN


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: figures.post_pre_ln_figure(BertConfig()), TypeError, "expected an EncoderConfig, got BertConfig"),
        (lambda: figures.post_pre_ln_figure(RUNNING_CONFIG, title=" "), ValueError, "non-empty string for title"),
        (lambda: figures.block_figure(RUNNING_CONFIG, arrangement="pre_ln"), ValueError,
         r"expected arrangement to be one of \('post-LN', 'pre-LN'\), got 'pre_ln'"),
        (lambda: figures.block_figure(RUNNING_CONFIG, title=""), ValueError, "non-empty string for title"),
    ],
)  # fmt: skip
def test_the_block_figures_refuse_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()
