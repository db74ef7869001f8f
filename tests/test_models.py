"""course_utils.models: the bundled teacher, its quality report, and hub/bundled resolution."""

from __future__ import annotations

import json
from pathlib import Path

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

    stated = re.search(r"`timings_s`, (\d+) minutes in all", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert stated, "README.md no longer states make assets' time in the form this test reads"
    assert int(stated.group(1)) == round(sum(models.report()["timings_s"].values()) / 60)
    assert models.report()["threads"] == assets.STAGE_THREADS


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


def test_rebuild_runs_only_the_stages_asked_and_times_each(monkeypatch, tmp_path):
    import json

    report = tmp_path / "report.json"
    report.write_text(json.dumps({"kept": 1, "timings_s": {"teacher": 9.0}}))
    monkeypatch.setattr(models, "REPORT", report)
    monkeypatch.setattr(assets.bundle, "record", lambda paths: None)
    monkeypatch.setattr(assets, "_build_teacher", lambda *a: {"teacher_parameters": 5})
    monkeypatch.setattr(assets, "_build_sweep", lambda *a: {"runs": []})
    monkeypatch.setattr(assets, "_build_students", lambda *a: pytest.fail("students was not asked for"))
    result = assets.rebuild(["teacher", "sweep"], progress=False)
    assert result["kept"] == 1 and result["teacher_parameters"] == 5 and result["lr_sweep"] == {"runs": []}
    assert set(result["timings_s"]) == {"teacher", "sweep"} and result["timings_s"]["teacher"] < 9.0
    assert json.loads(report.read_text()) == result
    with pytest.raises(ValueError, match="expected stages among"):
        assets.rebuild(["teachers"])


def test_each_stage_trains_on_its_recipes_thread_count_whatever_the_machine(monkeypatch, tmp_path):
    """A run's bits depend on torch's thread count, so each stage sets the count its bundled files
    were built with (the teacher's one thread on a 2-core machine, which would default to two)."""
    import torch

    assert set(assets.STAGE_THREADS) == set(assets.STAGES) - {"tokenizer"}
    monkeypatch.setattr(models, "REPORT", tmp_path / "report.json")
    monkeypatch.setattr(assets.bundle, "record", lambda paths: None)
    seen = {}
    for stage, name in (("teacher", "_build_teacher"), ("students", "_build_students")):
        monkeypatch.setattr(assets, name, lambda *a, stage=stage: seen.setdefault(stage, torch.get_num_threads()) and {})
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        result = assets.rebuild(["teacher", "students"], progress=False)
        assert torch.get_num_threads() == 3  # restored
    finally:
        torch.set_num_threads(before)
    assert seen == {"teacher": 1, "students": 2}
    assert result["threads"] == assets.STAGE_THREADS and "torch_threads" not in result


def test_threads_restores_the_count_when_the_stage_fails():
    import torch

    before = torch.get_num_threads()
    with pytest.raises(RuntimeError), assets.threads(1):
        assert torch.get_num_threads() == 1
        raise RuntimeError("a stage failed")
    assert torch.get_num_threads() == before


def test_independent_runs_come_back_in_the_order_of_their_jobs():
    """make assets spreads independent runs over worker processes; the results keep the jobs' order
    (the plateau stage's report lists its runs schedule by schedule, seed by seed)."""
    assert assets.in_workers(pow, [(2, 10), (3, 3), (5, 2), (7, 1)], workers=2) == [1024, 27, 25, 7]


def test_few_label_runs_wait_for_the_mlm_only_student_only_when_they_start_from_it(monkeypatch):
    """The few-label stage trains its MLM-only student in a worker beside the distilled runs: a "no
    distillation" run starts only once that student is saved, the others do not wait, and the report
    lists the runs in the order of their jobs."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    distilled = sum(method != "no distillation" for method in models.TASK_METHODS) * len(models.LABELLED) * len(
        models.TASK_SEEDS)
    all_distilled_ran = threading.Semaphore(0)

    def train_mlm_only(folder):
        # the student takes as long as every distilled run: the other worker runs them meanwhile
        for _ in range(distilled):
            assert all_distilled_ran.acquire(timeout=5), "the distilled runs waited for the MLM-only student"
        (Path(folder) / "model.safetensors").write_text("")

    def run(labelled, seed, method, folder):
        if method == "no distillation":
            assert (Path(folder) / "model.safetensors").exists(), "a no-distillation run started before its student"
        else:
            all_distilled_ran.release()
        return {"labelled": labelled, "method": method, "seed": seed}

    monkeypatch.setattr(assets, "worker_pool", lambda: ThreadPoolExecutor(max_workers=2))
    monkeypatch.setattr(assets, "_train_mlm_only", train_mlm_only)
    monkeypatch.setattr(assets, "_task_distillation_run", run)
    monkeypatch.setattr(assets.models, "load_bundled", lambda name: None)
    monkeypatch.setattr(assets.training, "accuracy", lambda *a: 0.5)

    class Tokenizer:
        pad_token_id = 0

    result = assets._build_task_distillation(Tokenizer(), {"test": None}, progress=False)
    expected = [(n, seed, method) for n in models.LABELLED for seed in models.TASK_SEEDS for method in models.TASK_METHODS]
    assert [(r["labelled"], r["seed"], r["method"]) for r in result["runs"]] == expected


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
