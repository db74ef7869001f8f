"""Tests of the checker of lesson 07's distillation step: check_distillation_step.

Every correct version passes (the package's reference, the three terms written out by hand with
F.kl_div / F.cross_entropy / F.cosine_similarity, zero_grad last, a TripleLoss or a dict of
tensors returned); each wrong version a learner writes is rejected with the hint that names its
mistake; the stub prints one line; the cases are ones where each mistake shows.
"""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from course_utils import checks, distill
from course_utils.checks import distillation_step as distill_checks
from tests.checker_cases import rejects as _rejects
from tests.checker_cases import stub as _stub

PASS = "✓ distillation_step: all 3 cases pass.\n"


def _step(*, teacher_eval=True, no_grad=True, student_train=True, read="masked", teacher_reads="the same",
          student_mask=True, ce="right", cos="right", total="weighted", backward="total", clip=True,
          zero_grad="first", set_to_none=True, steps=1, returned="dict"):  # fmt: skip
    """A distillation_step written out by hand, with one mistake switched on."""

    def distillation_step(teacher, student, batch, optimizer, alphas, temperature, max_norm):
        input_ids, attention_mask, masked_ids, labels = batch
        ids = masked_ids if read == "masked" else input_ids
        teacher_ids = input_ids if teacher_reads == "unmasked" else ids
        if teacher_eval:
            teacher.eval()
        if student_train:
            student.train()
        T = temperature
        if no_grad:
            with torch.no_grad():
                t = teacher(input_ids=teacher_ids, attention_mask=attention_mask, output_hidden_states=True)
        else:
            t = teacher(input_ids=teacher_ids, attention_mask=attention_mask, output_hidden_states=True)
        if student_mask:
            s = student(input_ids=ids, attention_mask=attention_mask, output_hidden_states=True)
        else:
            s = student(input_ids=ids, output_hidden_states=True)
        real = attention_mask.bool()
        rows = (labels != -100) if ce == "masked only" else real
        s_logits, t_logits = s.logits[rows], t.logits[rows]  # (N, V)
        if ce == "right" or ce == "masked only":
            l_ce = F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1), reduction="batchmean") * T**2
        elif ce == "T squared twice":
            l_ce = F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1), reduction="batchmean") * T**2
            l_ce = l_ce * T**2
        elif ce == "mean over all entries":
            l_ce = F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1), reduction="mean") * T**2
        elif ce == "no T squared":
            l_ce = F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1), reduction="batchmean")
        elif ce == "teacher only softened":
            l_ce = F.kl_div(F.log_softmax(s_logits, -1), F.softmax(t_logits / T, -1), reduction="batchmean") * T**2
        elif ce == "no temperature":
            l_ce = F.kl_div(F.log_softmax(s_logits, -1), F.softmax(t_logits, -1), reduction="batchmean")
        elif ce == "reversed":
            l_ce = F.kl_div(F.log_softmax(t_logits / T, -1), F.softmax(s_logits / T, -1), reduction="batchmean") * T**2
        vocab = s.logits.shape[-1]
        l_mlm = F.cross_entropy(s.logits.reshape(-1, vocab), labels.reshape(-1))
        s_hidden, t_hidden = s.hidden_states[-1], t.hidden_states[-1]  # (B, T, D)
        if cos == "padding included":
            similarity = F.cosine_similarity(s_hidden, t_hidden, dim=-1).reshape(-1)
        else:
            similarity = F.cosine_similarity(s_hidden[real], t_hidden[real], dim=-1)
        l_cos = similarity.mean() if cos == "similarity" else (1 - similarity).mean()
        if cos == "sign flipped":
            l_cos = (similarity - 1).mean()
        weighted = alphas["ce"] * l_ce + alphas["mlm"] * l_mlm + alphas["cos"] * l_cos
        plain = l_ce + l_mlm + l_cos
        l_total = weighted if total == "weighted" else plain
        if zero_grad == "first":
            optimizer.zero_grad()
        (l_total if backward == "total" else plain).backward()
        if zero_grad == "between":
            optimizer.zero_grad(set_to_none=set_to_none)
        if clip:
            torch.nn.utils.clip_grad_norm_(student.parameters(), max_norm)
        for _ in range(steps):
            optimizer.step()
        losses = {"total": l_total, "ce": l_ce, "mlm": l_mlm, "cos": l_cos}
        if returned == "list":
            return list(losses.values())
        return {name: value.item() for name, value in losses.items()}

    return distillation_step


def _triple_loss_object(teacher, student, batch, optimizer, alphas, temperature, max_norm):
    """With distill.triple_loss, zero_grad after the step, and the TripleLoss returned."""
    _, attention_mask, masked_ids, labels = batch
    teacher.eval()
    student.train()
    with torch.no_grad():
        t = teacher(input_ids=masked_ids, attention_mask=attention_mask, output_hidden_states=True)
    s = student(input_ids=masked_ids, attention_mask=attention_mask, output_hidden_states=True)
    loss = distill.triple_loss(s.logits, t.logits, s.hidden_states[-1], t.hidden_states[-1], labels,
                               attention_mask, alphas=alphas, temperature=temperature)  # fmt: skip
    loss.total.backward()
    torch.nn.utils.clip_grad_norm_(student.parameters(), max_norm=max_norm)
    optimizer.step()
    optimizer.zero_grad(set_to_none=False)
    return loss


