"""Lesson 09's mechanism pictures: a KV cache growing one cell a token (:func:`kv_cache_figure`),
query heads sharing key/value heads (:func:`kv_sharing_figure`), and the online softmax reading the
keys block by block with its running maximum (:func:`online_softmax_figure`). RoPE's picture is in
:mod:`course_utils.figures.rotation`, beside lesson 03's rotation.
"""

from __future__ import annotations

import html
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from .. import plots
from ..validation import positive_int
from . import boxes

__all__ = ["kv_cache_figure", "kv_cache_layout", "kv_sharing_figure", "next_token_figure", "next_token_layout",
           "online_softmax_figure"]


KV_FONT = boxes.BOX_FONT  # 11 px monospaced: a cell's width follows its token's length
KV_CHAR_PX = boxes.CHAR_PX
KV_CELL_PAD_PX = 8  # a cell's width beyond its token's text
KV_CELL_PX = 18  # a k or a v cell's height
KV_FAN_PX = 34  # above each layer's cells: the new query and its lines to every key
KV_HEAD_PX = 2 * boxes.LINE_PX + 6  # a step's two lines of text
KV_GAP_PX = 14  # between steps, and between two layers side by side
KV_WIDE_DESIGN_PX = 700  # the site draws a diagram (shapes, hidden axes) 720 px wide at least on a laptop
KV_NEW_FILL = "rgba(230, 159, 0, 0.4)"  # the palette's orange, see-through: light page and dark
KV_QUERY_COLOR = plots.color(5)


def _kv_cell(x0: float, x1: float, y0: float, new: bool, name: str) -> dict:
    return dict(type="rect", xref="x", yref="y", x0=x0, x1=x1, y0=y0, y1=y0 + KV_CELL_PX, name=name,
                fillcolor=KV_NEW_FILL if new else "white", layer="below",
                line=dict(color="black", width=2 if new else 1))  # fmt: skip


def _kv_text(x: float, y: float, text: str, xanchor: str = "center", name: str = "", **font) -> dict:
    return dict(x=x, y=y, xref="x", yref="y", text=text, showarrow=False, xanchor=xanchor, yanchor="middle",
                font=dict(KV_FONT, **font), name=name)  # fmt: skip


