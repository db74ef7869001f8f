"""A student made from its teacher (lesson 07): which layers it keeps, its config, its weights.

DistilBERT (Sanh et al. 2019, https://arxiv.org/abs/1910.01108, section 3) starts its student
from the teacher: the same width, half the layers, "one layer out of two", and the teacher's
embeddings and MLM head, as ``scripts/extract_distilbert.py`` of Hugging Face's distillation
research code does. :func:`layer_map` picks the layers, :func:`student_config` sizes the student,
:func:`student_from_teacher` copies the weights into a ``transformers.DistilBertForMaskedLM``,
:func:`start_losses` measures what a choice of layers costs before any training, and
:func:`erase_words` takes from a copy what it knows of some words (lesson 07's erased start).
Training it is :mod:`course_utils.distill`'s job.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Sequence

from .encoder import EncoderConfig
from .hf_weights import bert_to_distilbert_state_dict
from .validation import positive_int

if TYPE_CHECKING:  # transformers is imported lazily
    import transformers

__all__ = ["FOLDS", "PUBLISHED_LAYERS", "erase_words", "layer_map", "start_losses", "student_config",
           "student_from_teacher"]

# The teacher layers that scripts/extract_distilbert.py copies from BERT-base (12 layers) into
# DistilBERT's 6: not exactly one out of two (0, 2, 4, 6, 8, 10), the top layer is kept.
PUBLISHED_LAYERS = (0, 2, 4, 7, 9, 11)


def layer_map(n_teacher_layers: int, n_student_layers: int) -> list[int]:
    """The teacher layer each student layer starts from: ``[i * n_teacher // n_student for i ...]``.

    "One layer out of two" for a student half as deep (Sanh et al. 2019, section 3): 6 -> 3 gives
    ``[0, 2, 4]``, 12 -> 6 ``[0, 2, 4, 6, 8, 10]``. (The published extraction script of
    DistilBERT took :data:`PUBLISHED_LAYERS` = 0, 2, 4, 7, 9, 11 of BERT-base instead.) In
    general the layers are evenly spaced, starting at the first.
    """
    n_teacher_layers = positive_int("n_teacher_layers", n_teacher_layers)
    n_student_layers = positive_int("n_student_layers", n_student_layers)
    if n_student_layers > n_teacher_layers:
        raise ValueError(
            f"expected a student no deeper than its teacher, got n_student_layers={n_student_layers} > "
            f"n_teacher_layers={n_teacher_layers}"
        )
    return [i * n_teacher_layers // n_student_layers for i in range(n_student_layers)]


def _check_teacher(teacher) -> None:
    from transformers import BertForMaskedLM

    if not isinstance(teacher, BertForMaskedLM):
        raise TypeError(f"expected the teacher to be a transformers BertForMaskedLM, got {type(teacher).__name__}")


def student_config(teacher, n_layers: int, **overrides) -> "transformers.DistilBertConfig":
    """The ``DistilBertConfig`` of a student of ``teacher`` (a ``BertForMaskedLM``) with ``n_layers`` layers.

    The sizes are :meth:`course_utils.encoder.EncoderConfig.from_bert`'s (same width, heads,
    feed-forward width, activation, vocabulary, positions, dropouts, padding id; learned
    positions; a teacher whose LayerNorm eps is not BERT's 1e-12 is refused), and the output
    matrix is tied to the word embeddings when the teacher's is. ``overrides`` are passed to
    ``DistilBertConfig`` (e.g. ``attn_implementation="eager"``).
    """
    from transformers import DistilBertConfig

    _check_teacher(teacher)
    sizes = dataclasses.asdict(EncoderConfig.from_bert(teacher.config, n_layers=positive_int("n_layers", n_layers)))
    tied = getattr(teacher.config, "tie_word_embeddings", True)
    return DistilBertConfig(**{**sizes, "tie_word_embeddings": tied, **overrides})


FOLDS = ("position", "word", "none")


def student_from_teacher(
    teacher,
    layers: Sequence[int] | None = None,
    *,
    fold_token_type: str = "position",
    attn_implementation: str | None = None,
) -> "transformers.DistilBertForMaskedLM":
    """A ``DistilBertForMaskedLM`` initialised from ``teacher`` (a ``BertForMaskedLM``), as DistilBERT was.

    Copies the embeddings, the teacher layers ``layers`` (increasing; default :func:`layer_map`,
    one out of two) and the MLM head. The encoder's names are mapped by
    :func:`course_utils.hf_weights.bert_to_distilbert_state_dict` (``attention.self.query`` ->
    ``attention.q_lin``, ..., ``output.LayerNorm`` -> ``output_layer_norm``); the head's here
    (``cls.predictions.transform.dense`` -> ``vocab_transform``, ``transform.LayerNorm`` ->
    ``vocab_layer_norm``, ``decoder`` -> ``vocab_projector``). The output matrix stays tied to
    the word embeddings when the teacher's is. The weights are copies; the student takes the
    teacher's dtype, device and train/eval mode.

    DistilBERT has no token-type (segment) embeddings; BERT adds ``token_type_embeddings[0]`` to
    every token of a single-segment input. ``fold_token_type`` says where it goes:

    - ``"position"`` (default): added to every position vector. **Exact**: for
      ``token_type_ids`` all 0, the student with all the teacher's layers gives the teacher's
      hidden states and MLM logits (the tests check it, padded batches included);
    - ``"word"``: added to every word vector. The hidden states are the same, but with tied
      weights the output matrix moves too, so every logit at a position shifts by ``h · t``
      (``h`` the head's transformed hidden state, ``t`` the segment vector): the same softmax,
      not the same logits;
    - ``"none"``: dropped, as Hugging Face's ``scripts/extract_distilbert.py`` does (it copies
      the word and position tables only): an approximation that training repairs.

    ``attn_implementation``: None = the teacher's (``"eager"`` for the course's loaders).
    """
    from transformers import DistilBertForMaskedLM

    _check_teacher(teacher)
    if fold_token_type not in FOLDS:
        raise ValueError(f"expected fold_token_type in {FOLDS}, got {fold_token_type!r}")
    n_teacher = teacher.config.num_hidden_layers
    if layers is None:
        layers = layer_map(n_teacher, max(1, n_teacher // 2))
    source = {name: value.detach() for name, value in teacher.state_dict().items()}
    encoder = bert_to_distilbert_state_dict(source, layers)  # checks the layers; folds into the positions
    segment = source["bert.embeddings.token_type_embeddings.weight"][0]
    if fold_token_type != "position":
        encoder["embeddings.position_embeddings.weight"] = source["bert.embeddings.position_embeddings.weight"].clone()
    if fold_token_type == "word":
        encoder["embeddings.word_embeddings.weight"] = source["bert.embeddings.word_embeddings.weight"] + segment
    if attn_implementation is None:
        attn_implementation = getattr(teacher.config, "_attn_implementation", None) or "eager"
    n_layers = sum(1 for key in encoder if key.endswith("ffn.lin1.weight"))
    student = DistilBertForMaskedLM(student_config(teacher, n_layers, attn_implementation=attn_implementation))
    parameter = next(teacher.parameters())
    student.to(device=parameter.device, dtype=parameter.dtype)

    weights = {f"distilbert.{name}": value for name, value in encoder.items()}
    weights.update({
        "vocab_transform.weight": source["cls.predictions.transform.dense.weight"],
        "vocab_transform.bias": source["cls.predictions.transform.dense.bias"],
        "vocab_layer_norm.weight": source["cls.predictions.transform.LayerNorm.weight"],
        "vocab_layer_norm.bias": source["cls.predictions.transform.LayerNorm.bias"],
        "vocab_projector.weight": source["cls.predictions.decoder.weight"],
        "vocab_projector.bias": source["cls.predictions.decoder.bias"],  # = cls.predictions.bias when tied
    })  # fmt: skip
    if student.config.tie_word_embeddings:  # one matrix: the (possibly folded) word embeddings
        weights["vocab_projector.weight"] = weights["distilbert.embeddings.word_embeddings.weight"]
    student.load_state_dict(weights, strict=True)  # copies into the student's own tensors
    return student.train(teacher.training)


def start_losses(teacher, choices: Sequence[Sequence[int]], batch) -> dict[tuple[int, ...], float]:
    """The masked-LM loss of each student built from ``teacher`` by :func:`student_from_teacher`, before any training.

    ``choices``: lists of teacher layers, one per student (``[[0, 2, 4], [3, 4, 5]]``); ``batch``:
    ``(input_ids, attention_mask, masked_ids, labels)``, each ``(B, T)``, as
    :func:`course_utils.training.mlm_batches` yields it. Every student reads the same masked ids in
    eval mode (no dropout), so the losses differ only by the layers kept. Returns
    ``{tuple(layers): loss}``, the mean cross-entropy at the masked positions (labels not -100).
    Lesson 07's exercise; the teacher and the caller's random generator are left as they were.
    """
    import torch

    _check_teacher(teacher)
    if isinstance(choices, (str, bytes)) or not hasattr(choices, "__iter__"):
        raise TypeError(f"expected choices as a list of layer lists such as [[0, 2, 4], [3, 4, 5]], got {choices!r}")
    choices = [list(layers) for layers in choices]
    if not choices:
        raise ValueError("expected at least one choice of layers, got an empty list")
    if not isinstance(batch, (tuple, list)) or len(batch) != 4:
        raise ValueError(
            "expected batch = (input_ids, attention_mask, masked_ids, labels), got "
            f"{type(batch).__name__} of length {len(batch) if hasattr(batch, '__len__') else '?'}"
        )
    _, attention_mask, masked_ids, labels = batch
    losses = {}
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        for layers in choices:
            student = student_from_teacher(teacher, layers).eval()
            out = student(input_ids=masked_ids, attention_mask=attention_mask, labels=labels)
            losses[tuple(int(i) for i in layers)] = out.loss.item()
    return losses


def erase_words(student, token_ids: Sequence[int], seed: int) -> None:
    """Re-draw, in place, the rows ``token_ids`` of ``student``'s word-embedding table ``(V, D)``:
    what the copy knew of those words is gone, and nothing else changes.

    Each erased row is drawn (with ``seed``) from a normal distribution with, in each of the ``D``
    dimensions, the mean and spread of the table's other rows: a row as large as a trained one, so
    the layers read a word there, but one that carries nothing learned (rows at the initial scale,
    ``N(0, 0.02²)``, would be a tenth the size and all but vanish in the embeddings' LayerNorm).
    The output matrix tied to the table (``vocab_projector``) changes with it, as one tensor; the
    output bias of the erased words, their frequency, stays. ``student``: a ``DistilBertForMaskedLM``
    (or any model with ``get_input_embeddings()``); ``token_ids``: distinct ids, each below ``V``.
    """
    import torch

    table = student.get_input_embeddings().weight  # (V, D)
    vocabulary = table.shape[0]
    if isinstance(token_ids, (str, bytes)) or not hasattr(token_ids, "__iter__"):
        raise TypeError(f"expected token ids as a list of ints, got {token_ids!r}")
    ids = [int(i) for i in token_ids]
    if not ids or len(set(ids)) != len(ids) or not all(0 <= i < vocabulary for i in ids):
        raise ValueError(f"expected distinct token ids between 0 and {vocabulary - 1}, got {ids}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"expected seed to be an int, got {seed!r}")
    kept = torch.ones(vocabulary, dtype=torch.bool)
    kept[ids] = False
    with torch.no_grad():
        others = table[kept].double()
        mean, spread = others.mean(0), others.std(0)  # (D,)
        noise = torch.randn(len(ids), table.shape[1], generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
        table[ids] = (mean + spread * noise).to(table.dtype)
