"""How to read a comparison of two arms run with the same seeds: the pictures of lesson 07's study.

:func:`differences_figure` draws each comparison as a row: every seed's paired difference a dot, their
mean a bar, the interval a line with caps at the level it was computed at, zero a vertical line, and
the verdict at the row's end (a declared contrast's, or "exploratory"). :func:`holm_figure` draws
Holm's step-down: the p-values sorted, each against its step's threshold (alpha / m, alpha / (m - 1),
..., alpha), filled where the test is rejected. :func:`comparison_rows` builds the rows from the
results of :func:`course_utils.models.study_results`. :func:`budget_figure` draws the budget curve: a
cheaper method's accuracy at each number of steps, every seed a dot, against a method's mean at its
own budget, and where the curve reaches it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from .. import plots

__all__ = ["ComparisonRow", "budget_figure", "comparison_rows", "differences_figure", "holm_figure"]

VERDICT_COLOURS = {"higher": plots.color(2), "lower": plots.color(5), "cannot tell": plots.REFERENCE_COLOR,
                   "exploratory": plots.REFERENCE_COLOR, "": plots.color(0)}  # "": a comparison shown alone


@dataclass(frozen=True)
class ComparisonRow:
    """One comparison to draw: its ``label``, each seed's difference (``first - second``, in accuracy),
    the ``interval`` of their mean at ``level`` and the ``verdict`` (``""``: none, a comparison shown
    on its own)."""

    label: str
    differences: tuple[float, ...]
    interval: tuple[float, float]
    level: float
    verdict: str


def comparison_rows(results, report: dict) -> list[ComparisonRow]:
    """The rows of ``results`` (:func:`course_utils.models.study_results` of ``report``), each seed's
    difference read from the report."""
    from .. import models

    rows = []
    for result in results:
        seeds, a, b = models._paired_runs(report, result.contrast)
        rows.append(ComparisonRow(result.contrast.name, tuple(np.subtract(a, b).tolist()), result.difference.interval,
                                  result.difference.level, result.outcome))
    return rows


def _check_rows(rows) -> list[ComparisonRow]:
    rows = list(rows)
    if not rows or not all(isinstance(row, ComparisonRow) for row in rows):
        raise ValueError("expected at least one ComparisonRow (comparison_rows builds them from study_results)")
    for row in rows:
        values = [*row.differences, *row.interval]
        if len(row.differences) < 2 or not np.all(np.isfinite(values)):
            raise ValueError(f"expected at least two finite differences and a finite interval for {row.label!r}")
        if row.interval[0] > row.interval[1]:
            raise ValueError(f"expected an interval (low, high) with low <= high for {row.label!r}, got {row.interval}")
        if row.verdict not in VERDICT_COLOURS:
            raise ValueError(f"expected a verdict among {sorted(VERDICT_COLOURS)}, got {row.verdict!r}")
        if not 0 < row.level < 1:
            raise ValueError(f"expected a level between 0 and 1 for {row.label!r}, got {row.level!r}")
    return rows


def _wrapped(text: str, width: int = 30) -> str:
    """``text`` broken into lines of at most ``width`` characters at spaces, joined by ``<br>``
    (a row's label must fit a phone's column)."""
    import textwrap

    return "<br>".join(textwrap.wrap(text, width)) or text


def differences_figure(rows: Sequence[ComparisonRow], *, title: str, points: bool = True) -> go.Figure:
    """Each comparison a row, in points of accuracy: every seed's difference a dot, the mean a bar,
    the interval a line, zero a line; the row's label (wrapped for a phone) says the verdict and the
    interval's level ("higher, 98.3% interval"), so nothing is written beside the interval."""
    rows = _check_rows(rows)
    plots.require_text("title", title)
    scale = 100 if points else 1
    fig = go.Figure()
    labels = [f"{_wrapped(row.label)}<br><i>{row.verdict + ', ' if row.verdict else ''}{row.level:.1%} interval</i>"
              for row in rows]
    for i, (row, label) in enumerate(zip(rows, labels)):
        colour = VERDICT_COLOURS[row.verdict]
        low, high = (scale * v for v in row.interval)
        fig.add_trace(go.Scatter(x=[low, high], y=[label, label], mode="lines+markers", showlegend=i == 0,
                                 name="interval", legendgroup="interval",
                                 line=dict(color=colour, width=4), marker=dict(symbol="line-ns", size=16,
                                                                               line=dict(width=3, color=colour)),
                                 hovertemplate=f"{row.level:.1%} interval: %{{x:.1f}}<extra></extra>"))
        fig.add_trace(go.Scatter(x=[scale * d for d in row.differences], y=[label] * len(row.differences),
                                 mode="markers", name="each seed", legendgroup="seeds", showlegend=i == 0,
                                 marker=dict(color="rgba(0,0,0,0)", size=9, line=dict(color=plots.color(0), width=1.5)),
                                 hovertemplate="a seed: %{x:.1f}<extra></extra>"))
        mean = scale * float(np.mean(row.differences))
        fig.add_trace(go.Scatter(x=[mean], y=[label], mode="markers", name="mean", legendgroup="mean",
                                 showlegend=i == 0, marker=dict(symbol="line-ns", size=26, color="black",
                                                                line=dict(width=3, color="black")),
                                 hovertemplate="mean: %{x:.1f}<extra></extra>"))
    fig.add_vline(x=0, line=dict(color=plots.REFERENCE_COLOR, width=1, dash="dot"))
    shown = [scale * v for row in rows for v in (*row.differences, *row.interval)]
    low, high = min(min(shown), 0.0), max(max(shown), 0.0)
    pad = 0.08 * (high - low or 1)
    # the unit on the ticks, no axis title: the legend below the plot never meets one
    fig.update_xaxes(range=[low - pad, high + pad], ticksuffix=" pts" if points else "")
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.2, x=0))
    return plots._style(fig, title, "", "", 150 + 90 * len(rows))