def kv_cache_layout(tokens: Sequence[str], prompt_length: int, shape: tuple[int, int, int, int],
                    design_px: float, layers_per_row: int) -> dict:
    """The KV cache picture laid out for ``design_px`` pixels, ``layers_per_row`` layers side by
    side: annotations, shapes, height and axes (both axes count pixels, y downwards).

    ``tokens``: the prompt's, then the written ones; ``shape``: ``(L, H, H_kv, d)``. One band a
    step (the prompt, then each written token): two lines of text (what the step reads, how many
    queries read how many keys; the cache's shape ``(B, H_kv, t, d)`` after it), then each layer's
    cache as a row of ``k`` cells over a row of ``v`` cells, one per cached token and labelled with
    it, the cells this step added filled and outlined in bold; over each layer's keys, from the
    second band on, the new token's query ``q`` and a line from it to every key it reads.
    Raises ``ValueError`` when a layer's row is wider than ``design_px / layers_per_row``.
    """
    L, H, H_kv, d = shape
    label_px = len("layer 0 k") * KV_CHAR_PX + 8 if L <= 10 else len("layer 10 k") * KV_CHAR_PX + 8
    widths = [len(t) * KV_CHAR_PX + KV_CELL_PAD_PX for t in tokens]
    unit_px = label_px + sum(widths)
    columns = layers_per_row
    room = (design_px - KV_GAP_PX * (columns - 1)) / columns
    if unit_px > room:
        raise ValueError(f"expected each layer's cache row to fit {room:.0f} px, the tokens need {unit_px:.0f} px: "
                         f"use shorter or fewer tokens")  # fmt: skip
    starts = [0.0] + list(np.cumsum(widths))
    notes, shapes, y = [], [], 0.0
    written = len(tokens) - prompt_length
    for step in range(written + 1):
        t = prompt_length + step  # tokens cached after this step
        new = set(range(prompt_length)) if step == 0 else {t - 1}
        reading = " ".join(html.escape(tokens[i]) for i in sorted(new))
        head = (f"<b>prompt</b>: {len(new)} queries × {t} keys, causal mask" if step == 0
                else f"<b>step {step}</b>: reads “{reading}”, 1 query × {t} keys")  # fmt: skip
        notes.append(_kv_text(0, y + boxes.LINE_PX / 2, head, "left", name=f"step {step} head"))
        notes.append(_kv_text(0, y + 1.5 * boxes.LINE_PX, f"cache (B, H_kv, t, d) = (1, {H_kv}, <b>{t}</b>, {d})",
                              "left", name=f"step {step} shape"))  # fmt: skip
        y += KV_HEAD_PX
        fan = KV_FAN_PX if step else 6  # the prompt's band has no single new query to draw
        rows = [list(range(start, min(start + columns, L))) for start in range(0, L, columns)]
        for layers in rows:
            for c, layer in enumerate(layers):
                left = c * (room + KV_GAP_PX)
                cells = left + label_px
                k_top = y + fan
                v_top = k_top + KV_CELL_PX
                notes.append(_kv_text(cells - 4, k_top + KV_CELL_PX / 2, f"layer {layer} k", "right"))
                notes.append(_kv_text(cells - 4, v_top + KV_CELL_PX / 2, "v", "right"))
                for i in range(t):
                    x0, x1 = cells + starts[i], cells + starts[i + 1]
                    for kind, top in (("k", k_top), ("v", v_top)):
                        shapes.append(_kv_cell(x0, x1, top, i in new, f"step {step} layer {layer} {kind} {i}"
                                               + (" new" if i in new else "")))  # fmt: skip
                        label = html.escape(tokens[i])  # <b>, not font weight: plotly < 5.23 has none
                        notes.append(_kv_text((x0 + x1) / 2, top + KV_CELL_PX / 2,
                                              f"<b>{label}</b>" if i in new else label,
                                              name=f"step {step} layer {layer} {kind} {i}"))  # fmt: skip
                if step:  # the new token's query, over its own cell, reads every cached key
                    q_x = cells + (starts[t - 1] + starts[t]) / 2
                    q_y = y + 8
                    notes.append(dict(_kv_text(q_x, q_y, "<b>q</b>", name=f"step {step} layer {layer} query",
                                               color=KV_QUERY_COLOR), bgcolor="white", bordercolor=KV_QUERY_COLOR,
                                      borderwidth=1.5, borderpad=1))  # fmt: skip
                    for i in range(t):
                        shapes.append(dict(type="line", xref="x", yref="y", x0=q_x, y0=q_y + 9,
                                           x1=cells + (starts[i] + starts[i + 1]) / 2, y1=k_top,
                                           line=dict(color=KV_QUERY_COLOR, width=1.5), layer="below",
                                           name=f"step {step} layer {layer} reads {i}"))  # fmt: skip
            y += fan + 2 * KV_CELL_PX + 6
        y += KV_GAP_PX
    plot_height = y - KV_GAP_PX
    return dict(
        annotations=notes, shapes=shapes, height=int(round(plot_height + boxes.TOP_PX + 12)),
        xaxis=dict(visible=False, range=[-2, design_px], fixedrange=True),
        yaxis=dict(visible=False, range=[plot_height, -4], fixedrange=True),
    )  # fmt: skip


