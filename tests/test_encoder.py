"""Tests of course_utils.encoder: the from-scratch DistilBERT against Hugging Face's.

The reference is ``transformers.DistilBertModel`` with eager attention (the implementation that
returns attention weights), built from the same config with its own initialisation and then
re-randomised with larger weights, so that attention maps are peaked and a wrong detail shows.
The course's encoder reads its weights through ``DistilBertEncoder.from_hf``. Compared, in
float32, at real-token positions (padding positions hold values nobody should read):

- every hidden state (embeddings' output and each block's) and every attention map, for several
  configs (widths, heads, depths, learned and sinusoidal positions) and padding patterns (none,
  right, left, a row with a single real token), to 1e-5;
- the gradient of every parameter after one backward pass;
- train mode too: the dropout masks are drawn in the same order as Hugging Face draws them, so
  with the same seed the two models agree even with dropout on;
- the reverse bridge: ``to_hf`` gives a ``DistilBertModel`` (strict state dict) computing the same.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import DistilBertConfig, DistilBertForMaskedLM, DistilBertModel

from course_utils.authoring import bench_encoder
from course_utils.encoder import DistilBertEncoder, EncoderConfig, EncoderOutput
from course_utils.hf_weights import load_hf_state_dict

TOL = dict(rtol=0, atol=1e-5)

# Tiny configs: different widths, heads (incl. one head), depths, positions, FFN widths.
CONFIGS = {
    "d8-h2-l2-learned": dict(dim=8, n_heads=2, n_layers=2, hidden_dim=32),
    "d12-h3-l3-sinusoidal": dict(dim=12, n_heads=3, n_layers=3, hidden_dim=24, sinusoidal_pos_embds=True),
    "d16-h4-l1-learned-pad3": dict(dim=16, n_heads=4, n_layers=1, hidden_dim=64, pad_token_id=3),
    "d8-h1-l2-sinusoidal": dict(dim=8, n_heads=1, n_layers=2, hidden_dim=16, sinusoidal_pos_embds=True),
}
VOCAB, MAX_POS, BATCH, SEQ = 40, 12, 4, 9

# attention_mask rows (B=4, T=9) for each padding pattern; None = no mask passed at all.
PADDINGS = {
    "no mask": None,
    "all real": [[1] * SEQ] * BATCH,
    "right": [[1] * 9, [1] * 6 + [0] * 3, [1] * 2 + [0] * 7, [1] * 8 + [0]],
    "left": [[1] * 9, [0] * 3 + [1] * 6, [0] * 7 + [1] * 2, [0] + [1] * 8],
    "one real token": [[1] + [0] * 8, [1] * 9, [0] * 8 + [1], [1] * 5 + [0] * 4],
}


def _hf_config(**overrides) -> DistilBertConfig:
    sizes = dict(vocab_size=VOCAB, max_position_embeddings=MAX_POS, dropout=0.1, attention_dropout=0.1)
    return DistilBertConfig(**{**sizes, **overrides}, attn_implementation="eager")


def _hf_model(seed: int = 0, **overrides) -> DistilBertModel:
    """Hugging Face's model, weights re-drawn large enough to make attention peaked; eval mode."""
    torch.manual_seed(seed)
    model = DistilBertModel(_hf_config(**overrides))
    assert model.config._attn_implementation == "eager"
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name == "embeddings.position_embeddings.weight" and model.config.sinusoidal_pos_embds:
                continue  # keep Hugging Face's sinusoidal table
            if name.endswith("LayerNorm.weight") or name.endswith("layer_norm.weight"):
                parameter.copy_(1 + 0.2 * torch.randn_like(parameter))
            else:
                parameter.copy_(0.5 * torch.randn_like(parameter))
    return model.eval()


def _inputs(padding: str, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor | None]:
    generator = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=generator)
    rows = PADDINGS[padding]
    if rows is None:
        return input_ids, None
    attention_mask = torch.tensor(rows)
    return input_ids.masked_fill(attention_mask == 0, 0), attention_mask  # pad id 0 where padded


def _real(attention_mask: torch.Tensor | None) -> torch.Tensor:
    """Boolean (B, T): the real-token positions."""
    return torch.ones(BATCH, SEQ, dtype=torch.bool) if attention_mask is None else attention_mask.bool()


def _assert_close(actual: torch.Tensor, expected: torch.Tensor, what: str) -> float:
    difference = (actual - expected).abs().max().item()
    assert difference <= TOL["atol"], f"{what}: max difference {difference:.3g}"
    return difference


