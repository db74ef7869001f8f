"""``make pilot``: issue 58's teacher pilot, run as :mod:`course_utils.models` declares it (``PILOT_*``).

The six-layer teacher and the three-layer model, pre-trained with the same recipe from each seed
of ``PILOT_SEEDS`` and fine-tuned with each of ``PILOT_FINE_TUNING_SEEDS``, scored on the
validation split only (the whole set and each slice). Today's recipe first, then at most the three
changes of ``PILOT_CHANGES`` in their order, each on the choosing seeds, until one passes the rule;
that one on the confirming seeds. The report goes to ``pilots/teacher_pilot.json`` (:data:`REPORT`),
never to ``report.json``, and outside the bundle: the lessons never load it, and a file of the
bundle would change the bundle's digest (:func:`course_utils.bundle.digest`) at every write.

Every run is a job of :mod:`course_utils.authoring.jobs` (one thread, two workers), made of the
functions ``make assets`` uses (:func:`course_utils.authoring.assets.pretrained_teacher`,
:func:`course_utils.models.train_student`, ``_teacher_classifier``, ``_classifier_from``,
:func:`course_utils.training.train_classifier`). The pilot is resumable job by job: the report is
written as each job ends, the pre-trained models are kept under ``_build/pilot/``, and a job whose
result is in the report is not run again (its name says its recipe and seeds). A pre-trained
model serves every recipe with the same pre-training settings (recipe 1 reuses today's).

No pilot job reads the test split: each runs under :func:`validation_only`, which makes the course
corpus and the sentiment task refuse ``"test"`` while it runs.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import statistics
import threading
import time
from pathlib import Path

import numpy as np

from .. import data, models, stats, tokenization, training
from . import ROOT, require_checkout
from . import assets as rebuild
from . import jobs as job_runner
from .jobs import Job

REPORT = Path(models.__file__).parent / "pilots" / "teacher_pilot.json"
MODELS = ROOT / "_build" / "pilot"  # the pre-trained models, kept for a resumed run
REFUSED = "test"
# The data functions a job could reach the test split through (each takes the split first).
GUARDED = ("corpus", "_held_out", "_task_draw", "sentiment_task")
# A test's scale: a tiny teacher, a few steps, a few hundred sentences (None: the declared pilot)
TINY = {"teacher_size": {"hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 32},
        "pretraining_steps": 3, "fine_tuning_steps": 30, "corpus_sentences": 300, "task_sentences": 200,
        "validation_sentences": 300}


class TestSplitRefused(PermissionError):
    """A pilot job asked for the test split, which the pilot never reads (issue 58)."""


_guard = threading.Lock()
_active = 0
_originals: dict = {}


def _refusing(name: str, function):
    @functools.wraps(function)
    def guarded(*args, **kwargs):
        split = args[0] if args else kwargs.get("split")
        if split == REFUSED:
            raise TestSplitRefused(f"the teacher pilot reads the validation split only, and data.{name}('test') "
                                   "was called inside it (issue 58: no pilot reads the test pool)")
        return function(*args, **kwargs)
    return guarded


@contextlib.contextmanager
def validation_only():
    """Within: :data:`GUARDED` functions of :mod:`course_utils.data` raise :class:`TestSplitRefused`
    when asked for the test split. Nestable and shared by the threads of a process."""
    global _active
    with _guard:
        if _active == 0:
            for name in GUARDED:
                _originals[name] = getattr(data, name)
                setattr(data, name, _refusing(name, _originals[name]))
        _active += 1
    try:
        yield
    finally:
        with _guard:
            _active -= 1
            if _active == 0:
                for name, function in _originals.items():
                    setattr(data, name, function)
                _originals.clear()


def _scale_key(scale: dict | None) -> str:
    return json.dumps(scale or {}, sort_keys=True)


@functools.cache
def _data(scale_key: str):
    """``(tokenizer, corpus, task, validation slices)`` for the pilot at ``scale``: the corpus's
    ``"train"`` and ``"validation"`` (masked words), the task's ``"train"`` (the labelled pool) and
    ``"validation"``, encoded once per worker; the slice of each validation sentence."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()  # every new head is new on purpose
    scale = json.loads(scale_key)
    tokenizer = tokenization.load_bundled_tokenizer()
    corpus = {"train": data.corpus("train")[:scale.get("corpus_sentences")],
              "validation": data.corpus("validation")[:scale.get("validation_sentences")]}
    task = {"train": data.sentiment_task("train")[:scale.get("task_sentences")],
            "validation": data.sentiment_task(models.PILOT_SPLIT)[:scale.get("validation_sentences")]}
    slices = [data.slice_of(s) for s in task["validation"]]
    return (tokenizer, {k: training.encode(v, tokenizer) for k, v in corpus.items()},
            {k: training.encode(v, tokenizer) for k, v in task.items()}, slices)


