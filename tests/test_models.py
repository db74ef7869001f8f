"""course_utils.models: the bundled teacher, its quality report, and hub/bundled resolution."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from transformers import BertForMaskedLM, BertForSequenceClassification

from course_utils import data, env, models, training
from course_utils.authoring import assets

pytestmark = pytest.mark.skipif(
    not (models.BUNDLED["teacher-sentiment"] / "model.safetensors").exists(), reason="run `make assets` first"
)


def test_bundled_models_load_with_from_pretrained_in_hf_format():
    for name, cls in (("teacher", BertForMaskedLM), ("teacher-sentiment", BertForSequenceClassification)):
        folder = models.BUNDLED[name]
        assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors"]
        model = models.load_bundled(name)
        assert isinstance(model, cls) and not model.training
        config = json.loads((folder / "config.json").read_text())
        assert config["num_hidden_layers"] == 6 and 128 <= config["hidden_size"] <= 256


def test_bundled_assets_stay_under_30_mb():
    size = sum(p.stat().st_size for p in models.ASSETS.rglob("*") if p.is_file())
    assert size < 30 * 2**20, f"bundled assets are {size / 2**20:.1f} MB"


def test_report_matches_the_bundled_models(tokenizer):
    """The committed report is not stale: re-measuring the bundled models gives its numbers."""
    report = models.report()
    test = training.encode(data.corpus("test"), tokenizer)
    task_test = training.encode(data.sentiment_task("test"), tokenizer)
    classifier = models.load_bundled("teacher-sentiment")
    assert training.accuracy(classifier, task_test, tokenizer.pad_token_id) == pytest.approx(
        report["sentiment_accuracy_test"], abs=0.002
    )
    teacher = models.load_bundled("teacher")
    assert sum(p.numel() for p in teacher.parameters()) == report["teacher_parameters"]
    assert training.mlm_accuracy(teacher, test, tokenizer) == pytest.approx(report["mlm_accuracy_test"], abs=0.002)


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


def test_the_sentiment_task_meets_the_targets_of_issue_40():
    """A task with headroom (accuracies are means over the seeds): an unseen slice of at least 600
    sentences, on which a bag of words is not shown better than the majority class and the teacher at least
    15 points above it and at most 0.95; the teacher off the ceiling overall, the bag of words 15
    points below it; every fine-tuning run of the recipe leaves ln 2 by the stated limit."""
    report = models.report()
    teacher_runs = report["teacher_fine_tuning_runs"]
    assert [r["seed"] for r in teacher_runs] == list(models.TEACHER_SEEDS) and len(models.TEACHER_SEEDS) >= 5
    unseen = report["slices"]["test"]["slices"]["unseen"]
    assert unseen["sentences"] >= 600
    teacher_unseen = _mean(r["accuracy_by_slice_test"]["unseen"] for r in teacher_runs)
    # no better than the majority class: on the fresh pool of round three it reads 0.510 against a
    # majority share of 0.507 (2 of 779 sentences), so the test is that a binomial test cannot tell it above
    from scipy.stats import binomtest

    bag_right = round(report["bag_of_words_accuracy_by_slice_test"]["unseen"] * unseen["sentences"])
    assert binomtest(bag_right, unseen["sentences"], unseen["majority"], alternative="greater").pvalue > 0.05
    assert unseen["majority"] + 0.15 <= teacher_unseen <= 0.95
    teacher = _mean(r["sentiment_accuracy_test"] for r in teacher_runs)
    assert teacher <= 0.97 and report["bag_of_words_accuracy_test"] <= teacher - 0.15
    exits = report["plateau_exits"]
    assert exits == assets.plateau_exits(report) and exits["rule"] == models.PLATEAU_RULE
    assert exits["missed"] == [], exits["missed"]
    assert exits["checked"] == len(teacher_runs) + len(report["students"]["runs"]) + len(report["plateau"]["runs"])
    for run in teacher_runs + report["students"]["runs"]:
        assert run["plateau_end"] == training.plateau_end(run["fine_tuning_loss_curve"])
        assert run["steps"] == len(run["fine_tuning_loss_curve"])


def test_the_report_gives_every_students_retention_of_the_teacher_of_its_seed():
    report = models.report()
    for run in models.STUDENT_RUNS:
        kept = models.retention(report, run)
        assert list(kept) == ["all", *data.SLICES]
        assert kept["all"].seeds == tuple(models.RUN_SEEDS[run])
        assert kept["all"].majority == report["slices"]["test"]["majority"]


def test_teacher_fills_in_a_masked_word_of_the_grammar(tokenizer):
    teacher = models.load_bundled("teacher")
    inputs = tokenizer("the cats that the dog chased [MASK] not happy.", return_tensors="pt")
    with torch.inference_mode():
        logits = teacher(**inputs).logits
    position = inputs["input_ids"][0].tolist().index(tokenizer.mask_token_id)
    # the main verb agrees with "cats" across the relative clause; its tense is free in the grammar
    top = tokenizer.convert_ids_to_tokens(logits[0, position].topk(2).indices.tolist())
    assert set(top) == {"are", "were"}, top


def test_load_model_offline_gives_the_bundled_teacher_with_one_line(monkeypatch, capsys):
    monkeypatch.setattr(env, "hub_status", lambda *a, **k: "offline")
    model = models.load_teacher()
    assert isinstance(model, BertForMaskedLM)
    assert model.config._attn_implementation == "eager"
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "course's teacher" in out and "offline" in out


def test_load_model_falls_back_when_the_hub_fails(monkeypatch, capsys):
    def failing(*args, **kwargs):
        raise OSError("no route to host")

    monkeypatch.setattr(env, "hub_status", lambda *a, **k: "reachable")
    monkeypatch.setattr(BertForMaskedLM, "from_pretrained", failing)
    bundled = torch.nn.Linear(2, 2)
    monkeypatch.setattr(models, "load_bundled", lambda name, **kwargs: bundled)
    assert models.load_model("teacher", verbose=True) is bundled
    out = capsys.readouterr().out
    assert "Could not load bert-base-uncased" in out and "course's teacher" in out


@pytest.mark.parametrize("kwargs, message", [
    ({"name": "gpt2"}, "expected one of"),
    ({"prefer": "cloud"}, "expected prefer='hub' or prefer='bundled'"),
])
def test_load_model_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        models.load_model(**kwargs)


def test_missing_bundle_says_how_to_rebuild(monkeypatch, tmp_path):
    monkeypatch.setitem(models.BUNDLED, "teacher", tmp_path)
    with pytest.raises(FileNotFoundError, match="make assets"):
        models.load_bundled("teacher")


def test_a_task_head_on_the_bundled_student_reports_its_new_weights_without_logging(capfd):
    """``model_class`` puts a new head on a bundled encoder; the head is listed, not logged on stderr."""
    from transformers import DistilBertForTokenClassification

    tagger, info = models.load_bundled(
        "student", model_class=DistilBertForTokenClassification, num_labels=len(data.TAGS), output_loading_info=True
    )
    assert isinstance(tagger, DistilBertForTokenClassification) and not tagger.training
    assert set(info["missing_keys"]) == {"classifier.weight", "classifier.bias"}
    assert {"vocab_projector.bias", "vocab_transform.weight"} <= set(info["unexpected_keys"])
    captured = capfd.readouterr()
    assert "LOAD REPORT" not in captured.err + captured.out
    student = models.load_bundled("student")
    assert torch.equal(tagger.distilbert.embeddings.word_embeddings.weight,
                       student.distilbert.embeddings.word_embeddings.weight)


def test_load_bundled_refuses_a_model_class_that_is_not_one():
    with pytest.raises(TypeError, match="expected model_class to be a transformers model class"):
        models.load_bundled("student", model_class=dict)


def test_the_report_holds_every_stage_and_the_learning_rate_sweep():
    report = models.report()
    assert set(assets.STAGES) == {"tokenizer", "teacher", "teacher-sentiment", "students", "sweep", "plateau",
                                  "task-distillation"}
    assert set(report["timings_s"]) == set(assets.STAGES)
    assert {(r["lr"], r["seed"]) for r in report["lr_sweep"]["runs"]} == {
        (lr, seed) for lr in models.LR_SWEEP for seed in models.SWEEP_SEEDS}
    assert models.STUDENT_FINE_TUNING["lr"] not in models.LR_SWEEP  # its runs are the schedule study's
    batches_per_epoch = -(-len(data.sentiment_task("train")) // models.STUDENT_FINE_TUNING["batch_size"])
    assert models.TEACHER_FINE_TUNING["batch_size"] == models.STUDENT_FINE_TUNING["batch_size"]
    for run in report["students"]["runs"] + report["teacher_fine_tuning_runs"]:
        assert len(run["fine_tuning_loss_curve"]) == models.STUDENT_FINE_TUNING["epochs"] * batches_per_epoch
    assert report["sentiment_task"] == assets.task_summary() and report["slices"] == assets.slice_summary()
    # the study's students, every run with each of its seeds (round three: no budget control)
    assert [(r["run"], r["seed"]) for r in report["students"]["runs"]] == [
        (run, seed) for run in models.STUDENT_RUNS for seed in models.RUN_SEEDS[run]]
    assert "budget_control" not in report and report["students"]["cut"] == list(models.STUDY_CUTS)
    assert report["students"]["recipes"] == {run: models.run_recipe(run) for run in models.STUDENT_RUNS}
    for run in report["students"]["runs"]:
        if models.STUDENT_RUNS[run["run"]][1] is not None:  # trained: one loss a step
            assert len(run["losses"]["loss"]) == models.run_recipe(run["run"])["steps"]
    assert report["students"]["grid"] == {run: list(corner) for run, corner in models.STUDENT_GRID.items()}
    assert report["students"]["starts"] == models.STUDENT_STARTS
    assert report["students"]["erased_words"] == sorted(data.held_out_words())
    # every fine-tuned classifier's score, and the bag of words', per slice beside the whole test set
    scored = (report["students"]["runs"] + report["teacher_fine_tuning_runs"] + report["lr_sweep"]["runs"]
              + report["plateau"]["runs"] + report["task_distillation"]["runs"])
    test = data.sentiment_task("test")
    slices = np.array([data.slice_of(s) for s in test])
    for run in scored:
        if "diverged" not in run:
            assert list(run["accuracy_by_slice_test"]) == list(data.SLICES), run.get("run", run)
            right = models.right_answers(run)  # each test sentence's answer, for claims by word class
            assert right.shape == (len(test),) and right.mean() == pytest.approx(run["sentiment_accuracy_test"])
            assert right[slices == "unseen"].mean() == pytest.approx(run["accuracy_by_slice_test"]["unseen"])
    assert list(report["bag_of_words_accuracy_by_slice_test"]) == list(data.SLICES)
    assert report["sentiment_accuracy_by_slice_test"] == report["teacher_fine_tuning_runs"][0]["accuracy_by_slice_test"]


def test_the_instructor_guide_names_the_machine_and_the_runs_of_the_current_report():
    """The guide's "family F, model M that built the current report" is report.json's machine, and its
    count of `models.STUDENT_GRID`'s runs is the grid's (both went stale once: a rebuild on another
    processor, a run cut for time)."""
    import re

    from course_utils.authoring.lessons import ROOT

    guide = " ".join((ROOT / "book" / "instructor_guide.md").read_text(encoding="utf-8").split())
    named = re.findall(r"family (\d+), model (\d+) that built the current report", guide)
    assert named, "book/instructor_guide.md no longer names the current report's machine in the form this test reads"
    family, model = re.search(r"cpu family (\d+) model (\d+)", models.report()["machine"]["cpu_model"]).groups()
    assert set(named) == {(family, model)}
    counted = re.search(r"the (\w+) runs of `models\.STUDENT_GRID`", guide)
    words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    assert counted and words.index(counted.group(1)) == len(models.STUDENT_GRID)


def test_the_instructor_guide_states_make_assets_time_as_the_report_measured_it():
    import re

    from course_utils.authoring.lessons import ROOT

    guide = (ROOT / "book" / "instructor_guide.md").read_text(encoding="utf-8")
    stated = re.search(r"`rebuild_s`, (\d+) minutes for the stages (.+?) on 2 cores", guide)
    assert stated, "book/instructor_guide.md no longer states make assets' time in the form this test reads"
    rebuilt = models.report()["rebuild_s"]
    assert int(stated.group(1)) == round(rebuilt["wall"] / 60)
    assert stated.group(2) == ", ".join(rebuilt["stages"])
    if "resumed_jobs" in rebuilt:  # its wall time is its own part's: the guide says how many jobs came before
        resumed = re.search(r"(\d+) of the study's (\d+) jobs had been saved before", guide)
        assert resumed and [int(g) for g in resumed.groups()] == [rebuilt["resumed_jobs"]["saved"],
                                                                 rebuilt["resumed_jobs"]["of"]]
    if "replayed" in rebuilt:  # jobs cut since the run: the plan as it stands, replayed with its seconds
        import tempfile

        from course_utils.authoring import jobs

        replayed = re.search(r"`rebuild_s\[\"replayed\"\]`\), takes (\d+) minutes", guide)
        assert replayed and int(replayed.group(1)) == round(rebuilt["replayed"] / 60)
        plan = assets.plan(assets.STAGES, tempfile.mkdtemp())
        seconds = models.report()["job_seconds"]
        assert jobs.replay(plan, seconds) + models.report()["timings_s"]["tokenizer"] == pytest.approx(rebuilt["replayed"])
    assert models.report()["threads"] == {**assets.STAGE_THREADS,
                                          "students: the bundled one (distilled, seed 0)": assets.BUNDLED_STUDENT_THREADS}


def test_the_report_holds_the_schedule_study_of_lesson_08():
    plateau = models.report()["plateau"]
    assert plateau["fine_tuning"] == models.STANDARD_FINE_TUNING and list(plateau["schedules"]) == list(models.PLATEAU_SCHEDULES)
    runs = {(r["schedule"], r["seed"]) for r in plateau["runs"]}
    assert runs == {(s, seed) for s in models.PLATEAU_SCHEDULES for seed in models.PLATEAU_SEEDS}
    steps = models.STANDARD_FINE_TUNING["epochs"] * -(-len(data.sentiment_task("train")) // models.STANDARD_FINE_TUNING["batch_size"])
    assert all(len(r["fine_tuning_loss_curve"]) == steps for r in plateau["runs"])
    assert set(plateau["versions"]) == {"torch", "transformers"}
    # per-kind curves for the recipe's runs (lesson 08 draws them), for every seed; none for the others
    with_curves = {(r["schedule"], r["seed"]) for r in plateau["runs"] if "accuracy_by_kind_curve" in r}
    assert with_curves == {(assets.KIND_CURVES, seed) for seed in models.PLATEAU_SEEDS}
    for run in plateau["runs"]:
        curve = run.get("accuracy_by_kind_curve")
        if curve is not None:
            assert [point["step"] for point in curve] == list(range(plateau["kind_every"], int(steps) + 1, plateau["kind_every"]))
            assert all(set(point) == {"step", *data.KINDS} for point in curve)


def test_the_report_holds_every_regime_arm_and_seed_of_lesson_07s_few_label_experiment():
    task = models.report()["task_distillation"]
    expected = {(n, arm, s) for n in models.LABELLED for arm in [*"ABC", models.FEW_LABEL_TEACHER]
                for s in models.TASK_SEEDS}
    assert task["labelled_by"] == {"B": models.FEW_LABEL_TEACHER, "C": models.FEW_LABEL_TEACHER}
    teachers = [r for r in task["runs"] if r["arm"] == models.FEW_LABEL_TEACHER]
    assert all(0.5 < r["labels_right_on_pool"] <= 1 for r in teachers)  # its labels: its own, not the gold ones
    assert {(r["labelled"], r["arm"], r["seed"]) for r in task["runs"]} == expected
    assert len(models.TASK_SEEDS) == 3 and len(task["runs"]) == len(expected)
    assert all(len(r["fine_tuning_loss_curve"]) == task["steps"] == assets.task_steps() for r in task["runs"])
    assert all(0 <= r["sentiment_accuracy_test"] <= 1 and 0 <= r["accuracy_labelled"] <= 1 for r in task["runs"])
    assert all(list(r["accuracy_by_slice_test"]) == list(data.SLICES) for r in task["runs"])
    assert task["fine_tuning"] == models.TASK_FINE_TUNING and task["distillation"] == models.TASK_DISTILLATION
    assert task["teacher_fine_tuning"] == models.FEW_LABEL_TEACHER_FINE_TUNING


def _thread_pool():
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=assets.WORKERS)


def test_rebuild_runs_only_the_stages_asked_and_times_each(monkeypatch, tmp_path):
    import json

    report = tmp_path / "report.json"
    report.write_text(json.dumps({"kept": 1, "timings_s": {"teacher": 9.0}}))
    monkeypatch.setattr(models, "REPORT", report)
    monkeypatch.setattr(assets.bundle, "record", lambda paths: None)
    monkeypatch.setattr(assets, "worker_pool", _thread_pool)
    monkeypatch.setattr(assets, "_teacher", lambda: {"teacher_parameters": 5})
    monkeypatch.setattr(assets, "_sweep_run", lambda lr, seed: {"lr": lr, "seed": seed})
    monkeypatch.setattr(assets, "_student", lambda *a: pytest.fail("students was not asked for"))
    result = assets.rebuild(["sweep", "teacher"], progress=False)
    assert result["kept"] == 1 and result["teacher_parameters"] == 5
    assert [(r["lr"], r["seed"]) for r in result["lr_sweep"]["runs"]] == [
        (lr, seed) for lr in models.LR_SWEEP for seed in models.SWEEP_SEEDS]  # in the order of the sweep
    assert set(result["timings_s"]) == {"teacher", "sweep"} and result["timings_s"]["teacher"] < 9.0
    assert result["rebuild_s"]["stages"] == ["teacher", "sweep"] and result["rebuild_s"]["wall"] < 9.0
    # what the bits depend on is recorded with them, and where they hold
    import torch

    assert result["machine"]["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert result["machine"]["torch"] == torch.__version__ and result["machine"]["processor"]
    assert result["machine"]["cpu_model"]  # the processor's model: "AVX512" is several Xeon generations
    assert "same processor type" in result["reproducibility"]
    assert result["plateau_exits"] == {"rule": models.PLATEAU_RULE, "checked": 0, "missed": []}  # no fine-tuning here
    assert json.loads(report.read_text()) == result
    with pytest.raises(ValueError, match="expected stages among"):
        assets.rebuild(["teachers"])


def test_every_job_trains_on_its_recipes_thread_count_whatever_the_machine(monkeypatch, tmp_path):
    """A run's bits depend on torch's thread count, so each job sets the count its bundled files were
    built with (the teacher's one thread on a 2-core machine, which would default to two)."""
    assert set(assets.STAGE_THREADS) == set(assets.STAGES) - {"tokenizer"}
    planned = assets.plan(assets.STAGES, str(tmp_path))
    bundled_student = assets._student_job("distilled", 0)
    for job in planned:
        expected = assets.BUNDLED_STUDENT_THREADS if job.name == bundled_student else assets.STAGE_THREADS[job.stage]
        assert job.threads == expected, job.name
    # the bundled models keep the thread counts they were built with: the same files, bit for bit
    assert assets.STAGE_THREADS["teacher"] == 1
    assert assets.BUNDLED_STUDENT_THREADS == 2
    monkeypatch.setattr(models, "REPORT", tmp_path / "report.json")
    monkeypatch.setattr(assets.bundle, "record", lambda paths: None)
    monkeypatch.setattr(assets, "worker_pool", _thread_pool)
    monkeypatch.setattr(assets, "_teacher", lambda: {"threads seen": torch.get_num_threads()})
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        result = assets.rebuild(["teacher"], progress=False)
        assert torch.get_num_threads() == 3  # restored
    finally:
        torch.set_num_threads(before)
    assert result["threads seen"] == 1
    assert result["threads"]["students: the bundled one (distilled, seed 0)"] == 2 and "torch_threads" not in result


def _after(planned):
    return {job.name: set(job.after) for job in planned}


def test_the_study_waits_for_the_teacher_and_starts_its_longest_runs_first(tmp_path):
    """The teacher pre-trains on one thread while the bag of words, which needs no model, runs on the
    other; every student of round three starts from the teacher's copy, so each waits for it (the
    few-label runs for the students or teachers they read). The study's runs go longest first (cost
    in masked-word steps), so the short ones fill the end of the schedule."""
    planned = assets.plan(assets.STAGES, str(tmp_path))
    after = _after(planned)
    assert [job.name for job in planned[:2]] == ["teacher", "bag of words"]
    assert after["teacher"] == after["bag of words"] == set() and assets.TEACHER_FREE == ()
    for run in models.STUDENT_RUNS:
        assert all(after[assets._student_job(run, seed)] == {"teacher"} for seed in models.RUN_SEEDS[run])
    # every run of the study with each of its seeds, once; the bundled student on its two threads
    students = [job for job in planned if job.stage == "students"]
    assert sorted((job.args[0], job.args[1]) for job in students) == sorted(
        (run, seed) for run in models.STUDENT_RUNS for seed in models.RUN_SEEDS[run])
    assert [job.name for job in students if job.threads == 2] == [assets._student_job("distilled", 0)]
    order = [job.args[0] for job in students if job.args[0] != "distilled"]
    ranks = [assets._slowest_first(run) for run in order]
    assert ranks == sorted(ranks) and order[0] == models.budget_run(2000) and order[-1] == "copy, no distillation"
    for seed in models.TASK_SEEDS:
        student = assets._student_job("distilled", seed)
        teacher = assets._few_label_job(500, models.FEW_LABEL_TEACHER, seed)
        assert after[assets._few_label_job(500, "A", seed)] == {student}
        for arm in "BC":  # labelled by the teacher fine-tuned on the same labels, of the same seed
            assert after[assets._few_label_job(500, arm, seed)] == {student, teacher}
        assert after[teacher] == {"teacher"}
    assert all(after[name] for name in after if name not in ("teacher", "bag of words"))
    # the distilled students of every seed are saved for the few-label runs
    saving = {job.args[1]: job.args[2] for job in planned if job.function is assets._student and job.args[2]}
    assert saving == {seed: str(assets._student_folder(str(tmp_path), seed)) for seed in models.RUN_SEEDS["distilled"]}
    short_last = planned[-len(models.TASK_SEEDS) * 3:]  # the short runs end the list
    assert all(job.function is assets._task_distillation_run for job in short_last)


def test_the_report_records_every_jobs_seconds_and_the_probes(tokenizer):
    """Every job of a full rebuild has its seconds; the teacher's probes and every start's are what
    the bundled teacher gives now (the erased starts are reported, whatever their AUC)."""
    import tempfile

    from course_utils import probes

    report = models.report()
    assert set(report["job_seconds"]) == {job.name for job in assets.plan(assets.STAGES, tempfile.mkdtemp())}
    assert all(seconds > 0 for seconds in report["job_seconds"].values())
    teacher = models.load_bundled("teacher")
    recomputed = probes.probe(teacher, tokenizer)
    for name in ("adverb_preference", "adverb_direction", "logistic"):
        assert report["teacher_probes"][name]["auc"] == pytest.approx(recomputed[name]["auc"], abs=1e-9)
    for run in report["students"]["runs"]:
        assert set(run["probes"]) == {"start", "end"}
        if run["run"] in ("distilled", "erased, triple loss") and run["seed"] in (0, 3):
            start = models.student_start(models.STUDENT_GRID[run["run"]][0], run["seed"], teacher, tokenizer)
            assert run["probes"]["start"]["logistic"]["auc"] == pytest.approx(
                probes.probe(start, tokenizer)["logistic"]["auc"], abs=1e-9)


@pytest.mark.parametrize("stages", [["task-distillation"], ["sweep"], ["students", "plateau"], ["teacher-sentiment"]])
def test_a_stage_rebuilt_alone_waits_only_for_what_this_rebuild_makes(stages, tmp_path):
    planned = assets.plan(stages, str(tmp_path))
    assert {job.stage for job in planned} == set(stages)
    names = {job.name for job in planned}
    assert all(set(job.after) <= names for job in planned)
    if stages == ["task-distillation"]:  # the distilled students of seeds 1-4, trained and saved, not fine-tuned
        students = [job for job in planned if job.function is assets._student]
        assert [job.args for job in students] == [
            ("distilled", seed, str(assets._student_folder(str(tmp_path), seed)), False)
            for seed in models.RUN_SEEDS["distilled"][1:]]
    if stages == ["sweep"]:
        assert all(job.after == () for job in planned)  # the bundled student is there already


def _tiny_task(monkeypatch, tokenizer, pool=300, unlabelled=100):
    train = training.encode(data.sentiment_task("train")[:pool], tokenizer)
    text = training.encode(data.unlabelled_task_text()[:unlabelled], tokenizer)
    monkeypatch.setattr(assets, "_task_data", lambda: (tokenizer, {"train": train, "unlabelled": text}, None))
    return train, text


def test_each_few_label_arm_sees_the_data_it_promises(monkeypatch, tokenizer):
    """A: labels drawn from the pool; B: the pool and the unlabelled text, the undrawn sentences
    without a label; C: the same, the teacher's answer as their label."""
    train, text = _tiny_task(monkeypatch, tokenizer)
    everything = train.ids + text.ids
    teacher = torch.randn(400, 2)
    a, objective_a, rows_a = assets.few_label_data("A", 20, seed=3, teacher_logits=teacher)
    assert len(a.ids) == 20 and objective_a is None
    chosen = [train.ids.index(ids) for ids in a.ids]
    assert a.labels == [train.labels[i] for i in chosen] and list(rows_a) == list(range(20))
    b, objective_b, rows_b = assets.few_label_data("B", 20, seed=3, teacher_logits=teacher)
    assert b.ids == everything and sorted(rows_b) == sorted(chosen) and callable(objective_b)
    assert [b.labels[i] for i in rows_b] == a.labels and b.labels.count(-100) == 380
    c, objective_c, _ = assets.few_label_data("C", 20, seed=3, teacher_logits=teacher)
    guesses = teacher.argmax(-1).tolist()
    assert objective_c is None and c.ids == everything
    assert all(c.labels[i] == (train.labels[i] if i in chosen else guesses[i]) for i in range(400))
    with pytest.raises(ValueError, match="expected an arm among"):
        assets.few_label_data("D", 20, seed=3, teacher_logits=teacher)  # cut: every label is the main runs
    with pytest.raises(ValueError, match="between 1 and the pool's 300"):
        assets.few_label_data("A", 301, seed=3)
    with pytest.raises(ValueError, match="the teacher's logits for the 400 sentences"):
        assets.few_label_data("B", 20, seed=3, teacher_logits=teacher[:300])  # the pool's alone


def test_the_unlabelled_text_of_arms_b_and_c_holds_held_out_words_and_no_label_it_gives(monkeypatch, tokenizer):
    """The text read without labels holds the sentences with a held-out word (never labelled: no
    gold label of theirs reaches an arm), and none of the labelled sentences."""
    train, text = _tiny_task(monkeypatch, tokenizer)
    held_out = set(tokenizer.convert_tokens_to_ids(sorted(data.held_out_words())))
    teacher = torch.randn(400, 2)
    for arm in "BC":
        sentences, _, rows = assets.few_label_data(arm, 20, seed=1, teacher_logits=teacher)
        unlabelled = [i for i in range(len(sentences.ids)) if i not in set(rows)]
        assert not set(rows) & set(unlabelled) and len(unlabelled) == 380
        with_held_out = [i for i in unlabelled if held_out & set(sentences.ids[i])]
        assert len(with_held_out) == 100 and set(with_held_out) == set(range(300, 400))  # all the text, only it
        assert not any(held_out & set(sentences.ids[i]) for i in rows)  # the labelled ones: the pool's
        if arm == "B":
            assert all(sentences.labels[i] == -100 for i in unlabelled)
        else:  # the teacher's answers, whatever the gold labels
            assert [sentences.labels[i] for i in with_held_out] == teacher.argmax(-1).tolist()[300:]
    # and the draw never reaches the unlabelled text: every labelled row is one of the pool's
    for seed in range(20):
        _, _, rows = assets.few_label_data("B", 50, seed=seed, teacher_logits=teacher)
        assert max(rows) < 300


def test_the_few_label_runs_train_one_epoch_of_the_whole_task_text():
    text = len(data.sentiment_task("train")) + len(data.unlabelled_task_text())
    assert assets.task_steps() == -(-text // models.TASK_FINE_TUNING["batch_size"])
    assert models.TASK_FINE_TUNING["epochs"] == 1.0


def test_the_pilots_three_layer_model_reads_only_the_teachers_sizes(tokenizer):
    """The teacher pilot's three-layer model (a random start, masked words alone) trains while the
    teacher does, from a teacher of the same sizes that was never trained: the same model, bit for
    bit, as from the bundled teacher."""
    train = training.encode(data.corpus("train")[:256], tokenizer)
    untrained = BertForMaskedLM(models.teacher_config(tokenizer))
    students = [models.train_student(models.THREE_LAYER_RUN, 0, teacher, tokenizer, train, steps=2,
                                     recipe=models.DISTILLATION, progress=False)[0]
                for teacher in (untrained, models.load_bundled("teacher"))]
    first, second = (student.state_dict() for student in students)
    assert first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


def test_a_classifier_from_a_student_draws_its_head_from_the_seed_and_reports_nothing(capfd, caplog):
    from transformers import DistilBertForMaskedLM

    from tests.tiny_models import tiny_distilbert

    student = tiny_distilbert(DistilBertForMaskedLM)
    first, again, other = (assets._classifier_from(student, seed) for seed in (0, 0, 1))
    assert torch.equal(first.classifier.weight, again.classifier.weight)
    assert not torch.equal(first.classifier.weight, other.classifier.weight)
    assert torch.equal(first.distilbert.embeddings.word_embeddings.weight,
                       student.distilbert.embeddings.word_embeddings.weight)
    captured = capfd.readouterr()
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "MISSING" not in captured.err + captured.out + logged  # transformers' load report of the new head
    assert "Loading weights" not in captured.err  # nor its progress bars


def test_the_machine_names_the_processors_model_where_linux_says_it():
    import re
    from pathlib import Path

    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.is_file() or "cpu family" not in cpuinfo.read_text():
        pytest.skip("no /proc/cpuinfo with a cpu family here")
    machine = assets.machine()
    assert re.fullmatch(r"cpu family \d+ model \d+ stepping \d+", machine["cpu_model"]), machine
    assert machine["processor"] and machine["cpu_capability"] == torch.backends.cpu.get_cpu_capability()


def test_the_plateau_limit_is_a_fifth_of_the_steps_or_350_whichever_is_larger():
    assert [models.plateau_limit(n) for n in (1, 537, 1750, 1751, 1725, 5000)] == [350, 350, 350, 351, 350, 1000]
    assert "20%" in models.PLATEAU_RULE and "350 steps, whichever is larger" in models.PLATEAU_RULE
    for bad in (0, -5, 2.5, True, "537"):
        with pytest.raises(ValueError, match="expected a run's number of steps"):
            models.plateau_limit(bad)


def _run(plateau_end, steps=537, **extra):
    return {"plateau_end": plateau_end, "steps": steps, "fine_tuning_loss_curve": [0.7] * steps, **extra}


def test_the_plateau_exits_list_every_recipe_run_that_leaves_ln_2_late_or_never():
    report = {
        "teacher_fine_tuning_runs": [_run(350, seed=0), _run(351, seed=1)],
        "students": {"runs": [_run(None, run="distilled", seed=0), _run(400, steps=2000, run="distilled", seed=1)]},
        "plateau": {"runs": [_run(120, schedule="warm-up then linear decay", seed=0),
                             _run(999, schedule="a schedule cut since", seed=0)]},
        "lr_sweep": {"runs": [_run(None, lr=3e-5, seed=0)]},  # other rates: not the recipe's, not checked
        "task_distillation": {"runs": [_run(None, arm="A", seed=0)]},  # few labels: not checked
    }
    exits = assets.plateau_exits(report)
    assert exits["rule"] == models.PLATEAU_RULE and exits["checked"] == 5
    assert exits["missed"] == [
        {"run": "teacher-sentiment seed 1", "steps": 537, "plateau_end": 351, "limit": 350},
        {"run": assets._student_job("distilled", 0), "steps": 537, "plateau_end": None, "limit": 350},
    ]
    del report["teacher_fine_tuning_runs"][1]["steps"]  # a report of before steps were recorded: the curve's length
    assert assets.plateau_exits(report)["missed"][0]["steps"] == 537
    with pytest.raises(TypeError, match="expected the report's dict"):
        assets.plateau_exits([])


def test_test_accuracies_give_each_kind_and_slice_beside_the_whole():
    right = [True, False, True, True, False, True]
    groups = {"kind": ["lexical", "lexical", "but", "negation", "but", "lexical"],
              "slice": ["seen", "unseen", "unseen", "mixed", "seen", "seen"]}
    entry = assets.test_accuracies(right, groups)
    assert entry["sentiment_accuracy_test"] == pytest.approx(4 / 6)
    assert entry["accuracy_by_kind_test"] == {"lexical": pytest.approx(2 / 3), "but": 0.5, "negation": 1.0}
    assert list(entry["accuracy_by_kind_test"]) == ["lexical", "but", "negation"]  # data.KINDS' order, none empty
    assert entry["accuracy_by_slice_test"] == {"seen": pytest.approx(2 / 3), "mixed": 1.0, "unseen": 0.5}
    with pytest.raises(ValueError, match="a slice per test sentence"):
        assets.test_accuracies(right, dict(groups, slice=groups["slice"][:5]))
    with pytest.raises(ValueError, match="one boolean per test sentence"):
        assets.test_accuracies([], groups)


def test_the_slice_summary_sizes_each_slice_and_its_majority_class():
    summary = assets.slice_summary()
    for split in ("test", "validation"):
        sentences = data.sentiment_task(split)
        assert summary[split]["sentences"] == len(sentences)
        assert list(summary[split]["slices"]) == list(data.SLICES)
        assert sum(part["sentences"] for part in summary[split]["slices"].values()) == len(sentences)
    test = data.sentiment_task("test")
    unseen = [s.label for s in test if data.slice_of(s) == "unseen"]
    share = sum(unseen) / len(unseen)
    assert summary["test"]["slices"]["unseen"]["majority"] == pytest.approx(max(share, 1 - share))
    assert 0.5 <= summary["test"]["majority"] < 1 and "majority" not in summary["validation"]


def _scored(seed, whole, by_slice, **extra):
    return {"seed": seed, "sentiment_accuracy_test": whole,
            "accuracy_by_slice_test": dict(zip(data.SLICES, by_slice)), **extra}


def test_retention_pairs_each_student_with_the_teacher_of_its_seed():
    report = {
        "teacher_fine_tuning_runs": [_scored(seed, 0.9 + 0.01 * seed, (1.0, 0.9, 0.8)) for seed in models.TEACHER_SEEDS],
        "students": {"runs": [_scored(seed, 0.85, (0.95, 0.8, 0.6 + 0.01 * seed), run="distilled")
                              for seed in reversed(models.STUDENT_SEEDS)]
                     + [_scored(0, 0.5, (0.5, 0.5, 0.5), run="erased, MLM only")]},
        "slices": {"test": {"majority": 0.55, "slices": {name: {"majority": 0.5} for name in data.SLICES}}},
    }
    kept = models.retention(report, "distilled")
    assert list(kept) == ["all", *data.SLICES] and kept["all"].seeds == tuple(models.STUDENT_SEEDS)
    assert kept["all"].ratio == pytest.approx([0.85 / (0.9 + 0.01 * s) for s in models.STUDENT_SEEDS])
    assert kept["unseen"].above_majority == pytest.approx([(0.1 + 0.01 * s) / 0.3 for s in models.STUDENT_SEEDS])
    assert kept["seen"].majority == 0.5 and kept["all"].majority == 0.55
    assert models.retention(report, "erased, MLM only")["all"].seeds == (0,)
    assert 0.96 < models.PAPER_RETENTION < 0.97  # 77.0 / 79.5
    with pytest.raises(ValueError, match="expected run to be one of"):
        models.retention(report, "without L_ce")
    with pytest.raises(KeyError, match="slices"):
        models.retention({k: v for k, v in report.items() if k != "slices"})
    with pytest.raises(ValueError, match="the teacher fine-tuned with each seed"):
        models.retention(dict(report, teacher_fine_tuning_runs=report["teacher_fine_tuning_runs"][1:]))
    with pytest.raises(TypeError, match="expected the report's dict"):
        models.retention([report])


def test_the_two_targets_split_the_whole_rebuild_and_take_the_time_the_guide_states(tmp_path):
    """make assets rebuilds what the lessons load, make study lesson 07's study on it (issue 58): every
    job of the whole rebuild in exactly one, each waiting only for jobs of its own target."""
    import re

    from course_utils.authoring import jobs
    from course_utils.authoring.lessons import ROOT

    whole = assets.plan(assets.STAGES, str(tmp_path))
    halves = {target: assets.plan(stages, str(tmp_path), target) for target, stages in assets.TARGETS.items()}
    names = {target: [job.name for job in planned] for target, planned in halves.items()}
    assert sorted(names["assets"] + names["study"]) == sorted(job.name for job in whole)
    assert assets.BUNDLED_STUDENT_JOB in names["assets"] and "teacher" in names["assets"]
    assert {job.stage for job in halves["assets"]} == {"teacher", "teacher-sentiment", "students", "sweep", "plateau"}
    assert [job.name for job in halves["assets"] if job.stage == "students"] == [assets.BUNDLED_STUDENT_JOB]
    assert {job.stage for job in halves["study"]} == {"students", "task-distillation"}
    assert set(names["study"]) >= {assets._student_job(models.budget_run(2000), seed) for seed in models.EXPLORATORY_SEEDS}
    for target, planned in halves.items():
        inside = set(names[target])
        assert all(set(job.after) <= inside for job in planned), target
        assert all(assets.in_target(job, target) for job in planned)
    # the few-label runs of seed 0 start from the bundled student (no folder of theirs): nothing to wait for
    seed0 = assets._few_label_job(500, "A", models.STUDENT_SEEDS[0])
    assert next(job for job in halves["study"] if job.name == seed0).after == ()
    with pytest.raises(ValueError, match="expected target"):
        assets.in_target(whole[0], "lessons")
    # the guide's minutes: the last full rebuild's job seconds replayed on each half
    guide = (ROOT / "book" / "instructor_guide.md").read_text(encoding="utf-8")
    seconds, tokenizer = models.report()["job_seconds"], models.report()["timings_s"]["tokenizer"]
    stated = re.search(r"`make assets` about (\d+) minutes on 2 cores.*?`make study` about (\d+) minutes", guide, re.S)
    assert stated, "the guide no longer states each half's time in the form this test reads"
    assert int(stated.group(1)) == round((jobs.replay(halves["assets"], seconds) + tokenizer) / 60)
    assert int(stated.group(2)) == round(jobs.replay(halves["study"], seconds) / 60)
    at_once = re.search(r"The whole rebuild at once \(no target\) takes about the same, (\d+) minutes", guide)
    assert at_once and int(at_once.group(1)) == round((jobs.replay(whole, seconds) + tokenizer) / 60)
    assert abs(jobs.replay(whole, seconds) - sum(jobs.replay(half, seconds) for half in halves.values())) < 300


def test_a_half_of_the_rebuild_keeps_the_students_it_does_not_rerun(monkeypatch, tmp_path):
    """make assets reruns the bundled student alone of the students stage and marks the study stale;
    make study reruns every other student and keeps the bundled one's entry; each records its time."""
    import json

    needed = {assets._student_job(run, seed): (run, seed) for run in models.STUDENT_RUNS
              for seed in models.RUN_SEEDS[run]}

    def entry(run, seed, rerun):
        return {"run": run, "seed": seed, "steps": 540, "plateau_end": 100, "rerun": rerun}

    earlier = dict(models.report(), students={"runs": [entry(run, seed, False) for run, seed in needed.values()]})
    earlier.pop("budget_control", None)
    report = tmp_path / "report.json"
    report.write_text(json.dumps(earlier))
    monkeypatch.setattr(models, "REPORT", report)
    monkeypatch.setattr(assets, "JOBS_FILE", tmp_path / "jobs.json")
    monkeypatch.setattr(assets.bundle, "record", lambda paths: None)
    monkeypatch.setattr(assets, "worker_pool", _thread_pool)
    monkeypatch.setattr(assets.tokenization, "rebuild", lambda: None)
    monkeypatch.setattr(assets, "_teacher", lambda: {"teacher_parameters": 5})
    monkeypatch.setattr(assets, "_student", lambda run, seed, *rest: entry(run, seed, True))
    for name in ("_teacher_sentiment", "_bag_of_words", "_sweep_run", "_plateau_run", "_task_distillation_run"):
        monkeypatch.setattr(assets, name, lambda *args: {})
    for stage, built in (("teacher-sentiment", {}), ("sweep", {"runs": []}), ("plateau", {"runs": []}),
                         ("task-distillation", {"runs": []})):
        monkeypatch.setitem(assets.ASSEMBLE, stage, lambda results, built=built: built)

    first = assets.rebuild(target="assets", progress=False)
    rerun = {assets._student_job(r["run"], r["seed"]) for r in first["students"]["runs"] if r["rerun"]}
    assert rerun == {assets.BUNDLED_STUDENT_JOB} and len(first["students"]["runs"]) == len(needed)
    assert first["study_stale"] == assets.STUDY_STALE and first["rebuild_s"]["target"] == "assets"
    assert set(first["targets_s"]["assets"]["stages"]) == set(assets.TARGETS["assets"])
    second = assets.rebuild(target="study", progress=False)
    rerun = {assets._student_job(r["run"], r["seed"]) for r in second["students"]["runs"] if r["rerun"]}
    assert rerun == set(needed)  # the bundled one's entry: the assets run's
    assert "study_stale" not in second and set(second["targets_s"]) == {"assets", "study"}
    # a stage's time is the sum of its jobs' last seconds, once every job of it has run
    every = assets.plan(["students"], str(tmp_path))
    assert second["timings_s"]["students"] == pytest.approx(sum(second["job_seconds"][job.name] for job in every))
    assert json.loads(report.read_text()) == second
    # make assets on a report of an earlier design keeps only the runs the grid still has
    earlier["students"]["runs"].append(entry("random, MLM only", 0, False))
    report.write_text(json.dumps(earlier))
    third = assets.rebuild(target="assets", progress=False)
    assert {r["run"] for r in third["students"]["runs"]} == set(models.STUDENT_RUNS)
    # what happened to round three's first make study: a report of an earlier design, then make
    # assets, then make study, which must keep the bundled student and rerun the rest
    older = dict(earlier, students={"runs": [entry("random, MLM only", s, False) for s in range(5)]})
    report.write_text(json.dumps(older))
    with pytest.raises(KeyError, match="run make assets first"):  # before it trains anything
        assets.rebuild(target="study", progress=False)
    assets.rebuild(target="assets", progress=False)
    fourth = assets.rebuild(target="study", progress=False)
    assert {(r["run"], r["seed"]) for r in fourth["students"]["runs"]} == set(needed.values())
    # every job's result was saved as it ended: the report can be assembled again from the file
    jobs_file = assets.jobs_file_of("study")
    saved = json.loads(jobs_file.read_text())
    assert saved["fingerprint"] == assets.fingerprint()
    # a run that ended is not resumed: the next make study trains again (it had only reassembled)
    planned = assets.plan(assets.TARGETS["study"], str(tmp_path), "study")
    assert saved["complete"] and assets.resumable(jobs_file, planned) == {}
    assert set(saved["jobs"]) == {job.name for job in assets.plan(assets.TARGETS["study"], str(tmp_path), "study")}
    again = assets.rebuild(target="study", progress=False, from_jobs=jobs_file)
    assert again["students"] == fourth["students"]
    assert again["rebuild_s"] == fourth["rebuild_s"] and again["targets_s"] == fourth["targets_s"]  # no rebuild
    # an interrupted make study resumes: the jobs it saved are not run again
    jobs_file.unlink()
    calls = []

    def failing(run, seed, *rest):
        calls.append((run, seed))
        if len(calls) == 5:
            raise RuntimeError("the machine went away")
        return entry(run, seed, True)

    monkeypatch.setattr(assets, "_student", failing)
    with pytest.raises(RuntimeError, match="went away"):
        assets.rebuild(target="study", progress=False)
    first_calls = list(calls)
    saved_before = len(json.loads(jobs_file.read_text())["jobs"])
    assert saved_before >= 4
    monkeypatch.setattr(assets, "_student", lambda run, seed, *rest: calls.append((run, seed)) or entry(run, seed, True))
    resumed = assets.rebuild(target="study", progress=False)
    rerun = calls[len(first_calls):]
    assert not set(rerun) & set(first_calls[:4]) and len(rerun) < len(needed) - 1
    assert {(r["run"], r["seed"]) for r in resumed["students"]["runs"]} == set(needed.values())
    # its wall time is the resumed part's only, and says so
    assert resumed["rebuild_s"]["resumed_jobs"] == {"saved": saved_before, "of": len(saved["jobs"])}
    assert "resumed_jobs" not in fourth["rebuild_s"]
    assert not assets.work_folder("study").exists()  # removed once the rebuild ended
    with pytest.raises(ValueError, match="not both"):
        assets.rebuild(["teacher"], target="assets")
