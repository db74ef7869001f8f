"""course_utils.data: the running example."""

import numpy as np
import pytest

from course_utils.data import RUNNING_TEXT, running_example


def test_running_example_is_i_love_nlp_framed_by_special_tokens():
    example = running_example()
    assert example.text == RUNNING_TEXT == "I love NLP"
    assert example.tokens == ("[CLS]", "I", "love", "NLP", "[SEP]")
    assert example.text.split() == list(example.tokens[1:-1])
    assert (example.seq_len, example.d_model, example.n_heads, example.n_layers) == (5, 4, 2, 2)
    assert example.embeddings.shape == (5, 4)


def test_running_example_is_deterministic_and_independent_of_global_state():
    first = running_example().embeddings.copy()
    np.random.seed(99)
    np.random.rand(10)
    np.testing.assert_array_equal(running_example().embeddings, first)
    assert not np.array_equal(running_example(seed=1).embeddings, first)


def test_running_example_embeddings_are_read_only():
    with pytest.raises(ValueError):
        running_example().embeddings[0, 0] = 1.0


def test_running_example_other_widths():
    assert running_example(d_model=8).embeddings.shape == (5, 8)


@pytest.mark.parametrize("bad", [0, -4, 2.0, "4", True])
def test_running_example_rejects_bad_width(bad):
    with pytest.raises(ValueError, match="expected d_model to be a positive integer"):
        running_example(d_model=bad)


def test_frame_tokens_adds_cls_and_sep():
    from course_utils.data import frame_tokens

    assert frame_tokens(["I", "love", "NLP"]) == ["[CLS]", "I", "love", "NLP", "[SEP]"]
    assert frame_tokens([]) == ["[CLS]", "[SEP]"]
    assert frame_tokens(("a",)) == ["[CLS]", "a", "[SEP]"]
    words = ["x"]
    frame_tokens(words)
    assert words == ["x"], "frame_tokens must not change its input"


def test_frame_tokens_rejects_a_string_and_non_strings():
    from course_utils.data import frame_tokens

    with pytest.raises(TypeError, match=r"expected a sequence of words such as \['I', 'love'\], got the string 'I love'"):
        frame_tokens("I love")
    with pytest.raises(TypeError, match="expected every word to be a string"):
        frame_tokens(["I", 3])
