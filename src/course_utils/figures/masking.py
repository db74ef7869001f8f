"""Lesson 05's figure and explorer: attention scores before and after a mask, and the weights.

:func:`mask_of_kind` builds one sentence's mask of a kind of :data:`MASK_KINDS` (none, padding,
causal, both) from :mod:`course_utils.masking`; :func:`masked_attention_figure` draws the raw
scores, the masked scores and the weights as heatmaps; :func:`masking_explorer` offers every
sentence of a padded batch with every kind of mask in one dropdown (a
:class:`course_utils.widgets.Explorer`); :func:`mask_placement_figure` sets the weights of a mask
applied before the softmax beside those of the same mask applied after it, with each row's sum;
:func:`mask_broadcast_figure` draws a padding mask ``(B, 1, 1, T)`` broadcast against the scores
``(B, H, T, T)``, box by box; :func:`model_masks_figure` sets the masks of an encoder, a decoder and
an encoder–decoder's cross-attention side by side.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import masking, plots
from ..attention import softmax
from ..widgets import Choice, Explorer
from . import boxes

__all__ = [
    "MASK_KINDS",
    "blocked_row_figure",
    "mask_broadcast_figure",
    "mask_of_kind",
    "mask_placement_figure",
    "masked_attention_figure",
    "masking_explorer",
    "model_masks_figure",
]

MASK_KINDS = ("none", "padding", "causal", "padding & causal")
_PANELS = ("scores", "masked scores", "weights")


def mask_of_kind(kind: str, attention_mask) -> np.ndarray:
    """The ``(T, T)`` boolean mask (``True`` = may attend) of one sentence for a kind of :data:`MASK_KINDS`.

    ``attention_mask (T,)`` is the sentence's row of Hugging Face's attention mask (1 = real token,
    0 = padding). ``"none"``: everything allowed; ``"padding"``: no query may attend to padding keys
    (:func:`course_utils.masking.padding_mask`); ``"causal"``: no query may attend to a later key
    (:func:`course_utils.masking.causal_mask`); ``"padding & causal"``: both.
    """
    if kind not in MASK_KINDS:
        raise ValueError(f"expected a mask kind among {MASK_KINDS}, got {kind!r}")
    row = np.asarray(attention_mask)
    if row.ndim != 1 or row.size == 0:
        raise ValueError(f"expected one sentence's attention_mask of shape (T,), got shape {row.shape}")
    allowed = np.ones((row.size, row.size), dtype=bool)
    if "padding" in kind:
        allowed &= masking.padding_mask(row[None, :])[0, 0]  # (1, T): the same keys blocked for every query
    if "causal" in kind:
        allowed &= masking.causal_mask(row.size)
    return allowed


WEIGHT_BLOCKED_TEXT = "0"  # a blocked key's weight: exactly 0, grey, apart from an allowed key's tiny 0.00


def _panel_title(panel: str, blocked_text: str) -> str:
    if panel == "masked scores":
        return f"masked scores (grey: {blocked_text})"
    if panel == "weights":
        return "weights (grey: blocked, exactly 0)"
    return panel


def masked_attention_figure(
    scores,
    mask,
    tokens: Sequence[str],
    *,
    title: str,
    panels: Sequence[str] = _PANELS,
    side_by_side: bool = True,
    decimals: int = 2,
    blocked_text: str = "blocked",
) -> go.Figure:
    """Attention scores before and after masking, and the weights, as heatmaps (lesson 05).

    ``scores (T, T)``: query ``i`` (row, ``tokens[i]``) against key ``j`` (column); ``mask``
    boolean, broadcastable to ``(T, T)``, ``True`` = may attend. ``panels``, in the order given, any of:
    ``"scores"`` (the raw scores), ``"masked scores"`` (blocked cells drawn grey with
    ``blocked_text``, not as huge negative numbers), ``"weights"`` (the softmax of the masked scores,
    blocked scores set to the dtype's minimum as :func:`course_utils.attention.scaled_dot_product_attention`
    does, on a fixed 0..1 colour scale; the blocked cells grey, reading ``0``, so that a blocked
    weight is not taken for an allowed key's tiny ``0.00``). Panels side by side, each colour bar
    clear of the next panel's row labels, or one above the other.
    Values are rounded to ``decimals`` decimals (what the cells show), which keeps an explorer's twin small.
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2 or scores.shape[0] != scores.shape[1] or scores.shape[0] != len(tokens):
        raise ValueError(f"expected scores of shape (T, T) with T = len(tokens) = {len(tokens)}, got {scores.shape}")
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise TypeError(f"expected a boolean mask (True = may attend), got dtype {mask.dtype}")
    try:
        allowed = np.broadcast_to(mask, scores.shape)
    except ValueError:
        raise ValueError(f"expected a mask broadcastable to the scores {scores.shape}, got {mask.shape}") from None
    panels = tuple(panels)
    if not panels or len(set(panels)) != len(panels) or not set(panels) <= set(_PANELS):
        raise ValueError(f"expected distinct panels among {_PANELS}, got {panels}")
    _require_title(title)
    weights = softmax(np.where(allowed, scores, np.finfo(scores.dtype).min), axis=-1)  # (T, T)
    drawn = {
        "scores": dict(values=scores, blocked=None, zmin=None, zmax=None),
        "masked scores": dict(values=np.where(allowed, scores, 0.0), blocked=~allowed, zmin=None, zmax=None),
        "weights": dict(values=weights, blocked=~allowed, zmin=0.0, zmax=1.0),  # a blocked weight is exactly 0
    }
    n = len(panels)
    rows, cols = (1, n) if side_by_side else (n, 1)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[_panel_title(p, blocked_text) for p in panels],
        horizontal_spacing=0.2 if side_by_side else 0.0,  # a colour bar, then the next panel's row labels
        vertical_spacing=0.0 if side_by_side else 0.12,
    )
    for k, panel in enumerate(panels):
        spec = drawn[panel]
        row, col = (1, k + 1) if side_by_side else (k + 1, 1)
        axis = "" if k == 0 else str(k + 1)
        domain_x, domain_y = fig.layout[f"xaxis{axis}"].domain, fig.layout[f"yaxis{axis}"].domain
        fig.layout.annotations[k].update(x=domain_x[0], xanchor="left")  # the panel's title, left-aligned
        colorbar = (
            dict(thickness=12, x=domain_x[1] + 0.015, xanchor="left", len=0.9, y=0.5)
            if side_by_side
            else dict(thickness=12, x=1.01, len=domain_y[1] - domain_y[0], y=(domain_y[0] + domain_y[1]) / 2)
        )
        panel_fig = plots.heatmap(
            np.round(spec["values"], decimals),
            tokens,
            tokens,
            title=panel,
            x_title="key",
            y_title="query",
            decimals=decimals,
            zmin=spec["zmin"],
            zmax=spec["zmax"],
            blocked=spec["blocked"],
            blocked_text=WEIGHT_BLOCKED_TEXT if panel == "weights" else blocked_text,
        )
        for trace in panel_fig.data:
            if trace.showscale is not False:
                trace.update(colorbar=colorbar)
            fig.add_trace(trace, row=row, col=col)
        fig.update_xaxes(type="category", row=row, col=col)
        fig.update_yaxes(type="category", autorange="reversed", row=row, col=col)
        if side_by_side or k == n - 1:
            fig.update_xaxes(title_text="key (attended to)", row=row, col=col)
        if not side_by_side or k == 0:
            fig.update_yaxes(title_text="query (attending)", row=row, col=col)
    cell = 44 if side_by_side else 36
    panel_height = max(260, cell * len(tokens))
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        height=110 + panel_height * rows + (60 * (rows - 1)),
        margin=dict(l=90, r=40, t=100, b=70),
        font=dict(size=13),
    )
    return fig


