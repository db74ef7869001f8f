"""course_utils.env: seeds, device, Colab and hub detection, notebook set-up."""

from __future__ import annotations

import os
import random
import socket
import sys
import time
import types

import numpy as np
import plotly.io as pio
import pytest
import torch

from course_utils import env


def draws():
    return random.random(), np.random.rand(3).tolist(), torch.rand(3).tolist()


def test_seed_everything_makes_python_numpy_and_torch_repeat():
    env.seed_everything(123)
    first = draws()
    env.seed_everything(123)
    assert draws() == first
    env.seed_everything(124)
    assert draws() != first


def test_seed_everything_returns_the_seed():
    assert env.seed_everything(7) == 7


@pytest.mark.parametrize("bad", [1.5, "0", None, True])
def test_seed_everything_rejects_non_integers(bad):
    with pytest.raises(TypeError, match="expected an integer seed"):
        env.seed_everything(bad)


@pytest.mark.parametrize("bad", [-1, 2**32])
def test_seed_everything_rejects_out_of_range(bad):
    with pytest.raises(ValueError, match=r"expected a seed in \[0, 2\*\*32\)"):
        env.seed_everything(bad)


def test_device_cpu_and_auto():
    assert env.device("cpu") == torch.device("cpu")
    assert env.device().type == ("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_device_cuda_without_gpu_raises():
    with pytest.raises(RuntimeError, match="torch sees no CUDA GPU"):
        env.device("cuda")


def test_device_rejects_unknown_choice():
    with pytest.raises(ValueError, match="expected prefer to be 'auto', 'cpu' or 'cuda', got 'gpu'"):
        env.device("gpu")


def test_in_colab(monkeypatch):
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    assert env.in_colab() is False
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    assert env.in_colab() is True


@pytest.fixture
def fresh_hub_cache():
    env.hub_available.cache_clear()
    yield
    env.hub_available.cache_clear()


@pytest.mark.parametrize("variable", ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"])
def test_hub_offline_variables_answer_without_network(monkeypatch, fresh_hub_cache, variable):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv(variable, "1")

    def no_network(*args, **kwargs):
        raise AssertionError("hub_available touched the network although the environment says offline")

    monkeypatch.setattr(socket, "create_connection", no_network)
    assert env.hub_available() is False


def test_hub_probe_that_hangs_gives_up_after_the_timeout(monkeypatch, fresh_hub_cache):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    def hang(*args, **kwargs):  # a DNS lookup or connection that never answers in time
        time.sleep(1.5)
        raise OSError("timed out")

    monkeypatch.setattr(socket, "create_connection", hang)
    start = time.perf_counter()
    assert env.hub_available(timeout=0.2) is False
    assert time.perf_counter() - start < 1


def test_hub_reachable_when_the_connection_opens(monkeypatch, fresh_hub_cache):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    opened = []

    class Connection:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def fake_connection(address, timeout):
        opened.append(address)
        return Connection()

    monkeypatch.setattr(socket, "create_connection", fake_connection)
    assert env.hub_available(timeout=1.0) is True
    assert opened == [(env.HUB_HOST, 443)]


def test_hub_refused_connection_means_unreachable(monkeypatch, fresh_hub_cache):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)

    def refused(*args, **kwargs):
        raise ConnectionRefusedError

    monkeypatch.setattr(socket, "create_connection", refused)
    assert env.hub_available(timeout=1.0) is False


def test_hub_available_rejects_non_positive_timeout(fresh_hub_cache):
    with pytest.raises(ValueError, match="expected a positive timeout"):
        env.hub_available(timeout=0)


def test_setup_notebook_seeds_sets_the_renderer_and_prints_nothing(capsys):
    pio.renderers.default = "json"
    env.setup_notebook(seed=5)
    assert pio.renderers.default == "course"
    first = draws()
    env.setup_notebook(seed=5)
    assert draws() == first
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("watched", [False, True])
def test_setup_notebook_hides_hugging_face_progress_bars_only_when_nobody_watches(monkeypatch, watched):
    """Executed by a tool, "Loading weights" bars would land on a committed notebook's stderr."""
    from course_utils import widgets

    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    monkeypatch.setattr(widgets, "interactive_frontend", lambda: watched)
    env.setup_notebook()
    assert os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS") == (None if watched else "1")
