"""course_utils.training: batching, schedules, the MLM and classification loops, the baselines."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification

from course_utils import data, masking, tokenization, training


@pytest.fixture(scope="module")
def small(tokenizer):
    return training.encode(data.corpus("train")[:256], tokenizer)


def tiny_config(tokenizer, **overrides):
    fields = dict(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=32, max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id)
    return BertConfig(**{**fields, **overrides})


def test_encode_keeps_labels_and_frames_every_sentence(small, tokenizer):
    assert len(small.ids) == len(small.labels) == 256
    assert all(ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id for ids in small.ids)
    assert small.labels == [s.label for s in data.corpus("train")[:256]]


def test_pad_matches_the_tokenizer(tokenizer):
    texts = ["I love NLP", "The cat is not happy, but it is calm."]
    rows = [tokenizer(t)["input_ids"] for t in texts]
    input_ids, attention_mask = training.pad(rows, tokenizer.pad_token_id)
    reference = tokenizer(texts, padding=True, return_tensors="pt")
    assert torch.equal(input_ids, reference["input_ids"]) and torch.equal(attention_mask, reference["attention_mask"])


def test_batch_order_is_a_seeded_permutation_per_epoch():
    first = np.concatenate(training.batch_order(10, 4, seed=0, epoch=0))
    assert sorted(first) == list(range(10))
    assert [len(b) for b in training.batch_order(10, 4, 0, 0)] == [4, 4, 2]
    assert np.array_equal(first, np.concatenate(training.batch_order(10, 4, 0, 0)))
    assert not np.array_equal(first, np.concatenate(training.batch_order(10, 4, 0, 1)))


def test_batches_of_similar_lengths_keep_every_example_once_and_pad_less(small):
    lengths = np.array([len(row) for row in small.ids])
    for epoch in (0, 1):
        grouped = training.batch_order(len(lengths), 8, seed=3, epoch=epoch, lengths=lengths)
        assert sorted(np.concatenate(grouped)) == list(range(len(lengths)))  # each example once
        assert [len(b) for b in grouped] == [8] * 32
        assert all(np.array_equal(a, b) for a, b in zip(grouped, training.batch_order(len(lengths), 8, 3, epoch, lengths)))
    random = training.batch_order(len(lengths), 8, 3, 0)
    padded = lambda batches: sum(lengths[b].max() * len(b) for b in batches)  # noqa: E731
    assert padded(grouped) < 0.8 * padded(random)
    # a group holds GROUP_BATCHES batches: within it, sorted by length, so a batch spans a narrow range of lengths
    assert np.mean([np.ptp(lengths[b]) for b in grouped]) < 0.5 * np.mean([np.ptp(lengths[b]) for b in random])
    # the batches' order is shuffled: not longest (or shortest) first
    maxima = [lengths[b].max() for b in grouped]
    assert maxima != sorted(maxima) and maxima != sorted(maxima, reverse=True)
    # the unsorted order is untouched by the new argument
    assert all(np.array_equal(a, b) for a, b in zip(random, training.batch_order(len(lengths), 8, 3, 0, None)))


def test_larger_groups_sort_more_and_pad_less(small):
    lengths = np.array([len(row) for row in small.ids])
    padded = {g: sum(lengths[b].max() * len(b) for b in training.batch_order(256, 8, 3, 0, lengths, group_batches=g))
              for g in (1, 4, 32)}
    random = sum(lengths[b].max() * len(b) for b in training.batch_order(256, 8, 3, 0))
    assert random == padded[1] > padded[4] > padded[32]  # a group of one batch sorts nothing
    default = training.batch_order(256, 8, 3, 0, lengths)
    explicit = training.batch_order(256, 8, 3, 0, lengths, group_batches=training.GROUP_BATCHES)
    assert len(default) == 32 and all(np.array_equal(a, b) for a, b in zip(default, explicit))


@pytest.mark.parametrize("bad", [0, -2, 1.5, "4", True])
def test_batch_order_refuses_a_group_that_is_not_a_positive_count(bad):
    with pytest.raises((TypeError, ValueError), match="group_batches"):
        training.batch_order(10, 2, 0, 0, lengths=[3] * 10, group_batches=bad)


def test_batch_order_refuses_lengths_that_are_not_one_per_example():
    with pytest.raises(ValueError, match=r"one length per example \(10\)"):
        training.batch_order(10, 4, 0, 0, lengths=[3] * 9)


def test_predict_returns_the_sentences_order_whatever_their_lengths(small, tokenizer):
    torch.manual_seed(0)
    model = BertForSequenceClassification(tiny_config(tokenizer, num_labels=2)).eval()
    predicted = training.predict(model, small, tokenizer.pad_token_id, batch_size=32)
    with torch.inference_mode():
        one_by_one = [int(model(input_ids=torch.tensor([row])).logits.argmax(-1)) for row in small.ids]
    assert predicted.tolist() == one_by_one and predicted.shape == (len(small.ids),)


def test_special_tokens_are_never_maskable(tokenizer):
    input_ids, _ = training.pad([tokenizer("I love NLP")["input_ids"], [2, 3]], tokenizer.pad_token_id)
    special = training.special_tokens_mask(input_ids, tokenizer)
    assert special.tolist() == [[True, False, False, False, True], [True, True, True, True, True]]


def test_learning_rate_schedule_warms_up_then_decays_to_zero():
    factors = [training.linear_warmup_decay(s, total=10, warmup=2) for s in range(11)]
    assert factors[:2] == [0.5, 1.0]
    assert factors[2] == 1.0 and factors[-1] == 0.0
    assert all(a >= b for a, b in zip(factors[2:], factors[3:]))


def test_train_mlm_is_deterministic_records_losses_and_learns(small, tokenizer):
    def run():
        torch.manual_seed(0)
        model = BertForMaskedLM(tiny_config(tokenizer))
        return model, training.train_mlm(model, small, tokenizer, steps=30, batch_size=32, lr=3e-3, warmup=5,
                                         progress=False)

    model, history = run()
    _, again = run()
    assert history.losses == again.losses
    assert len(history.losses["mlm"]) == 30
    assert np.mean(history.losses["mlm"][-5:]) < np.mean(history.losses["mlm"][:5]) - 0.5
    assert not model.training


def test_masked_lm_batches_grouped_by_length_are_batch_orders_batches_and_pad_less(small, tokenizer):
    lengths = np.array([len(row) for row in small.ids])
    grouped = list(training.mlm_batches(small, tokenizer, steps=8, batch_size=32, seed=2, group_by_length=True))
    plain = list(training.mlm_batches(small, tokenizer, steps=8, batch_size=32, seed=2))
    for (input_ids, attention_mask, masked, labels), indices in zip(grouped, training.batch_order(256, 32, 2, 0, lengths)):
        assert input_ids.shape == (32, lengths[indices].max())  # the batch's sentences, padded to their longest
        assert [row[row != tokenizer.pad_token_id].tolist() for row in input_ids] == [small.ids[i] for i in indices]
        assert masked.shape == labels.shape == attention_mask.shape == input_ids.shape
    assert sum(b[0].numel() for b in grouped) < 0.8 * sum(b[0].numel() for b in plain)
    again = training.mlm_batches(small, tokenizer, steps=8, batch_size=32, seed=2, group_by_length=True)
    assert all(torch.equal(x, y) for a, b in zip(grouped, again) for x, y in zip(a, b))  # same masks too


def test_mlm_accuracy_is_a_share_of_the_masked_tokens(small, tokenizer):
    torch.manual_seed(0)
    model = BertForMaskedLM(tiny_config(tokenizer))
    value = training.mlm_accuracy(model, small, tokenizer)
    assert 0.0 <= value < 0.05  # an untrained model guesses among 1,500 tokens
    assert value == training.mlm_accuracy(model, small, tokenizer), "seeded mask: the same number twice"


def test_train_classifier_and_accuracy(small, tokenizer):
    torch.manual_seed(0)
    model = BertForSequenceClassification(tiny_config(tokenizer, num_labels=2))
    history = training.train_classifier(model, small, tokenizer.pad_token_id, epochs=2, batch_size=32, lr=1e-3,
                                        warmup=2, progress=False)
    assert len(history.losses["loss"]) == 16
    predictions = training.predict(model, small, tokenizer.pad_token_id)
    assert predictions.shape == (256,) and set(predictions) <= {0, 1}
    assert training.accuracy(model, small, tokenizer.pad_token_id) == np.mean(predictions == np.array(small.labels))


def test_token_counts_is_a_bag_of_words():
    encoded = training.Encoded(ids=[[2, 5, 5, 3], [2, 7, 3]], labels=[0, 1])
    counts = training.token_counts(encoded, 8).to_dense()
    assert counts[0].tolist() == [0, 0, 1, 1, 0, 2, 0, 0]
    assert counts[1].tolist() == [0, 0, 1, 1, 0, 0, 0, 1]


def test_bag_of_words_cannot_read_order():
    """The same bag of words with opposite labels: a count model must get one of each pair wrong."""
    tokenizer = tokenization.load_bundled_tokenizer()
    pairs = [("the cat is happy, but it is not calm.", 0), ("the cat is not happy, but it is calm.", 1),
             ("the dog is kind, but it is never brave.", 0), ("the dog is never kind, but it is brave.", 1)]
    sentences = [data.Sentence(tuple(t.split()), ("X",) * len(t.split()), label) for t, label in pairs]
    encoded = training.encode(sentences, tokenizer)
    counts = training.token_counts(encoded, len(tokenizer)).to_dense()
    assert torch.equal(counts[0], counts[1]) and torch.equal(counts[2], counts[3])
    assert training.bag_of_words_accuracy(encoded, encoded, len(tokenizer), steps=50) == 0.5


def test_mlm_labels_use_the_ignore_index(small, tokenizer):
    input_ids, _ = training.pad(small.ids[:8], tokenizer.pad_token_id)
    _, labels = masking.mlm_mask(input_ids, ~training.special_tokens_mask(input_ids, tokenizer),
                                 mask_token_id=tokenizer.mask_token_id, vocab_size=len(tokenizer),
                                 generator=torch.Generator().manual_seed(0))
    assert set(labels[labels != masking.IGNORE_INDEX].tolist()) <= set(input_ids.flatten().tolist())


def test_step_batches_run_on_across_epochs_and_stop_at_steps():
    batches = list(training.step_batches(10, 4, seed=0, steps=5))  # 3 batches per epoch
    assert [len(b) for b in batches] == [4, 4, 2, 4, 4]
    assert sorted(np.concatenate(batches[:3])) == list(range(10))
    assert np.array_equal(batches[3], training.batch_order(10, 4, 0, 1)[0])
    assert list(training.step_batches(10, 4, seed=0, steps=0)) == []


def test_refactored_train_mlm_gives_the_losses_of_the_loop_that_trained_the_bundled_teacher(small, tokenizer):
    """The loop the teacher was trained with (before step_batches/mlm_batches/update), written out."""
    def old_loop(model, steps=6, batch_size=32, seed=0):
        torch.manual_seed(seed)
        generator = torch.Generator().manual_seed(seed)
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: training.linear_warmup_decay(s, steps, 2))
        losses, step, epoch = [], 0, 0
        model.train()
        while step < steps:
            for indices in training.batch_order(len(small.ids), batch_size, seed, epoch):
                if step == steps:
                    break
                input_ids, attention_mask = training.pad([small.ids[i] for i in indices], tokenizer.pad_token_id)
                maskable = ~training.special_tokens_mask(input_ids, tokenizer)
                masked, labels = masking.mlm_mask(input_ids, maskable, mask_token_id=tokenizer.mask_token_id,
                                                  vocab_size=len(tokenizer), generator=generator)
                loss = model(input_ids=masked, attention_mask=attention_mask, labels=labels).loss
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                schedule.step()
                losses.append(loss.item())
                step += 1
            epoch += 1
        return losses

    torch.manual_seed(0)
    model = BertForMaskedLM(tiny_config(tokenizer))
    start = {k: v.clone() for k, v in model.state_dict().items()}
    expected = old_loop(model)
    model.load_state_dict(start)
    history = training.train_mlm(model, small, tokenizer, steps=6, batch_size=32, lr=3e-3, warmup=2, progress=False)
    assert history.losses["mlm"] == expected


def test_bag_of_words_accuracy_is_the_share_its_predictions_get_right():
    tokenizer = tokenization.load_bundled_tokenizer()
    train = training.encode(data.sentiment_task("train")[:400], tokenizer)
    test = training.encode(data.sentiment_task("test")[:200], tokenizer)
    predicted = training.bag_of_words_predictions(train, test, len(tokenizer), steps=30)
    assert predicted.shape == (200,) and set(predicted.tolist()) <= {0, 1}
    assert training.bag_of_words_accuracy(train, test, len(tokenizer), steps=30) == np.mean(
        predicted == np.array(test.labels))
