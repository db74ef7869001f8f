"""Tests of course_utils.masking: exact masks, MLM proportions, Hugging Face parity, validation.

The MLM proportions are checked on 204,800 positions against binomial bounds of 5 standard
deviations (a correct implementation fails one of them with probability below 1e-5; the seeds
are fixed, so the test is deterministic anyway). The torch path is checked draw for draw against
Hugging Face's ``DataCollatorForLanguageModeling`` (same generator state, same result), and both
paths against its proportions.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_utils import attention, masking
from course_utils.masking import IGNORE_INDEX, mlm_mask

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
MASK_ID, VOCAB = 4, 1000
SHAPE = (3200, 64)  # 204,800 positions


# --------------------------------------------------------------------------------------------
# causal and padding masks


@pytest.mark.parametrize("seq_len", [1, 2, 5, 9])
def test_causal_mask_is_the_lower_triangle(seq_len):
    mask = masking.causal_mask(seq_len)
    assert isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.shape == (seq_len, seq_len)
    for query in range(seq_len):
        for key in range(seq_len):
            assert mask[query, key] == (key <= query)
    t_mask = masking.causal_mask(seq_len, like=torch.zeros(1))
    assert t_mask.dtype == torch.bool
    np.testing.assert_array_equal(t_mask.numpy(), mask)


def test_causal_mask_matches_torch_is_causal():
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 6, 4, dtype=torch.float64) for _ in range(3))
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    output, weights = attention.scaled_dot_product_attention(q, k, v, masking.causal_mask(6, like=q))
    torch.testing.assert_close(output, expected, rtol=0, atol=1e-12)
    assert torch.all(weights.triu(diagonal=1) == 0)


def test_padding_mask_shape_and_values():
    attention_mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 1, 1]])
    mask = masking.padding_mask(attention_mask)
    assert mask.dtype == np.bool_ and mask.shape == (3, 1, 1, 4)
    np.testing.assert_array_equal(mask[:, 0, 0], attention_mask == 1)
    for kind in (torch.tensor, lambda a: torch.tensor(a).bool(), lambda a: torch.tensor(a, dtype=torch.float32)):
        t_mask = masking.padding_mask(kind(attention_mask))
        assert t_mask.dtype == torch.bool and t_mask.shape == (3, 1, 1, 4)
        np.testing.assert_array_equal(t_mask.numpy(), mask)
    np.testing.assert_array_equal(masking.padding_mask(attention_mask.astype(bool)), mask)
    np.testing.assert_array_equal(masking.padding_mask(attention_mask.tolist()), mask)


def test_padding_mask_keeps_real_tokens_unchanged_by_padding():
    """The point of the mask: adding padding does not change what the real tokens compute."""
    params = attention.AttentionParams.random(8, seed=0)
    x = np.random.default_rng(0).standard_normal((1, 3, 8))
    padded = np.concatenate([x, np.random.default_rng(1).standard_normal((1, 2, 8))], axis=1)
    mask = masking.padding_mask(np.array([[1, 1, 1, 0, 0]]))
    alone, _ = attention.multi_head_attention(x, params, 2)
    with_padding, weights = attention.multi_head_attention(padded, params, 2, mask)
    np.testing.assert_allclose(with_padding[:, :3], alone, rtol=0, atol=1e-12)
    assert np.all(weights[..., 3:] == 0)
    unmasked, _ = attention.multi_head_attention(padded, params, 2)
    assert np.abs(unmasked[:, :3] - alone).max() > 1e-3


def test_masks_combine_with_and():
    combined = masking.causal_mask(4) & masking.padding_mask(np.array([[1, 1, 1, 0]]))
    assert combined.shape == (1, 1, 4, 4)
    np.testing.assert_array_equal(combined[0, 0, 3], [True, True, True, False])
    np.testing.assert_array_equal(combined[0, 0, 0], [True, False, False, False])


# --------------------------------------------------------------------------------------------
# MLM masking


def _batch(shape=SHAPE, seed=0):
    """Ids of real words in [5, VOCAB), [CLS] first, [SEP] and padding at the end of some rows."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(len(SPECIALS), VOCAB, size=shape)
    lengths = rng.integers(shape[1] // 2, shape[1] + 1, size=shape[0])
    positions = np.arange(shape[1])
    ids[:, 0] = 2
    ids[positions >= lengths[:, None]] = 0
    ids[np.arange(shape[0]), lengths - 1] = 3
    maskable = ids >= len(SPECIALS)
    return ids, maskable


def _numpy_mlm(ids, maskable, seed=0, **kwargs):
    return mlm_mask(
        ids, maskable, mask_token_id=MASK_ID, vocab_size=VOCAB, generator=np.random.default_rng(seed), **kwargs
    )


def _torch_mlm(ids, maskable, seed=0, **kwargs):
    return mlm_mask(
        torch.from_numpy(ids),
        torch.from_numpy(maskable),
        mask_token_id=MASK_ID,
        vocab_size=VOCAB,
        generator=torch.Generator().manual_seed(seed),
        **kwargs,
    )


def _within(count, n, p, sigmas=5.0):
    """Whether ``count`` successes in ``n`` trials are within ``sigmas`` binomial sd of ``n * p``."""
    return abs(count - n * p) <= sigmas * np.sqrt(n * p * (1 - p))


def _proportions(ids, maskable, masked, labels):
    masked, labels = np.asarray(masked), np.asarray(labels)
    selected = labels != IGNORE_INDEX
    n_selected = int(selected.sum())
    return dict(
        n_maskable=int(maskable.sum()),
        n_selected=n_selected,
        n_mask=int((masked[selected] == MASK_ID).sum()),
        n_changed=int(((masked != ids) & (masked != MASK_ID))[selected].sum()),
        n_kept=int((masked[selected] == ids[selected]).sum()),
    )


@pytest.mark.parametrize("path", ["numpy", "torch"])
def test_mlm_mask_proportions_are_15_80_10_10(path):
    ids, maskable = _batch()
    masked, labels = (_numpy_mlm if path == "numpy" else _torch_mlm)(ids, maskable)
    counts = _proportions(ids, maskable, masked, labels)
    assert _within(counts["n_selected"], counts["n_maskable"], 0.15)
    n = counts["n_selected"]
    # A random token is [MASK] or the original with probability 1/VOCAB each.
    assert _within(counts["n_mask"], n, 0.8 + 0.1 / VOCAB)
    assert _within(counts["n_changed"], n, 0.1 * (1 - 2 / VOCAB))
    assert _within(counts["n_kept"], n, 0.1 + 0.1 / VOCAB)


@pytest.mark.parametrize("path", ["numpy", "torch"])
def test_mlm_labels_and_untouched_positions(path):
    ids, maskable = _batch((64, 32))
    masked, labels = (_numpy_mlm if path == "numpy" else _torch_mlm)(ids, maskable, seed=3)
    masked, labels = np.asarray(masked), np.asarray(labels)
    assert labels.dtype == np.int64 and masked.dtype == ids.dtype and masked.shape == ids.shape
    selected = labels != IGNORE_INDEX
    np.testing.assert_array_equal(labels[selected], ids[selected])  # the original id to predict
    assert not selected[~maskable].any()  # never a special token or padding
    np.testing.assert_array_equal(masked[~selected], ids[~selected])  # the rest is untouched
    assert masked.min() >= 0 and masked.max() < VOCAB


@pytest.mark.parametrize("path", ["numpy", "torch"])
def test_mlm_mask_never_selects_non_maskable_positions_even_with_select_prob_1(path):
    ids, maskable = _batch((32, 16))
    masked, labels = (_numpy_mlm if path == "numpy" else _torch_mlm)(
        ids, maskable, select_prob=1.0, mask_prob=1.0, random_prob=0.0
    )
    masked, labels = np.asarray(masked), np.asarray(labels)
    np.testing.assert_array_equal(labels != IGNORE_INDEX, maskable)
    np.testing.assert_array_equal(masked, np.where(maskable, MASK_ID, ids))


@pytest.mark.parametrize("path", ["numpy", "torch"])
def test_mlm_mask_is_deterministic_under_a_seed_and_dynamic_across_calls(path):
    ids, maskable = _batch((16, 32))
    run = _numpy_mlm if path == "numpy" else _torch_mlm
    first, second = run(ids, maskable, seed=5), run(ids, maskable, seed=5)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    other = run(ids, maskable, seed=6)
    assert not np.array_equal(np.asarray(first[1]), np.asarray(other[1]))
    # The same generator, called again: a new mask (dynamic masking, a new one each epoch).
    generator = np.random.default_rng(0) if path == "numpy" else torch.Generator().manual_seed(0)
    kind = np.asarray if path == "numpy" else torch.from_numpy
    epoch_1 = mlm_mask(kind(ids), kind(maskable), mask_token_id=MASK_ID, vocab_size=VOCAB, generator=generator)[1]
    epoch_2 = mlm_mask(kind(ids), kind(maskable), mask_token_id=MASK_ID, vocab_size=VOCAB, generator=generator)[1]
    assert not np.array_equal(np.asarray(epoch_1), np.asarray(epoch_2))


def test_mlm_mask_does_not_modify_its_input():
    ids, maskable = _batch((8, 16))
    before = ids.copy()
    _numpy_mlm(ids, maskable)
    np.testing.assert_array_equal(ids, before)
    t_ids = torch.from_numpy(ids)
    _torch_mlm(ids, maskable)
    np.testing.assert_array_equal(t_ids.numpy(), before)


def _hf_collator():
    from tokenizers import Tokenizer, models
    from transformers import DataCollatorForLanguageModeling, PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(SPECIALS + [f"w{i}" for i in range(VOCAB - len(SPECIALS))])}
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="[UNK]")),
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    assert len(tokenizer) == VOCAB and tokenizer.mask_token_id == MASK_ID
    return DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)