# --------------------------------------------------------------------------------------------
# Config


def test_default_config_is_distilbert_base_and_round_trips():
    hf = DistilBertConfig()
    assert EncoderConfig.from_hf(hf) == EncoderConfig()
    config = EncoderConfig(dim=12, n_heads=3, n_layers=2, hidden_dim=20, sinusoidal_pos_embds=True, pad_token_id=5)
    back = config.to_hf()
    assert isinstance(back, DistilBertConfig)
    assert EncoderConfig.from_hf(back) == config
    assert config.head_dim == 4


@pytest.mark.parametrize(
    "fields, message",
    [
        (dict(dim=10, n_heads=3), "expected n_heads to divide dim, got dim=10 and n_heads=3"),
        (dict(n_layers=0), "expected n_layers to be a positive integer, got 0"),
        (dict(dropout=1.5), "expected dropout to be a probability in [0, 1), got 1.5"),
        (dict(activation="swish"), "expected activation to be one of"),
        (dict(vocab_size=10, pad_token_id=10), "expected pad_token_id to be None or an id in [0, 10), got 10"),
    ],
)
def test_config_rejects_bad_fields(fields, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        EncoderConfig(**fields)


def test_parameter_names_shapes_and_count_equal_hugging_faces():
    for overrides in CONFIGS.values():
        hf = DistilBertModel(_hf_config(**overrides))
        ours = DistilBertEncoder(EncoderConfig.from_hf(hf.config))
        hf_shapes = {name: tuple(tensor.shape) for name, tensor in hf.state_dict().items()}
        assert {name: tuple(tensor.shape) for name, tensor in ours.state_dict().items()} == hf_shapes
        assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())


def test_sinusoidal_table_equals_hugging_faces_and_is_frozen():
    config = EncoderConfig(vocab_size=VOCAB, max_position_embeddings=50, dim=16, n_heads=2, sinusoidal_pos_embds=True)
    ours = DistilBertEncoder(config).embeddings.position_embeddings.weight
    theirs = DistilBertModel(config.to_hf()).embeddings.position_embeddings.weight
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=0, atol=1e-6)
    assert not ours.requires_grad


def test_initialisation_is_hugging_faces():
    torch.manual_seed(0)
    encoder = DistilBertEncoder(EncoderConfig(vocab_size=500, dim=64, n_heads=4, hidden_dim=256, pad_token_id=7))
    words = encoder.embeddings.word_embeddings.weight.detach()
    assert torch.count_nonzero(words[7]) == 0  # the padding row
    assert abs(words.std().item() - 0.02) < 0.001
    layer = encoder.transformer.layer[0]
    assert torch.count_nonzero(layer.ffn.lin1.bias) == 0
    assert torch.equal(layer.sa_layer_norm.weight.detach(), torch.ones(64))


# --------------------------------------------------------------------------------------------
# Parity with Hugging Face, eval mode


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("name", CONFIGS)
def test_every_hidden_state_and_attention_map_equals_hugging_faces(name, padding):
    hf = _hf_model(seed=len(name), **CONFIGS[name])
    encoder = DistilBertEncoder.from_hf(hf)
    assert not encoder.training
    input_ids, attention_mask = _inputs(padding, seed=len(padding))
    expected = hf(input_ids, attention_mask=attention_mask, output_hidden_states=True, output_attentions=True)
    actual = encoder(input_ids, attention_mask)

    assert isinstance(actual, EncoderOutput)
    n_layers = CONFIGS[name]["n_layers"]
    assert len(actual.hidden_states) == len(expected.hidden_states) == n_layers + 1
    assert len(actual.attentions) == len(expected.attentions) == n_layers
    real = _real(attention_mask)
    for layer, (ours, theirs) in enumerate(zip(actual.hidden_states, expected.hidden_states)):
        assert ours.shape == (BATCH, SEQ, CONFIGS[name]["dim"])
        _assert_close(ours[real], theirs[real], f"hidden state {layer}")
    for layer, (ours, theirs) in enumerate(zip(actual.attentions, expected.attentions)):
        assert ours.shape == (BATCH, CONFIGS[name]["n_heads"], SEQ, SEQ)
        # (B, H, T_q, T_k) -> rows of the real queries, every key: (real, H, T_k)
        _assert_close(ours.transpose(1, 2)[real], theirs.transpose(1, 2)[real], f"attention {layer}")
        blocked = ~real[:, None, None, :].expand_as(ours) & real[:, None, :, None]
        assert torch.all(ours[blocked] == 0), "a padding key got attention"
    _assert_close(actual.last_hidden_state[real], expected.last_hidden_state[real], "last hidden state")
    assert actual.last_hidden_state is actual.hidden_states[-1]


