"""Tests of course_utils.distill: the losses against torch's, and the loops (distil, train_mlm).

The references are written here independently, as Hugging Face's ``distiller.py`` computes them
(``nn.KLDivLoss(reduction="batchmean")`` on ``masked_select``-ed rows, ``nn.CrossEntropyLoss``,
``nn.CosineEmbeddingLoss`` with target 1). Models are tiny random BERTs (width 16), so every test
is fast on a CPU.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from transformers import DistilBertForMaskedLM

from course_utils import data, distill, masking, students, training
from tests.tiny_models import tiny_teacher

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def sentences(tokenizer):
    return training.encode(data.corpus("train")[:48], tokenizer)


def _logits(n, v, seed, scale=2.0):
    generator = torch.Generator().manual_seed(seed)
    return scale * torch.randn(n, v, generator=generator, dtype=torch.float64)


# --------------------------------------------------------------------------------------------
# distillation_loss


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("n, v", [(1, 2), (4, 7), (10, 3)])
def test_distillation_loss_equals_torch_kldivloss_batchmean_times_t_squared(n, v, temperature):
    student, teacher = _logits(n, v, 0), _logits(n, v, 1)
    reference = (
        nn.KLDivLoss(reduction="batchmean")(
            torch.log_softmax(student / temperature, dim=-1), torch.softmax(teacher / temperature, dim=-1)
        )
        * temperature**2
    )
    assert torch.allclose(distill.distillation_loss(student, teacher, temperature), reference, rtol=1e-12, atol=1e-14)


def test_distillation_loss_is_the_kl_formula_in_numpy():
    student, teacher, temperature = _logits(5, 6, 2), _logits(5, 6, 3), 3.0
    s, t = student.numpy() / temperature, teacher.numpy() / temperature
    q = np.exp(s - s.max(1, keepdims=True))
    q /= q.sum(1, keepdims=True)
    p = np.exp(t - t.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    expected = temperature**2 * np.mean(np.sum(p * np.log(p / q), axis=1))
    assert float(distill.distillation_loss(student, teacher, temperature)) == pytest.approx(expected, rel=1e-12)


def test_distillation_loss_is_zero_for_the_same_distribution_and_positive_otherwise():
    teacher = _logits(4, 5, 0)
    shifted = teacher + torch.arange(4, dtype=torch.float64)[:, None]  # a constant per row: the same softmax
    assert float(distill.distillation_loss(shifted, teacher, 2.0)) == pytest.approx(0.0, abs=1e-12)
    assert float(distill.distillation_loss(_logits(4, 5, 1), teacher, 2.0)) > 0


def test_distillation_loss_is_stable_for_large_logits():
    student, teacher = _logits(3, 8, 0, scale=500.0).float(), _logits(3, 8, 1, scale=500.0).float()
    loss = distill.distillation_loss(student, teacher, 1.0)
    reference = distill.distillation_loss(student.double(), teacher.double(), 1.0)
    assert torch.isfinite(loss) and float(loss) == pytest.approx(float(reference), rel=1e-4)


def _gradient_norm(temperature: float, squared: bool) -> float:
    student, teacher = _logits(8, 20, 0).requires_grad_(), _logits(8, 20, 1)
    loss = distill.distillation_loss(student, teacher, temperature)
    if not squared:
        loss = loss / temperature**2
    loss.backward()
    return float(student.grad.norm())


def test_the_t_squared_factor_keeps_the_gradient_size_constant_for_large_t():
    """Hinton et al. 2015, section 2: the gradient is (q - p) / T, and q - p ~ (s - t) / T."""
    temperatures = [8.0, 16.0, 32.0, 64.0]
    with_factor = [_gradient_norm(t, squared=True) for t in temperatures]
    without = [_gradient_norm(t, squared=False) for t in temperatures]
    assert max(with_factor) / min(with_factor) < 1.1  # about constant
    for a, b in zip(without, without[1:]):  # T doubles: the gradient falls 4-fold
        assert a / b == pytest.approx(4.0, rel=0.05)
    assert _gradient_norm(1.0, squared=True) > 0


@pytest.mark.parametrize(
    "student, teacher, temperature, error, message",
    [
        (torch.zeros(2, 3), torch.zeros(2, 4), 1.0, ValueError, "same shape"),
        (torch.zeros(2, 3, 4), torch.zeros(2, 3, 4), 1.0, ValueError, r"\(N, V\).*reshape"),
        (np.zeros((2, 3)), torch.zeros(2, 3), 1.0, TypeError, "torch tensor"),
        (torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 3), 1.0, TypeError, "floating-point"),
        (torch.zeros(0, 3), torch.zeros(0, 3), 1.0, ValueError, "N >= 1"),
        (torch.zeros(2, 3), torch.zeros(2, 3), 0.0, ValueError, "temperature T to be a finite number > 0"),
        (torch.zeros(2, 3), torch.zeros(2, 3), -1.0, ValueError, "temperature T to be a finite number > 0"),
        (torch.zeros(2, 3), torch.zeros(2, 3), float("nan"), ValueError, "temperature T to be a finite number > 0"),
        (torch.zeros(2, 3), torch.zeros(2, 3), True, ValueError, "temperature T to be a finite number > 0"),
    ],
)
def test_distillation_loss_says_what_is_wrong(student, teacher, temperature, error, message):
    with pytest.raises(error, match=message):
        distill.distillation_loss(student, teacher, temperature)


# --------------------------------------------------------------------------------------------
# The triple loss, against distiller.py's way of computing it


def _hf_style(s_logits, t_logits, s_hidden, t_hidden, labels, attention_mask, alphas, temperature, restrict):
    """distiller.py's step, re-typed: masked_select, then the three torch loss modules."""
    if restrict:
        mask = (labels > -1).unsqueeze(-1).expand_as(s_logits)
    else:
        mask = attention_mask.bool().unsqueeze(-1).expand_as(s_logits)
    s_slct = torch.masked_select(s_logits, mask).view(-1, s_logits.size(-1))
    t_slct = torch.masked_select(t_logits, mask).view(-1, s_logits.size(-1))
    loss_ce = (
        nn.KLDivLoss(reduction="batchmean")(
            nn.functional.log_softmax(s_slct / temperature, dim=-1), nn.functional.softmax(t_slct / temperature, dim=-1)
        )
        * temperature**2
    )
    loss_mlm = nn.CrossEntropyLoss(ignore_index=-100)(s_logits.view(-1, s_logits.size(-1)), labels.view(-1))
    hidden_mask = attention_mask.bool().unsqueeze(-1).expand_as(s_hidden)
    dim = s_hidden.size(-1)
    s_h = torch.masked_select(s_hidden, hidden_mask).view(-1, dim)
    t_h = torch.masked_select(t_hidden, hidden_mask).view(-1, dim)
    loss_cos = nn.CosineEmbeddingLoss(reduction="mean")(s_h, t_h, s_h.new(s_h.size(0)).fill_(1))
    total = alphas["ce"] * loss_ce + alphas["mlm"] * loss_mlm + alphas["cos"] * loss_cos
    return total, loss_ce, loss_mlm, loss_cos


