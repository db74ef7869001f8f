"""course_utils.models.train_student: lesson 07's students differ only in initialisation and loss weights."""

from __future__ import annotations

import pytest
import torch
from transformers import BertConfig, BertForMaskedLM, DistilBertForMaskedLM

from course_utils import data, distill, models, students, tokenization, training
from course_utils.authoring import assets


@pytest.fixture(scope="module")
def setting():
    tokenizer = tokenization.load_bundled_tokenizer()
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=6, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    teacher = BertForMaskedLM(config).eval()
    return tokenizer, teacher, training.encode(data.corpus("train")[:64], tokenizer)


@pytest.mark.parametrize("run", list(models.STUDENT_RUNS))
def test_every_run_trains_a_half_depth_student_and_records_its_losses(setting, run):
    tokenizer, teacher, train = setting
    student, history = models.train_student(run, 0, teacher, tokenizer, train, steps=2, progress=False)
    assert student.config.n_layers == models.STUDENT_LAYERS == 3
    assert set(history.losses) >= {"loss", "mlm"} and len(history.losses["loss"]) == 2
    weights = distill._alphas(models.STUDENT_RUNS[run][1])  # the run's loss weights, defaults filled in
    terms = [term for term in ("ce", "mlm", "cos") if weights[term] > 0]
    if terms == ["mlm"]:  # trained by train_mlm: the total is the MLM loss itself
        assert history.losses["loss"] == history.losses["mlm"]
        return
    for step, total in enumerate(history.losses["loss"]):
        weighted = sum(weights[term] * history.losses[term][step] for term in terms)
        assert total == pytest.approx(weighted, rel=1e-5)


def test_mlm_only_student_equals_distillation_with_no_teacher_signal(setting):
    """Skipping the teacher's forward pass changes nothing: same batches, masks and losses."""
    tokenizer, teacher, train = setting
    _, direct = models.train_student("no distillation (MLM only)", 0, teacher, tokenizer, train, steps=3,
                                     progress=False)
    torch.manual_seed(0)
    student = DistilBertForMaskedLM(students.student_config(teacher, models.STUDENT_LAYERS))
    settings = dict(models.DISTILLATION, steps=3)
    through = distill.distil(student, teacher, train, tokenizer, alphas={"ce": 0.0, "cos": 0.0}, seed=0,
                             progress=False, **settings)
    assert direct.losses["mlm"] == pytest.approx(through.losses["mlm"], rel=1e-6)


def test_teacher_initialised_students_start_from_the_teacher_layers(setting):
    tokenizer, teacher, train = setting
    student, _ = models.train_student("distilled", 0, teacher, tokenizer, train, steps=1, progress=False)
    random_student, _ = models.train_student("random initialisation, triple loss", 0, teacher, tokenizer, train,
                                             steps=1, progress=False)
    word = teacher.bert.embeddings.word_embeddings.weight
    near = (student.distilbert.embeddings.word_embeddings.weight - word).abs().max()
    far = (random_student.distilbert.embeddings.word_embeddings.weight - word).abs().max()
    assert near < far


def test_the_students_are_the_2_by_2_of_initialisation_and_loss():
    """Each corner once: the teacher's layers or random weights x the triple loss or the MLM loss alone."""
    corners = list(models.STUDENT_GRID.values())
    assert sorted(corners) == sorted((i, loss) for i in models.STUDENT_INITIALISATIONS for loss in models.STUDENT_LOSSES)
    assert models.STUDENT_GRID["distilled"] == ("teacher layers", "triple loss")
    assert models.STUDENT_GRID["no distillation (MLM only)"] == ("random", "MLM only")
    assert models.SEEDED_RUNS == tuple(models.STUDENT_RUNS) and len(models.STUDENT_SEEDS) == 5
    for run, (initialisation, loss) in models.STUDENT_GRID.items():
        assert models.STUDENT_RUNS[run] == (initialisation, models.STUDENT_LOSSES[loss])
    weights = distill._alphas(models.STUDENT_LOSSES["MLM only"])
    assert weights["ce"] == weights["cos"] == 0 < weights["mlm"]
    # only the random, MLM-only student reads nothing of the trained teacher
    assert [run for run in models.STUDENT_RUNS if not models.needs_teacher(run)] == ["no distillation (MLM only)"]
    with pytest.raises(ValueError, match="expected run to be one of"):
        models.needs_teacher("without L_cos")  # cut: the 2 x 2 replaces the single-seed ablations


def test_the_teacher_layers_mlm_only_student_starts_from_the_teacher_and_skips_its_outputs(setting, monkeypatch):
    tokenizer, teacher, train = setting
    from_teacher, history = models.train_student("teacher layers, MLM only", 0, teacher, tokenizer, train, steps=1,
                                                 progress=False)
    monkeypatch.setattr(distill, "distil", lambda *a, **k: pytest.fail("the MLM-only student read the teacher's outputs"))
    again, _ = models.train_student("teacher layers, MLM only", 0, teacher, tokenizer, train, steps=1, progress=False)
    assert history.losses["loss"] == history.losses["mlm"]
    word = teacher.bert.embeddings.word_embeddings.weight
    assert (from_teacher.distilbert.embeddings.word_embeddings.weight - word).abs().max() < 0.05
    assert torch.equal(again.distilbert.embeddings.word_embeddings.weight,
                       from_teacher.distilbert.embeddings.word_embeddings.weight)


def test_unknown_run_is_named(setting):
    tokenizer, teacher, train = setting
    with pytest.raises(ValueError, match="expected run to be one of"):
        models.train_student("bigger", 0, teacher, tokenizer, train, steps=1)


def test_unknown_stage_is_named():
    with pytest.raises(ValueError, match="expected stages among"):
        assets.rebuild(stages=("everything",))