def test_attention_mask_of_ones_changes_nothing():
    encoder = DistilBertEncoder.from_hf(_hf_model(**CONFIGS["d8-h2-l2-learned"]))
    input_ids, _ = _inputs("no mask")
    with torch.no_grad():
        unmasked = encoder(input_ids).last_hidden_state
        ones = encoder(input_ids, torch.ones_like(input_ids)).last_hidden_state
    assert torch.equal(unmasked, ones)


@pytest.mark.parametrize("name", ["d8-h2-l2-learned", "d12-h3-l3-sinusoidal"])
def test_gradients_equal_hugging_faces(name):
    hf = _hf_model(seed=3, **CONFIGS[name])
    encoder = DistilBertEncoder.from_hf(hf)
    input_ids, attention_mask = _inputs("right", seed=5)
    real = _real(attention_mask)
    target = torch.randn(BATCH, SEQ, CONFIGS[name]["dim"], generator=torch.Generator().manual_seed(7))

    def loss(hidden: torch.Tensor) -> torch.Tensor:  # a fixed random projection of the real tokens
        return (hidden * target)[real].sum()

    loss(hf(input_ids, attention_mask=attention_mask).last_hidden_state).backward()
    loss(encoder(input_ids, attention_mask).last_hidden_state).backward()
    theirs = dict(hf.named_parameters())
    compared = 0
    for parameter_name, parameter in encoder.named_parameters():
        if not parameter.requires_grad:  # the frozen sinusoidal table (trainable in recent transformers)
            assert parameter_name == "embeddings.position_embeddings.weight"
            assert CONFIGS[name].get("sinusoidal_pos_embds")
            continue
        expected = theirs[parameter_name].grad
        scale = max(1.0, expected.abs().max().item())  # grads of a sum over many tokens reach ~10
        difference = (parameter.grad - expected).abs().max().item() / scale
        assert difference <= 1e-5, f"gradient of {parameter_name}: relative difference {difference:.3g}"
        compared += 1
    assert compared == len(theirs) - bool(CONFIGS[name].get("sinusoidal_pos_embds"))


# --------------------------------------------------------------------------------------------
# Dropout (train mode)


def test_train_mode_matches_hugging_face_with_the_same_seed():
    hf = _hf_model(**CONFIGS["d8-h2-l2-learned"], dropout=0.3, attention_dropout=0.3).train()
    encoder = DistilBertEncoder.from_hf(hf)
    assert encoder.training
    input_ids, attention_mask = _inputs("right")
    torch.manual_seed(11)
    expected = hf(input_ids, attention_mask=attention_mask, output_attentions=True)
    torch.manual_seed(11)
    actual = encoder(input_ids, attention_mask)
    real = _real(attention_mask)
    _assert_close(actual.last_hidden_state[real], expected.last_hidden_state[real], "train-mode output")
    _assert_close(actual.attentions[0].transpose(1, 2)[real], expected.attentions[0].transpose(1, 2)[real], "weights")


@pytest.mark.parametrize("dropout, attention_dropout", [(0.2, 0.0), (0.0, 0.2)])
def test_dropout_is_active_in_train_mode_only(dropout, attention_dropout):
    config = EncoderConfig(
        vocab_size=VOCAB,
        max_position_embeddings=MAX_POS,
        dim=8,
        n_heads=2,
        n_layers=2,
        hidden_dim=16,
        dropout=dropout,
        attention_dropout=attention_dropout,
    )
    torch.manual_seed(0)
    encoder = DistilBertEncoder(config)
    input_ids, attention_mask = _inputs("right")
    first = encoder(input_ids, attention_mask).last_hidden_state
    second = encoder(input_ids, attention_mask).last_hidden_state
    assert not torch.allclose(first, second), "train mode: two calls should draw different dropout masks"
    encoder.eval()
    first = encoder(input_ids, attention_mask).last_hidden_state
    second = encoder(input_ids, attention_mask).last_hidden_state
    assert torch.equal(first, second), "eval mode must be deterministic"


# --------------------------------------------------------------------------------------------
# The bridges


