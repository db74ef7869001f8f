"""Lesson 05's figure and explorer in course_utils.figures: the masks of each kind, the masked scores
drawn as blocked cells, weights equal to the package's attention, and a twin that replays draw."""

from __future__ import annotations

import re

import numpy as np
import pytest

from course_utils import attention, figures, masking
from tests.explorer_cases import assert_twin_replays_draw

ATTENTION_MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
TOKENS = [["[CLS]", "a", "[SEP]", "[PAD]", "[PAD]"], ["[CLS]", "b", "c", "d", "[SEP]"]]


def scores(seed=0):
    return np.random.default_rng(seed).standard_normal((2, 5, 5))


@pytest.mark.parametrize("b", [0, 1])
def test_mask_of_each_kind(b):
    row = ATTENTION_MASK[b]
    real = row.astype(bool)
    causal = np.tri(5, dtype=bool)
    expected = {
        "none": np.ones((5, 5), dtype=bool),
        "padding": np.broadcast_to(real, (5, 5)),
        "causal": causal,
        "padding & causal": causal & real[None, :],
    }
    for kind, mask in expected.items():
        got = figures.mask_of_kind(kind, row)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, mask, err_msg=kind)
    both = masking.causal_mask(5) & masking.padding_mask(ATTENTION_MASK)[b, 0]
    np.testing.assert_array_equal(figures.mask_of_kind("padding & causal", row), both)


def test_mask_of_an_unknown_kind_or_shape_is_refused():
    with pytest.raises(ValueError, match="expected a mask kind among"):
        figures.mask_of_kind("future", ATTENTION_MASK[0])
    with pytest.raises(ValueError, match=r"expected one sentence's attention_mask of shape \(T,\)"):
        figures.mask_of_kind("padding", ATTENTION_MASK)


def test_the_figure_draws_raw_and_masked_scores_and_the_package_weights():
    rng = np.random.default_rng(3)
    queries, keys = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    raw = queries @ keys.T / 2.0  # (T, T), d_k = 4
    mask = masking.causal_mask(5)
    fig = figures.masked_attention_figure(raw, mask, TOKENS[1], title="t", decimals=4)
    assert [a.text for a in fig.layout.annotations] == [
        "scores", "masked scores (grey: blocked)", "weights (grey: blocked, exactly 0)"
    ]
    raw_trace, masked_trace, grey_trace, weights_trace, grey_weights = fig.data
    np.testing.assert_allclose(np.array(raw_trace.z, dtype=float), raw, rtol=5e-4, atol=1e-12)  # 4 significant digits (course_utils.precision)
    masked = np.array(masked_trace.z, dtype=float)
    assert np.isnan(masked[~mask]).all()
    np.testing.assert_allclose(masked[mask], raw[mask], rtol=5e-4, atol=1e-12)  # 4 significant digits (course_utils.precision)
    np.testing.assert_array_equal(np.array(grey_trace.text) == "blocked", ~mask)
    _, expected = attention.scaled_dot_product_attention(queries, keys, np.eye(5), mask)
    weights = np.array(weights_trace.z, dtype=float)
    np.testing.assert_allclose(weights[mask], expected[mask], rtol=5e-4, atol=1e-12)  # 4 significant digits
    assert np.isnan(weights[~mask]).all()  # a blocked weight (exactly 0 in the package) is drawn grey, not as 0.00
    assert (expected[~mask] == 0).all()
    np.testing.assert_array_equal(np.array(grey_weights.text) == figures.masking.WEIGHT_BLOCKED_TEXT, ~mask)
    assert (weights_trace.zmin, weights_trace.zmax) == (0.0, 1.0)
    assert [t.xaxis for t in fig.data] == ["x", "x2", "x2", "x3", "x3"]  # side by side, one panel each
    # each colour bar stands in the gap after its panel, clear of the next panel's row labels
    for bar_trace, next_axis in ((raw_trace, fig.layout.xaxis2), (masked_trace, fig.layout.xaxis3)):
        assert bar_trace.colorbar.xanchor == "left"
        assert next_axis.domain[0] - bar_trace.colorbar.x >= 0.15  # about 100 px of a laptop's plot: bar and labels


