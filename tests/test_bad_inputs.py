"""Bad inputs to the functions the lessons call: each gives one clear error, never a raw one or a hang.

One table per module: ``(id, call, exception type, words the message must contain)``. A future
change that turns a clear message back into a library's traceback (or into silence) fails here.
Each call is made in a fresh, cheap setting (tiny models, a few sentences).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from transformers import (
    BertConfig,
    BertForMaskedLM,
    BertForSequenceClassification,
    DistilBertConfig,
    DistilBertForMaskedLM,
)

from course_utils import attention, costs, data, distill, masking, students, task_heads, training

pytestmark = pytest.mark.usefixtures("one_thread")

VOCAB = 40


def tiny_bert(cls=BertForMaskedLM, **overrides):
    torch.manual_seed(0)
    fields = dict(vocab_size=VOCAB, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=32, max_position_embeddings=16, pad_token_id=0)
    return cls(BertConfig(**{**fields, **overrides}))


def tiny_student():
    torch.manual_seed(0)
    return DistilBertForMaskedLM(DistilBertConfig(vocab_size=VOCAB, dim=16, n_layers=1, n_heads=2, hidden_dim=32,
                                                  max_position_embeddings=16, pad_token_id=0))


class TinyTokenizer:
    """What the loops need of a tokenizer: special ids and a length."""

    pad_token_id, mask_token_id, all_special_ids = 0, 4, [0, 1, 2, 3, 4]

    def __len__(self):
        return VOCAB


TOKENIZER = TinyTokenizer()
rng = np.random.default_rng(0)
SENTENCES = training.Encoded(ids=[[2, *rng.integers(5, VOCAB, 6).tolist(), 3] for _ in range(8)], labels=[0, 1] * 4)
EMPTY = training.Encoded(ids=[], labels=[])
TOO_LONG = training.Encoded(ids=[[2, *[7] * 30, 3]], labels=[0])


def mlm(**kwargs):
    arguments = dict(steps=2, batch_size=4, progress=False)
    return training.train_mlm(tiny_bert(), kwargs.pop("encoded", SENTENCES), TOKENIZER, **{**arguments, **kwargs})


def classifier(**kwargs):
    arguments = dict(epochs=1, batch_size=4, progress=False)
    model = tiny_bert(BertForSequenceClassification, num_labels=2)
    return training.train_classifier(model, kwargs.pop("encoded", SENTENCES), 0, **{**arguments, **kwargs})


def distil(student=None, teacher=None, **kwargs):
    arguments = dict(steps=2, batch_size=4, progress=False)
    return distill.distil(student or tiny_student(), teacher or tiny_bert(), kwargs.pop("encoded", SENTENCES),
                          TOKENIZER, **{**arguments, **kwargs})


TRAINING = [
    ("train_mlm: empty data", lambda: mlm(encoded=EMPTY), ValueError, "at least one sentence"),
    ("train_mlm: batch_size=0", lambda: mlm(batch_size=0), ValueError, "batch_size to be a positive integer"),
    ("train_mlm: steps=0", lambda: mlm(steps=0), ValueError, "steps to be a positive integer"),
    ("train_mlm: lr=0", lambda: mlm(lr=0), ValueError, "lr=0 would train nothing"),
    ("train_mlm: lr=nan", lambda: mlm(lr=math.nan), ValueError, "lr to be a finite number > 0"),
    ("train_mlm: warmup=-1", lambda: mlm(warmup=-1), ValueError, "warmup to be a number of steps >= 0"),
    ("train_mlm: a list, not Encoded", lambda: mlm(encoded=[[2, 3]]), TypeError, "training.encode"),
    ("train_mlm: too long", lambda: mlm(encoded=TOO_LONG), ValueError, "max_length=16"),
    ("train_classifier: empty data", lambda: classifier(encoded=EMPTY), ValueError, "at least one sentence"),
    ("train_classifier: epochs=0", lambda: classifier(epochs=0), ValueError, "epochs to be a finite number > 0"),
    ("train_classifier: batch_size=0", lambda: classifier(batch_size=0), ValueError, "batch_size"),
    ("train_classifier: lr=0", lambda: classifier(lr=0.0), ValueError, "lr=0 would train nothing"),
    ("train_classifier: labels missing",
     lambda: classifier(encoded=training.Encoded(ids=SENTENCES.ids, labels=[0])), ValueError, "a label per sentence"),
    ("train_classifier: too long", lambda: classifier(encoded=TOO_LONG), ValueError,
     "at most 16 tokens (the model's max_position_embeddings), got one of 32"),
    ("predict: too long",
     lambda: training.predict(tiny_bert(BertForSequenceClassification), TOO_LONG, 0), ValueError, "max_length=16"),
    ("predict: empty", lambda: training.predict(tiny_bert(BertForSequenceClassification), EMPTY, 0),
     ValueError, "at least one sentence"),
    ("mlm_accuracy: empty", lambda: training.mlm_accuracy(tiny_bert(), EMPTY, TOKENIZER), ValueError,
     "at least one sentence"),
    ("pad: no rows", lambda: training.pad([], 0), ValueError, "at least one row"),
    ("step_batches: no examples", lambda: list(training.step_batches(0, 4, 0, 3)), ValueError, "at least one example"),
    ("encode: max_length=0", lambda: training.encode([], TOKENIZER, max_length=0), ValueError, "max_length"),
    ("distil: empty data", lambda: distil(encoded=EMPTY), ValueError, "at least one sentence"),
    ("distil: lr=0", lambda: distil(lr=0), ValueError, "lr=0"),
    ("distil: batch_size=0", lambda: distil(batch_size=0), ValueError, "batch_size"),
    ("distil: teacher and student swapped", lambda: distil(tiny_bert(), tiny_student()), ValueError,
     "are they swapped? Call distil(student, teacher"),
    ("distil: the same model twice", lambda: (lambda m: distil(m, m))(tiny_bert()), ValueError, "two different models"),
]


def check_table(call, error, words):
    with pytest.raises(error) as raised:
        call()
    assert words in str(raised.value), f"the message lacks {words!r}: {raised.value}"


@pytest.mark.parametrize("name, call, error, words", TRAINING, ids=[row[0] for row in TRAINING])
def test_training_loops_refuse_bad_data_and_arguments_up_front(name, call, error, words):
    check_table(call, error, words)


def _nan_weights(model):
    with torch.no_grad():
        next(model.parameters()).fill_(math.nan)
    return model


@pytest.mark.parametrize("train, words", [
    (lambda: training.train_mlm(_nan_weights(tiny_bert()), SENTENCES, TOKENIZER, steps=3, batch_size=4,
                                progress=False), "weights already hold nan"),
    (lambda: training.train_classifier(_nan_weights(tiny_bert(BertForSequenceClassification)), SENTENCES, 0,
                                       batch_size=4, progress=False), "weights already hold nan"),
    (lambda: distill.distil(_nan_weights(tiny_student()), tiny_bert(), SENTENCES, TOKENIZER, steps=3,
                            batch_size=4, progress=False), "weights already hold nan"),
    (lambda: training.train_mlm(tiny_bert(), SENTENCES, TOKENIZER, steps=3, batch_size=4, lr=1e30, warmup=0,
                                progress=False), "lr=1e+30 is probably too large"),
], ids=["train_mlm", "train_classifier", "distil", "huge lr"])
def test_training_stops_at_the_first_non_finite_loss_naming_the_step_and_cause(train, words):
    with pytest.raises(FloatingPointError, match=r"training stopped at step \d+: the loss is nan") as raised:
        train()
    assert words in str(raised.value)


def test_encode_cuts_to_the_tokenizers_maximum_by_default(tokenizer):
    sentence = data.Sentence(words=("cat",) * 300, tags=("NOUN",) * 300, label=0)
    encoded = training.encode([sentence], tokenizer)
    assert len(encoded.ids[0]) == tokenizer.model_max_length == 128
    assert len(training.encode([sentence], tokenizer, max_length=20).ids[0]) == 20


def test_a_distilbert_tokenizer_length_with_a_course_model_names_the_truncation_call():
    model = tiny_bert(BertForSequenceClassification, max_position_embeddings=128)
    too_long = training.Encoded(ids=[[2, *[7] * 200, 3]], labels=[0])
    with pytest.raises(ValueError, match=r"training.encode\(sentences, tokenizer, max_length=128\)"):
        training.train_classifier(model, too_long, 0, progress=False)


# --------------------------------------------------------------------------------------------
# Attention and masks: the numpy and torch paths give the same error for the same mistake

KINDS = {"numpy": np.asarray, "torch": torch.as_tensor}


def qkv(t_q=3, t_k=4, d=2, *, dtype=np.float64):
    g = np.random.default_rng(0)
    return (g.standard_normal((t_q, d)).astype(dtype), g.standard_normal((t_k, d)).astype(dtype),
            g.standard_normal((t_k, d)).astype(dtype))


def sdpa(q, k, v, mask=None, *, kind):
    as_kind = KINDS[kind]
    return attention.scaled_dot_product_attention(as_kind(q), as_kind(k), as_kind(v),
                                                  None if mask is None else as_kind(mask))


def masked(ids, *, kind, vocab_size=10, maskable=None):
    as_kind = KINDS[kind]
    ids = as_kind(np.asarray(ids))
    maskable = as_kind(np.ones(np.shape(ids), dtype=bool) if maskable is None else maskable)
    generator = np.random.default_rng(0) if kind == "numpy" else torch.Generator().manual_seed(0)
    return masking.mlm_mask(ids, maskable, mask_token_id=4, vocab_size=vocab_size, generator=generator)


SAME_ON_BOTH_PATHS = [
    ("sdpa: zero keys", lambda kind: sdpa(*qkv(t_k=0), kind=kind), ValueError, "at least one key (T_k >= 1)"),
    ("sdpa: keys of another width", lambda kind: sdpa(qkv()[0], np.ones((4, 3)), qkv()[2], kind=kind), ValueError,
     "expected keys of shape (..., T_k, d_k=2), got (4, 3)"),
    ("sdpa: values of another length", lambda kind: sdpa(*qkv()[:2], np.ones((5, 2)), kind=kind), ValueError,
     "expected values of shape (..., T_k=4, d_v), got (5, 2)"),
    ("sdpa: a 0/1 integer mask", lambda kind: sdpa(*qkv(), np.ones((3, 4), dtype=np.int64), kind=kind), TypeError,
     "expected a boolean mask (True = may attend)"),
    ("sdpa: a mask of the wrong shape", lambda kind: sdpa(*qkv(), np.ones((4, 3), dtype=bool), kind=kind),
     ValueError, "broadcastable to the scores (3, 4)"),
    ("sdpa: a vector of queries", lambda kind: sdpa(np.ones(2), *qkv()[1:], kind=kind), ValueError,
     "expected queries of shape (..., T_q, d_k)"),
    ("softmax: a scalar", lambda kind: attention.softmax(KINDS[kind](np.float64(1.0))), ValueError,
     "at least one axis"),
    ("split_heads: D not divisible by H", lambda kind: attention.split_heads(KINDS[kind](np.ones((1, 2, 6))), 4),
     ValueError, "D=6 (last axis of x, shape (1, 2, 6)) to be divisible by n_heads=4"),
    ("split_heads: n_heads=0", lambda kind: attention.split_heads(KINDS[kind](np.ones((1, 2, 6))), 0), ValueError,
     "n_heads to be a positive integer"),
    ("merge_heads: 2 axes", lambda kind: attention.merge_heads(KINDS[kind](np.ones((2, 6)))), ValueError,
     "expected x of shape (B, H, T, d_head)"),
    ("padding_mask: values other than 0/1", lambda kind: masking.padding_mask(KINDS[kind](np.array([[1, 2]]))),
     ValueError, "only 0 (padding) and 1 (real token)"),
    ("padding_mask: 1-D", lambda kind: masking.padding_mask(KINDS[kind](np.array([1, 0]))), ValueError,
     "expected attention_mask of shape (B, T)"),
    ("mlm_mask: an id >= vocab_size", lambda kind: masked([[2, 12, 3]], kind=kind), ValueError,
     "expected input_ids in [0, vocab_size=10), got 12 at input_ids[0, 1]"),
    ("mlm_mask: a negative id", lambda kind: masked([[2, -1, 3]], kind=kind), ValueError, "got -1 at input_ids[0, 1]"),
    ("mlm_mask: float ids", lambda kind: masked([[2.0, 5.0]], kind=kind), TypeError, "expected input_ids to hold integer token ids"),
    ("mlm_mask: an integer maskable", lambda kind: masked([[2, 5]], kind=kind, maskable=np.ones((1, 2), dtype=int)),
     TypeError, "expected maskable to be boolean"),
    ("mlm_mask: maskable of another shape",
     lambda kind: masked([[2, 5]], kind=kind, maskable=np.ones((1, 3), dtype=bool)), ValueError,
     "expected maskable of the shape of input_ids (1, 2), got (1, 3)"),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name, call, error, words", SAME_ON_BOTH_PATHS, ids=[row[0] for row in SAME_ON_BOTH_PATHS])
def test_numpy_and_torch_give_the_same_clear_error(name, call, error, words, kind):
    check_table(lambda: call(kind), error, words)


@pytest.mark.parametrize("kind", KINDS)
def test_mixing_float32_and_float64_works_on_both_paths_as_numpy_promotes(kind):
    q, k, v = qkv()
    output, weights = sdpa(q.astype(np.float32), k, v, kind=kind)
    reference, _ = sdpa(q.astype(np.float32).astype(np.float64), k, v, kind="numpy")
    assert str(output.dtype).endswith("float64") and np.allclose(np.asarray(output), reference)


def test_multi_head_attention_promotes_mixed_precisions_in_torch_as_in_numpy():
    params = attention.AttentionParams.random(4, seed=0)
    x = np.random.default_rng(1).standard_normal((1, 3, 4)).astype(np.float32)
    numpy_out, _ = attention.multi_head_attention(x, params, 2)
    torch_out, _ = attention.multi_head_attention(torch.as_tensor(x), params.to_torch(torch.float64), 2)
    assert torch_out.dtype == torch.float64 and np.allclose(torch_out.numpy(), numpy_out)


OTHER = [
    ("sdpa: numpy queries, torch keys", lambda: attention.scaled_dot_product_attention(
        qkv()[0], torch.as_tensor(qkv()[1]), qkv()[2]), TypeError, "do not mix numpy and torch"),
    ("causal_mask: 0", lambda: masking.causal_mask(0), ValueError, "seq_len to be a positive integer"),
    ("causal_mask: 2.5", lambda: masking.causal_mask(2.5), ValueError, "seq_len to be a positive integer"),
    ("mlm_mask: numpy ids, torch generator", lambda: masking.mlm_mask(
        np.array([[2, 5]]), np.ones((1, 2), bool), mask_token_id=4, vocab_size=10, generator=torch.Generator()),
     TypeError, "np.random.default_rng(seed)"),
    ("mlm_mask: mask_token_id >= vocab_size", lambda: masking.mlm_mask(
        np.array([[2, 5]]), np.ones((1, 2), bool), mask_token_id=10, vocab_size=10,
        generator=np.random.default_rng(0)), ValueError, "mask_token_id to be an integer in [0, vocab_size=10)"),
    ("tagging_data: no sentences", lambda: task_heads.tagging_data([], None), ValueError,
     "expected a non-empty list of course_utils.data.Sentence"),
    ("tagging_data: strings", lambda: task_heads.tagging_data(["the cat"], None), TypeError,
     "expected course_utils.data.Sentence objects (from corpus(...)), got str"),
    ("align_labels: a word id past the labels", lambda: task_heads.align_labels([None, 0, 3, None], [1, 2]), ValueError,
     "expected word ids between 0 and 1"),
    ("classification_head: numpy hidden states", lambda: task_heads.classification_head(
        np.ones((1, 2, 4)), *[torch.ones(s) for s in [(4, 4), (4,), (2, 4), (2,)]]), TypeError,
     "expected hidden_states to be a torch tensor"),
    ("classification_head: (B, D) hidden states", lambda: task_heads.classification_head(
        torch.ones(1, 4), *[torch.ones(s) for s in [(4, 4), (4,), (2, 4), (2,)]]), ValueError,
     "expected hidden_states of shape (B, T, D)"),
    ("head_weights: a masked LM", lambda: task_heads.head_weights(tiny_student()), TypeError,
     "expected a DistilBertForSequenceClassification"),
    ("tag_accuracy: empty", lambda: task_heads.tag_accuracy(tiny_student(), EMPTY, 0), ValueError, "at least one sentence"),
    ("distillation_loss: (B, T, V) logits", lambda: distill.distillation_loss(torch.ones(2, 3, 5), torch.ones(2, 3, 5)),
     ValueError, "use .reshape(-1, V)"),
    ("distillation_loss: T=0", lambda: distill.distillation_loss(torch.ones(2, 5), torch.ones(2, 5), 0), ValueError,
     "expected the temperature T to be a finite number > 0"),
    ("distillation_loss: numpy", lambda: distill.distillation_loss(np.ones((2, 5)), torch.ones(2, 5)), TypeError,
     "expected student_logits to be a torch tensor (N, V)"),
    ("layer_map: a student deeper than its teacher", lambda: students.layer_map(3, 6), ValueError,
     "no deeper than its teacher"),
    ("student_from_teacher: a DistilBERT teacher", lambda: students.student_from_teacher(tiny_student()), TypeError,
     "expected the teacher to be a transformers BertForMaskedLM"),
    ("parameter_count: not a module", lambda: costs.parameter_count("bert"), TypeError,
     "expected a torch.nn.Module"),
    ("latencies: 1-D ids", lambda: costs.latencies({"m": tiny_student()}, torch.ones(3, dtype=torch.long)),
     ValueError, "expected input_ids to be a tensor of shape (B, T)"),
]


@pytest.mark.parametrize("name, call, error, words", OTHER, ids=[row[0] for row in OTHER])
def test_attention_masking_heads_and_distillation_refuse_bad_inputs_clearly(name, call, error, words):
    check_table(call, error, words)