@pytest.mark.parametrize("name", ["d8-h2-l2-learned", "d12-h3-l3-sinusoidal"])
def test_weights_made_here_load_into_hugging_face(name):
    overrides = CONFIGS[name]
    torch.manual_seed(1)
    encoder = DistilBertEncoder(EncoderConfig(vocab_size=VOCAB, max_position_embeddings=MAX_POS, **overrides)).eval()
    with torch.no_grad():  # move the weights away from their initialisation, as training would
        for parameter in encoder.parameters():
            if parameter.requires_grad:
                parameter.add_(0.3 * torch.randn_like(parameter))
    hf = encoder.to_hf()
    assert isinstance(hf, DistilBertModel) and not hf.training
    assert hf.config._attn_implementation == "eager"
    DistilBertModel(encoder.config.to_hf()).load_state_dict(encoder.to_hf_state_dict(), strict=True)

    input_ids, attention_mask = _inputs("left", seed=2)
    real = _real(attention_mask)
    expected = encoder(input_ids, attention_mask)
    actual = hf(input_ids, attention_mask=attention_mask, output_hidden_states=True, output_attentions=True)
    for ours, theirs in zip(expected.hidden_states, actual.hidden_states):
        _assert_close(theirs[real], ours[real], "hidden state after to_hf")
    back = DistilBertEncoder.from_hf(hf)
    for (key, mine), (key_back, theirs) in zip(encoder.state_dict().items(), back.state_dict().items()):
        assert key == key_back and torch.equal(mine, theirs)


def test_from_hf_accepts_a_task_model_and_copies_the_weights():
    torch.manual_seed(0)
    masked_lm = DistilBertForMaskedLM(_hf_config(**CONFIGS["d8-h2-l2-learned"])).eval()
    encoder = DistilBertEncoder.from_hf(masked_lm)
    input_ids, attention_mask = _inputs("right")
    expected = masked_lm.distilbert(input_ids, attention_mask=attention_mask).last_hidden_state
    real = _real(attention_mask)
    _assert_close(encoder(input_ids, attention_mask).last_hidden_state[real], expected[real], "task model")
    word_embeddings = encoder.embeddings.word_embeddings.weight
    assert word_embeddings.data_ptr() != masked_lm.distilbert.embeddings.word_embeddings.weight.data_ptr()

    encoder_only = DistilBertEncoder(encoder.config)
    load_hf_state_dict(encoder_only, masked_lm.state_dict())  # "distilbert." prefix, head dropped
    assert torch.equal(
        encoder_only.embeddings.word_embeddings.weight, masked_lm.distilbert.embeddings.word_embeddings.weight
    )


def test_loader_names_what_does_not_fit():
    encoder = DistilBertEncoder(
        EncoderConfig(vocab_size=VOCAB, max_position_embeddings=MAX_POS, dim=8, n_heads=2, n_layers=1, hidden_dim=16)
    )
    state = DistilBertModel(_hf_config(dim=8, n_heads=2, n_layers=2, hidden_dim=16)).state_dict()
    with pytest.raises(KeyError, match=r"unexpected \['transformer.layer.1"):
        load_hf_state_dict(encoder, state)
    state = DistilBertModel(_hf_config(dim=8, n_heads=2, n_layers=1, hidden_dim=24)).state_dict()
    with pytest.raises(
        ValueError, match=r"expected transformer.layer.0.ffn.lin1.weight of shape \(16, 8\) .*, got \(24, 8\)"
    ):
        load_hf_state_dict(encoder, state)
    with pytest.raises(TypeError, match="expected a transformers DistilBertModel"):
        DistilBertEncoder.from_hf(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="expected an EncoderConfig"):
        DistilBertEncoder(DistilBertConfig())


# --------------------------------------------------------------------------------------------
# Laws (hypothesis)


@settings(max_examples=25, deadline=None)
@given(lengths=st.lists(st.integers(1, SEQ), min_size=1, max_size=3), extra=st.integers(1, MAX_POS - SEQ))
def test_right_padding_does_not_change_real_tokens(lengths, extra):
    """A sequence's outputs do not depend on how much padding follows it (nor on the padding's ids)."""
    encoder = _law_encoder()
    generator = torch.Generator().manual_seed(sum(lengths))
    for length in lengths:
        ids = torch.randint(0, VOCAB, (1, length), generator=generator)
        padded = torch.cat([ids, torch.randint(0, VOCAB, (1, extra), generator=generator)], dim=1)
        mask = torch.cat([torch.ones(1, length), torch.zeros(1, extra)], dim=1).long()
        with torch.no_grad():
            alone = encoder(ids).last_hidden_state
            with_padding = encoder(padded, mask).last_hidden_state[:, :length]
        _assert_close(with_padding, alone, "with and without padding")


