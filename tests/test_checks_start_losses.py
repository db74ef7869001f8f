"""Tests of the checker of lesson 07's layer-choice exercise: check_start_losses.

Every correct version passes (the model's own loss, the cross-entropy by hand, values as 0-d
tensors, a dict comprehension, the teacher's mode put back); each wrong version a learner writes is
rejected with the hint that names its mistake: a student left in train mode, a new mask or another
batch per student, the unmasked ids, every student built from the same layers, the teacher's loss,
losses under the wrong keys or under positions; the stub prints one line; odd answers never crash.
"""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from course_utils import checks, masking, students
from tests.checker_cases import stub as _stub

PASS = "✓ start_losses: all 4 cases pass.\n"


def _loss(student, batch, ids=None):
    _, attention_mask, masked_ids, labels = batch
    out = student(input_ids=masked_ids if ids is None else ids, attention_mask=attention_mask, labels=labels)
    return out.loss


def _model_loss(teacher, choices, batch):
    losses = {}
    for layers in choices:
        student = students.student_from_teacher(teacher, layers)
        student.eval()
        with torch.no_grad():
            losses[tuple(layers)] = _loss(student, batch).item()
    return losses


def _by_hand(teacher, choices, batch):
    _, attention_mask, masked_ids, labels = batch
    losses = {}
    for layers in choices:
        student = students.student_from_teacher(teacher, layers).eval()
        with torch.no_grad():
            logits = student(input_ids=masked_ids, attention_mask=attention_mask).logits  # (B, T, V)
        losses[tuple(layers)] = float(F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100))
    return losses


def _tensors_comprehension(teacher, choices, batch):
    return {tuple(c): _loss(students.student_from_teacher(teacher, c).eval(), batch) for c in choices}


def _teacher_to_eval_first(teacher, choices, batch):
    mode = teacher.training
    teacher.eval()  # the students inherit eval mode
    try:
        return {tuple(c): _loss(students.student_from_teacher(teacher, c), batch).detach() for c in choices}
    finally:
        teacher.train(mode)


CORRECT = {
    "the model's own loss": _model_loss,
    "cross-entropy by hand": _by_hand,
    "0-d tensors in a comprehension": _tensors_comprehension,
    "teacher put in eval mode, then back": _teacher_to_eval_first,
    "the package's reference": students.start_losses,
}


@pytest.mark.parametrize("implementation", CORRECT.values(), ids=CORRECT.keys())
def test_check_start_losses_accepts_correct_implementations(implementation, capsys):
    assert checks.check_start_losses(implementation) is None
    assert capsys.readouterr().out == PASS


def _train_mode(teacher, choices, batch):
    return {tuple(c): _loss(students.student_from_teacher(teacher, c), batch).item() for c in choices}


def _explicit_train(teacher, choices, batch):
    return {tuple(c): _loss(students.student_from_teacher(teacher, c).train(), batch).item() for c in choices}


def _new_mask_per_student(teacher, choices, batch):
    input_ids, attention_mask, _, _ = batch
    losses = {}
    for k, layers in enumerate(choices):
        generator = torch.Generator().manual_seed(k)  # a mask of its own for each student
        masked, labels = masking.mlm_mask(input_ids, input_ids >= 5, mask_token_id=4, generator=generator,
                                          vocab_size=teacher.config.vocab_size, select_prob=0.4)  # fmt: skip
        student = students.student_from_teacher(teacher, layers).eval()
        losses[tuple(layers)] = student(input_ids=masked, attention_mask=attention_mask, labels=labels).loss.item()
    return losses


def _other_batch_per_student(teacher, choices, batch):
    _, attention_mask, masked_ids, labels = batch
    losses = {}
    for k, layers in enumerate(choices):
        rows = slice(k % 2, None)  # every other student reads a batch without its first sentence
        student = students.student_from_teacher(teacher, layers).eval()
        out = student(input_ids=masked_ids[rows], attention_mask=attention_mask[rows], labels=labels[rows])
        losses[tuple(layers)] = out.loss.item()
    return losses


def _unmasked_ids(teacher, choices, batch):
    return {tuple(c): _loss(students.student_from_teacher(teacher, c).eval(), batch, ids=batch[0]).item()
            for c in choices}  # fmt: skip


def _same_layers(teacher, choices, batch):
    layers = choices[-1]  # a variable from outside the loop
    return {tuple(c): _loss(students.student_from_teacher(teacher, layers).eval(), batch).item() for c in choices}


def _teachers_loss(teacher, choices, batch):
    teacher.eval()
    return {tuple(c): _loss(teacher, batch).item() for c in choices}