# "(correct)", not "(right)": the prose names the panels first and second (side by side on a
# laptop, one above the other on a phone), and "right" would name a side too
PLACEMENT_PANELS = ("mask, then softmax (correct)", "softmax, then mask (wrong)")
SUM_LABEL = "row sum"


def mask_placement_figure(
    right,
    wrong,
    mask,
    query_labels: Sequence[str],
    key_labels: Sequence[str],
    *,
    title: str,
    decimals: int = 2,
) -> go.Figure:
    """Two heatmaps side by side: the weights of a mask applied before the softmax (``right``) and
    after it (``wrong``), each with a last column holding every row's sum (lesson 05).

    ``right`` and ``wrong`` are ``(T_q, T_k)`` weights, row ``i`` for ``query_labels[i]``, column ``j``
    for ``key_labels[j]``; ``mask`` boolean, broadcastable to them, ``True`` = may attend. Keys that
    no query may attend to (the ``[PAD]`` keys of a padding mask), whose weight is 0 in both panels,
    are drawn as one grey column reading 0 (labelled ``"[PAD] ×4"`` when they share a label), so that
    the other cells are wide enough to show their values on a phone too; other blocked cells are grey
    with the text 0. Every cell shows its value (readable without colour); the two panels share one
    0..1 colour scale, without a colour bar (every cell writes its value; on a phone the
    cells need that width to hold their text). On a narrow screen the site stacks the panels.
    """
    right, wrong = (np.asarray(w, dtype=float) for w in (right, wrong))
    shape = (len(query_labels), len(key_labels))
    for name, weights in (("right", right), ("wrong", wrong)):
        if weights.shape != shape:
            raise ValueError(
                f"expected {name} of shape (len(query_labels), len(key_labels)) = {shape}, got {weights.shape}"
            )
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise TypeError(f"expected a boolean mask (True = may attend), got dtype {mask.dtype}")
    try:
        allowed = np.broadcast_to(mask, shape)
    except ValueError:
        raise ValueError(f"expected a mask broadcastable to the weights {shape}, got {mask.shape}") from None
    _require_title(title)
    never = ~allowed.any(axis=0)  # (T_k,): keys no query may attend to
    kept = ~never
    keys = plots.unique_labels([label for label, keep in zip(key_labels, kept) if keep])
    blocked = ~allowed[:, kept]
    if never.any():
        names = {str(key_labels[j]) for j in np.flatnonzero(never)}
        keys.append(f"{names.pop()} ×{int(never.sum())}" if len(names) == 1 else f"blocked ×{int(never.sum())}")
        blocked = np.concatenate([blocked, np.ones((shape[0], 1), dtype=bool)], axis=1)
    columns = [*keys, SUM_LABEL]
    blocked = np.concatenate([blocked, np.zeros((shape[0], 1), dtype=bool)], axis=1)  # the sums are never blocked
    fig = make_subplots(rows=1, cols=2, subplot_titles=PLACEMENT_PANELS, horizontal_spacing=0.1)
    for k, weights in enumerate((right, wrong)):
        merged = weights[:, kept]
        if never.any():
            merged = np.concatenate([merged, weights[:, never].sum(axis=1, keepdims=True)], axis=1)
        with_sums = np.concatenate([merged, weights.sum(axis=1, keepdims=True)], axis=1)  # (T_q, columns)
        panel = plots.heatmap(
            np.round(with_sums, decimals),
            columns,
            query_labels,
            title=PLACEMENT_PANELS[k],
            x_title="key",
            y_title="query",
            decimals=decimals,
            zmin=0.0,
            zmax=1.0,
            blocked=blocked,
            blocked_text="0",
        )
        for trace in panel.data:
            trace.update(textfont=dict(size=11))
            trace.update(showscale=False)  # every cell writes its value: the cells keep the width a colour bar would take
            fig.add_trace(trace, row=1, col=k + 1)
        fig.layout.annotations[k].update(x=fig.layout[f"xaxis{'' if k == 0 else 2}"].domain[0], xanchor="left")
        fig.update_xaxes(type="category", title_text="key (attended to)", tickangle=-45, row=1, col=k + 1)
        fig.update_yaxes(type="category", autorange="reversed", row=1, col=k + 1)
    fig.update_yaxes(title_text="query (attending)", row=1, col=1)
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        height=230 + 40 * shape[0],
        margin=dict(l=80, r=8, t=100, b=110),  # r small: on a phone every pixel goes to the cells
        font=dict(size=12),
    )
    return fig


