"""Hugging Face's weights in the course's encoder (lesson 06) and the student made from the teacher (lesson 07).

The modules of :mod:`course_utils.encoder` carry Hugging Face's names, so a ``DistilBertModel``'s
state dict loads as it is (:func:`load_hf_state_dict`); a ``BertModel``'s is first renamed, its
segment embedding folded into the position table and a subset of its layers kept
(:func:`bert_to_distilbert_state_dict`).
"""

from __future__ import annotations

import operator
from typing import Mapping

import torch

__all__ = ["bert_to_distilbert_state_dict", "check_layers", "load_hf_state_dict"]


def check_layers(layers, n_available: int) -> list[int]:
    """``layers`` as a list of increasing, distinct layer indices in ``[0, n_available)``; None: all."""
    if layers is None:
        return list(range(n_available))
    if isinstance(layers, (str, bytes)) or not hasattr(layers, "__iter__"):
        raise TypeError(f"expected layers as a list of layer indices such as [0, 2, 4], got {layers!r}")
    layers = list(layers)
    if not layers:
        raise ValueError(f"expected at least one layer index in [0, {n_available}), got an empty list")
    for index in layers:  # ints and numpy integers pass; bools, floats and strings do not
        if isinstance(index, bool) or not hasattr(index, "__index__") or isinstance(index, torch.Tensor):
            raise TypeError(f"expected integer layer indices, got {index!r} in {layers}")
    layers = [operator.index(index) for index in layers]
    outside = [index for index in layers if not 0 <= index < n_available]
    if outside:
        raise ValueError(
            f"expected layer indices in [0, {n_available}) (the BERT has {n_available} layers), got {outside} in {layers}"
        )
    if any(b <= a for a, b in zip(layers, layers[1:])):
        raise ValueError(
            f"expected distinct layer indices in increasing order (block k copies layer layers[k]), got {layers}"
        )
    return layers


def load_hf_state_dict(encoder: torch.nn.Module, state_dict: Mapping[str, torch.Tensor]) -> None:
    """Copy a ``DistilBertModel`` state dict into ``encoder`` (a :class:`course_utils.encoder.DistilBertEncoder`), in place.

    The mapping is the identity by design (the modules here carry Hugging Face's names). Keys of
    a task model (``distilbert.embeddings...``) lose their ``distilbert.`` prefix and its head's
    weights are left out. Missing or unexpected weights, or a shape that differs, raise an error
    that names them.
    """
    prefix = "distilbert."
    if any(key.startswith(prefix) for key in state_dict):
        state_dict = {key[len(prefix) :]: value for key, value in state_dict.items() if key.startswith(prefix)}
    state_dict = {key: value for key, value in state_dict.items() if key != "embeddings.position_ids"}  # a buffer
    own = encoder.state_dict()
    missing = sorted(set(own) - set(state_dict))
    unexpected = sorted(set(state_dict) - set(own))
    if missing or unexpected:
        raise KeyError(
            f"the state dict does not fit this encoder: missing {missing[:5]}{'...' if len(missing) > 5 else ''}, "
            f"unexpected {unexpected[:5]}{'...' if len(unexpected) > 5 else ''}"
        )
    for key, value in state_dict.items():
        if tuple(value.shape) != tuple(own[key].shape):
            raise ValueError(
                f"expected {key} of shape {tuple(own[key].shape)} (from the encoder's config), got {tuple(value.shape)}"
            )
    encoder.load_state_dict(state_dict, strict=True)


# The names of one BERT layer's weights (``encoder.layer.{i}.`` + key) under DistilBERT's names
# (``transformer.layer.{k}.`` + value); each has a ``.weight`` and a ``.bias``.
BERT_LAYER_NAMES = {
    "attention.self.query": "attention.q_lin",
    "attention.self.key": "attention.k_lin",
    "attention.self.value": "attention.v_lin",
    "attention.output.dense": "attention.out_lin",
    "attention.output.LayerNorm": "sa_layer_norm",
    "intermediate.dense": "ffn.lin1",
    "output.dense": "ffn.lin2",
    "output.LayerNorm": "output_layer_norm",
}


def bert_to_distilbert_state_dict(
    state_dict: Mapping[str, torch.Tensor], layers: "list[int] | None" = None
) -> dict[str, torch.Tensor]:
    """A ``BertModel`` state dict under ``DistilBertModel``'s names, keeping the BERT layers ``layers``.

    - Embeddings: word and position tables and the LayerNorm keep their names. BERT adds a third
      vector to every token, the token-type (segment) embedding; for one sentence, every token is
      of segment 0, so ``token_type_embeddings[0]`` is added to **every row of the position table**.
      (Not to the word table: in ``BertForMaskedLM`` the word table is tied to the output layer,
      whose logits would all move by ``h · t`` for a hidden state ``h``: the same softmax, other
      logits.) The sum of the three vectors is unchanged, so the embeddings' output is too.
    - BERT layer ``layers[k]`` becomes block ``k`` (names mapped by ``BERT_LAYER_NAMES``).
    - The pooler (``pooler.dense``, on ``[CLS]`` for next-sentence prediction), the task heads and
      the ``position_ids`` / ``token_type_ids`` buffers are left out: DistilBERT has none of them.

    Keys of a task model (``bert.embeddings...``) lose their ``bert.`` prefix. ``layers`` default:
    all the layers, in order. Returns new tensors (the BERT's are not shared).
    """
    prefix = "bert."
    if any(key.startswith(prefix) for key in state_dict):
        state_dict = {key[len(prefix) :]: value for key, value in state_dict.items() if key.startswith(prefix)}
    needed = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight"]
    needed += ["embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    missing = [key for key in needed if key not in state_dict]
    if missing:
        raise KeyError(f"expected the state dict of a BertModel, missing {missing}")
    n_available = len({key.split(".")[2] for key in state_dict if key.startswith("encoder.layer.")})
    layers = check_layers(layers, n_available)
    segment_0 = state_dict["embeddings.token_type_embeddings.weight"][0]  # (D,): every token of one sentence
    mapped = {
        "embeddings.word_embeddings.weight": state_dict["embeddings.word_embeddings.weight"].detach().clone(),
        "embeddings.position_embeddings.weight": (
            state_dict["embeddings.position_embeddings.weight"] + segment_0  # (P, D) + (D,)
        ).detach(),
        "embeddings.LayerNorm.weight": state_dict["embeddings.LayerNorm.weight"].detach().clone(),
        "embeddings.LayerNorm.bias": state_dict["embeddings.LayerNorm.bias"].detach().clone(),
    }
    for k, i in enumerate(layers):
        for bert_name, distilbert_name in BERT_LAYER_NAMES.items():
            for kind in ("weight", "bias"):
                source = f"encoder.layer.{i}.{bert_name}.{kind}"
                if source not in state_dict:
                    raise KeyError(f"expected {source} in the BERT state dict, it is missing")
                mapped[f"transformer.layer.{k}.{distilbert_name}.{kind}"] = state_dict[source].detach().clone()
    return mapped