def accuracies(right, slices) -> dict:
    """``{"all": accuracy, slice: accuracy, ...}`` from ``right`` (``(N,)`` booleans) and each sentence's slice."""
    right, slices = np.asarray(right, dtype=bool), np.asarray(slices)
    if right.shape != slices.shape or right.size == 0:
        raise ValueError(f"expected one slice per sentence, got {slices.shape} for {right.shape}")
    return {"all": float(right.mean()), **{name: float(right[slices == name].mean()) for name in data.SLICES
                                           if (slices == name).any()}}


def _with_steps(recipe: dict, steps: int | None) -> dict:
    return dict(recipe) if steps is None else dict(recipe, steps=steps)


def _pretrain(model: str, pretraining: dict, seed: int, folder: str, scale: dict | None) -> dict:
    """One pre-training run of ``model`` (``"teacher"`` or ``"three-layer"``) with ``pretraining`` and
    ``seed``, saved into ``folder``; its masked-word accuracy on the validation corpus."""
    import torch
    from transformers import BertForMaskedLM

    with validation_only():
        scale = scale or {}
        tokenizer, corpus, _, _ = _data(_scale_key(scale))
        recipe = dict(_with_steps(pretraining, scale.get("pretraining_steps")), seed=seed)
        sizes = scale.get("teacher_size", {})
        if model == "teacher":
            trained, history = rebuild.pretrained_teacher(tokenizer, corpus["train"], recipe, **sizes)
        elif model == "three-layer":  # the budget control's model: the teacher's sizes, read only
            shape = BertForMaskedLM(models.teacher_config(tokenizer, **sizes))
            trained, history = models.train_student(models.THREE_LAYER_RUN, seed, shape, tokenizer, corpus["train"],
                                                     recipe=recipe, progress=False)
        else:
            raise ValueError(f"expected model to be one of {models.PILOT_MODELS}, got {model!r}")
        models.save(trained, Path(folder))
        with torch.inference_mode():
            accuracy = training.mlm_accuracy(trained.eval(), corpus["validation"], tokenizer)
        losses = history.losses["mlm"]
        return {"model": model, "seed": seed, "pretraining": recipe, "steps": len(losses),
                "mlm_loss_last_100": float(np.mean(losses[-100:])), "mlm_accuracy_validation": accuracy}


def _fine_tune(model: str, folder: str, fine_tuning: dict, seed: int, fine_tuning_seed: int,
               scale: dict | None) -> dict:
    """The pre-trained ``model`` of ``folder`` (pre-training ``seed``) fine-tuned on the task's labelled
    pool with ``fine_tuning`` and ``fine_tuning_seed``; its accuracy on the validation set, in all and
    per slice, and its loss curve's exit from ln 2 (:data:`course_utils.models.PLATEAU_RULE`)."""
    from transformers import DistilBertForMaskedLM

    with validation_only():
        scale = scale or {}
        tokenizer, _, task, slices = _data(_scale_key(scale))
        if model == "teacher":
            classifier = rebuild._teacher_classifier(fine_tuning_seed, Path(folder))
        elif model == "three-layer":
            classifier = rebuild._classifier_from(DistilBertForMaskedLM.from_pretrained(folder), fine_tuning_seed)
        else:
            raise ValueError(f"expected model to be one of {models.PILOT_MODELS}, got {model!r}")
        steps = scale.get("fine_tuning_steps")
        history = training.train_classifier(classifier, task["train"], tokenizer.pad_token_id, progress=False,
                                            steps=steps, **dict(fine_tuning, seed=fine_tuning_seed))
        right = training.predict(classifier, task["validation"], tokenizer.pad_token_id) == np.array(
            task["validation"].labels)
        curve = history.losses["loss"]
        end = training.plateau_end(curve)
        limit = models.plateau_limit(len(curve))
        return {"model": model, "seed": seed, "fine_tuning_seed": fine_tuning_seed, "fine_tuning": dict(fine_tuning),
                "accuracy_validation": accuracies(right, slices), "steps": len(curve), "plateau_end": end,
                "plateau_limit": limit, "meets_plateau_rule": end is not None and end <= limit,
                "fine_tuning_loss_curve": [round(x, 4) for x in curve]}