def _require_title(title: str) -> None:
    if not isinstance(title, str) or not title.strip():
        raise ValueError(f"expected a non-empty string for title, got {title!r}")


def masking_explorer(
    tokens: Sequence[Sequence[str]], scores, attention_mask, *, default: tuple[int, str] = (0, "padding")
) -> Explorer:
    """The explorer of lesson 05: pick a sentence of a padded batch and a kind of mask.

    ``tokens``: ``B`` lists of ``T`` token strings (padding included); ``scores (B, T, T)``: each
    sentence's attention scores; ``attention_mask (B, T)``: 1 = real token, 0 = padding. One dropdown
    offers every pair (sentence, kind of :data:`MASK_KINDS`), so that the kernel-free twin, which
    replays one control, offers them all too. Draws the masked scores above the weights
    (:func:`masked_attention_figure`) for :func:`mask_of_kind`.
    """
    scores = np.asarray(scores, dtype=float)
    attention_mask = np.asarray(attention_mask)
    if attention_mask.ndim != 2:
        raise ValueError(f"expected attention_mask of shape (B, T), got {attention_mask.shape}")
    batch, seq_len = attention_mask.shape
    if scores.shape != (batch, seq_len, seq_len):
        raise ValueError(f"expected scores of shape (B, T, T) = {(batch, seq_len, seq_len)}, got {scores.shape}")
    if len(tokens) != batch or any(len(row) != seq_len for row in tokens):
        raise ValueError(f"expected B={batch} lists of T={seq_len} tokens, got lengths {[len(r) for r in tokens]}")

    def draw(view: tuple[int, str]) -> go.Figure:
        b, kind = view
        mask = mask_of_kind(kind, attention_mask[b])
        blocked = int((~mask).sum())
        return masked_attention_figure(
            scores[b],
            mask,
            tokens[b],
            title=f"Sentence {b + 1}, mask: {kind} ({blocked} of {mask.size} scores blocked)",
            panels=("masked scores", "weights"),
            side_by_side=False,
        )

    options = {f"sentence {b + 1} · {kind}": (b, kind) for b in range(batch) for kind in MASK_KINDS}
    return Explorer(draw, [Choice("view", options, default=tuple(default), label="sentence · mask")])


