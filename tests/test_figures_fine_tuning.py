"""Lesson 08's mechanism pictures: the learning-rate schedule is the one torch's scheduler steps
through, the task-heads diagram draws the heads' own layer sizes, output shapes and the
positions each head's output depends on, and the frozen-against-fine-tuned diagram the
parameters each way trains and where the gradient reaches."""

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

from course_utils import costs, figures, plots, training
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
    # the last step's marker inside the x range, with room for its half; the axes' zeros apart
    low, high = fig.layout.xaxis.range
    assert low < 0 and high >= total * 1.03
    assert fig.layout.yaxis.range[0] < 0
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
    # the trunk leaves the encoder's own bottom edge, within its width
    encoder = boxes_of(narrow)[0]
    width, height = boxes.box_size(encoder["text"])
    (trunk,) = [a for a in arrows_of(narrow) if a["arrowhead"] == 0]
    assert trunk["ax"] == trunk["x"] and trunk["ay"] == pytest.approx(encoder["y"] + height)
    assert encoder["x"] - width / 2 < trunk["ax"] < encoder["x"] + width / 2


def frozen_and_fine_tuned(n_labels: int = 3):
    """A tiny sequence classifier, its frozen-against-fine-tuned figure, the figure's eight boxes."""
    config = TINY.__class__(**TINY.to_dict(), num_labels=n_labels)
    model = DistilBertForSequenceClassification(config)
    fig = figures.frozen_vs_fine_tuned_figure(TINY, costs.parameter_count(model), n_labels)
    return model, fig, [a["text"] for a in boxes_of(fig.to_plotly_json()["layout"])[:8]]


def test_the_frozen_and_fine_tuned_picture_draws_the_parameters_each_way_trains():
    n_labels = 3
    model, fig, texts = frozen_and_fine_tuned(n_labels)
    frozen_encoder, features, regression_box, frozen_loss = map(plain, texts[:4])
    tuned_encoder, _, head_box, tuned_loss = map(plain, texts[4:])
    # feature extraction trains the logistic regression on D-dimensional features, nothing else
    hidden = model.distilbert(input_ids=torch.randint(5, TINY.vocab_size, (2, 4))).last_hidden_state
    D = hidden.shape[-1]
    regression = costs.parameter_count(torch.nn.Linear(D, n_labels))
    assert f"trained: {regression:,} parameters" in frozen_loss
    assert f"{D} × {n_labels} + {n_labels} = {regression:,} parameters" in regression_box
    assert f"Linear {D} → {n_labels}" in regression_box and f"(N, {D})" in features
    # fine-tuning trains every parameter of the classifier: its encoder's and its head's
    trainable = costs.parameter_count(model, trainable_only=True)
    assert trainable == costs.parameter_count(model) and f"trained: {trainable:,} parameters" in tuned_loss
    encoder = costs.parameter_count(model.distilbert)
    for box in (frozen_encoder, tuned_encoder):
        assert f"{TINY.n_layers} blocks, {encoder:,} parameters" in box
    for name in ("pre_classifier", "classifier"):
        out_features, in_features = getattr(model, name).weight.shape
        assert f"{name} {in_features} → {out_features}" in head_box
    title = fig.layout.title.text
    assert f"trains {regression:,} parameters" in title and f"trains all {trainable:,}" in title


def gradient_marks(layout, texts) -> tuple[set[int], dict[int, str]]:
    """The gaps (each named by the box above it) that an upward arrow crosses in the right half of
    that box's column, and the words written there."""
    placed = boxes_of(layout)[:8]

    def gap(upper: int) -> tuple[float, float]:  # under box `upper`, above the next box
        return placed[upper]["y"] + boxes.box_size(texts[upper])[1], placed[upper + 1]["y"]

    def right_half(upper: int, x: float) -> bool:  # x in box `upper`'s right half
        return placed[upper]["x"] < x < placed[upper]["x"] + boxes.box_size(texts[upper])[0] / 2

    ups = [a for a in arrows_of(layout) if a["ay"] > a["y"]]  # drawn upwards: the gradient's
    assert {a["arrowcolor"] for a in ups} == {fine_tuning.GRADIENT_COLOR}
    reached = {upper for upper in range(7) for a in ups
               if (a["y"], a["ay"]) == (gap(upper)[0] + 4, gap(upper)[1] - 4) and right_half(upper, a["x"])}  # fmt: skip
    words = {}
    for note in boxes_of(layout)[8:]:
        upper = next(i for i in range(7) if gap(i)[0] <= note["y"] < gap(i)[1] and right_half(i, note["x"]))
        words[upper] = plain(note["text"])
    return reached, words


