"""The notebook environment: seeds, device, Colab and hub detection, who is watching, notebook set-up.

Every lesson's first code cell calls :func:`setup_notebook`. It is the only place where the
course touches global state (random seeds, the default plotly renderer, display options), so a
lesson run top to bottom from a fresh kernel gives the same numbers on every machine.
"""

from __future__ import annotations

import os
import random
import sys
import threading
from functools import lru_cache

import numpy as np

from .rendering import use_course_renderer

DEFAULT_SEED = 0
HUB_HOST = "huggingface.co"
LIVE_WIDGETS_ENV = "COURSE_UTILS_LIVE_WIDGETS"  # "1": always the live app, "0": always the twin


def seed_everything(seed: int = DEFAULT_SEED) -> int:
    """Seed Python's ``random``, numpy's global generator and torch (CPU and CUDA).

    Returns the seed, so a cell can show which seed it used.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"expected an integer seed, got {seed!r} of type {type(seed).__name__}")
    if not 0 <= int(seed) < 2**32:
        raise ValueError(f"expected a seed in [0, 2**32), got {seed}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed)
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency, but numpy lessons need not fail
        return seed
    torch.manual_seed(seed)  # seeds the CUDA generators too
    return seed


def device(prefer: str = "auto") -> "torch.device":  # noqa: F821 - torch imported lazily
    """The torch device lessons run on: ``"cuda"`` when asked for or available, else ``"cpu"``.

    ``prefer`` is ``"auto"``, ``"cpu"`` or ``"cuda"``. Asking for ``"cuda"`` on a machine without
    a GPU raises, rather than silently running somewhere else.
    """
    import torch

    if prefer not in ("auto", "cpu", "cuda"):
        raise ValueError(f"expected prefer to be 'auto', 'cpu' or 'cuda', got {prefer!r}")
    if prefer == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("prefer='cuda' was asked for, but torch sees no CUDA GPU on this machine")
    if prefer == "cpu":
        return torch.device("cpu")
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def in_colab() -> bool:
    """True when running inside Google Colab."""
    return "google.colab" in sys.modules


def interactive_frontend() -> bool:
    """Whether a person is running this notebook in a front end that shows ipywidgets.

    True inside a Jupyter kernel whose current cell was sent by a front end that accepts keyboard
    input (JupyterLab, Notebook, VS Code, Colab send ``allow_stdin=True``); False in plain Python and
    when an executor runs the notebook (nbclient, hence the lesson executor and ``jupyter-book``,
    and ``nbval`` send ``allow_stdin=False``). The environment variable ``COURSE_UTILS_LIVE_WIDGETS``
    overrides it: ``1`` forces the live app, ``0`` the kernel-free twin.
    """
    override = os.environ.get(LIVE_WIDGETS_ENV, "").strip()
    if override:
        if override not in ("0", "1"):
            raise ValueError(f"expected {LIVE_WIDGETS_ENV} to be 0 or 1 (or unset), got {override!r}")
        return override == "1"
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return False
    kernel = getattr(get_ipython(), "kernel", None)  # None outside a Jupyter kernel
    return bool(getattr(kernel, "_allow_stdin", False))


def enable_colab_widgets() -> None:
    """In Colab, turn on its custom widget manager, which ipywidgets 8 needs there; elsewhere nothing.

    Every live explorer calls it before showing its widgets.
    """
    if in_colab():  # pragma: no cover - needs Colab
        from google.colab import output

        output.enable_custom_widget_manager()


def _env_says_offline() -> bool:
    truthy = {"1", "true", "yes", "on"}
    return any(os.environ.get(name, "").strip().lower() in truthy for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


HUB_PROBE_MODEL = "distilbert-base-uncased"  # a small JSON answer about a model the course uses


def hub_endpoint() -> str:
    """The hub's address: ``HF_ENDPOINT`` (a mirror, a proxy) or ``https://huggingface.co``."""
    return os.environ.get("HF_ENDPOINT", f"https://{HUB_HOST}").rstrip("/")


@lru_cache(maxsize=None)
def hub_status(timeout: float = 3.0) -> str:
    """``"offline"``, ``"reachable"`` or ``"unreachable"``: can the Hugging Face hub be used?

    ``HF_HUB_OFFLINE=1`` (or ``TRANSFORMERS_OFFLINE=1``) answers ``"offline"`` at once, without
    touching the network. Otherwise one HTTP request asks the hub's API about a model, in a
    background thread, and the answer counts only if it is the hub's JSON: a port that opens but
    answers with an error page (a proxy, a captive portal), a DNS that hangs, a refused connection
    all give ``"unreachable"`` after at most ``timeout`` seconds. Cached for the session.
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"expected a positive timeout in seconds, got {timeout!r}")
    if _env_says_offline():
        return "offline"
    url = f"{hub_endpoint()}/api/models/{HUB_PROBE_MODEL}"
    result: list[bool] = []

    def probe() -> None:
        import json
        import urllib.request

        try:
            with urllib.request.urlopen(url, timeout=timeout) as answer:
                body = json.loads(answer.read(1_000_000))
            result.append(answer.status == 200 and isinstance(body, dict) and "id" in body)
        except (OSError, ValueError):  # URLError, HTTPError, timeouts, and non-JSON answers
            result.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout)
    return "reachable" if result and result[0] else "unreachable"


def hub_available(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub can be used: :func:`hub_status` is ``"reachable"``."""
    return hub_status(timeout=timeout) == "reachable"


def bfloat16_support(cpuinfo: str | None = None) -> str:
    """One line on what this processor offers bfloat16: torch's CPU capability and, on Linux, whether
    ``/proc/cpuinfo`` lists the bfloat16 instructions (``avx512_bf16``, ``amx_bf16``). ``cpuinfo``:
    that file's text (read when None); elsewhere the flags are "unknown"."""
    import torch

    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as file:
                cpuinfo = file.read()
        except OSError:
            cpuinfo = ""
    flags = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags = set(line.partition(":")[2].split())
            break
    found = ", ".join(f"{flag} {'yes' if flag in flags else 'no'}" for flag in ("avx512_bf16", "amx_bf16"))
    return (f"torch's CPU capability: {torch.backends.cpu.get_cpu_capability()}; bfloat16 instructions: "
            + (found if flags else "unknown (no /proc/cpuinfo flags)"))


def setup_notebook(seed: int = DEFAULT_SEED) -> None:
    """Prepare a lesson notebook: seeds, figure rendering and display options.

    - seeds Python, numpy and torch with ``seed`` (:func:`seed_everything`);
    - makes every plotly figure render through the course renderer, which draws on the static
      site, in Colab and in Jupyter alike (:func:`course_utils.rendering.use_course_renderer`);
    - prints numpy arrays compactly (4 decimals), so tables in the lessons stay readable;
    - when no person is watching (the lesson executor, ``jupyter-book``, nbval), turns off the
      Hugging Face progress bars ("Loading weights", "Writing model shards"): they would be
      saved as stderr noise. A person running the notebook still sees them.

    It prints nothing, so its output is the same on every machine; the welcome lesson shows the
    environment (versions, device, hub) explicitly.
    """
    seed_everything(seed)
    use_course_renderer()
    if not interactive_frontend():  # read by huggingface_hub and transformers when imported
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    np.set_printoptions(precision=4, suppress=True, linewidth=100)
    try:
        import torch

        torch.set_printoptions(precision=4, sci_mode=False, linewidth=100)
    except ImportError:  # pragma: no cover
        pass
