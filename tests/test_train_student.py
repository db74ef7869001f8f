"""course_utils.models.train_student: lesson 07's students differ only in initialisation and loss weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import BertConfig, BertForMaskedLM

from course_utils import data, distill, models, tokenization, training
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
    _, direct = models.train_student("erased, MLM only", 0, teacher, tokenizer, train, steps=3, progress=False)
    student = models.student_start("erased copy", 0, teacher, tokenizer)
    settings = dict(models.DISTILLATION, steps=3)
    through = distill.distil(student, teacher, train, tokenizer, alphas={"ce": 0.0, "cos": 0.0}, seed=0,
                             progress=False, **settings)
    assert direct.losses["mlm"] == pytest.approx(through.losses["mlm"], rel=1e-6)


def test_the_arms_of_a_seed_see_the_same_batches_and_masks(setting, monkeypatch):
    """Every run of a seed reads the same batches with the same masked positions: only the start,
    the loss weights and the number of steps differ (a longer run reads the shorter one's batches
    first)."""
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
    assert len(seen) == 8 and all(all(torch.equal(a, b) for a, b in zip(first, masked)) for masked in seen.values())


def test_teacher_initialised_students_start_from_the_teacher_layers(setting):
    tokenizer, teacher, train = setting
    student, _ = models.train_student("distilled", 0, teacher, tokenizer, train, steps=1, progress=False)
    random_student, _ = models.train_student(models.THREE_LAYER_RUN, 0, teacher, tokenizer, train, steps=1,
                                             recipe=models.DISTILLATION, progress=False)
    word = teacher.bert.embeddings.word_embeddings.weight
    near = (student.distilbert.embeddings.word_embeddings.weight - word).abs().max()
    far = (random_student.distilbert.embeddings.word_embeddings.weight - word).abs().max()
    assert near < far
    with pytest.raises(ValueError, match="expected a recipe"):
        models.train_student(models.THREE_LAYER_RUN, 0, teacher, tokenizer, train, steps=1)


def test_the_study_is_the_declared_grid_of_starts_losses_budgets_and_seeds():
    """Every run is a start and a loss of the declaration: the erased start carries the triple loss,
    the two ablations and masked words alone at every budget; the copy its triple loss and no
    distillation. The declared contrasts' arms run with 8 seeds, every other with 3 (round three)."""
    assert models.STUDENT_GRID["distilled"] == ("copy", "triple loss")
    assert {loss for start, loss in models.STUDENT_GRID.values() if start == "erased copy"} == {
        "triple loss", "without L_ce", "without L_cos", "MLM only"}
    assert all(start in models.STUDENT_STARTS and loss in models.STUDENT_LOSSES
               for start, loss in models.STUDENT_GRID.values())
    assert "random" not in {start for start, _ in models.STUDENT_GRID.values()}  # cut: it reads at chance
    assert len(models.STUDENT_GRID) == 9
    for run, (start, loss) in models.STUDENT_GRID.items():
        assert models.STUDENT_RUNS[run] == (start, models.STUDENT_LOSSES[loss])
    assert [models.run_recipe(models.budget_run(s))["steps"] for s in models.MLM_BUDGETS] == [250, 500, 1000, 2000]
    assert [models.run_recipe(models.budget_run(s))["warmup"] for s in models.MLM_BUDGETS] == [25, 50, 100, 200]
    assert models.run_recipe("erased, triple loss") == models.DISTILLATION
    weights = distill._alphas(models.STUDENT_LOSSES["MLM only"])
    assert weights["ce"] == weights["cos"] == 0 < weights["mlm"]
    assert distill._alphas(models.STUDENT_LOSSES["without L_ce"]) == {"ce": 0.0, "mlm": 2.0, "cos": 1.0}
    assert distill._alphas(models.STUDENT_LOSSES["without L_cos"]) == {"ce": 5.0, "mlm": 2.0, "cos": 0.0}
    # every arm starts from the teacher's copy: none trains beside its pre-training
    assert all(models.needs_teacher(run) for run in models.STUDENT_RUNS)
    assert not models.needs_teacher(models.THREE_LAYER_RUN)
    with pytest.raises(ValueError, match="expected run to be one of"):
        models.needs_teacher("random, MLM only, 2,000 steps")  # round two's budget control: cut
    declared = {name for c in models.STUDY_CONTRASTS for name in (c.first, c.second)} - {"teacher"}
    assert declared == set(models.DECLARED_RUNS)
    assert {run for run, seeds in models.RUN_SEEDS.items() if seeds == models.DECLARED_SEEDS} == declared
    assert len(models.DECLARED_SEEDS) == 8 and models.TEACHER_SEEDS == models.DECLARED_SEEDS
    assert all(seeds == models.EXPLORATORY_SEEDS == (0, 1, 2) for run, seeds in models.RUN_SEEDS.items()
               if run not in declared) and models.TASK_SEEDS == models.EXPLORATORY_SEEDS
    # the cut order names what it can cut, and nothing declared
    assert set(models.STUDY_CUT_ORDER[1:]) <= set(models.STUDENT_RUNS) - declared
    assert set(models.STUDY_CUTS) <= set(models.STUDY_CUT_ORDER)


