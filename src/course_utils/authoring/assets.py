"""``make assets``: retrain the bundled tokenizer and models from the course corpus, stage by stage.

``python -m course_utils.authoring.assets`` (all stages) or ``--stages teacher-sentiment students``
(some): later stages load what earlier ones bundled, and training is deterministic for a given
number of threads, so a stage rebuilt alone gives what a full rebuild gives. Each stage writes its
numbers and its time into ``assets/report.json`` (:func:`course_utils.models.report`). The
recipes are :mod:`course_utils.models`'; this module only runs them. Runs that do not depend on one
another (the plateau's and the few-label experiment's) are spread over worker processes.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import time
from pathlib import Path

from .. import bundle, data, env, models, tokenization, training

STAGES = ("tokenizer", "teacher", "teacher-sentiment", "students", "sweep", "plateau", "task-distillation")
# The CPU threads each training stage runs on. A run's bits depend on its thread count (torch splits
# its sums by thread), so the count is the recipe's, not the machine's: these are the counts the
# bundled files were built with, and a rebuild on any machine gives the same bits. The plateau and
# few-label runs set one thread in each worker process themselves.
STAGE_THREADS = {"teacher": 1, "teacher-sentiment": 2, "students": 2, "sweep": 2, "plateau": 1,
                 "task-distillation": 1}


def rebuild(stages=STAGES, progress: bool = True) -> dict:
    """Rebuild the bundled assets, stage by stage; write and return their report (``assets/report.json``).

    ``"tokenizer"``: the WordPiece tokenizer. ``"teacher"``: MLM pre-training. ``"teacher-sentiment"``:
    the teacher fine-tuned on sentiment. ``"students"``: lesson 07's students (distilled, trained without distillation, ablations),
    each fine-tuned on sentiment; the distilled student of seed 0 and its sentiment copy are bundled.
    ``"sweep"``: lesson 08's learning-rate sweep, the bundled student fine-tuned at :data:`course_utils.models.LR_SWEEP`.
    ``"plateau"``: lesson 08's standard recipe for :data:`course_utils.models.PLATEAU_SEEDS`, with and without its schedule.
    ``"task-distillation"``: lesson 07's few-label experiment (:data:`course_utils.models.LABELLED`, :data:`course_utils.models.TASK_METHODS`).
    """
    unknown = set(stages) - set(STAGES)
    if unknown:
        raise ValueError(f"expected stages among {STAGES}, got {sorted(unknown)}")
    result = json.loads(models.REPORT.read_text()) if models.REPORT.exists() else {}
    result.setdefault("timings_s", {})
    start = time.perf_counter()
    if "tokenizer" in stages:
        tokenization.rebuild()
        result["timings_s"]["tokenizer"] = time.perf_counter() - start
    tokenizer = tokenization.load_bundled_tokenizer()
    splits = {s: training.encode(data.corpus(s), tokenizer) for s in ("train", "validation", "test")}
    builders = {  # stage -> (its builder, the report's key for what it returns; None: its keys are the report's)
        "teacher": (_build_teacher, None),
        "teacher-sentiment": (_build_teacher_sentiment, None),
        "students": (_build_students, "students"),
        "sweep": (_build_sweep, "lr_sweep"),
        "plateau": (_build_plateau, "plateau"),
        "task-distillation": (_build_task_distillation, "task_distillation"),
    }
    for stage, (build, key) in builders.items():
        if stage in stages:
            start = time.perf_counter()
            with threads(STAGE_THREADS[stage]):
                built = build(tokenizer, splits, progress)
            if key is None:
                result.update(built)
            else:
                result[key] = built
            result["timings_s"][stage] = time.perf_counter() - start
    result.pop("torch_threads", None)  # replaced by the recipe's count per stage
    result["threads"] = dict(STAGE_THREADS)
    models.REPORT.write_text(json.dumps(result, indent=1) + "\n")
    bundle.record([models.REPORT])
    return result


@contextlib.contextmanager
def threads(count: int):
    """Run the block on ``count`` torch threads, then restore the previous count."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _build_teacher(tokenizer, splits, progress: bool) -> dict:
    import torch
    from transformers import BertForMaskedLM

    env.seed_everything(models.PRETRAINING["seed"])
    teacher = BertForMaskedLM(models.teacher_config(tokenizer))
    history = training.train_mlm(teacher, splits["train"], tokenizer, progress=progress, **models.PRETRAINING)
    models.save(teacher, models.BUNDLED["teacher"])
    teacher = models.load_bundled("teacher")
    with torch.inference_mode():
        return {
            "teacher_parameters": sum(p.numel() for p in teacher.parameters()),
            "mlm_accuracy_validation": training.mlm_accuracy(teacher, splits["validation"], tokenizer),
            "mlm_accuracy_test": training.mlm_accuracy(teacher, splits["test"], tokenizer),
            "pretraining": dict(models.PRETRAINING),
            "mlm_loss_curve": history.losses["mlm"],
        }


