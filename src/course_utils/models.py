"""The course's models: the bundled teacher, resolved against the real hub models, and rebuilt by one command.

The teacher is a small BERT (``BertForMaskedLM``, 6 layers, hidden size 128) pre-trained by
masked-language modelling on the course corpus with the course tokenizer, as BERT was pre-trained
on books and Wikipedia (without next-sentence prediction, as RoBERTa and DistilBERT dropped it).
A copy fine-tuned on the corpus's sentiment task is bundled too. Both live in Hugging Face format
(``config.json`` + ``model.safetensors``) under ``course_utils/assets`` and are loaded with
``from_pretrained`` on those folders.

Rebuild everything with ``make assets`` (``python -m course_utils.models --rebuild``): the
tokenizer, the teacher, its sentiment copy, then lesson 07's students, with progress bars, and a
report of their quality written next to them (``assets/report.json``), which lessons read. Each
stage can be rebuilt alone (``--stages teacher-sentiment students``): later stages load the bundled
output of earlier ones, and training is deterministic, so the result is the same.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from . import bundle, data, env, tokenization, training

ASSETS = tokenization.ASSETS
BUNDLED = {
    "teacher": ASSETS / "teacher",  # BertForMaskedLM
    "teacher-sentiment": ASSETS / "teacher-sentiment",  # BertForSequenceClassification
    "student": ASSETS / "student",  # DistilBertForMaskedLM, distilled from the teacher (lesson 07)
    "student-sentiment": ASSETS / "student-sentiment",  # DistilBertForSequenceClassification
}
HUB = {"teacher": "bert-base-uncased", "student": "distilbert-base-uncased"}
REPORT = ASSETS / "report.json"
MODEL_FILES = ("config.json", "model.safetensors")

TEACHER_SIZE = dict(hidden_size=128, num_hidden_layers=6, num_attention_heads=4, intermediate_size=512)
PRETRAINING = dict(steps=2000, batch_size=128, lr=1e-3, warmup=100, seed=0)
# Two epochs: the classifier sits on the 0.693 (chance) plateau for ~350 steps before it finds the
# rule; one epoch (625 steps) leaves a student at 83% and half an epoch at chance.
FINE_TUNING = dict(epochs=2.0, batch_size=64, lr=2e-4, warmup=50, seed=0)
# Lesson 07's experiments: the student keeps one teacher layer out of two (as DistilBERT did).
STUDENT_LAYERS = 3
DISTILLATION = dict(steps=250, batch_size=128, lr=5e-4, warmup=25)
STUDENT_SEEDS = (0, 1, 2)
STUDENT_FINE_TUNING = dict(FINE_TUNING)  # the same recipe as the teacher's, so retention compares like with like
# name -> (initialisation, loss weights); the paper's Table 4 ablates the same three things.
STUDENT_RUNS = {
    "distilled": ("teacher layers", {}),
    "no distillation (MLM only)": ("random", {"ce": 0.0, "cos": 0.0}),
    "without L_cos": ("teacher layers", {"cos": 0.0}),
    "without L_ce": ("teacher layers", {"ce": 0.0}),
    "random initialisation": ("random", {}),
}
SEEDED_RUNS = ("distilled", "no distillation (MLM only)")  # run with every seed, to show the spread
# Lesson 08's learning-rate sweep: the bundled student fine-tuned on sentiment with the recipe of
# STUDENT_FINE_TUNING but these peak learning rates (its own, 2e-4, is the students stage's seed-0 run).
LR_SWEEP = (1e-5, 3e-5, 1e-4, 5e-4, 1e-3)


# Lesson 08's fine-tuning loop: the standard recipe (AdamW with no weight decay on biases and
# LayerNorm weights, warm-up then linear decay, gradients clipped to norm 1), one epoch in batches
# of 32, on one CPU thread (as the lesson runs it, so its seed-0 run is the lesson's live run).
STANDARD_FINE_TUNING = dict(STUDENT_FINE_TUNING, epochs=1.0, batch_size=32, weight_decay=0.01, decay="matrices")
PLATEAU_SEEDS = (0, 1, 2, 3, 4)
PLATEAU_SCHEDULES = {
    "warm-up then linear decay": {},
    "constant learning rate": dict(schedule="constant", warmup=0),
}
# Lesson 07's question: does distillation help on the task? With few labels, three ways to make
# the classifier, each from a same-size student: pre-trained by MLM alone, distilled (general
# distillation), distilled and then fine-tuned against the fine-tuned teacher's soft labels too
# (task-specific distillation, the paper's section 4.2). Each seed draws its own labelled sentences,
# head and batch order; every run takes the same number of steps, at the learning rate lesson 08's
# sweep chooses on the validation split.
LABELLED = (500, 2000)
TASK_SEEDS = (0, 1, 2, 3, 4)
TASK_FINE_TUNING = dict(STANDARD_FINE_TUNING, batch_size=32, lr=5e-4, warmup=80, steps=800)
TASK_DISTILLATION = dict(alpha=0.5, temperature=2.0)
TASK_METHODS = ("no distillation", "general distillation", "general + task-specific")


def teacher_config(tokenizer):
    """The teacher's ``BertConfig``: BERT's architecture at 1/6 of BERT-base's width."""
    from transformers import BertConfig

    return BertConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=tokenization.MAX_LENGTH,
        type_vocab_size=2,
        pad_token_id=tokenizer.pad_token_id,
        hidden_act="gelu",
        **TEACHER_SIZE,
    )


