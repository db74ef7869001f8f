"""Knowledge distillation of the course's BERT teacher into a DistilBERT student (lesson 07).

The pieces of DistilBERT's recipe (Sanh et al. 2019, https://arxiv.org/abs/1910.01108), each a
small function:

1. :func:`distillation_loss` — the soft-target loss of Hinton et al. 2015
   (https://arxiv.org/abs/1503.02531): ``T² · KL(softmax(t / T) ‖ softmax(s / T))``, averaged over rows;
2. :func:`triple_loss` — DistilBERT's training objective, ``α_ce · L_ce + α_mlm · L_mlm + α_cos · L_cos``,
   computed as Hugging Face's distillation research code computes it (``distiller.py`` in
   https://github.com/huggingface/transformers/tree/v4.40.0/examples/research_projects/distillation),
   with its defaults: α = 5.0 / 2.0 / 1.0 (the training command of its README) and T = 2.0
   (the default of ``train.py``'s ``--temperature``);
3. :func:`layer_map` and :func:`student_from_teacher` — a DistilBERT-format student
   (``transformers.DistilBertForMaskedLM``) initialised from one layer out of two of a BERT-format
   teacher (``BertForMaskedLM``), its embeddings and its MLM head (as ``scripts/extract_distilbert.py``
   of the same folder);
4. :func:`distillation_step` — one step: teacher frozen, student updated once; :func:`distil` — the training loop
   of those steps, with a ``tqdm`` bar, deterministic under a seed, recording
   every loss term at every step; :func:`train_mlm` (the course's masked-LM loop) trains the
   same-size student *without* a teacher, on the very same batches and masks;
5. :func:`parameter_count` and :func:`latency` — what the student buys: fewer weights, less time.

Quality is measured with :func:`course_utils.training.mlm_accuracy` and
:func:`course_utils.training.accuracy`, not re-written here.

Axis names in the docstrings: ``B`` batch, ``T`` tokens per sequence, ``V`` vocabulary size,
``D`` model width, ``N`` rows (positions) of a loss.
"""

from __future__ import annotations

import dataclasses
import numbers
import statistics
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import torch
from torch.nn import functional as F

from . import masking, training
from .encoder import EncoderConfig
from .hf_weights import bert_to_distilbert_state_dict
from .training import History, train_mlm
from .validation import non_negative_number, positive_int, positive_number, probability

if TYPE_CHECKING:  # transformers is imported lazily
    import transformers

__all__ = [
    "DEFAULT_ALPHAS",
    "DEFAULT_TEMPERATURE",
    "PUBLISHED_LAYERS",
    "TripleLoss",
    "cosine_loss",
    "distil",
    "distillation_loss",
    "distillation_step",
    "latencies",
    "latency",
    "layer_map",
    "parameter_count",
    "student_config",
    "student_from_teacher",
    "train_mlm",
    "triple_loss",
]

# Hugging Face's distillation research code: the README's training command passes
# --alpha_ce 5.0 --alpha_mlm 2.0 --alpha_cos 1.0, and train.py's --temperature defaults to 2.0.
DEFAULT_ALPHAS: dict[str, float] = {"ce": 5.0, "mlm": 2.0, "cos": 1.0}
DEFAULT_TEMPERATURE = 2.0

# The teacher layers that scripts/extract_distilbert.py copies from BERT-base (12 layers) into
# DistilBERT's 6: not exactly one out of two (0, 2, 4, 6, 8, 10), the top layer is kept.
PUBLISHED_LAYERS = (0, 2, 4, 7, 9, 11)


# --------------------------------------------------------------------------------------------
# The losses


def _check_logits(name: str, logits) -> torch.Tensor:
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"expected {name} to be a torch tensor (N, V), got {type(logits).__name__}")
    if not logits.is_floating_point():
        raise TypeError(f"expected {name} to hold floating-point logits, got dtype {logits.dtype}")
    if logits.ndim != 2:
        hint = (
            " (logits of shape (B, T, V)? select the positions first, or use .reshape(-1, V))"
            if logits.ndim == 3
            else ""
        )
        raise ValueError(f"expected {name} of shape (N, V), a 2-D tensor, got shape {tuple(logits.shape)}{hint}")
    return logits