def _build_teacher_sentiment(tokenizer, splits, progress: bool) -> dict:
    import torch
    from transformers import BertForSequenceClassification

    env.seed_everything(models.FINE_TUNING["seed"])
    classifier = BertForSequenceClassification.from_pretrained(str(models.BUNDLED["teacher"]), num_labels=2)
    fine_tuning = training.train_classifier(
        classifier, splits["train"], tokenizer.pad_token_id, progress=progress, **models.FINE_TUNING
    )
    models.save(classifier, models.BUNDLED["teacher-sentiment"])
    classifier = models.load_bundled("teacher-sentiment")
    with torch.inference_mode():
        accuracies = {
            f"sentiment_accuracy_{split}": training.accuracy(classifier, splits[split], tokenizer.pad_token_id)
            for split in ("validation", "test")
        }
    return {  # the bag of words trains a logistic regression: outside inference mode
        **accuracies,
        "bag_of_words_accuracy_test": training.bag_of_words_accuracy(splits["train"], splits["test"], len(tokenizer)),
        "fine_tuning": dict(models.FINE_TUNING),
        "fine_tuning_loss_curve": fine_tuning.losses["loss"],
    }


def _build_students(tokenizer, splits, progress: bool) -> dict:
    import tempfile

    import torch
    from transformers import DistilBertForSequenceClassification

    teacher = models.load_bundled("teacher")
    runs = []
    for run in models.STUDENT_RUNS:
        for seed in models.STUDENT_SEEDS if run in models.SEEDED_RUNS else models.STUDENT_SEEDS[:1]:
            student, history = models.train_student(run, seed, teacher, tokenizer, splits["train"], progress=progress)
            with tempfile.TemporaryDirectory() as folder:
                models.save(student, Path(folder))
                torch.manual_seed(seed)
                classifier = DistilBertForSequenceClassification.from_pretrained(folder, num_labels=2)
            fine_tuning = training.train_classifier(classifier, splits["train"], tokenizer.pad_token_id,
                                                    progress=progress, **dict(models.STUDENT_FINE_TUNING, seed=seed))
            with torch.inference_mode():
                runs.append({
                    "run": run,
                    "seed": seed,
                    "mlm_accuracy_test": training.mlm_accuracy(student.eval(), splits["test"], tokenizer),
                    "sentiment_accuracy_test": training.accuracy(classifier.eval(), splits["test"], tokenizer.pad_token_id),
                    "losses": history.losses,
                    "fine_tuning_loss_curve": fine_tuning.losses["loss"],
                })
            if run == "distilled" and seed == models.STUDENT_SEEDS[0]:
                models.save(student, models.BUNDLED["student"])
                models.save(classifier, models.BUNDLED["student-sentiment"])
    return {
        "layers": models.STUDENT_LAYERS,
        "distillation": dict(models.DISTILLATION),
        "fine_tuning": dict(models.STUDENT_FINE_TUNING),
        "seeds": list(models.STUDENT_SEEDS),
        "runs": runs,
    }


