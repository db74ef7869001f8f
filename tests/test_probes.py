"""course_utils.probes: where a model keeps the polarity of the held-out words."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_utils import data, models, probes, stats


def test_the_probe_words_are_the_adjectives_after_a_degree_adverb_held_out_or_seen():
    words, labels = probes.probe_words(held_out=True)
    seen, seen_labels = probes.probe_words(held_out=False)
    assert (len(words), sum(labels)) == (23, 9) and (len(seen), sum(seen_labels)) == (30, 11)
    assert set(words) <= data.held_out_words() and not set(seen) & data.held_out_words()
    assert set(words) | set(seen) == set(data.predicate_adjectives())
    assert "unkind" in words and "kind" in words and "kindly" not in words
    assert all(label == (data.polarity(w) > 0) for w, label in zip(words + seen, labels + seen_labels))


def test_the_adverb_preference_is_the_two_adverbs_softmax_at_the_mask(tokenizer):
    teacher = models.load_bundled("teacher")
    preference = probes.adverb_preference(teacher, tokenizer, ["kind", "cruel"])
    for word, share in zip(["kind", "cruel"], preference):
        inputs = tokenizer(f"the dog is [MASK] {word}.", return_tensors="pt")
        where = inputs["input_ids"][0].tolist().index(tokenizer.mask_token_id)
        with torch.no_grad():
            p = teacher(**inputs).logits[0, where].softmax(-1)
        perfectly, utterly = tokenizer.convert_tokens_to_ids(["perfectly", "utterly"])
        assert share == pytest.approx((p[perfectly] / (p[perfectly] + p[utterly])).item(), abs=1e-5)
    assert preference[0] > 0.5 > preference[1] and not teacher.training


def test_the_pre_trained_teacher_and_its_copy_rank_the_held_out_words_and_the_erased_copy_does_not(tokenizer):
    """Issue 50's measure: the teacher's table and guesses separate the held-out adjectives by
    polarity, its copy inherits it, and erasing their rows takes it away: on five seeds the fifteen
    AUCs average chance (0.5 within 0.1) and none reaches 0.9. One AUC of chance is a draw whose
    spread is about 0.12 here; one of round three's fifteen read 0.82 (seed 0's adverb direction),
    which an earlier bound of 0.8 on each failed: the bound was on a single draw."""
    teacher = models.load_bundled("teacher")
    for model in (teacher, models.student_start("copy", 0, teacher, tokenizer)):
        probed = probes.probe(model, tokenizer)
        assert all(probed[name]["auc"] > 0.9 for name in ("adverb_preference", "adverb_direction", "logistic"))
    erased = []
    for seed in range(5):
        probed_erased = probes.probe(models.student_start("erased copy", seed, teacher, tokenizer), tokenizer)
        erased += [probed_erased[name]["auc"] for name in ("adverb_preference", "adverb_direction", "logistic")]
    assert abs(np.mean(erased) - 0.5) < 0.1 and max(erased) < 0.9, erased
    assert set(probed["preference"]) == set(probes.probe_words()[0])


def test_the_adverb_direction_takes_its_sign_from_the_seen_words(tokenizer):
    table = probes.word_table(models.load_bundled("teacher"))
    words, labels = probes.probe_words()
    flipped = table.copy()
    perfectly, utterly = tokenizer.convert_tokens_to_ids(["perfectly", "utterly"])
    flipped[[perfectly, utterly]] = table[[utterly, perfectly]]  # the direction reversed
    assert np.allclose(probes.adverb_direction(flipped, tokenizer, words), probes.adverb_direction(table, tokenizer, words))


def test_the_logistic_probe_separates_what_is_separable_and_not_noise():
    rng = np.random.default_rng(0)
    train = rng.normal(size=(30, 8))
    labels = (train[:, 0] > 0).astype(int)
    test = rng.normal(size=(40, 8))
    scores = probes.logistic_probe(train, labels, test)
    assert stats.auc(scores, (test[:, 0] > 0).astype(int)) > 0.9
    noise = probes.logistic_probe(train, rng.integers(0, 2, 30), test)
    assert stats.auc(noise, (test[:, 0] > 0).astype(int)) < 0.8
    assert np.array_equal(scores, probes.logistic_probe(train, labels, test))  # deterministic
    with pytest.raises(ValueError, match="expected train rows"):
        probes.logistic_probe(train, labels, test[:, :4])


def test_probes_name_words_the_tokenizer_cannot_hold(tokenizer):
    teacher = models.load_bundled("teacher")
    with pytest.raises(ValueError, match=r"one token of the tokenizer, got \['zzzq'\]"):
        probes.adverb_preference(teacher, tokenizer, ["kind", "zzzq"])
    with pytest.raises(ValueError, match="non-empty list of words"):
        probes.adverb_preference(teacher, tokenizer, [])
    with pytest.raises(ValueError, match=r"word table of shape \(V, D\)"):
        probes.adverb_direction(np.zeros(5), tokenizer, ["kind"])


def test_the_student_starts(tokenizer):
    teacher = models.load_bundled("teacher")
    copy = models.student_start("copy", 0, teacher, tokenizer)
    erased = models.student_start("erased copy", 0, teacher, tokenizer)
    random = models.student_start("random", 0, teacher, tokenizer)
    held = tokenizer.convert_tokens_to_ids(sorted(data.held_out_words()))
    kept = [i for i in range(len(tokenizer)) if i not in set(held)]
    table = {name: m.distilbert.embeddings.word_embeddings.weight for name, m in
             (("copy", copy), ("erased", erased), ("random", random))}
    assert torch.equal(table["copy"][kept], table["erased"][kept]) and not torch.equal(table["copy"], table["erased"])
    assert not torch.equal(table["copy"][kept], table["random"][kept])
    assert copy.config.n_layers == erased.config.n_layers == random.config.n_layers == models.STUDENT_LAYERS
    assert torch.equal(erased.distilbert.embeddings.word_embeddings.weight,
                       models.student_start("erased copy", 0, teacher, tokenizer).distilbert.embeddings.word_embeddings.weight)
    with pytest.raises(ValueError, match="expected start to be one of"):
        models.student_start("half", 0, teacher, tokenizer)

