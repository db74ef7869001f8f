"""course_utils.models.train_student: lesson 07's students differ only in initialisation and loss weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import BertConfig, BertForMaskedLM, DistilBertForMaskedLM

from course_utils import data, distill, models, students, tokenization, training
from course_utils.authoring import assets


@pytest.fixture(scope="module")
def setting():
    tokenizer = tokenization.load_bundled_tokenizer()
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=6, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    teacher = BertForMaskedLM(config).eval()
    return tokenizer, teacher, training.encode(data.corpus("train")[:64], tokenizer)


@pytest.mark.parametrize("run", list(models.STUDENT_RUNS))
def test_every_run_trains_a_half_depth_student_and_records_its_losses(setting, run):
    tokenizer, teacher, train = setting
    student, history = models.train_student(run, 0, teacher, tokenizer, train, steps=2, progress=False)
    assert student.config.n_layers == models.STUDENT_LAYERS == 3
    if models.STUDENT_RUNS[run][1] is None:  # no distillation: the start, untrained
        assert history.losses == {}
        start = models.student_start(models.STUDENT_GRID[run][0], 0, teacher, tokenizer)
        assert all(torch.equal(a, b) for a, b in zip(student.state_dict().values(), start.state_dict().values()))
        return
    assert set(history.losses) >= {"loss", "mlm"} and len(history.losses["loss"]) == 2
    weights = distill._alphas(models.STUDENT_RUNS[run][1])  # the run's loss weights, defaults filled in
    terms = [term for term in ("ce", "mlm", "cos") if weights[term] > 0]
    if terms == ["mlm"]:  # trained by train_mlm: the total is the MLM loss itself
        assert history.losses["loss"] == history.losses["mlm"]
        return
    for step, total in enumerate(history.losses["loss"]):
        weighted = sum(weights[term] * history.losses[term][step] for term in terms)
        assert total == pytest.approx(weighted, rel=1e-5)


def test_mlm_only_student_equals_distillation_with_no_teacher_signal(setting):
    """Skipping the teacher's forward pass changes nothing: same batches, masks and losses."""
    tokenizer, teacher, train = setting
    _, direct = models.train_student("random, MLM only", 0, teacher, tokenizer, train, steps=3, progress=False)
    torch.manual_seed(0)
    student = DistilBertForMaskedLM(students.student_config(teacher, models.STUDENT_LAYERS))
    settings = dict(models.DISTILLATION, steps=3)
    through = distill.distil(student, teacher, train, tokenizer, alphas={"ce": 0.0, "cos": 0.0}, seed=0,
                             progress=False, **settings)
    assert direct.losses["mlm"] == pytest.approx(through.losses["mlm"], rel=1e-6)


def test_the_arms_of_a_seed_see_the_same_batches_and_masks(setting, monkeypatch):
    """Every run of a seed reads the same batches with the same masked positions: only the start and
    the loss weights differ."""
    tokenizer, teacher, train = setting
    seen = {}
    real = training.mlm_batches

    def recording(*args, **kwargs):
        batches = list(real(*args, **kwargs))
        seen.setdefault(current, []).extend(batch[2].clone() for batch in batches)
        return iter(batches)

    monkeypatch.setattr(training, "mlm_batches", recording)
    for current in [run for run in models.STUDENT_RUNS if models.STUDENT_RUNS[run][1] is not None]:
        models.train_student(current, 1, teacher, tokenizer, train, steps=2, progress=False)
    first = next(iter(seen.values()))
    assert len(seen) == 6 and all(all(torch.equal(a, b) for a, b in zip(first, masked)) for masked in seen.values())


def test_teacher_initialised_students_start_from_the_teacher_layers(setting):
    tokenizer, teacher, train = setting
    student, _ = models.train_student("distilled", 0, teacher, tokenizer, train, steps=1, progress=False)
    random_student, _ = models.train_student("random, MLM only", 0, teacher, tokenizer, train, steps=1,
                                             progress=False)
    word = teacher.bert.embeddings.word_embeddings.weight
    near = (student.distilbert.embeddings.word_embeddings.weight - word).abs().max()
    far = (random_student.distilbert.embeddings.word_embeddings.weight - word).abs().max()
    assert near < far


def test_the_study_is_the_declared_grid_of_starts_and_losses():
    """Every run is a start and a loss of the declaration; the erased start carries every arm of the
    paper's Table 4 that the study runs, the copy its triple loss and no distillation, the random
    start the masked-LM loss alone (its triple loss is cut for time)."""
    assert models.STUDENT_GRID["distilled"] == ("copy", "triple loss")
    assert {loss for start, loss in models.STUDENT_GRID.values() if start == "erased copy"} == {
        "triple loss", "without L_ce", "without L_cos", "MLM only"}
    assert all(start in models.STUDENT_STARTS and loss in models.STUDENT_LOSSES
               for start, loss in models.STUDENT_GRID.values())
    assert len(set(models.STUDENT_GRID.values())) == len(models.STUDENT_GRID) == 7
    assert models.SEEDED_RUNS == tuple(models.STUDENT_RUNS) and len(models.STUDENT_SEEDS) == 5
    for run, (start, loss) in models.STUDENT_GRID.items():
        assert models.STUDENT_RUNS[run] == (start, models.STUDENT_LOSSES[loss])
    weights = distill._alphas(models.STUDENT_LOSSES["MLM only"])
    assert weights["ce"] == weights["cos"] == 0 < weights["mlm"]
    assert distill._alphas(models.STUDENT_LOSSES["without L_ce"]) == {"ce": 0.0, "mlm": 2.0, "cos": 1.0}
    assert distill._alphas(models.STUDENT_LOSSES["without L_cos"]) == {"ce": 5.0, "mlm": 2.0, "cos": 0.0}
    # only the random, MLM-only student reads nothing of the trained teacher
    assert [run for run in models.STUDENT_RUNS if not models.needs_teacher(run)] == ["random, MLM only"]
    with pytest.raises(ValueError, match="expected run to be one of"):
        models.needs_teacher("teacher layers, MLM only")  # cut: the copy with no distillation answers it
    # the budget control: the teacher's own recipe and budget
    assert {k: v for k, v in models.BUDGET_CONTROL.items() if k != "seed"} == {
        k: v for k, v in models.PRETRAINING.items() if k != "seed"}