def _build_sweep(tokenizer, splits, progress: bool) -> dict:
    import torch
    from transformers import DistilBertForSequenceClassification

    runs = []
    for lr in models.LR_SWEEP:
        torch.manual_seed(models.STUDENT_FINE_TUNING["seed"])
        classifier = DistilBertForSequenceClassification.from_pretrained(str(models.BUNDLED["student"]), num_labels=2)
        history = training.train_classifier(classifier, splits["train"], tokenizer.pad_token_id, progress=progress,
                                            **dict(models.STUDENT_FINE_TUNING, lr=lr))
        runs.append({
            "lr": lr,
            "sentiment_accuracy_validation": training.accuracy(classifier, splits["validation"], tokenizer.pad_token_id),
            "sentiment_accuracy_test": training.accuracy(classifier, splits["test"], tokenizer.pad_token_id),
            "fine_tuning_loss_curve": history.losses["loss"],
        })
    return {"fine_tuning": dict(models.STUDENT_FINE_TUNING), "runs": runs}


def _classifier_from(student, seed: int):
    """A ``DistilBertForSequenceClassification`` on ``student``'s encoder, its new head drawn with ``seed``."""
    import tempfile

    import torch
    from transformers import DistilBertForSequenceClassification
    with tempfile.TemporaryDirectory() as folder, models.quiet_loading():  # the head is new on purpose
        models.save(student, Path(folder))
        torch.manual_seed(seed)
        return DistilBertForSequenceClassification.from_pretrained(folder, num_labels=2)


# Runs that do not depend on one another (one seed, one schedule) are spread over this many worker
# processes, each on one thread: a run gives the same bits in any process (each run seeds itself),
# and on 2 cores two workers take half the time of one.
WORKERS = 2


@functools.cache
def _worker_data():
    """``(tokenizer, {"train": ..., "test": ...})``, loaded and encoded once per worker process
    (3.5 s each time) and read, never changed, by each of its runs."""
    tokenizer = tokenization.load_bundled_tokenizer()
    return tokenizer, {s: training.encode(data.corpus(s), tokenizer) for s in ("train", "test")}


def _plateau_run(schedule: str, seed: int) -> dict:
    """One run of the plateau stage, in a worker process on one thread: the bundled student
    fine-tuned with lesson 08's recipe under ``schedule`` and ``seed``."""
    import torch

    torch.set_num_threads(1)  # as lesson 08 runs it: the seed-0 run is the lesson's live run, to the bit
    tokenizer, splits = _worker_data()
    classifier = _classifier_from(models.load_bundled("student"), seed)
    history = training.train_classifier(classifier, splits["train"], tokenizer.pad_token_id, progress=False,
                                        **dict(models.STANDARD_FINE_TUNING, seed=seed, **models.PLATEAU_SCHEDULES[schedule]))
    return {
        "schedule": schedule,
        "seed": seed,
        "sentiment_accuracy_test": training.accuracy(classifier, splits["test"], tokenizer.pad_token_id),
        "fine_tuning_loss_curve": history.losses["loss"],
    }