def kv_cache_figure(tokens: Sequence[str], prompt_length: int, config) -> go.Figure:
    """A decoder's KV cache, step by step: the prompt read at once, then one new token a step.

    ``tokens``: the prompt's tokens, then the tokens written (at most 4 written are drawn, each at
    most 10 characters); ``prompt_length`` how many of them the prompt holds; ``config`` the
    decoder's :class:`course_utils.decoder.DecoderConfig` (its layers, heads, key/value heads and
    head width give the shapes). Drawn by :func:`kv_cache_layout`: each layer's cache a row of
    ``k`` cells over a row of ``v`` cells, one a token, growing to the right by one cell a step,
    the new token's query joined to every key it reads. On a laptop the layers stand side by side
    where they fit; on a phone (``layout.meta["narrow_layout"]``) one under the other.
    """
    tokens = [str(t) for t in tokens]
    prompt_length = positive_int("prompt_length", prompt_length)
    for name in ("n_layers", "n_heads", "kv_heads", "head_dim"):
        if not isinstance(getattr(config, name, None), int):
            raise TypeError(f"expected a DecoderConfig (n_layers, n_heads, kv_heads, head_dim), got {type(config).__name__}")
    written = len(tokens) - prompt_length
    if not 1 <= written <= 4 or any(not 0 < len(t) <= 10 for t in tokens) or prompt_length > 6:
        raise ValueError(f"expected a prompt of at most 6 tokens, then 1 to 4 written, each of 1 to 10 characters, "
                         f"got {tokens} with prompt_length={prompt_length}")  # fmt: skip
    if config.n_layers > 4:
        raise ValueError(f"expected at most 4 layers to draw, got n_layers={config.n_layers}")
    shape = (config.n_layers, config.n_heads, config.kv_heads, config.head_dim)
    narrow = kv_cache_layout(tokens, prompt_length, shape, boxes.NARROW_DESIGN_PX, 1)
    wide = narrow
    for per_row in range(min(config.n_layers, 2), 0, -1):  # side by side where they fit
        try:
            wide = kv_cache_layout(tokens, prompt_length, shape, KV_WIDE_DESIGN_PX, per_row)
            break
        except ValueError:
            continue
    title = f"A KV cache grows by one key and one value a token, in each of its {config.n_layers} layers"
    fig = go.Figure()
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"), template=plots.TEMPLATE,
        margin=dict(l=4, r=4, t=boxes.TOP_PX, b=8), showlegend=False, font=dict(size=13), **wide,
        meta=dict(narrow_layout={key: narrow[key] for key in ("annotations", "shapes", "height", "xaxis", "yaxis")}),
    )  # fmt: skip
    return fig


