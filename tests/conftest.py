"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest
import torch

from course_utils import tokenization
from course_utils.authoring import kernel_retry


def pytest_configure(config):
    """Tests that run notebooks start kernels beside each other (-n auto): one that dies at start is
    started again (nbclient's and nbval's starts, in this process)."""
    kernel_retry.install()


@pytest.fixture(scope="module")
def tokenizer():
    """The bundled WordPiece tokenizer, loaded once per test module."""
    return tokenization.load_bundled_tokenizer()


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models gain nothing from threads, and lose much on a shared, busy CPU. Opt in with
    ``pytestmark = pytest.mark.usefixtures("one_thread")``."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