def test_the_figure_stacks_panels_and_keeps_a_fully_blocked_row_finite():
    mask = np.ones((5, 5), dtype=bool)
    mask[0] = False  # a query that may attend to nothing
    fig = figures.masked_attention_figure(
        scores()[0], mask, TOKENS[0], title="t", panels=("masked scores", "weights"), side_by_side=False
    )
    weights = np.array(fig.data[-2].z, dtype=float)
    # a fully blocked row: every key blocked, so every cell grey (the package's weights are uniform there,
    # as with finfo(dtype).min, not nan)
    assert np.isnan(weights[0]).all() and np.isfinite(weights[1:]).all()
    assert [t.yaxis for t in fig.data] == ["y", "y", "y2", "y2"]
    assert fig.layout.xaxis.title.text is None and fig.layout.xaxis2.title.text == "key (attended to)"


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(scores=np.zeros((5, 4))), ValueError, r"expected scores of shape \(T, T\) with T = len\(tokens\) = 5"),
        (dict(mask=np.ones((5, 5))), TypeError, "expected a boolean mask"),
        (dict(mask=np.ones((3, 5), dtype=bool)), ValueError, "expected a mask broadcastable to the scores"),
        (dict(panels=("weights", "weights")), ValueError, "expected distinct panels"),
        (dict(panels=("attention",)), ValueError, "expected distinct panels"),
        (dict(title=""), ValueError, "non-empty string for title"),
    ],
)
def test_the_figure_refuses_bad_arguments(kwargs, error, message):
    arguments = dict(scores=np.zeros((5, 5)), mask=np.ones((5, 5), dtype=bool), tokens=TOKENS[0], title="t")
    arguments.update(kwargs)
    with pytest.raises(error, match=message):
        figures.masked_attention_figure(
            arguments.pop("scores"), arguments.pop("mask"), arguments.pop("tokens"), **arguments
        )


def test_the_explorer_offers_every_sentence_with_every_mask_and_its_twin_replays_draw():
    explorer = figures.masking_explorer(TOKENS, scores(), ATTENTION_MASK, default=(1, "causal"))
    (control,) = explorer.controls
    assert control.labels() == [f"sentence {b} · {kind}" for b in (1, 2) for kind in figures.MASK_KINDS]
    twin = explorer.static()
    (menu,) = twin.layout.updatemenus
    assert menu.active == control.values.index((1, "causal"))
    assert_twin_replays_draw(explorer, [button.to_plotly_json() for button in menu.buttons])
    assert twin.layout.title.text == "Sentence 2, mask: causal (10 of 25 scores blocked)"


def test_the_explorer_draws_the_mask_it_names():
    explorer = figures.masking_explorer(TOKENS, scores(), ATTENTION_MASK)
    fig = explorer.figure(view=(0, "padding & causal"))
    grey = np.array(fig.data[1].text) == "blocked"
    np.testing.assert_array_equal(grey, ~figures.mask_of_kind("padding & causal", ATTENTION_MASK[0]))
    assert fig.layout.title.text.startswith("Sentence 1, mask: padding & causal")


@pytest.mark.parametrize(
    "tokens, raw, attention_mask, message",
    [
        (TOKENS, scores(), ATTENTION_MASK[0], r"expected attention_mask of shape \(B, T\)"),
        (TOKENS, scores()[:, :4], ATTENTION_MASK, r"expected scores of shape \(B, T, T\) = \(2, 5, 5\)"),
        (TOKENS[:1], scores(), ATTENTION_MASK, "expected B=2 lists of T=5 tokens"),
    ],
)
def test_the_explorer_refuses_inconsistent_inputs(tokens, raw, attention_mask, message):
    with pytest.raises(ValueError, match=message):
        figures.masking_explorer(tokens, raw, attention_mask)


# --------------------------------------------------------------------------------------------
# mask_placement_figure: the mask before and after the softmax


def _placement(seed=0):
    raw = np.random.default_rng(seed).standard_normal((3, 5))  # 3 real queries, 5 keys
    mask = np.array([[True, True, True, False, False]])  # (1, T_k): the last two keys are [PAD]
    right = masking.safe_masked_softmax(raw, mask)
    wrong = attention.softmax(raw) * mask
    return right, wrong, mask


