"""Pre-LayerNorm: lesson 06's encoder block with its LayerNorms moved before the sub-layers (lesson 09).

BERT and DistilBERT normalise *after* each residual sum (post-LN, :class:`course_utils.encoder.TransformerBlock`):
``h = LN(x + attention(x))``. GPT-2 and nearly every model since normalise the *input* of each
sub-layer and leave the residual path untouched (pre-LN): ``h = x + attention(LN(x))``, then
``h + ffn(LN(h))``. Xiong et al. (2020) showed why it matters: at initialisation the gradients of a
post-LN stack are largest near the output, so a large learning rate needs a warm-up; pre-LN's
gradients are even across layers and train without one.

:class:`PreLNTransformerBlock` is the course's block, same modules and names, another ``forward``;
:meth:`PreLNTransformerBlock.from_torch` copies the weights of a
``torch.nn.TransformerEncoderLayer(norm_first=True, activation="gelu", batch_first=True)``, which it
then equals (tested).

Axis names: ``B`` batch, ``T`` tokens, ``D`` model width, ``H`` heads, ``F`` feed-forward width.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .encoder import EncoderConfig, TransformerBlock

__all__ = ["PreLNTransformerBlock"]


class PreLNTransformerBlock(TransformerBlock):
    """One pre-LayerNorm block: ``h = x + attention(LN_1(x))``, then ``h + ffn(LN_2(h))``.

    The modules are :class:`~course_utils.encoder.TransformerBlock`'s (``attention``, ``sa_layer_norm``,
    ``ffn``, ``output_layer_norm``); only the order changes. ``(B, T, D)`` -> ``(B, T, D)``.
    """

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``x (B, T, D)``, ``mask`` bool ``(B, 1, 1, T)`` or None -> ``(B, T, D)`` and weights ``(B, H, T, T)``."""
        attended, weights = self.attention(self.sa_layer_norm(x), mask)  # normalise, then attend
        h = x + attended  # the residual path is never normalised
        return h + self.ffn(self.output_layer_norm(h)), weights

    @classmethod
    def from_torch(cls, layer: nn.TransformerEncoderLayer) -> "PreLNTransformerBlock":
        """The same block as a ``torch.nn.TransformerEncoderLayer`` with ``norm_first=True``, weights copied.

        Torch keeps ``W_Q, W_K, W_V`` stacked in ``self_attn.in_proj_weight (3D, D)``; they are cut
        into ``q_lin``, ``k_lin``, ``v_lin``. The LayerNorms take the layer's ``eps``. Dropout is off.
        """
        if not isinstance(layer, nn.TransformerEncoderLayer):
            raise TypeError(f"expected a torch.nn.TransformerEncoderLayer, got {type(layer).__name__}")
        if not layer.norm_first:
            raise ValueError("expected a pre-LN layer, TransformerEncoderLayer(norm_first=True), got norm_first=False")
        if not layer.self_attn.batch_first:
            raise ValueError("expected TransformerEncoderLayer(batch_first=True): this block takes (B, T, D)")
        if layer.activation is not F.gelu and getattr(layer, "activation_relu_or_gelu", 0) != 2:
            raise ValueError(f"expected activation='gelu' (exact GELU), got {layer.activation!r}")
        attention = layer.self_attn
        d_model, n_heads = attention.embed_dim, attention.num_heads
        config = EncoderConfig(dim=d_model, n_heads=n_heads, hidden_dim=layer.linear1.out_features, n_layers=1,
                               dropout=0.0, attention_dropout=0.0, activation="gelu")
        parameter = layer.linear1.weight
        block = cls(config).to(device=parameter.device, dtype=parameter.dtype).eval()
        w_q, w_k, w_v = attention.in_proj_weight.detach().chunk(3, dim=0)  # (D, D) each
        b_q, b_k, b_v = attention.in_proj_bias.detach().chunk(3, dim=0)  # (D,) each
        with torch.no_grad():
            for linear, weight, bias in ((block.attention.q_lin, w_q, b_q), (block.attention.k_lin, w_k, b_k),
                                         (block.attention.v_lin, w_v, b_v),
                                         (block.attention.out_lin, attention.out_proj.weight, attention.out_proj.bias),
                                         (block.ffn.lin1, layer.linear1.weight, layer.linear1.bias),
                                         (block.ffn.lin2, layer.linear2.weight, layer.linear2.bias)):
                linear.weight.copy_(weight)
                linear.bias.copy_(bias)
            for ours, theirs in ((block.sa_layer_norm, layer.norm1), (block.output_layer_norm, layer.norm2)):
                ours.weight.copy_(theirs.weight)
                ours.bias.copy_(theirs.bias)
                ours.eps = theirs.eps
        return block