def kv_sharing_figure(n_heads: int, kv_head_counts: Sequence[int]) -> go.Figure:
    """Query heads and the key/value heads they read, for each count of key/value heads.

    ``n_heads``: query heads ``H`` (at most 16); ``kv_head_counts``: 1 to 4 counts ``H_kv``, each
    dividing ``H``. One band per count, top to bottom: the ``H`` query heads on a row (circles
    ``q0``, ``q1``, ...) above the ``H_kv`` key/value heads (squares ``kv0``, ...), each query head
    joined to the head it reads: :func:`course_utils.grouped_query.repeat_kv`'s order, groups of
    ``H / H_kv`` neighbours. Each band is named, with the share of the cache it keeps.
    """
    import torch

    from ..grouped_query import repeat_kv

    H = positive_int("n_heads", n_heads)
    counts = [positive_int("a key/value head count", c) for c in kv_head_counts]
    if H > 16 or not 1 <= len(counts) <= 4 or any(H % c for c in counts):
        raise ValueError(f"expected at most 16 query heads and 1 to 4 key/value head counts dividing them, got "
                         f"H={H}, {counts}")  # fmt: skip
    fig = go.Figure()
    band = 3.0
    for b, H_kv in enumerate(counts):
        top, bottom = -b * band, -b * band - 1.4
        heads = torch.arange(H_kv, dtype=torch.float64).reshape(1, H_kv, 1, 1)
        reads = repeat_kv(heads, H // H_kv).reshape(H).long().tolist()  # the key/value head of each query head
        q_x = np.arange(H) - (H - 1) / 2
        kv_x = (np.arange(H_kv) - (H_kv - 1) / 2) * (H / H_kv)
        xs, ys = [], []
        for i, g in enumerate(reads):
            xs += [float(q_x[i]), float(kv_x[g]), None]
            ys += [top, bottom, None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=plots.color(b), width=1.8,
                                 dash=plots.DASHES[b]), name=f"{H_kv} key/value heads", hoverinfo="name"))  # fmt: skip
        fig.add_trace(go.Scatter(x=plots.significant(q_x), y=[top] * H, mode="markers", name="query heads",
                                 marker=dict(symbol="circle", size=16, color="white", line=dict(color="black", width=1.5)),
                                 hovertext=[f"query head {i} reads key/value head {g}" for i, g in enumerate(reads)],
                                 hoverinfo="text", showlegend=False))  # fmt: skip
        fig.add_trace(go.Scatter(x=plots.significant(kv_x), y=[bottom] * H_kv, mode="markers", name="key/value heads",
                                 marker=dict(symbol="square", size=18, color=plots.color(b), line=dict(color="black", width=1.5)),
                                 hovertext=[f"key/value head {g}" for g in range(H_kv)], hoverinfo="text",
                                 showlegend=False))  # fmt: skip
        kind = "multi-head" if H_kv == H else "multi-query" if H_kv == 1 else "grouped-query"
        fig.add_annotation(x=-(H - 1) / 2 - 0.6, y=top + 0.75, xanchor="left", showarrow=False, font=dict(size=12),
                           text=f"<b>{kind}</b>: cache {H_kv}/{H}<br>" + (
                               f"1 key/value head, shared by all {H} queries" if H_kv == 1
                               else f"{H_kv} key/value heads, {H // H_kv} quer{'ies' if H // H_kv > 1 else 'y'} each"),
                           align="left")  # two lines: the longest fits a phone  # fmt: skip
    fig.update_xaxes(visible=False, range=[-(H - 1) / 2 - 0.8, (H - 1) / 2 + 0.8])
    fig.update_yaxes(visible=False, range=[-(len(counts) - 1) * band - 1.9, 1.3])
    fig.update_layout(
        title=dict(text=f"{H} query heads (circles) and the key/value heads (squares) they read", x=0.02,
                   xanchor="left"),
        template=plots.TEMPLATE, height=90 + 150 * len(counts), margin=dict(l=10, r=10, t=60, b=10),
        font=dict(size=13), showlegend=False,
    )  # fmt: skip
    return fig


SOFTMAX_PATTERNS = ("", "/", ".", "x")  # each block's hatching beside its colour: blocks read without colour