def test_the_placement_figure_draws_both_weights_with_their_row_sums():
    right, wrong, mask = _placement()
    fig = figures.mask_placement_figure(right, wrong, mask, TOKENS[0][:3], TOKENS[0], title="t")
    assert [a.text for a in fig.layout.annotations] == list(figures.masking.PLACEMENT_PANELS)
    # the panels are named by what they do, not by a side: the prose says "the second panel", and
    # on a phone the second stands under the first
    assert figures.masking.PLACEMENT_PANELS == ("mask, then softmax (correct)", "softmax, then mask (wrong)")
    right_trace, right_grey, wrong_trace, wrong_grey = fig.data
    for trace, weights in ((right_trace, right), (wrong_trace, wrong)):
        z = np.array(trace.z, dtype=float)
        # the two [PAD] keys no query may attend to are one grey column
        assert list(trace.x) == ["[CLS]", "a", "[SEP]", "[PAD] ×2", figures.masking.SUM_LABEL]
        np.testing.assert_allclose(z[:, :3], weights[:, :3], atol=5e-3)  # rounded to 2 decimals
        assert np.isnan(z[:, 3]).all()  # grey, not a number
        np.testing.assert_allclose(z[:, -1], weights.sum(axis=1), atol=5e-3)
    assert np.allclose(np.array(right_trace.z, dtype=float)[:, -1], 1.0)
    assert (np.array(wrong_trace.z, dtype=float)[:, -1] < 0.99).all()
    for grey in (right_grey, wrong_grey):
        assert (np.array(grey.text)[:, 3] == "0").all() and (np.array(grey.text)[:, [0, 1, 2, 4]] == "").all()
    assert not any(t.showscale for t in fig.data)  # the values are written: no colour bar
    assert fig.layout.title.text == "t"


def test_the_placement_figure_keeps_keys_blocked_for_some_queries_only():
    raw = np.random.default_rng(1).standard_normal((4, 4))
    causal = masking.causal_mask(4)
    right, wrong = masking.safe_masked_softmax(raw, causal), attention.softmax(raw) * causal
    fig = figures.mask_placement_figure(right, wrong, causal, list("abcd"), list("abcd"), title="t")
    assert list(fig.data[0].x) == ["a", "b", "c", "d", figures.masking.SUM_LABEL]  # nothing merged
    np.testing.assert_array_equal(np.array(fig.data[1].text)[:, :4] == "0", ~causal)


def test_the_placement_figure_refuses_bad_input():
    right, wrong, mask = _placement()
    with pytest.raises(ValueError, match=r"expected wrong of shape \(len\(query_labels\), len\(key_labels\)\)"):
        figures.mask_placement_figure(right, wrong[:, :4], mask, TOKENS[0][:3], TOKENS[0], title="t")
    with pytest.raises(TypeError, match="expected a boolean mask"):
        figures.mask_placement_figure(right, wrong, mask.astype(int), TOKENS[0][:3], TOKENS[0], title="t")
    with pytest.raises(ValueError, match="broadcastable to the weights"):
        figures.mask_placement_figure(right, wrong, mask[:, :4], TOKENS[0][:3], TOKENS[0], title="t")
    with pytest.raises(ValueError, match="non-empty string for title"):
        figures.mask_placement_figure(right, wrong, mask, TOKENS[0][:3], TOKENS[0], title=" ")


# --------------------------------------------------------------------------------------------
# The padding mask broadcast against the scores; three kinds of model; MLM's 80/10/10


def _grid(text: str) -> np.ndarray:
    """A box's lines of █ (may attend) and · (blocked) as a boolean array."""
    lines = [re.sub(r"<[^>]+>", "", line).replace("\u00a0", " ").rstrip() for line in text.split("<br>")]
    marks = [line.split(" ")[-1] for line in lines if line and set(line.split(" ")[-1]) <= {"█", "·"}]
    return np.array([[c == "█" for c in m] for m in marks])


def test_the_broadcast_figure_draws_the_mask_the_scores_meet():
    fig = figures.mask_broadcast_figure(ATTENTION_MASK, TOKENS[0], n_heads=2, sentence=0)
    notes = [a["text"] for a in fig.to_plotly_json()["layout"]["annotations"] if not a.get("showarrow")]
    attention_box, mask_box, head0, head1 = notes
    pad = masking.padding_mask(ATTENTION_MASK)  # (B, 1, 1, T)
    assert "(B, 1, 1, T) = (2, 1, 1, 5)" in mask_box
    np.testing.assert_array_equal(_grid(mask_box), pad[:, 0, 0])
    scores_mask = np.broadcast_to(pad, (2, 2, 5, 5))  # what attention's (B, H, T, T) scores meet
    for h, box in enumerate([head0, head1]):
        np.testing.assert_array_equal(_grid(box), scores_mask[0, h])
        # the [PAD] key columns: tinted dots in every row, and a ruler under the grid, r real, P [PAD]
        plain = [re.sub(r"<[^>]+>", "", line).replace("\u00a0", " ").rstrip() for line in box.split("<br>")]
        ruler = plain[-1].split(" ")[-1]
        assert plain[-1].startswith("key") and ruler == "".join("r" if v else "P" for v in ATTENTION_MASK[0])
        tinted = re.findall(r'<span style="color:([^"]+)"><b>(·+)</b></span>', box)
        assert len(tinted) == 5 and all(c == figures.masking.PAD_TINT and len(d) == 2 for c, d in tinted)
    assert "1 1 1 0 0" in attention_box


