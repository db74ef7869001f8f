"""Tests of ``DistilBertEncoder.from_bert``: a DistilBERT encoder made of a BERT's weights.

The reference is ``transformers.BertModel`` with eager attention, re-randomised with large weights
(token-type embeddings included, so that forgetting to fold segment 0 in shows), in eval mode.
Compared at real-token positions, to 1e-5:

- with all layers: every hidden state and every attention map equals BERT's with
  ``token_type_ids`` all 0 (passed explicitly, or left to BERT's default), for several configs and
  padding patterns; through ``BertForMaskedLM``'s head, the MLM logits are equal too (the word
  table is not touched by the folding);
- with a subset of layers: the outputs of those BERT layers run one after the other (a copy of the
  BERT whose layer list holds only them);
- bad layer lists and models that are not BERTs are refused with a message.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch import nn
from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification, BertModel, DistilBertModel

from course_utils.encoder import DistilBertEncoder, EncoderConfig
from course_utils.hf_weights import bert_to_distilbert_state_dict

ATOL = 1e-5
VOCAB, MAX_POS, BATCH, SEQ = 37, 14, 4, 10

CONFIGS = {
    "d8-h2-l3": dict(hidden_size=8, num_attention_heads=2, num_hidden_layers=3, intermediate_size=32),
    "d12-h3-l2-pad3": dict(
        hidden_size=12, num_attention_heads=3, num_hidden_layers=2, intermediate_size=20, pad_token_id=3
    ),
    "d16-h4-l4-tanh-gelu": dict(
        hidden_size=16, num_attention_heads=4, num_hidden_layers=4, intermediate_size=64, hidden_act="gelu_pytorch_tanh"
    ),
    "d8-h1-l1": dict(hidden_size=8, num_attention_heads=1, num_hidden_layers=1, intermediate_size=16),
}

PADDINGS = {
    "no mask": None,
    "right": [[1] * 10, [1] * 7 + [0] * 3, [1] * 2 + [0] * 8, [1] * 9 + [0]],
    "left": [[1] * 10, [0] * 3 + [1] * 7, [0] * 8 + [1] * 2, [0] + [1] * 9],
}


def _bert_config(**sizes) -> BertConfig:
    return BertConfig(
        vocab_size=VOCAB,
        max_position_embeddings=MAX_POS,
        type_vocab_size=2,
        attn_implementation="eager",
        **sizes,
    )


def _randomise(model: nn.Module, seed: int) -> None:
    """Large random weights (peaked attention), LayerNorm gains near 1: a wrong detail shows."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator)
            if name.endswith("LayerNorm.weight"):
                parameter.copy_(1 + 0.2 * noise)
            else:
                parameter.copy_(0.5 * noise)


def _bert(model_class=BertModel, seed: int = 0, **sizes):
    model = model_class(_bert_config(**sizes))
    _randomise(model, seed)
    assert model.config._attn_implementation == "eager"
    return model.eval()


def _inputs(padding: str, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor | None]:
    generator = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=generator)
    rows = PADDINGS[padding]
    if rows is None:
        return input_ids, None
    attention_mask = torch.tensor(rows)
    return input_ids.masked_fill(attention_mask == 0, 0), attention_mask


def _real(attention_mask: torch.Tensor | None) -> torch.Tensor:
    return torch.ones(BATCH, SEQ, dtype=torch.bool) if attention_mask is None else attention_mask.bool()


def _max_difference_at_real(ours: torch.Tensor, theirs: torch.Tensor, real: torch.Tensor) -> float:
    """Max |ours - theirs| over real tokens: hidden states (B, T, D) at real tokens, attention maps
    (B, H, T, T) at real queries and real keys."""
    if ours.ndim == 3:
        return (ours - theirs)[real].abs().max().item()
    pairs = real[:, None, :, None] & real[:, None, None, :]  # (B, 1, T, T)
    return (ours - theirs).abs().masked_select(pairs).max().item()


