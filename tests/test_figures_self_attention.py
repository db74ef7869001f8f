"""Lesson 04's one-token figure and explorer in course_utils.figures: the scores, weights and
stacked weighted values are those of scaled dot-product attention, the axes stay put, bad inputs
get clear errors, and the kernel-free twin replays the drawing function."""

from __future__ import annotations

import numpy as np
import pytest

from course_utils import attention, figures
from tests.explorer_cases import assert_twin_replays_draw

TOKENS = ["[CLS]", "i", "love", "nlp", "[SEP]"]
RNG = np.random.default_rng(3)
Q, K = RNG.standard_normal((5, 4)), RNG.standard_normal((5, 4))
V = RNG.standard_normal((5, 3))  # d_v = 3 != d_k = 4


def as_array(values) -> np.ndarray:
    return np.array(values, dtype=float)


@pytest.mark.parametrize("query", range(5))
def test_the_panels_are_the_steps_of_scaled_dot_product_attention(query):
    fig = figures.qkv_token_figure(Q, K, V, TOKENS, query)
    scores, weights, *stacked, output = fig.data
    outputs, expected_weights = attention.scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(as_array(scores.y), K @ Q[query] / 2.0, rtol=1e-3)
    np.testing.assert_allclose(as_array(weights.y), expected_weights[query], rtol=1e-3)
    assert len(stacked) == len(TOKENS)
    for j, bars in enumerate(stacked):
        np.testing.assert_allclose(as_array(bars.y), expected_weights[query, j] * V[j], rtol=1e-3, atol=1e-12)
        assert TOKENS[j] in bars.name
    np.testing.assert_allclose(as_array(output.y), outputs[query], rtol=1e-3)
    np.testing.assert_allclose(sum(as_array(b.y) for b in stacked), outputs[query], rtol=1e-2, atol=1e-3)
    best = int(np.argmax(expected_weights[query]))
    assert fig.layout.title.text == (
        f"Query {TOKENS[query]}:<br>largest weight {expected_weights[query, best]:.2f}, on {TOKENS[best]}"
    )


def test_the_axes_cover_every_query_and_do_not_move():
    drawn = [figures.qkv_token_figure(Q, K, V, TOKENS, i) for i in range(5)]
    ranges = {(tuple(f.layout.yaxis.range), tuple(f.layout.yaxis3.range)) for f in drawn}
    assert len(ranges) == 1
    (score_range, value_range), = ranges
    for fig in drawn:
        assert score_range[0] <= min(fig.data[0].y) and max(fig.data[0].y) <= score_range[1]
        ys = np.array([as_array(b.y) for b in fig.data[2:-1]])  # (T, d_v)
        assert value_range[0] <= np.where(ys < 0, ys, 0).sum(0).min()
        assert np.where(ys > 0, ys, 0).sum(0).max() <= value_range[1]
    assert tuple(drawn[0].layout.yaxis2.range) == (0, 1.02)


def test_the_explorer_offers_every_token_and_its_twin_replays_draw():
    explorer = figures.qkv_explorer(Q, K, V, TOKENS, default=2)
    (control,) = explorer.controls
    assert control.labels() == [f"{i}: {t}" for i, t in enumerate(TOKENS)]
    twin = explorer.static()
    (menu,) = twin.layout.updatemenus
    assert menu.active == 2
    assert_twin_replays_draw(explorer, [button.to_plotly_json() for button in menu.buttons])


@pytest.mark.parametrize(
    "arguments, message",
    [
        ((Q, K, V, TOKENS[:4], 0), "T tokens"),
        ((Q, K[:, :3], V, TOKENS, 0), r"keys \(T, d_k\)"),
        ((Q[0], K, V, TOKENS, 0), r"expected queries \(T, d_k\)"),
        ((Q, K, V, TOKENS, 5), "token index in 0 .. 4"),
        ((Q, K, V, TOKENS, True), "token index"),
    ],
)
def test_bad_inputs_get_clear_errors(arguments, message):
    with pytest.raises(ValueError, match=message):
        figures.qkv_token_figure(*arguments)
