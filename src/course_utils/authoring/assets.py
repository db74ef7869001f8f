"""``make assets``: retrain the bundled tokenizer and models from the course corpus, stage by stage.

``python -m course_utils.authoring.assets`` (all stages), ``--target assets`` (``make assets``: what the
lessons load) or ``--target study`` (``make study``: lesson 07's study on it; :data:`TARGETS`), or
``--stages teacher-sentiment students`` (some): later stages load what earlier ones bundled, and training is deterministic for a given
number of threads, so a stage rebuilt alone gives what a full rebuild gives. Each stage writes its
numbers and its time into ``assets/report.json`` (:func:`course_utils.models.report`). The
recipes are :mod:`course_utils.models`'; this module only runs them.

Every run is a job (:mod:`course_utils.authoring.jobs`) on one of two worker processes, started
as soon as the models it loads are made: while the teacher pre-trains on one thread, the other
worker runs what needs no teacher (the MLM-only students, the bag of words).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from .. import bundle, data, env, models, probes, tokenization, training
from . import jobs as job_runner
from . import require_checkout
from .jobs import WORKERS, Job, worker_pool

STAGES = ("tokenizer", "teacher", "teacher-sentiment", "students", "sweep", "plateau", "task-distillation")
# The CPU threads each run is on. A run's bits depend on its thread count (torch splits its sums
# by thread), so the count is the recipe's, not the machine's, and a rebuild on any machine of
# the same processor type (REPRODUCIBILITY) gives the same bits. One thread: on 2 cores, two one-thread runs side by side do more work than two
# two-thread runs (which wait for each other's threads). The bundled student keeps the two
# threads it was built with: the same file (its sentiment copy is fine-tuned on two threads too).
STAGE_THREADS = {"teacher": 1, "teacher-sentiment": 1, "students": 1, "sweep": 1, "plateau": 1,
                 "task-distillation": 1}
BUNDLED_STUDENT_THREADS = 2  # the distilled student of seed 0, the bundled one, and its fine-tuning
# Where a rebuild gives the same bits, and what holds elsewhere: written into the report with the
# machine that built it (the numbers are make portability's and the plateau stage's, measured).
REPRODUCIBILITY = (
    "Bit for bit only on the same processor type (its model, not only the CPU capability torch reports: "
    "the code paths its BLAS and oneDNN choose; each rebuild records its machine under 'machine') with the same torch "
    "and transformers, whatever the number of cores. On another processor type they pick other float32 "
    "kernels: the teacher's logits move by about 1e-6 (make portability measures it), and a training run "
    "carries that into its losses, so a rebuild elsewhere gives other weights and, in their last digits, "
    "other accuracies. What holds everywhere is what the lessons assert: their claims with their "
    "tolerances, not the bits."
)
# the students that read only the teacher's sizes, not its layers or outputs: they train beside its
# pre-training (none in round three: every arm starts from the teacher's copy)
TEACHER_FREE = tuple(run for run in models.STUDENT_RUNS if not models.needs_teacher(run))
# The two halves of a rebuild (issue 58), so that an instructor who changes a lesson never waits for
# the study: "assets" (make assets) rebuilds what the lessons load, the tokenizer, the teacher and its
# fine-tuned copies, the bundled student (the students stage's distilled student of seed 0) and lesson
# 08's sweep and schedule study on it; "study" (make study) reruns lesson 07's study on the bundled
# teacher and student: every other student of the students stage (the study's runs and the budget
# control) and the few-label runs. Both together are the whole rebuild (no target).
TARGETS = {
    "assets": ("tokenizer", "teacher", "teacher-sentiment", "students", "sweep", "plateau"),
    "study": ("students", "task-distillation"),
}
BUNDLED_STUDENT_JOB = f"student 'distilled' seed {models.STUDENT_SEEDS[0]}"
STUDY_STALE = ("the study's runs (students, task_distillation) were made with the teacher of an "
               "earlier rebuild: run make study")


def in_target(job: Job, target: str) -> bool:
    """Whether ``job`` is part of ``target`` (:data:`TARGETS`): a job of one of its stages, except that
    the students stage gives ``"assets"`` the bundled student alone and ``"study"`` every other student."""
    if target not in TARGETS:
        raise ValueError(f"expected target to be one of {sorted(TARGETS)}, got {target!r}")
    if job.stage == "students":
        return (job.name == BUNDLED_STUDENT_JOB) == (target == "assets")
    return job.stage in TARGETS[target]


def rebuild(stages=None, progress: bool = True, *, target: str | None = None, from_jobs: Path | None = None) -> dict:
    """Rebuild the bundled assets, stage by stage; write and return their report (``assets/report.json``).

    ``stages``: every stage by default; ``target`` (:data:`TARGETS`, instead of ``stages``): one half
    of the rebuild, ``"assets"`` (what the lessons load) or ``"study"`` (lesson 07's study); the runs
    of the students stage that the target does not rerun keep their entries of the report.

    ``"tokenizer"``: the WordPiece tokenizer. ``"teacher"``: MLM pre-training. ``"teacher-sentiment"``:
    the teacher fine-tuned on the sentiment task (:func:`course_utils.data.sentiment_task`) for each of
    :data:`course_utils.models.TEACHER_SEEDS` (seed 0's is bundled), and the bag of words. ``"students"``:
    lesson 07's students, every run of :data:`course_utils.models.STUDENT_GRID` (a start and a loss)
    with every seed, each probed at its start and end and fine-tuned on sentiment, and the budget control;
    the distilled student of seed 0 and its sentiment copy are bundled.
    ``"sweep"``: lesson 08's learning-rate sweep, the bundled student fine-tuned at :data:`course_utils.models.LR_SWEEP`.
    ``"plateau"``: lesson 08's schedule study, the recipe for :data:`course_utils.models.PLATEAU_SEEDS` under
    each of :data:`course_utils.models.PLATEAU_SCHEDULES` (now the recipe's alone), with per-kind curves.
    ``"task-distillation"``: lesson 07's few-label experiment (:data:`course_utils.models.LABELLED`,
    :data:`course_utils.models.TASK_ARMS`, :data:`course_utils.models.FEW_LABEL_TEACHER`).

    Every fine-tuned classifier's entry holds its test accuracy in all, per kind and per slice
    (:func:`test_accuracies`); ``slices`` the slices' sizes and majority shares (:func:`slice_summary`);
    ``plateau_exits`` the check of :data:`course_utils.models.PLATEAU_RULE` (:func:`plateau_exits`).
    Each classifier's entry also holds ``right_test``, which test sentences it classified right
    (:func:`course_utils.models.right_answers` reads it). ``timings_s`` holds each stage's time, the
    sum of its jobs' (two run at a time), ``job_seconds`` each job's, and ``rebuild_s`` the wall time
    of the last rebuild and its stages (and its target); ``targets_s`` each target's last wall time
    and its stages' seconds. A rebuild of the assets alone marks the study stale (``study_stale``).

    Every job's result is saved as the jobs end, before the report is assembled
    (:data:`JOBS_FILE`), so that a failure after hours of training loses nothing: ``from_jobs``
    (that file) assembles the report from a run's saved results instead of running the jobs again.
    A target that keeps runs it does not rerun checks, before it runs anything, that the report holds them.
    """
    if target is not None and stages is not None:
        raise ValueError("expected stages or a target, not both")
    if target is not None and target not in TARGETS:
        raise ValueError(f"expected target to be one of {sorted(TARGETS)}, got {target!r}")
    stages = STAGES if stages is None and target is None else TARGETS[target] if stages is None else stages
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
    work = work_folder(target)  # kept until the rebuild ends, so that an interrupted one resumes
    work.mkdir(parents=True, exist_ok=True)
    jobs_file = jobs_file_of(target)
    folder = str(work)
    every = plan(stages, folder)  # the stages' jobs, whichever run now: a stage's time is theirs
    planned = plan(stages, folder, target)
    if target == "study" and "students" in stages:  # the students it keeps must be there before it runs
        kept = {job.name for job in every if job.stage == "students"} - {job.name for job in planned}
        missing = sorted(kept - set(reported_students(result)))
        if missing:
            raise KeyError(f"expected the report to hold the students make study keeps, got none for {missing} "
                           "(run make assets first)")
    count = iter(range(1, len(planned) + 1))
    saved = {} if from_jobs is not None else resumable(jobs_file, planned)
    if not saved and from_jobs is None:  # a fresh run: no model of an earlier one may be read
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    resumed = len(saved)
    if saved and progress:
        print(f"resuming: {len(saved)} of {len(planned)} jobs saved by an interrupted run ({jobs_file})", flush=True)
        count = iter(range(len(saved) + 1, len(planned) + 1))

    def report_progress(job, job_result, seconds):
        saved[job.name] = [job_result, seconds]
        save_jobs(saved, jobs_file)
        if progress:
            print(f"[{next(count)}/{len(planned)}] {job.name}: {seconds:.0f} s", flush=True)

    if from_jobs is not None:
        done = load_jobs(Path(from_jobs), planned)
    else:
        remaining = [dataclasses.replace(job, after=tuple(a for a in job.after if a not in saved))
                     for job in planned if job.name not in saved]
        with worker_pool() as pool:
            job_runner.run(remaining, pool, on_done=report_progress)
        done = {job.name: tuple(saved[job.name]) for job in planned}
    result.setdefault("job_seconds", {})
    result["job_seconds"].update({name: seconds for name, (_, seconds) in done.items()})
    with tempfile.TemporaryDirectory() as folder:  # a job the plan no longer has (a cut, an earlier design): gone
        planned_names = {job.name for job in plan(STAGES, folder)}
    result["job_seconds"] = {name: s for name, s in result["job_seconds"].items() if name in planned_names}
    for stage in stages:
        if stage == "tokenizer":
            continue
        ran = [job for job in planned if job.stage == stage]
        results = {job.name: done[job.name][0] for job in ran}
        if stage == "students" and target is not None:  # the students this target does not rerun: as reported
            results = {**reported_students(result), **results}
        built = ASSEMBLE[stage](results)
        if stage == "students":  # round two's one-seed budget control, cut in round three's declaration
            result.pop("budget_control", None)
        key = REPORT_KEYS[stage]
        if key is None:
            result.update(built)
        else:
            result[key] = built
        # the stage's jobs' last measured seconds (a full rebuild: this one's), when each has some
        known = [result["job_seconds"].get(job.name) for job in every if job.stage == stage]
        result["timings_s"][stage] = sum(known) if None not in known else sum(done[job.name][1] for job in ran)
    result.pop("torch_threads", None)  # replaced by the recipe's count per stage
    result.pop("timings_note", None)  # a note of an earlier rebuild: timings_s and rebuild_s say it
    result["threads"] = {**STAGE_THREADS, "students: the bundled one (distilled, seed 0)": BUNDLED_STUDENT_THREADS}
    result["workers"] = WORKERS
    result["machine"] = machine()
    result["reproducibility"] = REPRODUCIBILITY
    result["plateau_exits"] = plateau_exits(result)
    wall = time.perf_counter() - start
    if from_jobs is None:  # assembled again from a run's saved jobs: that run's times stand
        result["rebuild_s"] = {"stages": list(stages), "wall": wall, **({"target": target} if target else {})}
        if resumed:  # the wall time is then this run's only: the jobs an interrupted run saved took theirs before
            result["rebuild_s"]["resumed_jobs"] = {"saved": resumed, "of": len(planned)}
        if target is not None:
            seconds = {stage: sum(done[job.name][1] for job in planned if job.stage == stage) for stage in stages
                       if stage != "tokenizer"}
            if "tokenizer" in stages:
                seconds["tokenizer"] = result["timings_s"]["tokenizer"]
            result.setdefault("targets_s", {})[target] = {"wall": wall, "stages": seconds}
    if target == "assets" and "teacher" in stages:
        result["study_stale"] = STUDY_STALE
    elif target in (None, "study") and "students" in stages:
        result.pop("study_stale", None)
    models.REPORT.write_text(json.dumps(result, indent=1) + "\n")
    shutil.rmtree(work, ignore_errors=True)  # done: the models its jobs passed on are no longer needed
    if from_jobs is None:
        save_jobs(saved, jobs_file, complete=True)
    bundle.record([models.REPORT])
    return result


def plateau_exits(report: dict) -> dict:
    """The check of :data:`course_utils.models.PLATEAU_RULE` on ``report``'s fine-tuning runs of the
    recipe: the teacher's (``teacher_fine_tuning_runs``), the study's students' (``students``) and the schedule study's (``plateau``, the bundled student), each with ``steps`` and ``plateau_end``
    (None: never left ln 2). Returns ``{"rule", "checked", "missed"}``: the rule, the number of runs
    checked and each run that misses it (its name, steps, plateau_end and limit). The few-label
    arms, which train from few labels, and the sweep, which tries other rates, are not checked."""
    if not isinstance(report, dict):
        raise TypeError(f"expected the report's dict, got {type(report).__name__}")
    runs = [(f"teacher-sentiment seed {r['seed']}", r) for r in report.get("teacher_fine_tuning_runs", [])]
    runs += [(_student_job(r["run"], r["seed"]), r) for r in report.get("students", {}).get("runs", [])]
    runs += [(f"plateau {r['schedule']!r} seed {r['seed']}", r) for r in report.get("plateau", {}).get("runs", [])
             if r["schedule"] in models.PLATEAU_SCHEDULES]
    missed = []
    for name, run in runs:
        steps = run["steps"] if "steps" in run else len(run["fine_tuning_loss_curve"])  # a report of before steps
        limit = models.plateau_limit(steps)
        if run["plateau_end"] is None or run["plateau_end"] > limit:
            missed.append({"run": name, "steps": steps, "plateau_end": run["plateau_end"], "limit": limit})
    return {"rule": models.PLATEAU_RULE, "checked": len(runs), "missed": missed}


def _student_job(run: str, seed: int) -> str:
    return f"student {run!r} seed {seed}"


def reported_students(report: dict) -> dict:
    """``{job name: entry}`` of the students stage's runs in ``report`` that the study's grid still
    has (an earlier design's runs are left out), for a target that reruns only some of them."""
    entries = {_student_job(r["run"], r["seed"]): r for r in report.get("students", {}).get("runs", [])}
    needed = {_student_job(run, seed) for run in models.STUDENT_RUNS for seed in models.RUN_SEEDS[run]
              if run not in models.STUDY_CUTS}
    return {name: entry for name, entry in entries.items() if name in needed}


JOBS_FILE = Path(__file__).resolve().parents[3] / "_build" / "rebuild-jobs.json"
# The sources a job's result depends on besides the bundle: a saved result is reused only when
# they and the bundle (its manifest) are what they were when it was saved.
FINGERPRINTED = ("models.py", "distill.py", "training.py", "students.py", "data.py", "probes.py", "tokenization.py")


def jobs_file_of(target: str | None) -> Path:
    """Where a rebuild of ``target`` saves its jobs' results as they end."""
    return JOBS_FILE.with_name(f"rebuild-jobs-{target or 'all'}.json")


def work_folder(target: str | None) -> Path:
    """Where a rebuild of ``target`` keeps the models its jobs pass to each other (until it ends)."""
    return JOBS_FILE.with_name(f"rebuild-work-{target or 'all'}")


def fingerprint() -> str:
    """The sha256 of the bundle's manifest and of :data:`FINGERPRINTED`'s sources."""
    import hashlib

    package = Path(models.__file__).parent
    digest = hashlib.sha256((models.ASSETS / "manifest.json").read_bytes())
    for name in FINGERPRINTED:
        digest.update((package / name).read_bytes())
    return digest.hexdigest()


def save_jobs(saved: dict, path: Path | None = None, complete: bool = False) -> None:
    """Write ``{job name: [result, seconds]}`` of the jobs ended so far, with :func:`fingerprint`
    (atomically: a copy, then a rename); ``complete`` once the rebuild has ended, so that the next
    run trains again rather than resuming (the file stays for ``--from-jobs``)."""
    path = Path(path or JOBS_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    part.write_text(json.dumps({"fingerprint": fingerprint(), "jobs": saved, "complete": complete}) + "\n",
                    encoding="utf-8")
    part.replace(path)


def resumable(path: Path, planned) -> dict:
    """The saved results (:func:`save_jobs`) of ``planned``'s jobs in ``path`` when its fingerprint is
    today's and its run did not end (an interrupted run of the same code on the same bundle), else none."""
    if not Path(path).is_file():
        return {}
    saved = json.loads(Path(path).read_text(encoding="utf-8"))
    if saved.get("fingerprint") != fingerprint() or saved.get("complete"):
        return {}
    names = {job.name for job in planned}
    return {name: value for name, value in saved["jobs"].items() if name in names}


def load_jobs(path: Path, planned) -> dict:
    """``{job name: (result, seconds)}`` from a saved run (:func:`save_jobs`), checked to hold every
    planned job."""
    saved = json.loads(Path(path).read_text(encoding="utf-8"))["jobs"]
    missing = [job.name for job in planned if job.name not in saved]
    if missing:
        raise ValueError(f"expected {path} to hold every planned job, got none for {missing[:3]} "
                         f"({len(missing)} missing)")
    return {job.name: tuple(saved[job.name]) for job in planned}


def plan(stages, folder: str, target: str | None = None, cuts=None) -> list[Job]:
    """The jobs of ``stages``, in the order of priority, each after the jobs whose models it loads;
    of ``target`` only (:func:`in_target`), when given: a job then waits only for jobs of the target,
    and loads the bundled model where it waited for another.

    ``folder`` receives the distilled students of every seed, which the few-label runs start from
    (trained by the students stage, or alone when only the few-label runs are asked; seed 0's is
    the bundled one), and the logits of each few-label teacher, which label its seed's arms B and C.
    A job loads what it needs from the bundle: a stage not rebuilt now is the bundled one.
    ``cuts``: the study's cuts for time (:data:`course_utils.models.STUDY_CUTS` by default): a run of
    the students stage, or ``"few-label"`` for the few-label runs; their jobs are not planned.
    """
    cuts = models.STUDY_CUTS if cuts is None else tuple(cuts)
    unknown = set(cuts) - set(models.STUDY_CUT_ORDER)
    if unknown:
        raise ValueError(f"expected cuts among {models.STUDY_CUT_ORDER}, got {sorted(unknown)}")
    if "few-label" in cuts:
        stages = [stage for stage in stages if stage != "task-distillation"]
    jobs: list[Job] = []
    bundled_student = _student_job("distilled", models.STUDENT_SEEDS[0])
    bundled_teacher = _teacher_sentiment_job(models.TEACHER_SEEDS[0])
    made_by = {"teacher": "teacher", bundled_teacher: "teacher-sentiment", bundled_student: "students"}
    made_by |= {_student_job("distilled", seed): "students" for seed in models.STUDENT_SEEDS}

    def add(name, stage, function, args=(), threads=None, after=()):
        # a model that this rebuild does not make is the bundled one: nothing to wait for
        after = tuple(a for a in after if made_by.get(a, stage) in stages)
        jobs.append(Job(name, stage, function, tuple(args), threads or STAGE_THREADS[stage], after))

    if "teacher" in stages:
        add("teacher", "teacher", _teacher)
    # one thread beside the teacher, which needs only one: what does not need it, the longest first
    if "students" in stages:
        for run in TEACHER_FREE:
            for seed in models.RUN_SEEDS[run]:
                add(_student_job(run, seed), "students", _student, (run, seed, None))
    if "teacher-sentiment" in stages:
        add("bag of words", "teacher-sentiment", _bag_of_words)
    # then what needs the teacher: the models others wait for, then the longest runs first
    if "teacher-sentiment" in stages:
        add(bundled_teacher, "teacher-sentiment", _teacher_sentiment, (models.TEACHER_SEEDS[0],), after=["teacher"])
    distilled = list(models.RUN_SEEDS["distilled"])
    if "students" in stages:
        for seed in distilled:
            add(_student_job("distilled", seed), "students", _student,
                ("distilled", seed, str(_student_folder(folder, seed))),
                BUNDLED_STUDENT_THREADS if seed == models.STUDENT_SEEDS[0] else None, ["teacher"])
    elif "task-distillation" in stages:  # the students the few-label runs start from, not fine-tuned
        for seed in distilled[1:]:
            made_by[_student_job("distilled", seed)] = "task-distillation"
            add(_student_job("distilled", seed), "task-distillation", _student,
                ("distilled", seed, str(_student_folder(folder, seed)), False), after=["teacher"])
    if "task-distillation" in stages:
        for n in models.LABELLED:
            for seed in models.TASK_SEEDS:
                add(_few_label_job(n, models.FEW_LABEL_TEACHER, seed), "task-distillation",
                    _task_distillation_run, (n, seed, models.FEW_LABEL_TEACHER, folder), after=["teacher"])
    if "students" in stages:  # the other runs of the study, the slowest (the teacher's outputs) first
        others = [run for run in models.STUDENT_RUNS if run != "distilled" and run not in TEACHER_FREE
                  and run not in cuts]
        for run in sorted(others, key=_slowest_first):
            for seed in models.RUN_SEEDS[run]:
                add(_student_job(run, seed), "students", _student, (run, seed, None), after=["teacher"])
    if "teacher-sentiment" in stages:
        for seed in models.TEACHER_SEEDS[1:]:
            add(_teacher_sentiment_job(seed), "teacher-sentiment", _teacher_sentiment, (seed,), after=["teacher"])
    if "plateau" in stages:
        for schedule in models.PLATEAU_SCHEDULES:
            for seed in models.PLATEAU_SEEDS:
                add(f"plateau {schedule!r} seed {seed}", "plateau", _plateau_run, (schedule, seed),
                    after=[bundled_student])
    if "sweep" in stages:
        for lr in models.LR_SWEEP:
            for seed in models.SWEEP_SEEDS:
                add(f"sweep lr={lr:g} seed {seed}", "sweep", _sweep_run, (lr, seed), after=[bundled_student])
    if "task-distillation" in stages:
        for seed in models.TASK_SEEDS:
            student = _student_job("distilled", seed)
            for n in models.LABELLED:
                for arm in ("A", "B", "C"):
                    needs = [student] + ([_few_label_job(n, models.FEW_LABEL_TEACHER, seed)] if arm != "A" else [])
                    add(_few_label_job(n, arm, seed), "task-distillation", _task_distillation_run,
                        (n, seed, arm, folder), after=needs)
    if target is not None:
        names = {job.name for job in jobs if in_target(job, target)}
        jobs = [dataclasses.replace(job, after=tuple(a for a in job.after if a in names))
                for job in jobs if job.name in names]
    job_runner.check(jobs)  # each job after those it waits for
    return jobs


def study_seconds(earlier: dict, speed: float, cuts=()) -> dict[str, float]:
    """Estimated seconds of each job of the study's target (``make study``) with ``cuts``: a job of
    ``earlier`` (round two's report) keeps its ``job_seconds``; a new seed of a run, that run's mean;
    a budget arm of masked words alone, the fixed part of a student job (the copy with no
    distillation: fine-tuning, probes, masked-word accuracy) plus its steps at round two's seconds
    per masked-word step ("erased, MLM only" at 250 steps, less the fixed part); each times ``speed``
    (this machine's seconds for a job that took one second on round two's)."""
    import statistics

    old = earlier["job_seconds"]
    planned = plan(TARGETS["study"], tempfile.gettempdir(), "study", cuts)

    def mean_of(prefix):
        values = [v for k, v in old.items() if k.startswith(prefix)]
        return statistics.fmean(values) if values else None

    fixed = mean_of(_student_job("copy, no distillation", 0)[:-2])
    per_step = (mean_of(_student_job(models.budget_run(250), 0)[:-2]) - fixed) / models.DISTILLATION["steps"]
    seconds = {}
    for job in planned:
        if job.name in old:
            estimate = old[job.name]
        elif job.stage == "students" and job.args[0] in models.STUDENT_STEPS:
            estimate = fixed + per_step * models.STUDENT_STEPS[job.args[0]]
        else:
            estimate = mean_of(job.name.rsplit(" ", 1)[0] + " ")
        if estimate is None:
            raise ValueError(f"expected round two's report to time a job like {job.name!r}")
        seconds[job.name] = estimate * speed
    return seconds


def replay_study(earlier: dict, speed: float) -> list[tuple[tuple[str, ...], float]]:
    """``[(cuts, replayed seconds)]``: the study's target replayed (:func:`course_utils.authoring.jobs.replay`)
    with :func:`study_seconds`, with no cut and then each prefix of the declared cut order
    (:data:`course_utils.models.STUDY_CUT_ORDER`); the first under :data:`course_utils.models.STUDY_BUDGET_S`
    is the one the declaration makes."""
    rows = []
    for k in range(len(models.STUDY_CUT_ORDER) + 1):
        cuts = models.STUDY_CUT_ORDER[:k]
        seconds = study_seconds(earlier, speed, cuts)
        rows.append((cuts, job_runner.replay(plan(TARGETS["study"], tempfile.gettempdir(), "study", cuts), seconds)))
    return rows


def _slowest_first(run: str) -> float:
    """Minus a run's cost in masked-word steps (a step with the teacher's outputs costs about 1.9:
    it runs the teacher too; no distillation costs nothing): sorted by it, the longest runs start
    first and the short ones fill the end of the schedule."""
    weights = models.STUDENT_RUNS[run][1]
    if weights is None:
        return 0.0
    steps = models.run_recipe(run)["steps"]
    return -steps * (1.0 if weights.get("ce") == 0.0 and weights.get("cos") == 0.0 else 1.9)


def _few_label_job(labelled: int, arm: str, seed: int) -> str:
    return f"few-label {labelled} {arm!r} seed {seed}"


def _teacher_sentiment_job(seed: int) -> str:
    return f"teacher-sentiment seed {seed}"


# --------------------------------------------------------------------------------------------
# What each stage writes into the report, from its jobs' results ({job name: result})


def _assemble_teacher_sentiment(results: dict) -> dict:
    bundled = results[_teacher_sentiment_job(models.TEACHER_SEEDS[0])]
    bag = results["bag of words"]
    return {
        "sentiment_task": task_summary(),
        "sentiment_accuracy_validation": bundled["sentiment_accuracy_validation"],
        "sentiment_accuracy_test": bundled["sentiment_accuracy_test"],
        "sentiment_accuracy_by_kind_test": bundled["accuracy_by_kind_test"],
        "sentiment_accuracy_by_slice_test": bundled["accuracy_by_slice_test"],
        "slices": slice_summary(),
        "bag_of_words_accuracy_test": bag["sentiment_accuracy_test"],
        "bag_of_words_accuracy_by_kind_test": bag["accuracy_by_kind_test"],
        "bag_of_words_accuracy_by_slice_test": bag["accuracy_by_slice_test"],
        "fine_tuning": dict(models.TEACHER_FINE_TUNING),
        "fine_tuning_loss_curve": bundled["fine_tuning_loss_curve"],
        "teacher_fine_tuning_runs": [results[_teacher_sentiment_job(seed)] for seed in models.TEACHER_SEEDS],
    }


def task_summary() -> dict:
    """The sentiment task's sizes and the share of each kind of sentence, per split (``"train"``: the
    labelled pool), and the size of its unlabelled text (the training split's sentences with a
    held-out word, :func:`course_utils.data.unlabelled_task_text`)."""
    summary = {"keep": dict(data.TASK_KEEP), "splits": {}, "unlabelled_sentences": len(data.unlabelled_task_text())}
    for split in ("train", "validation", "test"):
        sentences = data.sentiment_task(split)
        kinds = [s.kind for s in sentences]
        summary["splits"][split] = {"sentences": len(sentences),
                                    "shares": {k: kinds.count(k) / len(kinds) for k in data.KINDS}}
    return summary


def slice_summary() -> dict:
    """The sizes of the slices (:data:`course_utils.data.SLICES`), to read their accuracies against:
    for the test set, the number of sentences and the majority class's share (``majority``, what
    always answering the commoner label scores), in all and per slice; for the validation set, the
    sizes."""

    def describe(sentences, majority: bool) -> dict:
        entry = {"sentences": len(sentences)}
        if majority:
            positive = sum(s.label for s in sentences) / len(sentences) if sentences else 0.0
            entry["majority"] = max(positive, 1 - positive)
        return entry

    summary = {}
    for split in ("test", "validation"):
        sentences = data.sentiment_task(split)
        slices = {name: [s for s in sentences if data.slice_of(s) == name] for name in data.SLICES}
        summary[split] = {**describe(sentences, split == "test"),
                          "slices": {name: describe(part, split == "test") for name, part in slices.items()}}
    return summary


def _assemble_students(results: dict) -> dict:
    names = [_student_job(run, seed) for run in models.STUDENT_RUNS for seed in models.RUN_SEEDS[run]
             if run not in models.STUDY_CUTS]
    runs = [results[name] for name in names if name in results]  # all of them, but after make assets alone
    students = {
        "layers": models.STUDENT_LAYERS,
        "starts": dict(models.STUDENT_STARTS),
        "losses": {name: None if weights is None else dict(weights) for name, weights in models.STUDENT_LOSSES.items()},
        "grid": {run: list(corner) for run, corner in models.STUDENT_GRID.items()},
        "erased_words": sorted(data.held_out_words()),
        "distillation": dict(models.DISTILLATION),
        "recipes": {run: models.run_recipe(run) for run in models.STUDENT_RUNS},
        "fine_tuning": dict(models.STUDENT_FINE_TUNING),
        "seeds": {run: list(seeds) for run, seeds in models.RUN_SEEDS.items()},
        "teacher": "every student learns from one teacher, the bundled one",
        "cut": list(models.STUDY_CUTS),
        "runs": runs,
    }
    return {"students": students}


def _assemble_plateau(results: dict) -> dict:
    import torch
    import transformers

    versions = {"torch": torch.__version__, "transformers": transformers.__version__}  # same stack, same bits
    return {"fine_tuning": dict(models.STANDARD_FINE_TUNING), "schedules": models.PLATEAU_SCHEDULES, "threads": 1,
            "workers": WORKERS, "versions": versions, "kind_every": KIND_EVERY, "runs": list(results.values())}


def _assemble_task_distillation(results: dict) -> dict:
    runs = [r for name, r in results.items() if name.startswith("few-label")]
    return {
        "fine_tuning": dict(models.TASK_FINE_TUNING),
        "teacher_fine_tuning": dict(models.FEW_LABEL_TEACHER_FINE_TUNING),
        "seeds": list(models.TASK_SEEDS),
        "steps": task_steps(),
        "labelled_pool": len(data.sentiment_task("train")),
        "unlabelled_sentences": len(data.unlabelled_task_text()),
        "distillation": dict(models.TASK_DISTILLATION),
        "arms": {**models.TASK_ARMS, models.FEW_LABEL_TEACHER: models.FEW_LABEL_TEACHER},
        "labelled_by": {"B": models.FEW_LABEL_TEACHER, "C": models.FEW_LABEL_TEACHER},
        "threads": 1,
        "workers": WORKERS,
        "runs": sorted(runs, key=lambda r: (r["labelled"], r["arm"], r["seed"])),
    }


ASSEMBLE = {
    "teacher": lambda results: results["teacher"],
    "teacher-sentiment": _assemble_teacher_sentiment,
    "students": _assemble_students,
    "sweep": lambda results: {"fine_tuning": dict(models.STUDENT_FINE_TUNING), "seeds": list(models.SWEEP_SEEDS),
                              "runs": list(results.values())},
    "plateau": _assemble_plateau,
    "task-distillation": _assemble_task_distillation,
}
# stage -> the report's key for what it builds (None: its keys are the report's)
REPORT_KEYS = {"teacher": None, "teacher-sentiment": None, "students": None, "sweep": "lr_sweep",
               "plateau": "plateau", "task-distillation": "task_distillation"}


# --------------------------------------------------------------------------------------------
# The jobs: each runs in a worker process, loads what it needs and seeds itself


@functools.cache
def machine() -> dict:
    """What a rebuild's bits depend on besides the recipes: the processor, the kernels torch
    chose for it, and the versions of torch and transformers.

    ``cpu_model`` is the processor's family, model and stepping (Linux): a cloud machine's name
    ("Intel(R) Xeon(R) Processor") and torch's capability ("AVX512") are the same for several
    generations of Xeon, whose kernels can round differently: the teacher's masked-LM losses,
    rebuilt with the same code and stack on 2026-11-25 and on a family 6 model 207 Xeon on
    2026-11-26, part in their last bit at the third step, most likely for this reason."""
    import platform

    import torch
    import transformers

    name, model = platform.processor(), platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        fields = dict(line.split(":", 1) for line in cpuinfo.read_text().split("\n\n")[0].splitlines() if ":" in line)
        fields = {key.strip(): value.strip() for key, value in fields.items()}
        name = fields.get("model name", name)
        model = " ".join(f"{key} {fields[key]}" for key in ("cpu family", "model", "stepping") if key in fields) or model
    return {"processor": name or platform.machine(), "cpu_model": model,
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "torch": torch.__version__, "transformers": transformers.__version__}


@functools.cache
def _worker_data():
    """``(tokenizer, {"train": ..., "validation": ..., "test": ...})``: the corpus, for masked-LM
    pre-training and its accuracy, loaded and encoded once per worker process (about 4 s) and read,
    never changed, by each of its jobs.

    The worker's transformers is made quiet too: no progress bars for files of a few MB, and no
    load reports (every new task head is new on purpose)."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    tokenizer = tokenization.load_bundled_tokenizer()
    return tokenizer, {s: training.encode(data.corpus(s), tokenizer) for s in ("train", "validation", "test")}


@functools.cache
def _task_data():
    """``(tokenizer, {split: encoded}, test groups)``: the sentiment task (:func:`course_utils.data.sentiment_task`),
    once per worker process: ``"train"`` (the labelled pool), ``"validation"``, ``"test"`` and
    ``"unlabelled"`` (:func:`course_utils.data.unlabelled_task_text`, whose labels no run reads); the
    test groups are ``{"kind": [...], "slice": [...]}``, each test sentence's kind and slice."""
    tokenizer, _ = _worker_data()
    splits = {s: training.encode(data.sentiment_task(s), tokenizer) for s in ("train", "validation", "test")}
    splits["unlabelled"] = training.encode(data.unlabelled_task_text(), tokenizer)
    test = data.sentiment_task("test")
    return tokenizer, splits, {"kind": [s.kind for s in test], "slice": [data.slice_of(s) for s in test]}


def test_accuracies(right, groups: dict) -> dict:
    """The report's test accuracies of one classifier from ``right``, ``(N,)`` booleans (whether each
    test sentence was classified right), and ``groups`` (:func:`_task_data`'s, each test sentence's
    kind and slice): ``sentiment_accuracy_test``, ``accuracy_by_kind_test`` ({kind: accuracy}, in
    the order of :data:`course_utils.data.KINDS`) and ``accuracy_by_slice_test`` ({slice: accuracy},
    :data:`course_utils.data.SLICES`); a kind or slice with no sentence is left out."""
    right = np.asarray(right, dtype=bool)
    if right.ndim != 1 or right.size == 0:
        raise ValueError(f"expected one boolean per test sentence, got shape {right.shape}")
    entry = {"sentiment_accuracy_test": float(right.mean())}
    for group, names in (("kind", data.KINDS), ("slice", data.SLICES)):
        labels = np.asarray(groups[group])
        if labels.shape != right.shape:
            raise ValueError(f"expected a {group} per test sentence ({right.size}), got {labels.size}")
        entry[f"accuracy_by_{group}_test"] = {name: float(right[labels == name].mean()) for name in names
                                              if (labels == name).any()}
    return entry


def _scores(classifier, curve=None) -> dict:
    """A fine-tuned classifier's report entry: test accuracy, in all, per kind of sentence and per
    slice (:func:`test_accuracies`), which sentences it got right (``right_test``,
    :func:`course_utils.models.pack_right`), and (given its loss ``curve``) the curve, its number of
    steps and the step at which it left ln 2."""
    import torch

    tokenizer, splits, groups = _task_data()
    with torch.inference_mode():  # one pass over the test sentences gives every number
        right = training.predict(classifier, splits["test"], tokenizer.pad_token_id) == np.array(splits["test"].labels)
    entry = test_accuracies(right, groups)
    entry["right_test"] = models.pack_right(right)
    if curve is not None:
        entry.update(fine_tuning_loss_curve=curve, steps=len(curve), plateau_end=training.plateau_end(curve))
    return entry


def pretrained_teacher(tokenizer, train, recipe: dict, *, progress: bool = False, **sizes):
    """``(teacher, history)``: a ``BertForMaskedLM`` of :func:`course_utils.models.teacher_config` (``sizes``
    update it) from random weights drawn with ``recipe["seed"]``, pre-trained by masked words on ``train``
    with ``recipe`` (:data:`course_utils.models.PRETRAINING`'s keys; the seed also draws batches and masks)."""
    from transformers import BertForMaskedLM

    env.seed_everything(recipe["seed"])
    teacher = BertForMaskedLM(models.teacher_config(tokenizer, **sizes))
    history = training.train_mlm(teacher, train, tokenizer, progress=progress, **recipe)
    return teacher, history


def _teacher() -> dict:
    import torch

    tokenizer, splits = _worker_data()
    teacher, history = pretrained_teacher(tokenizer, splits["train"], models.PRETRAINING)
    models.save(teacher, models.BUNDLED["teacher"])
    teacher = models.load_bundled("teacher")
    with torch.inference_mode():
        return {
            "teacher_parameters": sum(p.numel() for p in teacher.parameters()),
            "mlm_accuracy_validation": training.mlm_accuracy(teacher, splits["validation"], tokenizer),
            "mlm_accuracy_test": training.mlm_accuracy(teacher, splits["test"], tokenizer),
            "pretraining": dict(models.PRETRAINING),
            "mlm_loss_curve": history.losses["mlm"],
            "teacher_probes": probes.probe(teacher, tokenizer),
        }


def _teacher_classifier(seed: int, folder: Path | None = None):
    """The pre-trained teacher of ``folder`` (the bundled one by default) with a new sentiment head drawn with ``seed``."""
    from transformers import BertForSequenceClassification

    env.seed_everything(seed)
    return BertForSequenceClassification.from_pretrained(str(folder or models.BUNDLED["teacher"]), num_labels=2)


def _teacher_sentiment(seed: int) -> dict:
    """The teacher fine-tuned on the sentiment task with the recipe and ``seed``; seed 0's is bundled."""
    import torch

    tokenizer, splits, _ = _task_data()
    classifier = _teacher_classifier(seed)
    history = training.train_classifier(classifier, splits["train"], tokenizer.pad_token_id, progress=False,
                                        **dict(models.TEACHER_FINE_TUNING, seed=seed))
    entry = {"seed": seed, **_scores(classifier, history.losses["loss"])}
    if seed == models.TEACHER_SEEDS[0]:
        models.save(classifier, models.BUNDLED["teacher-sentiment"])
        classifier = models.load_bundled("teacher-sentiment")
        with torch.inference_mode():
            entry["sentiment_accuracy_validation"] = training.accuracy(classifier, splits["validation"],
                                                                       tokenizer.pad_token_id)
        entry.update(_scores(classifier))  # the bundled files' numbers
    return entry


def _bag_of_words() -> dict:
    """The order-blind baseline, trained on the labelled pool: its test accuracies as :func:`test_accuracies`
    gives them (a logistic regression: outside inference mode)."""
    tokenizer, splits, groups = _task_data()
    predicted = training.bag_of_words_predictions(splits["train"], splits["test"], len(tokenizer))
    return test_accuracies(predicted == np.array(splits["test"].labels), groups)


def _student_folder(folder: str, seed: int) -> Path:
    return Path(folder) / f"distilled-{seed}"


def _student(run: str, seed: int, save_to: str | None, fine_tune: bool = True) -> dict | None:
    """One of lesson 07's students (``run``, ``seed``), then fine-tuned on sentiment: its report entry,
    with its probes (:func:`course_utils.probes.probe`) at its start and after distillation.

    The distilled student of seed 0 and its sentiment copy are bundled; ``save_to``, a folder
    for the student itself (the few-label runs start from it). ``fine_tune=False``: train and save the student only.
    """
    from transformers import BertForMaskedLM

    tokenizer, splits = _worker_data()
    if not models.needs_teacher(run):  # only the teacher's sizes are read (a teacher still in training)
        teacher = BertForMaskedLM(models.teacher_config(tokenizer))
    else:
        teacher = models.load_bundled("teacher")
    start = models.student_start(models.STUDENT_GRID[run][0], seed, teacher, tokenizer) if fine_tune else None
    student, history = models.train_student(run, seed, teacher, tokenizer, splits["train"], progress=False)
    if save_to is not None:
        models.save(student, Path(save_to))
    if not fine_tune:
        return None
    entry, classifier = _student_entry(start, student, history, seed)
    if run == "distilled" and seed == models.STUDENT_SEEDS[0]:
        models.save(student, models.BUNDLED["student"])
        models.save(classifier, models.BUNDLED["student-sentiment"])
    return {"run": run, "seed": seed, **entry}


def _student_entry(start, student, history, seed: int) -> tuple[dict, object]:
    """``(entry, classifier)``: a trained student's report entry (its probes at ``start`` and now, its
    masked-word accuracy, its distillation losses, and the scores of its copy fine-tuned on sentiment
    with ``seed``) and that fine-tuned copy."""
    import torch

    tokenizer, splits = _worker_data()
    _, task, _ = _task_data()
    probed = {"start": probes.probe(start, tokenizer), "end": probes.probe(student, tokenizer)}
    classifier = _classifier_from(student, seed)
    fine_tuning = training.train_classifier(classifier, task["train"], tokenizer.pad_token_id, progress=False,
                                            **dict(models.STUDENT_FINE_TUNING, seed=seed))
    with torch.inference_mode():
        mlm_accuracy = training.mlm_accuracy(student.eval(), splits["test"], tokenizer)
    entry = {"mlm_accuracy_test": mlm_accuracy, "losses": history.losses, "probes": probed,
             **_scores(classifier.eval(), fine_tuning.losses["loss"])}
    return entry, classifier


def _sweep_run(lr: float, seed: int) -> dict:
    """Lesson 08's sweep at peak learning rate ``lr``: the bundled student fine-tuned on sentiment with ``seed``."""
    tokenizer, splits, _ = _task_data()
    classifier = _classifier_from(models.load_bundled("student"), seed)
    try:
        history = training.train_classifier(classifier, splits["train"], tokenizer.pad_token_id, progress=False,
                                            **dict(models.STUDENT_FINE_TUNING, lr=lr, seed=seed))
    except FloatingPointError as error:  # a rate too large: a result of the sweep, not a failure of the rebuild
        return {"lr": lr, "seed": seed, "diverged": str(error)}
    validation = training.accuracy(classifier, splits["validation"], tokenizer.pad_token_id)  # to choose on
    return {"lr": lr, "seed": seed, "sentiment_accuracy_validation": validation,
            **_scores(classifier, history.losses["loss"])}


def _classifier_from(student, seed: int):
    """A ``DistilBertForSequenceClassification`` on ``student``'s encoder, its new head drawn with ``seed``."""
    import torch
    from transformers import DistilBertForSequenceClassification
    with tempfile.TemporaryDirectory() as folder, models.quiet_loading():  # the head is new on purpose
        models.save(student, Path(folder))
        torch.manual_seed(seed)
        return DistilBertForSequenceClassification.from_pretrained(folder, num_labels=2)


def _plateau_run(schedule: str, seed: int) -> dict:
    """One run of lesson 08's schedule study: the bundled student fine-tuned with the recipe under
    ``schedule`` and ``seed`` (on one thread, as lesson 08 runs it: the seed-0 run with warm-up is
    the lesson's live run, to the bit), its accuracy on each kind of test sentence every
    :data:`KIND_EVERY` steps."""
    tokenizer, splits, groups = _task_data()
    classifier = _classifier_from(models.load_bundled("student"), seed)

    def by_kind(model):
        return training.accuracy_by_kind(model, splits["test"], groups["kind"], tokenizer.pad_token_id)

    curves = schedule == KIND_CURVES  # the runs whose curves lesson 08 draws (a third of the stage's time)
    history = training.train_classifier(classifier, splits["train"], tokenizer.pad_token_id, progress=False,
                                        evaluate=by_kind if curves else None, evaluate_every=KIND_EVERY,
                                        **dict(models.STANDARD_FINE_TUNING, seed=seed, **models.PLATEAU_SCHEDULES[schedule]))
    validation = training.accuracy(classifier, splits["validation"], tokenizer.pad_token_id)
    entry = {"schedule": schedule, "seed": seed, "sentiment_accuracy_validation": validation,
             **_scores(classifier, history.losses["loss"])}
    if curves:
        entry["accuracy_by_kind_curve"] = [{"step": step, **accuracies} for step, accuracies in history.evaluations]
    return entry


KIND_CURVES = next(iter(models.PLATEAU_SCHEDULES))  # the recipe's schedule: its runs' per-kind accuracy curves


KIND_EVERY = 50  # steps between two measures of the per-kind accuracy in the schedule study


def task_text_logits(classifier):
    """``classifier``'s logits ``(N, 2)`` for every sentence of the task's training text, in the order
    of :func:`few_label_data`'s: the labelled pool, then the unlabelled text."""
    import torch

    tokenizer, splits, _ = _task_data()
    ids = splits["train"].ids + splits["unlabelled"].ids
    order = np.argsort([len(row) for row in ids], kind="stable")  # shortest first: little padding
    classifier.eval()
    with torch.inference_mode():
        logits = torch.cat([classifier(*training.pad([ids[j] for j in order[i:i + 256]], tokenizer.pad_token_id)).logits
                            for i in range(0, len(ids), 256)])
    return logits[torch.as_tensor(np.argsort(order))]  # back in the sentences' order


def _labeller_file(folder: str, labelled: int, seed: int) -> Path:
    """Where the few-label teacher of ``(labelled, seed)`` leaves its logits for the arms of its seed."""
    return Path(folder) / f"few-label-teacher-{labelled}-{seed}.pt"


def task_steps() -> int:
    """The few-label runs' steps, the same for every arm: :data:`course_utils.models.TASK_FINE_TUNING`'s
    epochs over the task's whole training text, the labelled pool and the unlabelled text (what arms C
    read; see the note above :data:`course_utils.models.LABELLED`)."""
    recipe = models.TASK_FINE_TUNING
    text = len(data.sentiment_task("train")) + len(data.unlabelled_task_text())
    return math.ceil(recipe["epochs"] * math.ceil(text / recipe["batch_size"]))


def few_label_data(arm: str, labelled: int, seed: int, teacher_logits=None):
    """``(sentences, objective, labelled rows)`` of arm ``arm`` (a key of :data:`course_utils.models.TASK_ARMS`):
    ``labelled`` sentences of the labelled pool (:func:`_task_data`'s ``"train"``) drawn with ``seed`` keep
    their labels; the unlabelled text is the pool's other sentences and the task's sentences holding a
    held-out word (``"unlabelled"``, whose gold labels are never read).

    A: the labelled sentences; B: the pool and the unlabelled text, Hinton's loss on the labelled
    sentences and the teacher's soft targets alone (``T²·KL``) on the others; C: the same sentences,
    the teacher's argmax as the label of the unlabelled ones. ``teacher_logits``: ``(len(pool) + len(unlabelled), 2)``, the pool's rows first
    (:func:`task_text_logits` of the teacher fine-tuned on the same labels), for B and C.
    ``labelled rows`` are the indices of the labelled sentences in ``sentences``.
    """
    import torch

    from .. import distill

    if arm not in models.TASK_ARMS:
        raise ValueError(f"expected an arm among {sorted(models.TASK_ARMS)}, got {arm!r}")
    _, splits, _ = _task_data()
    pool = splits["train"]
    if isinstance(labelled, bool) or not isinstance(labelled, int) or not 1 <= labelled <= len(pool.ids):
        raise ValueError(f"expected a number of labels between 1 and the pool's {len(pool.ids)}, got {labelled!r}")
    chosen = np.sort(np.random.default_rng(seed).choice(len(pool.ids), size=labelled, replace=False))
    if arm == "A":
        return training.Encoded([pool.ids[i] for i in chosen], [pool.labels[i] for i in chosen]), None, np.arange(labelled)
    ids = pool.ids + splits["unlabelled"].ids  # the whole text: the pool's rows first, as the teacher's logits
    known = np.zeros(len(ids), dtype=bool)
    known[chosen] = True
    gold = pool.labels + [None] * len(splits["unlabelled"].ids)  # the unlabelled text's labels are not read
    if teacher_logits is None or len(teacher_logits) != len(ids):
        raise ValueError(f"expected the teacher's logits for the {len(ids)} sentences of the pool and the "
                         f"unlabelled text, got {None if teacher_logits is None else len(teacher_logits)}")
    if arm == "B":
        labels = [y if k else -100 for y, k in zip(gold, known)]
        objective = distill.task_objective(teacher_logits, labelled=torch.as_tensor(known), **models.TASK_DISTILLATION)
        return training.Encoded(ids, labels), objective, chosen
    guesses = teacher_logits.argmax(-1).tolist()  # C
    return training.Encoded(ids, [y if k else g for y, k, g in zip(gold, known, guesses)]), None, chosen


def _task_distillation_run(labelled: int, seed: int, arm: str, folder: str) -> dict:
    """One run of the few-label experiment: arm ``arm`` on ``labelled`` labels drawn with ``seed``,
    from the distilled student of ``seed`` (saved in ``folder`` by the students stage); the arm
    :data:`course_utils.models.FEW_LABEL_TEACHER` fine-tunes the pre-trained teacher on the labels
    instead, and leaves its logits over the task's text in ``folder`` for arms B and C of its seed."""
    import torch
    from transformers import DistilBertForMaskedLM

    tokenizer, _, _ = _task_data()
    pad_id = tokenizer.pad_token_id
    if arm == models.FEW_LABEL_TEACHER:
        sentences, objective, rows = few_label_data("A", labelled, seed)
        classifier = _teacher_classifier(seed)
    else:
        logits = torch.load(_labeller_file(folder, labelled, seed)) if arm in ("B", "C") else None
        sentences, objective, rows = few_label_data(arm, labelled, seed, logits)
        student_folder = _student_folder(folder, seed)
        student = (DistilBertForMaskedLM.from_pretrained(str(student_folder)) if student_folder.exists()
                   else models.load_bundled("student") if seed == models.STUDENT_SEEDS[0] else None)
        classifier = _classifier_from(student, seed)
    recipe = models.FEW_LABEL_TEACHER_FINE_TUNING if arm == models.FEW_LABEL_TEACHER else models.TASK_FINE_TUNING
    settings = {k: v for k, v in recipe.items() if k != "epochs"}
    history = training.train_classifier(classifier, sentences, pad_id, progress=False, objective=objective,
                                        steps=task_steps(), **dict(settings, seed=seed))
    seen = training.Encoded([sentences.ids[i] for i in rows], [sentences.labels[i] for i in rows])  # gold labels
    entry = {"labelled": labelled, "arm": arm, "seed": seed, **_scores(classifier, history.losses["loss"]),
             "accuracy_labelled": training.accuracy(classifier, seen, pad_id)}
    if arm == models.FEW_LABEL_TEACHER:  # its labels of the task's text, for arms B and C
        logits = task_text_logits(classifier)
        torch.save(logits, _labeller_file(folder, labelled, seed))
        pool = len(_task_data()[1]["train"].ids)
        gold = torch.as_tensor(_task_data()[1]["train"].labels)
        entry["labels_right_on_pool"] = float((logits[:pool].argmax(-1) == gold).double().mean())
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_utils.authoring.assets", description="make assets: retrain the bundled tokenizer and models from the course corpus, stage by stage.")
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--stages", nargs="+", choices=STAGES, help="what to rebuild (default: all)")
    chosen.add_argument("--target", choices=sorted(TARGETS),
                        help="assets: what the lessons load (make assets); study: lesson 07's study (make study)")
    parser.add_argument("--from-jobs", type=Path, metavar="FILE",
                        help=f"assemble the report from a run's saved job results (default file: {JOBS_FILE}) "
                             "instead of running the jobs")
    args = parser.parse_args(argv)
    require_checkout()
    start = time.perf_counter()
    result = rebuild(args.stages, target=args.target, from_jobs=args.from_jobs)
    keys = [k for k in result if k.endswith("accuracy_test") or k.endswith("parameters")]
    for key in keys:
        print(f"{key}: {result[key]:.4f}" if isinstance(result[key], float) else f"{key}: {result[key]:,}")
    print(f"rebuilt {args.target or 'the bundled assets'} in {time.perf_counter() - start:.0f} s")
    if "study_stale" in result:
        print(f"note: {result['study_stale']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
