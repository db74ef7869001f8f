"""Positional encodings: how a transformer learns where each token is (lesson 03).

Self-attention treats its input as a *set*: permute the tokens and the outputs are permuted the same
way, nothing else changes. A position vector added to each token embedding breaks that symmetry.
Two kinds are in use:

**Sinusoidal** (Vaswani et al., 2017), fixed, nothing to learn::

    PE[pos, 2i]     = sin(pos / 10000^(2i / d_model))
    PE[pos, 2i + 1] = cos(pos / 10000^(2i / d_model))

Sin and cos are **interleaved**: even dimensions hold sines, odd dimensions cosines, and the pair
``(2i, 2i + 1)`` shares one frequency. This is the layout of the paper and of Hugging Face's
DistilBERT with ``sinusoidal_pos_embds=True`` (``create_sinusoidal_embeddings``); the tests compare
:func:`sinusoidal_encoding` with the table of a ``transformers.DistilBertModel``. An odd
``d_model`` is accepted, as Hugging Face accepts it: the last dimension is then a sine whose cosine
partner is cut off (and :func:`shift_matrix`, which needs complete pairs, refuses it).

Because each pair is a point on a circle turning at its own speed, moving ``k`` positions on is a
rotation of every pair, the same for every position: ``PE[pos + k] = PE[pos] @ shift_matrix(k, d_model)``.

**Learned** (BERT, DistilBERT): a trainable table of ``max_position_embeddings`` rows of ``d_model``
numbers, one row per position, initialised at random and trained with the rest of the model. It has
no row for a position past its last one, so a longer sequence must be truncated:
:class:`LearnedPositionEmbeddings` (a torch module) says so in words instead of torch's
``IndexError: index out of range in self``.

Either way the positions are **added** to the token embeddings, row by row: :func:`add_positions`.
How alike two positions look to a dot product, as a function of their distance, is
:func:`dots_by_distance`: for the sinusoidal table it depends on the distance only.

Axis names used in the docstrings: ``B`` batch, ``T`` sequence length (tokens), ``D`` = ``d_model``,
``L`` = ``max_position_embeddings`` (rows of a position table, ``L >= T``).
"""

from __future__ import annotations

import numpy as np
import torch

from .validation import non_negative_int, positive_int, positive_number

__all__ = [
    "BASE",
    "LearnedPositionEmbeddings",
    "add_positions",
    "check_sequence_length",
    "dots_by_distance",
    "frequencies",
    "learned_position_embeddings",
    "learned_position_param_count",
    "shift_matrix",
    "sinusoidal_encoding",
]

BASE = 10000.0  # the wavelengths grow geometrically from 2*pi to 10000 * 2*pi


# --------------------------------------------------------------------------------------------
# Sinusoidal encodings


def frequencies(d_model: int) -> np.ndarray:
    """The angular frequency of every dimension, ``1 / 10000^(2i / d_model)`` for dims ``2i, 2i+1``.

    Returns shape ``(d_model,)``: dimensions ``2i`` and ``2i + 1`` share the frequency of pair ``i``,
    from 1 (dimensions 0 and 1: one turn every 2*pi ≈ 6.3 positions) down to almost ``1 / 10000``.
    """
    d_model = positive_int("d_model", d_model)
    pair = np.arange(d_model) // 2  # (D,): 0, 0, 1, 1, 2, 2, ...
    return 1.0 / np.power(BASE, 2 * pair / d_model)


def sinusoidal_encoding(seq_len: int, d_model: int) -> np.ndarray:
    """The sinusoidal position table of the paper, sin and cos interleaved.

    Returns a float64 array of shape ``(seq_len, d_model)`` = ``(T, D)``: row ``pos`` is the
    encoding of position ``pos`` (positions count from 0), with::

        PE[pos, 2i]     = sin(pos / 10000^(2i / d_model))
        PE[pos, 2i + 1] = cos(pos / 10000^(2i / d_model))

    Every value is in ``[-1, 1]``; row 0 is ``[0, 1, 0, 1, ...]``. The layout is Hugging Face
    DistilBERT's (``sinusoidal_pos_embds=True``). An odd ``d_model`` is allowed, as in Hugging Face:
    its last dimension is a sine without its cosine.
    """
    seq_len = positive_int("seq_len", seq_len)
    d_model = positive_int("d_model", d_model)
    pair = np.arange(d_model) // 2  # (D,)
    positions = np.arange(seq_len, dtype=np.float64)[:, None]  # (T, 1)
    angles = positions / np.power(BASE, 2 * pair / d_model)  # (T, D): as Hugging Face computes them
    encoding = np.empty((seq_len, d_model))  # (T, D)
    encoding[:, 0::2] = np.sin(angles[:, 0::2])  # even dimensions: sines
    encoding[:, 1::2] = np.cos(angles[:, 1::2])  # odd dimensions: cosines
    return encoding


