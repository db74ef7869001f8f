"""Lesson 02's mechanism pictures: WordPiece's greedy split (the steps give the tokenizer's own
pieces), a lookup as a one-hot row times the table, and the rows a backward pass moves (those
torch's gradient reaches)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from course_utils import data, figures, precision, rendering, tokenization
from course_utils.data import running_example
from course_utils.figures import boxes
from tests.test_figures_boxes import assert_fits, boxes_of


def test_the_greedy_split_gives_the_tokenizers_pieces_on_the_corpus(tokenizer):
    words = {w.lower() for s in data.corpus("validation")[:300] for w in s.words}
    words |= {"glorbiting", "unkindness", "unfriendliness", "xq", "zzzz"}
    for word in sorted(words):
        steps = tokenization.wordpiece_steps(word, tokenizer.vocab)
        assert tokenization.wordpiece_pieces(steps) == tokenizer.tokenize(word), word


def test_each_step_tries_the_rest_longest_first_and_keeps_the_first_in_the_vocabulary():
    vocab = {"un", "unk", "##kind", "##ness", "##k", "##ind"}
    steps = tokenization.wordpiece_steps("unkindness", vocab)
    assert [s.kept for s in steps] == ["unk", "##ind", "##ness"]  # greedy: "unk" before "un"
    assert steps[0].tried == tuple("unkindness"[:n] for n in range(10, 2, -1))
    assert steps[1].tried[0] == "##indness" and steps[1].start == 3
    (failed,) = tokenization.wordpiece_steps("qq", vocab)
    assert failed.kept is None and tokenization.wordpiece_pieces([failed]) == ["[UNK]"]


def test_the_wordpiece_figure_writes_each_step_and_the_pieces(tokenizer):
    steps = tokenization.wordpiece_steps("glorbiting", tokenizer.vocab)
    fig = figures.wordpiece_figure("glorbiting", steps)
    texts = [a["text"] for a in boxes_of(fig.to_plotly_json()["layout"])]
    assert len(texts) == len(steps) + 1
    for text, step in zip(texts, steps):
        plain = re.sub(r"<[^>]+>", "", text)
        assert "glorbiting"[:step.start] + "|" + "glorbiting"[step.start:] in plain
        assert f"keeps {step.kept}," in plain
        assert f"({len(step.tried) - 1} not in it)" in plain or len(step.tried) == 1
    assert re.sub(r"<[^>]+>", "", texts[-1]).split(":", 1)[1].split() == tokenizer.tokenize("glorbiting")
    assert_fits(fig.layout.meta["narrow_layout"], boxes.NARROW_DESIGN_PX)
    assert_fits(fig.to_plotly_json()["layout"], boxes.WIDE_DESIGN_PX)


def test_the_lookup_figure_is_the_one_hot_product():
    example = running_example()
    fig = figures.embedding_lookup_figure(example.embeddings, example.tokens, 2)
    one_hot, values = fig.data
    assert [row[0] for row in one_hot.text] == ["0", "0", "1", "0", "0"]
    z = np.array(values.z, dtype=float)
    np.testing.assert_allclose(z[:5], example.embeddings, atol=0.005)  # rounded to the 2 decimals the cells show
    np.testing.assert_allclose(z[5], np.eye(5)[2] @ example.embeddings, atol=0.005)  # the product
    np.testing.assert_allclose(z[5], z[2])  # ... is the picked row
    picked, product, _ = fig.layout.shapes
    assert (picked.y0, picked.y1, product.y0) == (1.5, 2.5, 4.5)  # row 2 framed, and the product


def test_the_lookup_figure_writes_each_value_rounded_once():
    """The cells show the exact value at 2 decimals, not the figure's 4 significant digits rounded
    again: "love", dim 1 is -1.2654, -1.27 as lessons 01 and 06 print it (not -1.26); and each cell
    writes its own z (a `text` array on this trace is drawn one column to the left by plotly.js)."""
    example = running_example()
    fig = figures.embedding_lookup_figure(example.embeddings, example.tokens, 2)
    exact = np.vstack([example.embeddings, example.embeddings[2]])  # the table, then the product
    values = fig.data[1]
    assert values.texttemplate == "%{z:.2f}" and values.text is None
    assert np.array_equal(np.array(values.z, dtype=float), np.round(exact, 2))
    love = float(example.embeddings[2, 1])
    assert round(love, 4) == -1.2654 and f"{values.z[2][1]:.2f}" == f"{values.z[5][1]:.2f}" == "-1.27"
    assert f"{float(precision.significant(love)):.2f}" == "-1.26"  # what the double rounding showed
    spec = rendering.figure_mimebundle(fig)[rendering.PLOTLY_MIME]  # the renderer keeps the values
    z = spec["data"][1]["z"]
    z = precision._decode_typed_array(z) if isinstance(z, dict) else np.asarray(z, dtype=float)
    assert f"{z[2][1]:.2f}" == "-1.27"


def test_the_gradient_figure_joins_each_position_to_the_row_torch_moves(tokenizer):
    batch = tokenizer(["I love NLP", "The cat is not happy, but it is calm.", "It is kind."], padding=True,
                      return_tensors="np")
    ids, pad = batch["input_ids"], tokenizer.pad_token_id
    torch.manual_seed(0)
    embedding = torch.nn.Embedding(len(tokenizer), 4, padding_idx=pad)
    embedding(torch.from_numpy(ids)).pow(2).sum().backward()
    moved = np.flatnonzero(embedding.weight.grad.abs().sum(1).numpy())  # what torch measured
    vocabulary = tokenizer.convert_ids_to_tokens(range(len(tokenizer)))
    fig = figures.gradient_rows_figure(ids, vocabulary, moved, pad)
    rows = next(t for t in fig.data if t.name == "rows").text
    real = list(dict.fromkeys(ids[ids != pad].tolist()))
    assert list(rows[:len(real)]) == [f"{vocabulary[i]} ×{(ids == i).sum()}" for i in real]
    assert rows[len(real)] == "[PAD]: frozen" and rows[-1] == f"{len(tokenizer) - len(real) - 1:,} other rows: 0"
    ys = {name: np.array(t.y, dtype=float) for t in fig.data for name in [t.name] if t.mode == "markers+text"}
    for b in range(ids.shape[0]):
        lines = next(t for t in fig.data if t.name == f"sentence {b}")
        starts, ends = np.array(lines.y[0::3], dtype=float), np.array(lines.y[1::3], dtype=float)
        positions = [t for t in range(ids.shape[1]) if ids[b, t] != pad]
        np.testing.assert_allclose(starts, ys["positions"][[b * ids.shape[1] + t for t in positions]])
        np.testing.assert_allclose(ends, ys["rows"][[real.index(ids[b, t]) for t in positions]])
    with pytest.raises(ValueError, match="the batch's real tokens"):
        figures.gradient_rows_figure(ids, vocabulary, moved[:-1], pad)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: figures.wordpiece_figure("ab", tokenization.wordpiece_steps("abc", {"a", "##b", "##c"})), "the steps of word 'ab'"),
        (lambda: figures.wordpiece_figure("", []), "non-empty string"),
        (lambda: figures.embedding_lookup_figure(np.ones((5, 4)), ["a"] * 4, 0), "one token per row"),
        (lambda: figures.embedding_lookup_figure(np.ones((5, 4)), ["a"] * 5, 5), r"in 0 \.\. 4"),
        (lambda: figures.gradient_rows_figure(np.array([[0, 9]]), ["a", "b"], [], 0), r"ids in 0 \.\. 1"),
    ],
)
def test_bad_inputs_get_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