# --------------------------------------------------------------------------------------------
# How a (B, 1, 1, T) padding mask meets the (B, H, T, T) scores; the masks of three kinds of model

MARK_FONT_PX = 10  # the ✓ and ✗ of the three kinds of model: small cells on a laptop keep them
ALLOWED_MARK, BLOCKED_MARK = "█", "·"  # may attend, blocked: a block and a dot, readable without colour


PAD_TINT = plots.color(5)  # the [PAD] key columns of the heads' grids: vermillion dots


def _marks(row, tint: bool = False) -> str:
    """A row of a mask as ``█`` (may attend) and ``·`` (blocked); with ``tint``, the blocked keys'
    dots in :data:`PAD_TINT` (in a padding mask they are the [PAD] keys' columns)."""
    text = "".join(ALLOWED_MARK if allowed else BLOCKED_MARK for allowed in np.ravel(row))
    if not tint:
        return text
    return re.sub(f"({re.escape(BLOCKED_MARK)}+)", f'<span style="color:{PAD_TINT}"><b>\\1</b></span>', text)


def _key_ruler(attention_mask_row) -> str:
    """Under a head's grid, one mark per key column: ``r`` a real token, ``P`` a [PAD] (tinted)."""
    marks = "".join("r" if v else "P" for v in np.ravel(attention_mask_row))
    return re.sub("(P+)", f'<span style="color:{PAD_TINT}"><b>\\1</b></span>', marks)


