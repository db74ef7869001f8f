"""The figure builders moved out of lessons 01, 03 and 06: what they draw, and bad input refused."""

from __future__ import annotations

import numpy as np
import pytest
from transformers import BertConfig

from course_utils import figures, positional
from course_utils.encoder import EncoderConfig
from course_utils.figures import canvas

TOKENS = ["[CLS]", "the", "cat", "sat", "[SEP]"]


def test_sequential_steps_show_one_more_rnn_arrow_per_slider_step():
    fig = figures.sequential_steps_figure(TOKENS)
    T = len(TOKENS)
    assert len(fig.data) == 2 + (T - 1) + 1  # two rows of tokens, T - 1 arrows, the attention links
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == [str(k) for k in range(T)]
    for k, step in enumerate(steps):
        visible = step.args[0]["visible"]
        assert sum(visible[3:3 + T - 1]) == k  # k RNN arrows after k steps
        assert visible[1] == (k >= 1)  # attention's links, all at once, from step 1
    links = fig.data[1]
    assert sum(x is None for x in links.x) == T * (T - 1) // 2  # one curve per pair
    # the arcs spread above and below the attention row, so that every link can be counted: odd
    # spans above, even spans below, each span at its own height
    curves, curve = [], []
    for x, y in zip(links.x, links.y):
        if x is None:
            curves.append(curve)
            curve = []
        else:
            curve.append((x, y))
    peaks = {}
    for curve in curves:
        (x0, _), (x1, _) = curve[0], curve[-1]
        span = round(x1 - x0)
        top = max((y for _, y in curve), key=abs)
        peaks.setdefault(span, set()).add(round(top, 3))
    assert {span: len(p) for span, p in peaks.items()} == {span: 1 for span in range(1, T)}
    heights = {span: next(iter(p)) for span, p in peaks.items()}
    assert all((heights[s] > 0) == (s % 2 == 1) for s in heights)
    assert len(set(heights.values())) == T - 1
    # it opens at step 1, drawn as the slider's step 1 draws it: not at step 0, dots only
    assert fig.layout.sliders[0].active == 1
    assert [trace.visible is not False for trace in fig.data] == steps[1].args[0]["visible"]
    assert fig.layout.title.text == steps[1].args[1]["title.text"]
    assert "carried [CLS] 1 token to the right; attention links every pair" in fig.layout.title.text


@pytest.mark.parametrize("tokens", [["only"], [], ["a", 2]])
def test_sequential_steps_need_two_tokens(tokens):
    with pytest.raises(ValueError, match="expected at least two tokens"):
        figures.sequential_steps_figure(tokens)


def test_the_architecture_names_every_size_of_the_config():
    config = EncoderConfig(vocab_size=1500, dim=64, n_heads=4, hidden_dim=256, n_layers=2)
    fig = figures.architecture_figure(config, BertConfig(num_hidden_layers=4))
    texts = " ".join(a.text for a in fig.layout.annotations)
    for expected in ("1,500 × 64", "4 heads × 16", "64 → 256", "block × 2", "× 4 blocks, not 2", "(B, T, 64)"):
        assert expected in texts, expected
    # a phone's layout as narrow as its box, a laptop's with the notes in a column of their own;
    # nothing written on a line, an arrow or a box's edge in either
    layout = fig.to_plotly_json()["layout"]
    narrow = layout["meta"]["narrow_layout"]
    assert narrow["xaxis"]["range"][1] <= canvas.NARROW_DESIGN_PX
    assert canvas.clashes_of(layout) == [] and canvas.clashes_of(narrow) == []

    def top(notes, start):
        return next(n["y"] for n in notes if n.get("text", "").startswith(start))

    for notes in (layout["annotations"], narrow["annotations"]):  # each stage's shape under its name
        assert top(notes, "(B, T)") > top(notes, "input_ids")
        assert top(notes, "(B, T, 256) inside") > top(notes, "feed-forward")
    # on a phone each of BERT's notes comes right after the stage it concerns, in the column
    notes = narrow["annotations"]
    order = sorted((n["y"], n["text"]) for n in notes if not n.get("showarrow") and "(B, T" not in n["text"])
    names = [text.split("<br>")[0].split(":")[0] for _, text in order]
    assert names.index("<b>BERT-base adds</b> token-type embeddings") == names.index("word embeddings 1,500 × 64") + 1
    assert names[names.index("add & LayerNorm (output_layer_norm)") + 1] == "<b>BERT-base</b>"
    assert names[-1] == "<b>BERT-base adds</b> a pooler on [CLS]"
    with pytest.raises(TypeError, match="expected an EncoderConfig"):
        figures.architecture_figure(BertConfig(), BertConfig())
    with pytest.raises(TypeError, match="expected a transformers BertConfig"):
        figures.architecture_figure(config, config)