def holm_figure(names: Sequence[str], p_values: Sequence[float], alpha: float = 0.05, *, title: str) -> go.Figure:
    """Holm's step-down, drawn: the p-values sorted from the smallest, each a dot at its step against
    the step's threshold ``alpha / (m - k)`` (a staircase); a test is rejected while its dot is under
    its step, and the first dot above stops the descent (every later test kept, hollow)."""
    plots.require_text("title", title)
    p = np.asarray(p_values, dtype=float)
    if isinstance(names, str) or len(names) != p.size or p.size == 0:
        raise ValueError(f"expected one name per p-value, got {len(names)} names for {p.size} p-values")
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError(f"expected p-values in [0, 1], got {p.tolist()}")
    if not 0 < alpha < 1:
        raise ValueError(f"expected alpha between 0 and 1, got {alpha!r}")
    order = np.argsort(p, kind="stable")
    m = p.size
    thresholds = [alpha / (m - k) for k in range(m)]
    rejected, going = [], True
    for k, index in enumerate(order):
        going = going and p[index] < thresholds[k]
        rejected.append(going)
    steps = [f"step {k + 1}: {names[index]}" for k, index in enumerate(order)]
    floor = max(min(float(p.min()), min(thresholds)) / 3, 1e-6)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=steps, y=thresholds, mode="lines+markers", name="the step's threshold, alpha / (m - k)",
                             line=dict(shape="hvh", color=plots.REFERENCE_COLOR, dash="dash"),
                             marker=dict(symbol="line-ew", size=18, line=dict(width=2, color=plots.REFERENCE_COLOR)),
                             hovertemplate="threshold %{y:.4f}<extra></extra>"))
    for flag, name in ((True, "rejected: the difference counts"), (False, "kept: cannot tell")):
        xs = [steps[k] for k in range(m) if rejected[k] == flag]
        ys = [max(float(p[order[k]]), floor) for k in range(m) if rejected[k] == flag]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers", name=name,
                                 marker=dict(size=13, color=plots.color(2) if flag else "white",
                                             line=dict(width=2, color=plots.color(2) if flag else plots.color(5))),
                                 hovertemplate="p = %{y:.3g}<extra></extra>"))
    fig.update_yaxes(type="log", range=[math.log10(floor), 0])
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.3, x=0))
    return plots._style(fig, title, "", "p-value (log scale)", 460)


def budget_figure(curve: dict, target: Sequence[float], target_label: str, *, worth=None, title: str,
                  y_title: str = "accuracy on the unseen slice") -> go.Figure:
    """The budget curve: ``curve`` ``{steps: [accuracy of each seed]}`` as dots with their means joined
    (x in steps, on a log scale), ``target`` (a method's accuracy per seed) as a horizontal band from
    its lowest to its highest seed with a line at its mean, and, with ``worth``
    (:class:`course_utils.stats.StepsWorth`), a vertical line where the curve reaches the mean."""
    plots.require_text("title", title)
    plots.require_text("target_label", target_label)
    if not isinstance(curve, dict) or len(curve) < 2:
        raise ValueError(f"expected curve, {{steps: [accuracy per seed]}}, with at least two budgets, got {curve!r}")
    budgets = sorted(curve)
    values = [np.asarray(curve[b], dtype=float) for b in budgets]
    goal = np.asarray(target, dtype=float)
    if any(v.size == 0 for v in values) or goal.size == 0 or not np.all(np.isfinite(np.concatenate([*values, goal]))):
        raise ValueError("expected finite accuracies, at least one per budget and for the target")
    fig = go.Figure()
    span = [budgets[0] / 1.2, budgets[-1] * 1.2]
    fig.add_hrect(y0=float(goal.min()), y1=float(goal.max()), fillcolor=plots.color(1), opacity=0.15, line_width=0)
    # the target's mean as a legend entry, not a label on its band (dark mode cannot recolour a band)
    fig.add_trace(go.Scatter(x=span, y=[float(goal.mean())] * 2, mode="lines", name=f"{target_label}: mean",
                             line=dict(color=plots.color(1), width=2), hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=[b for b, v in zip(budgets, values) for _ in v], y=np.concatenate(values),
                             mode="markers", name="each seed", marker=dict(color="rgba(0,0,0,0)", size=9,
                                                                          line=dict(color=plots.color(0), width=1.5)),
                             hovertemplate="%{x:,} steps: %{y:.3f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=budgets, y=[float(v.mean()) for v in values], mode="lines+markers", name="mean",
                             line=dict(color=plots.color(0), width=2), marker=dict(size=7),
                             hovertemplate="%{x:,} steps, mean %{y:.3f}<extra></extra>"))
    if worth is not None and math.isfinite(worth.estimate):
        # on a log axis a shape takes the data value and an annotation its log10 (plotly.py #2580):
        # add_vline's own label went to 10^300 and squeezed the axis, so the label is added apart
        fig.add_vline(x=worth.estimate, line=dict(color=plots.REFERENCE_COLOR, width=2, dash="dash"))
        fig.add_annotation(x=math.log10(worth.estimate), xref="x", y=1, yref="y domain", showarrow=False,
                           text=f"{worth.estimate:,.0f} steps", xanchor="left", yanchor="top", xshift=4)
    fig.update_xaxes(range=[math.log10(span[0]), math.log10(span[1])])
    fig.update_xaxes(type="log", tickvals=budgets, ticktext=[f"{b:,}" for b in budgets])
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.22, x=0))
    return plots._style(fig, title, "steps of masked words alone (log scale)", y_title, 440)