def test_the_model_masks_are_padding_causal_and_cross():
    source, target = TOKENS[0], ["<s>", "x", "y"]
    fig = figures.model_masks_figure(source, target, ATTENTION_MASK[0])
    allowed = [np.isfinite(np.array(t.z, dtype=float)) for t in fig.data if t.name == "may attend"]
    encoder, decoder, cross = allowed
    np.testing.assert_array_equal(encoder, figures.mask_of_kind("padding", ATTENTION_MASK[0]))
    np.testing.assert_array_equal(decoder, masking.causal_mask(3))
    np.testing.assert_array_equal(cross, np.broadcast_to(ATTENTION_MASK[0].astype(bool), (3, 5)))
    blocked = [np.isfinite(np.array(t.z, dtype=float)) for t in fig.data if t.name == "✗"]
    for may, may_not in zip(allowed, blocked):
        assert (may ^ may_not).all()  # every cell one or the other, so each reads without colour
    # a set text size: plotly drops text of the "auto" size from cells as small as a laptop's encoder panel
    assert {t.textfont.size for t in fig.data} == {figures.masking.MARK_FONT_PX}
    # the third panel's row labels and title keep clear of the decoder panel: a wide gap between panels
    assert fig.layout.xaxis3.domain[0] - fig.layout.xaxis2.domain[1] >= 0.12
    # key labels: upright where they fit a phone's column, vertical (never slanted into each other) where not
    long = figures.model_masks_figure(TOKENS[0] * 2, target, np.tile(ATTENTION_MASK[0], 2))
    assert (fig.layout.xaxis2.tickangle, long.layout.xaxis.tickangle, long.layout.xaxis3.tickangle) == (0, -90, -90)


def test_the_mlm_figure_follows_each_position_through_the_80_10_10():
    original = np.array([2, 10, 11, 12, 13, 14, 3, 0])  # [CLS] ... [SEP] [PAD]
    maskable = np.array([False, True, True, True, True, True, False, False])
    masked = np.array([2, 4, 99, 12, 13, 14, 3, 0])  # 10 -> [MASK] (id 4), 11 -> random, 12 kept
    labels = np.array([-100, 10, 11, 12, -100, -100, -100, -100])
    outcomes = figures.mlm_outcomes(original, masked, labels, maskable, mask_token_id=4)
    assert [figures.MLM_OUTCOMES[k] for k in outcomes] == [
        "special: never chosen", "chosen → [MASK]", "chosen → random", "chosen → kept", "not chosen",
        "not chosen", "special: never chosen", "special: never chosen",
    ]
    names = ["[CLS]", "a", "b", "c", "d", "e", "[SEP]", "[PAD]"]
    read = ["[CLS]", "[MASK]", "zz", "c", "d", "e", "[SEP]", "[PAD]"]
    fig = figures.mlm_figure(names, read, labels, outcomes)
    table = next(t for t in fig.data if t.type == "heatmap" and t.name != "shares")
    text = np.array(table.text)
    assert list(text[:, 0]) == names and list(text[:, 2]) == read
    assert list(text[:, 3]) == ["−100", "10", "11", "12", "−100", "−100", "−100", "−100"]
    assert list(text[1:4, 1]) == ["→ [MASK]", "→ random", "→ kept"]
    assert "3 of 5 tokens chosen" in fig.layout.title.text
    with pytest.raises(ValueError, match="original id at maskable chosen positions"):
        figures.mlm_outcomes(original, masked, np.where(labels == 10, 11, labels), maskable, 4)


def test_the_mlm_outcomes_are_the_packages_draws(tokenizer):
    batch = tokenizer(["the cat is happy, but it is not calm."] * 40, return_special_tokens_mask=True,
                      return_tensors="np")
    ids = batch["input_ids"]
    maskable = (batch["attention_mask"] == 1) & (batch["special_tokens_mask"] == 0)
    masked, labels = masking.mlm_mask(ids, maskable, mask_token_id=tokenizer.mask_token_id,
                                      vocab_size=len(tokenizer), generator=np.random.default_rng(0))
    outcomes = np.array([figures.mlm_outcomes(ids[b], masked[b], labels[b], maskable[b], tokenizer.mask_token_id)
                         for b in range(len(ids))])
    chosen = labels != masking.IGNORE_INDEX
    assert ((outcomes >= 2) == chosen).all() and ((outcomes == 0) == ~maskable).all()
    assert ((outcomes == 2) == (chosen & (masked == tokenizer.mask_token_id))).all()