def _model_class(name: str):
    from transformers import (
        BertForMaskedLM,
        BertForSequenceClassification,
        DistilBertForMaskedLM,
        DistilBertForSequenceClassification,
    )

    return {
        "teacher": BertForMaskedLM,
        "teacher-sentiment": BertForSequenceClassification,
        "student": DistilBertForMaskedLM,
        "student-sentiment": DistilBertForSequenceClassification,
    }[name]


def load_bundled(name: str = "teacher", *, model_class=None, **kwargs):
    """A bundled model by name, with ``from_pretrained`` on its folder (extra ``kwargs`` passed on).

    ``model_class`` loads the folder into another class than its own, as practitioners put a task
    head on a pre-trained encoder: ``load_bundled("student", model_class=DistilBertForTokenClassification,
    num_labels=12)``. The head's weights are then new (random); ``transformers`` would log a load
    report about them, which is silenced here: pass ``output_loading_info=True`` to get
    ``(model, info)`` and read ``info["missing_keys"]`` and ``info["unexpected_keys"]`` instead.
    """
    if name not in BUNDLED:
        raise ValueError(f"expected one of the bundled models {sorted(BUNDLED)}, got {name!r}")
    folder = BUNDLED[name]
    bundle.verify(folder, MODEL_FILES)  # missing, truncated or damaged: one error naming the file and the fix
    if model_class is not None and not hasattr(model_class, "from_pretrained"):
        raise TypeError(f"expected model_class to be a transformers model class, got {model_class!r}")
    from transformers.utils import logging as hf_logging

    shown, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()  # loading a few MB from disk is instant: no "Loading weights" bar
    if model_class is not None:
        hf_logging.set_verbosity_error()  # no load report on stderr: output_loading_info=True returns it
    try:
        loaded = (model_class or _model_class(name)).from_pretrained(str(folder), **kwargs)
    finally:
        hf_logging.set_verbosity(verbosity)
        if shown:
            hf_logging.enable_progress_bar()
    if isinstance(loaded, tuple):  # output_loading_info=True
        return loaded[0].eval(), loaded[1]
    return loaded.eval()