def mask_broadcast_figure(attention_mask, tokens: Sequence[str], n_heads: int, sentence: int = 0) -> go.Figure:
    """A padding mask broadcast against the scores, box by box, for one sentence of a batch.

    ``attention_mask (B, T)``: Hugging Face's, 1 = real token, 0 = padding; ``tokens (T,)``: the
    tokens of ``sentence`` (at most 7 characters each, ``T`` at most 14); ``n_heads`` ``H`` (1 or
    2 drawn). Boxes: 1. the ``attention_mask``, one row per sentence; 2. the boolean padding mask
    :func:`course_utils.masking.padding_mask`, ``(B, 1, 1, T)``: one row per sentence, ``█`` may
    attend, ``·`` blocked; 3. that row broadcast against the scores ``(B, H, T_q, T_k)``: for the
    chosen sentence, each head's ``(T, T)`` mask, one line per query, the same line for every query
    and every head (one box per head, at most two drawn).
    """
    attention_mask = np.asarray(attention_mask)
    if attention_mask.ndim != 2 or attention_mask.size == 0 or not np.isin(attention_mask, (0, 1)).all():
        raise ValueError(f"expected an attention_mask (B, T) of 0 and 1, got shape {attention_mask.shape}")
    B, T = attention_mask.shape
    if isinstance(sentence, bool) or not isinstance(sentence, (int, np.integer)) or not 0 <= sentence < B:
        raise ValueError(f"expected sentence to be an index in 0 .. {B - 1}, got {sentence!r}")
    labels = [str(t) for t in tokens]
    if len(labels) != T or T > 14 or any(not 0 < len(t) <= 7 for t in labels):
        raise ValueError(f"expected T = {T} (at most 14) tokens of 1 to 7 characters, got {labels}")
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
        raise ValueError(f"expected n_heads, a positive integer, got {n_heads!r}")
    mask = masking.padding_mask(attention_mask)  # (B, 1, 1, T)
    full = np.broadcast_to(mask, (B, int(n_heads), T, T))  # (B, H, T_q, T_k): what the scores meet
    names = [f"{b + 1}" for b in range(B)]
    texts = [
        f"<b>1. attention_mask</b> (B, T) = ({B}, {T})<br>1 = real token, 0 = padding<br>"
        + boxes.labelled_lines([f"sentence {n}" for n in names], [" ".join(str(int(v)) for v in row) for row in attention_mask]),
        f"<b>2. padding_mask</b> (B, 1, 1, T) = ({B}, 1, 1, {T})<br>{ALLOWED_MARK} may attend, {BLOCKED_MARK} blocked<br>"
        + boxes.labelled_lines([f"sentence {n}" for n in names], [_marks(row) for row in mask[:, 0, 0]]),
    ]  # fmt: skip
    drawn = min(int(n_heads), 2)
    pads = int((attention_mask[sentence] == 0).sum())  # the [PAD] keys, tinted in every head's grid
    ruler = _key_ruler(attention_mask[sentence])  # under the grid: which column is a real key, which a [PAD]
    for h in range(drawn):
        texts.append(
            f"<b>3. head {h}</b><br>sentence {sentence + 1}: {T} × {T}<br>"
            + (f'r real, <span style="color:{PAD_TINT}"><b>P [PAD]</b></span><br>' if pads else "")
            + boxes.labelled_lines([*labels, "key"], [*(_marks(line, tint=True) for line in full[sentence, h]), ruler])
        )  # fmt: skip
    heads = list(range(2, 2 + drawn))
    title = (f"A padding mask (B, 1, 1, T) broadcast against the scores (B, H, T, T) = ({B}, {int(n_heads)}, {T}, {T}):"
             " the same keys blocked for every head and query")  # fmt: skip
    return boxes.box_diagram(texts, title=title, wide_rows=[[0, 1], heads], narrow_rows=[[0], [1], heads],
                             edges=[(0, 1)] + [(1, h) for h in heads])  # fmt: skip


PHONE_PLOT_PX = 270  # a panel's width on a phone: a 358 px box less the margins
LABEL_CHAR_PX = 7  # a key label's width per character, at the figure's 12 px


def _key_angle(labels: Sequence[str]) -> int:
    """A panel's key labels upright (0) where each fits its column on a phone, else vertical (-90):
    vertical labels do not collide however narrow the columns, and the site's stacking of the panels
    (course-figures.js) makes room under a panel for labels of exactly these two kinds."""
    longest = max(len(label) for label in labels) * LABEL_CHAR_PX
    return 0 if longest + 4 <= PHONE_PLOT_PX / len(labels) else -90


MODEL_PANELS = ("encoder:<br>bidirectional", "decoder:<br>causal", "encoder–decoder:<br>cross-attention")


