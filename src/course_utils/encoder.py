"""A DistilBERT encoder written from scratch in torch, equal to Hugging Face's (lesson 06).

Read from top to bottom, this module is the whole model:

1. :class:`EncoderConfig` — the sizes, one field per field of ``transformers.DistilBertConfig``;
2. :class:`Embeddings` — token vectors plus position vectors, then LayerNorm and dropout;
3. :class:`MultiHeadSelfAttention` — four linear maps around the attention functions of
   :mod:`course_utils.attention` (lessons 04–05), which are not re-written here;
4. :class:`FeedForward` — expand (``dim -> hidden_dim``, ×4), exact GELU, compress;
5. :class:`TransformerBlock` — attention and feed-forward, each in a post-LayerNorm residual
   ``LayerNorm(x + sublayer(x))``, as in BERT and DistilBERT;
6. :class:`Transformer` — the stack of blocks; :class:`DistilBertEncoder` — embeddings + stack.

**The names are Hugging Face's.** Every module and parameter is named as in
``transformers.models.distilbert.modeling_distilbert`` (``embeddings.word_embeddings``,
``transformer.layer.0.attention.q_lin``, ``sa_layer_norm``, ``ffn.lin1``, ...), so a state dict
moves between the two models unchanged: :func:`~course_utils.hf_weights.load_hf_state_dict` is the one loader, used by
:meth:`DistilBertEncoder.from_hf`; :meth:`DistilBertEncoder.to_hf` goes the other way. The tests
check that every hidden state, every attention map and every gradient equals Hugging Face's.

**BERTs too.** :meth:`DistilBertEncoder.from_bert` reads a ``transformers.BertModel`` (the course's
teacher is one) through :func:`~course_utils.hf_weights.bert_to_distilbert_state_dict`: BERT's names mapped to these, the
pooler left out, the token-type embedding of segment 0 folded into the position table, and any
chosen subset of its layers (DistilBERT's student was initialised from every other layer of BERT).

The weight mapping lives in :mod:`course_utils.hf_weights`; lesson 06's pieces as plain functions
(the references of its exercises: :func:`~course_utils.encoder_pieces.layer_norm` and the others) in
:mod:`course_utils.encoder_pieces`.

**One difference by design.** With ``sinusoidal_pos_embds=True`` the position table here is
frozen (``requires_grad=False``), as in the original DistilBERT code; recent ``transformers``
versions leave it trainable. The values, and so the outputs, are the same.

Axis names used in the docstrings: ``B`` batch, ``T`` tokens per sequence, ``D`` model width
(``dim``), ``H`` heads, ``D/H`` width of one head, ``F`` feed-forward width (``hidden_dim``),
``V`` vocabulary size, ``P`` number of positions (``max_position_embeddings``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import torch
from torch import nn
from torch.nn import functional as F

from .attention import merge_heads, scaled_dot_product_attention, split_heads
from .hf_weights import bert_to_distilbert_state_dict, check_layers, load_hf_state_dict
from .masking import padding_mask
from .positional import sinusoidal_encoding
from .validation import positive_int, positive_number, same_shape, token_ids

if TYPE_CHECKING:  # transformers is imported lazily: only the Hugging Face bridges need it
    import transformers

__all__ = [
    "ACTIVATIONS",
    "DistilBertEncoder",
    "Embeddings",
    "EncoderConfig",
    "EncoderOutput",
    "FeedForward",
    "MultiHeadSelfAttention",
    "Transformer",
    "TransformerBlock",
]

LAYER_NORM_EPS = 1e-12  # BERT's and DistilBERT's; torch's default is 1e-5 (lesson 06 says why)

# The activations of the feed-forward network, by their Hugging Face names. "gelu" is the exact
# GELU, x * Phi(x) with the erf; "gelu_pytorch_tanh" is the tanh approximation.
ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "gelu": F.gelu,
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "relu": F.relu,
}


# --------------------------------------------------------------------------------------------
# Configuration


@dataclass(frozen=True)
class EncoderConfig:
    """The sizes of a DistilBERT encoder; each field is the ``DistilBertConfig`` field of that name.

    The defaults are ``distilbert-base-uncased``'s. ``DistilBertConfig`` has a few more fields
    that only its task heads read (``qa_dropout``, ``seq_classif_dropout``); they are not here.
    """

    vocab_size: int = 30522  # V: rows of the token embedding table
    max_position_embeddings: int = 512  # P: the longest input, in tokens
    sinusoidal_pos_embds: bool = False  # fixed sinusoidal positions instead of learned ones
    n_layers: int = 6  # transformer blocks
    n_heads: int = 12  # H: attention heads per block
    dim: int = 768  # D: width of every hidden state
    hidden_dim: int = 3072  # F: width inside the feed-forward network (4 * D)
    dropout: float = 0.1  # on the embeddings and on the feed-forward output
    attention_dropout: float = 0.1  # on the attention weights
    activation: str = "gelu"  # of the feed-forward network, a key of ACTIVATIONS
    initializer_range: float = 0.02  # std of the normal initialisation of weights
    pad_token_id: int | None = 0  # its embedding starts at zero and gets no gradient

    def __post_init__(self) -> None:
        for name in ("vocab_size", "max_position_embeddings", "n_layers", "n_heads", "dim", "hidden_dim"):
            positive_int(name, getattr(self, name))
        if self.dim % self.n_heads:
            raise ValueError(
                f"expected n_heads to divide dim, got dim={self.dim} and n_heads={self.n_heads} "
                f"({self.dim} / {self.n_heads} = {self.dim / self.n_heads:g} is not a whole head width)"
            )
        for name in ("dropout", "attention_dropout"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0 <= value < 1:
                raise ValueError(f"expected {name} to be a probability in [0, 1), got {value!r}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"expected activation to be one of {sorted(ACTIVATIONS)}, got {self.activation!r}")
        positive_number("initializer_range", self.initializer_range)
        if self.pad_token_id is not None and not 0 <= self.pad_token_id < self.vocab_size:
            raise ValueError(
                f"expected pad_token_id to be None or an id in [0, {self.vocab_size}), got {self.pad_token_id!r}"
            )

    @property
    def head_dim(self) -> int:
        """``D/H``: the width of one attention head."""
        return self.dim // self.n_heads

    @classmethod
    def from_hf(cls, config: "transformers.DistilBertConfig") -> "EncoderConfig":
        """The same sizes as a ``transformers.DistilBertConfig`` (read field by field)."""
        return cls(**{field.name: getattr(config, field.name) for field in dataclasses.fields(cls)})

    @classmethod
    def from_bert(cls, config: "transformers.BertConfig", n_layers: int | None = None) -> "EncoderConfig":
        """The sizes of a ``transformers.BertConfig``, under DistilBERT's names, with ``n_layers`` blocks.

        ``hidden_size`` -> ``dim``, ``num_attention_heads`` -> ``n_heads``, ``intermediate_size`` ->
        ``hidden_dim``, ``hidden_dropout_prob`` -> ``dropout``, ``attention_probs_dropout_prob`` ->
        ``attention_dropout``, ``hidden_act`` -> ``activation``; ``n_layers`` defaults to
        ``num_hidden_layers``. BERT features this encoder has not (another LayerNorm eps, relative
        positions, a decoder) raise ``ValueError``.
        """
        eps = getattr(config, "layer_norm_eps", LAYER_NORM_EPS)
        if eps != LAYER_NORM_EPS:
            raise ValueError(f"expected layer_norm_eps={LAYER_NORM_EPS} (BERT's and DistilBERT's), got {eps!r}")
        positions = getattr(config, "position_embedding_type", None) or "absolute"
        if positions != "absolute":
            raise ValueError(
                f"expected absolute (learned) position embeddings, got position_embedding_type={positions!r}"
            )
        if getattr(config, "is_decoder", False) or getattr(config, "add_cross_attention", False):
            raise ValueError("expected a BERT encoder, got a config with is_decoder or add_cross_attention set")
        return cls(
            vocab_size=config.vocab_size,
            max_position_embeddings=config.max_position_embeddings,
            sinusoidal_pos_embds=False,
            n_layers=config.num_hidden_layers if n_layers is None else n_layers,
            n_heads=config.num_attention_heads,
            dim=config.hidden_size,
            hidden_dim=config.intermediate_size,
            dropout=config.hidden_dropout_prob,
            attention_dropout=config.attention_probs_dropout_prob,
            activation=config.hidden_act,
            initializer_range=config.initializer_range,
            pad_token_id=config.pad_token_id,
        )

    def to_hf(self, **kwargs: Any) -> "transformers.DistilBertConfig":
        """A ``transformers.DistilBertConfig`` with these sizes; ``kwargs`` are passed on to it."""
        from transformers import DistilBertConfig

        return DistilBertConfig(**dataclasses.asdict(self), **kwargs)


# --------------------------------------------------------------------------------------------
# The modules, in the order the data flows through them


class Embeddings(nn.Module):
    """Token ids to vectors: ``LayerNorm(word_embeddings[ids] + position_embeddings[0..T-1])``.

    ``(B, T)`` integer ids -> ``(B, T, D)``. DistilBERT has no token-type (segment) embeddings.
    """

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.dim, padding_idx=config.pad_token_id)  # (V, D)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.dim)  # (P, D)
        if config.sinusoidal_pos_embds:  # the fixed table of lesson 03, frozen
            table = sinusoidal_encoding(config.max_position_embeddings, config.dim)  # (P, D) numpy
            with torch.no_grad():
                self.position_embeddings.weight.copy_(torch.as_tensor(table))
            self.position_embeddings.weight.requires_grad_(False)
        self.LayerNorm = nn.LayerNorm(config.dim, eps=LAYER_NORM_EPS)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        """``input_ids (B, T)`` -> embeddings ``(B, T, D)``."""
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)  # (T,): 0, 1, ..., T-1
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions)  # (B, T, D) + (T, D)
        return self.dropout(self.LayerNorm(x))  # (B, T, D)


class MultiHeadSelfAttention(nn.Module):
    """Every token looks at every (allowed) token, in ``H`` heads of width ``D/H``.

    ``q_lin``, ``k_lin``, ``v_lin`` project ``(B, T, D)`` to queries, keys and values; the heads
    are split, attention runs in each head (:func:`course_utils.attention.scaled_dot_product_attention`),
    the heads are merged back and ``out_lin`` mixes them: ``(B, T, D)`` -> ``(B, T, D)``.
    """

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.n_heads = config.n_heads
        self.q_lin = nn.Linear(config.dim, config.dim)
        self.k_lin = nn.Linear(config.dim, config.dim)
        self.v_lin = nn.Linear(config.dim, config.dim)
        self.out_lin = nn.Linear(config.dim, config.dim)
        self.dropout = nn.Dropout(config.attention_dropout)  # on the attention weights

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``x (B, T, D)``, ``mask`` bool ``(B, 1, 1, T)`` (True = may attend) or None.

        Returns the output ``(B, T, D)`` and the attention weights ``(B, H, T, T)``.
        """
        queries = split_heads(self.q_lin(x), self.n_heads)  # (B, T, D) -> (B, H, T, D/H)
        keys = split_heads(self.k_lin(x), self.n_heads)  # (B, H, T, D/H)
        values = split_heads(self.v_lin(x), self.n_heads)  # (B, H, T, D/H)
        dropout = self.dropout if self.training else None
        heads, weights = scaled_dot_product_attention(queries, keys, values, mask, dropout=dropout)
        # heads (B, H, T, D/H), weights (B, H, T, T)
        return self.out_lin(merge_heads(heads)), weights  # (B, H, T, D/H) -> (B, T, D)