def load_model(name: str = "teacher", *, prefer: str = "hub", attn_implementation: str = "eager", verbose: bool = True):
    """The model a lesson should use, and a one-line notice saying which one it is.

    ``"teacher"``: the real ``bert-base-uncased`` (``BertForMaskedLM``) when the hub is reachable
    and ``prefer="hub"``, else the bundled course teacher. ``"teacher-sentiment"``: always the
    bundled one. Attention is ``"eager"`` by default, so that ``output_attentions=True`` returns
    the weights (transformers' default SDPA path returns none).
    """
    if prefer not in ("hub", "bundled"):
        raise ValueError(f"expected prefer='hub' or prefer='bundled', got {prefer!r}")
    if name not in BUNDLED:
        raise ValueError(f"expected one of {sorted(BUNDLED)}, got {name!r}")
    status = env.hub_status() if prefer == "hub" and name in HUB else "bundled"
    if status == "reachable":
        try:
            model = _model_class(name).from_pretrained(HUB[name], attn_implementation=attn_implementation)
        except OSError as error:
            if verbose:
                print(f"Could not load {HUB[name]} from the hub ({type(error).__name__}); using the course's {name}.")
        else:
            if verbose:
                print(f"Using the real {HUB[name]} from the Hugging Face hub.")
            return model.eval()
    model = load_bundled(name, attn_implementation=attn_implementation)
    if verbose:
        n = sum(p.numel() for p in model.parameters())
        reason = "hub unreachable" if status == "unreachable" else status
        print(f"Using the course's {name} ({n:,} parameters; {reason}).")
    return model


def load_teacher(**kwargs):
    """:func:`load_model` of ``"teacher"``."""
    return load_model("teacher", **kwargs)


def report() -> dict:
    """The quality numbers measured when the bundled models were built (``assets/report.json``)."""
    bundle.verify(REPORT.parent, [REPORT.name])
    return json.loads(REPORT.read_text())


def _save(model, folder: Path) -> None:
    """``config.json`` and ``model.safetensors`` of ``model`` into ``folder``, deleting nothing there
    (:func:`course_utils.bundle.save_files`); their sha256 is recorded when ``folder`` is bundled."""
    bundle.save_files(model.save_pretrained, folder, MODEL_FILES, what=f"the {type(model).__name__}")


STAGES = ("tokenizer", "teacher", "teacher-sentiment", "students", "sweep", "plateau", "task-distillation")


def rebuild(stages=STAGES, progress: bool = True) -> dict:
    """Rebuild the bundled assets, stage by stage; write and return their report (``assets/report.json``).

    ``"tokenizer"``: the WordPiece tokenizer. ``"teacher"``: MLM pre-training. ``"teacher-sentiment"``:
    the teacher fine-tuned on sentiment. ``"students"``: lesson 07's students (distilled, trained without distillation, ablations),
    each fine-tuned on sentiment; the distilled student of seed 0 and its sentiment copy are bundled.
    ``"sweep"``: lesson 08's learning-rate sweep, the bundled student fine-tuned at :data:`LR_SWEEP`.
    ``"plateau"``: lesson 08's standard recipe for :data:`PLATEAU_SEEDS`, with and without its schedule.
    ``"task-distillation"``: lesson 07's few-label experiment (:data:`LABELLED`, :data:`TASK_METHODS`).
    """
    unknown = set(stages) - set(STAGES)
    if unknown:
        raise ValueError(f"expected stages among {STAGES}, got {sorted(unknown)}")
    result = json.loads(REPORT.read_text()) if REPORT.exists() else {}
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
            built = build(tokenizer, splits, progress)
            if key is None:
                result.update(built)
            else:
                result[key] = built
            result["timings_s"][stage] = time.perf_counter() - start
    import torch

    result["torch_threads"] = torch.get_num_threads()
    REPORT.write_text(json.dumps(result, indent=1) + "\n")
    bundle.record([REPORT])
    return result


def _build_teacher(tokenizer, splits, progress: bool) -> dict:
    import torch
    from transformers import BertForMaskedLM

    env.seed_everything(PRETRAINING["seed"])
    teacher = BertForMaskedLM(teacher_config(tokenizer))
    history = training.train_mlm(teacher, splits["train"], tokenizer, progress=progress, **PRETRAINING)
    _save(teacher, BUNDLED["teacher"])
    teacher = load_bundled("teacher")
    with torch.inference_mode():
        return {
            "teacher_parameters": sum(p.numel() for p in teacher.parameters()),
            "mlm_accuracy_validation": training.mlm_accuracy(teacher, splits["validation"], tokenizer),
            "mlm_accuracy_test": training.mlm_accuracy(teacher, splits["test"], tokenizer),
            "pretraining": dict(PRETRAINING),
            "mlm_loss_curve": history.losses["mlm"],
        }


