"""Lesson 07's temperature figure and explorer in course_utils.figures: the softened distribution
equals torch's softmax of logits / T, the ranking and the axes stay put, the entropy grows with T,
and the kernel-free twin replays the drawing function."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils import figures
from tests.explorer_cases import assert_twin_replays_draw

LOGITS = np.array([4.0, 1.5, 3.0, -2.0, 0.5, 2.0, -1.0, 0.0])  # (V,) = (8,)
LABELS = ["cat", "dog", "owl", "the", "runs", "fox", ".", "happy"]


def test_softened_is_torchs_softmax_of_logits_over_t():
    for t in (0.25, 1.0, 2.0, 7.5):
        expected = torch.softmax(torch.tensor(LOGITS) / t, dim=-1).numpy()
        np.testing.assert_allclose(figures.softened(LOGITS, t), expected, rtol=1e-12)
    assert np.allclose(figures.softened([1000.0, 1000.0], 1.0), [0.5, 0.5])  # stable, no overflow


def test_entropy_in_nats_from_zero_to_ln_v():
    assert figures.entropy([1.0, 0.0, 0.0]) == 0.0
    assert figures.entropy(np.full(8, 1 / 8)) == pytest.approx(math.log(8))
    p = figures.softened(LOGITS, 2.0)
    expected = torch.distributions.Categorical(probs=torch.tensor(p)).entropy().item()
    assert figures.entropy(p) == pytest.approx(expected, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-20, 20, allow_nan=False), min_size=2, max_size=30),
    st.floats(0.1, 10),
    st.floats(1.01, 5),
)
def test_entropy_never_falls_as_the_temperature_rises(logits, t, factor):
    """Raising T flattens the distribution: the entropy grows (or stays, for equal logits)."""
    low, high = figures.softened(logits, t), figures.softened(logits, t * factor)
    assert figures.entropy(high) >= figures.entropy(low) - 1e-9
    assert figures.entropy(high) <= math.log(len(logits)) + 1e-9


def test_figure_draws_each_top_token_over_the_top_ones_then_the_others_mean_and_the_t1_reference():
    fig = figures.temperature_figure(LOGITS, LABELS, 2.0, top_k=3)
    dots, reference = fig.data
    assert list(dots.y) == ["cat", "owl", "fox", "mean of 5 others"]  # highest logit first
    p = figures.softened(LOGITS, 2.0)
    others = np.delete(p, [0, 2, 5]).mean()
    expected = np.array([p[0], p[2], p[5], others]) / p[0]
    np.testing.assert_allclose(np.array(dots.x, dtype=float), expected, rtol=1e-3)
    # what a temperature does: each ratio is exp((z_i - z_top) / T), the T = 1 ratio to the power 1/T
    np.testing.assert_allclose(np.array(dots.x[:3], dtype=float), np.exp((LOGITS[[0, 2, 5]] - 4.0) / 2), rtol=1e-3)
    q = figures.softened(LOGITS, 1.0)
    np.testing.assert_allclose(np.array(reference.x, dtype=float),
                               np.array([q[0], q[2], q[5], np.delete(q, [0, 2, 5]).mean()]) / q[0], rtol=1e-3)
    assert fig.layout.title.text.startswith(f"T = 2: top token {p[0]:.2f}, entropy")
    assert fig.layout.xaxis.type == "log" and fig.layout.xaxis.range[1] > 0  # the top token's 1 inside


def test_the_ranking_and_the_layout_do_not_move_with_t():
    drawn = [figures.temperature_figure(LOGITS, LABELS, t, top_k=4) for t in (0.5, 1.0, 5.0)]
    assert all(list(f.data[0].y) == list(drawn[0].data[0].y) for f in drawn)
    assert all(list(f.layout.xaxis.range) == list(drawn[0].layout.xaxis.range) for f in drawn)
    runner_up = [f.data[0].x[1] for f in drawn]
    assert runner_up[0] < runner_up[1] < runner_up[2] < 1  # the runner-up closes in on the top as T rises
    assert all(f.data[0].x[0] == 1 for f in drawn)


def test_explorer_twin_replays_the_figure_at_every_temperature():
    explorer = figures.temperature_explorer(LOGITS, LABELS, temperatures=(0.5, 1.0, 2.0, 4.0), top_k=5)
    twin = explorer.static()
    (slider,) = twin.layout.sliders
    assert_twin_replays_draw(explorer, [step.to_plotly_json() for step in slider.steps])
    assert slider.active == 1 and slider.currentvalue.prefix == "temperature T: "
    assert twin.layout.title.text == explorer.figure(temperature=1.0).layout.title.text


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: figures.temperature_figure(LOGITS[None], LABELS, 1.0),
            r"shape \(V,\) with V >= 2, got shape \(1, 8\)",
        ),
        (lambda: figures.temperature_figure(LOGITS, LABELS[:3], 1.0), "one label per logit: 8 logits, got 3 labels"),
        (lambda: figures.temperature_figure(LOGITS, LABELS, 0.0), "expected temperature to be a finite number > 0"),
        (
            lambda: figures.temperature_figure(LOGITS, LABELS, float("inf")),
            "expected temperature to be a finite number > 0, got inf",
        ),
        (lambda: figures.softened(LOGITS, -1), "expected temperature to be a finite number > 0, got -1"),
        (lambda: figures.temperature_figure(LOGITS, LABELS, 1.0, top_k=8), r"top_k to be an integer in 1 \.\. V-1 = 7"),
        (lambda: figures.temperature_figure([1.0, np.nan], ["a", "b"], 1.0), "expected finite logits"),
        (lambda: figures.temperature_explorer(LOGITS, LABELS, temperatures=(2.0, 1.0)), "expected increasing"),
        (lambda: figures.temperature_explorer(LOGITS, LABELS, default=5.0), "expected the default of control"),
    ],
)
def test_bad_inputs_are_refused_with_what_was_expected(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------------------------------------
# The study's figures: the copy, and where a start keeps the held-out words' polarity


def _texts(fig) -> list[str]:
    return [a.text for a in fig.layout.annotations]


def test_the_copy_figure_draws_an_arrow_from_each_copied_layer_and_marks_the_others():
    fig = figures.copy_figure(6, [0, 2, 4], erased=95)
    texts = _texts(fig)
    for i in (1, 3, 5):
        assert f"layer {i}<br><i>(not copied)</i>" in texts
    for j, i in enumerate((0, 2, 4)):
        assert f"layer {j}<br>(teacher's {i})" in texts
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    assert len(arrows) == 3 + 2  # the layers, the embeddings, the head
    dashed = [s for s in fig.layout.shapes if s.line.dash == "dash"]
    assert len(dashed) == 3 and len(fig.layout.shapes) == 8 + 5  # 8 teacher boxes, 5 student boxes
    # the embeddings are copied (an arrow, like every copy; no cross), the erased rows said under it
    assert "embeddings<br>(a copy)" in texts and not any("✕" in t for t in texts)
    (note,) = [t for t in texts if "re-drawn" in t]
    assert note == "↑ copied, 95 rows re-drawn (erased copy only)"
    embeddings_arrow = min(arrows, key=lambda a: a.y)
    (note_at,) = [a for a in fig.layout.annotations if a.text == note]
    assert note_at.y < embeddings_arrow.y and note_at.x == 0.5 and fig.layout.yaxis.range[0] < 0
    plain = figures.copy_figure(6, [0, 2, 4])
    assert "embeddings<br>(a copy)" in _texts(plain) and not any("re-drawn" in t for t in _texts(plain))
    # the arrows go from the teacher's layer to the student's, at their heights
    y = {t: a.y for a in fig.layout.annotations if not a.showarrow for t in [a.text]}
    layer_arrows = sorted(arrows, key=lambda a: a.y)[1:4]  # above the embeddings, below the head
    assert [a.ay for a in layer_arrows] == [y[f"layer {i}"] for i in (0, 2, 4)]
    # a phone gets the same boxes, texts and arrows, wider and in a smaller font, inside the figure
    narrow = fig.layout.meta["narrow_layout"]
    assert [a["text"] for a in narrow["annotations"]] == [t.replace(" (erased", "<br>(erased") for t in texts]
    assert [s_["line"]["dash"] for s_ in narrow["shapes"]] == [s_.line.dash for s_ in fig.layout.shapes]
    assert all(0 <= s_["x0"] < s_["x1"] <= 1 for s_ in narrow["shapes"])
    wide_box = fig.layout.shapes[0].x1 - fig.layout.shapes[0].x0
    assert narrow["shapes"][0]["x1"] - narrow["shapes"][0]["x0"] > wide_box
    assert all(a["font"]["size"] < 12 for a in narrow["annotations"] if a["text"].startswith("layer"))


@pytest.mark.parametrize("args, match", [
    ((0, [0]), "an int from 1 to 12"),
    ((6, [2, 1]), "increasing teacher layers between 0 and 5"),
    ((6, [0, 6]), "between 0 and 5"),
    ((6, []), "increasing teacher layers"),
])
def test_the_copy_figure_refuses_impossible_copies(args, match):
    with pytest.raises(ValueError, match=match):
        figures.copy_figure(*args)
    with pytest.raises(ValueError, match="expected erased"):
        figures.copy_figure(6, [0, 2, 4], erased=-1)


def test_the_polarity_figure_draws_each_words_numbers_by_polarity():
    words, labels = ["kind", "cruel", "calm", "rude"], [1, 0, 1, 0]
    direction = np.array([2.0, -4.0, 1.0, -1.0])
    preference = np.array([0.9, 0.1, 0.8, 0.3])
    fig = figures.polarity_figure({"copy": (direction, preference)}, words, labels)
    traces = {(t.xaxis, t.marker.symbol): t for t in fig.data}
    assert list(traces[("x", "circle")].x) == [0.5, 0.25]  # scaled by the largest |projection|, 4
    assert list(traces[("x", "x-thin-open")].x) == [-1.0, -0.25]
    assert list(traces[("x2", "circle")].x) == [0.9, 0.8] and list(traces[("x2", "x-thin-open")].text) == ["cruel", "rude"]
    assert sum(t.showlegend for t in fig.data) == 2  # one legend entry per polarity
    with pytest.raises(ValueError, match="one label 0 or 1 per word"):
        figures.polarity_figure({"copy": (direction, preference)}, words, [1, 0, 2, 0])
    with pytest.raises(ValueError, match="one finite value per word"):
        figures.polarity_figure({"copy": (direction[:3], preference)}, words, labels)


def test_one_token_figure_draws_each_series_per_token_and_marks_the_label_and_the_erased_words():
    from course_utils.figures import one_token_figure

    fig = one_token_figure(["cheerful", "kind", "gentle"],
                           {"the teacher": [0.3, 0.2, 0.1], "the student, before": [0.4, 0.0, 0.0]},
                           label="cheerful", marked=["kind", "gentle"], title="One token")
    assert [t.name for t in fig.data] == ["the teacher", "the student, before"]
    assert list(fig.data[0].y) == ["cheerful (the label)", "kind *", "gentle *"]
    assert list(fig.data[1].x) == [0.4, 0.0, 0.0] and fig.data[0].orientation == "h"
    with pytest.raises(ValueError, match="the label among the tokens"):
        one_token_figure(["a"], {"x": [0.1]}, label="b", title="t")
    with pytest.raises(ValueError, match="one probability per token"):
        one_token_figure(["a", "b"], {"x": [0.1]}, label="a", title="t")


# --------------------------------------------------------------------------------------------
# One step of distillation: who reads what, and the gradient into the student only

ALPHAS = {"ce": 5.0, "mlm": 2.0, "cos": 1.0}


def _named(items, prefix):
    return [item for item in items if (item.get("name") or "").startswith(prefix)]


def test_the_distillation_step_draws_each_loss_fed_from_the_side_it_reads_and_the_gradient_into_the_student():
    from course_utils.figures import canvas

    fig = figures.distillation_step_figure(6, 3, ALPHAS, 2.0)
    layout = fig.to_plotly_json()["layout"]
    for drawn in (layout, layout["meta"]["narrow_layout"]):
        notes, shapes = drawn["annotations"], drawn["shapes"]
        assert canvas.clashes_of(drawn) == []  # no label on a label, a line, an arrow or a box's edge
        texts = {n["name"]: n["text"] for n in notes if not n.get("showarrow")}
        assert texts["L_mlm"].startswith("<b>2 · L_mlm") and texts["L_ce"].startswith("<b>5 · L_ce")
        assert texts["L_cos"].startswith("<b>1 · L_cos") and "T=2" in texts["L_ce"].replace(" ", "")
        assert "6 layers" in texts["the teacher"] and "frozen" in texts["the teacher"]
        assert "3 layers" in texts["the student"] and "student only" in texts["the gradient"]
        (teacher,) = _named(shapes, "the teacher")
        (student,) = _named(shapes, "the student")
        (panel,) = [s for s in _named(shapes, "the losses") if s["type"] == "rect"]
        assert teacher["x1"] < panel["x0"] < panel["x1"] < student["x0"]  # teacher left, student right
        assert len(_named(shapes, "lock")) == 4 and teacher["line"]["color"] != student["line"]["color"]
        arrows = [n for n in notes if n.get("showarrow")]
        for term, sides in (("mlm", {"student"}), ("ce", {"teacher", "student"}), ("cos", {"teacher", "student"})):
            into = [a for a in arrows if a["name"].endswith(f"to L_{term}")]
            assert {a["name"].split()[0] for a in into} == sides
            for a in into:  # each head ends on the panel's edge, on the side its model stands
                assert a["x"] == pytest.approx(panel["x0"] - 1 if a["ax"] < panel["x0"] else panel["x1"] + 1)
        (labels,) = [a for a in arrows if a["name"] == "the labels"]
        assert labels["y"] == pytest.approx(panel["y0"] - 1)  # the true tokens into the panel's top row, L_mlm
        (gradient,) = [a for a in arrows if a["name"] == "the gradient"]
        assert student["x0"] < gradient["x"] < student["x1"] and gradient["y"] == pytest.approx(student["y1"] + 1)
        dashed = [s for s in _named(shapes, "the gradient") if s["line"]["dash"] == "dash"]
        assert len(dashed) == 2 and dashed[0]["y0"] == pytest.approx(panel["y1"])  # it leaves from L
        assert not any(a["x"] <= teacher["x1"] + 1 and a["y"] >= teacher["y0"] for a in arrows
                       if a["name"] != "the ids")  # nothing flows back into the teacher
    assert layout["meta"]["narrow_layout"]["xaxis"]["range"][1] < layout["xaxis"]["range"][1]


@pytest.mark.parametrize("args, match", [
    ((0, 3, ALPHAS, 2.0), "n_teacher, a number of layers"),
    ((6, True, ALPHAS, 2.0), "n_student, a number of layers"),
    ((6, 3, {"ce": 5.0, "mlm": 2.0}, 2.0), "a dict of the weights"),
    ((6, 3, {**ALPHAS, "cos": -1.0}, 2.0), r"alphas\['cos'\] to be a finite number > 0"),
    ((6, 3, ALPHAS, 0.0), "temperature to be a finite number > 0"),
])
def test_the_distillation_step_refuses_wrong_inputs(args, match):
    with pytest.raises(ValueError, match=match):
        figures.distillation_step_figure(*args)


# --------------------------------------------------------------------------------------------
# Every token's probability by rank, and where each kind ranks

def test_the_ranked_guesses_figure_draws_every_token_at_its_rank_by_kind_with_the_threshold():
    p = np.array([0.05, 0.4, 0.0005, 0.3, 0.2, 0.0495, 1e-6])
    p = p / p.sum()
    tokens = ["cats", "cat", "run", "dog", "bird", "dogs", "##s"]
    kinds = ["plural", "singular", "verb", "singular", "singular", "plural", "piece"]
    fig = figures.ranked_guesses_figure(p, tokens, kinds, threshold=1e-3, title="by rank")
    dots = {t.name: t for t in fig.data if t.yaxis == "y"}
    strips = {t.name: t for t in fig.data if t.yaxis == "y2"}
    assert set(dots) == set(strips) == {"singular", "plural", "verb", "piece"}
    assert list(dots["singular"].x) == [1, 2, 3] and list(dots["singular"].text) == ["cat", "dog", "bird"]
    assert list(dots["plural"].x) == [4, 5] and list(dots["verb"].x) == [6] and list(dots["piece"].x) == [7]
    np.testing.assert_allclose(np.array(dots["plural"].y, dtype=float), p[[0, 5]], rtol=1e-3)
    assert list(strips["verb"].y) == ["verb"] and list(strips["plural"].x) == [4, 5]
    # the strip's rows in the order the kinds first appear by rank, the first on top
    assert list(fig.layout.yaxis2.categoryarray) == ["piece", "verb", "plural", "singular"]
    (threshold,) = fig.layout.shapes
    assert threshold.y0 == threshold.y1 == 1e-3 and threshold.line.dash == "dot"
    (label,) = [a for a in fig.layout.annotations if a.text == "0.001"]
    assert label.y == pytest.approx(-3) and label.x == 7 and label.xanchor == "right"  # log10, at the right end
    assert fig.layout.yaxis.type == "log" and list(fig.layout.yaxis.ticktext[:3]) == ["1", "0.1", "0.01"]
    assert "10<sup>-6</sup>" in fig.layout.yaxis.ticktext
    assert len({t.marker.symbol for t in dots.values()}) == 4  # the kinds read without colour


@pytest.mark.parametrize("args, match", [
    (([0.5, 0.4], ["a", "b"], ["x", "y"]), "summing to 1"),
    (([0.5, 0.5], ["a"], ["x", "y"]), "one token and one kind per probability"),
    (([[0.5, 0.5]], ["a", "b"], ["x", "y"]), r"shape \(V,\)"),
    (([1.5, -0.5], ["a", "b"], ["x", "y"]), ">= 0"),
])
def test_the_ranked_guesses_figure_wants_one_distribution(args, match):
    with pytest.raises(ValueError, match=match):
        figures.ranked_guesses_figure(*args, title="t")
    with pytest.raises(ValueError, match="threshold"):
        figures.ranked_guesses_figure([0.5, 0.5], ["a", "b"], ["x", "y"], threshold=2.0, title="t")


# --------------------------------------------------------------------------------------------
# Who labels what in the few-label arms

def test_the_few_labels_figure_sends_the_labels_to_every_arm_and_the_teacher_to_b_and_c_only():
    from course_utils.figures import canvas

    fig = figures.few_labels_figure(500, 16_867)
    layout = fig.to_plotly_json()["layout"]
    for drawn in (layout, layout["meta"]["narrow_layout"]):
        assert canvas.clashes_of(drawn) == []  # no label on a label, a line, an arrow or a box's edge
        notes, shapes = drawn["annotations"], drawn["shapes"]
        texts = {n["name"]: n["text"] for n in notes if not n.get("showarrow")}
        assert "500 labelled" in texts["the labels"] and "16,867" in texts["the text"]
        assert "on the 500 only" in texts["the teacher"]
        assert [texts[f"arm {a}"].split("<br>")[1] for a in "ABC"] == ["labels only", "+ soft targets", "+ answers"]
        arrows = {n["name"]: n for n in notes if n.get("showarrow")}
        arm = {a: next(s for s in shapes if s["name"] == f"arm {a}" and s["type"] == "rect") for a in "ABC"}
        teacher = next(s for s in shapes if s["name"] == "the teacher" and s["type"] == "rect")
        for a in "ABC":  # the labels reach every arm, from below, its head on the arm's bottom edge
            head = arrows[f"labels to {a}"]
            assert arm[a]["x0"] < head["x"] < arm[a]["x1"] and head["y"] == pytest.approx(arm[a]["y1"] + 1)
        assert "the teacher to A" not in arrows  # A reads the labels alone
        for a in "BC":  # the teacher's outputs into B and C, from its bottom edge to the arm's top
            out = arrows[f"the teacher to {a}"]
            assert out["ay"] == pytest.approx(teacher["y1"]) and out["y"] == pytest.approx(arm[a]["y0"] - 1)
        into = arrows["labels to the teacher"]
        assert into["y"] == pytest.approx(teacher["y0"] - 1)  # the teacher is fine-tuned on the labels
    assert layout["meta"]["narrow_layout"]["xaxis"]["range"][1] < layout["xaxis"]["range"][1]


@pytest.mark.parametrize("args", [(0, 100), (500, -1), (True, 100), (500, 1.5), ("500", 100)])
def test_the_few_labels_figure_wants_counts_of_sentences(args):
    with pytest.raises(ValueError, match="a number of sentences, a positive int"):
        figures.few_labels_figure(*args)