def test_the_frozen_encoder_reads_as_frozen_and_the_gradient_reaches_what_is_trained():
    _, fig, texts = frozen_and_fine_tuned()
    assert "FROZEN: no gradient" in texts[0] and "░" not in texts[0] and "TRAINED" in texts[4]
    for layout in (fig.to_plotly_json()["layout"], fig.layout.meta["narrow_layout"]):
        # the frozen encoder is a grey-filled box, black text on it; every other box white
        filled = [a.get("bgcolor") for a in boxes_of(layout)[:8]]
        assert filled == [fine_tuning.FROZEN_FILL] + ["white"] * 7
        assert boxes_of(layout)[0]["font"]["color"] == fine_tuning.FROZEN_INK
        outlines = [a["bordercolor"] for a in boxes_of(layout)[:8]]
        assert outlines == list(fine_tuning.PANEL_COLORS) and outlines[0] == plots.REFERENCE_COLOR  # grey
        reached, words = gradient_marks(layout, texts)
        assert reached == {2, 4, 5, 6}  # the loss to the regression; in fine-tuning, every layer
        assert words == {0: "no gradient", 1: "no gradient", 2: "gradient", 4: "gradient", 5: "gradient",
                         6: "gradient"}  # fmt: skip


def test_the_frozen_and_fine_tuned_picture_fits_a_laptop_and_a_phone():
    _, fig, _ = frozen_and_fine_tuned()
    wide, narrow = fig.to_plotly_json()["layout"], fig.layout.meta["narrow_layout"]
    for layout, design_px in ((wide, boxes.WIDE_DESIGN_PX), (narrow, boxes.NARROW_DESIGN_PX)):
        placed = boxes_of(layout)[:8]
        assert_fits(dict(layout, annotations=placed), design_px)
        assert len({a["x"] for a in placed[:4]}) == len({a["x"] for a in placed[4:]}) == 1  # two columns
        assert len(arrows_of(layout)) == 6 + 4  # forward arrows, gradient arrows
        for label in [a for a in boxes_of(layout)[8:]]:  # left-anchored labels, in a gap between boxes
            width, height = boxes.box_size(label["text"])
            assert label["xanchor"] == "left" and label["x"] + width <= design_px
            for box in placed:
                top, bottom = box["y"], box["y"] + boxes.box_size(box["text"])[1]
                assert label["y"] + height <= top or bottom <= label["y"]
    assert len({a["x"] for a in boxes_of(narrow)[:8]}) == 1  # a phone: one column


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: figures.schedule_figure(0, 5, 10), ValueError, "peak_lr"),
        (lambda: figures.schedule_figure(1e-3, 10, 10), ValueError, "fewer warm-up steps"),
        (lambda: figures.schedule_figure(1e-3, 2.5, 10), ValueError, "warmup to be a positive integer"),
        (lambda: figures.task_heads_figure({"dim": 16}), TypeError, "DistilBertConfig"),
        (lambda: figures.task_heads_figure(TINY, 0, 12), ValueError, "n_labels"),
        (lambda: figures.frozen_vs_fine_tuned_figure({"dim": 16}, 10_000), TypeError, "DistilBertConfig"),
        (lambda: figures.frozen_vs_fine_tuned_figure(TINY, 0), ValueError, "fine_tuned_parameters"),
        (lambda: figures.frozen_vs_fine_tuned_figure(TINY, 2.5e5), ValueError, "fine_tuned_parameters"),
        (lambda: figures.frozen_vs_fine_tuned_figure(TINY, 306), ValueError, "exceed its head's 306"),
        (lambda: figures.frozen_vs_fine_tuned_figure(TINY, 10_000, 0), ValueError, "n_labels"),
        (lambda: figures.kind_curves_figure([], ["a"], thin="a", title="t"), ValueError, "at least one run"),
        (lambda: figures.kind_curves_figure([[{"step": 0, "a": 0.5}]], ["a"], thin="b", title="t"), ValueError,
         "drawn run by run"),
        (lambda: figures.kind_curves_figure([[{"step": 0, "a": 0.5}], [{"step": 5, "a": 0.5}]], ["a"], thin="a",
                                            title="t"), ValueError, "same steps"),
        (lambda: figures.kind_curves_figure([[{"step": 0, "a": 1.5}]], ["a"], thin="a", title="t"), ValueError,
         "between 0 and 1"),
        (lambda: figures.kind_curves_figure([[{"step": 0, "b": 0.5}]], ["a"], thin="a", title="t"), ValueError,
         "accuracy of 'a'"),
        (lambda: figures.rate_sweep_figure({1e-4: {"v": [0.5]}}, recipe_lr=1e-4, title="t"), ValueError,
         "two or more"),
        (lambda: figures.rate_sweep_figure({1e-4: {"v": [0.5]}, 1e-3: {"v": [0.6]}}, recipe_lr=5e-4, title="t"),
         ValueError, "recipe's rate"),
        (lambda: figures.rate_sweep_figure({1e-4: {"v": [0.5]}, 1e-3: {"t": [0.6]}}, recipe_lr=1e-4, title="t"),
         ValueError, "same splits"),
        (lambda: figures.rate_sweep_figure({1e-4: {"v": []}, 1e-3: {"v": [0.6]}}, recipe_lr=1e-4, title="t"),
         ValueError, "one or more accuracies"),
        (lambda: figures.label_alignment_figure(["a"], ["[CLS]", "a"], [None, 0], [-100], ["X"], title="t"),
         ValueError, "one word id and one label per token"),
        (lambda: figures.label_alignment_figure(["a", "b"], ["a", "b", "a"], [0, 1, 0], [0, 0, -100], ["X"],
                                                title="t"), ValueError, "next to each other"),
        (lambda: figures.label_alignment_figure(["a"], ["a"], [1], [0], ["X"], title="t"), ValueError, "word ids"),
        (lambda: figures.label_alignment_figure(["a"], ["a"], [0], [3], ["X"], title="t"), ValueError,
         "labels -100 or 0"),
    ],
)
def test_bad_inputs_get_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_principal_plane_is_the_pca_projection_and_the_figure_colours_by_label():
    from course_utils import figures

    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 6)) * np.array([5.0, 2.0, 0.1, 0.1, 0.1, 0.1])
    plane = figures.principal_plane(x)
    centred = x - x.mean(0)
    assert plane.shape == (50, 2) and np.var(plane[:, 0]) >= np.var(plane[:, 1])
    # the first direction carries the largest variance of any unit direction (here the first axis)
    assert np.var(plane[:, 0]) == pytest.approx(np.linalg.svd(centred, compute_uv=False)[0] ** 2 / 50)
    # the sign of a direction is fixed: the largest coordinate positive, so a flip of the input's
    # axes (what another processor's last bits can do to the SVD) draws the same picture
    assert (plane[np.abs(plane).argmax(0), [0, 1]] > 0).all()
    np.testing.assert_allclose(figures.principal_plane(-x), plane, atol=1e-9)
    labels = (x[:, 0] > 0).astype(int)
    fig = figures.cls_projection_figure({"frozen": x, "fine-tuned": x * 2}, labels, title="[CLS]")
    assert [t.name for t in fig.data] == ["negative", "positive"] * 2
    assert len(fig.data[0].x) == int((labels == 0).sum())
    with pytest.raises(ValueError, match="one vector per label"):
        figures.cls_projection_figure({"frozen": x[:10]}, labels, title="t")