def _build_teacher_sentiment(tokenizer, splits, progress: bool) -> dict:
    import torch
    from transformers import BertForSequenceClassification

    env.seed_everything(FINE_TUNING["seed"])
    classifier = BertForSequenceClassification.from_pretrained(str(BUNDLED["teacher"]), num_labels=2)
    fine_tuning = training.train_classifier(
        classifier, splits["train"], tokenizer.pad_token_id, progress=progress, **FINE_TUNING
    )
    _save(classifier, BUNDLED["teacher-sentiment"])
    classifier = load_bundled("teacher-sentiment")
    with torch.inference_mode():
        accuracies = {
            f"sentiment_accuracy_{split}": training.accuracy(classifier, splits[split], tokenizer.pad_token_id)
            for split in ("validation", "test")
        }
    return {  # the bag of words trains a logistic regression: outside inference mode
        **accuracies,
        "bag_of_words_accuracy_test": training.bag_of_words_accuracy(splits["train"], splits["test"], len(tokenizer)),
        "fine_tuning": dict(FINE_TUNING),
        "fine_tuning_loss_curve": fine_tuning.losses["loss"],
    }


def train_student(run: str, seed: int, teacher, tokenizer, train, *, steps: int | None = None, progress: bool = True):
    """One of lesson 07's students: ``(student, history)`` for ``run`` (a key of :data:`STUDENT_RUNS`).

    The same batches and masks for every run with the same seed; only the initialisation and the
    loss weights differ.
    """
    import torch
    from transformers import DistilBertForMaskedLM

    from . import distill, students

    if run not in STUDENT_RUNS:
        raise ValueError(f"expected run to be one of {sorted(STUDENT_RUNS)}, got {run!r}")
    initialisation, alphas = STUDENT_RUNS[run]
    torch.manual_seed(seed)
    if initialisation == "teacher layers":
        layers = students.layer_map(len(teacher.bert.encoder.layer), STUDENT_LAYERS)
        student = students.student_from_teacher(teacher, layers)
    else:
        student = DistilBertForMaskedLM(students.student_config(teacher, STUDENT_LAYERS))
    settings = dict(DISTILLATION, steps=steps or DISTILLATION["steps"])
    if alphas.get("ce") == 0.0 and alphas.get("cos") == 0.0:  # no teacher signal: skip the teacher's forward pass
        history = training.train_mlm(student, train, tokenizer, seed=seed, progress=progress, **settings)
        history.losses = {"loss": history.losses["mlm"], "mlm": history.losses["mlm"]}
    else:
        history = distill.distil(student, teacher, train, tokenizer, alphas=alphas, seed=seed, progress=progress,
                                 **settings)
    return student, history


def _build_students(tokenizer, splits, progress: bool) -> dict:
    import tempfile

    import torch
    from transformers import DistilBertForSequenceClassification

    teacher = load_bundled("teacher")
    runs = []
    for run in STUDENT_RUNS:
        for seed in STUDENT_SEEDS if run in SEEDED_RUNS else STUDENT_SEEDS[:1]:
            student, history = train_student(run, seed, teacher, tokenizer, splits["train"], progress=progress)
            with tempfile.TemporaryDirectory() as folder:
                _save(student, Path(folder))
                torch.manual_seed(seed)
                classifier = DistilBertForSequenceClassification.from_pretrained(folder, num_labels=2)
            fine_tuning = training.train_classifier(classifier, splits["train"], tokenizer.pad_token_id,
                                                    progress=progress, **dict(STUDENT_FINE_TUNING, seed=seed))
            with torch.inference_mode():
                runs.append({
                    "run": run,
                    "seed": seed,
                    "mlm_accuracy_test": training.mlm_accuracy(student.eval(), splits["test"], tokenizer),
                    "sentiment_accuracy_test": training.accuracy(classifier.eval(), splits["test"], tokenizer.pad_token_id),
                    "losses": history.losses,
                    "fine_tuning_loss_curve": fine_tuning.losses["loss"],
                })
            if run == "distilled" and seed == STUDENT_SEEDS[0]:
                _save(student, BUNDLED["student"])
                _save(classifier, BUNDLED["student-sentiment"])
    return {
        "layers": STUDENT_LAYERS,
        "distillation": dict(DISTILLATION),
        "fine_tuning": dict(STUDENT_FINE_TUNING),
        "seeds": list(STUDENT_SEEDS),
        "runs": runs,
    }