def test_the_mlm_bars_draw_the_shares_mlm_mask_draws():
    import inspect

    defaults = {k: v.default for k, v in inspect.signature(masking.mlm_mask).parameters.items()}
    shares = figures.mlm_shares()
    assert shares == pytest.approx(dict(select=defaults["select_prob"], mask=defaults["mask_prob"],
                                        random=defaults["random_prob"],
                                        kept=1 - defaults["mask_prob"] - defaults["random_prob"]))
    outcomes = np.array([0, 1, 2, 3, 4, 0])
    fig = figures.mlm_figure(list("abcdef"), list("abcdef"), np.array([-100, -100, 1, 2, 3, -100]), outcomes)
    top, bottom = (t for t in fig.data if t.name == "shares")
    # the top bar: every maskable token, not chosen then chosen, end to end (the bricks' x edges)
    assert list(top.x) == pytest.approx([0, 1 - shares["select"], 1]) and list(top.customdata[0]) == ["not chosen", "chosen"]
    # the bottom bar: the chosen share stretched to the full width, 80/10/10
    assert list(np.diff(bottom.x)) == pytest.approx([shares["mask"], shares["random"], shares["kept"]])
    assert bottom.x[0] == 0 and bottom.x[-1] == pytest.approx(1)
    assert list(bottom.text[0]) == ["→ [MASK] 80%", "10%", "10%"] and list(top.text[0]) == ["not chosen 85%", "15%"]
    table = next(t for t in fig.data if t.type == "heatmap" and t.name != "shares")
    assert len(table.text) == 6  # the table's rows, one a position
    stretch = [t for t in fig.data if t.name == "the chosen share, stretched"]
    assert sorted(t.x[0] for t in stretch) == pytest.approx([1 - shares["select"], 1.0])  # from the chosen segment


def test_the_blocked_row_figure_sends_blocked_scores_to_minus_infinity_and_shows_each_fill():
    row_scores, row_mask = np.array([2.0, 1.0, 0.5, 3.0]), np.array([True, True, True, False])
    row, nothing = np.array([1.5, -0.3, 0.8]), np.zeros(3, dtype=bool)
    with np.errstate(invalid="ignore"):
        minus_inf = attention.softmax(np.where(nothing, row, -np.inf), axis=-1)  # every weight nan
    fill_min = attention.softmax(np.where(nothing, row, np.finfo(row.dtype).min), axis=-1)  # uniform
    answers = {"fill -inf": minus_inf, "fill minimum": fill_min, "zeros": masking.safe_masked_softmax(row, nothing)}
    fig = figures.blocked_row_figure(row_scores, row_mask, answers)
    scores, before, unmasked, masked = (t for t in fig.data if t.type == "bar")
    # panel 1: the allowed scores as bars, the blocked one an outline of its old score and an arrow down to −∞
    np.testing.assert_allclose(np.array(scores.y, dtype=float)[:3], row_scores[:3])
    assert np.isnan(float(scores.y[3])) and float(before.y[3]) == 3.0 and np.isnan(np.array(before.y[:3], dtype=float)).all()
    (arrow,) = [a for a in fig.layout.annotations if a.showarrow]
    assert arrow.x == "3" and arrow.ay == 0 and arrow.y < min(row_scores)  # down, out of the scores
    assert any(a.text == "<b>−∞</b>" for a in fig.layout.annotations)
    # panel 2: the softmax of the allowed scores alone, over the weights without the mask
    np.testing.assert_allclose(np.array(masked.y, dtype=float), [*attention.softmax(row_scores[:3]), 0.0], rtol=5e-4)
    np.testing.assert_allclose(np.array(unmasked.y, dtype=float), attention.softmax(row_scores), rtol=5e-4)
    assert masked.text[3] == "0.00"
    # panel 3: one row of cells a fill, NaN grey, uniform thirds, zeros
    cells, grey = (t for t in fig.data if t.type == "heatmap")
    assert list(cells.y) == list(answers)
    np.testing.assert_array_equal(np.array(grey.text) == "NaN", np.isnan(np.array(list(answers.values()))))
    np.testing.assert_allclose(np.array(cells.z, dtype=float)[1:], [[1 / 3] * 3, [0.0] * 3], atol=5e-4)
    with pytest.raises(ValueError, match="allowing a key"):
        figures.blocked_row_figure(row_scores, np.zeros(4, dtype=bool), answers)