def test_torch_mlm_mask_is_draw_for_draw_hugging_face_data_collator():
    collator = _hf_collator()
    ids, maskable = _batch((256, 64), seed=1)
    t_ids = torch.from_numpy(ids)
    collator.generator = torch.Generator().manual_seed(11)
    expected_inputs, expected_labels = collator.torch_mask_tokens(
        t_ids.clone(), special_tokens_mask=torch.from_numpy(~maskable)
    )
    masked, labels = _torch_mlm(ids, maskable, seed=11)
    torch.testing.assert_close(masked, expected_inputs, rtol=0, atol=0)
    torch.testing.assert_close(labels, expected_labels, rtol=0, atol=0)


def test_numpy_mlm_mask_agrees_in_distribution_with_hugging_face():
    """Two samples of 204,800 positions: each proportion differs by less than 5 sd of the difference."""
    collator = _hf_collator()
    ids, maskable = _batch()
    collator.generator = torch.Generator().manual_seed(2)
    hf = _proportions(
        ids,
        maskable,
        *collator.torch_mask_tokens(torch.from_numpy(ids).clone(), special_tokens_mask=torch.from_numpy(~maskable)),
    )  # it writes in place
    ours = _proportions(ids, maskable, *_numpy_mlm(ids, maskable, seed=2))
    p_hf, p_ours = hf["n_selected"] / hf["n_maskable"], ours["n_selected"] / ours["n_maskable"]
    assert abs(p_hf - p_ours) <= 5 * np.sqrt(2 * 0.15 * 0.85 / hf["n_maskable"])
    for key, p in [("n_mask", 0.8), ("n_changed", 0.1), ("n_kept", 0.1)]:
        sd = np.sqrt(p * (1 - p) * (1 / hf["n_selected"] + 1 / ours["n_selected"]))
        assert abs(hf[key] / hf["n_selected"] - ours[key] / ours["n_selected"]) <= 5 * sd, key