def _assert_same_outputs(ours, theirs, real: torch.Tensor) -> None:
    assert len(ours.hidden_states) == len(theirs.hidden_states)
    assert len(ours.attentions) == len(theirs.attentions)
    for index, (a, b) in enumerate(zip(ours.hidden_states, theirs.hidden_states)):
        difference = _max_difference_at_real(a, b, real)
        assert difference <= ATOL, f"hidden_states[{index}]: max difference {difference:.3g}"
    for index, (a, b) in enumerate(zip(ours.attentions, theirs.attentions)):
        assert a.shape == b.shape
        difference = _max_difference_at_real(a, b, real)
        assert difference <= ATOL, f"attentions[{index}]: max difference {difference:.3g}"


# --------------------------------------------------------------------------------------------
# All layers: the same model


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("sizes", CONFIGS.values(), ids=CONFIGS.keys())
def test_all_layers_equal_bert_with_segment_zero(sizes, padding):
    bert = _bert(**sizes)
    encoder = DistilBertEncoder.from_bert(bert).eval()
    assert encoder.config.n_layers == bert.config.num_hidden_layers
    input_ids, attention_mask = _inputs(padding)
    with torch.no_grad():
        ours = encoder(input_ids, attention_mask)
        zeros = torch.zeros_like(input_ids)
        theirs = bert(
            input_ids,
            attention_mask=attention_mask,
            token_type_ids=zeros,
            output_hidden_states=True,
            output_attentions=True,
        )
        default = bert(input_ids, attention_mask=attention_mask, output_hidden_states=True, output_attentions=True)
    real = _real(attention_mask)
    _assert_same_outputs(ours, theirs, real)
    _assert_same_outputs(ours, default, real)  # BERT's default token_type_ids are zeros
    assert torch.equal(ours.last_hidden_state, ours.hidden_states[-1])


def test_segment_zero_is_folded_into_the_positions_not_the_words():
    bert = _bert(**CONFIGS["d8-h2-l3"])
    assert bert.embeddings.token_type_embeddings.weight[0].abs().max() > 0.1  # folding it matters
    encoder = DistilBertEncoder.from_bert(bert)
    torch.testing.assert_close(
        encoder.embeddings.word_embeddings.weight, bert.embeddings.word_embeddings.weight, rtol=0, atol=0
    )
    torch.testing.assert_close(
        encoder.embeddings.position_embeddings.weight,
        bert.embeddings.position_embeddings.weight + bert.embeddings.token_type_embeddings.weight[0],
        rtol=0,
        atol=0,
    )
    names = set(bert_to_distilbert_state_dict(bert.state_dict()))
    assert not any("pooler" in name or "token_type" in name for name in names)
    assert names == set(encoder.state_dict())


def test_without_the_segment_embedding_the_outputs_would_differ():
    """The fold is needed: the same mapping without it does not match BERT."""
    bert = _bert(**CONFIGS["d8-h2-l3"])
    encoder = DistilBertEncoder.from_bert(bert).eval()
    with torch.no_grad():
        encoder.embeddings.position_embeddings.weight.copy_(bert.embeddings.position_embeddings.weight)
        input_ids, _ = _inputs("no mask")
        ours = encoder(input_ids).last_hidden_state
        theirs = bert(input_ids).last_hidden_state
    assert (ours - theirs).abs().max() > 1e-2


@pytest.mark.parametrize("padding", ["no mask", "right"])
def test_masked_lm_logits_through_the_teachers_head_are_equal(padding):
    """The word table is tied to the MLM decoder: it must reach the encoder unchanged."""
    mlm = _bert(BertForMaskedLM, seed=3, **CONFIGS["d12-h3-l2-pad3"])
    assert mlm.cls.predictions.decoder.weight is mlm.bert.embeddings.word_embeddings.weight
    encoder = DistilBertEncoder.from_bert(mlm).eval()
    input_ids, attention_mask = _inputs(padding, seed=1)
    with torch.no_grad():
        ours = mlm.cls(encoder(input_ids, attention_mask).last_hidden_state)  # (B, T, V)
        theirs = mlm(input_ids, attention_mask=attention_mask, token_type_ids=torch.zeros_like(input_ids)).logits
    real = _real(attention_mask)
    difference = (ours - theirs)[real].abs().max().item()
    assert difference <= 1e-4, f"MLM logits: max difference {difference:.3g}"