def online_softmax_figure(query, keys, values, block_size: int) -> go.Figure:
    """The online softmax for one query, block by block of keys, in two panels on one key axis.

    ``query (d_k,)``, ``keys (T_k, d_k)``, ``values (T_k, d_v)`` (``T_k`` at most 32, at most 4
    blocks, ``d_v`` at most 3), ``block_size`` keys a block. Above: the query's scores ``q · k_j /
    sqrt(d_k)``, one bar per key, each block in its own colour and hatching, the running maximum
    ``m`` after each block as a black line over the block and its value just above the block's
    bars. Below, under each block: the running sum ``ℓ`` after it as a stack of each block's
    share ``Σ_j e^(s_j − m)``, taken at the current ``m``: when a block raises the maximum, the
    earlier shares shrink by ``e^(m − m′)`` (a dashed line marks ``ℓ`` before the shrink) and the
    block's own sum is added on top; over each stack, the factor, the sum added and ``ℓ``. The
    title gives the result, ``acc / ℓ``, beside lesson 04's softmax-weighted sum: the same
    numbers. From :func:`course_utils.online_softmax.blocked_attention_steps`.
    """
    from plotly.subplots import make_subplots

    from ..online_softmax import blocked_attention_steps

    q, k, v = (np.asarray(a, dtype=float) for a in (query, keys, values))
    if q.ndim != 1 or k.ndim != 2 or v.ndim != 2 or k.shape[1] != q.size or v.shape[0] != k.shape[0]:
        raise ValueError(f"expected query (d_k,), keys (T_k, d_k) and values (T_k, d_v), got {q.shape}, {k.shape}, "
                         f"{v.shape}")  # fmt: skip
    block_size = positive_int("block_size", block_size)
    if k.shape[0] > 32 or v.shape[1] > 3 or -(-k.shape[0] // block_size) > 4:
        raise ValueError(f"expected at most 32 keys in at most 4 blocks, and values of at most 3 numbers, got "
                         f"{k.shape[0]} keys in blocks of {block_size} and d_v = {v.shape[1]}")  # fmt: skip
    states = list(blocked_attention_steps(q[None], k, v, block_size))
    scores = np.concatenate([s.scores.numpy()[0] for s in states])  # (T_k,)
    result = (states[-1].acc / states[-1].l).numpy()[0]  # (d_v,)
    weights = np.exp(scores - scores.max())
    direct = (weights / weights.sum()) @ v  # lesson 04's way: every score at once
    maxima = [float(s.m) for s in states]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.55, 0.45], vertical_spacing=0.16,
                        subplot_titles=["scores q·k / √d, block by block; black: the running maximum m",
                                        "the running sum ℓ: each block's share, at the current m"])  # fmt: skip
    top = float(max(scores.max(), 0.0))
    low = float(min(scores.min(), 0.0))
    pad = 0.12 * (top - low + 1)
    for n, s in enumerate(states):
        colour, pattern = plots.color(n), SOFTMAX_PATTERNS[n]
        fig.add_trace(go.Bar(x=list(range(s.start, s.stop)), y=plots.significant(scores[s.start:s.stop]),
                             name=f"block {n + 1}", marker=dict(color=colour, pattern_shape=pattern,
                             line=dict(color="black", width=0.5)),
                             hovertemplate=f"block {n + 1}, key %{{x}}: score %{{y:.2f}}<extra></extra>"),
                      row=1, col=1)  # fmt: skip
        fig.add_trace(go.Scatter(x=[s.start - 0.5, s.stop - 0.5], y=plots.significant([maxima[n]] * 2), mode="lines",
                                 line=dict(color="black", width=3), name=f"m after block {n + 1}",
                                 hovertemplate=f"running maximum m = {maxima[n]:.2f}<extra></extra>"),
                      row=1, col=1)  # fmt: skip
        above = max(float(scores[s.start:s.stop].max()), maxima[n], 0.0)
        fig.add_annotation(x=(s.start + s.stop - 1) / 2, y=above + 0.04 * (top - low + 1), yanchor="bottom",
                           showarrow=False, font=dict(size=11), text=f"m = {maxima[n]:.2f}", row=1, col=1)
    # the running sum, under each block: block j's share after block n is Σ_j e^(s − m_n)
    centres = [(s.start + s.stop - 1) / 2 for s in states]
    widths = [0.8 * (s.stop - s.start) for s in states]
    shares = np.array([[np.exp(scores[b.start:b.stop] - maxima[n]).sum() if j <= n else 0.0
                        for j, b in enumerate(states)] for n in range(len(states))])  # (blocks, blocks)
    for j in range(len(states)):
        fig.add_trace(go.Bar(x=centres[j:], y=plots.significant(shares[j:, j]), width=widths[j:],
                             name=f"block {j + 1}'s share of ℓ", marker=dict(color=plots.color(j),
                             pattern_shape=SOFTMAX_PATTERNS[j], line=dict(color="black", width=0.5)),
                             hovertemplate=f"block {j + 1}'s share: %{{y:.2f}}<extra></extra>"),
                      row=2, col=1)  # fmt: skip
    sums = [float(s.l) for s in states]
    for n, s in enumerate(states):
        if n and float(s.correction) < 1:  # ℓ before the shrink, dashed, across this block's stack
            fig.add_trace(go.Scatter(x=[centres[n] - widths[n] / 2, centres[n] + widths[n] / 2],
                                     y=plots.significant([sums[n - 1]] * 2), mode="lines",
                                     line=dict(color="black", width=1.5, dash="dash"),
                                     name=f"ℓ before block {n + 1}", hovertemplate=f"ℓ before the shrink: "
                                     f"{sums[n - 1]:.2f}<extra></extra>"), row=2, col=1)  # fmt: skip
        added = float(shares[n, n])
        note = (f"ℓ = {sums[n]:.2f}" if n == 0
                else f"×{float(s.correction):.2f}, +{added:.2f}<br>ℓ = {sums[n]:.2f}")  # fmt: skip
        fig.add_annotation(x=centres[n], y=max(sums[n], sums[n - 1] if n else 0.0), yanchor="bottom", showarrow=False,
                           font=dict(size=11), text=note, row=2, col=1)  # fmt: skip
    fig.update_xaxes(tick0=0, dtick=1 if k.shape[0] <= 16 else 2, range=[-0.6, k.shape[0] - 0.4])
    fig.update_xaxes(title_text="key j", row=2, col=1)
    fig.update_yaxes(title_text="score", range=[low - pad, top + 2.2 * pad], row=1, col=1)
    fig.update_yaxes(title_text="ℓ", range=[0, 1.45 * max(sums)], row=2, col=1)
    fig.update_layout(
        title=dict(text=f"Online softmax, blocks of {block_size}: acc / ℓ = {boxes.vector(result)}; "
                        f"softmax · V = {boxes.vector(direct)}", x=0.02, xanchor="left"),
        template=plots.TEMPLATE, height=600, margin=dict(l=60, r=20, t=90, b=60), font=dict(size=12),
        showlegend=False, bargap=0.15, barmode="stack",
    )  # fmt: skip
    return fig


