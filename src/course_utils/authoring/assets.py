"""``make assets``: retrain the bundled tokenizer and models from the course corpus, stage by stage.

``python -m course_utils.authoring.assets`` (all stages) or ``--stages teacher-sentiment students``
(some): later stages load what earlier ones bundled, and training is deterministic for a given
number of threads, so a stage rebuilt alone gives what a full rebuild gives. Each stage writes its
numbers and its time into ``assets/report.json`` (:func:`course_utils.models.report`). The
recipes are :mod:`course_utils.models`'; this module only runs them.

Every run is a job (:mod:`course_utils.authoring.jobs`) on one of two worker processes, started
as soon as the models it loads are made: while the teacher pre-trains on one thread, the other
worker runs what needs no teacher (the MLM-only students, the few-label runs that start from
them, the bag of words).
"""

from __future__ import annotations

import argparse
import functools
import json
import tempfile
import time
from pathlib import Path

from .. import bundle, data, env, models, tokenization, training
from . import jobs as job_runner
from . import require_checkout
from .jobs import WORKERS, Job, worker_pool

STAGES = ("tokenizer", "teacher", "teacher-sentiment", "students", "sweep", "plateau", "task-distillation")
# The CPU threads each run is on. A run's bits depend on its thread count (torch splits its sums
# by thread), so the count is the recipe's, not the machine's, and a rebuild on any machine of
# the same processor type (REPRODUCIBILITY) gives the same bits. One thread: on 2 cores, two one-thread runs side by side do more work than two
# two-thread runs (which wait for each other's threads). The bundled teacher-sentiment and
# student (with student-sentiment) keep the two threads they were built with: the same files.
STAGE_THREADS = {"teacher": 1, "teacher-sentiment": 2, "students": 1, "sweep": 1, "plateau": 1,
                 "task-distillation": 1}
BUNDLED_STUDENT_THREADS = 2  # the distilled student of seed 0, the bundled one, and its fine-tuning
# Where a rebuild gives the same bits, and what holds elsewhere: written into the report with the
# machine that built it (the numbers are make portability's and the plateau stage's, measured).
REPRODUCIBILITY = (
    "Bit for bit only on the same processor type (the CPU capability torch reports and the code paths "
    "its BLAS and oneDNN choose; each rebuild records its machine under 'machine') with the same torch "
    "and transformers, whatever the number of cores. On another processor type they pick other float32 "
    "kernels: the teacher's logits move by about 1e-6, and a training run carries that into its losses, "
    "so a rebuild elsewhere gives other weights and, near a plateau or a chance-level result, other "
    "accuracies. What holds everywhere is what the lessons assert: their claims with their tolerances, "
    "not the bits. Measured on an Intel Xeon (family 6, model 207, AVX-512), which did not build this "
    "report: the plateau stage's seed-0 run (lesson 08's live run) gave losses up to 0.019 from the "
    "report's with its own kernels, 0.021 with torch's portable ones and 1.6e-5 with AVX2 kernels "
    "throughout; the whole plateau stage under the portable kernels kept every run's outcome (the same "
    "seeds left on the plateau, 8 of 10 plateau ends within a step of the report's, accuracies within "
    "1.05 points, the largest at chance)."
)
MLM_ONLY = "no distillation (MLM only)"  # needs no teacher: trains beside the teacher's pre-training