def worker_pool(count: int = WORKERS):
    """A pool of ``count`` fresh processes (spawned, so that no state of this process, such as its
    torch threads or random generators, reaches them)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("spawn"))


def in_workers(run, jobs: list[tuple], workers: int = WORKERS) -> list:
    """``[run(*job) for job in jobs]``, computed by a :func:`worker_pool` of ``workers`` processes."""
    with worker_pool(workers) as pool:
        return list(pool.map(run, *zip(*jobs)))


def _build_plateau(tokenizer, splits, progress: bool) -> dict:
    import torch
    import transformers

    jobs = [(schedule, seed) for schedule in models.PLATEAU_SCHEDULES for seed in models.PLATEAU_SEEDS]
    runs = in_workers(_plateau_run, jobs)
    versions = {"torch": torch.__version__, "transformers": transformers.__version__}  # same stack, same bits
    return {"fine_tuning": dict(models.STANDARD_FINE_TUNING), "schedules": models.PLATEAU_SCHEDULES, "threads": 1,
            "workers": WORKERS, "versions": versions, "runs": runs}


def _build_task_distillation(tokenizer, splits, progress: bool) -> dict:
    """Lesson 07's few-label experiment: the runs (labelled sentences x seeds x methods), which do not
    depend on one another, in workers; the MLM-only student that the "no distillation" runs start
    from is trained in one of them (one thread) while the other starts on the distilled runs."""
    import tempfile

    import torch

    with torch.inference_mode():
        teacher_accuracy = training.accuracy(models.load_bundled("teacher-sentiment"), splits["test"],
                                             tokenizer.pad_token_id)
    with tempfile.TemporaryDirectory() as folder, worker_pool() as pool:
        jobs = [(n, seed, method, folder) for n in models.LABELLED for seed in models.TASK_SEEDS for method in models.TASK_METHODS]
        mlm_only = pool.submit(_train_mlm_only, folder)
        later = [job for job in jobs if job[2] == "no distillation"]
        futures = {job: pool.submit(_task_distillation_run, *job) for job in jobs if job not in later}
        mlm_only.result()
        futures.update({job: pool.submit(_task_distillation_run, *job) for job in later})
        runs = [futures[job].result() for job in jobs]
    return {
        "fine_tuning": dict(models.TASK_FINE_TUNING),
        "distillation": dict(models.TASK_DISTILLATION),
        "teacher_accuracy_test": teacher_accuracy,
        "threads": 1,
        "workers": WORKERS,
        "runs": runs,
    }


def _train_mlm_only(folder: str) -> None:
    """The few-label experiment's MLM-only student (seed 0), in a worker process on one thread,
    saved in ``folder``."""
    import torch

    torch.set_num_threads(1)
    tokenizer, splits = _worker_data()
    mlm_only, _ = models.train_student("no distillation (MLM only)", 0, models.load_bundled("teacher"), tokenizer,
                                       splits["train"], progress=False)
    models.save(mlm_only, Path(folder))


def _task_distillation_run(labelled: int, seed: int, method: str, mlm_only_folder: str) -> dict:
    """One run of the few-label experiment, in a worker process on one thread: a student (the MLM-only
    one saved in ``mlm_only_folder``, or the bundled distilled one) fine-tuned on ``labelled``
    sentences drawn with ``seed``, with the fine-tuned teacher's soft labels when ``method`` says so."""
    import torch
    from transformers import DistilBertForMaskedLM

    from .. import distill

    torch.set_num_threads(1)
    tokenizer, splits = _worker_data()
    pad_id = tokenizer.pad_token_id
    sentences = training.subset(splits["train"], labelled, seed)
    objective = None
    if method.endswith("task-specific"):
        teacher = models.load_bundled("teacher-sentiment")
        with torch.inference_mode():  # the fine-tuned teacher's soft labels for these sentences
            soft = torch.cat([teacher(input_ids=ids, attention_mask=mask).logits for ids, mask in
                              (training.pad(sentences.ids[i:i + 256], pad_id) for i in range(0, labelled, 256))])
        objective = distill.task_objective(soft, **models.TASK_DISTILLATION)
    if method == "no distillation":
        student = DistilBertForMaskedLM.from_pretrained(mlm_only_folder)
    else:
        student = models.load_bundled("student")
    classifier = _classifier_from(student, seed)
    settings = {k: v for k, v in models.TASK_FINE_TUNING.items() if k != "epochs"}
    training.train_classifier(classifier, sentences, pad_id, progress=False, objective=objective,
                              **dict(settings, seed=seed))
    return {
        "labelled": labelled,
        "method": method,
        "seed": seed,
        "sentiment_accuracy_test": training.accuracy(classifier, splits["test"], pad_id),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_utils.authoring.assets", description="make assets: retrain the bundled tokenizer and models from the course corpus, stage by stage.")
    parser.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES), help="what to rebuild (default: all)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    result = rebuild(args.stages)
    keys = [k for k in result if k.endswith("accuracy_test") or k.endswith("parameters")]
    for key in keys:
        print(f"{key}: {result[key]:.4f}" if isinstance(result[key], float) else f"{key}: {result[key]:,}")
    print(f"rebuilt the bundled assets in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