def test_the_declared_contrasts_name_runs_and_say_something_for_every_outcome():
    outcomes = {"higher", "lower", "equivalent", "cannot tell"}
    for contrast in models.STUDY_CONTRASTS:
        assert {contrast.first, contrast.second} <= set(models.STUDENT_GRID) | {"teacher"}
        assert set(contrast.says) == outcomes and contrast.part in ("all", "unseen")
    for contrast in models.FEW_LABEL_CONTRASTS:
        assert {contrast.first, contrast.second} <= set(models.TASK_ARMS) | {models.FEW_LABEL_TEACHER}
        assert set(contrast.says) == outcomes and contrast.part == "all"
    primary = models.STUDY_CONTRASTS[0]
    assert (primary.first, primary.second, primary.part) == ("erased, triple loss", "erased, MLM only", "unseen")
    assert primary.margin == 0.03 and models.STUDY_CONTRASTS[4].margin == 0.01 and models.ALPHA == 0.05


def _report(differences: dict) -> dict:
    """A report whose runs differ from 0.8 by ``differences[name]`` (one value per seed) on every part."""
    def scored(name, seed, shift):
        value = 0.8 + shift
        return {"seed": seed, "sentiment_accuracy_test": value,
                "accuracy_by_slice_test": {part: value for part in data.SLICES}}

    runs = {name: [scored(name, s, differences.get(name, [0.0] * 5)[s]) for s in range(5)]
            for name in [*models.STUDENT_GRID, "teacher", *models.TASK_ARMS, models.FEW_LABEL_TEACHER]}
    return {"teacher_fine_tuning_runs": runs.pop("teacher"),
            "students": {"runs": [dict(r, run=name) for name in models.STUDENT_GRID for r in runs[name]]},
            "task_distillation": {"runs": [dict(r, arm=name) for name in [*models.TASK_ARMS, models.FEW_LABEL_TEACHER]
                                           for r in runs[name]]}}


def test_study_results_apply_the_declared_analysis():
    """A big, steady difference is "higher" after Holm; none at all with no spread, "equivalent"; a
    noisy one, "cannot tell"; a contrast's verdict picks the sentence declared for it."""
    report = _report({
        "erased, triple loss": [0.10, 0.12, 0.11, 0.09, 0.10],  # primary: far above MLM only
        "erased, without L_ce": [0.08, 0.14, 0.06, 0.13, 0.10],  # about the same as triple: noisy
        "erased, without L_cos": [0.101, 0.119, 0.111, 0.089, 0.1],  # the same to within 0.001: equivalent
        "teacher": [0.10, 0.12, 0.11, 0.09, 0.10],
    })
    results = {r.contrast.name: r for r in models.study_results(report)}
    primary = results["the teacher's outputs, on the erased start"]
    assert primary.outcome == "higher" and primary.says.startswith("With the words erased, the teacher's outputs bring")
    assert primary.seeds == (0, 1, 2, 3, 4) and primary.difference.mean == pytest.approx(0.104)
    assert results["L_cos, on the erased start"].outcome == "equivalent"
    assert results["L_ce, on the erased start"].outcome == "cannot tell"
    assert results["the loss, on the copy"].outcome == "equivalent"  # both at 0.8 exactly
    # Holm over the family: the adjusted p is at least the raw one, times at most the family's size
    for r in results.values():
        assert r.difference.p <= r.p_holm <= min(1.0, 6 * r.difference.p)
    few = models.study_results(report, "few labels")
    assert [r.contrast for r in few] == list(models.FEW_LABEL_CONTRASTS)
    with pytest.raises(ValueError, match="expected family"):
        models.study_results(report, "teachers")


def test_right_answers_round_trip():
    right = np.random.default_rng(0).random(5188) < 0.9
    packed = models.pack_right(right)
    assert len(packed["packed"]) < 900 and np.array_equal(models.right_answers({"right_test": packed}), right)
    with pytest.raises(ValueError, match="one boolean per test sentence"):
        models.pack_right([1, 0])
    with pytest.raises(ValueError, match="rebuild the report"):
        models.right_answers({"sentiment_accuracy_test": 0.9})


def test_unknown_run_is_named(setting):
    tokenizer, teacher, train = setting
    with pytest.raises(ValueError, match="expected run to be one of"):
        models.train_student("bigger", 0, teacher, tokenizer, train, steps=1)


def test_unknown_stage_is_named():
    with pytest.raises(ValueError, match="expected stages among"):
        assets.rebuild(stages=("everything",))