def _build_sweep(tokenizer, splits, progress: bool) -> dict:
    import torch
    from transformers import DistilBertForSequenceClassification

    runs = []
    for lr in LR_SWEEP:
        torch.manual_seed(STUDENT_FINE_TUNING["seed"])
        classifier = DistilBertForSequenceClassification.from_pretrained(str(BUNDLED["student"]), num_labels=2)
        history = training.train_classifier(classifier, splits["train"], tokenizer.pad_token_id, progress=progress,
                                            **dict(STUDENT_FINE_TUNING, lr=lr))
        runs.append({
            "lr": lr,
            "sentiment_accuracy_validation": training.accuracy(classifier, splits["validation"], tokenizer.pad_token_id),
            "sentiment_accuracy_test": training.accuracy(classifier, splits["test"], tokenizer.pad_token_id),
            "fine_tuning_loss_curve": history.losses["loss"],
        })
    return {"fine_tuning": dict(STUDENT_FINE_TUNING), "runs": runs}


def _classifier_from(student, seed: int):
    """A ``DistilBertForSequenceClassification`` on ``student``'s encoder, its new head drawn with ``seed``."""
    import tempfile

    import torch
    from transformers import DistilBertForSequenceClassification

    with tempfile.TemporaryDirectory() as folder:
        _save(student, Path(folder))
        torch.manual_seed(seed)
        return DistilBertForSequenceClassification.from_pretrained(folder, num_labels=2)


# Runs that do not depend on one another (one seed, one schedule) are spread over this many worker
# processes, each on one thread: a run gives the same bits in any process (each run seeds itself),
# and on 2 cores two workers take half the time of one.
WORKERS = 2


def _plateau_run(schedule: str, seed: int) -> dict:
    """One run of the plateau stage, in a worker process on one thread: the bundled student
    fine-tuned with lesson 08's recipe under ``schedule`` and ``seed``."""
    import torch

    torch.set_num_threads(1)  # as lesson 08 runs it: the seed-0 run is the lesson's live run, to the bit
    tokenizer = tokenization.load_bundled_tokenizer()
    splits = {s: training.encode(data.corpus(s), tokenizer) for s in ("train", "test")}
    classifier = _classifier_from(load_bundled("student"), seed)
    history = training.train_classifier(classifier, splits["train"], tokenizer.pad_token_id, progress=False,
                                        **dict(STANDARD_FINE_TUNING, seed=seed, **PLATEAU_SCHEDULES[schedule]))
    return {
        "schedule": schedule,
        "seed": seed,
        "sentiment_accuracy_test": training.accuracy(classifier, splits["test"], tokenizer.pad_token_id),
        "fine_tuning_loss_curve": history.losses["loss"],
    }


