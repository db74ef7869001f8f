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
3. :func:`distillation_step` — one step: teacher frozen, student updated once; :func:`distil` — the training loop
   of those steps, with a ``tqdm`` bar, deterministic under a seed, recording
   every loss term at every step; :func:`train_mlm` (the course's masked-LM loop) trains the
   same-size student *without* a teacher, on the very same batches and masks;
The student itself is made from the teacher by :mod:`course_utils.students` (one layer out of
two); what it buys, fewer weights and less time, is measured by :mod:`course_utils.costs`
(``parameter_count``, ``latencies``). Quality is measured with :func:`course_utils.training.mlm_accuracy` and
:func:`course_utils.training.accuracy`, not re-written here.

Axis names in the docstrings: ``B`` batch, ``T`` tokens per sequence, ``V`` vocabulary size,
``D`` model width, ``N`` rows (positions) of a loss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import torch
from torch.nn import functional as F

from . import masking, training
from .costs import parameter_count
from .training import History, train_mlm
from .validation import non_negative_number, positive_int, positive_number, probability

__all__ = [
    "DEFAULT_ALPHAS",
    "DEFAULT_TEMPERATURE",
    "TripleLoss",
    "cosine_loss",
    "distil",
    "distillation_loss",
    "distillation_step",
    "train_mlm",
    "triple_loss",
]

# Hugging Face's distillation research code: the README's training command passes
# --alpha_ce 5.0 --alpha_mlm 2.0 --alpha_cos 1.0, and train.py's --temperature defaults to 2.0.
DEFAULT_ALPHAS: dict[str, float] = {"ce": 5.0, "mlm": 2.0, "cos": 1.0}
DEFAULT_TEMPERATURE = 2.0


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
    divide by ``V``). The factor ``T²``: the gradient with respect to a student logit is
    ``(q - p) / T``, and ``q - p`` itself shrinks like ``1 / T`` for large ``T``, so without ``T²``
    it would shrink like ``1 / T²``; with it, the relative contributions of soft and hard targets
    stay roughly unchanged as ``T`` changes (Hinton et al. 2015, section 2). Only roughly: at small
    ``T`` the gradient still changes with ``T`` (lesson 07 measures it). The loss is 0 exactly when the two rows give the
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


def task_objective(teacher_logits: torch.Tensor, *, alpha: float = 0.5, temperature: float = DEFAULT_TEMPERATURE,
                   labelled=None):
    """Task-specific distillation for :func:`course_utils.training.train_classifier`'s ``objective``.

    ``teacher_logits (N, C)``: the fine-tuned teacher's logits for every training example, computed
    once. Returns ``objective(logits, labels, indices)``: :func:`hinton_loss` of a batch against the
    teacher's rows ``indices``. ``labelled (N,)`` bool, when given: only those examples have a
    label; the others are unlabelled text the teacher labels (Hinton et al. 2015's transfer set),
    and their loss is the soft targets' alone, ``T² · KL``. The batch's loss is the mean of its rows'.
    """
    teacher_logits = _check_logits("teacher_logits", teacher_logits).detach()
    alpha = probability("alpha (the weight of the hard labels)", alpha)
    temperature = positive_number("the temperature T", temperature)
    if labelled is not None:
        labelled = torch.as_tensor(labelled)
        if labelled.dtype != torch.bool or tuple(labelled.shape) != (teacher_logits.shape[0],):
            raise ValueError(f"expected labelled to be a bool tensor of shape (N,)=({teacher_logits.shape[0]},), "
                             f"one entry per example, got {labelled.dtype} of shape {tuple(labelled.shape)}")

    def objective(logits: torch.Tensor, labels: torch.Tensor, indices) -> torch.Tensor:
        rows = teacher_logits[torch.as_tensor(indices)]
        if labelled is None:
            return hinton_loss(logits, rows, labels, alpha=alpha, temperature=temperature)
        known = labelled[torch.as_tensor(indices)]
        log_q = F.log_softmax(logits / temperature, dim=-1)
        log_p = F.log_softmax(rows / temperature, dim=-1)
        soft = F.kl_div(log_q, log_p, reduction="none", log_target=True).sum(-1) * temperature**2
        hard = F.cross_entropy(logits, torch.where(known, labels, 0), reduction="none")
        return torch.where(known, alpha * hard + (1 - alpha) * soft, soft).mean()

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
    group_by_length: bool = False,
    seed: int = 0,
    progress: bool = True,
) -> History:
    """Distil ``teacher`` into ``student`` for ``steps`` steps; the losses of every step.

    Both models see the same masked batch (as in ``distiller.py``); the teacher runs in eval mode
    without gradients, the student in train mode (dropout on). The loss is :func:`triple_loss`
    (``alphas``, ``temperature``, ``restrict_ce_to_mask``). The optimiser, schedule, clipping,
    batches and masks (``group_by_length`` too) are :func:`course_utils.training.train_mlm`'s (AdamW, linear warm-up and
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
    batches = training.mlm_batches(encoded, tokenizer, steps=steps, batch_size=batch_size, seed=seed,
                                   group_by_length=group_by_length)
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