def _triple_inputs(seed=0, b=3, t=6, v=11, d=5):
    generator = torch.Generator().manual_seed(seed)
    s_logits, t_logits = (torch.randn(b, t, v, generator=generator, dtype=torch.float64) for _ in range(2))
    s_hidden, t_hidden = (torch.randn(b, t, d, generator=generator, dtype=torch.float64) for _ in range(2))
    attention_mask = torch.ones(b, t, dtype=torch.long)
    attention_mask[1, 4:] = 0
    attention_mask[2, 2:] = 0
    labels = torch.full((b, t), -100)
    labels[0, 1], labels[0, 3], labels[1, 2] = 4, 7, 0
    return s_logits, t_logits, s_hidden, t_hidden, labels, attention_mask


@pytest.mark.parametrize("restrict", [False, True])
@pytest.mark.parametrize("alphas", [None, {"ce": 1.0, "mlm": 0.0, "cos": 3.0}, {"cos": 0.0}])
def test_triple_loss_equals_distiller_py(restrict, alphas):
    inputs = _triple_inputs()
    loss = distill.triple_loss(*inputs, alphas=alphas, temperature=3.0, restrict_ce_to_mask=restrict)
    merged = {**distill.DEFAULT_ALPHAS, **(alphas or {})}
    expected = _hf_style(*inputs, merged, 3.0, restrict)
    for got, want in zip((loss.total, loss.ce, loss.mlm, loss.cos), expected):
        assert torch.allclose(got, want, rtol=1e-12, atol=1e-14)


def test_the_defaults_are_those_of_the_hugging_face_research_code():
    assert distill.DEFAULT_ALPHAS == {"ce": 5.0, "mlm": 2.0, "cos": 1.0}
    assert distill.DEFAULT_TEMPERATURE == 2.0


