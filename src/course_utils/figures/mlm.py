"""Lesson 05's picture of masked language modelling: one sentence, position by position, from the
original tokens to what the model reads and the labels it is scored on (BERT's 15%, then 80/10/10).
"""

from __future__ import annotations

import inspect
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import plots
from ..masking import IGNORE_INDEX, mlm_mask

__all__ = ["MLM_OUTCOMES", "mlm_figure", "mlm_outcomes", "mlm_shares"]

# What happened at a position, in the order of the figure's colours; the text says it too.
MLM_OUTCOMES = ("special: never chosen", "not chosen", "chosen → [MASK]", "chosen → random", "chosen → kept")
_COLOURS = (plots.BLOCKED_COLOR, "#FFFFFF", "#9ED4F2", "#F5C96B", "#7FD1B9")  # grey, white, light blue, orange, green
_SHORT = ("special", "·", "→ [MASK]", "→ random", "→ kept")
COLUMNS = ("original", "chosen? (15%)", "model reads", "label")


def mlm_outcomes(original_ids, masked_ids, labels, maskable, mask_token_id: int) -> np.ndarray:
    """The outcome of every position, an index into :data:`MLM_OUTCOMES`: ``(T,)`` ints.

    ``original_ids, masked_ids, labels (T,)`` ints (``labels`` hold the original id at the chosen
    positions and ``IGNORE_INDEX`` = -100 elsewhere), ``maskable (T,)`` bool (False at special tokens
    and padding). A chosen position whose random token happens to be ``[MASK]`` or the original
    counts as what the model reads, as the lesson's measured proportions count it.
    """
    arrays = [np.asarray(a) for a in (original_ids, masked_ids, labels, maskable)]
    original, masked, labels, maskable = arrays
    if any(a.ndim != 1 or a.shape != original.shape for a in arrays) or original.size == 0:
        raise ValueError(f"expected original_ids, masked_ids, labels and maskable of one shape (T,), got "
                         f"{[a.shape for a in arrays]}")  # fmt: skip
    if maskable.dtype != np.bool_:
        raise TypeError(f"expected maskable to be boolean (False at special tokens and padding), got {maskable.dtype}")
    chosen = labels != IGNORE_INDEX
    if np.any(chosen & ~maskable) or np.any(chosen & (labels != original)):
        raise ValueError("expected labels to hold the original id at maskable chosen positions and -100 elsewhere")
    outcome = np.where(maskable, 1, 0)
    outcome = np.where(chosen & (masked == mask_token_id), 2, outcome)
    outcome = np.where(chosen & (masked != mask_token_id) & (masked != original), 3, outcome)
    return np.where(chosen & (masked == original), 4, outcome)


def mlm_shares() -> dict[str, float]:
    """The shares :func:`course_utils.masking.mlm_mask` draws by default: ``select`` (of the maskable
    tokens, chosen), then of the chosen ``mask`` (→ [MASK]), ``random`` and ``kept`` (the rest)."""
    defaults = {name: p.default for name, p in inspect.signature(mlm_mask).parameters.items()}
    mask, random = float(defaults["mask_prob"]), float(defaults["random_prob"])
    return dict(select=float(defaults["select_prob"]), mask=mask, random=random, kept=1.0 - mask - random)


BAR_ROWS_PX = 76  # the two thin bars above the table: every maskable token, then the chosen ones


CHOSEN_COLOUR = "#BDBDBD"  # the chosen share, before it is split


def _shares_bars(fig: go.Figure, shares: dict[str, float]) -> None:
    """Row 1: a bar of every maskable token (not chosen | chosen), and under it the chosen share
    stretched to the full width and split into → [MASK], → random and → kept, in the table's colours;
    two dotted lines join the chosen segment to the bar that stretches it. Drawn as heatmap bricks
    (edges at the shares), like the table, so that their dark text stays dark on their light
    colours in dark mode too."""
    select = shares["select"]
    colours = ["#FFFFFF", CHOSEN_COLOUR, _COLOURS[2], _COLOURS[3], _COLOURS[4]]
    scale = [[edge, colour] for k, colour in enumerate(colours) for edge in (k / 5, (k + 1) / 5)]
    bars = [  # (y edges, x edges, colour indices, texts, names)
        ([0.7, 1.3], [0.0, 1 - select, 1.0], [0, 1], [f"not chosen {1 - select:.0%}", f"{select:.0%}"],
         ["not chosen", "chosen"]),
        ([-0.3, 0.3], [0.0, shares["mask"], shares["mask"] + shares["random"], 1.0], [2, 3, 4],
         [f"→ [MASK] {shares['mask']:.0%}", f"{shares['random']:.0%}", f"{shares['kept']:.0%}"],
         ["chosen → [MASK]", "chosen → random", "chosen → kept"]),
    ]
    for y_edges, x_edges, kinds, texts, names in bars:
        fig.add_trace(go.Heatmap(
            z=[[k + 0.5 for k in kinds]], x=[round(x, 6) for x in x_edges], y=y_edges, text=[texts],
            texttemplate="%{text}", colorscale=scale, zmin=0, zmax=5, showscale=False, xgap=2,
            textfont=dict(color="#1A1A1A", size=11), customdata=[names], name="shares",
            hovertemplate="%{customdata}: %{text}<extra></extra>",
        ), row=1, col=1)  # fmt: skip
    for top, bottom in ((1 - select, 0.0), (1.0, 1.0)):  # the chosen segment, stretched to the whole bar
        fig.add_trace(go.Scatter(x=[top, bottom], y=[0.7, 0.3], mode="lines", hoverinfo="skip",
                                 line=dict(color="#555555", width=1, dash="dot"), showlegend=False,
                                 name="the chosen share, stretched"), row=1, col=1)  # fmt: skip
    fig.update_xaxes(visible=False, range=[0, 1], fixedrange=True, row=1, col=1)
    fig.update_yaxes(visible=False, range=[-0.45, 1.45], fixedrange=True, row=1, col=1)


