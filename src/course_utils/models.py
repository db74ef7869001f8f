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
# Three epochs is in BERT's own grid (2, 3 or 4; Devlin et al. 2019, appendix A.3). With two, every
# run left ln 2 after 140 to 300 steps, up to 26% of its 1,150: the step at which a run learns the
# words barely depends on the run's length, so the third epoch is what puts it in the first 20%.
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
# name -> (initialisation, loss weights); the paper's Table 4 ablates the same three things.
STUDENT_RUNS = {
    "distilled": ("teacher layers", {}),
    "no distillation (MLM only)": ("random", {"ce": 0.0, "cos": 0.0}),
    "without L_cos": ("teacher layers", {"cos": 0.0}),
    "without L_ce": ("teacher layers", {"ce": 0.0}),
    "random initialisation": ("random", {}),
}
SEEDED_RUNS = ("distilled", "no distillation (MLM only)")  # run with every seed, to show the spread
# Lesson 08's learning-rate sweep: the bundled student fine-tuned with FINE_TUNING but these peak
# learning rates, for SWEEP_SEEDS (at the recipe's own 5e-4 the sweep's runs are the schedule
# study's "warm-up then linear decay" runs, whose five seeds give the spread between seeds).
LR_SWEEP = (3e-5, 1e-4, 2e-4, 1e-3)
SWEEP_SEEDS = (0,)

# Lesson 08's schedule study: the bundled student fine-tuned with the recipe under two schedules
# of equal total learning rate (the sum of the rate over the steps: peak x steps / 2 for the
# linear decay, rate x steps for the constant one), on one CPU thread (as the lesson runs it, so
# the seed-0 run with warm-up is the lesson's live run). What warm-up alone does is lesson 09's
# experiment (post-LN and pre-LN, with and without it). A third schedule here, decay without
# warm-up, ended at the recipe's accuracy in the report of e228e16 (within 0.15 points, 5 seeds),
# one seed leaving ln 2 at 20% of its steps; it cost about 6 minutes of make assets.
STANDARD_FINE_TUNING = FINE_TUNING
PLATEAU_SEEDS = (0, 1, 2, 3, 4)
PLATEAU_SCHEDULES = {
    "warm-up then linear decay": {},
    "constant learning rate": dict(schedule="constant", warmup=0, lr=FINE_TUNING["lr"] / 2),
}
# Lesson 07's question: what does distillation buy on a task with few labels? LABELLED labelled
# sentences of the task's training set, the others unlabelled text. Each arm fine-tunes the
# distilled student of its seed (the students stage's) with the recipe, for as many steps as one
# epoch over the whole training set, so that every arm has the same steps and the same total
# learning rate; each seed draws its own labelled sentences, head and batch order.
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