def test_the_teachers_recipe_is_the_pilots_recipe_2():
    chosen = models.pilot_recipe(models.PILOT_CHANGES[:2])
    assert chosen["pretraining"] == models.PRETRAINING and chosen["teacher_fine_tuning"] == models.TEACHER_FINE_TUNING
    assert models.pilot_recipe()["pretraining"] == models.PILOT_BASE_PRETRAINING
    assert models.STUDENT_FINE_TUNING == models.FINE_TUNING  # the students keep lesson 08's recipe


def test_the_declared_contrasts_name_runs_and_say_something_for_every_outcome():
    outcomes = {"higher", "lower", "cannot tell"}
    assert len(models.STUDY_CONTRASTS) == 3
    for contrast in models.STUDY_CONTRASTS:
        assert {contrast.first, contrast.second} <= set(models.STUDENT_GRID) | {"teacher"}
        assert set(contrast.says) == outcomes and contrast.part == "unseen"
        assert "eight seeds" in contrast.says["cannot tell"].lower()
    for contrast in models.EXPLORATORY_CONTRASTS:
        assert {contrast.first, contrast.second} <= set(models.STUDENT_GRID) and contrast.says == {}
    for contrast in models.FEW_LABEL_CONTRASTS:
        assert {contrast.first, contrast.second} <= set(models.TASK_ARMS) | {models.FEW_LABEL_TEACHER}
        assert contrast.says == {} and contrast.part == "all"
    primary = models.STUDY_CONTRASTS[0]
    assert (primary.first, primary.second, primary.part) == ("erased, triple loss", "erased, MLM only", "unseen")
    assert models.STUDY_CONTRASTS[1].second == models.budget_run(500) and models.ALPHA == 0.05


def _report(differences: dict, seeds=models.DECLARED_SEEDS) -> dict:
    """A report whose runs differ from 0.8 by ``differences[name]`` (one value per seed) on every part."""
    def scored(seed, shift):
        value = 0.8 + shift
        return {"seed": seed, "sentiment_accuracy_test": value,
                "accuracy_by_slice_test": {part: value for part in data.SLICES}}

    names = [*models.STUDENT_GRID, "teacher", *models.TASK_ARMS, models.FEW_LABEL_TEACHER]
    runs = {name: [scored(s, differences.get(name, [0.0] * len(seeds))[i]) for i, s in enumerate(seeds)
                   if name in ("teacher", *models.DECLARED_RUNS) or s in models.EXPLORATORY_SEEDS]
            for name in names}
    return {"teacher_fine_tuning_runs": runs.pop("teacher"),
            "students": {"runs": [dict(r, run=name) for name in models.STUDENT_GRID for r in runs[name]]},
            "task_distillation": {"runs": [dict(r, arm=name) for name in [*models.TASK_ARMS, models.FEW_LABEL_TEACHER]
                                           for r in runs[name]]}}


def test_study_results_apply_the_declared_analysis_and_intervals_agree_with_verdicts():
    """A big, steady difference is "higher" after Holm; a noisy one, "cannot tell"; each interval is at
    its Holm step's level and excludes 0 exactly when the verdict is "higher" or "lower"."""
    report = _report({
        "erased, triple loss": [0.10, 0.12, 0.11, 0.09, 0.10, 0.11, 0.10, 0.12],  # far above MLM only
        "erased, MLM only, 500 steps": [0.09, 0.13, 0.08, 0.12, 0.06, 0.13, 0.10, 0.09],  # a little below triple
        "teacher": [0.14, 0.08, 0.16, 0.05, 0.12, 0.10, 0.15, 0.07],  # noisy around the triple loss
    })
    results = models.study_results(report)
    primary, same_seconds, recovers = results
    assert primary.outcome == "higher" and primary.says.startswith("With the words erased, the teacher's outputs bring")
    assert primary.seeds == models.DECLARED_SEEDS and primary.difference.mean == pytest.approx(0.10625)
    assert recovers.outcome == "cannot tell" and recovers.says.startswith("Eight seeds cannot tell")
    for r in results:
        assert r.difference.p <= r.p_holm <= min(1.0, 3 * r.difference.p)
        low, high = r.difference.interval
        assert (low > 0 or high < 0) == (r.outcome in ("higher", "lower"))
    assert primary.difference.level == pytest.approx(1 - 0.05 / 3)
    exploratory = models.study_results(report, "exploratory")
    assert [r.contrast for r in exploratory] == list(models.EXPLORATORY_CONTRASTS + models.FEW_LABEL_CONTRASTS)
    assert all(r.outcome == "exploratory" and r.says == "" and r.p_holm is None and r.difference.level == 0.95
               and r.seeds == models.EXPLORATORY_SEEDS for r in exploratory)
    with pytest.raises(ValueError, match="expected family"):
        models.study_results(report, "few labels")


def test_the_budget_curve_says_how_many_masked_word_steps_the_teachers_outputs_are_worth():
    report = _report({
        models.budget_run(250): [0.0] * 8, models.budget_run(500): [0.02] * 8,
        models.budget_run(1000): [0.04, 0.05, 0.03] + [0.0] * 5, models.budget_run(2000): [0.08, 0.07, 0.09] + [0.0] * 5,
        "erased, triple loss": [0.06, 0.05, 0.07, 0.06, 0.06, 0.05, 0.07, 0.06],
    })
    worth = models.budget_worth(report)
    assert worth.curve == pytest.approx({250: 0.8, 500: 0.82, 1000: 0.84, 2000: 0.88})
    assert 1000 < worth.estimate < 2000 and worth.interval[0] <= worth.estimate <= worth.interval[1]


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
