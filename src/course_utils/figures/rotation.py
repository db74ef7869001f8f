"""Positions as turns on a circle: lesson 03's sinusoidal pair moved ``k`` positions on
(:func:`position_shift_figure`) and lesson 09's RoPE, a query and a key each turned by its position
(:func:`rope_pair_figure`).

Both draw one pair of coordinates as arrows in its plane, to one scale (angles are true), with each
turn drawn as an arc; lesson 03's arcs are labelled with their angles in radians, RoPE's angle is
one filled sector at the origin, named with its value in each panel's title (no label on an arc).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import plots
from ..positional import frequencies
from ..validation import positive_int

__all__ = ["position_shift_figure", "rope_pair_figure", "rope_pair_numbers"]


def _unit_circle(name: str = "the pair's circle") -> go.Scatter:
    """The unit circle, dotted grey (73 points)."""
    turn = np.linspace(0, 2 * np.pi, 73)
    return go.Scatter(x=plots.significant(np.cos(turn)), y=plots.significant(np.sin(turn)), mode="lines",
                      line=dict(color=plots.REFERENCE_COLOR, dash="dot", width=1), name=name, hoverinfo="skip",
                      showlegend=False)  # fmt: skip


def _arc(start: float, turn: float, radius: float, colour: str, name: str, dash: str = "solid") -> go.Scatter:
    """An arc of ``radius`` from the polar angle ``start`` turning by ``turn`` (radians, positive =
    anticlockwise), ending in an arrowhead."""
    angles = start + np.linspace(0.0, turn, max(8, int(abs(turn) * 12)))
    return go.Scatter(
        x=plots.significant(radius * np.cos(angles)), y=plots.significant(radius * np.sin(angles)),
        mode="lines+markers", line=dict(color=colour, width=2, dash=dash), name=name, hoverinfo="name",
        marker=dict(symbol="arrow", angleref="previous", size=[0] * (len(angles) - 1) + [12], color=colour),
        showlegend=False,
    )  # fmt: skip


LABEL_REACH = 0.75  # an arrow's label (about 15 characters) on a phone: this share of a panel's half-width


def _label(fig: go.Figure, at, text: str, colour: str, anchor=("center", "middle"), **where) -> None:
    at = plots.significant(at)
    fig.add_annotation(x=at[0], y=at[1], text=text, showarrow=False, xanchor=anchor[0], yanchor=anchor[1],
                       font=dict(size=12, color=colour), **where)  # fmt: skip


LEADER_REACH = 1.3  # an angle's label stands outside the unit circle, at this radius


def _angle_gap(a, b) -> np.ndarray:
    """The unsigned angle between directions ``a`` and ``b`` (radians, broadcast), in ``[0, π]``."""
    return np.abs(np.angle(np.exp(1j * (np.asarray(a) - np.asarray(b)))))


def _leader_angle(start: float, turn: float, radius: float, arcs, taken) -> float:
    """The direction of an arc's leader line: a point of the arc (``radius``, from the polar angle
    ``start`` turning by ``turn``), away from its ends, whose outward ray crosses no wider arc of
    ``arcs`` (``(start, radius)`` pairs, all turning by ``turn``) and keeps furthest from the
    directions ``taken`` (arrows, points, axes, other leaders)."""
    candidates = start + np.linspace(0.15, 0.85, 57) * turn
    score = np.min(_angle_gap(candidates[:, None], np.asarray(taken)[None, :]), axis=1)
    for other_start, other_radius in arcs:
        if other_radius > radius:  # does the ray from this arc cross that wider one?
            along = np.angle(np.exp(1j * (candidates - other_start))) / turn  # 0 .. 1 inside the wider arc
            score = np.where((along >= -0.05) & (along <= 1.05), score - np.pi, score)
    return float(candidates[np.argmax(score)])


def _leader(fig: go.Figure, angle: float, radius: float, reach: float, colour: str, text: str) -> None:
    """A thin leader line from the arc of ``radius`` at ``angle`` out to ``reach``, and ``text``
    beyond its end, anchored away from the circle: no label on an arc, a line or an arrowhead."""
    direction = np.array([np.cos(angle), np.sin(angle)])
    ends = np.outer([radius, reach], direction)
    fig.add_trace(go.Scatter(x=plots.significant(ends[:, 0]), y=plots.significant(ends[:, 1]), mode="lines",
                             line=dict(color=colour, width=1), hoverinfo="skip", showlegend=False,
                             name="leader"))  # fmt: skip
    _label(fig, ends[1] + 0.03 * direction, text, colour, _away(direction))


def _away(direction) -> tuple[str, str]:
    """The (xanchor, yanchor) of a label at a point in ``direction`` from the centre, so that the
    label stands beyond the point, away from the circle (and from the arrowhead there)."""
    x, y = np.asarray(direction, dtype=float) / (np.linalg.norm(direction) or 1.0)
    return ("left" if x > 0.3 else "right" if x < -0.3 else "center",
            "bottom" if y > 0.3 else "top" if y < -0.3 else "middle")  # fmt: skip


def position_shift_figure(encoding, k: int, starts: Sequence[int] = (0, 7), pair: int = 0) -> go.Figure:
    """Moving ``k`` positions on turns a sinusoidal pair by ``ω_i k``, from any start.

    ``encoding (L, d_model)``: a sinusoidal table (sin in even, cos in odd dimensions); ``pair`` ``i``
    is its dimensions ``(2i, 2i + 1)``, the point ``(sin ω_i pos, cos ω_i pos)`` on the unit circle
    (x: the sine, y: the cosine, as the lesson's E + P figure). For each of the two ``starts``
    ``p``: an arrow to the pair of position ``p``, an arrow to the pair of ``p + k``, and the arc
    between them, labelled with its angle, ``ω_i k``, the same for both starts (clockwise: in these
    coordinates the positions go round clockwise). Every position up to the last drawn is a grey
    dot on the circle.
    """
    encoding = np.asarray(encoding, dtype=float)
    if encoding.ndim != 2 or encoding.shape[1] % 2 or not np.all(np.isfinite(encoding)):
        raise ValueError(f"expected a finite sinusoidal table (L, d_model) with d_model even, got {encoding.shape}")
    L, d_model = encoding.shape
    k = positive_int("k", k)
    if isinstance(pair, bool) or not isinstance(pair, (int, np.integer)) or not 0 <= pair < d_model // 2:
        raise ValueError(f"expected pair to be an integer in 0 .. {d_model // 2 - 1}, got {pair!r}")
    starts = [int(p) for p in starts]
    if len(starts) != 2 or len(set(starts)) != 2 or not all(0 <= p and p + k < L for p in starts):
        raise ValueError(f"expected two different starts p with p + k = p + {k} inside the table's {L} positions, "
                         f"got {starts}")  # fmt: skip
    omega = float(frequencies(d_model)[2 * pair])
    points = encoding[:, 2 * pair:2 * pair + 2]  # (L, 2): (sin, cos) of every position
    shown = max(starts) + k + 1
    fig = go.Figure()
    fig.add_trace(_unit_circle())
    fig.add_trace(go.Scatter(
        x=plots.significant(points[:shown, 0]), y=plots.significant(points[:shown, 1]), mode="markers",
        marker=dict(color=plots.REFERENCE_COLOR, size=6), name=f"positions 0 to {shown - 1}",
        hovertext=[f"position {p}" for p in range(shown)], hoverinfo="text", showlegend=False,
    ))  # fmt: skip
    for j, p in enumerate(starts):
        colour, radius = plots.color(0 if j == 0 else 5), (0.55 if j == 0 else 0.8)
        start, end = points[p], points[p + k]
        plots.arrow(fig, [0, 0], start, colour, f"pos {p}", start * 1.06, _away(start))
        plots.arrow(fig, [0, 0], end, colour, f"pos {p + k}", end * 1.06, _away(end))
        polar = np.arctan2(start[1], start[0])  # the point (sin φ, cos φ) stands at the polar angle π/2 − φ
        fig.add_trace(_arc(polar, -omega * k, radius, colour, f"from {p} to {p + k}: ω·k = {omega * k:.2f} rad",
                           dash="solid" if j == 0 else "dash"))  # fmt: skip
    arcs = [(np.arctan2(points[p, 1], points[p, 0]), 0.55 if j == 0 else 0.8) for j, p in enumerate(starts)]
    taken = np.concatenate([np.arctan2(points[:shown, 1], points[:shown, 0]), [np.pi / 2, -np.pi / 2, 0.0, np.pi]])
    for j, p in enumerate(starts):  # each angle outside the circle, on a leader line from its arc
        colour = plots.color(0 if j == 0 else 5)
        polar, radius = arcs[j]
        angle = _leader_angle(polar, -omega * k, radius, arcs, taken)
        taken = np.append(taken, angle)
        _leader(fig, angle, radius, LEADER_REACH, colour, f"{p} → {p + k}:<br>{omega * k:.2f} rad")
    reach = LEADER_REACH + 0.45
    fig.update_xaxes(title_text=f"dimension {2 * pair}: sin(ω·pos)", range=[-reach, reach], zeroline=True,
                     constrain="domain")  # fmt: skip
    fig.update_yaxes(title_text=f"dimension {2 * pair + 1}: cos(ω·pos)", range=[-reach, reach], zeroline=True,
                     scaleanchor="x")  # fmt: skip
    fig.update_layout(
        title=dict(text=f"Moving k = {k} positions on turns pair {pair} by ω·k = {omega * k:.2f} rad, from any start",
                   x=0.02, xanchor="left"),
        template=plots.TEMPLATE, height=520, margin=dict(l=70, r=20, t=70, b=60), font=dict(size=13),
        showlegend=False,
    )  # fmt: skip
    return fig


def rope_pair_numbers(query, key, positions: Sequence[tuple[int, int]], pair: int = 0) -> dict[str, np.ndarray]:
    """What :func:`rope_pair_figure` draws: ``query, key (d,)`` one head's vectors, ``positions``
    pairs ``(m, n)`` (the query's and the key's). Returns ``q, k (len(positions), 2)``, the pair
    ``(x_i, x_{i+d/2})`` of the query turned by ``m θ_i`` and of the key turned by ``n θ_i``
    (:func:`course_utils.rope.apply_rope`), ``theta`` and ``between (len(positions),)``, the angle
    from the turned query to the turned key (radians, in ``(-π, π]``).
    """
    from .. import rope

    query, key = np.asarray(query, dtype=float), np.asarray(key, dtype=float)
    if query.ndim != 1 or query.shape != key.shape or query.size % 2 or not np.all(np.isfinite([query, key])):
        raise ValueError(f"expected a query and a key of one even width (d,), got {query.shape} and {key.shape}")
    d = query.size
    if isinstance(pair, bool) or not isinstance(pair, (int, np.integer)) or not 0 <= pair < d // 2:
        raise ValueError(f"expected pair to be an integer in 0 .. {d // 2 - 1}, got {pair!r}")
    positions = [tuple(int(p) for p in mn) for mn in positions]
    if not positions or any(len(mn) != 2 for mn in positions):
        raise ValueError(f"expected positions as (m, n) pairs, got {positions}")
    m, n = np.array(positions).T
    columns = [pair, pair + d // 2]
    q = rope.apply_rope(np.repeat(query[None], len(m), 0), m)[:, columns]  # (P, 2)
    k = rope.apply_rope(np.repeat(key[None], len(n), 0), n)[:, columns]  # (P, 2)
    between = np.angle(np.exp(1j * (np.arctan2(k[:, 1], k[:, 0]) - np.arctan2(q[:, 1], q[:, 0]))))
    theta = float(rope.inverse_frequencies(d)[pair])
    return dict(q=q, k=k, theta=np.float64(theta), between=between)


ROPE_REACH = 1.5  # each RoPE panel shows [-ROPE_REACH, ROPE_REACH] around the unit circle
ANGLE_RADIUS = 0.32  # the angle from q to k: one arc of this radius at the origin, in every panel
TURN_RADII = {"q": 0.62, "k": 0.82}  # the faint arc of each vector's own turn, before -> after


def _wedge(start: float, turn: float, radius: float, colour: str, name: str) -> go.Scatter:
    """The sector from the polar angle ``start`` turning by ``turn`` (radians), ``radius`` long,
    lightly filled and outlined: an angle drawn the same way wherever it stands."""
    angles = start + np.linspace(0.0, turn, max(8, int(abs(turn) * 16)))
    x = np.concatenate([[0.0], radius * np.cos(angles), [0.0]])
    y = np.concatenate([[0.0], radius * np.sin(angles), [0.0]])
    return go.Scatter(x=plots.significant(x), y=plots.significant(y), mode="lines", fill="toself",
                      fillcolor="rgba(0, 158, 115, 0.25)", line=dict(color=colour, width=2), name=name,
                      hoverinfo="name", showlegend=False)  # fmt: skip


def rope_pair_figure(query, key, positions: Sequence[tuple[int, int]], pair: int = 0) -> go.Figure:
    """RoPE on one pair of coordinates: the query turned by its position ``m``, the key by ``n``.

    ``query, key (d,)``, one head's vectors before RoPE; ``positions``: two pairs ``(m, n)`` with
    the same offset ``n - m``, one panel each (side by side; stacked on a phone). In each panel,
    in the plane of coordinates ``(x_i, x_{i+d/2})`` (``pair`` ``i``, Hugging Face's layout), both
    vectors drawn at unit length (RoPE turns, it never stretches, so only directions matter): the
    query and the key before turning (dotted), a faint arc for each vector's own turn, ``m θ_i``
    and ``n θ_i`` (none for a turn of 0), the turned vectors (arrows, named at their tips), and
    the angle from the turned query to the turned key as one filled sector of radius
    :data:`ANGLE_RADIUS` at the origin: the same sector in both panels, since it depends on
    ``n - m`` only. No label sits on an arc: each panel's title gives the angle. Numbers from
    :func:`rope_pair_numbers`.
    """
    found = rope_pair_numbers(query, key, positions, pair)
    positions = [tuple(int(p) for p in mn) for mn in positions]
    if len(positions) != 2 or len({n - m for m, n in positions}) != 1:
        raise ValueError(f"expected two (m, n) pairs with one offset n - m, got {positions}")
    d = np.size(query)
    columns = [pair, pair + d // 2]
    before = {name: np.asarray(v, dtype=float)[columns] for name, v in (("q", query), ("k", key))}
    if any(np.linalg.norm(v) == 0 for v in before.values()):
        raise ValueError(f"expected a query and a key whose pair {pair} is not (0, 0): a zero vector has no direction")
    theta = float(found["theta"])
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1, subplot_titles=[
        f"m = {m}, n = {n}: angle q→k {between:.2f} rad" for (m, n), between in zip(positions, found["between"])])  # fmt: skip
    colours = {"q": plots.color(5), "k": plots.color(0)}
    reach = ROPE_REACH
    for col, ((m, n), q, k, between) in enumerate(zip(positions, found["q"], found["k"], found["between"]), start=1):
        axis = "" if col == 1 else str(col)
        fig.add_trace(_unit_circle(), row=1, col=col)
        after = {"q": q / np.linalg.norm(q), "k": k / np.linalg.norm(k)}
        for name, position in (("q", m), ("k", n)):
            colour = colours[name]
            start = before[name] / np.linalg.norm(before[name])
            fig.add_trace(go.Scatter(x=plots.significant([0, start[0]]), y=plots.significant([0, start[1]]),
                                     mode="lines", line=dict(color=colour, dash="dot", width=1.5),
                                     name=f"{name} before RoPE", hoverinfo="name", showlegend=False),
                          row=1, col=col)  # fmt: skip
            if position:  # a vector at position 0 does not turn: no arc to draw
                arc = _arc(float(np.arctan2(start[1], start[0])), position * theta, TURN_RADII[name], colour,
                           f"{name} turned by {position}θ = {position * theta:.2f} rad")
                arc.line.width, arc.opacity = 1.5, 0.45
                fig.add_trace(arc, row=1, col=col)
            tip = plots.significant(after[name])
            fig.add_annotation(x=tip[0], y=tip[1], ax=0, ay=0, xref=f"x{axis}", yref=f"y{axis}", axref=f"x{axis}",
                               ayref=f"y{axis}", text="", showarrow=True, arrowhead=3, arrowsize=1.3, arrowwidth=2.5,
                               arrowcolor=colour)  # fmt: skip
            at = 1.1 * after[name]  # the name beyond the tip, anchored away from it
            anchor = ("left" if at[0] >= 0 else "right", "bottom" if at[1] >= 0 else "top")
            if abs(at[0]) + LABEL_REACH * reach > reach:  # it would leave the panel on a phone: turn it inward
                anchor = ("right" if at[0] > 0 else "left", anchor[1])
            # on its own white ground: turned inward on a phone, the name crosses the unit circle's line
            _label(fig, at, f"<b>{name}</b> at {position}", colour, anchor, xref=f"x{axis}", yref=f"y{axis}",
                   bgcolor="white")
        fig.add_trace(_wedge(float(np.arctan2(after["q"][1], after["q"][0])), float(between), ANGLE_RADIUS,
                             plots.color(2), f"angle from q to k: {between:.2f} rad"), row=1, col=col)  # fmt: skip
        fig.update_xaxes(range=[-reach, reach], zeroline=True, title_text=f"x<sub>{pair}</sub>", constrain="domain",
                         row=1, col=col)  # fmt: skip
        fig.update_yaxes(range=[-reach, reach], zeroline=True, title_text=f"x<sub>{pair + d // 2}</sub>",
                         scaleanchor=f"x{axis}", row=1, col=col)  # fmt: skip
    offset = positions[0][1] - positions[0][0]
    fig.update_layout(
        title=dict(text=f"RoPE turns q by mθ and k by nθ: the angle between them depends on n − m = {offset} only",
                   x=0.02, xanchor="left"),
        template=plots.TEMPLATE, height=480, margin=dict(l=60, r=20, t=90, b=60), font=dict(size=13),
        showlegend=False,
    )  # fmt: skip
    return fig