# --------------------------------------------------------------------------------------------
# The plan: each phase's jobs, named by what they compute (a name done is a job not run again)


def _settings(recipe: dict) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(recipe.items())
                     if k != "seed")


def pretraining_job(model: str, pretraining: dict, seed: int) -> str:
    return f"{model} pre-training [{_settings(pretraining)}] seed {seed}"


def fine_tuning_job(model: str, pretraining: dict, fine_tuning: dict, seed: int, fine_tuning_seed: int) -> str:
    return (f"{model} fine-tuning [{_settings(fine_tuning)}] of [{_settings(pretraining)}] seed {seed}, "
            f"fine-tuning seed {fine_tuning_seed}")


def _folder(models_folder: Path, name: str, scale: dict | None) -> Path:
    """Where the pre-training job ``name`` at ``scale`` leaves its model."""
    return Path(models_folder) / hashlib.sha256(f"{name} {_scale_key(scale)}".encode()).hexdigest()[:16]


def phase_jobs(recipe: dict, seeds, models_folder: Path, scale: dict | None, done=()) -> list[Job]:
    """The jobs of ``recipe`` (:func:`course_utils.models.pilot_recipe`) on pre-training ``seeds``, the
    pre-trainings first (the teacher's, the longest, before the three-layer model's), each fine-tuning
    after its pre-training; jobs already ``done`` (names) are left out, as are their waits."""
    fine_tunings = {"teacher": recipe["teacher_fine_tuning"], "three-layer": recipe["three_layer_fine_tuning"]}
    planned, later = [], []
    for model in models.PILOT_MODELS:
        for seed in seeds:
            pre = pretraining_job(model, recipe["pretraining"], seed)
            folder = str(_folder(models_folder, pre, scale))
            if pre not in done:
                planned.append(Job(pre, "pilot", _pretrain, (model, recipe["pretraining"], seed, folder, scale)))
            for f in models.PILOT_FINE_TUNING_SEEDS:
                name = fine_tuning_job(model, recipe["pretraining"], fine_tunings[model], seed, f)
                if name not in done:
                    later.append(Job(name, "pilot", _fine_tune, (model, folder, fine_tunings[model], seed, f, scale),
                                     after=(pre,) if pre not in done else ()))
    jobs = planned + later
    job_runner.check(jobs)
    return jobs


# --------------------------------------------------------------------------------------------
# The declared rule, on the jobs' results


def phase_summary(recipe: dict, seeds, results: dict) -> dict:
    """The rule on ``recipe``'s runs with pre-training ``seeds`` (``results``: job name -> result): per
    model and part, each seed's mean over its fine-tunings and the mean of all runs; ``difference``
    (teacher - three-layer) per part, ``margin`` (their minimum), ``plateau`` (every teacher run meets
    the rule), ``passes``, and Welch's interval over the seeds (each seed's mean, :func:`stats.welch`)."""
    fine_tunings = {"teacher": recipe["teacher_fine_tuning"], "three-layer": recipe["three_layer_fine_tuning"]}
    per_seed, means, plateau, pretraining = {}, {}, True, {}
    for model in models.PILOT_MODELS:
        runs = {seed: [results[fine_tuning_job(model, recipe["pretraining"], fine_tunings[model], seed, f)]
                       for f in models.PILOT_FINE_TUNING_SEEDS] for seed in seeds}
        per_seed[model] = {part: [float(np.mean([r["accuracy_validation"][part] for r in runs[seed]])) for seed in seeds]
                           for part in models.PILOT_PARTS}
        means[model] = {part: float(np.mean(values)) for part, values in per_seed[model].items()}
        pretraining[model] = [results[pretraining_job(model, recipe["pretraining"], seed)]["mlm_accuracy_validation"]
                              for seed in seeds]
        if model == "teacher":
            plateau = all(r["meets_plateau_rule"] for seed in seeds for r in runs[seed])
    difference = {part: means["teacher"][part] - means["three-layer"][part] for part in models.PILOT_PARTS}
    margin = min(difference.values())
    intervals = {}
    for part in models.PILOT_PARTS:
        welch = stats.welch(per_seed["teacher"][part], per_seed["three-layer"][part])
        intervals[part] = {"mean": welch.mean, "interval": list(welch.interval), "df": welch.df, "p": welch.p}
    return {"recipe": recipe["name"], "seeds": list(seeds), "per_seed": per_seed, "means": means,
            "mlm_accuracy_validation": pretraining, "difference": difference, "margin": margin,
            "plateau": plateau, "passes": margin > 0 and plateau, "welch": intervals}


