"""course_utils.models: the bundled teacher, its quality report, and hub/bundled resolution."""

from __future__ import annotations

import json

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
    classifier = models.load_bundled("teacher-sentiment")
    assert training.accuracy(classifier, test, tokenizer.pad_token_id) == pytest.approx(
        report["sentiment_accuracy_test"], abs=0.002
    )
    teacher = models.load_bundled("teacher")
    assert sum(p.numel() for p in teacher.parameters()) == report["teacher_parameters"]
    assert training.mlm_accuracy(teacher, test, tokenizer) == pytest.approx(report["mlm_accuracy_test"], abs=0.002)


def test_teacher_beats_the_bag_of_words_baseline_by_ten_points():
    report = models.report()
    assert report["sentiment_accuracy_test"] >= report["bag_of_words_accuracy_test"] + 0.10


def test_teacher_fills_in_a_masked_word_of_the_grammar(tokenizer):
    teacher = models.load_bundled("teacher")
    inputs = tokenizer("the cats that the dog chased [MASK] not happy.", return_tensors="pt")
    with torch.inference_mode():
        logits = teacher(**inputs).logits
    position = inputs["input_ids"][0].tolist().index(tokenizer.mask_token_id)
    assert tokenizer.convert_ids_to_tokens(int(logits[0, position].argmax())) == "were"


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
    assert [r["lr"] for r in report["lr_sweep"]["runs"]] == list(models.LR_SWEEP)
    assert models.STUDENT_FINE_TUNING["lr"] not in models.LR_SWEEP  # its run is the students stage's
    for run in report["students"]["runs"]:
        batches_per_epoch = -(-len(data.corpus("train")) // models.STUDENT_FINE_TUNING["batch_size"])
        assert len(run["fine_tuning_loss_curve"]) == models.STUDENT_FINE_TUNING["epochs"] * batches_per_epoch


def test_the_readme_states_make_assets_time_as_the_report_measured_it():
    import re

    from course_utils.authoring.lessons import ROOT

    stated = re.search(r"`rebuild_s`, (\d+) minutes in all", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert stated, "README.md no longer states make assets' time in the form this test reads"
    rebuilt = models.report()["rebuild_s"]
    assert rebuilt["stages"] == list(assets.STAGES), "the report's last rebuild was not a full one"
    assert int(stated.group(1)) == round(rebuilt["wall"] / 60)
    assert models.report()["threads"] == {**assets.STAGE_THREADS,
                                          "students: the bundled one (distilled, seed 0)": assets.BUNDLED_STUDENT_THREADS}


def test_the_report_holds_the_plateau_runs_of_lesson_08():
    plateau = models.report()["plateau"]
    assert plateau["fine_tuning"] == models.STANDARD_FINE_TUNING and list(plateau["schedules"]) == list(models.PLATEAU_SCHEDULES)
    runs = {(r["schedule"], r["seed"]) for r in plateau["runs"]}
    assert runs == {(s, seed) for s in models.PLATEAU_SCHEDULES for seed in models.PLATEAU_SEEDS}
    steps = -(-len(data.corpus("train")) // models.STANDARD_FINE_TUNING["batch_size"])
    assert all(len(r["fine_tuning_loss_curve"]) == steps for r in plateau["runs"])
    assert set(plateau["versions"]) == {"torch", "transformers"}


def test_the_report_holds_every_regime_method_and_seed_of_lesson_07s_task_distillation():
    task = models.report()["task_distillation"]
    runs = {(r["labelled"], r["method"], r["seed"]) for r in task["runs"]}
    assert runs == {(n, m, s) for n in models.LABELLED for m in models.TASK_METHODS for s in models.TASK_SEEDS}
    assert len(models.TASK_SEEDS) >= 5 and len(task["runs"]) == len(runs)
    assert all(0 <= r["sentiment_accuracy_test"] <= 1 for r in task["runs"])
    assert task["fine_tuning"] == models.TASK_FINE_TUNING and task["distillation"] == models.TASK_DISTILLATION


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
    monkeypatch.setattr(assets, "_sweep_run", lambda lr: {"lr": lr})
    monkeypatch.setattr(assets, "_student", lambda *a: pytest.fail("students was not asked for"))
    result = assets.rebuild(["sweep", "teacher"], progress=False)
    assert result["kept"] == 1 and result["teacher_parameters"] == 5
    assert [r["lr"] for r in result["lr_sweep"]["runs"]] == list(models.LR_SWEEP)  # in the order of the sweep
    assert set(result["timings_s"]) == {"teacher", "sweep"} and result["timings_s"]["teacher"] < 9.0
    assert result["rebuild_s"]["stages"] == ["teacher", "sweep"] and result["rebuild_s"]["wall"] < 9.0
    # what the bits depend on is recorded with them, and where they hold
    import torch

    assert result["machine"]["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert result["machine"]["torch"] == torch.__version__ and result["machine"]["processor"]
    assert "same processor type" in result["reproducibility"]
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
    assert assets.STAGE_THREADS["teacher"] == 1 and assets.STAGE_THREADS["teacher-sentiment"] == 2
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


def test_what_needs_no_teacher_is_planned_to_run_beside_its_pre_training(tmp_path):
    """The teacher pre-trains on one thread: the MLM-only students and the few-label runs that start
    from them wait for nothing else, so the second worker runs them meanwhile."""
    planned = assets.plan(assets.STAGES, str(tmp_path))
    after = _after(planned)
    assert planned[0].name == "teacher" and after["teacher"] == set()
    mlm_only = {assets._student_job(assets.MLM_ONLY, seed) for seed in models.STUDENT_SEEDS}
    assert all(after[name] == set() for name in mlm_only)
    first_mlm_only = assets._student_job(assets.MLM_ONLY, 0)
    bundled_student = assets._student_job("distilled", 0)
    for n in models.LABELLED:
        for seed in models.TASK_SEEDS:
            assert after[f"few-label {n} 'no distillation' seed {seed}"] == {first_mlm_only}
            assert after[f"few-label {n} 'general distillation' seed {seed}"] == {bundled_student}
            assert after[f"few-label {n} 'general + task-specific' seed {seed}"] == {bundled_student, "teacher-sentiment"}
    teacher_free = mlm_only | {"teacher", "bag of words"} | {n for n in after if "no distillation" in n}
    assert all(after[name] for name in after if name not in teacher_free)  # the others wait for a model
    # the few-label "no distillation" runs start from the students stage's MLM-only student of seed 0
    saving = [job for job in planned if job.function is assets._student and job.args[2] is not None]
    assert [job.name for job in saving] == [first_mlm_only] and saving[0].args[2] == str(tmp_path)
    short_last = planned[-2 * len(models.LABELLED) * len(models.TASK_SEEDS):]  # the short runs end the list
    assert all(job.function is assets._task_distillation_run for job in short_last)


@pytest.mark.parametrize("stages", [["task-distillation"], ["sweep"], ["students", "plateau"], ["teacher-sentiment"]])
def test_a_stage_rebuilt_alone_waits_only_for_what_this_rebuild_makes(stages, tmp_path):
    planned = assets.plan(stages, str(tmp_path))
    assert {job.stage for job in planned} == set(stages)
    names = {job.name for job in planned}
    assert all(set(job.after) <= names for job in planned)
    if stages == ["task-distillation"]:  # its MLM-only student, trained and saved, not fine-tuned
        mlm_only = [job for job in planned if job.function is assets._student]
        assert len(mlm_only) == 1 and mlm_only[0].args == (assets.MLM_ONLY, 0, str(tmp_path), False)
    if stages == ["sweep"]:
        assert all(job.after == () for job in planned)  # the bundled student is there already


def test_an_mlm_only_student_reads_only_the_teachers_sizes(tokenizer):
    """The MLM-only students train while the teacher does, from a teacher of the same sizes that was
    never trained: the same student, bit for bit, as from the bundled teacher."""
    train = training.encode(data.corpus("train")[:256], tokenizer)
    untrained = BertForMaskedLM(models.teacher_config(tokenizer))
    students = [models.train_student(assets.MLM_ONLY, 0, teacher, tokenizer, train, steps=2, progress=False)[0]
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