def test_task_models_and_float64_and_train_mode_are_followed():
    classifier = BertForSequenceClassification(_bert_config(**CONFIGS["d8-h1-l1"])).double().train()
    encoder = DistilBertEncoder.from_bert(classifier)
    assert encoder.training
    assert next(encoder.parameters()).dtype == torch.float64
    classifier.eval()
    encoder.eval()
    input_ids, attention_mask = _inputs("right")
    with torch.no_grad():
        ours = encoder(input_ids, attention_mask)
        theirs = classifier.bert(
            input_ids, attention_mask=attention_mask, output_hidden_states=True, output_attentions=True
        )
    _assert_same_outputs(ours, theirs, _real(attention_mask))


def test_weights_are_copied_not_shared():
    bert = _bert(**CONFIGS["d8-h1-l1"])
    before = {name: tensor.clone() for name, tensor in bert.state_dict().items()}
    encoder = DistilBertEncoder.from_bert(bert)
    with torch.no_grad():
        for parameter in encoder.parameters():
            parameter.add_(1.0)
    for name, tensor in bert.state_dict().items():
        assert torch.equal(tensor, before[name]), name


def test_config_maps_bert_names_to_distilbert_names():
    bert_config = _bert_config(**CONFIGS["d12-h3-l2-pad3"], hidden_dropout_prob=0.2, attention_probs_dropout_prob=0.05)
    config = EncoderConfig.from_bert(bert_config)
    assert config == EncoderConfig(
        vocab_size=VOCAB,
        max_position_embeddings=MAX_POS,
        n_layers=2,
        n_heads=3,
        dim=12,
        hidden_dim=20,
        dropout=0.2,
        attention_dropout=0.05,
        activation="gelu",
        initializer_range=bert_config.initializer_range,
        pad_token_id=3,
    )
    assert EncoderConfig.from_bert(bert_config, n_layers=1).n_layers == 1


# --------------------------------------------------------------------------------------------
# A subset of layers: those BERT layers, one after the other


def _bert_with_layers(bert: BertModel, layers: list[int]) -> BertModel:
    """A copy of ``bert`` whose encoder holds only ``layers``, in that order: the reference."""
    kept = copy.deepcopy(bert)
    kept.encoder.layer = nn.ModuleList(copy.deepcopy(bert.encoder.layer[i]) for i in layers)
    kept.config.num_hidden_layers = len(layers)
    return kept.eval()


@pytest.mark.parametrize(
    "sizes, layers",
    [
        (CONFIGS["d16-h4-l4-tanh-gelu"], [0, 2]),
        (CONFIGS["d16-h4-l4-tanh-gelu"], [1, 3]),
        (CONFIGS["d16-h4-l4-tanh-gelu"], [3]),
        (CONFIGS["d8-h2-l3"], [0, 1, 2]),
        (CONFIGS["d8-h2-l3"], np.array([0, 2])),  # numpy integers are indices too
    ],
    ids=["0,2 of 4", "1,3 of 4", "3 of 4", "all 3 listed", "numpy 0,2 of 3"],
)
@pytest.mark.parametrize("padding", ["no mask", "left"])
def test_a_subset_of_layers_equals_running_those_bert_layers(sizes, layers, padding):
    bert = _bert(seed=5, **sizes)
    encoder = DistilBertEncoder.from_bert(bert, layers=layers).eval()
    assert encoder.config.n_layers == len(layers)
    reference = _bert_with_layers(bert, [int(i) for i in layers])
    input_ids, attention_mask = _inputs(padding, seed=2)
    with torch.no_grad():
        ours = encoder(input_ids, attention_mask)
        theirs = reference(input_ids, attention_mask=attention_mask, output_hidden_states=True, output_attentions=True)
    _assert_same_outputs(ours, theirs, _real(attention_mask))
    for k, i in enumerate(layers):  # block k holds BERT layer layers[k]
        torch.testing.assert_close(
            encoder.transformer.layer[k].ffn.lin1.weight, bert.encoder.layer[int(i)].intermediate.dense.weight
        )


