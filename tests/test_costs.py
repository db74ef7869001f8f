"""course_utils.costs: activations saved for backward, optimiser state, forward and backward time."""

import pytest
import torch

from course_utils import costs, students
from course_utils.encoder import DistilBertEncoder, EncoderConfig
from tests.tiny_models import padded_batch, tiny_teacher

pytestmark = pytest.mark.usefixtures("one_thread")


def test_saved_activations_of_a_linear_layer_are_its_input_only():
    layer = torch.nn.Linear(4, 3)
    x = torch.randn(5, 4, requires_grad=True)
    # Linear saves its input (for the weight's gradient) and its weight (not counted: it exists anyway).
    assert costs.saved_activation_bytes(layer, lambda: layer(x)) == x.numel() * 4


def test_a_tensor_saved_twice_counts_once():
    layer = torch.nn.Identity()
    x = torch.randn(10, requires_grad=True)
    assert costs.saved_activation_bytes(layer, lambda: x * x) == 40  # mul saves x twice


def test_encoder_activations_grow_with_the_batch_and_faster_than_the_length():
    torch.manual_seed(0)
    config = EncoderConfig(vocab_size=50, max_position_embeddings=64, dim=16, n_heads=2, n_layers=2, hidden_dim=32)
    model = DistilBertEncoder(config).train()

    def saved(B, T):
        ids = torch.randint(0, 50, (B, T))
        return costs.saved_activation_bytes(model, lambda: model(ids).last_hidden_state)

    assert saved(4, 16) == pytest.approx(4 * saved(1, 16), rel=0.01)
    assert saved(2, 64) > 2 * saved(2, 32)
    with torch.no_grad():  # nothing is saved without gradients
        assert saved(2, 16) == 0


def test_adam_keeps_two_numbers_per_weight_and_sgd_none():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    n = sum(p.numel() for p in model.parameters())
    assert costs.optimizer_state_numbers(model, torch.optim.AdamW(model.parameters())) == 2 * n
    other = torch.nn.Linear(3, 4)
    assert costs.optimizer_state_numbers(other, torch.optim.SGD(other.parameters(), lr=0.1)) == 0


def test_backward_counts_twice_the_flops_of_a_linear_forward():
    layer = torch.nn.Linear(8, 6)
    x = torch.randn(5, 8, requires_grad=True)  # input gradient wanted too: two products
    forward_flops, backward_flops = costs.forward_backward_flops(lambda: layer(x))
    assert forward_flops == 2 * 5 * 8 * 6
    assert backward_flops == 2 * forward_flops


def test_forward_backward_seconds_are_positive_and_repeats_are_checked():
    layer = torch.nn.Linear(8, 8)
    x = torch.randn(4, 8)
    forward_s, backward_s = costs.forward_backward_seconds(lambda: layer(x), repeats=2)
    assert forward_s > 0 and backward_s > 0
    with pytest.raises(ValueError, match="positive integer"):
        costs.forward_backward_seconds(lambda: layer(x), repeats=0)


# --------------------------------------------------------------------------------------------
# What a model costs: parameters and latency


def test_parameter_count_counts_tied_weights_once():
    teacher = tiny_teacher()
    unique = {id(p): p.numel() for p in teacher.parameters()}
    assert costs.parameter_count(teacher) == sum(unique.values())
    total = sum(p.numel() for _, p in teacher.named_parameters(remove_duplicate=False))
    assert costs.parameter_count(teacher) == total - 50 * 16 - 50  # the decoder's weight and bias are tied
    teacher.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    assert costs.parameter_count(teacher, trainable_only=True) == costs.parameter_count(teacher) - 50 * 16
    with pytest.raises(TypeError, match="Module"):
        costs.parameter_count([1, 2])


def test_latency_is_a_median_of_positive_times_and_restores_the_mode():
    teacher = tiny_teacher().train()
    input_ids, attention_mask = padded_batch()
    seconds = costs.latency(teacher, input_ids, attention_mask, repeats=3, warmup=1)
    assert 0 < seconds < 5 and teacher.training
    assert costs.latency(teacher, input_ids[:1], repeats=1, warmup=0) > 0
    with pytest.raises(ValueError, match="repeats"):
        costs.latency(teacher, input_ids, repeats=0)
    with pytest.raises(ValueError, match=r"\(B, T\)"):
        costs.latency(teacher, input_ids[0])


def test_latencies_times_models_in_turn_and_restores_their_modes():
    teacher = tiny_teacher().train()
    student = students.student_from_teacher(teacher)  # in train mode too, like its teacher
    input_ids, attention_mask = padded_batch()
    seconds = costs.latencies({"teacher": teacher, "student": student}, input_ids, attention_mask, repeats=3)
    assert list(seconds) == ["teacher", "student"] and all(0 < s < 5 for s in seconds.values())
    assert teacher.training and student.training
    with pytest.raises(TypeError, match="dict of models"):
        costs.latencies([teacher], input_ids)
    with pytest.raises(TypeError, match="'student'"):
        costs.latencies({"student": "distilbert"}, input_ids)