def model_masks_figure(source_tokens: Sequence[str], target_tokens: Sequence[str], source_mask) -> go.Figure:
    """The masks of three kinds of Transformer side by side, as grids of may-attend and blocked cells.

    ``source_tokens (T_src,)`` a padded source sentence and ``source_mask (T_src,)`` its
    ``attention_mask`` (1 = real, 0 = padding); ``target_tokens (T_tgt,)`` what a decoder has
    written. Panels: an encoder's self-attention over the source (padding mask only, every query
    reads the whole sentence); a decoder's self-attention over the target (causal); an
    encoder–decoder's cross-attention, the target's queries over the source's keys (the source's
    padding only). An encoder–decoder also has the first two. A cell reads ``✓`` where the query
    (row) may attend to the key (column) and ``✗`` (grey) where it may not, so the panels read
    without colour. On a phone the site stacks them.
    """
    source_tokens, target_tokens = [str(t) for t in source_tokens], [str(t) for t in target_tokens]
    source_mask = np.asarray(source_mask)
    if source_mask.shape != (len(source_tokens),) or not np.isin(source_mask, (0, 1)).all() or not source_mask.any():
        raise ValueError(f"expected a source attention_mask (T_src,) = ({len(source_tokens)},) of 0 and 1 with a "
                         f"real token, got {source_mask.shape}")  # fmt: skip
    if not target_tokens:
        raise ValueError("expected at least one target token")
    encoder = mask_of_kind("padding", source_mask)  # (T_src, T_src)
    decoder = masking.causal_mask(len(target_tokens))  # (T_tgt, T_tgt)
    cross = np.broadcast_to(masking.padding_mask(source_mask[None])[0, 0], (len(target_tokens), len(source_tokens)))
    grids = [(encoder, source_tokens, source_tokens), (decoder, target_tokens, target_tokens),
             (cross, target_tokens, source_tokens)]  # fmt: skip
    fig = make_subplots(rows=1, cols=3, subplot_titles=MODEL_PANELS, horizontal_spacing=0.13)
    for col, (allowed, rows, columns) in enumerate(grids, start=1):
        ys, xs = plots.unique_labels(rows), plots.unique_labels(columns)
        fig.add_trace(go.Heatmap(
            z=np.where(allowed, 1.0, np.nan), x=xs, y=ys, colorscale=[[0, plots.color(4)], [1, plots.color(4)]],
            zmin=0, zmax=1, showscale=False, text=np.where(allowed, "✓", ""), texttemplate="%{text}",
            textfont=dict(size=MARK_FONT_PX),  # a set size: plotly drops "auto" text from small cells
            hovertemplate="query %{y}<br>key %{x}<br>may attend<extra></extra>", hoverongaps=False,
            name="may attend", xgap=1, ygap=1,
        ), row=1, col=col)  # fmt: skip
        blocked = plots.blocked_cells_trace(~allowed, xs, ys, text="✗").update(xgap=1, ygap=1)
        blocked.textfont.size = MARK_FONT_PX
        fig.add_trace(blocked, row=1, col=col)
        fig.update_xaxes(type="category", tickangle=_key_angle(xs), title_text="key", row=1, col=col)
        fig.update_yaxes(type="category", autorange="reversed", title_text="query" if col == 1 else None, row=1, col=col)
    fig.update_yaxes(title_text="query (decoder)", row=1, col=3)
    fig.update_layout(
        title=dict(text="What each kind of model lets a query read: ✓ may attend, ✗ blocked", x=0.02, xanchor="left"),
        template=plots.TEMPLATE, height=420, margin=dict(l=70, r=10, t=100, b=90), font=dict(size=12),
        showlegend=False,
    )  # fmt: skip
    return fig


# --------------------------------------------------------------------------------------------
# Masking as -inf before the softmax, and the row with nothing to attend to


