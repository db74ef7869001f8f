"""Issue 58's teacher pilot (``make pilot``): its declaration, its rule, its guard against the test
split, and a run at a tiny scale (a 16-wide teacher, a few steps) from start to end and resumed."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import BertConfig, BertForSequenceClassification

from course_utils import data, models, stats, training
from course_utils.authoring import pilot

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_declaration_is_whole_and_consistent():
    choosing, confirming = models.PILOT_SEEDS["choosing"], models.PILOT_SEEDS["confirming"]
    assert set(models.PILOT_SEEDS) == {"choosing", "confirming"}
    assert len(choosing) == len(confirming) == 3 and not set(choosing) & set(confirming)
    assert len(models.PILOT_FINE_TUNING_SEEDS) == 3 == len(set(models.PILOT_FINE_TUNING_SEEDS))
    assert models.PILOT_SPLIT == "validation" and models.PILOT_PARTS == ("unseen", "all")
    assert models.PILOT_MODELS == ("teacher", "three-layer")
    assert models.THREE_LAYER_FINE_TUNING == models.STUDENT_FINE_TUNING
    # at most three changes, cheapest first: fine-tuning only, then the pre-training rate, then its steps
    changes = models.PILOT_CHANGES
    assert 1 <= len(changes) <= 3 and [c.name for c in changes] == ["fine-tuning rate and head", "pre-training rate",
                                                                    "epochs"]
    assert changes[0].pretraining == {} and set(changes[0].fine_tuning) == {"lr", "head_lr"}
    assert set(changes[1].pretraining) == {"lr"} and changes[1].fine_tuning == {}
    assert changes[2].pretraining["steps"] > models.PRETRAINING["steps"] and changes[2].fine_tuning == {}
    for change in changes:  # the task, the tokenizer and the architecture stay: only recipe keys change
        assert set(change.pretraining) <= set(models.PRETRAINING) - {"seed"}
        assert set(change.fine_tuning) <= set(models.FINE_TUNING) | {"head_lr"}
    today = models.pilot_recipe(())
    assert today["pretraining"] == models.PILOT_BASE_PRETRAINING and today["teacher_fine_tuning"] == models.FINE_TUNING
    both = models.pilot_recipe(changes[:2])
    assert both["name"] == "fine-tuning rate and head + pre-training rate"
    assert both["pretraining"]["lr"] == 5e-4 and both["teacher_fine_tuning"]["head_lr"] == 5e-4
    assert both["three_layer_fine_tuning"] == models.STUDENT_FINE_TUNING  # the reference's recipe never moves
    with pytest.raises(ValueError, match="declared order"):
        models.pilot_recipe(changes[::-1])
    # the declared time is the estimate replayed on two workers
    estimate = pilot.estimate()
    source = Path(models.__file__).read_text()
    for minutes in (estimate["best"], estimate["worst"]):
        hours, rest = divmod(round(minutes), 60)
        assert f"{hours} h {rest} min" in source, minutes
    assert [round(m) for m in estimate["phases"]] == [56, 5, 56, 107]
    assert f"{models.PILOT_SECONDS['teacher pre-training']:,} s" in source


def test_the_validation_split_holds_the_unseen_slice_the_declaration_counts():
    slices = [data.slice_of(s) for s in data.sentiment_task("validation")]
    assert len(slices) == 1910 and slices.count("unseen") == 321
    assert "(1,910 sentences)" in Path(models.__file__).read_text() and "unseen slice (321" in Path(
        models.__file__).read_text()


def test_the_guard_refuses_the_test_split_and_restores_the_data_functions():
    originals = {name: getattr(data, name) for name in pilot.GUARDED}
    with pilot.validation_only():
        with pilot.validation_only():  # nested: still on
            with pytest.raises(pilot.TestSplitRefused, match="validation split only"):
                data.corpus("test")
        for call in (lambda: data.corpus(split="test"), lambda: data.sentiment_task("test"),
                     lambda: data._held_out("test", 5), lambda: data._task_draw("test")):
            with pytest.raises(pilot.TestSplitRefused):
                call()
        assert len(data.corpus("validation")) == data.SPLIT_SIZES["validation"]
    assert {name: getattr(data, name) for name in pilot.GUARDED} == originals


def test_the_pilot_report_is_outside_the_bundle():
    """The lessons' recorded runs are checked against the bundle's digest (the manifest's sha256): a
    pilot report in the bundle would change it at every job."""
    from course_utils import bundle

    assert not pilot.REPORT.resolve().is_relative_to(bundle.ASSETS.resolve())
    assert pilot.REPORT.resolve() != models.REPORT.resolve()


def test_the_pilot_module_reads_no_test_data_of_make_assets():
    """make assets' loaders read the test split (its scores are on it): the pilot uses none of them."""
    source = Path(pilot.__file__).read_text()
    for name in ("_task_data", "_worker_data", "_scores", "test_accuracies", "sentiment_accuracy_test"):
        assert name not in source, name


@pytest.fixture(scope="module")
def tiny_data():
    pilot._data(pilot._scale_key(pilot.TINY))  # loaded once (about 4 s: the corpus is generated)


def test_a_pilot_job_that_reaches_for_the_test_split_fails(monkeypatch, tmp_path, tiny_data):
    def peeking(*args, **kwargs):
        data.sentiment_task("test")

    monkeypatch.setattr(training, "mlm_accuracy", peeking)
    with pytest.raises(pilot.TestSplitRefused):
        pilot._pretrain("teacher", dict(models.PRETRAINING), 0, str(tmp_path / "t"), pilot.TINY)
    assert pilot._active == 0 and pilot._originals == {}  # the guard is lifted after the failure


def test_the_tiny_pilot_runs_every_recipe_to_its_end_and_resumes(monkeypatch, tmp_path, tiny_data):
    """At a tiny scale no fine-tuning leaves ln 2 within the plateau rule, so no recipe passes: today's
    and each change are tried in order on the choosing seeds, the pilot stops, and report.json is untouched."""
    monkeypatch.setattr(models, "PILOT_SEEDS", {"choosing": (0, 1), "confirming": (2, 3)})
    monkeypatch.setattr(models, "PILOT_FINE_TUNING_SEEDS", (0,))
    bundled_report = models.REPORT.read_bytes()
    # one thread: transformers' loading builds models on the meta device process-wide, so two loads
    # in threads of one process would meet (make pilot's workers are processes)
    path = tmp_path / "pilot.json"
    report = pilot.run_pilot(path, tmp_path / "models", pilot.TINY, lambda: ThreadPoolExecutor(1), progress=False)
    assert models.REPORT.read_bytes() == bundled_report
    state = report["state"]
    assert state["outcome"] == "none passed" and state["chosen"] is None
    assert [t["recipe"] for t in state["tried"]][0] == "today's" and len(state["tried"]) == 4
    assert all(not t["passes"] and not t["plateau"] for t in state["tried"])
    assert state["bundled_seed"] in (0, 1) and state["teacher_recipe"]["name"] == "today's"
    # every job once: 2 models x 2 seeds pre-trained per pre-training recipe (three), one fine-tuning each
    # per recipe (recipe 1 re-uses today's pre-training and three-layer fine-tunings)
    names = list(report["jobs"])
    assert len(names) == len(set(names)) == 3 * 4 + 3 * 4 + 2
    assert set(report["job_seconds"]) == set(names) and all(s > 0 for s in report["job_seconds"].values())
    for result in report["jobs"].values():
        if "fine_tuning_seed" in result:
            assert set(result["accuracy_validation"]) <= {"all", *data.SLICES}
            assert len(result["fine_tuning_loss_curve"]) == pilot.TINY["fine_tuning_steps"]
    assert json.loads(path.read_text())["state"] == json.loads(json.dumps(state))
    assert report["declaration"]["split"] == "validation"
    # resumed: nothing runs again, the same course
    monkeypatch.setattr(pilot, "_pretrain", lambda *a: pytest.fail("a pre-training ran again"))
    monkeypatch.setattr(pilot, "_fine_tune", lambda *a: pytest.fail("a fine-tuning ran again"))
    again = pilot.run_pilot(path, tmp_path / "models", pilot.TINY, lambda: ThreadPoolExecutor(1), progress=False)
    assert again["state"] == json.loads(json.dumps(state)) and again["jobs"] == report["jobs"]


# --------------------------------------------------------------------------------------------
# The rule, on made-up results


def _fill(results, recipe, seeds, teacher, three_layer, plateau=True):
    """Results of every job of ``recipe`` on ``seeds``: each model's accuracy per part, ``teacher[part]``
    plus a small seed-dependent wobble."""
    fine_tunings = {"teacher": recipe["teacher_fine_tuning"], "three-layer": recipe["three_layer_fine_tuning"]}
    for model, level in (("teacher", teacher), ("three-layer", three_layer)):
        for seed in seeds:
            results[pilot.pretraining_job(model, recipe["pretraining"], seed)] = {"mlm_accuracy_validation": 0.4}
            for f in models.PILOT_FINE_TUNING_SEEDS:
                wobble = 0.001 * ((seed * 7 + f * 3) % 5)
                results[pilot.fine_tuning_job(model, recipe["pretraining"], fine_tunings[model], seed, f)] = {
                    "fine_tuning_seed": f, "meets_plateau_rule": plateau or model != "teacher",
                    "accuracy_validation": {part: value + wobble for part, value in level.items()}}


CHOOSING, CONFIRMING = models.PILOT_SEEDS["choosing"], models.PILOT_SEEDS["confirming"]
ALL_SEEDS = (*CHOOSING, *CONFIRMING)


def test_the_rule_starts_with_todays_recipe_on_the_choosing_seeds():
    state = pilot.decide({})
    recipe, seeds = state["next"]
    assert recipe["name"] == "today's" and seeds == CHOOSING and state["tried"] == []


def test_todays_recipe_passing_and_confirmed_with_intervals_clear_of_zero_is_better():
    results, today = {}, models.pilot_recipe(())
    _fill(results, today, ALL_SEEDS, {"all": 0.95, "unseen": 0.90}, {"all": 0.92, "unseen": 0.80})
    state = pilot.decide(results)
    assert state["chosen"] == "today's" and len(state["tried"]) == 1 and state["next"] is None
    assert state["confirming"]["passes"] and state["outcome"] == "confirmed, better"
    assert state["six_seeds"]["difference"]["unseen"] == pytest.approx(0.10)
    assert state["bundled_seed"] in ALL_SEEDS and state["teacher_recipe"] == today


def test_a_teacher_ahead_by_less_than_its_spread_is_ahead_on_average_only():
    results, today = {}, models.pilot_recipe(())
    _fill(results, today, ALL_SEEDS, {"all": 0.9202, "unseen": 0.8002}, {"all": 0.92, "unseen": 0.80})
    state = pilot.decide(results)
    assert state["outcome"] == "confirmed, ahead on average"


def test_a_change_is_kept_only_when_it_raised_the_margin_and_a_failed_confirmation_stops_the_pilot():
    results = {}
    one, two, three = models.PILOT_CHANGES
    _fill(results, models.pilot_recipe(()), CHOOSING, {"all": 0.90, "unseen": 0.70}, {"all": 0.92, "unseen": 0.80})
    # change 1 raises the margin (-0.10 to -0.05) but fails: kept for change 2
    _fill(results, models.pilot_recipe((one,)), CHOOSING, {"all": 0.91, "unseen": 0.75}, {"all": 0.92, "unseen": 0.80})
    state = pilot.decide(results)
    assert state["kept"] == [one.name] and state["next"][0]["name"] == f"{one.name} + {two.name}"
    _fill(results, models.pilot_recipe((one, two)), CHOOSING, {"all": 0.95, "unseen": 0.85}, {"all": 0.92, "unseen": 0.80})
    state = pilot.decide(results)
    assert state["chosen"] == f"{one.name} + {two.name}" and state["next"][1] == CONFIRMING
    _fill(results, models.pilot_recipe((one, two)), CONFIRMING, {"all": 0.93, "unseen": 0.79}, {"all": 0.92, "unseen": 0.80})
    state = pilot.decide(results)
    assert state["outcome"] == "not confirmed" and state["next"] is None and len(state["tried"]) == 3
    assert state["teacher_recipe"]["name"] == "today's" and state["bundled_seed"] in CHOOSING  # change 3 never tried


def test_a_change_that_lowers_the_margin_is_dropped_and_a_plateau_miss_fails_a_recipe():
    results = {}
    one, two, three = models.PILOT_CHANGES
    _fill(results, models.pilot_recipe(()), CHOOSING, {"all": 0.90, "unseen": 0.70}, {"all": 0.92, "unseen": 0.80})
    _fill(results, models.pilot_recipe((one,)), CHOOSING, {"all": 0.95, "unseen": 0.90}, {"all": 0.92, "unseen": 0.80},
          plateau=False)  # above, but a teacher run missed the plateau rule: it fails; its margin is kept
    state = pilot.decide(results)
    assert not state["tried"][1]["passes"] and state["kept"] == [one.name]
    _fill(results, models.pilot_recipe((one, two)), CHOOSING, {"all": 0.80, "unseen": 0.60}, {"all": 0.92, "unseen": 0.80})
    state = pilot.decide(results)
    assert state["kept"] == [one.name] and state["next"][0]["name"] == f"{one.name} + {three.name}"


def test_the_bundled_seed_is_the_lower_median_on_the_unseen_slice_ties_to_the_whole_set():
    unseen = {0: 0.70, 1: 0.80, 2: 0.75, 3: 0.72, 4: 0.90, 5: 0.78}
    assert pilot.bundled_seed(unseen, dict.fromkeys(unseen, 0.9)) == 2  # 0.70 0.72 [0.75] 0.78 0.80 0.90
    tied = {0: 0.75, 1: 0.75, 2: 0.70}
    assert pilot.bundled_seed(tied, {0: 0.90, 1: 0.91, 2: 0.99}) == 1
    assert pilot.bundled_seed(tied, {0: 0.91, 1: 0.91, 2: 0.99}) == 0


# --------------------------------------------------------------------------------------------
# What the pilot adds to the package: a head's own rate, Welch's interval


def test_the_head_learns_at_its_own_rate_and_nothing_changes_without_one(tokenizer):
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, num_labels=2)
    model = BertForSequenceClassification(config)
    plain = training.parameter_groups(model, 0.01, "matrices")
    assert len(plain) == 2 and all("lr" not in group for group in plain)
    groups = training.parameter_groups(model, 0.01, "matrices", head_lr=5e-4)
    names = {id(p): n for n, p in model.named_parameters()}
    head = {names[id(p)] for g in groups if g.get("lr") == 5e-4 for p in g["params"]}
    assert head == {n for n, _ in model.named_parameters() if n.startswith(("bert.pooler.", "classifier."))}
    assert sum(len(g["params"]) for g in groups) == len(list(model.parameters()))
    optimizer, schedule = training.optimiser(model, steps=10, lr=2e-4, warmup=2, weight_decay=0.01,
                                             decay="matrices", head_lr=5e-4)
    for _ in range(3):
        optimizer.step()
        schedule.step()
    rates = sorted({round(g["lr"], 12) for g in optimizer.param_groups})
    assert rates == pytest.approx([2e-4 * 7 / 8, 5e-4 * 7 / 8])  # one schedule, two peaks
    with pytest.raises(ValueError, match="has none"):
        training.parameter_groups(torch.nn.Linear(2, 2), 0.01, head_lr=1e-3)