def bundled_seed(per_seed_unseen: dict, per_seed_all: dict) -> int:
    """The declared choice of the bundled teacher's pre-training seed: the seed whose teacher's mean
    unseen-slice accuracy is the (lower) median; ties: the higher whole-set mean, then the smaller seed."""
    if not per_seed_unseen or set(per_seed_unseen) != set(per_seed_all):
        raise ValueError("expected each seed's unseen-slice and whole-set means")
    median = statistics.median_low(per_seed_unseen.values())
    tied = [seed for seed, value in per_seed_unseen.items() if value == median]
    return min(tied, key=lambda seed: (-per_seed_all[seed], seed))


def decide(results: dict) -> dict:
    """The pilot's course as declared, from the results there are: the recipes tried in order (each
    phase's :func:`phase_summary`), which changes were kept, the chosen recipe, its confirmation, the
    outcome and the bundled seed; ``"next"``: the phase whose jobs are missing (``(recipe, seeds)``),
    or None when the pilot is over."""
    choosing, confirming = models.PILOT_SEEDS["choosing"], models.PILOT_SEEDS["confirming"]
    tried, kept, margins, chosen = [], [], {}, None

    def summary(recipe, seeds):
        try:
            return phase_summary(recipe, seeds, results)
        except KeyError:  # a job not done yet
            return None

    for index in range(1 + len(models.PILOT_CHANGES)):  # today's recipe, then each change in its order
        changes = () if index == 0 else (*kept, models.PILOT_CHANGES[index - 1])
        recipe = models.pilot_recipe(changes)
        measured = summary(recipe, choosing)
        if measured is None:
            return {"tried": tried, "kept": [c.name for c in kept], "next": (recipe, choosing)}
        tried.append(dict(measured, changes=recipe["changes"]))
        margins[recipe["name"]] = measured["margin"]
        if measured["passes"]:
            chosen = recipe
            break
        if index and measured["margin"] > margins[models.pilot_recipe(kept)["name"]]:
            kept = list(changes)
    state = {"tried": tried, "kept": [c.name for c in kept], "chosen": chosen and chosen["name"], "next": None}
    teacher_recipe, seeds = models.pilot_recipe(()), list(choosing)
    if chosen is None:
        state["outcome"] = "none passed"
    else:
        confirmed = summary(chosen, confirming)
        if confirmed is None:
            return dict(state, next=(chosen, confirming))
        state["confirming"] = confirmed
        if confirmed["passes"]:
            six = phase_summary(chosen, (*choosing, *confirming), results)
            state["six_seeds"] = six
            better = all(six["welch"][part]["interval"][0] > 0 for part in models.PILOT_PARTS)
            state["outcome"] = "confirmed, better" if better else "confirmed, ahead on average"
            teacher_recipe, seeds = chosen, [*choosing, *confirming]
        else:
            state["outcome"] = "not confirmed"
            if not chosen["changes"]:  # today's recipe, measured on the six seeds
                seeds = [*choosing, *confirming]
    teacher = phase_summary(teacher_recipe, seeds, results)
    unseen = dict(zip(seeds, teacher["per_seed"]["teacher"]["unseen"]))
    whole = dict(zip(seeds, teacher["per_seed"]["teacher"]["all"]))
    state["teacher_recipe"] = teacher_recipe
    state["bundled_seed"] = bundled_seed(unseen, whole)
    return state


