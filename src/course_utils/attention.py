"""Scaled dot-product attention and multi-head attention (lesson 04).

Each algorithm is written once, in torch. Every function also takes numpy arrays (or nested lists)
and then returns numpy: lessons 03 to 05 compute small, printed, hand-checkable numbers in numpy,
and the conversion happens at the edge (numpy memory is shared, not copied, where it can be). Torch
in gives torch out, for the encoder of the course: autograd flows through, no Python loop over
batch or heads, no needless copies.

Conventions
-----------
**Masks are boolean, ``True`` = may attend.** This is the convention of
``torch.nn.functional.scaled_dot_product_attention`` and of Hugging Face's ``attention_mask``
(1 = real token). A mask broadcasts against the scores ``(..., T_q, T_k)``: a causal mask is
``(T, T)``, a padding mask ``(B, 1, 1, T_k)`` (see :mod:`course_utils.masking`).

**Blocked scores are set to the dtype's minimum** (``finfo(dtype).min``), as Hugging Face does,
not to ``-inf``: a row whose keys are all blocked then gets uniform weights ``1 / T_k`` instead of
``nan`` (``exp(-inf - (-inf))`` is ``nan``). A blocked key of a row that has at least one allowed
key gets a weight of exactly zero.

**Row vectors.** Projections are ``x @ W + b`` with ``W`` of shape ``(D_in, D_out)``, the
orientation of the maths; torch's ``nn.Linear`` stores ``weight = W.T`` of shape
``(D_out, D_in)``. :class:`AttentionParams` converts both ways.

**Order of operations**, as Hugging Face's DistilBERT (eager attention): ``scores = (Q @ K^T) *
d_k**-0.5``, blocked scores filled, softmax over the keys, optional dropout on the weights, then
``weights @ V``; so the course's encoder agrees with Hugging Face's to float rounding.

Axis names used in the docstrings: ``B`` batch, ``T`` sequence length (``T_q`` queries, ``T_k``
keys and values), ``D`` model size (``d_model``), ``H`` heads, ``d_head = D / H``, ``d_k`` size of
a query/key vector, ``d_v`` size of a value vector; ``...`` any number of leading (batch) axes.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields
from typing import Any, Callable

import numpy as np
import torch

from .validation import positive_int

__all__ = [
    "AttentionParams",
    "attention_param_count",
    "merge_heads",
    "multi_head_attention",
    "scaled_dot_product_attention",
    "softmax",
    "split_heads",
    "weights_entropy",
]

Array = Any  # a numpy array or a torch tensor; every function returns the kind it was given


# --------------------------------------------------------------------------------------------
# The edge: numpy in, numpy out


def is_torch(x: Any) -> bool:
    """Whether ``x`` is a torch tensor (a function returns the kind it was given)."""
    return isinstance(x, torch.Tensor)


def _tensor(name: str, value: Any) -> torch.Tensor:
    """``value`` as a floating tensor: a floating tensor as it is; a numpy array or nested list as a
    tensor sharing its memory where it can (float32/float64 kept, anything numeric -> float64)."""
    if is_torch(value):
        if not value.is_floating_point():
            raise TypeError(f"expected {name} to be a floating-point tensor, got dtype {value.dtype}")
        return value
    try:
        array = np.asarray(value)
        if not np.issubdtype(array.dtype, np.floating):
            array = array.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"expected {name} to be a numeric array, got {type(value).__name__}") from None
    if not array.flags.writeable or any(stride < 0 for stride in array.strides):
        array = array.copy()  # torch shares writable memory with forward strides only
    return torch.from_numpy(array)


def _tensors(**named: Any) -> list[torch.Tensor]:
    """The values as floating tensors in their common dtype (float32 with float64 -> float64, as
    numpy promotes); all numpy or all torch, like the first: mixing the two is an error."""
    first, *_ = named.values()
    for name, value in named.items():
        if is_torch(value) != is_torch(first):
            wanted, got = ("a torch tensor", "numpy") if is_torch(first) else ("a numpy array", "a torch tensor")
            raise TypeError(f"expected {name} to be {wanted} like the queries, got {got}: do not mix numpy and torch")
    tensors = [_tensor(name, value) for name, value in named.items()]
    dtype = functools.reduce(torch.promote_types, (tensor.dtype for tensor in tensors))
    return [tensor.to(dtype) for tensor in tensors]


def _as_given(x: torch.Tensor, numpy_in: bool) -> Array:
    """``x`` in the kind the caller gave: a numpy array (sharing memory) for numpy input."""
    return x.numpy() if numpy_in else x


def _shape(x: Array) -> tuple[int, ...]:
    return tuple(x.shape)


# --------------------------------------------------------------------------------------------
# Softmax


def softmax(x: Array, axis: int = -1) -> Array:
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably; any shape, same shape out.

    The maximum along ``axis`` is subtracted first (it cancels in the ratio), so the largest
    exponent is ``exp(0) = 1`` and nothing overflows: ``softmax([1000, 1000])`` is ``[0.5, 0.5]``,
    not ``nan``. A row of equal values (such as a row of blocked scores all set to
    ``finfo(dtype).min``) gives uniform weights; a row that is entirely ``-inf`` gives ``nan``
    (there is no maximum to subtract), as in torch.

    numpy in (any numeric dtype; float32 stays float32, the rest becomes float64) gives numpy out;
    a torch tensor gives a tensor (equal to ``torch.softmax`` to float rounding).
    """
    numpy_in = not is_torch(x)
    x = _tensor("x", x)
    if x.ndim == 0:
        raise ValueError("expected x to have at least one axis, got a scalar")
    shifted = x - x.amax(dim=axis, keepdim=True)
    exps = shifted.exp()
    return _as_given(exps / exps.sum(dim=axis, keepdim=True), numpy_in)