def mlm_figure(original_tokens: Sequence[str], read_tokens: Sequence[str], labels, outcomes) -> go.Figure:
    """One sentence through BERT's masking: a row per position, four columns.

    ``original_tokens (T,)``: the sentence's tokens; ``read_tokens (T,)``: what the model reads after
    masking; ``labels (T,)``: the label ids (the original id where chosen, -100 elsewhere);
    ``outcomes (T,)``: :func:`mlm_outcomes`. Columns: the original token; whether the position was
    chosen and what became of it (``→ [MASK]``, ``→ random``, ``→ kept``, ``·`` not chosen,
    ``special`` never chosen); the token the model reads; the label, ``−100`` where the loss skips
    the position. The text says everything; the colour of a row's cells repeats its outcome.
    Above the table, two thin bars draw the shares one sentence cannot show (:func:`mlm_shares`):
    the chosen 15% of the maskable tokens, and that 15% split 80/10/10.
    """
    original, read = [str(t) for t in original_tokens], [str(t) for t in read_tokens]
    labels, outcomes = np.asarray(labels), np.asarray(outcomes)
    T = len(original)
    if len(read) != T or labels.shape != (T,) or outcomes.shape != (T,) or T == 0:
        raise ValueError(f"expected T = {T} read tokens, labels and outcomes, got {len(read)}, {labels.shape}, "
                         f"{outcomes.shape}")  # fmt: skip
    if not np.isin(outcomes, range(len(MLM_OUTCOMES))).all():
        raise ValueError(f"expected outcomes in 0 .. {len(MLM_OUTCOMES) - 1} (mlm_outcomes), got {outcomes.tolist()}")
    text = np.array([[o, _SHORT[k], r, "−100" if label == IGNORE_INDEX else str(int(label))]
                     for o, k, r, label in zip(original, outcomes, read, labels)], dtype=object)  # fmt: skip
    z = np.repeat(outcomes[:, None].astype(float), len(COLUMNS), axis=1)  # (T, 4): a row's colour, its outcome
    n = len(MLM_OUTCOMES)
    scale = [[edge, colour] for k, colour in enumerate(_COLOURS) for edge in (k / n, (k + 1) / n)]
    rows = [f"{t}" for t in range(T)]
    shares = mlm_shares()
    table_px = 34 * T
    gap_px = 62  # the table's column names, upright on a laptop, slanted on a phone
    fig = make_subplots(rows=2, cols=1, row_heights=[BAR_ROWS_PX, table_px],
                        vertical_spacing=gap_px / (BAR_ROWS_PX + table_px + gap_px),
                        subplot_titles=(f"{shares['select']:.0%} chosen, then split "
                                        f"{shares['mask']:.0%}/{shares['random']:.0%}/{shares['kept']:.0%}", ""))  # fmt: skip
    fig.layout.annotations[0].update(x=0, xanchor="left", font=dict(size=12))
    _shares_bars(fig, shares)
    fig.add_trace(go.Heatmap(
        z=z, x=list(COLUMNS), y=rows, text=text, texttemplate="%{text}", colorscale=scale, zmin=0, zmax=n,
        showscale=False, xgap=2, ygap=2, textfont=dict(color="#1A1A1A"),
        customdata=np.array([[MLM_OUTCOMES[k]] * len(COLUMNS) for k in outcomes], dtype=object),
        hovertemplate="position %{y}<br>%{x}: %{text}<br>%{customdata}<extra></extra>",
    ), row=2, col=1)  # fmt: skip
    counts = {MLM_OUTCOMES[k]: int((outcomes == k).sum()) for k in range(2, n)}
    chosen = sum(counts.values())
    fig.update_xaxes(type="category", side="top", title_text=None, row=2, col=1)
    fig.update_yaxes(type="category", autorange="reversed", title_text="position", row=2, col=1)
    fig.update_layout(
        title=dict(text=f"Masked language modelling, one sentence: {chosen} of "
                        f"{int((outcomes > 0).sum())} tokens chosen, each scored; −100: skipped by the loss",
                   x=0.02, xanchor="left"),
        template=plots.TEMPLATE, height=130 + table_px + BAR_ROWS_PX + gap_px, margin=dict(l=60, r=10, t=110, b=20),
        font=dict(size=12),
    )  # fmt: skip
    return fig