def distillation_loss(
    student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float = DEFAULT_TEMPERATURE
) -> torch.Tensor:
    """Hinton et al.'s soft-target loss: ``T² · KL(softmax(t / T) ‖ softmax(s / T))``, a scalar.

    ``student_logits`` and ``teacher_logits``: ``(N, V)``, one row per predicted position. The KL
    divergence of each row is summed over the vocabulary, then averaged over the ``N`` rows
    (``reduction="batchmean"``: the mathematical KL per example; torch's ``"mean"`` would also
    divide by ``V``). The factor ``T²`` keeps the gradients' size about constant across
    temperatures: the gradient with respect to a student logit is ``(q - p) / T``, and
    ``q - p`` itself shrinks like ``1 / T`` for large ``T``, so without ``T²`` it would shrink like
    ``1 / T²`` (Hinton et al. 2015, section 2). The loss is 0 exactly when the two rows give the
    same distribution. Both log-softmaxes are computed stably (no overflow for large logits).
    """
    student_logits = _check_logits("student_logits", student_logits)
    teacher_logits = _check_logits("teacher_logits", teacher_logits)
    if student_logits.shape != teacher_logits.shape:
        raise ValueError(
            f"expected student_logits and teacher_logits of the same shape (N, V), got "
            f"{tuple(student_logits.shape)} and {tuple(teacher_logits.shape)}"
        )
    if student_logits.shape[0] == 0:
        raise ValueError("expected at least one row (N >= 1) of logits, got N = 0")
    temperature = positive_number("the temperature T", temperature)
    log_q = F.log_softmax(student_logits / temperature, dim=-1)  # the student's log-probabilities
    log_p = F.log_softmax(teacher_logits / temperature, dim=-1)  # the teacher's (the target)
    return F.kl_div(log_q, log_p, reduction="batchmean", log_target=True) * temperature**2


def hinton_loss(
    student_logits: torch.Tensor,
    teacher_logits: torch.Tensor,
    labels: torch.Tensor,
    *,
    alpha: float = 0.5,
    temperature: float = DEFAULT_TEMPERATURE,
) -> torch.Tensor:
    """Knowledge distillation's classic loss: ``α · CE(s, labels) + (1 − α) · T² · KL(softmax(t/T) ‖ softmax(s/T))``.

    ``*_logits (N, C)``, ``labels (N,)`` the true classes. The hard labels' cross-entropy and
    :func:`distillation_loss`, weighted (Hinton et al. 2015, section 2: "a weighted average of two
    different objective functions"). ``alpha = 1`` is plain fine-tuning, ``alpha = 0`` imitation only.
    """
    alpha = probability("alpha (the weight of the hard labels)", alpha)
    student_logits = _check_logits("student_logits", student_logits)
    if tuple(labels.shape) != (student_logits.shape[0],):
        raise ValueError(
            f"expected labels of shape (N,)=({student_logits.shape[0]},), one class per row, got {tuple(labels.shape)}"
        )
    hard = F.cross_entropy(student_logits, labels)
    return alpha * hard + (1 - alpha) * distillation_loss(student_logits, teacher_logits, temperature)


def task_objective(teacher_logits: torch.Tensor, *, alpha: float = 0.5, temperature: float = DEFAULT_TEMPERATURE):
    """Task-specific distillation for :func:`course_utils.training.train_classifier`'s ``objective``.

    ``teacher_logits (N, C)``: the fine-tuned teacher's logits for every training example, computed
    once. Returns ``objective(logits, labels, indices)``: :func:`hinton_loss` of a batch against the
    teacher's rows ``indices``.
    """
    teacher_logits = _check_logits("teacher_logits", teacher_logits).detach()

    def objective(logits: torch.Tensor, labels: torch.Tensor, indices) -> torch.Tensor:
        rows = teacher_logits[torch.as_tensor(indices)]
        return hinton_loss(logits, rows, labels, alpha=alpha, temperature=temperature)

    return objective


def cosine_loss(student_hidden: torch.Tensor, teacher_hidden: torch.Tensor) -> torch.Tensor:
    """``mean(1 - cos(s_i, t_i))`` over the rows of ``(N, D)`` hidden states: 0 when every pair points the same way.

    The value of ``torch.nn.CosineEmbeddingLoss`` with target 1, as DistilBERT's ``L_cos``.
    """
    if student_hidden.shape != teacher_hidden.shape or student_hidden.ndim != 2:
        raise ValueError(
            f"expected student and teacher hidden states of the same shape (N, D), got "
            f"{tuple(student_hidden.shape)} and {tuple(teacher_hidden.shape)} (are the two models as wide?)"
        )
    return (1 - F.cosine_similarity(student_hidden, teacher_hidden, dim=-1)).mean()


