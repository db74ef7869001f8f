"""Model sizes: the hyperparameters and parameter counts of the course's models, read from their configs.

The cheat sheet's table compares five models: the running example of lessons 01–06, the course's
teacher (:func:`course_utils.models.teacher_config`), the course's student (a DistilBERT with half
the teacher's layers, lesson 07), DistilBERT-base and BERT-base (the defaults of ``transformers``'
``DistilBertConfig`` and ``BertConfig``, which are ``distilbert-base-uncased``'s and
``bert-base-uncased``'s sizes). Every number comes from a config object, none is typed in.

Parameter counts are given by formula (:func:`encoder_parameter_count`: the embeddings plus the
layers, no pooler and no task head) and checked in the tests against the models ``transformers``
builds from the same configs (:func:`instantiated_parameter_count`, on the ``meta`` device, which
allocates no memory).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from .encoder_pieces import encoder_layer_param_count

NOT_APPLICABLE = "–"


@dataclass(frozen=True)
class ModelSizes:
    """The sizes of one model, under the course's names (``None`` where the model has no such size).

    ``d_ff`` is the feed-forward width ``F``; ``positions`` says how positions are encoded;
    ``parameters_per_layer`` counts one encoder layer, ``parameters`` the embeddings and all the
    layers (no pooler, no task head).
    """

    name: str
    n_layers: int
    d_model: int
    n_heads: int
    d_ff: int
    activation: str
    vocab_size: int | None
    max_positions: int | None
    positions: str
    parameters_per_layer: int
    parameters: int | None

    @property
    def d_head(self) -> int:
        """``D / H``, the width of one head."""
        return self.d_model // self.n_heads


# Rows of the table: (label, attribute), in the order of the cheat sheet.
ROWS = (
    ("layers", "n_layers"),
    ("d_model (D)", "d_model"),
    ("heads (H)", "n_heads"),
    ("d_head (D / H)", "d_head"),
    ("feed-forward width (F)", "d_ff"),
    ("activation", "activation"),
    ("vocabulary (V)", "vocab_size"),
    ("max positions", "max_positions"),
    ("positions", "positions"),
    ("parameters per layer", "parameters_per_layer"),
    ("parameters (embeddings + layers)", "parameters"),
)


def _is_distilbert(config: Any) -> bool:
    return getattr(config, "model_type", None) == "distilbert"


def _check_config(config: Any) -> None:
    if getattr(config, "model_type", None) not in ("bert", "distilbert"):
        raise TypeError(
            f"expected a transformers BertConfig or DistilBertConfig, got {type(config).__name__} "
            f"(model_type={getattr(config, 'model_type', None)!r})"
        )


def embedding_parameter_count(config: Any) -> int:
    """Parameters of the embeddings of a BERT or DistilBERT config.

    Token table ``V x D``, position table ``P x D`` (DistilBERT's sinusoidal table is a parameter
    tensor too), BERT's token-type table ``type_vocab_size x D``, and a LayerNorm (``2 D``).
    """
    _check_config(config)
    if _is_distilbert(config):
        d, token_types = config.dim, 0
    else:
        d, token_types = config.hidden_size, config.type_vocab_size
    return (config.vocab_size + config.max_position_embeddings + token_types) * d + 2 * d


def sizes_of(name: str, config: Any) -> ModelSizes:
    """The :class:`ModelSizes` of a ``transformers`` ``BertConfig`` or ``DistilBertConfig``."""
    _check_config(config)
    if _is_distilbert(config):
        n_layers, d_model, n_heads, d_ff = config.n_layers, config.dim, config.n_heads, config.hidden_dim
        activation = config.activation
        positions = "sinusoidal" if config.sinusoidal_pos_embds else "learned"
    else:
        n_layers, d_model, n_heads = config.num_hidden_layers, config.hidden_size, config.num_attention_heads
        d_ff, activation = config.intermediate_size, config.hidden_act
        kind = getattr(config, "position_embedding_type", None) or "absolute"
        positions = "learned" if kind == "absolute" else kind
    per_layer = encoder_layer_param_count(d_model, d_ff)
    return ModelSizes(
        name=name,
        n_layers=n_layers,
        d_model=d_model,
        n_heads=n_heads,
        d_ff=d_ff,
        activation=str(activation),
        vocab_size=config.vocab_size,
        max_positions=config.max_position_embeddings,
        positions=positions,
        parameters_per_layer=per_layer,
        parameters=embedding_parameter_count(config) + n_layers * per_layer,
    )


def encoder_parameter_count(config: Any) -> int:
    """Parameters of a BERT or DistilBERT encoder: embeddings plus layers (no pooler, no task head)."""
    return sizes_of("", config).parameters


def instantiated_parameter_count(config: Any) -> int:
    """The same count, by building ``BertModel`` (without its pooler) or ``DistilBertModel`` on the
    ``meta`` device and summing the sizes of its parameters."""
    import torch
    from transformers import BertModel, DistilBertModel

    _check_config(config)
    with torch.device("meta"):
        model = DistilBertModel(config) if _is_distilbert(config) else BertModel(config, add_pooling_layer=False)
    return sum(p.numel() for p in model.parameters())


def running_example_sizes() -> ModelSizes:
    """The running example of lessons 01–06: its width, heads and layers from
    :func:`course_utils.data.running_example`, a feed-forward width of ``4 D`` (lesson 01's) and
    no vocabulary of its own (its five vectors are given, not looked up)."""
    from .data import running_example

    example = running_example()
    d_ff = 4 * example.d_model
    return ModelSizes(
        name="running example",
        n_layers=example.n_layers,
        d_model=example.d_model,
        n_heads=example.n_heads,
        d_ff=d_ff,
        activation=NOT_APPLICABLE,
        vocab_size=None,
        max_positions=None,
        positions=NOT_APPLICABLE,
        parameters_per_layer=encoder_layer_param_count(example.d_model, d_ff),
        parameters=None,
    )


def course_configs(tokenizer=None) -> dict[str, Any]:
    """The configs of the table's models but the running example, by name.

    The student is lesson 07's: a DistilBERT with the teacher's sizes and one layer out of two
    (:func:`course_utils.students.student_config`). ``tokenizer`` sizes the course's teacher and
    student (default: the bundled tokenizer).
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM, DistilBertConfig

    from . import models, students, tokenization

    tokenizer = tokenizer if tokenizer is not None else tokenization.load_bundled_tokenizer()
    teacher = models.teacher_config(tokenizer)
    with torch.device("meta"):  # the architecture only: no memory, no weights
        teacher_model = BertForMaskedLM(teacher)
    student = students.student_config(teacher_model, n_layers=teacher.num_hidden_layers // 2)
    return {
        "course teacher": teacher,
        "course student (lesson 07)": student,
        "DistilBERT-base": DistilBertConfig(),
        "BERT-base": BertConfig(),
    }


# Lesson 08's ladder of DistilBERT sizes: (d_model, layers, heads); the feed-forward width is 4 D.
DISTILBERT_LADDER = {"tiny": (256, 2, 4), "small": (512, 4, 8), "base": (768, 6, 12)}


def distilbert_ladder(vocab_size: int | None = None) -> dict[str, Any]:
    """``DistilBertConfig``s of :data:`DISTILBERT_LADDER`, by name; ``base`` is DistilBERT-base itself.

    ``vocab_size`` defaults to DistilBERT's own (30,522); the course's tokenizer has 1,500.
    """
    from transformers import DistilBertConfig

    if vocab_size is not None and (isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 1):
        raise ValueError(f"expected vocab_size to be a positive integer or None, got {vocab_size!r}")
    extra = {} if vocab_size is None else {"vocab_size": vocab_size}
    return {
        name: DistilBertConfig(dim=d, n_layers=layers, n_heads=heads, hidden_dim=4 * d, **extra)
        for name, (d, layers, heads) in DISTILBERT_LADDER.items()
    }


def hyperparameter_table(tokenizer=None) -> list[ModelSizes]:
    """The five models of the cheat sheet, smallest first."""
    return [running_example_sizes()] + [sizes_of(name, config) for name, config in course_configs(tokenizer).items()]


def _format(value: Any) -> str:
    if value is None:
        return NOT_APPLICABLE
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table_rows(models: list[ModelSizes]) -> list[list[str]]:
    """The table as text cells: one row per size (:data:`ROWS`), one column per model."""
    return [[_format(getattr(m, attribute)) for m in models] for _, attribute in ROWS]


def html_table(models: list[ModelSizes], caption: str = "") -> str:
    """The table as HTML: sizes down, models across, numbers right-aligned."""
    if not models:
        raise ValueError("expected at least one model, got none")
    head = "".join(f'<th scope="col">{html.escape(m.name)}</th>' for m in models)
    body = []
    for (label, _), cells in zip(ROWS, table_rows(models)):
        values = "".join(f'<td style="text-align: right">{html.escape(cell)}</td>' for cell in cells)
        body.append(f'<tr><th scope="row">{html.escape(label)}</th>{values}</tr>')
    caption_html = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return (
        f'<table class="table course-sizes">{caption_html}<thead><tr><th scope="col">size</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )
