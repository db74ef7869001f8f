"""The standard fine-tuning recipe (lesson 08) and task-specific distillation (lesson 07).

Checked against code nobody here wrote: torch's AdamW (one group per decay), torch's own
cross-entropy and KL divergence, and Hugging Face's ``get_linear_schedule_with_warmup``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn import functional as F
from transformers import DistilBertConfig, DistilBertForSequenceClassification, get_linear_schedule_with_warmup

from course_utils import data, distill, plots, training


@pytest.fixture(scope="module")
def small(tokenizer):
    return training.encode(data.corpus("train")[:96], tokenizer)


def tiny_classifier(tokenizer, seed=0):
    torch.manual_seed(seed)
    config = DistilBertConfig(vocab_size=len(tokenizer), dim=16, n_layers=1, n_heads=2, hidden_dim=32,
                              max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id, num_labels=2)
    return DistilBertForSequenceClassification(config)


def test_matrices_only_decay_exempts_every_bias_and_layernorm_weight(tokenizer):
    model = tiny_classifier(tokenizer)
    decayed, exempt = training.parameter_groups(model, 0.01, "matrices")
    names = {id(p): n for n, p in model.named_parameters()}
    exempt_names = {names[id(p)] for p in exempt["params"]}
    assert exempt["weight_decay"] == 0.0 and decayed["weight_decay"] == 0.01
    assert exempt_names == {n for n, p in model.named_parameters() if n.endswith("bias") or "layernorm" in n.replace("_", "").lower()}
    assert len(decayed["params"]) + len(exempt["params"]) == len(list(model.parameters()))
    (everything,) = training.parameter_groups(model, 0.01, "all")
    assert len(everything["params"]) == len(list(model.parameters()))


def test_decay_changes_only_the_decayed_parameters(tokenizer):
    """With a zero gradient, AdamW moves a parameter only through its weight decay."""
    model = tiny_classifier(tokenizer)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizer, _ = training.optimiser(model, steps=1, lr=0.1, warmup=1, weight_decay=0.5, decay="matrices")
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    optimizer.step()
    for name, p in model.named_parameters():
        moved = not torch.equal(before[name], p)
        assert moved == (p.ndim >= 2 and bool(before[name].any())), name


def test_schedules_match_hugging_faces_and_constant_is_constant(tokenizer):
    model = tiny_classifier(tokenizer)
    optimizer, schedule = training.optimiser(model, steps=20, lr=1e-3, warmup=5, weight_decay=0.0)
    reference_optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    # HF's factor is step / warmup during warm-up (0 at step 0); the course's is (step + 1) / warmup
    reference = get_linear_schedule_with_warmup(reference_optimizer, num_warmup_steps=5, num_training_steps=20)
    ours, theirs = [], []
    for _ in range(20):
        ours.append(schedule.get_last_lr()[0])
        theirs.append(reference.get_last_lr()[0])
        optimizer.step(), schedule.step(), reference_optimizer.step(), reference.step()
    np.testing.assert_allclose(ours[5:], theirs[5:], rtol=1e-12)  # the decay: the same
    np.testing.assert_allclose(ours[:5], [x + 2e-4 for x in theirs[:5]], rtol=1e-12)  # one step ahead
    _, constant = training.optimiser(model, steps=20, lr=1e-3, warmup=5, weight_decay=0.0, schedule="constant")
    assert constant.get_last_lr() == [1e-3]


@pytest.mark.parametrize("changes, message", [
    (dict(schedule="cosine"), "schedule"), (dict(decay="biases"), "decay"),
])
def test_optimiser_rejects_unknown_choices(tokenizer, changes, message):
    with pytest.raises(ValueError, match=message):
        training.optimiser(tiny_classifier(tokenizer), steps=5, lr=1e-3, warmup=1, weight_decay=0.0, **changes)


def test_train_classifier_steps_and_objective(small, tokenizer):
    seen = []

    def objective(logits, labels, indices):
        seen.append(list(indices))
        return F.cross_entropy(logits, labels)

    model = tiny_classifier(tokenizer)
    history = training.train_classifier(model, small, tokenizer.pad_token_id, steps=7, batch_size=32,
                                        objective=objective, progress=False, decay="matrices")
    assert len(history.losses["loss"]) == 7 == len(seen)  # 3 batches an epoch: epoch after epoch
    assert sorted(sum(seen[:3], [])) == list(range(96))
    # the default objective is the model's own cross-entropy: the same losses
    default = training.train_classifier(tiny_classifier(tokenizer), small, tokenizer.pad_token_id, steps=7,
                                        batch_size=32, progress=False, decay="matrices")
    assert default.losses["loss"] == history.losses["loss"]
    with pytest.raises(TypeError, match="objective"):
        training.train_classifier(model, small, tokenizer.pad_token_id, objective="kl", progress=False)


def test_subset_draws_without_replacement(small):
    part = training.subset(small, 10, seed=3)
    assert len(part.ids) == 10 and part == training.subset(small, 10, seed=3)
    pairs = {(tuple(i), l) for i, l in zip(small.ids, small.labels)}
    assert all((tuple(i), l) in pairs for i, l in zip(part.ids, part.labels))
    assert part != training.subset(small, 10, seed=4)
    with pytest.raises(ValueError, match="n <= 96"):
        training.subset(small, 97, seed=0)


def test_hinton_loss_against_torch():
    torch.manual_seed(0)
    student, teacher, labels = torch.randn(6, 3), torch.randn(6, 3), torch.tensor([0, 1, 2, 0, 1, 2])
    T, alpha = 3.0, 0.3
    kl = torch.nn.KLDivLoss(reduction="batchmean")(F.log_softmax(student / T, -1), F.softmax(teacher / T, -1))
    expected = alpha * F.cross_entropy(student, labels) + (1 - alpha) * T**2 * kl
    torch.testing.assert_close(distill.hinton_loss(student, teacher, labels, alpha=alpha, temperature=T), expected)
    assert torch.isclose(distill.hinton_loss(student, teacher, labels, alpha=1.0), F.cross_entropy(student, labels))
    assert distill.hinton_loss(teacher, teacher, labels, alpha=0.0) == 0


@pytest.mark.parametrize("alpha", [-0.1, 1.5, True, "half"])
def test_hinton_loss_rejects_bad_alpha(alpha):
    with pytest.raises(ValueError, match="alpha"):
        distill.hinton_loss(torch.zeros(2, 2), torch.zeros(2, 2), torch.tensor([0, 1]), alpha=alpha)


def test_hinton_loss_rejects_labels_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"labels of shape \(N,\)"):
        distill.hinton_loss(torch.zeros(2, 2), torch.zeros(2, 2), torch.tensor([[0, 1]]))


def test_task_objective_picks_the_teachers_rows_of_the_batch():
    teacher = torch.randn(5, 2)
    objective = distill.task_objective(teacher, alpha=0.25, temperature=2.0)
    logits, labels = torch.randn(2, 2), torch.tensor([1, 0])
    expected = distill.hinton_loss(logits, teacher[[4, 1]], labels, alpha=0.25, temperature=2.0)
    torch.testing.assert_close(objective(logits, labels, np.array([4, 1])), expected)


def test_curve_groups_one_legend_entry_per_group():
    fig = plots.curve_groups([1, 2, 3], {"a": [[1, 2, 3], [2, 3, 4]], "b": [[0, 0, 1]]}, reference=("ln 2", 0.69),
                             title="t", x_title="x", y_title="y")
    shown = [t.name for t in fig.data if t.showlegend is not False]
    assert shown == ["a", "b", "ln 2"] and len(fig.data) == 4
    assert fig.data[0].line.color == fig.data[1].line.color != fig.data[2].line.color
    with pytest.raises(ValueError, match="3 values like x"):
        plots.curve_groups([1, 2, 3], {"a": [[1, 2]]}, title="t", x_title="x", y_title="y")
    with pytest.raises(ValueError, match="at least one group"):
        plots.curve_groups([1], {"a": []}, title="t", x_title="x", y_title="y")


def test_seed_spread_shows_every_seed_and_each_mean():
    values = {"500 labels": {"m1": [0.5, 0.6], "m2": [0.7]}, "2000 labels": {"m1": [0.8], "m2": [0.9, 0.95]}}
    fig = plots.seed_spread(values, title="t", x_title="x", y_title="y", reference=("teacher", 0.99))
    assert [t.name for t in fig.data if t.showlegend is not False] == ["m1", "m2", "teacher"]  # the line too
    points, means = fig.data[0], fig.data[1]
    assert list(points.y) == [0.5, 0.6, 0.8] and list(points.x) == ["500 labels"] * 2 + ["2000 labels"]
    assert list(means.y) == [0.55, 0.8] and means.legendgroup == points.legendgroup == "m1"
    assert points.marker.symbol != fig.data[2].marker.symbol and fig.layout.scattermode == "group"
    # the y axis spans the points and the reference, not from 0 (grouped markers' autorange would)
    low, high = fig.layout.yaxis.range
    assert 0.4 < low < 0.5 and 0.99 < high < 1.05
    assert fig.layout.shapes[0].line.color == plots.REFERENCE_COLOR and not fig.layout.annotations
    with pytest.raises(ValueError, match="at least one setting"):
        plots.seed_spread({}, title="t", x_title="x", y_title="y")
    with pytest.raises(ValueError, match="finite"):
        plots.seed_spread({"s": {"m": [0.5, float("nan")]}}, title="t", x_title="x", y_title="y")
    low, high = plots.seed_spread({"s": {"m": [0.0, 0.0]}}, title="t", x_title="x", y_title="y").layout.yaxis.range
    assert low < 0 < high  # equal values still get an axis around them


def test_seed_spread_names_its_reference_in_the_legend_never_on_the_points():
    """A label on the plot met a group's points on a phone (07's study page, "the paper's 97%"): the
    reference is a dotted line named in the legend, whatever the points do."""
    values = {"copy": {"m": [0.72, 0.78]}, "erased": {"m": [0.6]}, "random": {"m": [0.5, 0.55]}}
    fig = plots.seed_spread(values, title="t", x_title="x", y_title="y", reference=("ref", 0.755))
    named = [t for t in fig.data if t.name == "ref"]
    assert len(named) == 1 and named[0].line.dash == "dot" and not fig.layout.annotations
    assert fig.layout.shapes[0].y0 == pytest.approx(0.755)


def test_task_objective_on_unlabelled_rows_is_the_soft_targets_alone():
    """Hinton's transfer set: a row without a label learns from T²·KL alone, a labelled row from
    Hinton's loss; the batch's loss is the mean of its rows'. Checked against torch's KLDivLoss."""
    torch.manual_seed(1)
    teacher = torch.randn(6, 2)
    labelled = torch.tensor([True, False, True, False, False, True])
    T, alpha = 2.0, 0.5
    objective = distill.task_objective(teacher, alpha=alpha, temperature=T, labelled=labelled)
    logits, rows = torch.randn(4, 2), np.array([1, 0, 3, 5])
    labels = torch.tensor([-100, 1, -100, 0])  # the unlabelled rows' labels are never read
    kl = torch.nn.KLDivLoss(reduction="none")
    per_row = T**2 * kl(F.log_softmax(logits / T, -1), F.softmax(teacher[rows] / T, -1)).sum(-1)
    hard = F.cross_entropy(logits, labels.clamp(min=0), reduction="none")
    known = labelled[rows]
    expected = torch.where(known, alpha * hard + (1 - alpha) * per_row, per_row).mean()
    torch.testing.assert_close(objective(logits, labels, rows), expected)
    # every row labelled: the same as without the mask
    everyone = distill.task_objective(teacher, alpha=alpha, temperature=T, labelled=torch.ones(6, dtype=torch.bool))
    plain = distill.task_objective(teacher, alpha=alpha, temperature=T)
    gold = torch.tensor([1, 0, 1, 0])
    torch.testing.assert_close(everyone(logits, gold, rows), plain(logits, gold, rows))


@pytest.mark.parametrize("labelled", [[True, False], torch.ones(5), torch.ones(4, dtype=torch.bool)])
def test_task_objective_rejects_a_labelled_mask_that_is_not_one_bool_per_example(labelled):
    with pytest.raises(ValueError, match=r"labelled to be a bool tensor of shape \(N,\)=\(5,\)"):
        distill.task_objective(torch.randn(5, 2), labelled=torch.as_tensor(labelled))


def test_evaluations_during_fine_tuning_leave_the_run_as_it_was(tokenizer, small):
    """``evaluate`` runs in eval mode every ``evaluate_every`` steps and changes no loss: lesson 08's
    per-kind curves come from the very run the lesson replays."""
    kinds = [s.kind for s in data.corpus("train")[:96]]
    plain = training.train_classifier(tiny_classifier(tokenizer), small, tokenizer.pad_token_id, steps=12,
                                      batch_size=8, progress=False)
    modes = []

    def evaluate(model):
        modes.append(model.training)
        return training.accuracy_by_kind(model, small, kinds, tokenizer.pad_token_id)

    watched = training.train_classifier(tiny_classifier(tokenizer), small, tokenizer.pad_token_id, steps=12,
                                        batch_size=8, progress=False, evaluate=evaluate, evaluate_every=5)
    assert watched.losses == plain.losses
    assert [step for step, _ in watched.evaluations] == [5, 10] and modes == [False, False]
    assert set(watched.evaluations[0][1]) == set(kinds)
    with pytest.raises(TypeError, match="expected evaluate to be a function"):
        training.train_classifier(tiny_classifier(tokenizer), small, tokenizer.pad_token_id, steps=1, evaluate=3)


def test_accuracy_by_kind_is_the_accuracy_of_each_group(tokenizer, small):
    model = tiny_classifier(tokenizer)
    kinds = ["a" if i % 3 else "b" for i in range(len(small.ids))]
    right = training.predict(model, small, tokenizer.pad_token_id) == np.array(small.labels)
    by_kind = training.accuracy_by_kind(model, small, kinds, tokenizer.pad_token_id)
    assert list(by_kind) == ["b", "a"]
    assert by_kind["b"] == right[::3].mean() and by_kind["a"] == np.delete(right, np.s_[::3]).mean()
    with pytest.raises(ValueError, match="a kind per sentence"):
        training.accuracy_by_kind(model, small, kinds[:-1], tokenizer.pad_token_id)


def test_plateau_end_is_where_the_moving_average_first_drops_below_the_threshold():
    curve = [0.69] * 40 + [0.3] * 40
    end = training.plateau_end(curve)
    window = training.PLATEAU_WINDOW
    averages = training.smooth(curve)
    assert averages[end - window] < training.PLATEAU_EXIT <= averages[end - window - 1]
    assert training.plateau_end([0.69] * 100) is None
    assert training.plateau_end([0.1] * 30) == window  # below from the start: the first full window
    np.testing.assert_allclose(training.smooth([1, 2, 3, 4], window=2), [1.5, 2.5, 3.5])
    with pytest.raises(ValueError, match="at least window=25 steps"):
        training.plateau_end([0.5] * 10)
