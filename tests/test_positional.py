"""Tests of course_utils.positional: parity with Hugging Face DistilBERT, the laws of the sinusoids,
learned positions, validation.

The parity tests build a ``transformers.DistilBertModel`` with ``sinusoidal_pos_embds=True`` and
read its position table: Hugging Face fills it in ``DistilBertPreTrainedModel._init_weights`` with
``create_sinusoidal_embeddings`` (float32), code nobody here wrote. A model built with
``sinusoidal_pos_embds=False`` holds random numbers instead, so the comparison can fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from transformers import DistilBertConfig, DistilBertModel
from transformers.models.distilbert.modeling_distilbert import create_sinusoidal_embeddings

from course_utils import positional

HF_TOL = dict(rtol=0, atol=1e-6)  # Hugging Face stores the table in float32
LAW_TOL = dict(rtol=0, atol=1e-9)


def _distilbert(dim: int, n_heads: int, max_positions: int, *, sinusoidal: bool = True) -> DistilBertModel:
    torch.manual_seed(0)
    config = DistilBertConfig(
        sinusoidal_pos_embds=sinusoidal,
        max_position_embeddings=max_positions,
        dim=dim,
        n_heads=n_heads,
        hidden_dim=4 * dim,
        n_layers=1,
        vocab_size=50,
    )
    return DistilBertModel(config).eval()


def _loop_encoding(seq_len: int, d_model: int) -> np.ndarray:
    """The paper's formula, one number at a time, with the math module."""
    table = np.zeros((seq_len, d_model))
    for pos in range(seq_len):
        for i in range(0, d_model, 2):
            angle = pos / 10000 ** (i / d_model)  # i = 2 * (pair index)
            table[pos, i] = math.sin(angle)
            if i + 1 < d_model:
                table[pos, i + 1] = math.cos(angle)
    return table


# --------------------------------------------------------------------------------------------
# Parity with Hugging Face


@pytest.mark.parametrize("dim, n_heads, max_positions", [(16, 2, 64), (8, 1, 100), (32, 4, 512), (15, 3, 40)])
def test_sinusoidal_encoding_matches_the_table_of_a_hugging_face_distilbert(dim, n_heads, max_positions):
    table = _distilbert(dim, n_heads, max_positions).embeddings.position_embeddings.weight.detach().numpy()
    assert table.shape == (max_positions, dim)
    np.testing.assert_allclose(positional.sinusoidal_encoding(max_positions, dim), table, **HF_TOL)


def test_a_learned_distilbert_table_is_not_sinusoidal_so_the_parity_test_can_fail():
    table = _distilbert(16, 2, 64, sinusoidal=False).embeddings.position_embeddings.weight.detach().numpy()
    assert np.abs(positional.sinusoidal_encoding(64, 16) - table).max() > 0.5


def test_sinusoidal_encoding_matches_hugging_face_at_distilbert_size():
    expected = create_sinusoidal_embeddings(512, 768, torch.empty(512, 768)).numpy()
    np.testing.assert_allclose(positional.sinusoidal_encoding(512, 768), expected, **HF_TOL)


def test_add_positions_then_layer_norm_is_what_distilbert_embeddings_compute():
    model = _distilbert(16, 2, 64)
    input_ids = torch.tensor([[3, 7, 7, 1, 42, 9]])  # (B, T) = (1, 6)
    with torch.no_grad():
        expected = model.embeddings(input_ids)[0].numpy()  # word + position, then LayerNorm
    words = model.embeddings.word_embeddings.weight.detach().numpy()[input_ids[0].numpy()]  # (T, D)
    summed = positional.add_positions(words, positional.sinusoidal_encoding(64, 16))
    normed = (summed - summed.mean(-1, keepdims=True)) / np.sqrt(summed.var(-1, keepdims=True) + 1e-12)
    np.testing.assert_allclose(normed, expected, rtol=0, atol=1e-5)


# --------------------------------------------------------------------------------------------
# The sinusoidal table


def test_sinusoidal_encoding_is_float64_of_shape_seq_len_by_d_model():
    encoding = positional.sinusoidal_encoding(7, 6)
    assert encoding.shape == (7, 6) and encoding.dtype == np.float64


@pytest.mark.parametrize("seq_len, d_model", [(1, 1), (5, 4), (30, 7), (64, 32)])
def test_sinusoidal_encoding_is_the_papers_formula(seq_len, d_model):
    np.testing.assert_allclose(
        positional.sinusoidal_encoding(seq_len, d_model), _loop_encoding(seq_len, d_model), **LAW_TOL
    )