def test_l_ce_covers_the_real_tokens_by_default_and_the_masked_ones_when_restricted():
    s_logits, t_logits, s_hidden, t_hidden, labels, attention_mask = _triple_inputs()
    real, masked = attention_mask.bool(), labels != -100
    everywhere = distill.triple_loss(s_logits, t_logits, s_hidden, t_hidden, labels, attention_mask)
    restricted = distill.triple_loss(s_logits, t_logits, s_hidden, t_hidden, labels, attention_mask,
                                     restrict_ce_to_mask=True)  # fmt: skip
    assert torch.allclose(everywhere.ce, distill.distillation_loss(s_logits[real], t_logits[real], 2.0))
    assert torch.allclose(restricted.ce, distill.distillation_loss(s_logits[masked], t_logits[masked], 2.0))
    # padding never counts: changing the logits and hidden states at padded positions changes nothing
    s2, h2 = s_logits.clone(), s_hidden.clone()
    s2[~real] += 100.0
    h2[~real] *= -3.0
    again = distill.triple_loss(s2, t_logits, h2, t_hidden, labels, attention_mask)
    assert torch.equal(again.total, everywhere.total)


def test_a_batch_without_masked_tokens_has_zero_mlm_loss_and_still_a_gradient():
    s_logits, t_logits, s_hidden, t_hidden, labels, attention_mask = _triple_inputs()
    s_logits.requires_grad_()
    labels = torch.full_like(labels, -100)
    loss = distill.triple_loss(s_logits, t_logits, s_hidden, t_hidden, labels, attention_mask,
                               restrict_ce_to_mask=True)  # fmt: skip
    assert loss.mlm.item() == 0.0 and loss.ce.item() == 0.0 and torch.isfinite(loss.total)
    loss.total.backward()
    assert s_logits.grad is not None


def test_cosine_loss_is_zero_for_parallel_vectors_and_matches_torch():
    a = _logits(6, 4, 0)
    assert float(distill.cosine_loss(3.0 * a, a)) == pytest.approx(0.0, abs=1e-12)
    b = _logits(6, 4, 1)
    reference = nn.CosineEmbeddingLoss()(a, b, torch.ones(6))
    assert torch.allclose(distill.cosine_loss(a, b), reference)
    with pytest.raises(ValueError, match="as wide"):
        distill.cosine_loss(a, a[:, :3])


@pytest.mark.parametrize(
    "alphas, message",
    [({"kd": 1.0}, "unknown"), ({"ce": -1.0}, ">= 0"), ({"ce": 0.0, "mlm": 0.0, "cos": 0.0}, "at least one")],
)
def test_bad_alphas_are_refused(alphas, message):
    with pytest.raises(ValueError, match=message):
        distill.triple_loss(*_triple_inputs(), alphas=alphas)


def test_triple_loss_checks_shapes():
    s_logits, t_logits, s_hidden, t_hidden, labels, attention_mask = _triple_inputs()
    with pytest.raises(ValueError, match=r"\(B, T, V\)"):
        distill.triple_loss(s_logits, t_logits[:, :-1], s_hidden, t_hidden, labels, attention_mask)
    with pytest.raises(ValueError, match="labels"):
        distill.triple_loss(s_logits, t_logits, s_hidden, t_hidden, labels[:, :-1], attention_mask)

# --------------------------------------------------------------------------------------------
# The training loops


def _pair(tokenizer, seed=0):
    teacher = tiny_teacher(layers=2, vocab=len(tokenizer), seed=seed, max_position_embeddings=128,
                           pad_token_id=tokenizer.pad_token_id)  # fmt: skip
    return teacher, students.student_from_teacher(teacher, [0])


def _run(tokenizer, sentences, **kwargs):
    teacher, student = _pair(tokenizer)
    arguments = dict(steps=3, batch_size=16, lr=1e-3, warmup=1, seed=0, progress=False)
    history = distill.distil(student, teacher, sentences, tokenizer, **{**arguments, **kwargs})
    return history, student, teacher


def test_distil_is_deterministic_and_records_every_term(tokenizer, sentences):
    first, student_a, _ = _run(tokenizer, sentences)
    second, student_b, _ = _run(tokenizer, sentences)
    third, _, _ = _run(tokenizer, sentences, seed=1)
    assert set(first.losses) == {"loss", "ce", "mlm", "cos"}
    assert all(len(values) == 3 for values in first.losses.values())
    assert first.losses == second.losses and first.losses != third.losses
    for a, b in zip(student_a.parameters(), student_b.parameters()):
        assert torch.equal(a, b)
    for step in range(3):
        weighted = 5.0 * first.losses["ce"][step] + 2.0 * first.losses["mlm"][step] + first.losses["cos"][step]
        assert first.losses["loss"][step] == pytest.approx(weighted, rel=1e-5)
    assert not student_a.training


