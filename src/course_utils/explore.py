"""The attention explorer of lesson 06: what each head of a trained encoder looks at.

Three parts, each usable alone:

1. **Reading a text safely** — :func:`prepare_text` turns what a reader typed into token ids and
   says, in plain words, what happened to it: an empty text is refused, a text longer than the
   model's positions is truncated (with a notice), characters the tokenizer does not know are
   reported by name (they became ``[UNK]``).
2. **The weights and the pattern finder** — :func:`attention_maps` returns every attention map of
   a model, ``(L, H, T, T)``; :func:`head_behaviours` measures simple behaviours of every head
   (attends to the previous token, the next one, itself, ``[CLS]``, ``[SEP]``; attends broadly,
   measured by the entropy of its rows), and :func:`rank_heads` ranks the heads by one of them and
   says why, against what a head that attends uniformly would score.
3. **The explorer** — :class:`AttentionExplorer`: a live ipywidgets app (choose an example or type
   a sentence, choose a layer and a head, see the heatmap and the head's strongest behaviour) and
   its kernel-free twin (:meth:`AttentionExplorer.static`), a plotly figure with a dropdown for the
   example sentences and a slider for the layer that shows every head of that layer, from weights
   computed in advance.

Why not :class:`course_utils.widgets.Explorer`? Its twin replays one control. This twin needs two
that combine, sentence and layer; plotly can combine them when they change different things. The
twin holds one heatmap per (layer, head): the sentence dropdown rewrites the data of all of them
(``update``), the layer slider only changes which are visible (``restyle`` of ``visible``). So
every pair (sentence, layer) works, with no kernel and no JavaScript of our own.

Axes: ``L`` layers, ``H`` heads, ``T`` tokens (queries along the rows, keys along the columns).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from . import plots

__all__ = [
    "BEHAVIOURS",
    "AttentionExplorer",
    "PreparedText",
    "RankedHead",
    "attention_maps",
    "attention_samples",
    "average_behaviours",
    "head_behaviours",
    "head_figure",
    "heads_figure",
    "max_positions",
    "prepare_text",
    "rank_heads",
    "strongest_behaviour",
    "uniform_behaviours",
]

# Behaviour -> what a high score means, for the reasons the pattern finder gives.
BEHAVIOURS = {
    "previous token": "of each token's attention goes to the token just before it",
    "next token": "of each token's attention goes to the token just after it",
    "itself": "of each token's attention stays on the token itself",
    "[CLS]": "of each token's attention goes to [CLS]",
    "[SEP]": "of each token's attention goes to [SEP]",
    "broad": "of the largest possible entropy, on average over the rows (1 = spread evenly over all tokens)",
}
EXAMPLE_HINT = "the cat is happy, but it is not calm"
MENU_SHIFT_PX = 34  # room between the panels' titles and the twin's dropdown
MENU_LABEL_PX = 76  # the dropdown's label ("sentence:") and a gap, left of the dropdown


# --------------------------------------------------------------------------------------------
# 1. Reading a text safely


@dataclass(frozen=True)
class PreparedText:
    """A text as the model reads it.

    ``tokens`` and ``input_ids``: the ``T`` tokens, ``[CLS]`` and ``[SEP]`` included, after any
    truncation; ``n_tokens``: how many tokens the whole text has (more than ``T`` when it was
    truncated); ``notices``: what happened to the text, one sentence each (empty when nothing did).
    """

    text: str
    tokens: tuple[str, ...]
    input_ids: tuple[int, ...]
    n_tokens: int
    notices: tuple[str, ...]

    @property
    def truncated(self) -> bool:
        """Whether the model reads only the beginning of the text."""
        return self.n_tokens > len(self.tokens)


def prepare_text(text: str, tokenizer, max_length: int) -> PreparedText:
    """Tokenize ``text`` for a model of ``max_length`` positions, and say what happened to it.

    Raises ``ValueError`` for an empty (or blank) text. A text of more than ``max_length`` tokens
    (``[CLS]`` and ``[SEP]`` included) is cut to its first ``max_length``, with a notice. Pieces of
    the text that the tokenizer maps to ``[UNK]`` are named in a notice (with a fast tokenizer,
    which knows where each token comes from; otherwise they are counted).
    """
    if not isinstance(text, str):
        raise TypeError(f"expected the text as a string, got {type(text).__name__}")
    if isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer)) or max_length < 3:
        raise ValueError(
            f"expected max_length to be an integer of at least 3 ([CLS], a token, [SEP]), got {max_length!r}"
        )
    if not text.strip():
        raise ValueError(f"expected some text to explore, got an empty text: type a sentence, e.g. '{EXAMPLE_HINT}'")
    n_tokens = len(tokenizer(text, verbose=False)["input_ids"])  # verbose=False: no warning when too long
    offsets = bool(getattr(tokenizer, "is_fast", False))
    encoded = tokenizer(text, truncation=True, max_length=int(max_length), return_offsets_mapping=offsets)
    input_ids = tuple(int(i) for i in encoded["input_ids"])
    tokens = tuple(tokenizer.convert_ids_to_tokens(list(input_ids)))
    notices = []
    if n_tokens > len(input_ids):
        notices.append(
            f"The text has {n_tokens} tokens ([CLS] and [SEP] included), but the model has only {max_length} "
            f"positions: it reads the first {len(input_ids)} tokens, the rest was cut off."
        )
    unknown = [t for t, i in enumerate(input_ids) if i == tokenizer.unk_token_id]
    if unknown:
        if offsets:
            pieces = list(dict.fromkeys(text[slice(*encoded["offset_mapping"][t])] for t in unknown))
            shown = ", ".join(repr(piece) for piece in pieces[:8]) + (", ..." if len(pieces) > 8 else "")
            what = f"{len(unknown)} piece{'s' if len(unknown) > 1 else ''} of the text ({shown})"
        else:
            what = f"{len(unknown)} piece{'s' if len(unknown) > 1 else ''} of the text"
        notices.append(
            f"{what} {'are' if len(unknown) > 1 else 'is'} not in the tokenizer's vocabulary and became [UNK]: "
            "the model sees one unknown-token vector there, whatever the characters were."
        )
    if len(input_ids) <= 2:
        raise ValueError(f"expected some text to explore, got {text!r}, which has no tokens besides [CLS] and [SEP]")
    return PreparedText(text=text, tokens=tokens, input_ids=input_ids, n_tokens=n_tokens, notices=tuple(notices))


# --------------------------------------------------------------------------------------------
# 2. The weights, and the pattern finder


def max_positions(model) -> int:
    """The most tokens ``model`` reads: ``max_position_embeddings`` of its config."""
    config = getattr(model, "config", None)
    value = getattr(config, "max_position_embeddings", None)
    if not isinstance(value, int):
        raise TypeError(f"expected a model whose config has max_position_embeddings, got {type(model).__name__}")
    return value


def attention_maps(model, input_ids: Sequence[int]) -> np.ndarray:
    """Every attention map of ``model`` for one sequence of token ids: ``(L, H, T, T)`` float64.

    ``model``: the course's :class:`course_utils.encoder.DistilBertEncoder` (which always returns its
    weights), or a Hugging Face encoder loaded with ``attn_implementation="eager"`` (the default
    SDPA path returns no weights). Run in eval mode, without gradients.
    """
    import torch

    from .encoder import DistilBertEncoder

    ids = torch.as_tensor([list(input_ids)], dtype=torch.long)  # (1, T)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            if isinstance(model, DistilBertEncoder):
                attentions = model(ids).attentions
            else:
                attentions = model(input_ids=ids, output_attentions=True).attentions
    finally:
        model.train(was_training)
    if not attentions or any(a is None for a in attentions):
        raise ValueError(
            "the model returned no attention weights: load it with attn_implementation='eager' "
            "(the default SDPA attention does not compute them)"
        )
    return torch.stack([a[0] for a in attentions]).double().numpy()  # (L, H, T, T)


def attention_samples(
    model, tokenizer, texts: Sequence[str], max_length: int, *, batch_size: int = 64
) -> list[tuple[tuple[str, ...], np.ndarray]]:
    """``(tokens, maps (L, H, T, T))`` for each text, run in padded batches: many texts, fast.

    Each text is prepared by :func:`prepare_text` (truncated to ``max_length``); the batches are
    padded on the right and masked, and each text's maps are cut back to its ``T`` real tokens,
    so they equal :func:`attention_maps` of that text alone (up to float rounding).
    """
    import torch

    from .encoder import DistilBertEncoder

    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"expected batch_size to be a positive integer, got {batch_size!r}")
    prepared = [prepare_text(text, tokenizer, max_length) for text in texts]
    pad_id = tokenizer.pad_token_id
    samples = []
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(prepared), batch_size):
            chunk = prepared[start : start + batch_size]
            width = max(len(p.input_ids) for p in chunk)
            ids = torch.tensor([list(p.input_ids) + [pad_id] * (width - len(p.input_ids)) for p in chunk])  # (B, T)
            mask = torch.tensor([[1] * len(p.input_ids) + [0] * (width - len(p.input_ids)) for p in chunk])
            with torch.no_grad():
                if isinstance(model, DistilBertEncoder):
                    attentions = model(ids, mask).attentions
                else:
                    attentions = model(input_ids=ids, attention_mask=mask, output_attentions=True).attentions
            if not attentions or any(a is None for a in attentions):
                raise ValueError(
                    "the model returned no attention weights: load it with attn_implementation='eager' "
                    "(the default SDPA attention does not compute them)"
                )
            maps = torch.stack(attentions, dim=1).double().numpy()  # (B, L, H, T, T)
            for row, p in zip(maps, chunk):
                n = len(p.input_ids)
                samples.append((p.tokens, row[:, :, :n, :n]))
    finally:
        model.train(was_training)
    return samples


def _check_weights(weights, tokens: Sequence[str]) -> np.ndarray:
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 4 or weights.shape[2] != weights.shape[3] or weights.shape[3] != len(tokens):
        raise ValueError(
            f"expected weights of shape (L, H, T, T) with T = len(tokens) = {len(tokens)}, got {weights.shape}"
        )
    if len(tokens) < 2:
        raise ValueError(f"expected at least 2 tokens, got {len(tokens)}")
    return weights


def head_behaviours(weights, tokens: Sequence[str]) -> dict[str, np.ndarray]:
    """How much each head shows each behaviour of :data:`BEHAVIOURS`, in one sentence.

    ``weights (L, H, T, T)``: row ``i`` of a map is where token ``i`` looks. Returns, for each
    behaviour, an ``(L, H)`` array:

    - ``"previous token"``, ``"next token"``, ``"itself"``: the average weight from token ``i`` to
      token ``i - 1``, ``i + 1``, ``i`` (over the tokens that have one);
    - ``"[CLS]"``, ``"[SEP]"``: the average total weight on the tokens ``[CLS]``, ``[SEP]``;
    - ``"broad"``: the average entropy of a row divided by its largest possible value ``log T``:
      1 for a head that spreads its attention evenly, 0 for one that looks at one token.

    A head that attends uniformly scores ``1/T`` on the first five (see :func:`uniform_behaviours`).
    """
    weights = _check_weights(weights, tokens)
    n = weights.shape[-1]
    rows = np.arange(n)
    tokens = [str(t) for t in tokens]
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.where(weights > 0, weights * np.log(weights), 0.0).sum(axis=-1)  # (L, H, T)
    return {
        "previous token": weights[:, :, rows[1:], rows[1:] - 1].mean(axis=-1),
        "next token": weights[:, :, rows[:-1], rows[:-1] + 1].mean(axis=-1),
        "itself": weights[:, :, rows, rows].mean(axis=-1),
        "[CLS]": weights[..., [t == "[CLS]" for t in tokens]].sum(axis=-1).mean(axis=-1),
        "[SEP]": weights[..., [t == "[SEP]" for t in tokens]].sum(axis=-1).mean(axis=-1),
        "broad": entropy.mean(axis=-1) / math.log(n),
    }


def uniform_behaviours(tokens: Sequence[str]) -> dict[str, float]:
    """What a head attending evenly to all ``T`` tokens scores on each behaviour: the baseline."""
    n = len(tokens)
    scores = head_behaviours(np.full((1, 1, n, n), 1.0 / n), tokens)
    return {name: float(value[0, 0]) for name, value in scores.items()}


def average_behaviours(samples: Sequence[tuple[Sequence[str], Any]]) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """:func:`head_behaviours` averaged over sentences ``[(tokens, weights (L, H, T, T)), ...]``.

    Returns the ``(L, H)`` scores and the uniform head's scores, both averaged over the sentences.
    """
    if not samples:
        raise ValueError("expected at least one (tokens, weights) sample, got none")
    per_sentence = [head_behaviours(weights, tokens) for tokens, weights in samples]
    baselines = [uniform_behaviours(tokens) for tokens, _ in samples]
    shapes = {next(iter(s.values())).shape for s in per_sentence}
    if len(shapes) != 1:
        raise ValueError(f"expected the weights of one model (the same L and H), got (L, H) in {sorted(shapes)}")
    scores = {name: np.mean([s[name] for s in per_sentence], axis=0) for name in BEHAVIOURS}
    baseline = {name: float(np.mean([b[name] for b in baselines])) for name in BEHAVIOURS}
    return scores, baseline


@dataclass(frozen=True)
class RankedHead:
    """One head of a ranking: 1-based ``layer`` and ``head``, its ``score`` and the ``reason`` in words."""

    layer: int
    head: int
    score: float
    reason: str


def _reason(behaviour: str, score: float, baseline: float) -> str:
    if behaviour == "broad":  # the uniform head's entropy is the largest possible: 1
        return f"{score:.2f} {BEHAVIOURS[behaviour]}"
    return f"{score:.2f} {BEHAVIOURS[behaviour]} (a head attending uniformly: {baseline:.2f})"


def rank_heads(
    scores: Mapping[str, np.ndarray], baseline: Mapping[str, float], behaviour: str, top: int = 3
) -> list[RankedHead]:
    """The ``top`` heads with the highest score for ``behaviour``, best first, each with its reason.

    ``scores`` and ``baseline`` as returned by :func:`average_behaviours` (or :func:`head_behaviours`
    and :func:`uniform_behaviours`). Ties go to the earlier layer, then the earlier head.
    """
    if behaviour not in BEHAVIOURS:
        raise ValueError(f"expected a behaviour among {list(BEHAVIOURS)}, got {behaviour!r}")
    values = np.asarray(scores[behaviour], dtype=float)  # (L, H)
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or not 1 <= top <= values.size:
        raise ValueError(f"expected top to be an integer from 1 to L*H={values.size}, got {top!r}")
    order = np.argsort(-values.ravel(), kind="stable")[:top]
    ranked = []
    for flat in order:
        layer, head = divmod(int(flat), values.shape[1])
        score = float(values[layer, head])
        ranked.append(RankedHead(layer + 1, head + 1, score, _reason(behaviour, score, baseline[behaviour])))
    return ranked


def strongest_behaviour(
    scores: Mapping[str, np.ndarray], baseline: Mapping[str, float], layer: int, head: int
) -> tuple[str, str]:
    """The behaviour in which head (``layer``, ``head``), 1-based, stands out most, and the reason.

    "Stands out" is the score's excess over the uniform head's, relative to what is left above it:
    ``(score - uniform) / (1 - uniform)``, 0 for a uniform head and 1 for a perfect one. Broad
    attention counts only when no pointed behaviour passes 0.5.
    """
    pointed = [b for b in BEHAVIOURS if b != "broad"]

    def excess(name: str) -> float:
        value = float(np.asarray(scores[name])[layer - 1, head - 1])
        return (value - baseline[name]) / max(1e-12, 1 - baseline[name])

    best = max(pointed, key=excess)  # the first in BEHAVIOURS' order wins a tie
    if excess(best) < 0.5:
        best = "broad"
    value = float(np.asarray(scores[best])[layer - 1, head - 1])
    return best, _reason(best, value, baseline[best])


# --------------------------------------------------------------------------------------------
# 3. Figures and the explorer


def _check_text(name: str, value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a non-empty string for {name}, got {value!r}")


def _grid(n_heads: int) -> tuple[int, int]:
    cols = 1 if n_heads == 1 else 2
    return math.ceil(n_heads / cols), cols


def _heatmap_trace(weights: np.ndarray, tokens: Sequence[str], visible: bool = True) -> go.Heatmap:
    labels = plots._unique_labels(tokens)  # repeated tokens ("the ... the") need distinct categories
    return go.Heatmap(
        z=plots.significant(np.round(weights, 3), digits=3),
        x=labels,
        y=labels,
        coloraxis="coloraxis",
        visible=visible,
        hovertemplate="query %{y} → key %{x}<br>weight %{z:.3f}<extra></extra>",
    )


READING_HINT = "rows: the token attending (query) · columns: the token attended to (key)"


def _with_reading_hint(title: str) -> str:
    return f"{title}<br><sup>{READING_HINT}</sup>"


def _heads_layout(fig: go.Figure, n_heads: int, n_tokens: int, title: str) -> None:
    rows, _ = _grid(n_heads)
    fig.update_xaxes(type="category", tickangle=-60, tickfont=dict(size=10))
    fig.update_yaxes(type="category", autorange="reversed", tickfont=dict(size=10))
    for k in range(n_heads):
        fig.layout.annotations[k].update(font=dict(size=13))
    panel = max(300, min(420, 22 * n_tokens + 110))
    fig.update_layout(
        title=dict(  # pinned to the top: the twin's dropdown sits below it
            text=_with_reading_hint(title), x=0.02, xanchor="left", y=1.0, yref="container", yanchor="top", pad_t=14
        ),
        template=plots.TEMPLATE,
        height=170 + rows * panel,
        margin=dict(l=90, r=40, t=150, b=70),  # t: the two-line title, then the twin's dropdown below it
        font=dict(size=12),
        coloraxis=dict(
            colorscale=plots.SEQUENTIAL, cmin=0, cmax=1, colorbar=dict(title=dict(text="weight"), thickness=12)
        ),
    )


def heads_figure(weights, tokens: Sequence[str], *, title: str) -> go.Figure:
    """Every head of one layer: ``weights (H, T, T)``, one heatmap per head (two per row).

    Rows are the queries (the token attending), columns the keys (the token attended to), on one
    colour scale from 0 to 1.
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 3 or weights.shape[1:] != (len(tokens), len(tokens)):
        raise ValueError(
            f"expected weights of shape (H, T, T) with T = len(tokens) = {len(tokens)}, got {weights.shape}"
        )
    _check_text("title", title)
    n_heads = weights.shape[0]
    rows, cols = _grid(n_heads)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[f"head {h + 1}" for h in range(n_heads)],
        horizontal_spacing=0.14,
        vertical_spacing=0.16,
    )
    for h in range(n_heads):
        fig.add_trace(_heatmap_trace(weights[h], tokens), row=h // cols + 1, col=h % cols + 1)
    _heads_layout(fig, n_heads, len(tokens), title)
    return fig


def head_figure(weights, tokens: Sequence[str], *, title: str) -> go.Figure:
    """One head's map ``(T, T)`` as a heatmap (queries down, keys across, weights 0 to 1)."""
    return plots.heatmap(
        np.round(np.asarray(weights, dtype=float), 3),
        tokens,
        tokens,
        title=title,
        x_title="key (attended to)",
        y_title="query (attending)",
        annotate=len(tokens) <= 12,
        zmin=0,
        zmax=1,
        height=max(420, 34 * len(tokens) + 160),
    )


class AttentionExplorer:
    """Explore the attention maps of ``model`` (see the module docstring).

    ``model``: a :class:`course_utils.encoder.DistilBertEncoder` or an eager Hugging Face encoder;
    ``tokenizer``: its tokenizer; ``examples``: ``{name shown: sentence}``, the sentences offered
    (and precomputed for the twin); ``model_name``: how titles call the model.
    """

    def __init__(self, model, tokenizer, examples: Mapping[str, str], *, model_name: str):
        if not examples:
            raise ValueError("expected at least one example sentence, got none")
        _check_text("model_name", model_name)
        self.model, self.tokenizer, self.model_name = model, tokenizer, model_name
        self.max_length = max_positions(model)
        self.examples = {str(name): text for name, text in examples.items()}
        self._cache: dict[str, tuple[PreparedText, np.ndarray]] = {}

    def analyse(self, text: str) -> tuple[PreparedText, np.ndarray]:
        """The prepared text and its maps ``(L, H, T, T)`` (``ValueError`` for an empty text); cached."""
        if text not in self._cache:
            prepared = prepare_text(text, self.tokenizer, self.max_length)
            self._cache[text] = (prepared, attention_maps(self.model, prepared.input_ids))
        return self._cache[text]

    # ---------------------------------------------------------------------------- one head

    def head_view(self, text: str, layer: int, head: int) -> tuple[go.Figure, str]:
        """The heatmap of one head (1-based ``layer``, ``head``) for ``text``, and the head's verdict."""
        prepared, weights = self.analyse(text)
        n_layers, n_heads = weights.shape[:2]
        if not (1 <= layer <= n_layers and 1 <= head <= n_heads):
            raise ValueError(f"expected layer in 1..{n_layers} and head in 1..{n_heads}, got {layer}, {head}")
        scores = head_behaviours(weights, prepared.tokens)
        behaviour, reason = strongest_behaviour(scores, uniform_behaviours(prepared.tokens), layer, head)
        title = f"{self.model_name}, layer {layer}, head {head}: {behaviour}"
        verdict = f"Layer {layer}, head {head} in this sentence: {reason}."
        return head_figure(weights[layer - 1, head - 1], prepared.tokens, title=title), verdict

    # ---------------------------------------------------------------------------- live

    def live(self):
        """The ipywidgets app: example or typed sentence, layer and head dropdowns, heatmap and verdict."""
        import ipywidgets
        from IPython.display import display

        from .env import in_colab

        if in_colab():  # pragma: no cover - Colab needs its widget manager for ipywidgets 8
            from google.colab import output

            output.enable_custom_widget_manager()
        first_text = next(iter(self.examples.values()))
        _, weights = self.analyse(first_text)
        n_layers, n_heads = weights.shape[:2]
        style = {"description_width": "initial"}
        example = ipywidgets.Dropdown(options=list(self.examples.items()), description="example", style=style)
        text = ipywidgets.Text(value=first_text, description="or type a sentence", style=style, continuous_update=False)
        text.layout.width = "60%"
        layer = ipywidgets.Dropdown(options=list(range(1, n_layers + 1)), description="layer", style=style)
        head = ipywidgets.Dropdown(options=list(range(1, n_heads + 1)), description="head", style=style)
        message = ipywidgets.HTML()  # the verdict, the notices, or what is wrong with the text
        shown = ipywidgets.Output()  # the heatmap

        def redraw(*_):
            lines = []
            try:
                fig, verdict = self.head_view(text.value, layer.value, head.value)
            except ValueError as error:
                fig, lines = None, [f"Cannot explore this text: {error}"]
            else:
                lines = [f"Note: {notice}" for notice in self.analyse(text.value)[0].notices] + [verdict]
            message.value = "<br>".join(html.escape(line) for line in lines)
            with shown:
                shown.clear_output(wait=True)
                if fig is not None:
                    display(fig)

        example.observe(lambda change: setattr(text, "value", change["new"]), names="value")
        for widget in (text, layer, head):
            widget.observe(redraw, names="value")
        redraw()
        return ipywidgets.VBox([ipywidgets.HBox([example, layer, head]), text, message, shown])

    # ---------------------------------------------------------------------------- kernel-free twin

    def static(self, *, layer: int = 1) -> go.Figure:
        """The kernel-free twin: every head of a layer, a dropdown for the example, a slider for the layer.

        One heatmap trace per (layer, head), in layer-major order; only those of the chosen layer are
        visible. The dropdown's buttons (plotly ``update``) set ``z``, ``x`` and ``y`` of every trace
        to that example's maps, and the title; the slider's steps (plotly ``restyle``) set only
        ``visible``. Starts at the first example and ``layer`` (1-based).
        """
        analysed = {name: self.analyse(text) for name, text in self.examples.items()}
        first_prepared, first_weights = next(iter(analysed.values()))
        n_layers, n_heads = first_weights.shape[:2]
        if not 1 <= layer <= n_layers:
            raise ValueError(f"expected layer in 1..{n_layers}, got {layer!r}")
        rows, cols = _grid(n_heads)
        fig = make_subplots(
            rows=rows,
            cols=cols,
            subplot_titles=[f"head {h + 1}" for h in range(n_heads)],
            horizontal_spacing=0.14,
            vertical_spacing=0.16,
        )
        for i in range(n_layers):
            for h in range(n_heads):
                trace = _heatmap_trace(first_weights[i, h], first_prepared.tokens, visible=i == layer - 1)
                fig.add_trace(trace, row=h // cols + 1, col=h % cols + 1)
        longest = max(len(p.tokens) for p, _ in analysed.values())
        _heads_layout(fig, n_heads, longest, self._title(next(iter(analysed))))
        buttons = []
        for name, (prepared, weights) in analysed.items():
            traces = [_heatmap_trace(weights[i, h], prepared.tokens) for i in range(n_layers) for h in range(n_heads)]
            # Plain lists: plotly.js decodes the typed arrays of a figure's data, not those of a button's update.
            data = {key: [np.asarray(getattr(t, key)).tolist() for t in traces] for key in ("z", "x", "y")}
            title = _with_reading_hint(self._title(name))
            buttons.append(dict(label=name, method="update", args=[data, {"title.text": title}]))
        steps = [
            dict(
                label=str(i + 1),
                method="restyle",
                args=[{"visible": [k // n_heads == i for k in range(n_layers * n_heads)]}],
            )
            for i in range(n_layers)
        ]
        fig.add_annotation(  # the dropdown's label, in the band between the title and the panels
            text="sentence:",
            x=0.0,
            y=1.0,
            xref="paper",
            yref="paper",
            xanchor="left",
            yanchor="bottom",
            yshift=MENU_SHIFT_PX + 6,
            showarrow=False,
            font=dict(size=13),
        )
        fig.update_layout(
            updatemenus=[
                dict(
                    type="dropdown",
                    active=0,
                    buttons=buttons,
                    x=0.0,
                    xanchor="left",
                    y=1.0,
                    yanchor="bottom",
                    pad=dict(b=MENU_SHIFT_PX, l=MENU_LABEL_PX),  # right of its label, at any width
                )
            ],
            sliders=[dict(active=layer - 1, steps=steps, currentvalue=dict(prefix="layer: "), pad=dict(t=60))],
            height=fig.layout.height + 90 + MENU_SHIFT_PX,
            margin_b=fig.layout.margin.b + 90,
            margin_t=fig.layout.margin.t + MENU_SHIFT_PX,
        )
        return fig

    def _title(self, name: str) -> str:
        return f"Attention of the {self.model_name}: {name}"

    def show(self, *, layer: int = 1) -> None:
        """The live app when a person runs the notebook (:func:`course_utils.widgets.interactive_frontend`),
        else the kernel-free twin."""
        from IPython.display import display

        from .widgets import interactive_frontend

        display(self.live() if interactive_frontend() else self.static(layer=layer))