def test_mlm_mask_on_a_batch_of_256_by_64_is_fast():
    import time

    ids, maskable = _batch((256, 64))
    t_ids, t_maskable = torch.from_numpy(ids), torch.from_numpy(maskable)
    generator = torch.Generator().manual_seed(0)
    mlm_mask(t_ids, t_maskable, mask_token_id=MASK_ID, vocab_size=VOCAB, generator=generator)
    start = time.perf_counter()
    for _ in range(20):
        mlm_mask(t_ids, t_maskable, mask_token_id=MASK_ID, vocab_size=VOCAB, generator=generator)
    assert (time.perf_counter() - start) / 20 < 0.02  # about 1 ms here; a Python loop would take ~100 ms


# --------------------------------------------------------------------------------------------
# Validation


# --------------------------------------------------------------------------------------------
# safe_masked_softmax: weights under a mask, zeros where no key is allowed


def test_safe_masked_softmax_matches_torch_attention_on_rows_with_a_key():
    generator = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=generator, dtype=torch.float64) for _ in range(3))
    left = torch.arange(5) >= torch.tensor([0, 2])[:, None]  # (B, T): sentence 2 padded on the left
    mask = torch.ones(5, 5, dtype=torch.bool).tril() & left[:, None, None, :]  # (B, 1, T, T)
    weights = masking.safe_masked_softmax(q @ k.mT / 2, mask)  # (B, H, T, T)
    reference = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    has_key = mask.any(dim=-1).expand(2, 3, 5)  # (B, H, T)
    torch.testing.assert_close((weights @ v)[has_key], reference[has_key])
    assert (weights[~has_key] == 0).all() and not has_key.all()
    torch.testing.assert_close(weights.sum(-1)[has_key], torch.ones(int(has_key.sum()), dtype=torch.float64))


