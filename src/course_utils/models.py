"""The course's models: the bundled teacher, resolved against the real hub models, and rebuilt by one command.

The teacher is a small BERT (``BertForMaskedLM``, 6 layers, hidden size 128) pre-trained by
masked-language modelling on the course corpus with the course tokenizer, as BERT was pre-trained
on books and Wikipedia (without next-sentence prediction, as RoBERTa and DistilBERT dropped it).
A copy fine-tuned on the sentiment task (:func:`course_utils.data.sentiment_task`) is bundled too. Both live in Hugging Face format
(``config.json`` + ``model.safetensors``) under ``course_utils/assets`` and are loaded with
``from_pretrained`` on those folders.

The recipes of every bundled model and experiment are here (``PRETRAINING``, ``FINE_TUNING``,
``DISTILLATION``, ...), and :func:`train_student` trains one of lesson 07's students. ``make
assets`` (:mod:`course_utils.authoring.assets`) rebuilds everything from them and writes the
report of their quality (``assets/report.json``) that lessons read through :func:`report`.
"""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path

from . import bundle, env, tokenization, training

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
# Batches of sentences of similar lengths (training.batch_order), here and in every recipe below.
PRETRAINING = dict(steps=2000, batch_size=128, lr=1e-3, warmup=100, group_by_length=True, seed=0)
# The course's fine-tuning recipe, for the teacher and every student (lesson 08 teaches it): AdamW
# with no weight decay on biases and LayerNorm weights, warm-up then linear decay, gradients
# clipped to norm 1; three epochs of the sentiment task (data.sentiment_task) in batches of 32, at a
# peak rate of 5e-4 (small BERTs take larger rates than BERT-base's 2e-5 to 5e-5; lesson 08's sweep).
# Three epochs is in BERT's own grid (2, 3 or 4; Devlin et al. 2019, appendix A.3). On the task
# before its held-out words (18,393 labelled sentences), with two epochs every run left ln 2 after
# 140 to 300 steps, up to 26% of its 1,150: the step at which a run learns the words barely depends
# on the run's length, so the third epoch put it in the first 20%. The labelled pool is now about
# 5,700 sentences (three epochs: about 540 steps), hence PLATEAU_RULE's floor of 350 steps.
# Batches group sentences of similar lengths (Hugging Face's group_by_length): random batches of 32
# pad to about 26 tokens for a sentence's mean of 14, grouped ones to about 17 (make bench times both).
FINE_TUNING = dict(epochs=3.0, batch_size=32, lr=5e-4, warmup=50, weight_decay=0.01, decay="matrices",
                   group_by_length=True, seed=0)
TEACHER_SEEDS = (0, 1, 2, 3, 4)  # the teacher fine-tuned with each: the bundled teacher-sentiment is seed 0's
# Lesson 07's experiments: the student keeps one teacher layer out of two (as DistilBERT did).
STUDENT_LAYERS = 3
DISTILLATION = dict(steps=250, batch_size=128, lr=5e-4, warmup=25, group_by_length=True)
STUDENT_SEEDS = (0, 1, 2, 3, 4)
STUDENT_FINE_TUNING = FINE_TUNING  # the teacher's recipe, so that retention compares like with like
# Lesson 07's students are a 2 x 2: initialisation (the teacher's layers, one of two, or random
# weights) x loss (the triple loss of the paper, or the masked-LM loss alone), every run with every
# seed of STUDENT_SEEDS, so that each factor is compared seed by seed with the other held fixed.
# The old comparison "distilled" against "no distillation" changed both at once, and its gap was
# mostly the initialisation (issue 40). The single-seed ablations "without L_cos" and "without
# L_ce" (the paper's Table 4) are cut: one seed each could not tell their gaps (0.3 to 0.75 points)
# from the seeds' spread, and the 2 x 2 answers the question a learner asks of them (what do the
# teacher's outputs add beyond its layers?) with five seeds, in the time they took.
STUDENT_INITIALISATIONS = ("teacher layers", "random")
STUDENT_LOSSES = {"triple loss": {}, "MLM only": {"ce": 0.0, "cos": 0.0}}  # loss weights (distill.distil's alphas)
# name -> (initialisation, loss): the four corners
STUDENT_GRID = {
    "distilled": ("teacher layers", "triple loss"),
    "teacher layers, MLM only": ("teacher layers", "MLM only"),
    "random initialisation, triple loss": ("random", "triple loss"),
    "no distillation (MLM only)": ("random", "MLM only"),
}
# name -> (initialisation, loss weights), what train_student reads
STUDENT_RUNS = {name: (initialisation, STUDENT_LOSSES[loss]) for name, (initialisation, loss) in STUDENT_GRID.items()}
SEEDED_RUNS = tuple(STUDENT_RUNS)  # every run, with every seed


