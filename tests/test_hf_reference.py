"""course_utils.hf_reference: Hugging Face's mask and attention functions on every supported release.

The course's masks and attention must equal what these return; the version shims (``q_length`` vs
``cache_position``, a missing ``bidirectional_mask_function``) are tested here on the installed
transformers, and the whole lesson 05 runs on transformers 4.57 in `make compat`.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import masking_utils

from course_utils import attention, hf_reference, masking

ATTENTION_MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [0, 0, 1, 1, 1]])  # right, none, left padding


def test_the_causal_mask_equals_the_courses():
    ours = masking.causal_mask(5) & masking.padding_mask(ATTENTION_MASK)  # (B, 1, T, T)
    theirs = hf_reference.boolean_mask("causal", ATTENTION_MASK)
    assert theirs.dtype == torch.bool and tuple(theirs.shape) == (3, 1, 5, 5)
    assert np.array_equal(theirs.numpy(), ours)


def test_the_bidirectional_mask_is_the_padding_mask():
    ours = np.broadcast_to(masking.padding_mask(ATTENTION_MASK), (3, 1, 5, 5))
    assert np.array_equal(hf_reference.boolean_mask("bidirectional", torch.tensor(ATTENTION_MASK)).numpy(), ours)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_the_additive_mask_is_zero_or_the_dtypes_minimum(dtype):
    additive = hf_reference.additive_mask("causal", ATTENTION_MASK, dtype=dtype)
    allowed = hf_reference.boolean_mask("causal", ATTENTION_MASK)
    assert additive.dtype == dtype
    expected = torch.where(allowed, torch.tensor(0, dtype=dtype), torch.tensor(torch.finfo(dtype).min, dtype=dtype))
    assert torch.equal(additive, expected)


def test_eager_attention_equals_the_courses_attention():
    generator = torch.Generator().manual_seed(0)
    queries, keys, values = (torch.randn(3, 2, 5, 4, generator=generator) for _ in range(3))  # (B, H, T, d_k)
    allowed = hf_reference.boolean_mask("bidirectional", ATTENTION_MASK)  # no fully blocked row
    output, weights = hf_reference.eager_attention(queries, keys, values, hf_reference.additive_mask(
        "bidirectional", ATTENTION_MASK))
    ours, our_weights = attention.scaled_dot_product_attention(queries, keys, values, mask=allowed)
    assert tuple(output.shape) == (3, 5, 2, 4)  # Hugging Face returns (B, T, H, d_k)
    torch.testing.assert_close(output.transpose(1, 2), ours, rtol=0, atol=1e-6)
    torch.testing.assert_close(weights, our_weights, rtol=0, atol=1e-6)
    reference = torch.nn.functional.scaled_dot_product_attention(queries, keys, values, attn_mask=allowed)
    torch.testing.assert_close(output.transpose(1, 2), reference, rtol=0, atol=1e-6)


def test_sdpa_mask_gets_cache_position_from_releases_that_want_it():
    def old_style(batch_size, cache_position, kv_length, **kwargs):  # transformers 4.57 to 5.3
        return cache_position

    def new_style(batch_size, q_length, kv_length, **kwargs):  # transformers 5.4 on
        return q_length

    assert torch.equal(hf_reference._length_arguments(old_style, 4)["cache_position"], torch.arange(4))
    assert hf_reference._length_arguments(new_style, 4) == {"q_length": 4}


def test_the_bidirectional_rule_exists_without_transformers_5(monkeypatch):
    monkeypatch.delattr(masking_utils, "bidirectional_mask_function", raising=False)
    rule = hf_reference.mask_function("bidirectional")
    assert rule is hf_reference._bidirectional
    ours = np.broadcast_to(masking.padding_mask(ATTENTION_MASK), (3, 1, 5, 5))
    assert np.array_equal(hf_reference.boolean_mask("bidirectional", ATTENTION_MASK).numpy(), ours)


def test_eager_attention_comes_from_a_hugging_face_module():
    assert hf_reference.eager_attention_source().startswith("transformers.models.")


@pytest.mark.parametrize("kind", ["padding", "Causal", None])
def test_an_unknown_kind_of_mask_is_refused(kind):
    with pytest.raises(ValueError, match=r"expected kind to be one of \('causal', 'bidirectional'\)"):
        hf_reference.boolean_mask(kind, ATTENTION_MASK)


@pytest.mark.parametrize("bad", [np.ones(5), np.ones((2, 1, 5))])
def test_an_attention_mask_of_the_wrong_shape_is_refused(bad):
    with pytest.raises(ValueError, match=r"expected attention_mask of shape \(B, T\)"):
        hf_reference.additive_mask("causal", bad)