def test_safe_masked_softmax_never_gives_nan_and_blocks_dominant_scores():
    scores = np.array([[0.0, 1.0, 1000.0], [5.0, 2.0, 3.0], [-2e4, -2e4 + 1, 0.0]])
    mask = np.array([[True, True, False], [False, False, False], [True, True, False]])
    weights = masking.safe_masked_softmax(scores, mask)
    expected = np.array([[1 / (1 + np.e), np.e / (1 + np.e), 0.0], [0.0, 0.0, 0.0],
                         [1 / (1 + np.e), np.e / (1 + np.e), 0.0]])
    np.testing.assert_allclose(weights, expected, rtol=1e-12)
    assert weights.dtype == np.float64
    assert masking.safe_masked_softmax(scores.astype(np.float32), mask).dtype == np.float32
    np.testing.assert_array_equal(scores[0], [0.0, 1.0, 1000.0])  # the input is left as it was


def test_safe_masked_softmax_equals_masking_before_the_softmax_where_a_key_is_allowed():
    rng = np.random.default_rng(1)
    scores = rng.standard_normal((4, 6, 6))
    mask = rng.random((4, 6, 6)) < 0.5
    mask[..., 0] = True
    np.testing.assert_allclose(
        masking.safe_masked_softmax(scores, mask), attention.softmax(np.where(mask, scores, -np.inf)), rtol=1e-12
    )


def test_safe_masked_softmax_rejects_bad_input():
    with pytest.raises(TypeError, match="expected a boolean mask"):
        masking.safe_masked_softmax(np.zeros((2, 2)), np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"broadcastable to the scores \(2, 3\), got \(2,\)"):
        masking.safe_masked_softmax(np.zeros((2, 3)), np.ones(2, dtype=bool))
    with pytest.raises(TypeError, match="expected scores as a float array"):
        masking.safe_masked_softmax(np.array(["a", "b"]), np.ones(2, dtype=bool))


