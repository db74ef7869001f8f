"""course_utils.sizes: the cheat sheet's table, its parameter counts against the models transformers builds."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import BertConfig, DistilBertConfig

from course_utils import sizes
from course_utils.data import running_example


@pytest.fixture(scope="module")
def table():
    return {m.name: m for m in sizes.hyperparameter_table()}


@pytest.mark.parametrize(
    "config",
    [
        BertConfig(),
        DistilBertConfig(),
        DistilBertConfig(sinusoidal_pos_embds=True, dim=8, n_heads=2, hidden_dim=24, n_layers=2, vocab_size=30),
        BertConfig(hidden_size=12, num_attention_heads=3, intermediate_size=20, num_hidden_layers=1, vocab_size=50,
                   max_position_embeddings=7, type_vocab_size=3),
    ],
    ids=["bert-base", "distilbert-base", "distilbert-sinusoidal", "bert-odd"],
)  # fmt: skip
def test_formula_counts_the_parameters_transformers_builds(config):
    assert sizes.encoder_parameter_count(config) == sizes.instantiated_parameter_count(config)


@settings(max_examples=10, deadline=None)
@given(
    heads=st.integers(1, 4),
    head_width=st.integers(1, 8),
    d_ff=st.integers(1, 40),
    layers=st.integers(1, 3),
    vocab=st.integers(5, 60),
    positions=st.integers(1, 20),
    distil=st.booleans(),
)
def test_formula_holds_for_any_size(heads, head_width, d_ff, layers, vocab, positions, distil):
    d = heads * head_width
    if distil:
        config = DistilBertConfig(
            dim=d,
            n_heads=heads,
            hidden_dim=d_ff,
            n_layers=layers,
            vocab_size=vocab,
            max_position_embeddings=positions,
            pad_token_id=0,
        )
    else:
        config = BertConfig(
            hidden_size=d,
            num_attention_heads=heads,
            intermediate_size=d_ff,
            num_hidden_layers=layers,
            vocab_size=vocab,
            max_position_embeddings=positions,
            pad_token_id=0,
        )
    assert sizes.encoder_parameter_count(config) == sizes.instantiated_parameter_count(config)


def test_the_published_base_models_have_their_published_parameter_counts():
    """bert-base-uncased's BertModel has 109,482,240 parameters with its pooler (D*D + D more than
    here); distilbert-base-uncased's DistilBertModel 66,362,880."""
    d = BertConfig().hidden_size
    assert sizes.encoder_parameter_count(BertConfig()) + d * d + d == 109_482_240
    assert sizes.encoder_parameter_count(DistilBertConfig()) == 66_362_880


def test_the_table_holds_five_models_read_from_their_configs(table):
    assert list(table) == [
        "running example",
        "course teacher",
        "course student (lesson 07)",
        "DistilBERT-base",
        "BERT-base",
    ]
    bert, distil = table["BERT-base"], table["DistilBERT-base"]
    assert (bert.n_layers, bert.d_model, bert.n_heads, bert.d_ff) == (12, 768, 12, 3072)
    assert (distil.n_layers, distil.d_model, distil.n_heads, distil.d_ff) == (6, 768, 12, 3072)
    assert bert.d_head == distil.d_head == 64
    assert bert.positions == distil.positions == "learned"


def test_the_student_is_a_distilbert_with_half_the_teachers_layers(table):
    teacher, student = table["course teacher"], table["course student (lesson 07)"]
    assert student.n_layers * 2 == teacher.n_layers
    for field in ("d_model", "n_heads", "d_ff", "vocab_size", "max_positions", "activation"):
        assert getattr(student, field) == getattr(teacher, field), field
    # A DistilBERT has no token-type embeddings: the student lacks the teacher's 2 x D of them.
    half = teacher.n_layers // 2
    assert teacher.parameters - student.parameters == half * teacher.parameters_per_layer + 2 * teacher.d_model


def test_the_running_example_row_matches_the_running_example_and_torch(table):
    example, row = running_example(), table["running example"]
    assert (row.n_layers, row.d_model, row.n_heads) == (example.n_layers, example.d_model, example.n_heads)
    layer = torch.nn.TransformerEncoderLayer(row.d_model, row.n_heads, row.d_ff)
    assert row.parameters_per_layer == sum(p.numel() for p in layer.parameters())
    assert row.parameters is None and row.vocab_size is None


def test_html_table_has_a_column_per_model_and_a_row_per_size(table):
    models = list(table.values())
    text = sizes.html_table(models, caption="Sizes <of models>")
    assert text.count('<th scope="col">') == len(models) + 1
    assert text.count('<th scope="row">') == len(sizes.ROWS)
    assert "<caption>Sizes &lt;of models&gt;</caption>" in text
    assert "108,891,648" in text and "–" in text


def test_table_rows_format_numbers_and_missing_values(table):
    rows = sizes.table_rows([table["running example"], table["BERT-base"]])
    labels = [label for label, _ in sizes.ROWS]
    assert rows[labels.index("vocabulary (V)")] == ["–", "30,522"]
    assert rows[labels.index("layers")] == ["2", "12"]


def test_bad_inputs_are_refused_with_a_message():
    with pytest.raises(TypeError, match="expected a transformers BertConfig or DistilBertConfig, got SimpleNamespace"):
        sizes.sizes_of("x", SimpleNamespace(model_type="gpt2"))
    with pytest.raises(ValueError, match="expected at least one model"):
        sizes.html_table([])


# --------------------------------------------------------------------------------------------
# Lesson 08's ladder of DistilBERT sizes


def test_distilbert_ladder_base_is_distilbert_base_and_the_counts_match_the_models_built():
    ladder = sizes.distilbert_ladder()
    assert list(ladder) == list(sizes.DISTILBERT_LADDER) == ["tiny", "small", "base"]
    base, reference = ladder["base"], DistilBertConfig()
    for field in ("dim", "n_layers", "n_heads", "hidden_dim", "vocab_size", "max_position_embeddings", "activation"):
        assert getattr(base, field) == getattr(reference, field), field
    for name, config in ladder.items():
        d, layers, heads = sizes.DISTILBERT_LADDER[name]
        assert (config.dim, config.n_layers, config.n_heads, config.hidden_dim) == (d, layers, heads, 4 * d)
        assert sizes.encoder_parameter_count(config) == sizes.instantiated_parameter_count(config), name
    counts = [sizes.encoder_parameter_count(c) for c in ladder.values()]
    assert counts == sorted(counts) and counts[-1] == 66_362_880


def test_distilbert_ladder_with_the_course_vocabulary():
    ladder = sizes.distilbert_ladder(vocab_size=1500)
    assert {config.vocab_size for config in ladder.values()} == {1500}
    config = ladder["tiny"]
    assert sizes.encoder_parameter_count(config) == sizes.instantiated_parameter_count(config)


@pytest.mark.parametrize("bad", [0, -5, 1.5, "1500", True])
def test_distilbert_ladder_refuses_a_bad_vocabulary_size(bad):
    with pytest.raises(ValueError, match="expected vocab_size to be a positive integer or None, got"):
        sizes.distilbert_ladder(vocab_size=bad)
