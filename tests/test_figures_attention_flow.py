"""course_utils.figures.attention_flow: the information-flow diagram of lesson 04."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils import attention, figures, plots, rendering

TOKENS = ["[CLS]", "I", "love", "NLP", "[SEP]"]


def edges(fig):
    """(query index, key index, width) of every line of the figure, in drawing order."""
    return [(int(t.y[0]), int(t.y[-1]), t.line.width) for t in fig.data if t.mode == "lines"]


def seeded_weights(seed=0, shape=(5, 5)):
    return attention.softmax(np.random.default_rng(seed).standard_normal(shape) * 2)


def test_each_query_is_joined_to_its_strongest_keys_largest_first():
    weights = seeded_weights()
    fig = figures.attention_flow(weights, TOKENS, title="T", top_k=2)
    found = edges(fig)
    assert len(found) == 5 * 2
    for i in range(5):
        expected = list(np.argsort(-weights[i])[:2])
        assert [j for q, j, _ in found if q == i] == expected


def test_line_width_is_proportional_to_the_weight():
    weights = seeded_weights(1)
    fig = figures.attention_flow(weights, TOKENS, title="T", top_k=3, max_width=10.0)
    for i, j, width in edges(fig):
        assert width == pytest.approx(max(0.5, 10.0 * plots.significant(weights[i, j])))
    widths = [w for _, _, w in edges(fig)]
    assert max(widths) <= 10.0


def test_hover_names_the_pair_and_the_weight_and_colours_follow_the_query():
    weights = np.array([[0.9, 0.1], [0.25, 0.75]])
    fig = figures.attention_flow(weights, ["it", "cat"], title="T", top_k=1)
    lines = [t for t in fig.data if t.mode == "lines"]
    assert [t.hovertemplate for t in lines] == [
        "it → it: weight 0.900<extra></extra>",
        "cat → cat: weight 0.750<extra></extra>",
    ]
    assert [t.line.color for t in lines] == [plots.color(0), plots.color(1)]
    assert [t.showlegend for t in lines] == [True, True]


def test_one_legend_entry_per_query_token():
    fig = figures.attention_flow(seeded_weights(2), TOKENS, title="T", top_k=3)
    shown = [t.name for t in fig.data if t.mode == "lines" and t.showlegend]
    assert shown == TOKENS


def test_both_columns_of_tokens_are_labelled_and_token_zero_is_on_top():
    keys = ["a", "b", "c"]
    fig = figures.attention_flow(seeded_weights(3, (2, 3)), ["x", "y"], key_tokens=keys, title="T", top_k=1)
    columns = {t.name: t for t in fig.data if t.mode == "markers+text"}
    assert list(columns["queries"].text) == ["x", "y"] and set(columns["queries"].x) == {0.0}
    assert list(columns["keys"].text) == keys and set(columns["keys"].x) == {1.0}
    low, high = fig.layout.yaxis.range
    assert low > high  # reversed: row 0 at the top, as the sentence is read
    assert fig.layout.title.text == "T"


def test_ties_go_to_the_earlier_key():
    fig = figures.attention_flow(np.full((1, 4), 0.25), ["q"], key_tokens=list("abcd"), title="T", top_k=2)
    assert [j for _, j, _ in edges(fig)] == [0, 1]


@settings(max_examples=25, deadline=None)
@given(t_q=st.integers(1, 6), t_k=st.integers(1, 6), seed=st.integers(0, 10_000), data=st.data())
def test_any_softmax_output_draws_top_k_lines_per_query(t_q, t_k, seed, data):
    top_k = data.draw(st.integers(1, t_k))
    weights = seeded_weights(seed, (t_q, t_k))
    fig = figures.attention_flow(
        weights, [f"q{i}" for i in range(t_q)], key_tokens=[f"k{j}" for j in range(t_k)], title="T", top_k=top_k
    )
    found = edges(fig)
    assert len(found) == t_q * top_k
    shown = plots.significant(weights)  # the figure ranks the weights it shows: two that round alike tie
    for i in range(t_q):  # the drawn keys hold the top_k largest weights of the row
        drawn = sorted(shown[i, [j for q, j, _ in found if q == i]])
        assert drawn == sorted(shown[i])[-top_k:]


@pytest.mark.parametrize(
    "weights, kwargs, message",
    [
        (np.ones(5) / 5, {}, r"expected weights of shape \(T_q, T_k\), got an array of shape \(5,\)"),
        (np.ones((4, 5)) / 5, {}, r"expected weights of shape \(len\(tokens\)=5, len\(key_tokens\)=5\), got \(4, 5\)"),
        (-np.ones((5, 5)), {}, "expected non-empty, finite, non-negative attention weights"),
        (np.full((5, 5), np.nan), {}, "expected non-empty, finite, non-negative attention weights"),
        (np.ones((5, 5)) / 5, {"top_k": 0}, "expected top_k to be an integer from 1 to T_k=5, got 0"),
        (np.ones((5, 5)) / 5, {"top_k": 6}, "expected top_k to be an integer from 1 to T_k=5, got 6"),
        (np.ones((5, 5)) / 5, {"top_k": 1.5}, "expected top_k to be an integer from 1 to T_k=5, got 1.5"),
        (np.ones((5, 5)) / 5, {"max_width": 0}, "expected a positive max_width"),
        (np.ones((5, 5)) / 5, {"title": " "}, "expected a non-empty string for title"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(weights, kwargs, message):
    with pytest.raises(ValueError, match=message):
        figures.attention_flow(weights, TOKENS, **{"title": "T", **kwargs})


def test_the_figure_goes_through_the_course_renderer():
    bundle = rendering.figure_mimebundle(figures.attention_flow(seeded_weights(), TOKENS, title="Flow"))
    assert 'aria-label="Flow"' in bundle["text/html"]
