"""course_utils.env: seeds, device, Colab and hub detection, notebook set-up."""

from __future__ import annotations

import contextlib
import http.server
import os
import random
import socket
import subprocess
import sys
import threading
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
def fresh_hub_cache(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    env.hub_status.cache_clear()
    yield
    env.hub_status.cache_clear()


@contextlib.contextmanager
def fake_hub(status=200, body=b'{"id": "distilbert-base-uncased"}', hang=False):
    """A hub on 127.0.0.1 that answers every request with ``status`` and ``body`` (or never answers)."""
    requests = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the stdlib's name
            requests.append(self.path)
            if hang:
                time.sleep(3)
                return
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_HEAD = do_GET  # noqa: N815

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("variable", ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"])
def test_hub_offline_variables_answer_without_network(monkeypatch, fresh_hub_cache, variable):
    monkeypatch.setenv(variable, "1")
    with fake_hub() as (url, requests):
        monkeypatch.setenv("HF_ENDPOINT", url)
        assert env.hub_status() == "offline" and env.hub_available() is False
    assert requests == [], "the probe touched the network although the environment says offline"


def test_hub_reachable_when_the_hub_answers_with_its_json(monkeypatch, fresh_hub_cache):
    with fake_hub() as (url, requests):
        monkeypatch.setenv("HF_ENDPOINT", url)
        assert env.hub_status(timeout=2.0) == "reachable" and env.hub_available(timeout=2.0)
    assert requests == [f"/api/models/{env.HUB_PROBE_MODEL}"]


@pytest.mark.parametrize("status, body", [
    (502, b"Bad Gateway"),  # a proxy that cannot reach the hub
    (200, b"<html>Sign in to the Wi-Fi</html>"),  # a captive portal: the port answers, not the hub
    (200, b"[]"),  # JSON, but not the hub's answer about a model
])
def test_hub_unreachable_when_the_port_answers_but_not_the_hub(monkeypatch, fresh_hub_cache, status, body):
    with fake_hub(status, body) as (url, _):
        monkeypatch.setenv("HF_ENDPOINT", url)
        assert env.hub_status(timeout=2.0) == "unreachable"


def test_hub_probe_that_hangs_gives_up_after_the_timeout(monkeypatch, fresh_hub_cache):
    with fake_hub(hang=True) as (url, _):
        monkeypatch.setenv("HF_ENDPOINT", url)
        start = time.perf_counter()
        assert env.hub_status(timeout=0.3) == "unreachable"
        assert time.perf_counter() - start < 1.5


def test_hub_refused_connection_means_unreachable(monkeypatch, fresh_hub_cache):
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    assert env.hub_status(timeout=1.0) == "unreachable"


@pytest.mark.parametrize("bad", [0, -1, "3", True])
def test_hub_status_rejects_a_timeout_that_is_not_positive_seconds(fresh_hub_cache, bad):
    with pytest.raises(ValueError, match="expected a positive timeout"):
        env.hub_status(timeout=bad)


@pytest.mark.parametrize("call, notice", [
    ("tokenization.load_tokenizer()", "WordPiece tokenizer"),
    ("models.load_model('teacher')", "course's teacher"),
])
def test_a_hub_whose_port_answers_but_http_fails_costs_at_most_10_s(call, notice):
    """A proxy or captive portal: the port opens, HTTP fails. The bundled model, fast, and why."""
    with fake_hub(502, b"Bad Gateway") as (url, _):
        environment = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
        environment["HF_ENDPOINT"] = url
        code = f"import time; from course_utils import models, tokenization; t = time.perf_counter(); {call}; " \
               "print(f'took {time.perf_counter() - t:.2f}')"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment,
                              timeout=120)
    assert done.returncode == 0, done.stderr
    took = float(done.stdout.rsplit("took ", 1)[1])
    assert took <= 10, f"falling back took {took:.1f} s"
    assert notice in done.stdout and "hub unreachable" in done.stdout, done.stdout


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
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    monkeypatch.setattr(env, "interactive_frontend", lambda: watched)
    env.setup_notebook()
    assert os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS") == (None if watched else "1")


# --------------------------------------------------------------------------------------------
# Who is watching: a person (the live explorers) or an executor (their kernel-free twins)


def test_interactive_frontend_is_false_outside_a_kernel(monkeypatch):
    monkeypatch.delenv(env.LIVE_WIDGETS_ENV, raising=False)
    assert env.interactive_frontend() is False


@pytest.mark.parametrize("allow_stdin, expected", [(True, True), (False, False)])
def test_interactive_frontend_follows_the_front_ends_allow_stdin(monkeypatch, allow_stdin, expected):
    monkeypatch.delenv(env.LIVE_WIDGETS_ENV, raising=False)
    shell = types.SimpleNamespace(kernel=types.SimpleNamespace(_allow_stdin=allow_stdin))
    monkeypatch.setattr("IPython.get_ipython", lambda: shell)
    assert env.interactive_frontend() is expected


@pytest.mark.parametrize("value, expected", [("1", True), ("0", False)])
def test_the_environment_can_force_live_or_twin(monkeypatch, value, expected):
    monkeypatch.setenv(env.LIVE_WIDGETS_ENV, value)
    assert env.interactive_frontend() is expected


def test_a_bad_environment_value_is_refused(monkeypatch):
    monkeypatch.setenv(env.LIVE_WIDGETS_ENV, "yes")
    with pytest.raises(ValueError, match="expected COURSE_UTILS_LIVE_WIDGETS to be 0 or 1"):
        env.interactive_frontend()


def test_bfloat16_support_reads_the_processors_flags():
    from course_utils import env

    assert "avx512_bf16 yes, amx_bf16 no" in env.bfloat16_support("processor : 0\nflags : sse avx512_bf16\n")
    assert "unknown" in env.bfloat16_support("")