class FeedForward(nn.Module):
    """The same two-layer network applied to every token: ``(B, T, D) -> (B, T, F) -> (B, T, D)``."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.lin1 = nn.Linear(config.dim, config.hidden_dim)  # expand, D -> F
        self.activation = ACTIVATIONS[config.activation]
        self.lin2 = nn.Linear(config.hidden_dim, config.dim)  # compress, F -> D
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x (B, T, D)`` -> ``(B, T, D)``."""
        return self.dropout(self.lin2(self.activation(self.lin1(x))))  # (B, T, F) inside


class TransformerBlock(nn.Module):
    """One encoder block, post-LayerNorm (BERT, DistilBERT): normalise *after* each residual sum.

    ``h = sa_layer_norm(x + attention(x))`` then ``output_layer_norm(h + ffn(h))``;
    ``(B, T, D)`` -> ``(B, T, D)``. Pre-LN blocks (GPT-2 and later) normalise before instead.
    """

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.attention = MultiHeadSelfAttention(config)
        self.sa_layer_norm = nn.LayerNorm(config.dim, eps=LAYER_NORM_EPS)
        self.ffn = FeedForward(config)
        self.output_layer_norm = nn.LayerNorm(config.dim, eps=LAYER_NORM_EPS)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``x (B, T, D)``, ``mask (B, 1, 1, T)`` -> new hidden states ``(B, T, D)``, weights ``(B, H, T, T)``."""
        attended, weights = self.attention(x, mask)  # (B, T, D), (B, H, T, T)
        h = self.sa_layer_norm(x + attended)  # residual, then LayerNorm
        return self.output_layer_norm(h + self.ffn(h)), weights  # residual, then LayerNorm


class Transformer(nn.Module):
    """The stack: ``n_layers`` blocks, one after the other (``self.layer``, Hugging Face's name)."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.layer = nn.ModuleList(TransformerBlock(config) for _ in range(config.n_layers))

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]:
        """``x (B, T, D)`` -> the output of every block ``(B, T, D)`` and its weights ``(B, H, T, T)``."""
        hidden_states, attentions = [], []
        for block in self.layer:
            x, weights = block(x, mask)
            hidden_states.append(x)
            attentions.append(weights)
        return tuple(hidden_states), tuple(attentions)


