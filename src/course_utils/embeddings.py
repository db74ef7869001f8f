"""Token embeddings: a table with one learned vector per token id, read by lookup.

An embedding table ``E`` has shape ``(V, D)``: one row of ``D`` numbers per token of a vocabulary of
``V`` tokens. Looking up the ids of a batch, ``(B, T) -> (B, T, D)``, is the same as multiplying
their one-hot rows ``(B, T, V)`` by ``E``; the lookup just skips the multiplications by zero.
"""

from __future__ import annotations

import numpy as np

from .validation import positive_int, token_ids


def one_hot(ids, vocab_size: int) -> np.ndarray:
    """One-hot rows: ``ids (...,)`` integers in ``[0, V)`` -> ``(..., V)`` floats, a single 1 per row."""
    vocab_size = positive_int("vocab_size", vocab_size)
    return np.eye(vocab_size)[token_ids("ids", ids, vocab_size)]


def embedding_lookup(ids, table) -> np.ndarray:
    """The vectors of ``ids``: ``ids (...,)`` and ``table (V, D)`` -> ``(..., D)``, row ``ids[...]`` of the table.

    Equal to ``one_hot(ids, V) @ table``, without building the one-hot rows.
    """
    table = np.asarray(table)
    if table.ndim != 2:
        raise ValueError(f"expected an embedding table of shape (V, D), got shape {table.shape}")
    return table[token_ids("ids", ids, table.shape[0])]


def embedding_parameters(vocab_size: int, d_model: int) -> int:
    """Number of learned numbers in an embedding table: ``vocab_size * d_model``."""
    return positive_int("vocab_size", vocab_size) * positive_int("d_model", d_model)


def embedding_grad(ids, grad_vectors, vocab_size: int) -> np.ndarray:
    """The gradient of a loss with respect to an embedding table, from its gradient at the looked-up vectors.

    ``ids (...,)`` integers in ``[0, V)`` and ``grad_vectors (..., D)`` = d loss / d vectors ->
    ``(V, D)`` = d loss / d table. The lookup is ``one_hot(ids) @ table``, so the gradient is
    ``one_hot(ids).T @ grad_vectors``: row ``v`` is the *sum* of the gradients at every position whose
    id is ``v`` (a token that occurs twice gets both), and the rows of tokens absent from ``ids`` are 0.
    """
    vocab_size = positive_int("vocab_size", vocab_size)
    ids = np.asarray(token_ids("ids", ids, vocab_size))
    grad_vectors = np.asarray(grad_vectors)
    if grad_vectors.shape[:-1] != ids.shape or grad_vectors.ndim != ids.ndim + 1:
        raise ValueError(
            f"expected grad_vectors of shape ids.shape + (D,) = {ids.shape} + (D,), got shape {grad_vectors.shape}"
        )
    grad = np.zeros((vocab_size, grad_vectors.shape[-1]), dtype=grad_vectors.dtype)
    np.add.at(grad, ids.reshape(-1), grad_vectors.reshape(-1, grad_vectors.shape[-1]))  # repeats add up
    return grad
