"""Lesson 08's mechanism pictures: the learning-rate schedule is the one torch's scheduler steps
through, and the task-heads diagram draws the heads' own layer sizes, output shapes and the
positions each head's output depends on."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from transformers import (
    DistilBertConfig,
    DistilBertForMaskedLM,
    DistilBertForSequenceClassification,
    DistilBertForTokenClassification,
)

from course_utils import figures, training
from course_utils.figures import boxes, fine_tuning
from tests.test_figures_boxes import arrows_of, assert_fits, boxes_of


def plain(text: str) -> str:
    return re.sub(r"<[^>]+>", "", text).replace("\u00a0", " ")


@pytest.mark.parametrize("peak, warmup, total", [(5e-4, 50, 1407), (3e-5, 3, 10)])
def test_the_schedule_drawn_is_the_rate_torch_steps_with(peak, warmup, total):
    fig = figures.schedule_figure(peak, warmup, total)
    weight = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([weight], lr=peak)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: training.linear_warmup_decay(s, total, warmup))
    taken = []  # the rate each step of a run is taken with
    for _ in range(total):
        taken.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    curve = fig.data[0]
    assert list(curve.x) == list(range(1, total + 1))
    np.testing.assert_allclose(np.array(curve.y, dtype=float), taken, rtol=1e-3)
    marks = fig.data[1]  # the peak, at the end of warm-up, and the last step
    assert list(marks.x) == [warmup, total]
    np.testing.assert_allclose(np.array(marks.y, dtype=float), [peak, taken[-1]], rtol=1e-3)
    written = " ".join(a.text for a in fig.layout.annotations)
    assert f"peak {fine_tuning.rate_text(peak)}</b> at step {warmup}" in written
    assert f"steps 1 to {warmup}" in written and f"{total:,} steps" in written


def test_rates_are_written_as_the_lessons_write_them():
    assert fine_tuning.rate_text(5e-4) == "5e-4"
    assert fine_tuning.rate_text(2.5e-4) == "2.5e-4"
    assert fine_tuning.rate_text(3e-5) == "3e-5"


TINY = DistilBertConfig(vocab_size=50, dim=16, n_layers=2, n_heads=2, hidden_dim=32, max_position_embeddings=16)


def read_positions(text: str) -> set[int]:
    """The positions a head's box marks as read: bold tokens on its token line, dots the others."""
    line = text.split("<br>")[2]
    return {i for i, token in enumerate(line.split(" ")) if token.startswith("<b>")}


def positions_that_matter(head, hidden: torch.Tensor) -> set[int]:
    """The positions t whose vector changes ``head(hidden)`` (a scalar or logits)."""
    with torch.no_grad():
        before = head(hidden)
        moved = set()
        for t in range(hidden.shape[1]):
            changed = hidden.clone()
            changed[:, t] += 1.0
            if not torch.allclose(head(changed), before):
                moved.add(t)
    return moved


def test_the_heads_diagram_draws_each_heads_sizes_shapes_and_the_vectors_it_reads():
    torch.manual_seed(0)
    n_labels, n_tags = 3, 5
    sequence = DistilBertForSequenceClassification(TINY.__class__(**TINY.to_dict(), num_labels=n_labels)).eval()
    token = DistilBertForTokenClassification(TINY.__class__(**TINY.to_dict(), num_labels=n_tags)).eval()
    masked_lm = DistilBertForMaskedLM(TINY).eval()
    fig = figures.task_heads_figure(TINY, n_labels, n_tags)
    encoder_box, sequence_box, token_box, masked_box = [a["text"] for a in boxes_of(fig.to_plotly_json()["layout"])]

    T = len(fine_tuning.RUNNING_TOKENS)
    input_ids = torch.randint(5, TINY.vocab_size, (2, T))
    with torch.no_grad():
        hidden = sequence.distilbert(input_ids=input_ids).last_hidden_state  # (B, T, D)
        shapes = {
            "sequence": sequence(input_ids=input_ids).logits.shape,
            "token": token(input_ids=input_ids).logits.shape,
            "masked": masked_lm(input_ids=input_ids).logits.shape,
        }
    B, D = hidden.shape[0], hidden.shape[-1]
    assert f"(B, T, {D})" in encoder_box and f"{TINY.n_layers} blocks" in encoder_box
    assert shapes["sequence"] == (B, n_labels) and f"logits (B, {n_labels})" in sequence_box
    assert shapes["token"] == (B, T, n_tags) and f"logits (B, T, {n_tags})" in token_box
    assert shapes["masked"] == (B, T, TINY.vocab_size) and f"logits (B, T, {TINY.vocab_size})" in masked_box
    layers = {
        sequence_box: [("pre_classifier", sequence.pre_classifier), ("classifier", sequence.classifier)],
        token_box: [("classifier", token.classifier)],
        masked_box: [("vocab_transform", masked_lm.vocab_transform), ("vocab_projector", masked_lm.vocab_projector)],
    }
    for box, named in layers.items():
        for name, layer in named:  # nn.Linear's (out, in) weight, drawn in → out
            out_features, in_features = layer.weight.shape
            assert f"{name} {in_features} → {out_features}" in plain(box)

    # which positions each head's output depends on, against the positions the box marks
    labels = torch.full((B, T), -100)
    labels[:, fine_tuning.MASKED] = 7  # the masked-LM loss reads the [MASK] position only

    def sequence_head(h):
        return sequence.classifier(torch.relu(sequence.pre_classifier(h[:, 0])))

    def masked_loss(h):
        logits = masked_lm.vocab_projector(
            masked_lm.vocab_layer_norm(masked_lm.activation(masked_lm.vocab_transform(h)))
        )
        return torch.nn.functional.cross_entropy(logits.reshape(-1, TINY.vocab_size), labels.reshape(-1))

    assert read_positions(sequence_box) == positions_that_matter(sequence_head, hidden) == {0}
    assert read_positions(token_box) == positions_that_matter(token.classifier, hidden) == set(range(T))
    assert read_positions(masked_box) == positions_that_matter(masked_loss, hidden) == {fine_tuning.MASKED}
    assert "[MASK]" in masked_box and "[CLS]" in sequence_box


def test_the_heads_diagram_fits_a_laptop_and_a_phone_with_an_arrow_into_each_head():
    fig = figures.task_heads_figure(TINY, 2, 12)
    wide, narrow = fig.to_plotly_json()["layout"], fig.layout.meta["narrow_layout"]
    assert_fits(wide, boxes.WIDE_DESIGN_PX)
    assert_fits(narrow, boxes.NARROW_DESIGN_PX)
    assert len(arrows_of(wide)) == 3
    heads = boxes_of(narrow)[1:]
    tips = [a for a in arrows_of(narrow) if a["arrowhead"] > 0]
    assert len(tips) == 3
    for head, tip in zip(heads, tips):  # each arrow ends at the left edge of its head, level with it
        left = head["x"] - boxes.box_size(head["text"])[0] / 2
        assert left - 10 < tip["x"] < left and head["y"] < tip["y"] < head["y"] + boxes.box_size(head["text"])[1]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: figures.schedule_figure(0, 5, 10), ValueError, "peak_lr"),
        (lambda: figures.schedule_figure(1e-3, 10, 10), ValueError, "fewer warm-up steps"),
        (lambda: figures.schedule_figure(1e-3, 2.5, 10), ValueError, "warmup to be a positive integer"),
        (lambda: figures.task_heads_figure({"dim": 16}), TypeError, "DistilBertConfig"),
        (lambda: figures.task_heads_figure(TINY, 0, 12), ValueError, "n_labels"),
    ],
)
def test_bad_inputs_get_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()