@dataclass
class EncoderOutput:
    """What :class:`DistilBertEncoder` returns (the fields of Hugging Face's ``BaseModelOutput``).

    ``last_hidden_state``: ``(B, T, D)``; ``hidden_states``: ``n_layers + 1`` tensors ``(B, T, D)``,
    the embeddings' output then each block's; ``attentions``: ``n_layers`` tensors ``(B, H, T, T)``,
    ``attentions[l][b, h, i, j]`` = how much token ``i`` looks at token ``j`` in head ``h`` of block ``l``.
    """

    last_hidden_state: torch.Tensor
    hidden_states: tuple[torch.Tensor, ...]
    attentions: tuple[torch.Tensor, ...]


class DistilBertEncoder(nn.Module):
    """DistilBERT's encoder (Hugging Face's ``DistilBertModel``): embeddings, then the stack of blocks.

    ``encoder(input_ids (B, T), attention_mask (B, T) or None)`` -> :class:`EncoderOutput`. Every
    hidden state and attention map is returned (they are computed anyway).
    """

    def __init__(self, config: EncoderConfig):
        super().__init__()
        if not isinstance(config, EncoderConfig):
            raise TypeError(
                f"expected an EncoderConfig (EncoderConfig.from_hf converts a DistilBertConfig), "
                f"got {type(config).__name__}"
            )
        self.config = config
        self.embeddings = Embeddings(config)
        self.transformer = Transformer(config)
        self.apply(self._init_weights)

    def _init_weights(self, module: nn.Module) -> None:
        """Hugging Face's initialisation: normal(0, initializer_range) weights, zero biases, LayerNorm 1/0."""
        std = self.config.initializer_range
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding) and module.weight.requires_grad:  # not the frozen sinusoids
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.padding_idx is not None:
                with torch.no_grad():
                    module.weight[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> EncoderOutput:
        """``input_ids (B, T)`` integer ids; ``attention_mask (B, T)`` 1 = real token, 0 = padding."""
        input_ids, attention_mask = self._check_inputs(input_ids, attention_mask)
        mask = None if attention_mask is None else padding_mask(attention_mask)  # (B, 1, 1, T), True = attend
        embedded = self.embeddings(input_ids)  # (B, T, D)
        block_outputs, attentions = self.transformer(embedded, mask)  # n_layers x (B, T, D), (B, H, T, T)
        return EncoderOutput(
            last_hidden_state=block_outputs[-1],
            hidden_states=(embedded, *block_outputs),
            attentions=attentions,
        )

    def _check_inputs(self, input_ids, attention_mask) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The inputs as tensors on the model's device, or an error that says what was expected.

        (The values of ``attention_mask``, 0 or 1, are checked by :func:`course_utils.masking.padding_mask`.)
        """
        input_ids = token_ids("input_ids", _as_tensor("input_ids", input_ids), self.config.vocab_size)
        if input_ids.ndim != 2:
            hint = " (one sequence? add a batch axis: input_ids[None])" if input_ids.ndim == 1 else ""
            raise ValueError(
                f"expected input_ids of shape (B, T), a 2-D tensor, got shape {tuple(input_ids.shape)}{hint}"
            )
        batch, length = input_ids.shape
        if batch == 0 or length == 0:
            raise ValueError(
                f"expected at least one sequence of at least one token, got shape {tuple(input_ids.shape)}"
            )
        limit = self.config.max_position_embeddings
        if length > limit:
            raise ValueError(
                f"expected at most max_position_embeddings={limit} tokens per sequence, got {length}: "
                f"this model has no position vector beyond {limit}; truncate the input, e.g. "
                f"input_ids[:, :{limit}] or tokenizer(..., truncation=True, max_length={limit})"
            )
        device = self.embeddings.word_embeddings.weight.device
        input_ids = input_ids.to(device=device, dtype=torch.long)
        if attention_mask is None:
            return input_ids, None
        attention_mask = same_shape("attention_mask", _as_tensor("attention_mask", attention_mask), "input_ids", input_ids)
        return input_ids, attention_mask.to(device=device)

    # ----------------------------------------------------------------------------------------
    # Bridges to Hugging Face

    @classmethod
    def from_hf(cls, model: "transformers.PreTrainedModel") -> "DistilBertEncoder":
        """The encoder of a ``transformers.DistilBertModel`` (or of a ``DistilBertFor...`` model).

        Same config, same weights (copied, so the two models do not share memory).
        """
        from transformers import DistilBertModel

        base = model if isinstance(model, DistilBertModel) else getattr(model, "distilbert", None)
        if not isinstance(base, DistilBertModel):
            raise TypeError(
                f"expected a transformers DistilBertModel (or DistilBertFor...), got {type(model).__name__}"
            )
        parameter = next(base.parameters())
        encoder = cls(EncoderConfig.from_hf(base.config)).to(device=parameter.device, dtype=parameter.dtype)
        load_hf_state_dict(encoder, base.state_dict())
        return encoder.train(base.training)

    @classmethod
    def from_bert(cls, bert_model: "transformers.PreTrainedModel", layers=None) -> "DistilBertEncoder":
        """A DistilBERT encoder made of a BERT's weights (``BertModel``, ``BertForMaskedLM``, ...).

        ``layers``: the indices of the BERT layers to copy, in increasing order (default: all of
        them); block ``k`` of the encoder is BERT's layer ``layers[k]``. DistilBERT's student was
        initialised this way, from every other layer of BERT (Sanh et al., 2019). The names
        are mapped by :func:`bert_to_distilbert_state_dict`, which also folds BERT's token-type
        (segment) embedding of segment 0 into the position embeddings and leaves the pooler out. So,
        with all layers, the encoder computes what the BERT computes with ``token_type_ids`` all 0
        (one sentence per input), in eval mode; with ``layers``, what those BERT layers compute
        when run one after the other. Weights are copied; dtype, device and train/eval mode follow
        the BERT.
        """
        from transformers import BertModel

        base = bert_model if isinstance(bert_model, BertModel) else getattr(bert_model, "bert", None)
        if not isinstance(base, BertModel):
            raise TypeError(
                f"expected a transformers BertModel (or BertForMaskedLM, BertFor...), got {type(bert_model).__name__}"
            )
        layers = check_layers(layers, base.config.num_hidden_layers)
        parameter = next(base.parameters())
        config = EncoderConfig.from_bert(base.config, n_layers=len(layers))
        encoder = cls(config).to(device=parameter.device, dtype=parameter.dtype)
        load_hf_state_dict(encoder, bert_to_distilbert_state_dict(base.state_dict(), layers))
        return encoder.train(base.training)

    def to_hf_state_dict(self) -> dict[str, torch.Tensor]:
        """The weights under ``DistilBertModel``'s names (the same names: a copy of the state dict)."""
        return {name: tensor.detach().clone() for name, tensor in self.state_dict().items()}

    def to_hf(self, attn_implementation: str | None = "eager") -> "transformers.DistilBertModel":
        """A ``transformers.DistilBertModel`` with these weights (``load_state_dict(strict=True)``).

        ``attn_implementation`` "eager" (the default) lets it return attention weights; None lets
        ``transformers`` choose (usually "sdpa", faster, without weights).
        """
        from transformers import DistilBertModel

        kwargs = {} if attn_implementation is None else {"attn_implementation": attn_implementation}
        model = DistilBertModel(self.config.to_hf(**kwargs))
        parameter = next(self.parameters())
        model.to(device=parameter.device, dtype=parameter.dtype)
        model.load_state_dict(self.to_hf_state_dict(), strict=True)
        return model.train(self.training)


def _as_tensor(name: str, value) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    try:
        return torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"expected {name} to be a tensor (or array) of integers, got {type(value).__name__}") from None