def test_welch_matches_scipy():
    from scipy import stats as scipy_stats

    a, b = [0.81, 0.78, 0.84], [0.86, 0.88, 0.85, 0.87]
    welch = stats.welch(a, b)
    reference = scipy_stats.ttest_ind(a, b, equal_var=False)
    assert welch.mean == pytest.approx(np.mean(a) - np.mean(b)) and welch.p == pytest.approx(reference.pvalue)
    assert welch.interval == pytest.approx(tuple(reference.confidence_interval(0.95)))
    assert welch.n == (3, 4) and re.search(r"n = 3 and 4", str(welch))
    assert stats.welch([0.5, 0.5], [0.5, 0.5]).interval == (0.0, 0.0)
    with pytest.raises(ValueError, match="at least 2 runs"):
        stats.welch([0.5], [0.5, 0.6])


def test_the_table_shows_each_phase_as_decided_and_says_when_the_pilot_is_not_over():
    results, today = {}, models.pilot_recipe(())
    _fill(results, today, CHOOSING, {"all": 0.95, "unseen": 0.90}, {"all": 0.92, "unseen": 0.80})
    rows = pilot.table(pilot.decide(results)).splitlines()
    assert rows[2].startswith("| today's | 0, 1, 2 | 0.90") and "| yes | yes |" in rows[2], rows
    assert "+10.0 (" in rows[2] and "+3.0 (" in rows[2], rows[2]  # D unseen, D all, in points
    assert rows[-1].startswith("Not over: chosen today's"), rows[-1]
    _fill(results, today, CONFIRMING, {"all": 0.95, "unseen": 0.90}, {"all": 0.92, "unseen": 0.80})
    state = pilot.decide(results)
    rows = pilot.table(state).splitlines()
    assert [r.split(" | ")[0] for r in rows[2:5]] == ["| today's", "| today's, confirming", "| today's, six seeds"]
    assert rows[-1] == f"Outcome: confirmed, better; the bundled teacher's pre-training seed: {state['bundled_seed']}."