def test_the_block_figure_draws_a_post_ln_block_with_the_sizes_of_the_config():
    config = EncoderConfig(dim=8, n_heads=2, hidden_dim=32, n_layers=1)
    fig = figures.block_figure(config)
    texts = [a.text for a in fig.layout.annotations if a.text]
    joined = " ".join(texts)
    for expected in ("x: (T, 8)", "2 heads of 4", "8 → 32, GELU, → 8", "residual", "output (T, 8)"):
        assert expected in joined, expected
    # post-LN: top to bottom, each sub-layer comes back to a + on the stream, then a LayerNorm follows
    order = [t for t in texts if t in {"<b>+</b>", "LayerNorm"} or "self-attention" in t or "feed-forward" in t]
    assert [t.split("<br>")[0] for t in order] == [
        "multi-head self-attention", "<b>+</b>", "LayerNorm", "feed-forward network", "<b>+</b>", "LayerNorm"
    ]
    ys = {t.split("<br>")[0]: a.y for a in fig.layout.annotations for t in [a.text] if t}
    assert ys["multi-head self-attention"] > ys["feed-forward network"]
    assert fig.layout.title.text and fig.layout.meta["narrow_layout"]  # alt text; drawn at a phone's width
    with pytest.raises(TypeError, match="expected an EncoderConfig"):
        figures.block_figure(BertConfig())


def test_embedding_plus_position_arrows_end_where_the_sums_are():
    love, table = np.array([1.2, 0.4]), positional.sinusoidal_encoding(5, 2)
    fig = figures.embedding_plus_position_figure(love, "love", table, shown=(1, 4))
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    tips = np.array([(a.x, a.y) for a in arrows])
    for p in (1, 4):  # P from E to E + P, and E + P from the origin
        # figures carry 4 significant digits (course_utils.precision): half a unit of the 4th digit
        assert np.sum(np.all(np.isclose(tips, love + table[p], rtol=5e-4, atol=0), axis=1)) == 2
    labels = {a.text for a in fig.layout.annotations if not a.showarrow}
    assert labels == {"E (love)", "P1", "E + P1", "P4", "E + P4"}
    # the arrows that reach a position's marker stop short of it, so the marker shows
    assert sorted(a.standoff or 0 for a in arrows) == [0, 6, 6, 6, 6]
    # every position's label stands outside the circle: on the side its encoding points to
    points = next(t for t in fig.data if t.mode == "markers+text")
    for direction, position in zip(table, points.textposition):
        vertical, horizontal = position.split()
        if direction[1] < -0.38:
            assert vertical == "bottom"
        if direction[1] > 0.38:
            assert vertical == "top"
        if direction[0] < -0.38:
            assert horizontal == "left"
        if direction[0] > 0.38:
            assert horizontal == "right"
    assert points.textposition[4] == "bottom left"  # pos 4, down and left of the circle's centre
    assert fig.layout.meta["narrow_layout"]["height"] < fig.layout.height  # a phone: no empty height


@pytest.mark.parametrize(
    "embedding, table, shown, message",
    [
        (np.ones(3), np.ones((5, 2)), (1, 4), "expected an embedding of shape"),
        (np.ones(2), np.ones((5, 3)), (1, 4), "encodings of shape"),
        (np.ones(2), np.ones((5, 2)), (1, 5), "two positions in 0 .. 4"),
        (np.ones(2), np.ones((5, 2)), (1,), "two positions"),
    ],
)
def test_embedding_plus_position_refuses_bad_shapes(embedding, table, shown, message):
    with pytest.raises(ValueError, match=message):
        figures.embedding_plus_position_figure(embedding, "w", table, shown=shown)
