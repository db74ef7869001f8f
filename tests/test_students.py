"""Tests of course_utils.students: the layer map, the student's config, a student made from its teacher."""

from __future__ import annotations

import pytest
import torch
from transformers import DistilBertForMaskedLM

from course_utils import costs, students
from tests.tiny_models import padded_batch, tiny_teacher

pytestmark = pytest.mark.usefixtures("one_thread")


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
# erase_words


def test_erasing_words_redraws_only_their_rows_keeping_the_tie_and_the_scale():
    teacher = tiny_teacher(vocab=200)
    student = students.student_from_teacher(teacher, [0, 2])
    before = {name: value.clone() for name, value in student.state_dict().items()}
    erased = [5, 17, 42, 199]
    students.erase_words(student, erased, seed=3)
    table = student.distilbert.embeddings.word_embeddings.weight
    assert student.vocab_projector.weight is table  # still one tensor: the output matrix moved with it
    kept = [i for i in range(200) if i not in erased]
    old = before["distilbert.embeddings.word_embeddings.weight"]
    assert torch.equal(table[kept], old[kept]) and not torch.isclose(table[erased], old[erased]).any()
    assert torch.equal(student.vocab_projector.bias, before["vocab_projector.bias"])  # the words' frequency stays
    others = [name for name in before if "word_embeddings" not in name and name != "vocab_projector.weight"]
    assert all(torch.equal(student.state_dict()[name], before[name]) for name in others)
    # drawn like the other rows: per dimension, their mean and spread
    many = students.student_from_teacher(tiny_teacher(vocab=2000), [0, 2])
    rows = list(range(0, 2000, 2))
    reference = many.distilbert.embeddings.word_embeddings.weight[1::2].detach().clone()
    students.erase_words(many, rows, seed=0)
    drawn = many.distilbert.embeddings.word_embeddings.weight[rows].detach()
    torch.testing.assert_close(drawn.mean(0), reference.mean(0), atol=0.02, rtol=0)
    torch.testing.assert_close(drawn.std(0), reference.std(0), atol=0.02, rtol=0.1)


def test_erasing_is_seeded():
    tables = []
    for seed in (0, 0, 1):
        student = students.student_from_teacher(tiny_teacher(vocab=60), [0])
        students.erase_words(student, [3, 4], seed=seed)
        tables.append(student.distilbert.embeddings.word_embeddings.weight.detach().clone())
    assert torch.equal(tables[0], tables[1]) and not torch.equal(tables[0], tables[2])


@pytest.mark.parametrize("ids, seed, error, match", [
    ([], 0, ValueError, "distinct token ids between 0 and 59"),
    ([3, 3], 0, ValueError, "distinct token ids"),
    ([60], 0, ValueError, "between 0 and 59"),
    ([-1], 0, ValueError, "between 0 and 59"),
    ("kind", 0, TypeError, "expected token ids as a list of ints"),
    ([3], 1.5, TypeError, "expected seed to be an int"),
])
def test_erasing_refuses_what_is_not_a_set_of_rows(ids, seed, error, match):
    student = students.student_from_teacher(tiny_teacher(vocab=60), [0])
    with pytest.raises(error, match=match):
        students.erase_words(student, ids, seed=seed)
