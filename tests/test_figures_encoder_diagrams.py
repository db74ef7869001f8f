"""Lesson 06's drawn diagrams: the feed-forward network on every token with the same weights, which
text reaches the teacher (with the held-out words' thread), and the tint of the LayerNorm boxes.
The drawn numbers are the computed ones, nothing is written on a line or a box's edge at either
width, and bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from plotly.colors import sample_colorscale

from course_utils import encoder, figures, plots
from course_utils.data import running_example
from course_utils.encoder import EncoderConfig
from course_utils.figures import canvas
from course_utils.figures.encoder import NORM_FILL
from course_utils.figures.encoder_diagrams import THREAD

RUNNING_CONFIG = EncoderConfig(vocab_size=6, max_position_embeddings=8, dim=4, n_heads=2, n_layers=2, hidden_dim=16)
SLICES = {"seen": 1669, "mixed": 2707, "unseen": 812}


def _layouts(fig):
    layout = fig.to_plotly_json()["layout"]
    return layout, layout["meta"]["narrow_layout"]


def test_every_layer_norm_box_is_tinted_in_one_strong_colour_in_both_layouts():
    """The difference between the two blocks survives a phone's stacking: every LayerNorm box, and
    only those, filled in one colour, its label black on the same colour (dark mode keeps both)."""
    for layout in _layouts(figures.post_pre_ln_figure(RUNNING_CONFIG)):
        norms = [a for a in layout["annotations"] if a.get("text") == "LayerNorm"]
        assert len(norms) == 4
        assert {a["bgcolor"] for a in norms} == {NORM_FILL} and {a["font"]["color"] for a in norms} == {"#000000"}
        tinted = [s for s in layout["shapes"] if s.get("fillcolor") == NORM_FILL]
        assert len(tinted) == 4  # one per LayerNorm, none elsewhere
        for a in norms:  # each label sits in a tinted box
            assert any(s["x0"] < a["x"] < s["x1"] and s["y0"] < a["y"] < s["y1"] for s in tinted)


def _running_ffn():
    example = running_example()
    torch.manual_seed(0)
    ffn = encoder.FeedForward(RUNNING_CONFIG).eval().double()
    return example, ffn, figures.feed_forward_weights(ffn)


def test_the_feed_forward_numbers_are_the_package_s_feed_forward():
    example, ffn, weights = _running_ffn()
    found = figures.feed_forward_numbers(example.embeddings, *weights)
    x = torch.tensor(example.embeddings)
    with torch.no_grad():
        np.testing.assert_allclose(found["hidden"], torch.nn.functional.gelu(ffn.lin1(x)).numpy(), atol=1e-12)
        np.testing.assert_allclose(found["output"], ffn(x).numpy(), atol=1e-12)
    assert found["hidden"].shape == (5, 16) and found["output"].shape == (5, 4)


def test_the_feed_forward_figure_draws_every_token_4_16_4_with_one_bar_per_weight_matrix():
    example, _, weights = _running_ffn()
    tokens = list(example.tokens)
    found = figures.feed_forward_numbers(example.embeddings, *weights)
    fig = figures.feed_forward_figure(example.embeddings, tokens, _running_ffn()[1])
    for layout in _layouts(fig):
        assert canvas.clashes_of(layout) == []
        cells = {s["name"]: s for s in layout["shapes"] if s.get("name", "").split(" ")[0] in {"x", "hidden", "output"}}
        assert len(cells) == 5 * (4 + 16 + 4)
        widths = [s["x1"] - s["x0"] for s in cells.values()]
        assert max(widths) - min(widths) <= 0.2  # one cell width (to the layout's 0.1 px): the hidden row is 4 times as long
        for key in ("x", "hidden", "output"):  # each cell's colour is its number's
            values = found[key]
            reach = np.abs(values).max()
            for (i, j), v in np.ndenumerate(values):
                expected = sample_colorscale(plots.DIVERGING, [float((v + reach) / (2 * reach))])[0]
                assert cells[f"{key} {i} {j}"]["fillcolor"] == expected
        # W1 and W2: one bar each, as tall as all five rows together
        rows = [cells[f"x {i} 0"] for i in range(5)]
        for name, label in (("W1", "W₁ (4 × 16)"), ("W2", "W₂ (16 × 4)")):
            bar = next(s for s in layout["shapes"] if s.get("name") == name)
            assert bar["y0"] <= rows[0]["y0"] and bar["y1"] >= rows[-1]["y1"]
            assert any(a.get("text") == label for a in layout["annotations"])
        labels = sorted((a["y"], a["text"]) for a in layout["annotations"] if a.get("name", "").startswith("token"))
        assert [t for _, t in labels] == ["[CLS]", "I", "love", "NLP", "[SEP]"]
    assert fig.layout.meta["narrow_layout"]["xaxis"]["range"][1] <= canvas.NARROW_DESIGN_PX


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(x=np.ones((5, 3))), r"weights1 of shape \(D=3, F\)"),
        (dict(tokens=["a"]), "one token name per row of x"),
        (dict(x=np.full((5, 4), np.nan)), "finite array"),
    ],
)
def test_the_feed_forward_figure_refuses_bad_input(change, message):
    example, ffn, _ = _running_ffn()
    args = dict(x=example.embeddings, tokens=list(example.tokens))
    args.update(change)
    with pytest.raises(ValueError, match=message):
        figures.feed_forward_figure(args["x"], args["tokens"], ffn)


def test_the_feed_forward_weights_come_from_a_gelu_feed_forward_only():
    _, ffn, (w1, b1, w2, b2) = _running_ffn()
    with pytest.raises(ValueError, match=r"bias2 \(4,\)"):
        figures.feed_forward_numbers(np.ones((5, 4)), w1, b1, w2, np.ones(5))
    with pytest.raises(TypeError, match="expected a FeedForward with linear layers lin1 and lin2"):
        figures.feed_forward_figure(np.ones((5, 4)), list("abcde"), w1)
    relu = encoder.FeedForward(EncoderConfig(dim=4, n_heads=2, hidden_dim=16, activation="relu"))
    with pytest.raises(ValueError, match="exact GELU"):
        figures.feed_forward_weights(relu)


def _task(**change):
    args = dict(pretraining=40_000, pretraining_held_out=28_313, labelled=5_527, labelled_held_out=0,
                slices=SLICES, held_out_slices=("mixed", "unseen"))  # fmt: skip
    args.update(change)
    return figures.sentiment_task_figure(**args)


def test_the_task_figure_labels_every_arrow_and_threads_the_held_out_words_past_the_labels():
    for layout in _layouts(_task()):
        assert canvas.clashes_of(layout) == []
        texts = " ".join(a.get("text", "") for a in layout["annotations"])
        for expected in ("40,000 sentences", "28,313 hold a", "5,527; holding a", "word: 0", "mixed: 2,707",
                         "unseen: 812", "seen: 1,669"):  # fmt: skip
            assert expected in texts, expected
        arrows = [a for a in layout["annotations"] if a.get("showarrow")]
        labels = {a["name"] for a in layout["annotations"] if a.get("name", "").startswith("label ")}
        assert len(arrows) == 4 and labels == {f"label {a['name']}" for a in arrows}  # every arrow labelled
        assert any("trains it" in a["text"] for a in layout["annotations"] if a.get("name") == "label pre-training")
        assert any("tests it" in a["text"] for a in layout["annotations"] if a.get("name") == "label tests")
        # no arrowhead inside a box
        boxes = [s for s in layout["shapes"] if s["type"] == "rect" and s.get("fillcolor") == "white"]
        for a in arrows:
            assert not any(b["x0"] < a["x"] < b["x1"] and b["y0"] < a["y"] < b["y1"] for b in boxes), a["name"]
        # the thread: a band in the pre-training text, the teacher, fine-tuning and the test slices;
        # none in the labelled sentences
        bands = {s["name"] for s in layout["shapes"] if s.get("fillcolor") == THREAD and s["name"].startswith("thread in")}
        assert bands == {"thread in pre-training text", "thread in teacher", "thread in fine-tuning",
                         "thread in test sentences"}  # fmt: skip
        band = next(s for s in layout["shapes"] if s.get("name") == "thread in test sentences")
        seen = next(a for a in layout["annotations"] if a.get("name") == "test sentences")
        assert band["y0"] >= seen["y"] + 2 * 1.3 * 11 - 0.2  # beside mixed and unseen, not the header or seen
    # a labelled sentence with a held-out word would be drawn on the thread too
    layout = _layouts(_task(labelled_held_out=3))[0]
    assert any(s.get("name") == "thread in labelled sentences" for s in layout["shapes"])


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(pretraining_held_out=50_000), "held-out counts within their totals"),
        (dict(labelled=-1), "expected labelled to be a count"),
        (dict(slices={}), "non-empty mapping"),
        (dict(held_out_slices=("rare",)), "held_out_slices among the slices"),
        (dict(held_out_slices="mixed"), "held_out_slices among the slices"),
    ],
)
def test_the_task_figure_refuses_bad_input(change, message):
    with pytest.raises(ValueError, match=message):
        _task(**change)
