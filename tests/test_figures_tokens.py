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
        # the window shrinks from the right: the longest candidate first, the kept one last, ticked
        window = [re.sub(r"<[^>]+>", "", line).replace("\u00a0", " ").strip() for line in text.split("<br>")[2:-1]]
        assert window[0].split()[0] == step.tried[0] and window[-1].split() == [step.kept, "✓"]
        assert len(window) == min(len(step.tried), figures.tokens.WINDOW_LINES)
    assert re.sub(r"<[^>]+>", "", texts[-1]).split(":", 1)[1].split() == tokenizer.tokenize("glorbiting")
    assert_fits(fig.layout.meta["narrow_layout"], boxes.NARROW_DESIGN_PX)
    assert_fits(fig.to_plotly_json()["layout"], boxes.WIDE_DESIGN_PX)
    # on a laptop every row reads left to right: a step's box stands right of the one before it, or under it
    centres = [(a["x"], a["y"]) for a in boxes_of(fig.to_plotly_json()["layout"])]
    for (x0, y0), (x1, y1) in zip(centres, centres[1:]):
        assert (y1 == y0 and x1 > x0) or y1 > y0


def test_the_lookup_figure_is_the_one_hot_product():
    example = running_example()
    fig = figures.embedding_lookup_figure(example.embeddings, example.tokens, 2)
    one_hot, kept, cancelled = fig.data
    assert [row[0] for row in one_hot.text] == ["0", "0", "1", "0", "0"]
    # the rows the zeros cancel are faded, drawn by their own trace; the kept row and the product in full colour
    kept_z, cancelled_z = np.array(kept.z, dtype=float), np.array(cancelled.z, dtype=float)
    assert list(np.flatnonzero(~np.isnan(kept_z).all(axis=1))) == [2, 5]
    assert list(np.flatnonzero(~np.isnan(cancelled_z).all(axis=1))) == [0, 1, 3, 4]
    assert cancelled.colorscale != kept.colorscale and cancelled.textfont.color == figures.tokens.FADED_TEXT
    z = np.where(np.isnan(kept_z), cancelled_z, kept_z)
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
    assert values.texttemplate == "%{z:.2f}" and values.text is None and fig.data[2].text is None
    z = np.array(values.z, dtype=float)
    assert np.array_equal(np.where(np.isnan(z), np.array(fig.data[2].z, dtype=float), z), np.round(exact, 2))
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
    quoted = {",": "“,”", ".": "“.”"}  # punctuation in quotes, so that a lone comma shows
    assert list(rows[:len(real)]) == [f"{quoted.get(vocabulary[i], vocabulary[i])} ×{(ids == i).sum()}" for i in real]
    assert rows[len(real)] == "[PAD]: frozen" and rows[-1] == f"{len(tokenizer) - len(real) - 1:,} other rows: 0"
    ys = {name: np.array(t.y, dtype=float) for t in fig.data for name in [t.name] if t.mode == "markers+text"}
    for b in range(ids.shape[0]):
        lines = next(t for t in fig.data if t.name == f"sentence {b}")
        starts, ends = np.array(lines.y[0::3], dtype=float), np.array(lines.y[1::3], dtype=float)
        positions = [t for t in range(ids.shape[1]) if ids[b, t] != pad]
        before = int((ids[:b] != pad).sum())  # the real positions of the sentences above
        np.testing.assert_allclose(starts, ys["positions"][before:before + len(positions)])
        np.testing.assert_allclose(ends, ys["rows"][[real.index(ids[b, t]) for t in positions]])
    # the [PAD] positions: one bracket, its count and runs measured from the batch, one arrow to the frozen row
    left = next(t for t in fig.data if t.name == "positions").text
    assert len(left) == int((ids != pad).sum()) and not any("[PAD]" in label for label in left)
    (bracket,) = [a for a in fig.layout.annotations if "[PAD] positions" in (a.text or "")]
    assert bracket.text == f"{int((ids == pad).sum())} [PAD] positions<br>0·5–12, 2·6–12"
    (arrow,) = [a for a in fig.layout.annotations if a.showarrow]
    assert arrow.ay == bracket.y and arrow.y == pytest.approx(ys["rows"][len(real)], rel=1e-3)
    assert (arrow.ax, arrow.x) == (0, 1)
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


def test_the_mask_figure_writes_each_token_in_its_cell_coloured_by_the_mask(tokenizer):
    batch = tokenizer(["I love NLP", "The cat is not happy, but it is calm.", "It is kind."], padding=True,
                      return_tensors="np")
    tokens = [tokenizer.convert_ids_to_tokens(row) for row in batch["input_ids"]]
    fig = figures.attention_mask_figure(tokens, batch["attention_mask"])
    cells = fig.data[0]
    np.testing.assert_array_equal(np.array(cells.z, dtype=float), batch["attention_mask"].T)  # a column a sentence
    text = np.array(cells.text)
    assert list(text[:, 0]) == ["[CLS]", "i", "love", "nlp", "[SEP]"] + ["[PAD]"] * 8
    assert text[6, 1] == "“,”"  # punctuation quoted
    assert [t.name for t in fig.data[1:]] == ["real token: 1", "padding: 0"]  # the legend's two colours
    assert [t.marker.color for t in fig.data[1:]] == [figures.tokens.REAL_COLOR, figures.tokens.PADDING_COLOR]
    assert "5, 13, 6 real tokens" in fig.layout.title.text
    with pytest.raises(ValueError, match="B = 3 lists of T = 13 tokens"):
        figures.attention_mask_figure(tokens[:2], batch["attention_mask"])


def test_the_scatter_labels_the_extremes_first_and_never_over_a_marker():
    rng = np.random.default_rng(0)
    points = np.vstack([[[-4.0, 0.0], [4.0, 0.1]], rng.normal(0, 0.4, (20, 2))])  # two extremes, a crowd
    words = ["far-left", "far-right"] + [f"w{k}" for k in range(20)]
    order = figures.extremes_first(points)
    assert set(order[:2]) == {0, 1}
    fig = figures.word_scatter_figure(points, words, ["a", "b"] + ["c"] * 20, title="t", x_title="x", y_title="y")
    laptop = [a.text for a in fig.layout.annotations]
    phone = [a["text"] for a in fig.layout.meta["narrow_layout"]["annotations"]]
    assert {"far-left", "far-right"} <= set(phone) and set(phone) <= set(laptop)
    assert len(phone) < len(words)  # the crowded middle gives its labels up on a phone
    # each written label is its point's word, at its point; no two label boxes overlap, none covers a marker
    from course_utils.figures import tokens as token_figures

    x_range, y_range = list(fig.layout.xaxis.range), list(fig.layout.yaxis.range)
    sides = token_figures.label_sides(points[order], [words[j] for j in order], x_range, y_range)
    assert sum(s is not None for s in sides) == len(laptop)
    width, height = token_figures.LAPTOP_PLOT_PX
    px = lambda x, y: ((x - x_range[0]) * width / np.ptp(x_range), (y_range[1] - y) * height / np.ptp(y_range))  # noqa: E731
    placed = []
    for k, side in zip(order, sides):
        if side is None:
            continue
        box = token_figures._label_box(*px(*points[k]), side, 7.2 * len(words[k]))
        for j, point in enumerate(points):
            x, y = px(*point)
            assert j == k or not (box[0] < x + 6 and x - 6 < box[2] and box[1] < y + 6 and y - 6 < box[3])
        assert not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed)
        placed.append(box)
    for a in fig.layout.annotations:
        k = words.index(a.text)
        assert (a.x, a.y) == pytest.approx((points[k, 0], points[k, 1]), rel=1e-3)