def rebuild(stages=STAGES, progress: bool = True) -> dict:
    """Rebuild the bundled assets, stage by stage; write and return their report (``assets/report.json``).

    ``"tokenizer"``: the WordPiece tokenizer. ``"teacher"``: MLM pre-training. ``"teacher-sentiment"``:
    the teacher fine-tuned on sentiment. ``"students"``: lesson 07's students (distilled, trained without distillation, ablations),
    each fine-tuned on sentiment; the distilled student of seed 0 and its sentiment copy are bundled.
    ``"sweep"``: lesson 08's learning-rate sweep, the bundled student fine-tuned at :data:`course_utils.models.LR_SWEEP`.
    ``"plateau"``: lesson 08's standard recipe for :data:`course_utils.models.PLATEAU_SEEDS`, with and without its schedule.
    ``"task-distillation"``: lesson 07's few-label experiment (:data:`course_utils.models.LABELLED`, :data:`course_utils.models.TASK_METHODS`).

    ``timings_s`` holds each stage's time, the sum of its jobs' (two run at a time), and
    ``rebuild_s`` the wall time of the last rebuild and its stages.
    """
    unknown = set(stages) - set(STAGES)
    if unknown:
        raise ValueError(f"expected stages among {STAGES}, got {sorted(unknown)}")
    stages = [s for s in STAGES if s in stages]
    result = json.loads(models.REPORT.read_text()) if models.REPORT.exists() else {}
    result.setdefault("timings_s", {})
    start = time.perf_counter()
    if "tokenizer" in stages:
        tokenization.rebuild()
        result["timings_s"]["tokenizer"] = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as folder:
        planned = plan(stages, folder)
        count = iter(range(1, len(planned) + 1))

        def report_progress(job, _, seconds):
            if progress:
                print(f"[{next(count)}/{len(planned)}] {job.name}: {seconds:.0f} s", flush=True)

        with worker_pool() as pool:
            done = job_runner.run(planned, pool, on_done=report_progress)
    for stage in stages:
        if stage == "tokenizer":
            continue
        ran = [job for job in planned if job.stage == stage]
        results = {job.name: done[job.name][0] for job in ran}
        built = ASSEMBLE[stage](results)
        key = REPORT_KEYS[stage]
        if key is None:
            result.update(built)
        else:
            result[key] = built
        result["timings_s"][stage] = sum(done[job.name][1] for job in ran)
    result.pop("torch_threads", None)  # replaced by the recipe's count per stage
    result["threads"] = {**STAGE_THREADS, "students: the bundled one (distilled, seed 0)": BUNDLED_STUDENT_THREADS}
    result["workers"] = WORKERS
    result["machine"] = machine()
    result["reproducibility"] = REPRODUCIBILITY
    result["rebuild_s"] = {"stages": list(stages), "wall": time.perf_counter() - start}
    models.REPORT.write_text(json.dumps(result, indent=1) + "\n")
    bundle.record([models.REPORT])
    return result


def _student_job(run: str, seed: int) -> str:
    return f"student {run!r} seed {seed}"