CORRECT = {
    "the package's reference": distill_checks.reference_distillation_step,
    "written out by hand": _step(),
    "distill.triple_loss, zero_grad last, a TripleLoss returned": _triple_loss_object,
}


@pytest.mark.parametrize("implementation", CORRECT.values(), ids=CORRECT.keys())
def test_check_distillation_step_accepts_correct_implementations(implementation, capsys):
    assert checks.check_distillation_step(implementation) is None
    assert capsys.readouterr().out == PASS


WRONG = {
    "teacher not put in eval mode": (_step(teacher_eval=False), "teacher ran in train mode.*teacher.eval\\(\\)"),
    "teacher without no_grad": (_step(no_grad=False), "received gradients.*torch.no_grad\\(\\)"),
    "student not put in train mode": (_step(student_train=False), "student ran in eval mode.*student.train\\(\\)"),
    "the unmasked ids read": (_step(read="unmasked"), "read the original input_ids.*masked_ids"),
    "no T squared": (_step(ce="no T squared"), "lacks the factor T²"),
    "only the teacher softened": (_step(ce="teacher only softened"), "only the teacher's logits are divided by T"),
    "no temperature": (_step(ce="no temperature"), "uses no temperature"),
    "reversed KL": (_step(ce="reversed"), "reversed KL"),
    "L_ce on the masked positions only": (_step(ce="masked only"), "only the masked positions.*every real token"),
    "cosine similarity instead of 1 - cos": (_step(cos="similarity"), "L_cos is the similarity"),
    "L_cos with the padding": (_step(cos="padding included"), "L_cos includes the padding"),
    "unweighted total": (_step(total="plain"), "plain sum of the terms"),
    "unweighted backward": (_step(backward="plain"), "backward on the weighted total"),
    "no clipping": (_step(clip=False), "clip the gradients' norm to max_norm"),
    "no zero_grad": (_step(zero_grad="never"), "call 1 was right.*zero_grad"),
    "zero_grad between backward and step": (
        _step(zero_grad="between"),
        "did not move.*zero_grad\\(\\) between backward and step",
    ),
    "zero_grad(set_to_none=False) between backward and step": (
        _step(zero_grad="between", set_to_none=False),
        "did not move.*zero_grad\\(\\) between backward and step",
    ),
    "the student without the attention mask": (
        _step(student_mask=False),
        "student ran without the attention mask.*attention_mask=",
    ),
    "the teacher fed the unmasked ids": (
        _step(teacher_reads="unmasked"),
        "teacher read the original input_ids.*the student's masked_ids",
    ),
    "T squared applied twice": (_step(ce="T squared twice"), "multiplied by T² twice.*already includes"),
    "KL with mean reduction over all entries": (
        _step(ce="mean over all entries"),
        "reduction='mean'.*every entry.*batchmean",
    ),
    "cosine loss with its sign flipped": (_step(cos="sign flipped"), "sign flipped.*1 − cos.*away from"),
    "two steps": (_step(steps=2), "stepped 2 times.*exactly once"),
    "a list returned": (_step(returned="list"), r"call 1 returned a list; return a dict \{'total'"),
}


@pytest.mark.parametrize("implementation, hint", WRONG.values(), ids=WRONG.keys())
def test_check_distillation_step_names_the_mistake(implementation, hint, capsys):
    _rejects(checks.check_distillation_step, implementation, hint, capsys)


def test_check_distillation_step_stub_and_odd_answers(capsys):
    assert checks.check_distillation_step(_stub) is None
    assert capsys.readouterr().out.startswith("○ distillation_step: not attempted yet.")
    with pytest.raises(AssertionError, match="(?s)raised ValueError.*batch = \\(input_ids"):
        checks.check_distillation_step(lambda teacher, student, batch, *rest: batch[0:2] and int("x"))
    with pytest.raises(TypeError, match="without calling it"):
        checks.check_distillation_step(None)


@pytest.mark.parametrize("name, setting", distill_checks.STEP_CASES, ids=[n for n, _ in distill_checks.STEP_CASES])
def test_every_case_has_masked_positions_and_clipping_shows_where_it_should(name, setting):
    observed = distill_checks.observe_step(distill_checks.reference_distillation_step, setting)
    assert max(observed.off_by) == 0 and all(s == 1 for s in observed.steps)
    assert observed.off_by_variant["unweighted"] > 1e-6
    if setting.max_norm < 1:  # the clipped cases: a step without clipping goes elsewhere
        assert observed.off_by_variant["no clipping"] > 1e-6


def test_distil_is_a_loop_of_distillation_steps():
    """The package's loop and the step give the same losses, step for step (lesson 07 asserts it too)."""
    from course_utils import training
    from tests.test_bad_inputs import SENTENCES, TOKENIZER, tiny_bert, tiny_student

    history = distill.distil(tiny_student(), tiny_bert(), SENTENCES, TOKENIZER, steps=3, batch_size=4, warmup=2,
                             progress=False)  # fmt: skip
    student, teacher = tiny_student(), tiny_bert()
    torch.manual_seed(0)
    optimizer, schedule = training.optimiser(student, steps=3, lr=1e-3, warmup=2, weight_decay=0.01)
    own = []
    for batch in training.mlm_batches(SENTENCES, TOKENIZER, steps=3, batch_size=4, seed=0):
        own.append(distill.distillation_step(teacher, student, batch, optimizer).total.item())
        schedule.step()
    assert own == history.losses["loss"]