def _alphas(alphas: Mapping[str, float] | None) -> dict[str, float]:
    """``DEFAULT_ALPHAS`` updated with ``alphas`` (``{"cos": 0.0}`` is the ablation without ``L_cos``)."""
    alphas = dict(alphas or {})
    unknown = sorted(set(alphas) - set(DEFAULT_ALPHAS))
    if unknown:
        raise ValueError(f"expected alphas among {sorted(DEFAULT_ALPHAS)}, got unknown {unknown}")
    merged = {**DEFAULT_ALPHAS, **alphas}
    for name, value in merged.items():
        non_negative_number(f"alpha {name!r}", value)
    if not any(value > 0 for value in merged.values()):
        raise ValueError(f"expected at least one alpha > 0 (else nothing is learned), got {merged}")
    return {name: float(value) for name, value in merged.items()}


@dataclass
class TripleLoss:
    """DistilBERT's loss and its terms, each a scalar tensor: ``total = α_ce·ce + α_mlm·mlm + α_cos·cos``."""

    total: torch.Tensor
    ce: torch.Tensor
    mlm: torch.Tensor
    cos: torch.Tensor


def triple_loss(
    student_logits: torch.Tensor,
    teacher_logits: torch.Tensor,
    student_hidden: torch.Tensor,
    teacher_hidden: torch.Tensor,
    labels: torch.Tensor,
    attention_mask: torch.Tensor,
    *,
    alphas: Mapping[str, float] | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    restrict_ce_to_mask: bool = False,
) -> TripleLoss:
    """DistilBERT's objective ``α_ce · L_ce + α_mlm · L_mlm + α_cos · L_cos``, as Hugging Face's ``distiller.py``.

    ``*_logits (B, T, V)``, ``*_hidden (B, T, D)`` the last hidden states, ``labels (B, T)`` the MLM
    labels (the original id at masked positions, ``-100`` elsewhere), ``attention_mask (B, T)``
    (1 = real token). ``alphas`` updates :data:`DEFAULT_ALPHAS` (5.0 / 2.0 / 1.0).

    - ``L_ce``: :func:`distillation_loss` at ``temperature``. Over **every real token** by
      default, as ``distiller.py`` does unless ``--restrict_ce_to_mask`` is given (a ``store_true``
      flag, off by default), in which case only over the masked positions (``labels != -100``).
      So the student imitates the teacher's distribution at unmasked positions too.
    - ``L_mlm``: cross-entropy of the student's logits against ``labels`` (the masked positions).
    - ``L_cos``: :func:`cosine_loss` of the last hidden states over the real tokens (``distiller.py``
      selects them with the attention mask; ``torch.nn.CosineEmbeddingLoss`` with target 1).

    A term with no position to average over (no masked token in the batch) is 0.
    """
    alphas = _alphas(alphas)
    if student_logits.shape != teacher_logits.shape or student_logits.ndim != 3:
        raise ValueError(
            f"expected student and teacher logits of the same shape (B, T, V), got "
            f"{tuple(student_logits.shape)} and {tuple(teacher_logits.shape)}"
        )
    batch_shape = tuple(student_logits.shape[:2])
    for name, tensor in (("labels", labels), ("attention_mask", attention_mask)):
        if tuple(tensor.shape) != batch_shape:
            raise ValueError(f"expected {name} of shape (B, T)={batch_shape}, got {tuple(tensor.shape)}")
    if tuple(student_hidden.shape[:2]) != batch_shape or tuple(teacher_hidden.shape[:2]) != batch_shape:
        raise ValueError(
            f"expected hidden states of shape (B, T, D) with (B, T)={batch_shape}, got "
            f"{tuple(student_hidden.shape)} and {tuple(teacher_hidden.shape)}"
        )
    real = attention_mask.bool()
    masked = labels != masking.IGNORE_INDEX
    zero = student_logits.sum() * 0.0  # a 0 that stays in the graph
    ce_rows = masked if restrict_ce_to_mask else real
    ce = distillation_loss(student_logits[ce_rows], teacher_logits[ce_rows], temperature) if ce_rows.any() else zero
    vocab = student_logits.shape[-1]
    mlm = F.cross_entropy(student_logits.reshape(-1, vocab), labels.reshape(-1)) if masked.any() else zero
    cos = cosine_loss(student_hidden[real], teacher_hidden[real]) if real.any() else zero
    total = alphas["ce"] * ce + alphas["mlm"] * mlm + alphas["cos"] * cos
    return TripleLoss(total=total, ce=ce, mlm=mlm, cos=cos)


# --------------------------------------------------------------------------------------------
# The student, made from the teacher


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


# --------------------------------------------------------------------------------------------
# Training