def plan(stages, folder: str) -> list[Job]:
    """The jobs of ``stages``, in the order of priority, each after the jobs whose models it loads.

    ``folder`` receives the MLM-only student of seed 0, which the few-label "no distillation"
    runs start from (trained by the students stage, or alone when only the few-label runs are asked).
    A job loads what it needs from the bundle: a stage not rebuilt now is the bundled one.
    """
    jobs: list[Job] = []
    bundled_student = _student_job("distilled", models.STUDENT_SEEDS[0])
    made_by = {"teacher": "teacher", "teacher-sentiment": "teacher-sentiment", bundled_student: "students"}

    def add(name, stage, function, args=(), threads=1, after=()):
        # a model that this rebuild does not make is the bundled one: nothing to wait for
        after = tuple(a for a in after if made_by.get(a, stage) in stages)
        jobs.append(Job(name, stage, function, tuple(args), threads, after))

    if "teacher" in stages:
        add("teacher", "teacher", _teacher, threads=STAGE_THREADS["teacher"])
    # one thread beside the teacher, which needs only one: what does not need it
    mlm_only_0 = _student_job(MLM_ONLY, 0)
    if "students" in stages:
        for seed in models.STUDENT_SEEDS:
            add(_student_job(MLM_ONLY, seed), "students", _student,
                (MLM_ONLY, seed, folder if seed == 0 else None), STAGE_THREADS["students"])
    elif "task-distillation" in stages:
        mlm_only_0 = "MLM-only student for the few-label runs"
        add(mlm_only_0, "task-distillation", _student, (MLM_ONLY, 0, folder, False), STAGE_THREADS["students"])
    if "teacher-sentiment" in stages:
        add("bag of words", "teacher-sentiment", _bag_of_words, threads=STAGE_THREADS["teacher-sentiment"])
    few_label = [(n, seed, method) for n in models.LABELLED for seed in models.TASK_SEEDS for method in models.TASK_METHODS]
    if "task-distillation" in stages:
        for n, seed, method in few_label:
            if method == "no distillation":
                add(f"few-label {n} {method!r} seed {seed}", "task-distillation", _task_distillation_run,
                    (n, seed, method, folder), STAGE_THREADS["task-distillation"], [mlm_only_0])
    # then what needs the teacher: the longest runs first
    if "teacher-sentiment" in stages:
        add("teacher-sentiment", "teacher-sentiment", _teacher_sentiment, threads=STAGE_THREADS["teacher-sentiment"],
            after=["teacher"])
    if "students" in stages:
        add(bundled_student, "students", _student, ("distilled", models.STUDENT_SEEDS[0], None),
            BUNDLED_STUDENT_THREADS, ["teacher"])
        for run in models.STUDENT_RUNS:
            for seed in models.STUDENT_SEEDS if run in models.SEEDED_RUNS else models.STUDENT_SEEDS[:1]:
                if run != MLM_ONLY and _student_job(run, seed) != bundled_student:
                    add(_student_job(run, seed), "students", _student, (run, seed, None), STAGE_THREADS["students"],
                        ["teacher"])
    if "sweep" in stages:
        for lr in models.LR_SWEEP:
            add(f"sweep lr={lr:g}", "sweep", _sweep_run, (lr,), STAGE_THREADS["sweep"], [bundled_student])
    if "plateau" in stages:
        for schedule in models.PLATEAU_SCHEDULES:
            for seed in models.PLATEAU_SEEDS:
                add(f"plateau {schedule!r} seed {seed}", "plateau", _plateau_run, (schedule, seed),
                    STAGE_THREADS["plateau"], [bundled_student])
    if "task-distillation" in stages:
        add("teacher-sentiment's accuracy", "task-distillation", _teacher_accuracy,
            threads=STAGE_THREADS["task-distillation"], after=["teacher-sentiment"])
        for n, seed, method in few_label:
            if method != "no distillation":
                needs = [bundled_student] + (["teacher-sentiment"] if method.endswith("task-specific") else [])
                add(f"few-label {n} {method!r} seed {seed}", "task-distillation", _task_distillation_run,
                    (n, seed, method, folder), STAGE_THREADS["task-distillation"], needs)
    job_runner.check(jobs)  # each job after those it waits for
    return jobs


# --------------------------------------------------------------------------------------------
# What each stage writes into the report, from its jobs' results ({job name: result})


def _assemble_students(results: dict) -> dict:
    runs = [results[_student_job(run, seed)] for run in models.STUDENT_RUNS
            for seed in (models.STUDENT_SEEDS if run in models.SEEDED_RUNS else models.STUDENT_SEEDS[:1])]
    return {
        "layers": models.STUDENT_LAYERS,
        "distillation": dict(models.DISTILLATION),
        "fine_tuning": dict(models.STUDENT_FINE_TUNING),
        "seeds": list(models.STUDENT_SEEDS),
        "runs": runs,
    }


def _assemble_plateau(results: dict) -> dict:
    import torch
    import transformers

    versions = {"torch": torch.__version__, "transformers": transformers.__version__}  # same stack, same bits
    return {"fine_tuning": dict(models.STANDARD_FINE_TUNING), "schedules": models.PLATEAU_SCHEDULES, "threads": 1,
            "workers": WORKERS, "versions": versions, "runs": list(results.values())}


def _assemble_task_distillation(results: dict) -> dict:
    runs = {(r["labelled"], r["seed"], r["method"]): r for r in results.values() if isinstance(r, dict)}
    return {
        "fine_tuning": dict(models.TASK_FINE_TUNING),
        "distillation": dict(models.TASK_DISTILLATION),
        "teacher_accuracy_test": results["teacher-sentiment's accuracy"],
        "threads": 1,
        "workers": WORKERS,
        "runs": [runs[(n, seed, method)] for n in models.LABELLED for seed in models.TASK_SEEDS
                 for method in models.TASK_METHODS],
    }