KINDS = ("lexical", "negation")


def kind_runs():
    """Three runs measured at steps 0, 50, 100, 150: the words learned early, negation at its own step."""
    negation = ([0.5, 0.35, 0.9, 0.9], [0.5, 0.4, 0.45, 0.88], [0.49, 0.38, 0.5, 0.5])
    return [[{"step": s, "lexical": [0.5, 0.8, 0.9, 0.92][i], "negation": run[i]} for i, s in enumerate((0, 50, 100, 150))]
            for run in negation]  # fmt: skip


def test_the_kind_curves_draw_step_0_chance_each_negation_run_and_the_means():
    runs = kind_runs()
    fig = figures.kind_curves_figure(runs, KINDS, thin="negation", title="by kind")
    thin = [t for t in fig.data if t.name == "negation: each run"]
    assert len(thin) == len(runs) and sum(t.showlegend for t in thin) == 1  # one legend entry for the runs
    for trace, run in zip(thin, runs):  # each run drawn as measured, from step 0
        assert list(trace.x) == [0, 50, 100, 150]
        np.testing.assert_allclose(trace.y, [p["negation"] for p in run])
        assert trace.line.width < 2
    means = {t.name: t for t in fig.data if t.name.endswith("(mean)")}
    assert list(means) == ["lexical (mean)", "negation (mean)"]
    np.testing.assert_allclose(means["negation (mean)"].y, np.mean([[p["negation"] for p in r] for r in runs], 0),
                               atol=1e-3)  # fmt: skip
    assert means["lexical (mean)"].line.dash != means["negation (mean)"].line.dash  # reads without colour
    (chance,) = [t for t in fig.data if t.name.startswith("chance")]
    assert list(chance.y) == [0.5, 0.5] and list(chance.x) == [0, 150]
    assert fig.layout.xaxis.range[0] < 0  # step 0 whole inside the plot
    # the mean of the runs crosses back above chance later than the fastest run does: the thin lines
    # show what the mean smooths
    first_above = [next(s for s, y in zip(t.x, t.y) if s > 0 and y > 0.8) if max(t.y) > 0.8 else None for t in thin]
    assert first_above == [100, 150, None]