def shift_matrix(k: int, d_model: int) -> np.ndarray:
    """The rotation ``R_k`` that moves every sinusoidal encoding ``k`` positions on.

    Returns ``R_k`` of shape ``(d_model, d_model)`` with ``PE[pos + k] = PE[pos] @ R_k`` for every
    position (row vectors, as everywhere in this course). It is block-diagonal: pair ``i``, with
    frequency ``w_i``, is turned by the angle ``w_i * k``::

        [[ cos(w_i k), -sin(w_i k)],
         [ sin(w_i k),  cos(w_i k)]]

    ``R_k`` depends on ``k`` only, not on ``pos``: a fixed linear map that a model can learn once
    to attend "``k`` tokens back". ``k`` may be negative or zero (``R_0`` is the identity).
    ``d_model`` must be even: an unpaired last sine cannot be rotated.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"expected the shift k to be an integer number of positions, got {k!r}")
    d_model = positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(
            f"expected an even d_model, got {d_model}: the rotation turns (sin, cos) pairs, and the "
            "last dimension of an odd d_model is a sine without its cosine"
        )
    angles = frequencies(d_model)[0::2] * int(k)  # (D/2,): one angle per pair
    cos, sin = np.cos(angles), np.sin(angles)
    rotation = np.zeros((d_model, d_model))  # (D, D)
    even, odd = np.arange(0, d_model, 2), np.arange(1, d_model, 2)
    rotation[even, even], rotation[even, odd] = cos, -sin
    rotation[odd, even], rotation[odd, odd] = sin, cos
    return rotation


# --------------------------------------------------------------------------------------------
# Adding positions to token embeddings


def check_sequence_length(seq_len: int, max_positions: int) -> None:
    """Raise ``ValueError``, saying what to do, when ``seq_len`` tokens do not fit a table of
    ``max_positions`` rows."""
    if seq_len > max_positions:
        raise ValueError(
            f"a sequence of {seq_len} tokens is longer than max_position_embeddings={max_positions}: "
            f"truncate it to at most {max_positions} tokens (e.g. tokenizer(..., truncation=True, "
            f"max_length={max_positions})) or split the text into chunks. The position table has no "
            f"row for positions {max_positions} and beyond."
        )


def add_positions(embeddings, encoding) -> np.ndarray:
    """Token embeddings plus the encoding of their positions: ``embeddings + encoding[:T]``.

    ``embeddings``: ``(T, D)`` for one sequence or ``(B, T, D)`` for a batch (every sequence of a
    batch gets the same positions ``0 .. T-1``). ``encoding``: a position table ``(L, D)`` with
    ``L >= T`` rows, sinusoidal or learned; only its first ``T`` rows are used. Returns a float64
    array of the shape of ``embeddings``. A sequence longer than the table raises ``ValueError``.
    """
    try:
        embeddings = np.asarray(embeddings, dtype=np.float64)
        encoding = np.asarray(encoding, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("expected embeddings and encoding to be numeric arrays") from None
    if embeddings.ndim not in (2, 3):
        raise ValueError(f"expected embeddings of shape (T, D) or (B, T, D), got shape {embeddings.shape}")
    if encoding.ndim != 2:
        raise ValueError(f"expected a position table of shape (L, D), got shape {encoding.shape}")
    seq_len, d_model = embeddings.shape[-2:]
    if encoding.shape[1] != d_model:
        raise ValueError(
            f"expected a position table of shape (L, D={d_model}) to match the embeddings "
            f"{embeddings.shape}, got {encoding.shape}"
        )
    check_sequence_length(seq_len, encoding.shape[0])
    return embeddings + encoding[:seq_len]  # (T, D) + (T, D), or (B, T, D) + (T, D) broadcast


def dots_by_distance(table, start: int, max_distance: int) -> np.ndarray:
    """The dot products of one position's vector with those ``0 .. max_distance`` positions on.

    ``table``: a position table ``(L, D)``, sinusoidal or learned. Returns the float64 array
    ``(max_distance + 1,)`` whose entry ``k`` is ``table[start] . table[start + k]``. For the
    sinusoidal table it is ``sum_i cos(omega_i k)`` whatever ``start`` is (entry 0 is ``D / 2``); for a
    learned table nothing forces that. ``start + max_distance`` must be a row of the table.
    """
    try:
        table = np.asarray(table, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("expected a position table: a numeric array of shape (L, D)") from None
    if table.ndim != 2:
        raise ValueError(f"expected a position table of shape (L, D), got shape {table.shape}")
    non_negative_int("start", start)
    non_negative_int("max_distance", max_distance)
    if start + max_distance >= table.shape[0]:
        raise ValueError(
            f"expected start + max_distance < L = {table.shape[0]} (the rows of the table), got "
            f"start={start} and max_distance={max_distance}"
        )
    return table[start : start + max_distance + 1] @ table[start]  # (K + 1, D) @ (D,) -> (K + 1,)


# --------------------------------------------------------------------------------------------
# Learned position embeddings


def learned_position_param_count(max_position_embeddings: int, d_model: int) -> int:
    """The number of trainable numbers in a learned position table: one ``d_model`` row per
    position, ``max_position_embeddings * d_model`` (DistilBERT: ``512 * 768 = 393,216``)."""
    return positive_int("max_position_embeddings", max_position_embeddings) * positive_int("d_model", d_model)


class LearnedPositionEmbeddings(torch.nn.Module):
    """A trainable position table, as in BERT and DistilBERT: ``weight`` ``(L, D)``.

    ``L`` is ``max_position_embeddings``, ``D`` is ``d_model``. Rows are drawn from
    ``N(0, initializer_range^2)`` like Hugging Face's initialisation (``initializer_range=0.02``),
    from a generator seeded with ``seed``. The layer holds :func:`learned_position_param_count`
    parameters. Build it with :func:`learned_position_embeddings`.
    """

    def __init__(
        self, max_position_embeddings: int, d_model: int, *, seed: int = 0, initializer_range: float = 0.02
    ):
        super().__init__()
        self.max_position_embeddings = positive_int("max_position_embeddings", max_position_embeddings)
        self.d_model = positive_int("d_model", d_model)
        seed = non_negative_int("seed", seed)
        initializer_range = positive_number("initializer_range", initializer_range)
        generator = torch.Generator().manual_seed(seed)
        weight = torch.randn(self.max_position_embeddings, self.d_model, generator=generator)
        self.weight = torch.nn.Parameter(weight * initializer_range)  # (L, D)

    def positions(self, seq_len: int) -> torch.Tensor:
        """The rows of positions ``0 .. seq_len-1``: shape ``(T, D)``. Too long: ``ValueError``."""
        seq_len = positive_int("seq_len", seq_len)
        check_sequence_length(seq_len, self.max_position_embeddings)
        return self.weight[:seq_len]  # (T, D)

    def forward(self, embeddings: torch.Tensor) -> torch.Tensor:
        """``embeddings`` ``(T, D)`` or ``(B, T, D)`` plus the rows of positions ``0 .. T-1``."""
        if not isinstance(embeddings, torch.Tensor) or embeddings.dim() not in (2, 3):
            raise ValueError(
                "expected a tensor of token embeddings of shape (T, D) or (B, T, D), got "
                f"{getattr(embeddings, 'shape', type(embeddings).__name__)}"
            )
        if embeddings.shape[-1] != self.d_model:
            raise ValueError(
                f"expected embeddings of shape (..., T, D={self.d_model}), got {tuple(embeddings.shape)}"
            )
        return embeddings + self.positions(embeddings.shape[-2])  # (..., T, D)

    def extra_repr(self) -> str:
        return f"max_position_embeddings={self.max_position_embeddings}, d_model={self.d_model}"


def learned_position_embeddings(
    max_position_embeddings: int, d_model: int, *, seed: int = 0, initializer_range: float = 0.02
) -> LearnedPositionEmbeddings:
    """A :class:`LearnedPositionEmbeddings` torch module: a trainable ``(L, D)`` table, seeded.

    ``module(embeddings)`` adds the rows of positions ``0 .. T-1`` to ``embeddings`` ``(T, D)`` or
    ``(B, T, D)``; ``module.positions(T)`` returns them, ``(T, D)``. A sequence longer than
    ``max_position_embeddings`` raises a ``ValueError`` that says to truncate it.
    """
    return LearnedPositionEmbeddings(max_position_embeddings, d_model, seed=seed, initializer_range=initializer_range)