def test_distil_leaves_the_teacher_untouched(tokenizer, sentences):
    teacher, student = _pair(tokenizer)
    before = [p.clone() for p in teacher.parameters()]
    distill.distil(student, teacher, sentences, tokenizer, steps=2, batch_size=16, progress=False)
    assert all(torch.equal(a, b) for a, b in zip(before, teacher.parameters()))
    assert all(p.grad is None for p in teacher.parameters())
    assert not teacher.training


def test_distil_without_the_teacher_terms_is_train_mlm_on_the_same_batches(tokenizer, sentences):
    """alpha_ce = alpha_cos = 0: the same optimiser, schedule, batches and masks as training.train_mlm."""
    history, _, _ = _run(tokenizer, sentences, alphas={"ce": 0.0, "mlm": 1.0, "cos": 0.0}, steps=4)
    _, baseline = _pair(tokenizer)
    reference = distill.train_mlm(baseline, sentences, tokenizer, steps=4, batch_size=16, lr=1e-3, warmup=1,
                                  seed=0, progress=False)  # fmt: skip
    assert history.losses["mlm"] == reference.losses["mlm"]
    assert distill.train_mlm is training.train_mlm


def test_distil_groups_batches_by_length_as_train_mlm_does(tokenizer, sentences):
    """group_by_length reaches the batches, and both loops get the same ones: the comparison stays fair."""
    mlm_only = {"ce": 0.0, "mlm": 1.0, "cos": 0.0}
    grouped, _, _ = _run(tokenizer, sentences, alphas=mlm_only, steps=4, group_by_length=True)
    ungrouped, _, _ = _run(tokenizer, sentences, alphas=mlm_only, steps=4)
    _, baseline = _pair(tokenizer)
    reference = distill.train_mlm(baseline, sentences, tokenizer, steps=4, batch_size=16, lr=1e-3, warmup=1,
                                  group_by_length=True, seed=0, progress=False)  # fmt: skip
    assert grouped.losses["mlm"] == reference.losses["mlm"] != ungrouped.losses["mlm"]


def test_distillation_brings_a_random_student_closer_to_the_teacher(tokenizer, sentences):
    teacher, _ = _pair(tokenizer)
    torch.manual_seed(0)
    student = DistilBertForMaskedLM(students.student_config(teacher, 1))
    history = distill.distil(student, teacher, sentences, tokenizer, steps=12, batch_size=16, lr=3e-3, warmup=2,
                             progress=False)  # fmt: skip
    for term in ("ce", "cos", "loss"):
        assert np.mean(history.losses[term][-3:]) < np.mean(history.losses[term][:3]), term


def test_train_mlm_trains_a_distilbert_student(tokenizer, sentences):
    _, student = _pair(tokenizer)
    history = training.train_mlm(student, sentences, tokenizer, steps=2, batch_size=16, progress=False)
    assert len(history.losses["mlm"]) == 2 and all(np.isfinite(history.losses["mlm"]))
    assert 0.0 <= training.mlm_accuracy(student, training.Encoded(sentences.ids[:8], sentences.labels[:8]),
                                        tokenizer) <= 1.0  # fmt: skip


def test_distil_refuses_a_student_of_another_vocabulary(tokenizer, sentences):
    teacher, _ = _pair(tokenizer)
    with pytest.raises(ValueError, match="vocabulary"):
        distill.distil(students.student_from_teacher(tiny_teacher(layers=2)), teacher, sentences, tokenizer, steps=1)
    with pytest.raises(ValueError, match="steps"):
        distill.distil(students.student_from_teacher(teacher), teacher, sentences, tokenizer, steps=0)


def test_the_mlm_batches_mask_only_ordinary_tokens(tokenizer, sentences):
    special = set(tokenizer.all_special_ids)
    for input_ids, attention_mask, masked, labels in training.mlm_batches(sentences, tokenizer, steps=4,
                                                                          batch_size=16, seed=0):  # fmt: skip
        chosen = labels != masking.IGNORE_INDEX
        assert chosen.any() and not set(input_ids[chosen].tolist()) & special
        assert torch.equal(labels[chosen], input_ids[chosen]) and torch.equal(masked[~chosen], input_ids[~chosen])
        assert torch.equal(attention_mask.bool(), input_ids != tokenizer.pad_token_id)
