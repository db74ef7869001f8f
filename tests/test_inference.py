"""Tests of course_utils.inference: dynamic int8 quantisation, bf16 autocast, size on disk.

The models are tiny random DistilBERTs (width 64, two layers) initialised with a standard deviation
of 0.1, so that their logits are of order 1. Tolerances are measured, with a margin:

- int8: the largest logit error of the quantised copy is 1.9-4.7% of the largest logit (the three
  seeds of the test, 8 sentences); on the bundled BERT and DistilBERT sentiment models, 2.6-3.5%,
  with the same predictions on 199-200 of 200 test sentences. The test allows 10%;
- bf16: 8 bits of mantissa round each product to about 0.4% (2⁻⁸); the largest logit error
  measured is 0.5-1.2% of the largest logit. The test allows 3%;
- size: ``nn.Linear`` weights go from 4 bytes to 1; biases, embeddings and LayerNorms stay float32,
  so the int8 file is ``4 (P - L) + L`` bytes for ``P`` parameters of which ``L`` are linear weights,
  plus what ``torch.save`` adds (per-tensor records, the scale and zero point of each layer):
  measured 4.9% above that formula for the test's model (0.9% above ``4 P`` for float32), a ratio
  of 3.14. The test allows 10%.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn
from transformers import DistilBertConfig, DistilBertForSequenceClassification

from course_utils import inference

pytestmark = pytest.mark.usefixtures("one_thread")


def small_distilbert(seed: int = 0, **overrides) -> DistilBertForSequenceClassification:
    torch.manual_seed(seed)
    fields = dict(vocab_size=100, dim=64, n_layers=2, n_heads=4, hidden_dim=256, max_position_embeddings=32,
                  num_labels=3, initializer_range=0.1, pad_token_id=0)  # fmt: skip
    return DistilBertForSequenceClassification(DistilBertConfig(**{**fields, **overrides})).eval()


def _inputs(seed: int = 1):
    generator = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(1, 100, (8, 12), generator=generator)
    attention_mask = torch.ones_like(input_ids)
    attention_mask[4:, 8:] = 0
    input_ids[4:, 8:] = 0
    return dict(input_ids=input_ids, attention_mask=attention_mask)


def _logits(model, inputs) -> torch.Tensor:
    with torch.no_grad():
        return model(**inputs).logits


def _linear_layers(model) -> list[nn.Module]:
    return [m for m in model.modules() if type(m) is nn.Linear]


# --------------------------------------------------------------------------------------------
# quantize_dynamic


def test_quantize_dynamic_leaves_the_original_unchanged():
    model = small_distilbert()
    state = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    n_linear = len(_linear_layers(model))
    inference.quantize_dynamic(model)
    assert len(_linear_layers(model)) == n_linear == 2 * 6 + 2  # q, k, v, out, ffn in, ffn out; the head's two
    after = model.state_dict()
    assert after.keys() == state.keys() and all(torch.equal(after[k], v) for k, v in state.items())


def test_quantize_dynamic_replaces_every_linear_layer():
    model = small_distilbert()
    quantized = inference.quantize_dynamic(model)
    assert _linear_layers(quantized) == []
    dynamic = [m for m in quantized.modules() if isinstance(m, torch.ao.nn.quantized.dynamic.Linear)]
    assert len(dynamic) == len(_linear_layers(model))
    assert all(m.weight().dtype == torch.qint8 for m in dynamic)
    assert not quantized.training


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_quantized_logits_are_close_to_float32(seed):
    model = small_distilbert(seed)
    inputs = _inputs()
    reference, quantized = _logits(model, inputs), _logits(inference.quantize_dynamic(model), inputs)
    assert quantized.dtype == torch.float32 and quantized.shape == reference.shape
    scale = reference.abs().max()
    assert scale > 0.5  # logits of order 1
    error = (quantized - reference).abs().max()
    assert 0 < error < 0.1 * scale  # close, and not the same computation
    assert torch.equal(quantized.argmax(-1), reference.argmax(-1))


def test_quantize_dynamic_emits_no_warnings(recwarn):
    """torch 2.13 deprecates torch.ao.quantization with warnings: the course silences them (and only them)."""
    warnings.simplefilter("always")
    quantized = inference.quantize_dynamic(small_distilbert())
    _logits(quantized, _inputs())
    inference.size_on_disk(quantized)
    assert [str(w.message) for w in recwarn] == []


def test_size_on_disk_of_the_int8_copy_is_about_a_quarter_for_the_linear_weights():
    model = small_distilbert(dim=128, hidden_dim=512, vocab_size=200)
    parameters = sum(p.numel() for p in model.parameters())
    linear_weights = sum(m.weight.numel() for m in _linear_layers(model))
    fp32, int8 = inference.size_on_disk(model), inference.size_on_disk(inference.quantize_dynamic(model))
    assert fp32 == pytest.approx(4 * parameters, rel=0.02)
    assert int8 == pytest.approx(4 * (parameters - linear_weights) + linear_weights, rel=0.10)
    assert 3.0 < fp32 / int8 < 4.0  # linear weights are ~90% of this model's parameters


# --------------------------------------------------------------------------------------------
# Autocast


def test_autocast_logits_are_float32_and_close_to_float32():
    model = small_distilbert()
    inputs = _inputs()
    reference = _logits(model, inputs)
    autocast = inference.Autocast(model)
    logits = _logits(autocast, inputs)
    assert logits.dtype == torch.float32 and logits.shape == reference.shape
    error = (logits - reference).abs().max()
    assert 0 < error < 0.03 * reference.abs().max()  # bf16 rounding: close, and not the float32 computation
    assert torch.equal(logits.argmax(-1), reference.argmax(-1))
    assert all(p.dtype == torch.float32 for p in model.parameters())  # the weights are unchanged
    assert list(autocast.parameters()) == list(model.parameters())


def test_autocast_computes_in_bfloat16_inside():
    seen = []
    model = nn.Linear(4, 3)
    model.register_forward_hook(lambda module, args, output: seen.append(output.dtype))
    output = inference.Autocast(model)(torch.randn(2, 4))
    assert seen == [torch.bfloat16]
    assert output.dtype == torch.bfloat16  # a plain tensor output is returned as it is: only .logits is cast back


# --------------------------------------------------------------------------------------------
# Bad inputs


@pytest.mark.parametrize("function", [inference.quantize_dynamic, inference.Autocast, inference.size_on_disk])
@pytest.mark.parametrize("bad", [None, "model", {"weight": torch.zeros(2)}])
def test_functions_refuse_what_is_not_a_module(function, bad):
    with pytest.raises(TypeError, match="expected a torch.nn.Module, got"):
        function(bad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int8, "bfloat16"])
def test_autocast_refuses_other_dtypes(dtype):
    with pytest.raises(ValueError, match="expected dtype torch.bfloat16 or torch.float16, got"):
        inference.Autocast(nn.Linear(2, 2), dtype=dtype)
