"""Lesson 09's package code against code nobody here wrote: torch's pre-LN encoder layer, Hugging Face's
RoPE and repeat_kv, lesson 04's attention; the decoder's KV cache against recomputing the prefix."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_utils import decoder as dc
from course_utils import grouped_query, hf_reference, online_softmax, rope
from course_utils.attention import scaled_dot_product_attention
from course_utils.prenorm import PreLNTransformerBlock

# ------------------------------------------------------------------------------------ pre-LN


@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-5), (torch.float64, 1e-12)])
def test_the_pre_ln_block_equals_torchs_encoder_layer_with_norm_first(dtype, tol):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 4, 48, dropout=0.0, activation="gelu", batch_first=True,
                                             norm_first=True, dtype=dtype).eval()
    for p in layer.parameters():  # not torch's default zeros and ones: every weight must be copied
        torch.nn.init.normal_(p, std=0.3)
    block = PreLNTransformerBlock.from_torch(layer)
    x = torch.randn(3, 7, 16, dtype=dtype)
    torch.testing.assert_close(block(x)[0], layer(x), rtol=tol, atol=tol)  # with gradients: torch's plain path
    padded = torch.tensor([[1] * 7, [1] * 4 + [0] * 3, [1] * 6 + [0]])
    ours = block(x, padded.bool()[:, None, None, :])[0]
    theirs = layer(x, src_key_padding_mask=~padded.bool())  # torch's mask: True = padding
    real = padded.bool()
    torch.testing.assert_close(ours[real], theirs[real], rtol=tol, atol=tol)


def test_the_pre_ln_block_refuses_what_it_is_not():
    with pytest.raises(ValueError, match="norm_first=True"):
        PreLNTransformerBlock.from_torch(torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True))
    with pytest.raises(ValueError, match="activation='gelu'"):
        PreLNTransformerBlock.from_torch(torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=True))
    with pytest.raises(TypeError, match="TransformerEncoderLayer"):
        PreLNTransformerBlock.from_torch(torch.nn.Linear(2, 2))


# ------------------------------------------------------------------------------------ RoPE


def test_rope_cos_sin_equal_llamas_rotary_embedding():
    positions = torch.arange(64)
    theirs_cos, theirs_sin = hf_reference.rotary_cos_sin(positions, 16, base=500.0, dtype=torch.float64)
    ours_cos, ours_sin = rope.rope_cos_sin(positions, 16, base=500.0)
    torch.testing.assert_close(ours_cos, theirs_cos[0], rtol=0, atol=1e-5)  # Llama's angles are float32: 63 rad x 6e-8
    torch.testing.assert_close(ours_sin, theirs_sin[0], rtol=0, atol=1e-5)


def test_apply_rope_equals_hugging_faces_apply_rotary_pos_emb():
    torch.manual_seed(0)
    positions = torch.arange(3, 40)
    q, k = torch.randn(2, 4, 37, 8, dtype=torch.float64), torch.randn(2, 2, 37, 8, dtype=torch.float64)
    cos, sin = rope.rope_cos_sin(positions, 8)
    theirs_q, theirs_k = hf_reference.apply_rotary_pos_emb(q, k, cos[None], sin[None])
    torch.testing.assert_close(rope.apply_rope(q, positions), theirs_q, rtol=0, atol=1e-12)
    torch.testing.assert_close(rope.apply_rope(k, positions), theirs_k, rtol=0, atol=1e-12)


def test_rope_scores_depend_only_on_the_offset():
    g = np.random.default_rng(0)
    q, k = g.standard_normal((1, 8)), g.standard_normal((1, 8))
    scores = [(rope.apply_rope(q, [m]) @ rope.apply_rope(k, [m + 3]).T).item() for m in (0, 5, 17, 100)]
    np.testing.assert_allclose(scores, scores[0], rtol=1e-9)
    assert isinstance(rope.apply_rope(q, [0]), np.ndarray)  # numpy in, numpy out


@pytest.mark.parametrize("call, error, message", [
    (lambda: rope.apply_rope(torch.zeros(3, 5), torch.arange(3)), ValueError, "even head_dim"),
    (lambda: rope.apply_rope(torch.zeros(3, 4), torch.arange(2)), ValueError, "one position per token"),
    (lambda: rope.apply_rope(torch.zeros(3, 4), torch.tensor([0.0, 1, 2])), TypeError, "integer positions"),
    (lambda: rope.apply_rope(torch.zeros(4), torch.arange(1)), ValueError, r"\(\.\.\., T, d\)"),
    (lambda: rope.apply_rope(torch.zeros(2, 4), torch.tensor([0, -1])), ValueError, "positions >= 0"),
])
def test_apply_rope_refuses_bad_inputs(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ------------------------------------------------------------------------------------ grouped-query


@pytest.mark.parametrize("kv_heads, n_rep", [(1, 1), (2, 2), (1, 8), (4, 3)])
def test_repeat_kv_equals_hugging_faces(kv_heads, n_rep):
    x = torch.randn(2, kv_heads, 5, 4)
    torch.testing.assert_close(grouped_query.repeat_kv(x, n_rep), hf_reference.repeat_kv(x, n_rep), rtol=0, atol=0)


def test_kv_cache_bytes_from_transformers_configs():
    from transformers import GPT2Config, LlamaConfig, MistralConfig

    assert grouped_query.kv_heads_of(GPT2Config()) == (12, 12, 12, 64)
    assert grouped_query.kv_heads_of(MistralConfig()) == (32, 32, 8, 128)
    # Llama 2 7B: 32 layers x 32 heads x 128 x 2 (K and V) x 2 bytes = 0.5 MiB per token
    assert grouped_query.kv_cache_bytes_of(LlamaConfig(), 1) == 512 * 1024
    assert grouped_query.kv_cache_bytes_of(MistralConfig(), 4096) == 4096 * 512 * 1024 // 4
    assert grouped_query.kv_cache_bytes(n_layers=2, kv_heads=3, head_dim=4, seq_len=5, bytes_per_value=4, batch=2) \
        == 2 * 2 * 3 * 4 * 5 * 4 * 2
    with pytest.raises(ValueError, match="n_layers to be a positive integer"):
        grouped_query.kv_cache_bytes(n_layers=0, kv_heads=1, head_dim=1, seq_len=1)
    with pytest.raises(TypeError, match="num_hidden_layers"):
        grouped_query.kv_heads_of(object())
    with pytest.raises(ValueError, match=r"\(B, H_kv, T, d\)"):
        grouped_query.repeat_kv(torch.zeros(2, 3, 4), 2)


# ------------------------------------------------------------------------------------ online softmax


@pytest.mark.parametrize("block_size", [1, 3, 8, 100])
def test_blocked_attention_equals_lesson_04s_attention(block_size):
    g = np.random.default_rng(block_size)
    q, k, v = g.standard_normal((2, 5, 4)) * 10, g.standard_normal((2, 11, 4)) * 10, g.standard_normal((2, 11, 3))
    np.testing.assert_allclose(online_softmax.blocked_attention(q, k, v, block_size),
                               scaled_dot_product_attention(q, k, v)[0], rtol=1e-10, atol=1e-12)


def test_blocked_attention_refuses_bad_inputs():
    with pytest.raises(ValueError, match="block_size to be a positive integer"):
        online_softmax.blocked_attention(np.zeros((2, 4)), np.zeros((3, 4)), np.zeros((3, 4)), 0)
    with pytest.raises(ValueError, match="d_k=4"):
        online_softmax.blocked_attention(np.zeros((2, 4)), np.zeros((3, 5)), np.zeros((3, 4)), 2)


def test_peak_memory_grows_as_t_squared_for_plain_attention_only():
    def plain(q, k, v):
        return scaled_dot_product_attention(q, k, v)[0]

    peaks = {}
    for t in (512, 1024):
        q, k, v = (torch.randn(1, 1, t, 32) for _ in range(3))
        peaks[t] = [online_softmax.peak_memory_bytes(f, q, k, v) for f in
                    (plain, lambda *a: online_softmax.blocked_attention(*a, 128),
                     torch.nn.functional.scaled_dot_product_attention)]
    assert peaks[1024][0] >= 2 * 1024 * 1024 * 4  # the scores and the weights, T x T float32 each
    assert 3.5 < peaks[1024][0] / peaks[512][0] < 4.5  # T^2
    assert peaks[1024][1] / peaks[512][1] < 2.5 and peaks[1024][2] / peaks[512][2] < 2.5  # T
    with pytest.raises(TypeError, match="function to measure"):
        online_softmax.peak_memory_bytes(3)


# ------------------------------------------------------------------------------------ decoder


def _tiny(norm="pre", kv_heads=None, **kw):
    torch.manual_seed(0)
    return dc.Decoder(dc.DecoderConfig(vocab_size=23, dim=16, n_layers=2, n_heads=4, n_kv_heads=kv_heads,
                                       norm=norm, max_positions=40, initializer_range=0.3, **kw)).eval()


@pytest.mark.parametrize("norm, kv_heads", [("pre", None), ("pre", 2), ("pre", 1), ("post", None)])
def test_the_cache_gives_the_logits_and_tokens_of_recomputing_the_prefix(norm, kv_heads):
    model = _tiny(norm, kv_heads)
    ids = torch.randint(23, (1, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full = model(ids)
        cache = model.new_cache()
        pieces = [model(ids[:, :5], cache)] + [model(ids[:, i:i + 1], cache) for i in range(5, 12)]
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, rtol=1e-5, atol=1e-5)
    assert cache.length() == 12 and cache.nbytes() == 2 * 2 * model.config.kv_heads * 4 * 12 * 4
    for temperature in (0.0, 1.0):
        assert dc.generate(model, [1, 2, 3], 15, temperature=temperature, use_cache=True) == \
            dc.generate(model, [1, 2, 3], 15, temperature=temperature, use_cache=False)


def test_the_decoder_is_causal_and_generation_uses_the_given_step():
    model = _tiny()
    a, b = torch.tensor([[1, 2, 3, 4]]), torch.tensor([[1, 2, 3, 9]])
    with torch.no_grad():
        torch.testing.assert_close(model(a)[:, :3], model(b)[:, :3])
    calls = []

    def step(*args):
        calls.append(1)
        return dc.decode_step(*args)

    dc.generate(model, [1, 2], 4, step=step)
    assert len(calls) == 3 * model.config.n_layers  # every token after the first new one


def test_training_lowers_the_loss_and_gradient_norms_are_per_layer():
    model = _tiny().train()
    sequences = [[1, 2, 3, 4, 5, 6], [7, 8, 9, 10], [1, 2, 3]] * 4
    losses = dc.train_next_token(model, sequences, steps=30, batch_size=6, lr=1e-2, warmup=5, pad_id=0)
    assert losses[-1] < losses[0] / 2
    norms = dc.gradient_norms(model, sequences, pad_id=0)
    assert len(norms) == 2 and all(n > 0 for n in norms)
    ids, labels = dc.next_token_batch([[1, 2, 3], [4, 5]], pad_id=0)
    assert ids.tolist() == [[1, 2], [4, 5]] and labels.tolist() == [[2, 3], [5, -100]]


@pytest.mark.parametrize("kwargs, message", [
    (dict(n_kv_heads=3), "n_kv_heads to divide n_heads"),
    (dict(norm="middle"), "norm to be one of"),
    (dict(dim=12, n_heads=4), "even width"),
])
def test_decoder_config_refuses_bad_sizes(kwargs, message):
    with pytest.raises(ValueError, match=message):
        dc.DecoderConfig(vocab_size=10, **{"dim": 16, "n_heads": 4, **kwargs})


def test_decoder_and_generate_refuse_bad_inputs():
    model = _tiny()
    with pytest.raises(ValueError, match="max_positions=40"):
        model(torch.zeros(1, 41, dtype=torch.long))
    with pytest.raises(ValueError, match=r"token ids in \[0, 23\)"):
        model(torch.tensor([[23]]))
    with pytest.raises(ValueError, match="temperature >= 0"):
        dc.generate(model, [1], 2, temperature=-1.0)
    with pytest.raises(ValueError, match="one new token"):
        dc.decode_step(torch.zeros(1, 1, 2, 4), torch.zeros(1, 1, 2, 4), torch.zeros(1, 1, 2, 4),
                       (torch.zeros(1, 1, 0, 4), torch.zeros(1, 1, 0, 4)))
