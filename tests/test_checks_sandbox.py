"""The checker engine's sandbox: time limit, captured output, restored global state, inputs
changed in place, results of the wrong kind. Nothing a learner's function does may freeze the
notebook or quietly change the rest of the lesson."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest
import torch

from course_utils import attention, checks, masking, positional, task_heads
from course_utils.checks import engine
from tests.test_checks_distill import distillation_loss_in_place
from tests.test_checks_positional import list_of_lists
from tests.test_checks_task_heads import align_labels_consuming_its_input, classification_head_sequential

SOFTMAX_PASS = "✓ softmax: all 7 cases pass.\n"


def reference_softmax(x, axis=-1):
    return attention.softmax(x, axis)


@pytest.fixture
def short_limit(monkeypatch):
    monkeypatch.setattr(engine, "TIME_LIMIT_S", 0.5)
    monkeypatch.setattr(engine, "NOTICE_S", 0.3)  # a notice at 0.3 s, the end at 0.5 s


def test_an_infinite_loop_is_stopped_with_a_question(short_limit, capsys):
    def forever(x, axis=-1):
        while True:
            try:
                pass
            except Exception:  # a learner's blanket except cannot swallow the time limit
                pass

    start = time.monotonic()
    with pytest.raises(AssertionError, match=r"softmax did not return within 0.5 s on the case '.*': is there an "
                                             r"infinite loop.*TIME_LIMIT_S = 2"):
        checks.check_softmax(forever)
    assert time.monotonic() - start < 5
    assert "… softmax is still running on the case" in capsys.readouterr().out, "signs of life"
    checks.check_softmax(reference_softmax)  # the alarm is off again: a later check is not interrupted
    time.sleep(0.6)
    assert capsys.readouterr().out == SOFTMAX_PASS


def test_the_time_limit_is_adjustable_per_call(capsys):
    def slow(x, axis=-1):
        time.sleep(0.3)
        return attention.softmax(x, axis)

    with pytest.raises(AssertionError, match="did not return within 0.1 s"):
        engine.run_checks(checks.attention._SOFTMAX, slow, [engine.Case("one", (np.ones(3),), np.ones(3) / 3)],
                          time_limit=0.1)


def test_printed_output_is_captured_and_shown_cut(capsys):
    def chatty(x, axis=-1):
        for i in range(20_000):
            print("line", i)
        return attention.softmax(x, axis)

    checks.check_softmax(chatty)
    out = capsys.readouterr().out
    assert len(out) < 3 * engine.OUTPUT_LIMIT, f"{len(out):,} characters reached the notebook"
    assert out.startswith("✎ softmax printed while being checked:\nline 0\nline 1\n")
    assert "more characters (140,000 lines in all) not shown." in out and out.endswith(SOFTMAX_PASS)


def test_a_quiet_function_prints_only_the_verdict(capsys):
    checks.check_softmax(reference_softmax)
    assert capsys.readouterr().out == SOFTMAX_PASS


@pytest.mark.parametrize("change, what", [
    (lambda: np.random.seed(1), "numpy's global random generator (np.random.seed?)"),
    (lambda: torch.manual_seed(1), "torch's random generator (torch.manual_seed, or a new layer's random weights?)"),
    (lambda: random.seed(1), "Python's random generator (random.seed?)"),
    (lambda: torch.set_default_dtype(torch.float64), "torch's default dtype (torch.set_default_dtype?)"),
    (lambda: np.set_printoptions(precision=2), "numpy's print options (np.set_printoptions?)"),
])
def test_global_settings_changed_by_the_function_are_restored_with_a_warning(change, what, capsys):
    def leaky(x, axis=-1):
        change()
        return attention.softmax(x, axis)

    np.random.seed(0), torch.manual_seed(0), random.seed(0)
    expected = (np.random.rand(), torch.rand(1).item(), random.random())
    np.random.seed(0), torch.manual_seed(0), random.seed(0)
    options, dtype = np.get_printoptions(), torch.get_default_dtype()
    checks.check_softmax(leaky)
    assert (np.random.rand(), torch.rand(1).item(), random.random()) == expected
    assert np.get_printoptions() == options and torch.get_default_dtype() == dtype
    out = capsys.readouterr().out
    assert out == f"⚠ softmax changed {what}. The checker put it back, so the rest of the lesson runs as in the book.\n" \
                  + SOFTMAX_PASS


def test_the_state_is_restored_when_the_function_fails_too(capsys):
    def leaky_and_wrong(x, axis=-1):
        torch.set_default_dtype(torch.float64)
        return np.zeros_like(x)

    with pytest.raises(AssertionError, match="not right yet"):
        checks.check_softmax(leaky_and_wrong)
    assert torch.get_default_dtype() == torch.float32
    assert "⚠ softmax changed torch's default dtype" in capsys.readouterr().out


def dots_normalising_the_table_in_place(table, start, max_distance):
    table /= np.linalg.norm(table, axis=1, keepdims=True)  # changes the caller's table
    return table[start : start + max_distance + 1] @ table[start]


@pytest.mark.parametrize("checker, fn, words", [
    (checks.check_softmax, lambda x, axis=-1: np.exp(x, out=x) / np.exp(x).sum(axis, keepdims=True),
     "softmax changed its input `x` in place"),
    (checks.check_dots_by_distance, dots_normalising_the_table_in_place,
     "dots_by_distance changed its input `table` in place"),
    (checks.check_distillation_loss, distillation_loss_in_place, "changed its input `t` in place"),
    (checks.check_align_labels, align_labels_consuming_its_input, "align_labels changed its input `word_ids` in place"),
], ids=["numpy out=", "numpy /=", "torch /=", "list.pop"])
def test_a_function_that_changes_its_inputs_fails(checker, fn, words):
    with pytest.raises(AssertionError, match=words + r".*re-running a cell gives other numbers"):
        checker(fn)


@pytest.mark.parametrize("checker, fn, words", [
    (checks.check_softmax, lambda x, axis=-1: attention.softmax(x, axis).tolist(), "returned a list"),
    (checks.check_sinusoidal_encoding, list_of_lists, "returned a list"),
    (checks.check_causal_mask, lambda seq_len: [[k <= q for k in range(seq_len)] for q in range(seq_len)],
     "returned a list"),
    (checks.check_layer_map, lambda n_t, n_s: [i * n_t / n_s for i in range(n_s)], "expected an integer, got the float"),
], ids=["softmax list", "encoding list", "mask list", "layer_map floats"])
def test_results_of_the_wrong_kind_are_refused_naming_the_type(checker, fn, words):
    with pytest.raises(AssertionError, match=words):
        checker(fn)


def test_a_float32_result_where_float64_is_expected_is_told_the_dtype():
    def float32_lookup(ids, table):
        return table.astype(np.float32)[ids]

    with pytest.raises(AssertionError, match=r"the numbers look right, but the result has dtype float32 where "
                                             r"the reference has float64"):
        checks.check_embedding_lookup(float32_lookup)


def test_a_float_index_list_where_integers_belong_is_refused_in_the_padding_exercise():
    def float_ids(sequences, pad_id):
        ids, mask = checks.tokens.tokenization.pad_batch(sequences, pad_id)
        return ids.astype(float), mask

    with pytest.raises(AssertionError, match=r"the dtype is wrong: expected integers \(dtype int64\), got floats"):
        checks.check_pad_batch(float_ids)


@pytest.mark.parametrize("checker, fn", [
    (checks.check_classification_head, classification_head_sequential),
], ids=["nn.Sequential"])
def test_a_function_that_draws_random_weights_passes_and_the_draws_do_not_leak(checker, fn, capsys):
    torch.manual_seed(0)
    checker(fn)
    assert torch.equal(torch.rand(3), torch.manual_seed(0) and torch.rand(3))
    out = capsys.readouterr().out
    assert out.startswith("⚠ classification_head changed torch's random generator") and "all" in out


def test_a_learners_own_assertion_is_reported_with_the_case():
    def asserting(x, axis=-1):
        assert False, "my own check"

    with pytest.raises(AssertionError, match="softmax raised AssertionError on the case .*my own check"):
        checks.check_softmax(asserting)


def test_kind_problem_is_silent_for_right_kinds():
    assert engine.kind_problem(np.ones(3), np.ones(3)) is None
    assert engine.kind_problem(torch.ones(3), np.ones(3)) is None
    assert engine.kind_problem(np.ones(3, dtype=bool), np.ones(3, dtype=bool)) is None
    assert engine.kind_problem((np.ones(2), np.zeros(2)), (np.ones(2), np.zeros(2))) is None
    assert engine.kind_problem(np.int64(3), 3) is None and engine.kind_problem([0, 2], [0, 2]) is None
    assert "booleans" in engine.kind_problem(np.ones(3, dtype=int), np.ones(3, dtype=bool))
    assert task_heads and masking and positional  # the modules whose checkers are exercised above