# --------------------------------------------------------------------------------------------
# Scaled dot-product attention


def _check_mask(mask: Any, scores_shape: tuple[int, ...], numpy_in: bool, device) -> torch.Tensor:
    """``mask`` as a boolean tensor on ``device`` that broadcasts to ``scores_shape``; numpy queries
    take a numpy mask, torch queries either kind."""
    if is_torch(mask):
        if numpy_in:
            raise TypeError("expected mask to be a numpy array like the queries, got a torch tensor")
        dtype_ok = mask.dtype == torch.bool
    else:
        mask = np.asarray(mask)
        dtype_ok = mask.dtype == np.bool_
    if not dtype_ok:
        raise TypeError(
            f"expected a boolean mask (True = may attend), got dtype {mask.dtype}: "
            "convert it with mask.astype(bool) / mask.bool() (1 -> True = may attend)"
        )
    shape = _shape(mask)
    target = scores_shape
    ok = len(shape) <= len(target) and all(size in (1, want) for size, want in zip(reversed(shape), reversed(target)))
    if not ok or not shape:
        raise ValueError(f"expected mask of shape (..., T_q, T_k) broadcastable to the scores {target}, got {shape}")
    return mask if is_torch(mask) else torch.from_numpy(mask.copy()).to(device)


def scaled_dot_product_attention(
    queries: Array,
    keys: Array,
    values: Array,
    mask: Array | None = None,
    *,
    dropout: Callable[[Array], Array] | None = None,
) -> tuple[Array, Array]:
    """``softmax(Q K^T / sqrt(d_k)) V``, with an optional boolean mask.

    Shapes: ``queries (..., T_q, d_k)``, ``keys (..., T_k, d_k)``, ``values (..., T_k, d_v)``,
    leading axes broadcasting against each other; ``mask`` boolean, broadcastable to
    ``(..., T_q, T_k)``, ``True`` = may attend (a ``(T, T)`` causal mask, a ``(B, 1, 1, T_k)``
    padding mask). ``dropout``, when given, is applied to the weights before they multiply the
    values (``torch.nn.Dropout`` while training); the returned weights are the ones used.

    Returns ``(output, weights)``: ``output (..., T_q, d_v)``, ``weights (..., T_q, T_k)``, each row
    of weights summing to 1. Blocked scores are set to ``finfo(dtype).min`` before the softmax, so a
    blocked key gets weight 0 and a fully blocked row gets uniform weights (not ``nan``).

    Order of operations (as Hugging Face's DistilBERT): ``(Q @ K^T) * d_k**-0.5``, fill, softmax,
    dropout, ``@ V``. numpy in gives numpy out, torch in gives torch out (differentiable);
    ``dropout`` is always given a tensor.
    """
    numpy_in = not is_torch(queries)
    queries, keys, values = _tensors(queries=queries, keys=keys, values=values)
    q_shape, k_shape, v_shape = _shape(queries), _shape(keys), _shape(values)
    if len(q_shape) < 2:
        raise ValueError(f"expected queries of shape (..., T_q, d_k), got {q_shape}")
    d_k = q_shape[-1]
    if len(k_shape) < 2 or k_shape[-1] != d_k:
        raise ValueError(f"expected keys of shape (..., T_k, d_k={d_k}), got {k_shape}")
    t_k = k_shape[-2]
    if len(v_shape) < 2 or v_shape[-2] != t_k:
        raise ValueError(f"expected values of shape (..., T_k={t_k}, d_v), got {v_shape}")
    if t_k == 0:
        raise ValueError(f"expected at least one key (T_k >= 1) to attend to, got keys of shape {k_shape}")
    try:
        batch = tuple(np.broadcast_shapes(q_shape[:-2], k_shape[:-2], v_shape[:-2]))
    except ValueError:
        raise ValueError(
            f"the leading (batch) axes of queries {q_shape}, keys {k_shape} and values {v_shape} "
            "do not broadcast together"
        ) from None
    scores_shape = (*batch, q_shape[-2], t_k)
    if mask is not None:
        mask = _check_mask(mask, scores_shape, numpy_in, queries.device)

    scores = (queries @ keys.transpose(-2, -1)) * d_k**-0.5  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)  # torch's softmax, as Hugging Face's: :func:`softmax` to float rounding
    if dropout is not None:
        weights = dropout(weights)
    return _as_given(weights @ values, numpy_in), _as_given(weights, numpy_in)


