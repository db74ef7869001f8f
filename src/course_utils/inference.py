"""Faster inference on CPU (lesson 08): dynamic int8 quantisation, bf16 autocast, and size on disk.

Two ways to make a trained model cheaper to run, without training it again:

- :func:`quantize_dynamic`: every ``nn.Linear`` keeps its weights as 8-bit integers (one scale per
  matrix) and quantises its input on the fly at each call ("dynamic"), with
  ``torch.ao.quantization.quantize_dynamic``. Weights take a quarter of the memory; the integer
  matrix products may be faster, depending on the CPU and the sizes.
- :class:`Autocast`: the forward pass under ``torch.autocast("cpu", dtype=torch.bfloat16)``: matrix
  products in bfloat16 (8 bits of mantissa instead of 23), the weights unchanged in float32.

:func:`size_on_disk` measures what ``torch.save`` writes for a model's weights. Latency is measured
with :func:`course_utils.costs.latencies`, accuracy with :func:`course_utils.training.accuracy`.
"""

from __future__ import annotations

import copy
import io
import warnings

import torch

__all__ = ["Autocast", "quantize_dynamic", "size_on_disk"]


def quantize_dynamic(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``model`` whose ``nn.Linear`` layers compute with int8 weights (dynamic quantisation).

    The original is left unchanged. torch 2.13 marks its quantised tensors as deprecated (in favour
    of the ``torchao`` package); the warnings it prints about that are silenced here.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"expected a torch.nn.Module, got {type(model).__name__}")
    from torch.ao.quantization import quantize_dynamic as _quantize

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(deprecated|torchao).*")
        return _quantize(copy.deepcopy(model).eval(), {torch.nn.Linear}, dtype=torch.qint8)


class Autocast(torch.nn.Module):
    """``model`` run under bfloat16 autocast on CPU; its logits come back in float32."""

    def __init__(self, model: torch.nn.Module, dtype: torch.dtype = torch.bfloat16):
        super().__init__()
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"expected a torch.nn.Module, got {type(model).__name__}")
        if dtype not in (torch.bfloat16, torch.float16):
            raise ValueError(f"expected dtype torch.bfloat16 or torch.float16, got {dtype}")
        self.model, self.dtype = model, dtype

    def forward(self, *args, **kwargs):
        with torch.autocast("cpu", dtype=self.dtype):
            output = self.model(*args, **kwargs)
        if hasattr(output, "logits"):
            output.logits = output.logits.float()
        return output


def size_on_disk(model: torch.nn.Module) -> int:
    """Bytes that ``torch.save(model.state_dict())`` writes (quantised weights included)."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"expected a torch.nn.Module, got {type(model).__name__}")
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(deprecated|torchao).*")
        torch.save(model.state_dict(), buffer)
    return buffer.getbuffer().nbytes