def test_causal_and_padding_masks_reject_bad_input():
    with pytest.raises(ValueError, match="expected seq_len to be a positive integer, got 0"):
        masking.causal_mask(0)
    with pytest.raises(ValueError, match="expected seq_len to be a positive integer, got 3.0"):
        masking.causal_mask(3.0)
    with pytest.raises(ValueError, match=r"expected attention_mask of shape \(B, T\), got \(4,\)"):
        masking.padding_mask(np.ones(4))
    with pytest.raises(ValueError, match=r"expected attention_mask of shape \(B, T\), got \(1, 1, 4\)"):
        masking.padding_mask(torch.ones(1, 1, 4))
    with pytest.raises(ValueError, match="only 0 \\(padding\\) and 1 \\(real token\\)"):
        masking.padding_mask(np.array([[1, 2, 0]]))
    with pytest.raises(ValueError, match="only 0"):
        masking.padding_mask(torch.tensor([[0.0, -3.4e38]]))  # an additive mask is not an attention_mask
    with pytest.raises(TypeError, match="expected attention_mask to be an array of 0/1, got dtype <U1"):
        masking.padding_mask(np.array([["a", "b"]]))


def test_mlm_mask_rejects_bad_input():
    ids, maskable = _batch((4, 8))
    kwargs = dict(mask_token_id=MASK_ID, vocab_size=VOCAB, generator=np.random.default_rng(0))
    with pytest.raises(TypeError, match="expected maskable to be boolean"):
        mlm_mask(ids, maskable.astype(int), **kwargs)
    with pytest.raises(ValueError, match=r"expected maskable of the shape of input_ids \(4, 8\), got \(4, 7\)"):
        mlm_mask(ids, maskable[:, :7], **kwargs)
    with pytest.raises(TypeError, match="expected input_ids to hold integer token ids, got dtype float64"):
        mlm_mask(ids.astype(float), maskable, **kwargs)
    with pytest.raises(TypeError, match="expected generator to be a np.random.Generator"):
        mlm_mask(ids, maskable, mask_token_id=MASK_ID, vocab_size=VOCAB, generator=torch.Generator())
    with pytest.raises(TypeError, match="expected generator to be a torch.Generator"):
        mlm_mask(torch.from_numpy(ids), torch.from_numpy(maskable), **kwargs)
    with pytest.raises(TypeError, match="expected maskable to be a torch tensor"):
        mlm_mask(torch.from_numpy(ids), maskable, mask_token_id=MASK_ID, vocab_size=VOCAB, generator=torch.Generator())
    with pytest.raises(ValueError, match="expected select_prob to be a probability in \\[0, 1\\], got 1.5"):
        mlm_mask(ids, maskable, select_prob=1.5, **kwargs)
    with pytest.raises(ValueError, match="mask_prob \\+ random_prob <= 1"):
        mlm_mask(ids, maskable, mask_prob=0.8, random_prob=0.3, **kwargs)
    with pytest.raises(
        ValueError, match=r"expected mask_token_id to be an integer in \[0, vocab_size=1000\), got 1000"
    ):
        mlm_mask(ids, maskable, mask_token_id=VOCAB, vocab_size=VOCAB, generator=np.random.default_rng(0))
    with pytest.raises(ValueError, match="expected vocab_size to be a positive integer"):
        mlm_mask(ids, maskable, mask_token_id=0, vocab_size=0, generator=np.random.default_rng(0))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16])
def test_mlm_mask_labels_are_minus_100_for_any_integer_ids(dtype):
    # numpy's where(selected, uint8_ids, -100) wraps -100 to 156: labels are computed in int64
    ids = np.arange(40, dtype=dtype).reshape(2, 20)  # ids below VOCAB
    masked, labels = mlm_mask(ids, np.ones(ids.shape, bool), mask_token_id=MASK_ID, vocab_size=VOCAB,
                              generator=np.random.default_rng(0))
    assert masked.dtype == dtype and labels.dtype == np.int64
    assert set(np.unique(labels[labels < 0])) == {IGNORE_INDEX}
    np.testing.assert_array_equal(labels[labels >= 0], ids[labels >= 0])