def weights_entropy(queries: Array, keys: Array, scaled: bool = True) -> Array:
    """The entropy (nats) of each query's attention weights: ``-sum_j w_j ln w_j``.

    Shapes: ``queries (..., T_q, d_k)``, ``keys (..., T_k, d_k)`` (leading axes broadcasting);
    returns ``(..., T_q)``. The weights are ``softmax(q . k_j / sqrt(d_k))`` over the keys, or
    ``softmax(q . k_j)`` with ``scaled=False`` (lesson 04 measures what the scale does). The
    entropy is ``ln T_k`` for uniform weights and 0 when one key takes all the weight; a weight
    that underflows to exactly 0 adds nothing (``0 ln 0 = 0``, its limit). numpy in, numpy out.
    """
    if not isinstance(scaled, (bool, np.bool_)):
        raise TypeError(f"expected scaled to be True or False, got {scaled!r}")
    numpy_in = not is_torch(queries)
    queries, keys = _tensors(queries=queries, keys=keys)
    q_shape, k_shape = _shape(queries), _shape(keys)
    if len(q_shape) < 2 or len(k_shape) < 2 or k_shape[-1] != q_shape[-1] or k_shape[-2] == 0:
        raise ValueError(f"expected queries (..., T_q, d_k) and keys (..., T_k >= 1, d_k), got {q_shape} and {k_shape}")
    scores = queries @ keys.transpose(-2, -1)  # (..., T_q, T_k)
    if scaled:
        scores = scores * q_shape[-1] ** -0.5
    weights = scores.softmax(dim=-1)
    terms = torch.where(weights > 0, weights * weights.clamp_min(torch.finfo(weights.dtype).tiny).log(), 0.0)
    return _as_given(-terms.sum(dim=-1), numpy_in)


# --------------------------------------------------------------------------------------------
# Heads