def _check_roles(student, teacher) -> None:
    """A ``ValueError`` unless ``student`` can learn from ``teacher``: both models, one vocabulary,
    and a student no larger than its teacher (swapped arguments would train the teacher)."""
    for role, model in (("student", student), ("teacher", teacher)):
        if not isinstance(model, torch.nn.Module) or not hasattr(model, "config"):
            raise TypeError(f"expected the {role} to be a transformers model, got {type(model).__name__}")
    if student is teacher:
        raise ValueError("expected two different models, got the same model as student and teacher")
    if student.config.vocab_size != teacher.config.vocab_size:
        raise ValueError(
            f"expected student and teacher to share a vocabulary, got vocab_size {student.config.vocab_size} "
            f"and {teacher.config.vocab_size}"
        )
    n_student, n_teacher = parameter_count(student), parameter_count(teacher)
    if n_student > n_teacher:
        raise ValueError(
            f"expected the student (first argument) to be smaller than the teacher (second), got a "
            f"{type(student).__name__} of {n_student:,} parameters and a {type(teacher).__name__} of "
            f"{n_teacher:,}: are they swapped? Call distil(student, teacher, ...)"
        )


def distillation_step(
    teacher,
    student,
    batch: Sequence[torch.Tensor],
    optimizer: torch.optim.Optimizer,
    *,
    alphas: Mapping[str, float] | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    restrict_ce_to_mask: bool = False,
    max_norm: float | None = 1.0,
) -> TripleLoss:
    """One step of distillation, the body of :func:`distil`'s loop (lesson 07's exercise).

    ``batch = (input_ids, attention_mask, masked_ids, labels)``, each ``(B, T)``, as
    :func:`course_utils.training.mlm_batches` yields it. Both models read ``masked_ids``; the
    teacher in eval mode under ``torch.no_grad`` (frozen: no dropout, no graph, no gradient),
    the student in train mode. The loss is :func:`triple_loss`; then ``zero_grad``, ``backward``,
    the gradients' norm clipped to ``max_norm`` (None: not clipped) and one ``optimizer.step()``.
    A loss that is nan or inf updates nothing. The learning-rate schedule, if any, is the
    caller's. Returns the :class:`TripleLoss` (its
    tensors are those of this step's graph: use ``.item()`` to keep their values).
    """
    if not isinstance(batch, (tuple, list)) or len(batch) != 4:
        raise TypeError("expected batch = (input_ids, attention_mask, masked_ids, labels), as "
                        f"training.mlm_batches yields it, got {type(batch).__name__}"
                        + (f" of length {len(batch)}" if isinstance(batch, (tuple, list)) else ""))
    _, attention_mask, masked, labels = batch
    teacher.eval()  # the teacher is frozen: no dropout
    student.train()  # the student learns: dropout on
    with torch.no_grad():
        taught = teacher(input_ids=masked, attention_mask=attention_mask, output_hidden_states=True)
    out = student(input_ids=masked, attention_mask=attention_mask, output_hidden_states=True)
    loss = triple_loss(
        out.logits, taught.logits, out.hidden_states[-1], taught.hidden_states[-1], labels, attention_mask,
        alphas=alphas, temperature=temperature, restrict_ce_to_mask=restrict_ce_to_mask,
    )  # fmt: skip
    if not torch.isfinite(loss.total):  # no update: it would write nan into every weight (distil stops)
        return loss
    optimizer.zero_grad(set_to_none=True)
    loss.total.backward()
    if max_norm is not None:
        torch.nn.utils.clip_grad_norm_(student.parameters(), max_norm)
    optimizer.step()
    return loss