def test_the_rate_sweep_ticks_every_rate_and_draws_every_run_at_the_recipes_rate():
    accuracies = {3e-5: {"validation": [0.6], "test": [0.59]}, 2e-4: {"validation": [0.88], "test": [0.87]},
                  5e-4: {"validation": [0.9, 0.91, 0.89], "test": [0.9, 0.92, 0.88]},
                  1e-3: {"validation": [0.85], "test": [0.84]}}  # fmt: skip
    fig = figures.rate_sweep_figure(accuracies, recipe_lr=5e-4, title="sweep")
    assert fig.layout.xaxis.type == "log"
    assert list(fig.layout.xaxis.tickvals) == [3e-5, 2e-4, 5e-4, 1e-3]
    assert list(fig.layout.xaxis.ticktext) == ["3e-5", "2e-4", "5e-4", "1e-3"]
    low, high = fig.layout.xaxis.range  # log10 units: the end points' markers inside
    assert low < np.log10(3e-5) and high > np.log10(1e-3)
    lines = {t.name: t for t in fig.data if t.mode == "lines+markers"}
    np.testing.assert_allclose(lines["validation (mean of the runs)"].y, [0.6, 0.88, 0.9, 0.85])
    dots = {t.name: t for t in fig.data if t.mode == "markers"}
    assert set(dots) == {"validation: each of the 3 runs at 5e-4", "test: each of the 3 runs at 5e-4"}
    beside = [dots[f"{split}: each of the 3 runs at 5e-4"].x for split in ("validation", "test")]
    assert all(len(set(x)) == 1 and abs(np.log10(x[0] / 5e-4)) < 0.05 for x in beside)  # at the rate
    assert beside[0][0] < 5e-4 < beside[1][0]  # side by side, neither on the mean's marker
    np.testing.assert_allclose(dots["test: each of the 3 runs at 5e-4"].y, [0.9, 0.92, 0.88])


WORDS = ("this", "stapon", "dreaded", ".")
TOKENS = ["[CLS]", "this", "st", "##ap", "##on", "dreaded", ".", "[SEP]"]
WORD_IDS = [None, 0, 1, 1, 1, 2, 3, None]
TAGS = ("DET", "NOUN", "VERB", "PUNCT")


def test_the_alignment_draws_words_over_their_pieces_and_each_pieces_label():
    from course_utils import task_heads
    from course_utils.figures.canvas import clashes_of

    labels = task_heads.align_labels(WORD_IDS, [0, 1, 2, 3])
    fig = figures.label_alignment_figure(WORDS, TOKENS, WORD_IDS, labels, TAGS, title="alignment")
    for layout in (fig.to_plotly_json()["layout"], fig.layout.meta["narrow_layout"]):
        assert clashes_of(layout) == []  # no label on a line, a box edge or another label; none cut
        notes = {n["name"]: n["text"] for n in layout["annotations"] if n.get("name") and not n.get("showarrow")}
        rects = {s["name"]: s for s in layout["shapes"] if s["type"] == "rect"}
        assert [notes[f"word {w}"] for w in range(len(WORDS))] == list(WORDS)
        assert [notes[f"piece {t}"] for t in range(len(TOKENS))] == TOKENS
        drawn = [notes[f"label {t}"] for t in range(len(TOKENS))]
        assert drawn == ["−100", "<b>DET</b>", "<b>NOUN</b>", "−100", "−100", "<b>VERB</b>", "<b>PUNCT</b>", "−100"]
        # the tagged labels outlined in the tag colour, the ignored ones grey
        assert {rects[f"label {t}"]["line"]["color"] for t in (1, 2, 5, 6)} == {fine_tuning.TAG_COLOR}
        assert {rects[f"label {t}"]["line"]["color"] for t in (0, 3, 4, 7)} == {plots.REFERENCE_COLOR}
        # "stapon" spans its three pieces; a line joins each word to each of its pieces
        word, first, last = rects["word 1"], rects["piece 2"], rects["piece 4"]
        if layout is fig.layout.meta["narrow_layout"]:
            assert word["y0"] <= first["y0"] and word["y1"] >= last["y1"]
        else:
            assert word["x0"] <= first["x0"] and word["x1"] >= last["x1"]
        joins = {s["name"] for s in layout["shapes"] if s["type"] == "line"}
        assert joins == {f"word {w} to piece {t}" for t, w in enumerate(WORD_IDS) if w is not None}
        arrows = [n for n in layout["annotations"] if n.get("showarrow")]
        assert len(arrows) == len(TOKENS)  # each piece to its label
    assert fig.layout.xaxis.range[1] <= 700 and fig.layout.meta["narrow_layout"]["xaxis"]["range"][1] <= 330