ASSEMBLE = {
    "teacher": lambda results: results["teacher"],
    "teacher-sentiment": lambda results: {**results["teacher-sentiment"],
                                          "bag_of_words_accuracy_test": results["bag of words"]},
    "students": _assemble_students,
    "sweep": lambda results: {"fine_tuning": dict(models.STUDENT_FINE_TUNING), "runs": list(results.values())},
    "plateau": _assemble_plateau,
    "task-distillation": _assemble_task_distillation,
}
# stage -> the report's key for what it builds (None: its keys are the report's)
REPORT_KEYS = {"teacher": None, "teacher-sentiment": None, "students": "students", "sweep": "lr_sweep",
               "plateau": "plateau", "task-distillation": "task_distillation"}


# --------------------------------------------------------------------------------------------
# The jobs: each runs in a worker process, loads what it needs and seeds itself


@functools.cache
def machine() -> dict:
    """What a rebuild's bits depend on besides the recipes: the processor, the kernels torch
    chose for it, and the versions of torch and transformers."""
    import platform

    import torch
    import transformers

    name = platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        name = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                     if line.startswith("model name")), name)
    return {"processor": name or platform.machine(), "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "torch": torch.__version__, "transformers": transformers.__version__}


def _worker_data():
    """``(tokenizer, {"train": ..., "validation": ..., "test": ...})``, loaded and encoded once per
    worker process (about 4 s each time) and read, never changed, by each of its jobs.

    The worker's transformers is made quiet too: no progress bars for files of a few MB, and no
    load reports (every new task head is new on purpose)."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    tokenizer = tokenization.load_bundled_tokenizer()
    return tokenizer, {s: training.encode(data.corpus(s), tokenizer) for s in ("train", "validation", "test")}


def _teacher() -> dict:
    import torch
    from transformers import BertForMaskedLM

    tokenizer, splits = _worker_data()
    env.seed_everything(models.PRETRAINING["seed"])
    teacher = BertForMaskedLM(models.teacher_config(tokenizer))
    history = training.train_mlm(teacher, splits["train"], tokenizer, progress=False, **models.PRETRAINING)
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


def _teacher_sentiment() -> dict:
    import torch
    from transformers import BertForSequenceClassification

    tokenizer, splits = _worker_data()
    env.seed_everything(models.FINE_TUNING["seed"])
    classifier = BertForSequenceClassification.from_pretrained(str(models.BUNDLED["teacher"]), num_labels=2)
    fine_tuning = training.train_classifier(
        classifier, splits["train"], tokenizer.pad_token_id, progress=False, **models.FINE_TUNING
    )
    models.save(classifier, models.BUNDLED["teacher-sentiment"])
    classifier = models.load_bundled("teacher-sentiment")
    with torch.inference_mode():
        accuracies = {
            f"sentiment_accuracy_{split}": training.accuracy(classifier, splits[split], tokenizer.pad_token_id)
            for split in ("validation", "test")
        }
    return {**accuracies, "fine_tuning": dict(models.FINE_TUNING), "fine_tuning_loss_curve": fine_tuning.losses["loss"]}


def _bag_of_words() -> float:
    """The order-blind baseline's test accuracy (a logistic regression: outside inference mode)."""
    tokenizer, splits = _worker_data()
    return training.bag_of_words_accuracy(splits["train"], splits["test"], len(tokenizer))


def _teacher_accuracy() -> float:
    import torch

    tokenizer, splits = _worker_data()
    with torch.inference_mode():
        return training.accuracy(models.load_bundled("teacher-sentiment"), splits["test"], tokenizer.pad_token_id)


def _student(run: str, seed: int, save_to: str | None, fine_tune: bool = True) -> dict | None:
    """One of lesson 07's students (``run``, ``seed``), then fine-tuned on sentiment: its report entry.

    The distilled student of seed 0 and its sentiment copy are bundled; ``save_to``, a folder
    for the student itself. ``fine_tune=False``: train and save the student only.
    """
    import torch
    from transformers import BertForMaskedLM

    tokenizer, splits = _worker_data()
    if run == MLM_ONLY:  # no teacher signal: only the teacher's sizes are read (a teacher still in training)
        teacher = BertForMaskedLM(models.teacher_config(tokenizer))
    else:
        teacher = models.load_bundled("teacher")
    student, history = models.train_student(run, seed, teacher, tokenizer, splits["train"], progress=False)
    if save_to is not None:
        models.save(student, Path(save_to))
    if not fine_tune:
        return None
    classifier = _classifier_from(student, seed)
    fine_tuning = training.train_classifier(classifier, splits["train"], tokenizer.pad_token_id, progress=False,
                                            **dict(models.STUDENT_FINE_TUNING, seed=seed))
    with torch.inference_mode():
        entry = {
            "run": run,
            "seed": seed,
            "mlm_accuracy_test": training.mlm_accuracy(student.eval(), splits["test"], tokenizer),
            "sentiment_accuracy_test": training.accuracy(classifier.eval(), splits["test"], tokenizer.pad_token_id),
            "losses": history.losses,
            "fine_tuning_loss_curve": fine_tuning.losses["loss"],
        }
    if run == "distilled" and seed == models.STUDENT_SEEDS[0]:
        models.save(student, models.BUNDLED["student"])
        models.save(classifier, models.BUNDLED["student-sentiment"])
    return entry


def _sweep_run(lr: float) -> dict:
    """Lesson 08's sweep at peak learning rate ``lr``: the bundled student fine-tuned on sentiment."""
    import torch
    from transformers import DistilBertForSequenceClassification

    tokenizer, splits = _worker_data()
    torch.manual_seed(models.STUDENT_FINE_TUNING["seed"])
    with models.quiet_loading():  # the head is new on purpose
        classifier = DistilBertForSequenceClassification.from_pretrained(str(models.BUNDLED["student"]), num_labels=2)
    history = training.train_classifier(classifier, splits["train"], tokenizer.pad_token_id, progress=False,
                                        **dict(models.STUDENT_FINE_TUNING, lr=lr))
    return {
        "lr": lr,
        "sentiment_accuracy_validation": training.accuracy(classifier, splits["validation"], tokenizer.pad_token_id),
        "sentiment_accuracy_test": training.accuracy(classifier, splits["test"], tokenizer.pad_token_id),
        "fine_tuning_loss_curve": history.losses["loss"],
    }


def _classifier_from(student, seed: int):
    """A ``DistilBertForSequenceClassification`` on ``student``'s encoder, its new head drawn with ``seed``."""
    import torch
    from transformers import DistilBertForSequenceClassification
    with tempfile.TemporaryDirectory() as folder, models.quiet_loading():  # the head is new on purpose
        models.save(student, Path(folder))
        torch.manual_seed(seed)
        return DistilBertForSequenceClassification.from_pretrained(folder, num_labels=2)


def _plateau_run(schedule: str, seed: int) -> dict:
    """One run of the plateau stage: the bundled student fine-tuned with lesson 08's recipe under
    ``schedule`` and ``seed`` (on one thread, as lesson 08 runs it: the seed-0 run is the lesson's
    live run, to the bit)."""
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


def _task_distillation_run(labelled: int, seed: int, method: str, mlm_only_folder: str) -> dict:
    """One run of the few-label experiment: a student (the MLM-only
    one saved in ``mlm_only_folder``, or the bundled distilled one) fine-tuned on ``labelled``
    sentences drawn with ``seed``, with the fine-tuned teacher's soft labels when ``method`` says so."""
    import torch
    from transformers import DistilBertForMaskedLM

    from .. import distill

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
    require_checkout()
    start = time.perf_counter()
    result = rebuild(args.stages)
    keys = [k for k in result if k.endswith("accuracy_test") or k.endswith("parameters")]
    for key in keys:
        print(f"{key}: {result[key]:.4f}" if isinstance(result[key], float) else f"{key}: {result[key]:,}")
    print(f"rebuilt the bundled assets in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