def distil(
    student,
    teacher,
    encoded: training.Encoded,
    tokenizer,
    *,
    steps: int,
    batch_size: int = 128,
    lr: float = 1e-3,
    warmup: int = 100,
    weight_decay: float = 0.01,
    alphas: Mapping[str, float] | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    restrict_ce_to_mask: bool = False,
    seed: int = 0,
    progress: bool = True,
) -> History:
    """Distil ``teacher`` into ``student`` for ``steps`` steps; the losses of every step.

    Both models see the same masked batch (as in ``distiller.py``); the teacher runs in eval mode
    without gradients, the student in train mode (dropout on). The loss is :func:`triple_loss`
    (``alphas``, ``temperature``, ``restrict_ce_to_mask``). The optimiser, schedule, clipping,
    batches and masks are :func:`course_utils.training.train_mlm`'s (AdamW, linear warm-up and
    decay, gradient norm clipped to 1): with the same seed, a student trained by ``train_mlm``
    sees exactly the same data, so the comparison isolates the teacher's signal. (``distiller.py``
    differs in two details the course leaves aside: it masks exactly 15% of a batch's tokens,
    rare tokens more often (XLM's smoothed sampling), and its AdamW uses betas (0.9, 0.98), a 5%
    warm-up and gradient clipping at 5.)

    Returns a :class:`~course_utils.training.History` with ``losses["loss"]`` (the weighted
    total), ``["ce"]``, ``["mlm"]`` and ``["cos"]``, one value per step. Same seed, same losses.
    """
    steps = positive_int("steps", steps)
    training.check_schedule(lr=lr, warmup=warmup, weight_decay=weight_decay, batch_size=batch_size)
    alphas = _alphas(alphas)
    temperature = positive_number("the temperature T", temperature)
    _check_roles(student, teacher)
    training.check_data(encoded, student)
    training.check_data(encoded, teacher)
    torch.manual_seed(seed)
    optimizer, schedule = training.optimiser(student, steps=steps, lr=lr, warmup=warmup, weight_decay=weight_decay)
    history = History()
    student.train()
    teacher.eval()
    batches = training.mlm_batches(encoded, tokenizer, steps=steps, batch_size=batch_size, seed=seed)
    with training.progress_bar(steps, "distillation", progress) as bar:
        for step, batch in enumerate(batches):
            loss = distillation_step(
                teacher, student, batch, optimizer,
                alphas=alphas, temperature=temperature, restrict_ce_to_mask=restrict_ce_to_mask, max_norm=1.0,
            )  # fmt: skip
            training.stop_if_not_finite(loss.total.item(), step, student, lr)
            schedule.step()
            history.record(loss=loss.total.item(), ce=loss.ce.item(), mlm=loss.mlm.item(), cos=loss.cos.item())
            bar.update(1)
            bar.set_postfix(loss=f"{loss.total.item():.3f}", refresh=False)
    student.eval()
    return history


# --------------------------------------------------------------------------------------------
# Measurements


def parameter_count(model: torch.nn.Module, *, trainable_only: bool = False) -> int:
    """The number of parameters of ``model``; a tied matrix (input and output embeddings) counts once."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"expected a torch.nn.Module, got {type(model).__name__}")
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)


def latency(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    *,
    repeats: int = 20,
    warmup: int = 3,
) -> float:
    """Median wall-clock seconds of one forward pass of ``model`` on ``input_ids (B, T)``.

    In eval mode under ``torch.inference_mode``, after ``warmup`` untimed passes; the median of
    ``repeats`` timed ones (robust to the odd slow run of a shared CPU). The paper's Table 3
    times batch 1 (one example at a time); a lesson also times batch 32. The model's train/eval
    mode is restored afterwards. To compare models, use :func:`latencies`.
    """
    return latencies({"model": model}, input_ids, attention_mask, repeats=repeats, warmup=warmup)["model"]


def latencies(
    models: Mapping[str, torch.nn.Module],
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    *,
    repeats: int = 20,
    warmup: int = 3,
) -> dict[str, float]:
    """:func:`latency` of several models, ``{name: median seconds}``, timed **in turn**.

    Each round times one pass of every model, one after the other, so that a change of load on a
    shared CPU (another process starting) slows every model alike and their ratio stays fair;
    timing one model ``repeats`` times and then the other would not.
    """
    repeats = positive_int("repeats", repeats)
    if isinstance(warmup, bool) or not isinstance(warmup, numbers.Integral) or warmup < 0:
        raise ValueError(f"expected warmup to be an integer >= 0, got {warmup!r}")
    if not isinstance(models, Mapping) or not models:
        raise TypeError(f"expected a dict of models {{name: model}}, got {type(models).__name__}")
    for name, model in models.items():
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"expected a torch.nn.Module for {name!r}, got {type(model).__name__}")
    if not isinstance(input_ids, torch.Tensor) or input_ids.ndim != 2:
        raise ValueError(
            f"expected input_ids to be a tensor of shape (B, T), got "
            f"{tuple(input_ids.shape) if isinstance(input_ids, torch.Tensor) else type(input_ids).__name__}"
        )
    kwargs = {"input_ids": input_ids}
    if attention_mask is not None:
        kwargs["attention_mask"] = attention_mask
    modes = {name: model.training for name, model in models.items()}
    times: dict[str, list[float]] = {name: [] for name in models}
    try:
        for model in models.values():
            model.eval()
        with torch.inference_mode():
            for round_ in range(warmup + repeats):
                for name, model in models.items():
                    start = time.perf_counter()
                    model(**kwargs)
                    if round_ >= warmup:
                        times[name].append(time.perf_counter() - start)
    finally:
        for name, model in models.items():
            model.train(modes[name])
    return {name: statistics.median(values) for name, values in times.items()}