def split_heads(x: Array, n_heads: int) -> Array:
    """``(B, T, D) -> (B, H, T, D/H)``: cut each token's vector into ``H`` heads of ``D/H`` values.

    A reshape to ``(B, T, H, D/H)`` (head ``h`` gets the values ``h*D/H ... (h+1)*D/H - 1`` of every
    token) followed by swapping the ``T`` and ``H`` axes, so that each head holds a whole sequence.
    (Reshaping straight to ``(B, H, T, D/H)`` would mix tokens: the classic bug.) Any leading axes
    work, ``(..., T, D) -> (..., H, T, D/H)``. Returns a view where possible (no copy).
    """
    n_heads = positive_int("n_heads", n_heads)
    numpy_in = not is_torch(x)
    x = _tensor("x", x)
    shape = _shape(x)
    if len(shape) < 2:
        raise ValueError(f"expected x of shape (B, T, D), got {shape}")
    d_model = shape[-1]
    if d_model % n_heads:
        raise ValueError(
            f"expected the model size D={d_model} (last axis of x, shape {shape}) to be divisible by n_heads={n_heads}"
        )
    x = x.reshape(*shape[:-1], n_heads, d_model // n_heads)
    return _as_given(x.transpose(-3, -2), numpy_in)


def merge_heads(x: Array) -> Array:
    """``(B, H, T, d_head) -> (B, T, H*d_head)``: the inverse of :func:`split_heads`.

    Swap the ``H`` and ``T`` axes back, then concatenate the heads of each token (a reshape).
    Any leading axes work, ``(..., H, T, d_head) -> (..., T, H*d_head)``.
    """
    numpy_in = not is_torch(x)
    x = _tensor("x", x)
    shape = _shape(x)
    if len(shape) < 3:
        raise ValueError(f"expected x of shape (B, H, T, d_head), got {shape}")
    n_heads, seq_len, d_head = shape[-3:]
    return _as_given(x.transpose(-3, -2).reshape(*shape[:-3], seq_len, n_heads * d_head), numpy_in)


# --------------------------------------------------------------------------------------------
# Multi-head attention


@dataclass(frozen=True)
class AttentionParams:
    """The weights of a multi-head attention layer (row-vector convention, ``x @ W + b``).

    ``W_q, W_k, W_v, W_o``: ``(D, D)``; ``b_q, b_k, b_v, b_o``: ``(D,)``. All numpy or all torch.
    Heads are not separate parameters: head ``h`` uses columns ``h*D/H ... (h+1)*D/H - 1`` of
    ``W_q, W_k, W_v`` (see :func:`split_heads`) and rows ``h*D/H ...`` of ``W_o``.

    Constructors: :meth:`random` (seeded numpy), :meth:`from_torch_multihead` (a
    ``torch.nn.MultiheadAttention``), :meth:`from_linears` (four ``nn.Linear``, as Hugging Face's
    ``q_lin, k_lin, v_lin, out_lin``). The torch constructors return views of the module's
    parameters, so gradients flow back to them. Converters: :meth:`to_numpy`, :meth:`to_torch`,
    :meth:`to_torch_multihead`.
    """

    W_q: Array
    b_q: Array
    W_k: Array
    b_k: Array
    W_v: Array
    b_v: Array
    W_o: Array
    b_o: Array

    def __post_init__(self) -> None:
        kinds = {is_torch(getattr(self, f.name)) for f in fields(self)}
        if len(kinds) != 1:
            raise TypeError("expected the AttentionParams to be all numpy arrays or all torch tensors, got a mix")
        d_model = _shape(self.W_q)[0] if len(_shape(self.W_q)) == 2 else None
        for name in ("W_q", "W_k", "W_v", "W_o"):
            shape = _shape(getattr(self, name))
            if d_model is None:
                raise ValueError(f"expected {name} of shape (D, D), got {shape}")
            if shape != (d_model, d_model):
                raise ValueError(f"expected {name} of shape (D, D)=({d_model}, {d_model}), got {shape}")
        for name in ("b_q", "b_k", "b_v", "b_o"):
            shape = _shape(getattr(self, name))
            if shape != (d_model,):
                raise ValueError(f"expected {name} of shape (D,)=({d_model},), got {shape}")

    @property
    def d_model(self) -> int:
        """``D``, the model size."""
        return _shape(self.W_q)[0]

    @classmethod
    def random(cls, d_model: int, seed: int | np.random.Generator = 0, *, bias: bool = True) -> "AttentionParams":
        """Seeded float64 numpy weights: ``W`` uniform in ±1/sqrt(D) (torch's ``nn.Linear`` init),
        biases likewise (zeros when ``bias=False``)."""
        d_model = positive_int("d_model", d_model)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        bound = 1.0 / math.sqrt(d_model)
        arrays = {}
        for name in ("q", "k", "v", "o"):
            arrays[f"W_{name}"] = rng.uniform(-bound, bound, size=(d_model, d_model))
            arrays[f"b_{name}"] = rng.uniform(-bound, bound, size=d_model) if bias else np.zeros(d_model)
        return cls(**arrays)

    @classmethod
    def from_linears(cls, q_lin, k_lin, v_lin, out_lin) -> "AttentionParams":
        """From four ``torch.nn.Linear(D, D)`` (``weight (D_out, D_in) = W.T``): ``W = weight.T``.

        Tensors are views of the modules' parameters (gradients flow back; no copy). A linear
        without bias gets a zero bias.
        """
        arrays = {}
        for name, linear in zip(("q", "k", "v", "o"), (q_lin, k_lin, v_lin, out_lin)):
            weight = linear.weight
            arrays[f"W_{name}"] = weight.T
            arrays[f"b_{name}"] = (
                linear.bias
                if linear.bias is not None
                else torch.zeros(weight.shape[0], dtype=weight.dtype, device=weight.device)
            )
        return cls(**arrays)

    @classmethod
    def from_torch_multihead(cls, module: "torch.nn.MultiheadAttention") -> "AttentionParams":
        """From a ``torch.nn.MultiheadAttention`` with equal query/key/value sizes.

        Torch stacks the input projections as ``in_proj_weight = [W_q.T; W_k.T; W_v.T]`` of shape
        ``(3D, D)`` and ``in_proj_bias = [b_q; b_k; b_v]``; ``out_proj`` is an ``nn.Linear``.
        Tensors are views of the module's parameters.
        """
        if module.in_proj_weight is None:
            raise ValueError("expected a MultiheadAttention with one in_proj_weight (equal q/k/v sizes)")
        d_model = module.embed_dim
        w_q, w_k, w_v = module.in_proj_weight.split(d_model, dim=0)
        if module.in_proj_bias is not None:
            b_q, b_k, b_v = module.in_proj_bias.split(d_model, dim=0)
        else:
            b_q = b_k = b_v = torch.zeros(d_model, dtype=w_q.dtype, device=w_q.device)
        out = module.out_proj
        b_o = out.bias if out.bias is not None else torch.zeros(d_model, dtype=w_q.dtype, device=w_q.device)
        return cls(W_q=w_q.T, b_q=b_q, W_k=w_k.T, b_k=b_k, W_v=w_v.T, b_v=b_v, W_o=out.weight.T, b_o=b_o)

    def to_numpy(self) -> "AttentionParams":
        """float64 numpy copies (detached from any autograd graph)."""
        return AttentionParams(
            **{
                f.name: (
                    getattr(self, f.name).detach().cpu().double().numpy().copy()
                    if is_torch(getattr(self, f.name))
                    else np.array(getattr(self, f.name), dtype=np.float64)
                )
                for f in fields(self)
            }
        )

    def to_torch(self, dtype: "torch.dtype | None" = None) -> "AttentionParams":
        """Torch tensors (float64 by default, from numpy); tensors already torch are only cast."""
        dtype = torch.float64 if dtype is None else dtype
        return AttentionParams(**{f.name: torch.as_tensor(getattr(self, f.name)).to(dtype) for f in fields(self)})

    def to_torch_multihead(self, n_heads: int, dtype: "torch.dtype | None" = None) -> "torch.nn.MultiheadAttention":
        """A ``torch.nn.MultiheadAttention(D, n_heads, batch_first=True)`` (float64 by default)
        holding these weights: ``in_proj_weight = [W_q.T; W_k.T; W_v.T]``, ``out_proj.weight = W_o.T``.

        ``module(x, x, x, attn_mask=~mask, need_weights=True, average_attn_weights=False)`` then
        computes :func:`multi_head_attention` (torch's ``attn_mask`` is True = *blocked*).
        """
        dtype = torch.float64 if dtype is None else dtype
        n_heads = positive_int("n_heads", n_heads)
        d_model = self.d_model
        if d_model % n_heads:
            raise ValueError(f"expected the model size D={d_model} to be divisible by n_heads={n_heads}")
        p = self.to_torch(dtype)
        module = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True, dtype=dtype)
        with torch.no_grad():
            module.in_proj_weight.copy_(torch.cat([p.W_q.T, p.W_k.T, p.W_v.T], dim=0))
            module.in_proj_bias.copy_(torch.cat([p.b_q, p.b_k, p.b_v]))
            module.out_proj.weight.copy_(p.W_o.T)
            module.out_proj.bias.copy_(p.b_o)
        return module