SHIFT_CELL_H = 18  # a row of the mask: one position
SHIFT_LABEL_PX = len("pos 10") * boxes.CHAR_PX + 6  # the positions' labels, left of the rows
READS_FILL = "rgba(0, 158, 115, 0.4)"  # a key the position reads (the palette's green, see-through)


def next_token_layout(input_tokens: Sequence[str], target_tokens: Sequence[str], design_px: float) -> dict:
    """The next-token picture for ``design_px`` pixels: annotations, shapes, height, axes (pixels,
    y downwards). The inputs ``t_0 .. t_{T−1}`` head the columns; row ``i`` (position ``i``) fills
    the columns it reads under lesson 05's causal mask, ``0 .. i``, and ends, just right of its
    last cell, with the token it is scored on, ``→ t_{i+1}``: the targets are the inputs moved one
    place on, every row at once. Each column is as wide as its token.
    """
    from ..masking import causal_mask

    T = len(input_tokens)
    reads = causal_mask(T)  # (T, T): row i reads keys 0 .. i
    widths = [max(len(t) * boxes.CHAR_PX + 8, 3 * boxes.CHAR_PX) for t in input_tokens]
    last = (len(target_tokens[-1]) + 2) * boxes.CHAR_PX + 6  # the last row's target, past the columns
    needed = SHIFT_LABEL_PX + sum(widths) + last
    if needed > design_px:
        raise ValueError(f"expected tokens that fit {design_px:.0f} px, they need {needed:.0f} px: draw fewer or "
                         f"shorter tokens")  # fmt: skip
    left = (design_px - needed) / 2 + SHIFT_LABEL_PX
    edges = left + np.concatenate([[0.0], np.cumsum(widths)])
    notes, shapes = [], []
    head = 22  # the inputs' row of boxes
    notes.append(dict(x=left - 4, y=head / 2, xref="x", yref="y", text="inputs", showarrow=False, xanchor="right",
                      yanchor="middle", font=dict(boxes.BOX_FONT, size=10), name="inputs label"))  # fmt: skip
    for j, token in enumerate(input_tokens):
        shapes.append(dict(type="rect", xref="x", yref="y", x0=edges[j], x1=edges[j + 1], y0=0, y1=head,
                           fillcolor="white", line=dict(color="black", width=1.5), name=f"input {j}"))  # fmt: skip
        notes.append(dict(x=(edges[j] + edges[j + 1]) / 2, y=head / 2, xref="x", yref="y",
                          text=f"<b>{html.escape(token)}</b>", showarrow=False, xanchor="center", yanchor="middle",
                          font=boxes.BOX_FONT, name=f"input {j}"))  # fmt: skip
    top = head + 8
    for i in range(T):
        y0 = top + i * SHIFT_CELL_H
        notes.append(dict(x=left - 4, y=y0 + SHIFT_CELL_H / 2, xref="x", yref="y", text=f"pos {i}", showarrow=False,
                          xanchor="right", yanchor="middle", font=dict(boxes.BOX_FONT, size=10),
                          name=f"position {i}"))  # fmt: skip
        for j in range(T):
            if reads[i, j]:  # a blocked key is left empty: the mask is what is not drawn
                shapes.append(dict(type="rect", xref="x", yref="y", x0=edges[j], x1=edges[j + 1], y0=y0,
                                   y1=y0 + SHIFT_CELL_H, fillcolor=READS_FILL, line=dict(color="black", width=1),
                                   name=f"position {i} reads {j}"))  # fmt: skip
        notes.append(dict(x=edges[i + 1] + 4, y=y0 + SHIFT_CELL_H / 2, xref="x", yref="y",
                          text=f"→ <b>{html.escape(target_tokens[i])}</b>", showarrow=False, xanchor="left",
                          yanchor="middle", font=dict(boxes.BOX_FONT, color=plots.color(5)),
                          name=f"target {i}"))  # fmt: skip
    plot_height = top + T * SHIFT_CELL_H + 4
    return dict(
        annotations=notes, shapes=shapes, height=int(round(plot_height + boxes.TOP_PX + 12)),
        xaxis=dict(visible=False, range=[0, design_px], fixedrange=True),
        yaxis=dict(visible=False, range=[plot_height, -2], fixedrange=True),
    )  # fmt: skip