def test_a_subset_differs_from_the_full_model():
    bert = _bert(seed=5, **CONFIGS["d16-h4-l4-tanh-gelu"])
    input_ids, _ = _inputs("no mask")
    with torch.no_grad():
        full = DistilBertEncoder.from_bert(bert).eval()(input_ids).last_hidden_state
        half = DistilBertEncoder.from_bert(bert, layers=[0, 2]).eval()(input_ids).last_hidden_state
    assert (full - half).abs().max() > 1e-2


# --------------------------------------------------------------------------------------------
# Refusals


@pytest.mark.parametrize(
    "layers, error, message",
    [
        ([], ValueError, r"expected at least one layer index in \[0, 3\), got an empty list"),
        ([0, 3], ValueError, r"expected layer indices in \[0, 3\) \(the BERT has 3 layers\), got \[3\]"),
        ([-1], ValueError, r"expected layer indices in \[0, 3\)"),
        ([2, 0], ValueError, r"expected distinct layer indices in increasing order"),
        ([1, 1], ValueError, r"expected distinct layer indices in increasing order"),
        ([0.0, 1.0], TypeError, r"expected integer layer indices, got 0.0"),
        ([True], TypeError, r"expected integer layer indices, got True"),
        ("02", TypeError, r"expected layers as a list of layer indices"),
        (2, TypeError, r"expected layers as a list of layer indices such as \[0, 2, 4\], got 2"),
    ],
)
def test_bad_layer_lists_are_refused(layers, error, message):
    bert = _bert(**CONFIGS["d8-h2-l3"])
    with pytest.raises(error, match=message):
        DistilBertEncoder.from_bert(bert, layers=layers)


def test_models_that_are_not_berts_are_refused():
    distilbert = DistilBertModel(EncoderConfig(vocab_size=20, dim=8, n_heads=2, n_layers=1, hidden_dim=8).to_hf())
    with pytest.raises(TypeError, match="expected a transformers BertModel .* got DistilBertModel"):
        DistilBertEncoder.from_bert(distilbert)
    with pytest.raises(TypeError, match="got Linear"):
        DistilBertEncoder.from_bert(nn.Linear(2, 2))


def test_bert_features_the_encoder_has_not_are_refused():
    with pytest.raises(ValueError, match=r"expected layer_norm_eps=1e-12"):
        EncoderConfig.from_bert(_bert_config(**CONFIGS["d8-h1-l1"], layer_norm_eps=1e-5))
    relative = _bert_config(**CONFIGS["d8-h1-l1"])
    relative.position_embedding_type = "relative_key"
    with pytest.raises(ValueError, match="expected absolute"):
        EncoderConfig.from_bert(relative)
    with pytest.raises(ValueError, match="expected a BERT encoder"):
        EncoderConfig.from_bert(_bert_config(**CONFIGS["d8-h1-l1"], is_decoder=True))
    with pytest.raises(ValueError, match="expected activation to be one of"):
        EncoderConfig.from_bert(_bert_config(**CONFIGS["d8-h1-l1"], hidden_act="silu"))
    with pytest.raises(KeyError, match="expected the state dict of a BertModel"):
        bert_to_distilbert_state_dict({"embeddings.word_embeddings.weight": torch.zeros(3, 2)})