def attention_param_count(d_model: int, *, bias: bool = True) -> int:
    """Parameters of a multi-head attention layer: ``4 * D * D`` weights ``+ 4 * D`` biases.

    The number of heads does not change it: the heads share the ``D x D`` projections, each using
    ``D/H`` of their columns. Equal to the count of ``torch.nn.MultiheadAttention(D, H)``.
    """
    d_model = positive_int("d_model", d_model)
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def _project(x: torch.Tensor, W: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``x @ W + b``, as one fused ``linear`` call on ``W.T`` (the ``nn.Linear`` weight, no copy)."""
    return torch.nn.functional.linear(x, W.mT, b)


def multi_head_attention(
    x: Array,
    params: AttentionParams,
    n_heads: int,
    mask: Array | None = None,
    *,
    dropout: Callable[[Array], Array] | None = None,
) -> tuple[Array, Array]:
    """Multi-head self-attention of a batch of sequences.

    ``x (B, T, D)`` (any leading axes); ``params`` an :class:`AttentionParams` of the same kind
    (numpy or torch) and dtype; ``mask`` boolean, broadcastable to ``(B, H, T, T)``, ``True`` = may
    attend (``(T, T)`` causal, ``(B, 1, 1, T)`` padding); ``dropout`` applied to the weights.

    The shape journey: ``Q = x @ W_q + b_q (B, T, D)`` -> :func:`split_heads` ``(B, H, T, D/H)`` (same
    for K, V) -> :func:`scaled_dot_product_attention` per head, all heads at once ->
    :func:`merge_heads` ``(B, T, D)`` -> ``@ W_o + b_o``.

    Returns ``(output (B, T, D), weights (B, H, T, T))``.
    """
    if not isinstance(params, AttentionParams):
        raise TypeError(f"expected params to be an AttentionParams, got {type(params).__name__}")
    numpy_in = not is_torch(x)
    if is_torch(params.W_q) == numpy_in:
        kind = "numpy arrays" if numpy_in else "torch tensors"
        raise TypeError(f"expected params of the same kind as x ({kind}): use params.to_torch() / .to_numpy()")
    names = [f.name for f in fields(params)]
    x, *weights = _tensors(x=x, **{name: getattr(params, name) for name in names})
    p = dict(zip(names, weights))
    shape = _shape(x)
    if len(shape) < 2 or shape[-1] != params.d_model:
        raise ValueError(f"expected x of shape (B, T, D={params.d_model}), got {shape}")
    if numpy_in and is_torch(mask):
        raise TypeError("expected mask to be a numpy array like x, got a torch tensor")
    q = split_heads(_project(x, p["W_q"], p["b_q"]), n_heads)  # (B, H, T, D/H)
    k = split_heads(_project(x, p["W_k"], p["b_k"]), n_heads)
    v = split_heads(_project(x, p["W_v"], p["b_v"]), n_heads)
    context, weights = scaled_dot_product_attention(q, k, v, mask, dropout=dropout)  # (B, H, T, D/H), (B, H, T, T)
    return _as_given(_project(merge_heads(context), p["W_o"], p["b_o"]), numpy_in), _as_given(weights, numpy_in)