def needs_teacher(run: str) -> bool:
    """Whether student ``run`` (a key of :data:`STUDENT_RUNS`) reads the trained teacher: its layers
    or its outputs. The others read only its sizes, so they train beside its pre-training."""
    if run not in STUDENT_RUNS:
        raise ValueError(f"expected run to be one of {sorted(STUDENT_RUNS)}, got {run!r}")
    initialisation, loss = STUDENT_GRID[run]
    return initialisation == "teacher layers" or loss != "MLM only"


# Every fine-tuning run of the recipe (the teacher's, the main students') leaves ln 2 (its smoothed
# loss falls below training.PLATEAU_EXIT: it has learned more than the label's prior) within the
# first 20% of its steps or its first 350 steps, whichever is larger (issue 40). With a labelled
# pool of about 5,700 sentences, three epochs are about 540 steps, and 20% of them too few for the
# head to find the words: the 350 steps are the floor.
PLATEAU_SHARE = 0.2
PLATEAU_FLOOR = 350
PLATEAU_RULE = (f"every fine-tuning run of the teacher and of the main students leaves ln 2 within the first "
                f"{PLATEAU_SHARE:.0%} of its steps or its first {PLATEAU_FLOOR} steps, whichever is larger")


def plateau_limit(steps: int) -> int:
    """The last step at which a fine-tuning run of ``steps`` steps may leave ln 2 (:data:`PLATEAU_RULE`):
    ``max(ceil(0.2 * steps), 350)``."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"expected a run's number of steps, a positive int, got {steps!r}")
    return max(math.ceil(PLATEAU_SHARE * steps), PLATEAU_FLOOR)


# The paper's headline (Sanh et al. 2019, Table 1): DistilBERT's GLUE macro-score 77.0 against
# BERT-base's 79.5, "97% of BERT's language understanding".
PAPER_GLUE = {"BERT-base": 79.5, "DistilBERT": 77.0}
PAPER_RETENTION = PAPER_GLUE["DistilBERT"] / PAPER_GLUE["BERT-base"]  # 0.969

# Lesson 08's learning-rate sweep: the bundled student fine-tuned with FINE_TUNING but these peak
# learning rates, for SWEEP_SEEDS (at the recipe's own 5e-4 the sweep's runs are the schedule
# study's "warm-up then linear decay" runs, whose five seeds give the spread between seeds).
LR_SWEEP = (3e-5, 1e-4, 2e-4, 1e-3)
SWEEP_SEEDS = (0,)

# Lesson 08's schedule study: the bundled student fine-tuned with the recipe (warm-up then linear
# decay) for PLATEAU_SEEDS, on one CPU thread (as the lesson runs it, so the seed-0 run is the
# lesson's live run), its accuracy on each kind of test sentence measured along the way. What
# warm-up alone does is lesson 09's experiment (post-LN and pre-LN, with and without it). Cut, with
# their reasons: decay without warm-up ended at the recipe's accuracy in the report of e228e16
# (within 0.15 points, 5 seeds), one seed leaving ln 2 at 20% of its steps, for about 6 minutes of
# make assets; a constant learning rate of the same total (half the peak, no warm-up) ended within
# 0.1 points of the recipe on each of 5 seeds and left ln 2 at steps 188-230 (the recipe's 160-231)
# in the report of 3cece9a, for about 5 minutes of worker time (issue 40): a schedule that changes
# nothing teaches nothing lesson 08 states, and the time went to lesson 07's 2 x 2.
STANDARD_FINE_TUNING = FINE_TUNING
PLATEAU_SEEDS = (0, 1, 2, 3, 4)
PLATEAU_SCHEDULES = {
    "warm-up then linear decay": {},
}
# Lesson 07's question: what does distillation buy on a task with few labels? LABELLED sentences
# drawn from the labelled pool (data.sentiment_task("train"), no held-out word) keep their labels;
# the rest of the task's training text is unlabelled: the pool's undrawn sentences and the
# sentences holding a held-out word (data.unlabelled_task_text()), which no arm ever sees labelled.
# E is every sentence of the pool with its label. Each arm fine-tunes the distilled student of its
# seed (the students stage's) with the recipe for task_steps() steps: one epoch over the whole
# task text (pool + unlabelled, what arms C and D read, each sentence once), the same for every arm
# so that every arm has the same steps and the same total learning rate. It is not one epoch of
# the pool: since the pool lost its held-out-word sentences (18,393 -> about 5,700), that would
# be about 180 steps, ten epochs of 500 labels; one epoch of the task text is about 540, the
# length of the recipe's three epochs of the pool (so E is near the main runs) and of the old
# experiment's 575. Each seed draws its own labelled sentences, head and batch order.
LABELLED = (500, 2000)
TASK_SEEDS = (0, 1, 2, 3, 4)
TASK_FINE_TUNING = dict(FINE_TUNING, epochs=1.0)
TASK_DISTILLATION = dict(alpha=0.5, temperature=2.0)
TASK_ARMS = {
    "A": "labels only",
    "B": "labels + teacher's soft targets on them",
    "C": "labels + teacher's soft targets on the unlabelled",
    "D": "labels + teacher's hard labels on the unlabelled",
    "E": "all labels",
}
FEW_LABEL_TEACHER = "teacher fine-tuned on the labels only"


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


@contextlib.contextmanager
def quiet_loading(*, report: bool = False):
    """Within: transformers shows no progress bar (saving or loading a few MB from disk is instant)
    and, unless ``report``, no load report (the "MISSING" table of a new task head's weights)."""
    from transformers.utils import logging as hf_logging

    shown, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    if not report:
        hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if shown:
            hf_logging.enable_progress_bar()


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
    # no load report on stderr when a new head is asked for: output_loading_info=True returns it
    with quiet_loading(report=model_class is None):
        loaded = (model_class or _model_class(name)).from_pretrained(str(folder), **kwargs)
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


def save(model, folder: Path) -> None:
    """``config.json`` and ``model.safetensors`` of ``model`` into ``folder``, deleting nothing there
    (:func:`course_utils.bundle.save_files`); their sha256 is recorded when ``folder`` is bundled."""
    bundle.save_files(model.save_pretrained, folder, MODEL_FILES, what=f"the {type(model).__name__}")


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


def retention(report: dict | None = None, run: str = "distilled") -> dict:
    """What each student of ``run`` (a key of :data:`STUDENT_RUNS`) keeps of the teacher fine-tuned
    with its seed, on the whole test set and on each slice (:data:`course_utils.data.SLICES`).

    ``report``: the report's dict (:func:`report`, the bundled one when ``None``), with
    ``teacher_fine_tuning_runs`` and ``students["runs"]`` (each run's ``seed``,
    ``sentiment_accuracy_test`` and ``accuracy_by_slice_test``) and ``slices["test"]`` (the majority
    class's share of the whole test set, ``majority``, and of each slice). Returns
    ``{"all": Retention, "seen": Retention, "mixed": Retention, "unseen": Retention}``
    (:class:`course_utils.stats.Retention`: per seed, in the order of :data:`STUDENT_SEEDS`, the plain
    ratio and the ratio above the majority class, with their means and spreads), to compare with
    :data:`PAPER_RETENTION`.
    """
    from . import data, stats

    report = globals()["report"]() if report is None else report  # the function report(), which the argument hides
    if not isinstance(report, dict):
        raise TypeError(f"expected the report's dict (models.report()), got {type(report).__name__}")
    if run not in STUDENT_RUNS:
        raise ValueError(f"expected run to be one of {sorted(STUDENT_RUNS)}, got {run!r}")
    missing = [key for key in ("teacher_fine_tuning_runs", "students", "slices") if key not in report]
    if missing:
        raise KeyError(f"expected a report with {missing} (rebuild it with make assets)")
    students = {r["seed"]: r for r in report["students"]["runs"] if r["run"] == run}
    teachers = {r["seed"]: r for r in report["teacher_fine_tuning_runs"]}
    seeds = [seed for seed in STUDENT_SEEDS if seed in students]
    if not seeds or any(seed not in teachers for seed in seeds):
        raise ValueError(f"expected the teacher fine-tuned with each seed of the students {run!r} "
                         f"(seeds {sorted(students)}), got teachers of seeds {sorted(teachers)}")
    test = report["slices"]["test"]

    def accuracy(entry, part):
        return entry["sentiment_accuracy_test"] if part == "all" else entry["accuracy_by_slice_test"][part]

    return {part: stats.retention([accuracy(students[s], part) for s in seeds],
                                  [accuracy(teachers[s], part) for s in seeds],
                                  test["majority"] if part == "all" else test["slices"][part]["majority"], seeds)
            for part in ("all", *data.SLICES)}