def _in_workers(run, jobs: list[tuple], workers: int = WORKERS) -> list:
    """``[run(*job) for job in jobs]``, computed by ``workers`` fresh processes (spawned, so that no
    state of this process, such as its torch threads or random generators, reaches them)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(run, *zip(*jobs)))


def _build_plateau(tokenizer, splits, progress: bool) -> dict:
    import torch
    import transformers

    jobs = [(schedule, seed) for schedule in PLATEAU_SCHEDULES for seed in PLATEAU_SEEDS]
    runs = _in_workers(_plateau_run, jobs)
    versions = {"torch": torch.__version__, "transformers": transformers.__version__}  # same stack, same bits
    return {"fine_tuning": dict(STANDARD_FINE_TUNING), "schedules": PLATEAU_SCHEDULES, "threads": 1,
            "workers": WORKERS, "versions": versions, "runs": runs}


def _build_task_distillation(tokenizer, splits, progress: bool) -> dict:
    """Lesson 07's few-label experiment: the MLM-only student is trained here (one thread), then the
    runs (labelled sentences x seeds x methods), which do not depend on one another, in workers."""
    import tempfile

    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small batches: one thread is as fast, and several fight on a busy CPU
    try:
        mlm_only, _ = train_student("no distillation (MLM only)", 0, load_bundled("teacher"), tokenizer,
                                    splits["train"], progress=progress)
        with torch.inference_mode():
            teacher_accuracy = training.accuracy(load_bundled("teacher-sentiment"), splits["test"],
                                                 tokenizer.pad_token_id)
    finally:
        torch.set_num_threads(threads)
    with tempfile.TemporaryDirectory() as folder:
        _save(mlm_only, Path(folder))
        jobs = [(n, seed, method, folder) for n in LABELLED for seed in TASK_SEEDS for method in TASK_METHODS]
        runs = _in_workers(_task_distillation_run, jobs)
    return {
        "fine_tuning": dict(TASK_FINE_TUNING),
        "distillation": dict(TASK_DISTILLATION),
        "teacher_accuracy_test": teacher_accuracy,
        "threads": 1,
        "workers": WORKERS,
        "runs": runs,
    }


def _task_distillation_run(labelled: int, seed: int, method: str, mlm_only_folder: str) -> dict:
    """One run of the few-label experiment, in a worker process on one thread: a student (the MLM-only
    one saved in ``mlm_only_folder``, or the bundled distilled one) fine-tuned on ``labelled``
    sentences drawn with ``seed``, with the fine-tuned teacher's soft labels when ``method`` says so."""
    import torch
    from transformers import DistilBertForMaskedLM

    from . import distill

    torch.set_num_threads(1)
    tokenizer = tokenization.load_bundled_tokenizer()
    pad_id = tokenizer.pad_token_id
    splits = {s: training.encode(data.corpus(s), tokenizer) for s in ("train", "test")}
    sentences = training.subset(splits["train"], labelled, seed)
    objective = None
    if method.endswith("task-specific"):
        teacher = load_bundled("teacher-sentiment")
        with torch.inference_mode():  # the fine-tuned teacher's soft labels for these sentences
            soft = torch.cat([teacher(input_ids=ids, attention_mask=mask).logits for ids, mask in
                              (training.pad(sentences.ids[i:i + 256], pad_id) for i in range(0, labelled, 256))])
        objective = distill.task_objective(soft, **TASK_DISTILLATION)
    if method == "no distillation":
        student = DistilBertForMaskedLM.from_pretrained(mlm_only_folder)
    else:
        student = load_bundled("student")
    classifier = _classifier_from(student, seed)
    settings = {k: v for k, v in TASK_FINE_TUNING.items() if k != "epochs"}
    training.train_classifier(classifier, sentences, pad_id, progress=False, objective=objective,
                              **dict(settings, seed=seed))
    return {
        "labelled": labelled,
        "method": method,
        "seed": seed,
        "sentiment_accuracy_test": training.accuracy(classifier, splits["test"], pad_id),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_utils.models", description=__doc__.split("\n")[0])
    parser.add_argument("--rebuild", action="store_true", help="retrain the bundled tokenizer and models")
    parser.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES), help="what to rebuild (default: all)")
    args = parser.parse_args(argv)
    if not args.rebuild:
        parser.print_help()
        return 0
    start = time.perf_counter()
    result = rebuild(args.stages)
    keys = [k for k in result if k.endswith("accuracy_test") or k.endswith("parameters")]
    for key in keys:
        print(f"{key}: {result[key]:.4f}" if isinstance(result[key], float) else f"{key}: {result[key]:,}")
    print(f"rebuilt the bundled assets in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