def blocked_row_figure(scores, mask, empty_answers: dict) -> go.Figure:
    """What a mask does to one query's row, and the row whose every key is blocked (lesson 05).

    ``scores (T_k,)`` one query's scores and ``mask (T_k,)`` boolean (``True`` = may attend, at least
    one key allowed). Panel 1: the scores as bars, each blocked key's score sent to −∞ (an arrow down
    out of the panel, its old score a grey outline). Panel 2: the weights, the softmax of the allowed
    scores alone (:func:`course_utils.masking.safe_masked_softmax`), over the weights without the
    mask in grey: a blocked key gets exactly 0, the others share its weight. Panel 3:
    ``empty_answers`` ``{name: (T_e,) weights}``, what fills make of a row whose every key is
    blocked, one row of cells each, every weight written, ``NaN`` cells grey. Side by side; the site
    stacks them on a phone.
    """
    from .. import masking as masks

    scores, mask = np.asarray(scores, dtype=float), np.asarray(mask)
    if scores.ndim != 1 or scores.shape != mask.shape or mask.dtype != np.bool_ or not mask.any():
        raise ValueError(f"expected scores (T_k,) and a boolean mask (T_k,) allowing a key, got {scores.shape} and "
                         f"{mask.dtype} {mask.shape}")  # fmt: skip
    if not empty_answers or len({np.shape(w) for w in empty_answers.values()}) != 1 or \
            np.ndim(next(iter(empty_answers.values()))) != 1:
        raise ValueError("expected empty_answers: at least one {name: weights (T_e,)}, all of one length")
    keys = [str(k) for k in range(scores.size)]  # the x axis is titled "key"
    unmasked = softmax(scores, axis=-1)
    weights = masks.safe_masked_softmax(scores, mask)  # (T_k,): 0 where blocked
    blocked = [f"key {keys[k]}" for k in np.flatnonzero(~mask)]
    fig = make_subplots(rows=1, cols=3, column_widths=[0.3, 0.3, 0.4], horizontal_spacing=0.16, subplot_titles=(
        f"scores: {', '.join(blocked)} blocked → −∞", "weights (grey: without the mask)",
        "every key blocked: three fills"))  # fmt: skip
    for k, note in enumerate(fig.layout.annotations):
        note.update(x=fig.layout[f"xaxis{'' if k == 0 else k + 1}"].domain[0], xanchor="left", font=dict(size=13))
    low = float(min(scores.min(), 0.0)) - 1.6
    fig.add_trace(go.Bar(x=keys, y=plots.significant(np.where(mask, scores, np.nan)), name="scores",
                         marker=dict(color=plots.color(0)), text=[f"{v:.1f}" if m else "" for v, m in zip(scores, mask)],
                         textposition="outside", cliponaxis=False, hovertemplate="%{x}: %{y}<extra></extra>"),
                  row=1, col=1)  # fmt: skip
    fig.add_trace(go.Bar(x=keys, y=plots.significant(np.where(mask, np.nan, scores)), name="its score before",
                         marker=dict(color="rgba(0,0,0,0)", line=dict(color=plots.REFERENCE_COLOR, width=1.5)),
                         text=[f"{v:.1f}" if not m else "" for v, m in zip(scores, mask)], textposition="outside",
                         textfont=dict(color=plots.REFERENCE_COLOR), cliponaxis=False,
                         hovertemplate="%{x}: %{y}, then −∞<extra></extra>"), row=1, col=1)  # fmt: skip
    for key in (keys[k] for k in np.flatnonzero(~mask)):  # down out of the panel: minus infinity
        fig.add_annotation(x=key, y=low + 0.15, ax=key, ay=0.0, xref="x", yref="y", axref="x", ayref="y", text="",
                           showarrow=True, arrowhead=2, arrowsize=1.2, arrowwidth=2, arrowcolor=plots.color(5))
        fig.add_annotation(x=key, y=low + 0.15, xref="x", yref="y", text="<b>−∞</b>", showarrow=False,
                           xanchor="left", xshift=6, yanchor="bottom", font=dict(color=plots.color(5), size=13))
    fig.add_trace(go.Bar(x=keys, y=plots.significant(unmasked), name="without the mask", width=0.8,
                         marker=dict(color=GHOST_BARS, line=dict(color=plots.REFERENCE_COLOR, width=1)),
                         hovertemplate="%{x}, no mask: %{y:.2f}<extra></extra>"), row=1, col=2)  # fmt: skip
    fig.add_trace(go.Bar(x=keys, y=plots.significant(weights), name="masked", width=0.5,
                         marker=dict(color=plots.color(0)), text=[f"{w:.2f}" for w in weights], textposition="outside",
                         cliponaxis=False, hovertemplate="%{x}, masked: %{y:.2f}<extra></extra>"),
                  row=1, col=2)  # fmt: skip
    names = list(empty_answers)
    values = np.array([np.asarray(w, dtype=float) for w in empty_answers.values()])  # (answers, T_e)
    empty_keys = [str(k) for k in range(values.shape[1])]
    cells = plots.heatmap(np.nan_to_num(values), empty_keys, names, title="t", x_title="key", y_title="fill",
                          zmin=0.0, zmax=1.0, blocked=np.isnan(values), blocked_text="NaN")
    for trace in cells.data:
        trace.update(showscale=False, xgap=2, ygap=2)
        fig.add_trace(trace, row=1, col=3)
    fig.update_yaxes(range=[low, float(scores.max()) + 0.9], title_text="score", zeroline=True, row=1, col=1)  # no tick under the title
    fig.update_yaxes(range=[0, 1.15], title_text="weight", row=1, col=2)
    for col in (1, 2, 3):
        fig.update_xaxes(type="category", title_text="key", row=1, col=col)
    fig.update_yaxes(type="category", autorange="reversed", row=1, col=3)
    fig.update_layout(
        title=dict(text="A mask sends blocked scores to −∞ before the softmax; with every key blocked, each fill "
                        "answers otherwise",
                   x=0.02, xanchor="left"),
        template=plots.TEMPLATE, height=380, margin=dict(l=70, r=20, t=100, b=60), font=dict(size=12),
        showlegend=False, barmode="overlay",
    )  # fmt: skip
    return fig


GHOST_BARS = "rgba(128, 128, 128, 0.3)"