_LAW_ENCODER: list[DistilBertEncoder] = []


def _law_encoder() -> DistilBertEncoder:
    if not _LAW_ENCODER:
        _LAW_ENCODER.append(DistilBertEncoder.from_hf(_hf_model(seed=2, **CONFIGS["d8-h2-l2-learned"])))
    return _LAW_ENCODER[0]


# --------------------------------------------------------------------------------------------
# Bad input gets a clear message


@pytest.fixture(scope="module")
def small() -> DistilBertEncoder:
    return DistilBertEncoder(
        EncoderConfig(vocab_size=VOCAB, max_position_embeddings=MAX_POS, dim=8, n_heads=2, n_layers=1, hidden_dim=16)
    ).eval()


@pytest.mark.parametrize(
    "input_ids, attention_mask, error, message",
    [
        (
            torch.zeros(1, MAX_POS + 3, dtype=torch.long),
            None,
            ValueError,
            r"expected at most max_position_embeddings=12 tokens per sequence, got 15: .*truncate the input",
        ),
        (torch.zeros(2, 3), None, TypeError, "expected input_ids to hold integer token ids, got dtype torch.float32"),
        (
            torch.zeros(3, dtype=torch.long),
            None,
            ValueError,
            r"expected input_ids of shape \(B, T\), a 2-D tensor, got shape \(3,\) \(one sequence\? add a batch axis",
        ),
        (torch.zeros(1, 0, dtype=torch.long), None, ValueError, "expected at least one sequence of at least one token"),
        (
            torch.tensor([[1, 2, VOCAB]]),
            None,
            ValueError,
            r"expected input_ids in \[0, vocab_size=40\), got 40 at input_ids\[0, 2\]",
        ),
        (torch.tensor([[1, -1]]), None, ValueError, r"got -1 at input_ids\[0, 1\]"),
        (
            torch.ones(2, 3, dtype=torch.long),
            torch.ones(2, 4),
            ValueError,
            r"expected attention_mask of the shape of input_ids \(2, 3\), got \(2, 4\)",
        ),
        (
            torch.ones(1, 3, dtype=torch.long),
            torch.tensor([[1, 2, 0]]),
            ValueError,
            r"expected attention_mask to hold only 0 \(padding\) and 1 \(real token\)",
        ),
        ("hello", None, TypeError, "expected input_ids to be a tensor"),
    ],
)
def test_bad_input_is_explained(small, input_ids, attention_mask, error, message):
    with pytest.raises(error, match=message):
        small(input_ids, attention_mask)


def test_numpy_and_int32_inputs_are_accepted(small):
    ids = np.array([[1, 2, 3]], dtype=np.int32)
    with torch.no_grad():
        from_numpy = small(ids, np.ones((1, 3), dtype=bool)).last_hidden_state
        from_torch = small(torch.tensor([[1, 2, 3]])).last_hidden_state
    assert torch.equal(from_numpy, from_torch)


# --------------------------------------------------------------------------------------------
# The benchmark behind `make bench` (the real measurement is at DistilBERT-base size, not here)


def test_benchmark_times_both_models_and_says_whether_the_budget_holds():
    config = EncoderConfig(vocab_size=VOCAB, max_position_embeddings=MAX_POS, dim=8, n_heads=2, hidden_dim=16)
    timing = bench_encoder.time_encoder(batch=2, seq_len=8, rounds=3, warmup=1, config=config)
    assert timing.ours_s > 0 and timing.hf_s > 0 and timing.ratio > 0 and timing.rounds == 3
    assert timing.row().startswith("| encoder / Hugging Face eager, 2x8 tokens (")
    fast = bench_encoder.EncoderTiming(0.9, 1.0, 0.9, rounds=15, batch=8, seq_len=128)
    slow = bench_encoder.EncoderTiming(1.3, 1.0, 1.3, rounds=15, batch=8, seq_len=128)
    assert fast.passed and fast.row().endswith("| 0.90 | 1.25 | ok |")
    assert not slow.passed and slow.row().endswith("| 1.30 | 1.25 | OVER BUDGET |")