# --------------------------------------------------------------------------------------------
# The run


def declaration() -> dict:
    """What the pilot runs, from :mod:`course_utils.models`, for the report."""
    return {"split": models.PILOT_SPLIT, "parts": list(models.PILOT_PARTS), "models": list(models.PILOT_MODELS),
            "seeds": {k: list(v) for k, v in models.PILOT_SEEDS.items()},
            "fine_tuning_seeds": list(models.PILOT_FINE_TUNING_SEEDS),
            "changes": [{"name": c.name, "pretraining": c.pretraining, "fine_tuning": c.fine_tuning}
                        for c in models.PILOT_CHANGES],
            "plateau_rule": models.PLATEAU_RULE, "level": models.PILOT_LEVEL}


def _load(path: Path, scale: dict | None) -> dict:
    if path.exists():
        report = json.loads(path.read_text())
        if report.get("scale") == (scale or {}) and report.get("declaration") == declaration():
            return report
    return {"declaration": declaration(), "scale": scale or {}, "jobs": {}, "job_seconds": {}}


def _write(path: Path, report: dict) -> None:
    """``report`` into ``path`` at once: a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(report, indent=1, default=str) + "\n")
    temporary.replace(path)


def _public(state: dict) -> dict:
    """``state`` without its ``next`` (recipes and seeds to run), for the report."""
    return {k: v for k, v in state.items() if k != "next"}


def run_pilot(path: Path = REPORT, models_folder: Path = MODELS, scale: dict | None = None, pool_factory=None,
              progress: bool = True) -> dict:
    """Run the pilot to its end (or resume it), writing ``path`` as each job ends; the report.

    ``scale``: :data:`TINY` for a test (None: the declared pilot); ``pool_factory``: the worker pool
    (:func:`course_utils.authoring.jobs.worker_pool` by default)."""
    from tqdm.auto import tqdm

    path, models_folder = Path(path), Path(models_folder)
    report = _load(path, scale)
    report["machine"] = rebuild.machine()
    start = time.perf_counter()
    while True:
        state = decide(report["jobs"])
        report["state"] = _public(state)
        _write(path, report)
        if state["next"] is None:
            break
        recipe, seeds = state["next"]
        # a pre-training whose model is gone (make clean) runs again: its fine-tunings load it
        done = {name for name, result in report["jobs"].items()
                if "fine_tuning_seed" in result or (_folder(models_folder, name, scale) / "config.json").is_file()}
        planned = phase_jobs(recipe, seeds, models_folder, scale, done=done)
        if not planned:  # every job there, yet the rule cannot read them: never loop on it
            raise RuntimeError(f"the pilot's phase {recipe['name']!r} on seeds {list(seeds)} has every job done, "
                               f"yet its results cannot be summarised: check {path}")
        with tqdm(total=len(planned), desc=f"pilot: {recipe['name']}, seeds {list(seeds)}", disable=not progress) as bar:

            def record(job, result, seconds):
                report["jobs"][job.name] = result
                report["job_seconds"][job.name] = seconds
                _write(path, report)
                bar.update(1)
                bar.write(f"{job.name}: {seconds:.0f} s")

            with (pool_factory or job_runner.worker_pool)() as pool:
                job_runner.run(planned, pool, on_done=record)
    report.setdefault("wall_s", {})
    report["wall_s"][time.strftime("%Y-%m-%dT%H:%M:%S")] = time.perf_counter() - start
    _write(path, report)
    return report


def estimate() -> dict:
    """The declared time estimate (:data:`course_utils.models.PILOT_SECONDS`) replayed on two workers
    (:func:`course_utils.authoring.jobs.replay`): minutes of one phase of today's recipe, of recipe 1's
    (fine-tuning only), of a phase at the last change's pre-training steps, and the best and worst pilots."""
    seconds = models.PILOT_SECONDS

    def phase(recipe, done=()):
        planned = phase_jobs(recipe, models.PILOT_SEEDS["choosing"], Path("."), None, done)
        factor = recipe["pretraining"]["steps"] / models.PRETRAINING["steps"]
        kinds = {job.name: seconds[f"{job.args[0]} {'pre-training' if job.function is _pretrain else 'fine-tuning'}"]
                 * (factor if job.function is _pretrain else 1) for job in planned}
        return job_runner.replay(planned, kinds) / 60

    today = models.pilot_recipe(())
    shared = {name for name in (pretraining_job(m, today["pretraining"], s) for m in models.PILOT_MODELS
                                for s in models.PILOT_SEEDS["choosing"])}
    shared |= {fine_tuning_job("three-layer", today["pretraining"], today["three_layer_fine_tuning"], s, f)
               for s in models.PILOT_SEEDS["choosing"] for f in models.PILOT_FINE_TUNING_SEEDS}
    minutes = [phase(today), phase(models.pilot_recipe(models.PILOT_CHANGES[:1]), shared)]
    minutes += [phase(models.pilot_recipe(models.PILOT_CHANGES[:k])) for k in range(2, len(models.PILOT_CHANGES) + 1)]
    return {"phases": minutes, "best": 2 * minutes[0], "worst": sum(minutes) + minutes[-1]}


