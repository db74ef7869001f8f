"""Tests of course_utils.distill: the losses against torch's, the student against its teacher, the loop.

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
from transformers import BertConfig, BertForMaskedLM, DistilBertForMaskedLM

from course_utils import costs, data, distill, masking, students, training

# --------------------------------------------------------------------------------------------
# Fixtures: a tiny teacher with non-trivial weights everywhere


def tiny_teacher(*, layers: int = 4, vocab: int = 50, seed: int = 0, attn: str = "eager", **overrides):
    torch.manual_seed(seed)
    fields = dict(vocab_size=vocab, hidden_size=16, num_hidden_layers=layers, num_attention_heads=2,
                  intermediate_size=32, max_position_embeddings=24, pad_token_id=0)  # fmt: skip
    fields["attn_implementation"] = attn
    teacher = BertForMaskedLM(BertConfig(**{**fields, **overrides}))
    with torch.no_grad():  # LayerNorms, biases and the segment vectors away from their 1 / 0 initial values
        for parameter in teacher.parameters():
            parameter.add_(0.1 * torch.randn_like(parameter))
    return teacher.eval()


def padded_batch(vocab: int = 50, seed: int = 1):
    generator = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(1, vocab, (3, 9), generator=generator)
    attention_mask = torch.ones_like(input_ids)
    for row, length in enumerate((9, 6, 2)):
        input_ids[row, length:] = 0
        attention_mask[row, length:] = 0
    return input_ids, attention_mask


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
# layer_map


@pytest.mark.parametrize(
    "n_teacher, n_student, expected",
    [(6, 3, [0, 2, 4]), (12, 6, [0, 2, 4, 6, 8, 10]), (6, 6, [0, 1, 2, 3, 4, 5]), (6, 2, [0, 3]), (6, 1, [0]),
     (5, 2, [0, 2])],
)  # fmt: skip
def test_layer_map_takes_one_layer_out_of_two_from_the_first(n_teacher, n_student, expected):
    assert students.layer_map(n_teacher, n_student) == expected


def test_the_published_distilbert_layers_are_not_exactly_one_out_of_two():
    ours = students.layer_map(12, 6)
    assert len(students.PUBLISHED_LAYERS) == 6 and ours[:3] == list(students.PUBLISHED_LAYERS[:3])
    assert ours[3:] != list(students.PUBLISHED_LAYERS[3:]) and students.PUBLISHED_LAYERS[-1] == 11


@pytest.mark.parametrize("args", [(6, 7), (0, 1), (6, 0), (6.0, 3), (True, 1)])
def test_layer_map_refuses_impossible_sizes(args):
    with pytest.raises(ValueError, match="expected"):
        students.layer_map(*args)


# --------------------------------------------------------------------------------------------
# student_from_teacher


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_a_student_with_every_teacher_layer_reproduces_the_teacher(attn):
    teacher = tiny_teacher(attn=attn)
    student = students.student_from_teacher(teacher, range(4))
    assert isinstance(student, DistilBertForMaskedLM) and student.config._attn_implementation == attn
    input_ids, attention_mask = padded_batch()
    with torch.no_grad():
        expected = teacher(input_ids=input_ids, attention_mask=attention_mask,
                           token_type_ids=torch.zeros_like(input_ids), output_hidden_states=True)  # fmt: skip
        got = student(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
    assert len(got.hidden_states) == len(expected.hidden_states) == 5
    for mine, theirs in zip(got.hidden_states, expected.hidden_states):  # embeddings, then every layer
        torch.testing.assert_close(mine, theirs, rtol=0, atol=1e-5)
    torch.testing.assert_close(got.logits, expected.logits, rtol=0, atol=1e-5)


def test_folding_the_segment_vector_into_the_words_shifts_each_logit_row_by_a_constant():
    teacher = tiny_teacher()
    input_ids, attention_mask = padded_batch()
    with torch.no_grad():
        expected = teacher(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        word = students.student_from_teacher(teacher, range(4), fold_token_type="word")
        got = word(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        none = students.student_from_teacher(teacher, range(4), fold_token_type="none")
        dropped = none(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        # the shift h · t: the head's transformed hidden state times the segment vector (tied weights)
        head = teacher.cls.predictions.transform(expected.hidden_states[-1])
        shift = head @ teacher.bert.embeddings.token_type_embeddings.weight[0]
    torch.testing.assert_close(got.hidden_states[-1], expected.hidden_states[-1], rtol=0, atol=1e-5)
    difference = got.logits - expected.logits
    assert difference.abs().max() > 1e-2  # not the same logits ...
    torch.testing.assert_close(difference, shift[..., None].expand_as(difference), rtol=0, atol=1e-5)
    torch.testing.assert_close(got.logits.softmax(-1), expected.logits.softmax(-1), rtol=0, atol=1e-6)  # same softmax
    assert (dropped.hidden_states[-1] - expected.hidden_states[-1]).abs().max() > 1e-2  # dropping it is not exact


def test_an_untied_teacher_gives_an_untied_student_that_still_reproduces_it():
    teacher = tiny_teacher(tie_word_embeddings=False)
    assert teacher.cls.predictions.decoder.weight is not teacher.bert.embeddings.word_embeddings.weight
    student = students.student_from_teacher(teacher, range(4))
    assert student.vocab_projector.weight is not student.distilbert.embeddings.word_embeddings.weight
    input_ids, attention_mask = padded_batch()
    with torch.no_grad():
        torch.testing.assert_close(student(input_ids=input_ids, attention_mask=attention_mask).logits,
                                   teacher(input_ids=input_ids, attention_mask=attention_mask).logits,
                                   rtol=0, atol=1e-5)  # fmt: skip


def _layer_parameters(d: int, f: int) -> int:
    attention = 4 * (d * d + d) + 2 * d  # q, k, v, out; a LayerNorm
    feed_forward = d * f + f + f * d + d + 2 * d  # lin1, lin2; a LayerNorm
    return attention + feed_forward


def test_a_half_student_copies_layers_0_and_2_and_has_the_expected_parameter_count():
    teacher = tiny_teacher()
    student = students.student_from_teacher(teacher)  # default: layer_map(4, 2) = [0, 2]
    assert student.config.n_layers == 2
    v, d, f, p = 50, 16, 32, 24
    embeddings = v * d + p * d + 2 * d
    head = d * d + d + 2 * d + v  # vocab_transform, vocab_layer_norm, the projector's bias (its weight is tied)
    assert costs.parameter_count(student) == embeddings + 2 * _layer_parameters(d, f) + head
    # the teacher has two more layers and the two segment vectors
    assert costs.parameter_count(teacher) - costs.parameter_count(student) == 2 * _layer_parameters(d, f) + 2 * d
    for s, t in enumerate([0, 2]):
        assert torch.equal(student.distilbert.transformer.layer[s].ffn.lin1.weight,
                           teacher.bert.encoder.layer[t].intermediate.dense.weight)  # fmt: skip
        assert torch.equal(student.distilbert.transformer.layer[s].attention.q_lin.bias,
                           teacher.bert.encoder.layer[t].attention.self.query.bias)  # fmt: skip
    assert student.vocab_projector.weight is student.distilbert.embeddings.word_embeddings.weight  # still tied


def test_the_student_owns_its_weights():
    teacher = tiny_teacher()
    before = teacher.bert.encoder.layer[0].attention.self.query.weight.clone()
    student = students.student_from_teacher(teacher, [0, 3])
    with torch.no_grad():
        student.distilbert.transformer.layer[0].attention.q_lin.weight.add_(1.0)
    assert torch.equal(teacher.bert.encoder.layer[0].attention.self.query.weight, before)
    assert not student.training  # the teacher's mode


def test_student_config_follows_the_teacher():
    teacher = tiny_teacher(hidden_dropout_prob=0.2, attention_probs_dropout_prob=0.05)
    config = students.student_config(teacher, 3)
    assert (config.dim, config.n_heads, config.hidden_dim, config.n_layers) == (16, 2, 32, 3)
    assert (config.vocab_size, config.max_position_embeddings, config.pad_token_id) == (50, 24, 0)
    assert (config.dropout, config.attention_dropout, config.activation) == (0.2, 0.05, "gelu")
    assert not config.sinusoidal_pos_embds


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(layers=[0, 4]), ValueError, r"\[0, 4\)"),
        (dict(layers=[]), ValueError, "at least one"),
        (dict(layers=[0, 1.0]), TypeError, "integer layer indices"),
        (dict(layers=[2, 0]), ValueError, "increasing"),
        (dict(fold_token_type="segment"), ValueError, "fold_token_type"),
    ],
)
def test_student_from_teacher_says_what_is_wrong(kwargs, error, message):
    with pytest.raises(error, match=message):
        students.student_from_teacher(tiny_teacher(), **kwargs)


def test_student_from_teacher_wants_a_bert_mlm_teacher_with_bert_layer_norms():
    with pytest.raises(TypeError, match="BertForMaskedLM"):
        students.student_from_teacher(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="layer_norm_eps"):
        students.student_from_teacher(tiny_teacher(layer_norm_eps=1e-5))


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


# --------------------------------------------------------------------------------------------
# Measurements


def test_parameter_count_counts_tied_weights_once():
    teacher = tiny_teacher()
    unique = {id(p): p.numel() for p in teacher.parameters()}
    assert costs.parameter_count(teacher) == sum(unique.values())
    total = sum(p.numel() for _, p in teacher.named_parameters(remove_duplicate=False))
    assert costs.parameter_count(teacher) == total - 50 * 16 - 50  # the decoder's weight and bias are tied
    teacher.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    assert costs.parameter_count(teacher, trainable_only=True) == costs.parameter_count(teacher) - 50 * 16
    with pytest.raises(TypeError, match="Module"):
        costs.parameter_count([1, 2])


def test_latency_is_a_median_of_positive_times_and_restores_the_mode():
    teacher = tiny_teacher().train()
    input_ids, attention_mask = padded_batch()
    seconds = costs.latency(teacher, input_ids, attention_mask, repeats=3, warmup=1)
    assert 0 < seconds < 5 and teacher.training
    assert costs.latency(teacher, input_ids[:1], repeats=1, warmup=0) > 0
    with pytest.raises(ValueError, match="repeats"):
        costs.latency(teacher, input_ids, repeats=0)
    with pytest.raises(ValueError, match=r"\(B, T\)"):
        costs.latency(teacher, input_ids[0])


def test_latencies_times_models_in_turn_and_restores_their_modes():
    teacher = tiny_teacher().train()
    student = students.student_from_teacher(teacher)  # in train mode too, like its teacher
    input_ids, attention_mask = padded_batch()
    seconds = costs.latencies({"teacher": teacher, "student": student}, input_ids, attention_mask, repeats=3)
    assert list(seconds) == ["teacher", "student"] and all(0 < s < 5 for s in seconds.values())
    assert teacher.training and student.training
    with pytest.raises(TypeError, match="dict of models"):
        costs.latencies([teacher], input_ids)
    with pytest.raises(TypeError, match="'student'"):
        costs.latencies({"student": "distilbert"}, input_ids)