def _sorted_keys(teacher, choices, batch):
    losses = [_loss(students.student_from_teacher(teacher, c).eval(), batch).item() for c in choices]
    return dict(zip(sorted(tuple(c) for c in choices), losses))


def _positions(teacher, choices, batch):
    return {k: _loss(students.student_from_teacher(teacher, c).eval(), batch).item() for k, c in enumerate(choices)}


def _string_keys(teacher, choices, batch):
    return {str(c): _loss(students.student_from_teacher(teacher, c).eval(), batch).item() for c in choices}


def _reversed_layers(teacher, choices, batch):
    return {tuple(c): _loss(students.student_from_teacher(teacher, c[::-1]).eval(), batch).item() for c in choices}


def _without_attention_mask(teacher, choices, batch):
    _, _, masked_ids, labels = batch
    return {tuple(c): students.student_from_teacher(teacher, c).eval()(input_ids=masked_ids, labels=labels).loss.item()
            for c in choices}  # fmt: skip


def _strings_of_numbers(teacher, choices, batch):
    return {key: f"{value:.6f}" for key, value in students.start_losses(teacher, choices, batch).items()}


def _one_element_lists(teacher, choices, batch):
    return {key: [value] for key, value in students.start_losses(teacher, choices, batch).items()}


def _accuracy(teacher, choices, batch):
    _, attention_mask, masked_ids, labels = batch
    result = {}
    for c in choices:
        logits = (
            students.student_from_teacher(teacher, c).eval()(input_ids=masked_ids, attention_mask=attention_mask).logits
        )
        where = labels != -100
        result[tuple(c)] = (logits.argmax(-1)[where] == labels[where]).double().mean().item()
    return result


WRONG = {
    "student left in train mode": (_train_mode, "train mode.*student.eval\\(\\)"),
    "student put in train mode": (_explicit_train, "train mode"),
    "a new mask per student": (_new_mask_per_student, "a new mask or another batch per student"),
    "another batch per student": (_other_batch_per_student, "a new mask or another batch per student"),
    "the unmasked ids": (_unmasked_ids, "plain sight"),
    "every student from the same layers": (_same_layers, "same teacher layers"),
    "the teacher's loss": (_teachers_loss, "the teacher's losses"),
    "losses under sorted keys": (_sorted_keys, "filed under the wrong keys"),
    "keyed by position": (_positions, "not by its position"),
    "keys as strings": (_string_keys, "the keys are"),
    "layers reversed": (_reversed_layers, "increasing order.*as `choices` holds them"),
    "accuracy, not the loss": (_accuracy, "masked-LM loss"),
    "students without the attention mask": (_without_attention_mask, "without the attention mask: pass attention_mask"),
    "strings of numbers": (_strings_of_numbers, r"returned a str; return a float \(loss.item\(\).*under the key"),
    "one-element lists": (_one_element_lists, r"returned a list; return a float \(loss.item\(\).*under the key"),
}


@pytest.mark.parametrize(("implementation", "hint"), WRONG.values(), ids=WRONG.keys())
def test_check_start_losses_rejects_learner_mistakes(implementation, hint, capsys):
    with pytest.raises(AssertionError, match=f"(?s){hint}") as error:
        checks.check_start_losses(implementation)
    assert "on the case" in str(error.value)
    assert all(line.startswith("⚠") for line in capsys.readouterr().out.splitlines())


def test_check_start_losses_on_the_stub_prints_one_line(capsys):
    assert checks.check_start_losses(_stub) is None
    assert capsys.readouterr().out.startswith("○ start_losses: not attempted yet.")


@pytest.mark.parametrize("answer", [None, 1.0, [1.0, 2.0], {"a": "b"}, {(0, 2): "x"}], ids=repr)
def test_check_start_losses_never_crashes_on_odd_answers(answer):
    with pytest.raises(AssertionError):
        checks.check_start_losses(lambda teacher, choices, batch: answer)


def test_start_losses_reference_keeps_the_random_generator_and_refuses_bad_inputs():
    from course_utils.checks.start_losses import START_CASES, _tiny_teacher

    teacher, batch = _tiny_teacher(START_CASES[0][1])
    state = torch.get_rng_state()
    losses = students.start_losses(teacher, [[0, 2], [2, 3]], batch)
    assert torch.equal(state, torch.get_rng_state()) and set(losses) == {(0, 2), (2, 3)}
    assert losses == students.start_losses(teacher, [[0, 2], [2, 3]], batch)  # eval mode: the same every time
    with pytest.raises(ValueError, match="expected batch"):
        students.start_losses(teacher, [[0, 2]], batch[:3])
    with pytest.raises(ValueError, match="at least one choice"):
        students.start_losses(teacher, [], batch)
    with pytest.raises(TypeError, match="expected choices"):
        students.start_losses(teacher, "0,2", batch)