def table(state: dict) -> str:
    """A markdown table of every phase the pilot's ``state`` (its report's) holds: the recipes tried on
    the choosing seeds, then the chosen one's confirmation and its six seeds when measured. Per phase:
    each model's mean accuracy on each part, the difference D (teacher - three-layer, points) with
    Welch's interval over the pre-training seeds, the plateau rule and whether the phase passes; under
    it, the outcome so far."""
    phases = [(f"{t['recipe']}", t) for t in state.get("tried", [])]
    phases += [(f"{state['chosen']}, confirming", state["confirming"])] if state.get("confirming") else []
    phases += [(f"{state['chosen']}, six seeds", state["six_seeds"])] if state.get("six_seeds") else []
    level = f"{models.PILOT_LEVEL:.0%}"
    rows = ["| recipe | seeds | teacher unseen | three-layer unseen | D unseen (Welch " + level + ") "
            "| teacher all | three-layer all | D all (Welch " + level + ") | plateau | passes |",
            "|---|---|---|---|---|---|---|---|---|---|"]

    def d(phase, part):
        low, high = phase["welch"][part]["interval"]
        return f"{100 * phase['difference'][part]:+.1f} ({100 * low:+.1f} to {100 * high:+.1f})"

    for name, phase in phases:
        means = phase["means"]
        rows.append(f"| {name} | {', '.join(map(str, phase['seeds']))} "
                    f"| {means['teacher']['unseen']:.3f} | {means['three-layer']['unseen']:.3f} | {d(phase, 'unseen')} "
                    f"| {means['teacher']['all']:.3f} | {means['three-layer']['all']:.3f} | {d(phase, 'all')} "
                    f"| {'yes' if phase['plateau'] else 'no'} | {'yes' if phase['passes'] else 'no'} |")
    if state.get("outcome"):
        rows.append(f"\nOutcome: {state['outcome']}; the bundled teacher's pre-training seed: {state['bundled_seed']}.")
    else:
        rows.append(f"\nNot over: chosen {state.get('chosen') or 'nothing yet'}; `make pilot` resumes.")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_utils.authoring.pilot",
                                     description="make pilot: issue 58's teacher pilot, on the validation split only "
                                                 "(declared in course_utils.models, PILOT_*); resumable job by job.")
    parser.add_argument("--estimate", action="store_true", help="print the declared time estimate and exit")
    parser.add_argument("--table", action="store_true",
                        help="print the committed report's phases as a markdown table (nothing runs) and exit")
    args = parser.parse_args(argv)
    if args.estimate:
        print(json.dumps(estimate(), indent=1))
        return 0
    if args.table:
        if not REPORT.is_file():
            print(f"no pilot report at {REPORT}: run `make pilot`")
            return 1
        print(table(json.loads(REPORT.read_text(encoding="utf-8"))["state"]))
        return 0
    require_checkout()
    report = run_pilot()
    state = report["state"]
    print(f"outcome: {state['outcome']}; recipes tried: {[t['recipe'] for t in state['tried']]}; "
          f"bundled teacher's pre-training seed: {state['bundled_seed']} ({REPORT})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
