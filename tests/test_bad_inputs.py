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

from course_utils import attention, data, distill, heads, masking, training

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