def test_sin_and_cos_are_interleaved_not_concatenated():
    encoding = positional.sinusoidal_encoding(3, 8)
    np.testing.assert_array_equal(encoding[0], [0, 1, 0, 1, 0, 1, 0, 1])  # position 0: sin 0, cos 0
    assert encoding[1, 0] == pytest.approx(math.sin(1)) and encoding[1, 1] == pytest.approx(math.cos(1))
    assert encoding[2, 2] == pytest.approx(math.sin(2 / 10000 ** (2 / 8)))
    assert encoding[2, 3] == pytest.approx(math.cos(2 / 10000 ** (2 / 8)))


def test_an_odd_d_model_ends_with_an_unpaired_sine_as_in_hugging_face():
    encoding = positional.sinusoidal_encoding(10, 5)
    np.testing.assert_allclose(encoding[:, 4], np.sin(np.arange(10) / 10000 ** (4 / 5)), **LAW_TOL)
    np.testing.assert_allclose(encoding[:, :4], _loop_encoding(10, 5)[:, :4], **LAW_TOL)


def test_frequencies_fall_geometrically_and_are_shared_by_each_pair():
    freqs = positional.frequencies(8)
    np.testing.assert_allclose(freqs, [1, 1, 0.1, 0.1, 0.01, 0.01, 0.001, 0.001], rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(seq_len=st.integers(1, 300), d_model=st.integers(1, 64))
def test_every_value_is_between_minus_one_and_one(seq_len, d_model):
    encoding = positional.sinusoidal_encoding(seq_len, d_model)
    assert np.all(np.abs(encoding) <= 1.0)


@settings(max_examples=60, deadline=None)
@given(seq_len=st.integers(1, 300), half=st.integers(1, 32))
def test_each_sin_cos_pair_is_a_point_on_the_unit_circle(seq_len, half):
    encoding = positional.sinusoidal_encoding(seq_len, 2 * half)
    np.testing.assert_allclose(encoding[:, 0::2] ** 2 + encoding[:, 1::2] ** 2, 1.0, **LAW_TOL)
    np.testing.assert_allclose(np.sum(encoding**2, axis=1), half, **LAW_TOL)  # every row has norm sqrt(D/2)


@settings(max_examples=80, deadline=None)
@given(pos=st.integers(0, 500), k=st.integers(-200, 200), half=st.integers(1, 32))
def test_moving_k_positions_on_is_the_rotation_shift_matrix_k(pos, k, half):
    assume(pos + k >= 0)
    d_model = 2 * half
    encoding = positional.sinusoidal_encoding(max(pos, pos + k) + 1, d_model)
    np.testing.assert_allclose(encoding[pos] @ positional.shift_matrix(k, d_model), encoding[pos + k], **LAW_TOL)


@settings(max_examples=60, deadline=None)
@given(p=st.integers(0, 300), q=st.integers(0, 300), k=st.integers(0, 100), half=st.integers(1, 32))
def test_the_dot_product_of_two_positions_depends_only_on_their_distance(p, q, k, half):
    d_model = 2 * half
    encoding = positional.sinusoidal_encoding(max(p, q) + k + 1, d_model)
    dot_p, dot_q = encoding[p] @ encoding[p + k], encoding[q] @ encoding[q + k]
    assert dot_p == pytest.approx(dot_q, abs=1e-9)
    # sin(a)sin(b) + cos(a)cos(b) = cos(a - b): the dot product is the sum of cos(w_i k) over pairs
    assert dot_p == pytest.approx(np.sum(np.cos(positional.frequencies(d_model)[0::2] * k)), abs=1e-9)


# --------------------------------------------------------------------------------------------
# The shift matrix


def test_shift_matrix_is_block_diagonal_rotations():
    rotation = positional.shift_matrix(3, 4)
    w0, w1 = 1.0, 1 / 10000 ** (2 / 4)
    expected = np.array(
        [
            [math.cos(3 * w0), -math.sin(3 * w0), 0, 0],
            [math.sin(3 * w0), math.cos(3 * w0), 0, 0],
            [0, 0, math.cos(3 * w1), -math.sin(3 * w1)],
            [0, 0, math.sin(3 * w1), math.cos(3 * w1)],
        ]
    )
    np.testing.assert_allclose(rotation, expected, **LAW_TOL)


@settings(max_examples=40, deadline=None)
@given(a=st.integers(-50, 50), b=st.integers(-50, 50), half=st.integers(1, 16))
def test_shift_matrices_compose_and_are_orthogonal(a, b, half):
    d_model = 2 * half
    r_a, r_b = positional.shift_matrix(a, d_model), positional.shift_matrix(b, d_model)
    np.testing.assert_allclose(r_a @ r_b, positional.shift_matrix(a + b, d_model), **LAW_TOL)
    np.testing.assert_allclose(r_a @ r_a.T, np.eye(d_model), **LAW_TOL)
    np.testing.assert_allclose(positional.shift_matrix(-a, d_model), r_a.T, **LAW_TOL)


def test_shift_by_zero_is_the_identity():
    np.testing.assert_array_equal(positional.shift_matrix(0, 6), np.eye(6))


def test_shift_matrix_refuses_an_odd_d_model_and_a_fractional_shift():
    with pytest.raises(ValueError, match="expected an even d_model, got 5: .*sine without its cosine"):
        positional.shift_matrix(1, 5)
    with pytest.raises(ValueError, match="expected the shift k to be an integer number of positions, got 1.5"):
        positional.shift_matrix(1.5, 4)


# --------------------------------------------------------------------------------------------
# Adding positions


def test_add_positions_uses_the_first_t_rows_of_the_table():
    rng = np.random.default_rng(0)
    embeddings, table = rng.standard_normal((5, 4)), rng.standard_normal((12, 4))
    np.testing.assert_array_equal(positional.add_positions(embeddings, table), embeddings + table[:5])


def test_add_positions_gives_every_sequence_of_a_batch_the_same_positions():
    rng = np.random.default_rng(1)
    batch, table = rng.standard_normal((3, 5, 4)), positional.sinusoidal_encoding(8, 4)
    result = positional.add_positions(batch, table)
    assert result.shape == (3, 5, 4)
    for b in range(3):
        np.testing.assert_array_equal(result[b], positional.add_positions(batch[b], table))


def test_add_positions_accepts_torch_tensors_and_float32():
    embeddings = torch.ones(2, 4, dtype=torch.float32)
    result = positional.add_positions(embeddings, positional.sinusoidal_encoding(2, 4).astype(np.float32))
    assert result.dtype == np.float64
    np.testing.assert_allclose(result, 1 + positional.sinusoidal_encoding(2, 4), atol=1e-7)


def test_add_positions_past_the_table_says_to_truncate():
    with pytest.raises(
        ValueError,
        match=r"a sequence of 600 tokens is longer than max_position_embeddings=512: truncate it to at most 512 tokens",
    ):
        positional.add_positions(np.zeros((600, 8)), positional.sinusoidal_encoding(512, 8))


@pytest.mark.parametrize(
    "embeddings, table, message",
    [
        (np.zeros(4), np.zeros((5, 4)), r"expected embeddings of shape \(T, D\) or \(B, T, D\), got shape \(4,\)"),
        (np.zeros((2, 3, 4, 5)), np.zeros((5, 5)), r"expected embeddings of shape .*, got shape \(2, 3, 4, 5\)"),
        (np.zeros((3, 4)), np.zeros(4), r"expected a position table of shape \(L, D\), got shape \(4,\)"),
        (np.zeros((3, 4)), np.zeros((10, 6)), r"expected a position table of shape \(L, D=4\) .*got \(10, 6\)"),
    ],
)
def test_add_positions_rejects_mismatched_shapes(embeddings, table, message):
    with pytest.raises(ValueError, match=message):
        positional.add_positions(embeddings, table)


def test_add_positions_rejects_non_numbers():
    with pytest.raises(TypeError, match="expected embeddings and encoding to be numeric arrays"):
        positional.add_positions([["a", "b"]], np.zeros((3, 2)))


# --------------------------------------------------------------------------------------------
# Learned positions


def test_learned_table_counts_as_many_parameters_as_distilberts():
    config = DistilBertConfig()  # distilbert-base-uncased: 512 positions of 768 numbers
    with torch.device("meta"):  # no memory, no initialisation: only the shapes
        model = DistilBertModel(config)
    expected = model.embeddings.position_embeddings.weight.numel()
    assert positional.learned_position_param_count(config.max_position_embeddings, config.dim) == expected == 393_216
    module = positional.learned_position_embeddings(512, 768)
    assert sum(p.numel() for p in module.parameters() if p.requires_grad) == expected


def test_learned_position_embeddings_are_seeded_and_drawn_like_hugging_face():
    first, again = (
        positional.learned_position_embeddings(512, 64, seed=3),
        positional.learned_position_embeddings(512, 64, seed=3),
    )
    torch.testing.assert_close(first.weight, again.weight, rtol=0, atol=0)
    assert not torch.equal(first.weight, positional.learned_position_embeddings(512, 64, seed=4).weight)
    assert first.weight.mean().abs() < 0.002 and abs(first.weight.std().item() - 0.02) < 0.001
    assert isinstance(first, positional.LearnedPositionEmbeddings) and isinstance(first, torch.nn.Module)


def test_learned_position_embeddings_add_the_first_t_rows_to_a_batch():
    module = positional.learned_position_embeddings(10, 4, seed=0)
    batch = torch.randn(2, 6, 4)
    out = module(batch)
    assert out.shape == (2, 6, 4)
    torch.testing.assert_close(out, batch + module.weight[:6])
    torch.testing.assert_close(module.positions(6), module.weight[:6])
    out.sum().backward()
    assert module.weight.grad is not None and torch.all(module.weight.grad[6:] == 0)  # only used rows learn


def test_learned_position_embeddings_past_the_maximum_say_to_truncate():
    module = positional.learned_position_embeddings(512, 8)
    with pytest.raises(ValueError, match="a sequence of 600 tokens is longer than max_position_embeddings=512"):
        module(torch.zeros(600, 8))
    with pytest.raises(ValueError, match="max_length=512"):
        module.positions(513)
    assert module.positions(512).shape == (512, 8)  # the last row, position 511, exists


def test_learned_position_embeddings_reject_bad_arguments():
    module = positional.learned_position_embeddings(16, 8)
    with pytest.raises(ValueError, match=r"expected embeddings of shape \(\.\.\., T, D=8\), got \(3, 4\)"):
        module(torch.zeros(3, 4))
    with pytest.raises(ValueError, match="expected a tensor of token embeddings of shape"):
        module(np.zeros((3, 8)))
    with pytest.raises(ValueError, match="expected seed to be a non-negative integer, got -1"):
        positional.learned_position_embeddings(16, 8, seed=-1)
    with pytest.raises(ValueError, match="expected initializer_range to be a finite number > 0"):
        positional.learned_position_embeddings(16, 8, initializer_range=0)


def test_unknown_attributes_raise_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        positional.nope  # noqa: B018


# --------------------------------------------------------------------------------------------
# Validation


@pytest.mark.parametrize("bad", [0, -3, 2.0, True, "8", None])
@pytest.mark.parametrize("name", ["seq_len", "d_model"])
def test_sinusoidal_encoding_rejects_what_is_not_a_positive_integer(name, bad):
    args = {"seq_len": 4, "d_model": 4, name: bad}
    with pytest.raises(ValueError, match=f"expected {name} to be a positive integer, got {bad!r}"):
        positional.sinusoidal_encoding(**args)


@pytest.mark.parametrize("bad", [0, -1, 1.5])
def test_param_count_and_frequencies_validate_their_arguments(bad):
    with pytest.raises(ValueError, match="expected max_position_embeddings to be a positive integer"):
        positional.learned_position_param_count(bad, 8)
    with pytest.raises(ValueError, match="expected d_model to be a positive integer"):
        positional.frequencies(bad)


def test_numpy_integers_are_accepted():
    assert positional.sinusoidal_encoding(np.int64(3), np.int32(4)).shape == (3, 4)


def test_dots_by_distance_of_the_sinusoidal_table_is_a_sum_of_cosines_whatever_the_start():
    table = positional.sinusoidal_encoding(200, 32)
    k = np.arange(61)
    expected = np.cos(np.outer(k, positional.frequencies(32)[0::2])).sum(axis=1)  # sum_i cos(omega_i k)
    for start in (0, 17, 139):
        np.testing.assert_allclose(positional.dots_by_distance(table, start, 60), expected, atol=1e-9)
    np.testing.assert_allclose(positional.dots_by_distance(table, 5, 0), [16.0], rtol=1e-12)  # D / 2


def test_dots_by_distance_of_a_learned_table_depends_on_the_start():
    table = np.random.default_rng(0).standard_normal((30, 8))
    from_0, from_10 = positional.dots_by_distance(table, 0, 5), positional.dots_by_distance(table, 10, 5)
    assert from_0.shape == (6,) and not np.allclose(from_0, from_10)
    np.testing.assert_allclose(from_10, [table[10] @ table[10 + k] for k in range(6)])


@pytest.mark.parametrize("args, message", [
    ((np.zeros((10, 4)), 5, 5), r"expected start \+ max_distance < L = 10 .* got start=5 and max_distance=5"),
    ((np.zeros(10), 0, 3), r"expected a position table of shape \(L, D\), got shape \(10,\)"),
    ((np.zeros((10, 4)), -1, 3), r"expected start to be a non-negative integer, got -1"),
    ((np.zeros((10, 4)), 0, 2.5), r"expected max_distance to be a non-negative integer, got 2.5"),
])
def test_dots_by_distance_rejects_bad_inputs_saying_what_it_expected(args, message):
    with pytest.raises(ValueError, match=message):
        positional.dots_by_distance(*args)