def next_token_figure(input_tokens: Sequence[str], target_tokens: Sequence[str]) -> go.Figure:
    """How a decoder is trained on a sentence: one pass, every position scored at once.

    ``input_tokens (T,)`` and ``target_tokens (T,)``: one row of
    :func:`course_utils.decoder.next_token_batch`, as tokens (``T`` at most 12): the targets are
    the inputs moved one place on (the last target is the token after the last input). Drawn by
    :func:`next_token_layout`: the inputs head the columns, row ``i`` reads inputs ``0 .. i``
    under the causal mask and is scored on target ``i``. Laid out for a laptop and
    (``layout.meta["narrow_layout"]``) a phone, the same columns centred in each.
    """
    inputs, targets = [str(t) for t in input_tokens], [str(t) for t in target_tokens]
    if not 1 <= len(inputs) <= 12 or len(targets) != len(inputs):
        raise ValueError(f"expected 1 to 12 input tokens and as many targets, got {len(inputs)} and {len(targets)}")
    if inputs[1:] != targets[:-1]:
        raise ValueError(f"expected the targets to be the inputs moved one place on (targets[i] = inputs[i + 1]), got "
                         f"inputs {inputs} and targets {targets}")  # fmt: skip
    narrow = next_token_layout(inputs, targets, boxes.NARROW_DESIGN_PX)
    wide = next_token_layout(inputs, targets, boxes.WIDE_DESIGN_PX)
    fig = go.Figure()
    fig.update_layout(
        title=dict(text=f"One pass trains all {len(inputs)} positions: position i reads tokens 0…i and is scored "
                        f"on token i+1", x=0.02, xanchor="left"),
        template=plots.TEMPLATE, margin=dict(l=4, r=4, t=boxes.TOP_PX, b=8), showlegend=False, font=dict(size=13),
        meta=dict(narrow_layout={key: narrow[key] for key in ("annotations", "shapes", "height", "xaxis", "yaxis")}),
        **wide,
    )  # fmt: skip
    return fig
