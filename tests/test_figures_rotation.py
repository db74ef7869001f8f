"""Positions as turns on a circle: lesson 03's pair moved k positions on, and lesson 09's RoPE
pair. The points drawn are the package's encodings and rotations (positional, rope), and the angles
written are the turns between them."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from course_utils import figures, positional, rope
from course_utils.figures.rotation import rope_pair_numbers

TABLE = positional.sinusoidal_encoding(64, 32)  # (T, d_model): lesson 03's table
RNG = np.random.default_rng(3)
Q, K = RNG.standard_normal(16), RNG.standard_normal(16)  # lesson 09's query and key


def arrow_tips(fig):
    return np.array([(a.x, a.y) for a in fig.layout.annotations if a.showarrow])


@pytest.mark.parametrize("k, starts, pair", [(3, (0, 7), 0), (5, (2, 30), 1)])
def test_the_shift_figure_draws_both_starts_and_their_moved_positions(k, starts, pair):
    fig = figures.position_shift_figure(TABLE, k, starts, pair)
    expected = [TABLE[p + s, 2 * pair:2 * pair + 2] for p in starts for s in (0, k)]
    np.testing.assert_allclose(arrow_tips(fig), expected, rtol=5e-4, atol=1e-9)
    omega = positional.frequencies(32)[2 * pair]
    arcs = [t for t in fig.data if t.mode == "lines+markers"]
    assert len(arcs) == 2
    for arc, p in zip(arcs, starts):
        ends = np.array([[arc.x[0], arc.y[0]], [arc.x[-1], arc.y[-1]]])
        # each arc turns by omega k, from the start's direction to the moved position's
        turned = np.angle((ends[1, 0] + 1j * ends[1, 1]) / (ends[0, 0] + 1j * ends[0, 1]))
        assert np.isclose(turned, np.angle(np.exp(-1j * omega * k)), atol=2e-3)
        direction = TABLE[p, 2 * pair:2 * pair + 2]
        assert np.isclose(np.angle(ends[0, 0] + 1j * ends[0, 1]), np.arctan2(direction[1], direction[0]), atol=2e-3)
    labels = [a for a in fig.layout.annotations if not a.showarrow and "rad" in a.text]
    assert len(labels) == 2 and all(f"{omega * k:.2f} rad" in a.text for a in labels)
    # each angle's label stands outside the circle, at the end of a leader line from its own arc
    leaders = [t for t in fig.data if t.name == "leader"]
    assert len(leaders) == 2
    for label, leader, arc in zip(labels, leaders, arcs):
        assert np.hypot(label.x, label.y) > 1.2
        inner, outer = np.hypot(leader.x, leader.y)
        radius = np.hypot(arc.x[0], arc.y[0])
        assert np.isclose(inner, radius, atol=1e-3) and outer > 1.2
        angle = np.arctan2(leader.y[0], leader.x[0])
        assert np.isclose(np.arctan2(label.y, label.x), angle, atol=1e-3)  # along the leader
        arc_angles = np.unwrap(np.arctan2(arc.y, arc.x))
        assert min(arc_angles) < np.unwrap([arc_angles[0], angle])[1] < max(arc_angles)  # from the arc itself
        # the leader from the inner arc crosses no wider arc on its way out
        for other in arcs:
            if np.hypot(other.x[0], other.y[0]) > radius:
                other_angles = np.unwrap(np.arctan2(other.y, other.x))
                assert not min(other_angles) <= np.unwrap([other_angles[0], angle])[1] <= max(other_angles)


def test_the_rope_pair_draws_apply_rope_at_unit_length_and_one_angle_for_one_offset():
    from course_utils.figures.rotation import ANGLE_RADIUS, LABEL_REACH, TURN_RADII

    positions = [(0, 3), (40, 43)]
    fig = figures.rope_pair_figure(Q, K, positions, pair=2)
    q = rope.apply_rope(torch.from_numpy(np.stack([Q, Q])), [0, 40]).numpy()[:, [2, 10]]
    k = rope.apply_rope(torch.from_numpy(np.stack([K, K])), [3, 43]).numpy()[:, [2, 10]]
    unit = lambda v: v / np.linalg.norm(v, axis=-1, keepdims=True)  # noqa: E731
    # the turned vectors, drawn at unit length: the stub query of the old figure is gone
    np.testing.assert_allclose(arrow_tips(fig), unit(np.stack([q[0], k[0], q[1], k[1]])), rtol=5e-4, atol=1e-6)
    between = np.angle((k[:, 0] + 1j * k[:, 1]) / (q[:, 0] + 1j * q[:, 1]))
    assert np.isclose(between[0], between[1])  # the offset alone sets the angle
    # the angle: one filled sector at the origin, the same radius and span in both panels
    wedges = [t for t in fig.data if t.fill == "toself"]
    assert len(wedges) == 2
    for wedge, qv, angle in zip(wedges, q, between):
        x, y = np.array(wedge.x, dtype=float), np.array(wedge.y, dtype=float)
        assert (x[0], y[0]) == (0, 0) and (x[-1], y[-1]) == (0, 0)
        rim = x[1:-1] + 1j * y[1:-1]
        np.testing.assert_allclose(np.abs(rim), ANGLE_RADIUS, rtol=1e-3)
        assert np.isclose(np.angle(rim[0]), np.arctan2(qv[1], qv[0]), atol=2e-3)
        assert np.isclose(np.angle(rim[-1] / rim[0]), angle, atol=2e-3)
    titles = [a.text for a in fig.layout.annotations if a.yref == "paper"]
    written = [float(re.search(r"(−?-?\d+\.\d\d) rad", t).group(1).replace("−", "-")) for t in titles]
    np.testing.assert_allclose(written, np.round(between, 2), atol=0.0051)
    # each vector's own turn: a faint arc from its direction before RoPE to its direction after,
    # turning by its position times theta (none for the query at 0)
    theta = 10000 ** (-4 / 16)
    arcs = [t for t in fig.data if t.mode == "lines+markers"]
    turns = [("k", K, 3), ("q", Q, 40), ("k", K, 43)]
    assert len(arcs) == len(turns)
    for arc, (name, vector, p) in zip(arcs, turns):
        rim = np.array(arc.x, dtype=float) + 1j * np.array(arc.y, dtype=float)
        np.testing.assert_allclose(np.abs(rim), TURN_RADII[name], rtol=1e-3)
        assert np.isclose(np.angle(rim[0]), np.arctan2(vector[10], vector[2]), atol=2e-3)
        assert np.isclose(np.angle(rim[-1] / rim[0]), np.angle(np.exp(1j * p * theta)), atol=2e-3)
        assert arc.opacity < 1  # faint: the turned arrows stay the figure's subject
    found = rope_pair_numbers(Q, K, positions, pair=2)
    np.testing.assert_allclose(found["between"], between, atol=1e-12)
    assert found["theta"] == pytest.approx(theta)
    # no label on an arc: the vectors' names stand beyond the unit circle, every arc inside it,
    # and each name stays inside its panel on a phone (anchored inward where it would run past)
    reach = fig.layout.xaxis.range[1]
    names = [a for a in fig.layout.annotations if not a.showarrow and a.yref != "paper"]
    assert len(names) == 4
    for a in names:
        assert np.hypot(a.x, a.y) > 1.0 > max(TURN_RADII.values())
        assert -reach <= a.x <= reach
        if a.xanchor == "left":
            assert a.x + LABEL_REACH * reach <= reach, a.text
        else:
            assert a.xanchor == "right" and a.x - LABEL_REACH * reach >= -reach, a.text


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: figures.position_shift_figure(TABLE[:, :31], 3), "d_model even"),
        (lambda: figures.position_shift_figure(TABLE, 3, (0, 62)), "inside the table's 64 positions"),
        (lambda: figures.position_shift_figure(TABLE, 3, (5, 5)), "two different starts"),
        (lambda: figures.position_shift_figure(TABLE, 3, pair=16), r"pair to be an integer in 0 \.\. 15"),
        (lambda: figures.rope_pair_figure(Q, K[:8], [(0, 1), (2, 3)]), "one even width"),
        (lambda: figures.rope_pair_figure(Q, K, [(0, 1), (2, 4)]), "one offset"),
        (lambda: figures.rope_pair_figure(Q, K, [(0, 1), (2, 3)], pair=8), r"0 \.\. 7"),
        (lambda: figures.rope_pair_figure(np.zeros(16), K, [(0, 1), (2, 3)]), "no direction"),
    ],
)
def test_bad_inputs_get_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
