"""A kernel that dies at start is started again: nbval and nbclient retry a failed kernel start.

When several kernels start at once (nbval under pytest-xdist, two lessons at a time; the unit
tests under ``-n auto``), a kernel now and then dies before it answers its first request:
jupyter_client picks free ports by binding and releasing them, writes them to the connection
file, and the kernel binds them a moment later; a port another process took in between kills
the new kernel ("Kernel died before replying to kernel_info"; treebeardtech/nbmake#129). IPC
transport has the same race (the socket files are named after an existence check). nbval 0.11
starts its kernel in ``IPyNbFile.setup`` with the kernel's stderr sent to ``/dev/null``, and
pytest then fails every cell of the notebook, with nothing to say why.

This module starts such a kernel again, each time with a new kernel manager (so new ports), up to
:data:`TRIES` times in all, waiting :data:`BACKOFF_S` (with a random part, so that two workers that
collided do not collide again) between tries. Each try keeps the kernel's stderr in a temporary
file; when the last try fails, the error raised carries the end of each try's stderr. Each retry
is said on stderr and counted; pytest's summary (with xdist, the controller's) names every retry,
so that a start that only passed at its second try is seen.

Load it into pytest with ``-p course_utils.authoring.kernel_retry`` (the Makefile's nbval runs,
``make portability``, ``make compat`` and the tests' own nbval runs do): it wraps nbval's
``RunningKernel`` and nbclient's ``NotebookClient``. Code that runs nbclient outside pytest (the
lesson executor, the book's build) calls :func:`install`.
"""

from __future__ import annotations

import atexit
import functools
import os
import random
import sys
import tempfile
import time
from typing import Any, Callable, TypeVar

TRIES = 4  # starts in all, the first included
BACKOFF_S = (1.0, 2.0, 4.0)  # the wait before the 2nd, 3rd, 4th try (plus up to half as much, at random)
STDERR_SHOWN = 3000  # characters of each failed try's stderr that the final error shows
# A file to which each retry appends one line (for a run's record: `make notebooks` five times).
LOG_VARIABLE = "COURSE_KERNEL_RETRY_LOG"

T = TypeVar("T")

# The retries this process made: one line each ("<what>: try 2 of 4 after <error>").
RETRIES: list[str] = []


class KernelStartError(RuntimeError):
    """Every try to start a kernel failed; the message holds each try's error and stderr."""


def _retryable() -> tuple[type[BaseException], ...]:
    """The errors of a kernel that failed to start (died, never answered, could not bind)."""
    kinds: list[type[BaseException]] = [RuntimeError, OSError, TimeoutError]
    try:
        import zmq

        kinds.append(zmq.ZMQError)
    except ImportError:  # pragma: no cover - jupyter_client needs pyzmq
        pass
    return tuple(kinds)


def read_stderr(stream, limit: int = STDERR_SHOWN) -> str:
    """The end (``limit`` characters) of what a kernel wrote to ``stream``, a binary temporary file."""
    try:
        stream.flush()
        stream.seek(0)
        text = stream.read().decode("utf-8", errors="replace")
    except (OSError, ValueError):  # closed, or not a file
        return "(its stderr could not be read)"
    text = text.strip()
    if not text:
        return "(it wrote nothing to stderr)"
    return text if len(text) <= limit else "…" + text[-limit:]


def _record(line: str) -> None:
    RETRIES.append(line)
    print(f"kernel_retry: {line}", file=sys.stderr, flush=True)
    log = os.environ.get(LOG_VARIABLE)
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def _pause(attempt: int, sleep: Callable[[float], Any]) -> None:
    base = BACKOFF_S[min(attempt - 1, len(BACKOFF_S) - 1)]
    sleep(base * (1 + random.random() / 2))


def _failure(what: str, errors: list[tuple[BaseException, str]]) -> KernelStartError:
    tries = "\n".join(f"try {i}: {type(error).__name__}: {error}\n  the kernel's stderr:\n"
                      + "\n".join("    " + line for line in stderr.splitlines())
                      for i, (error, stderr) in enumerate(errors, 1))
    return KernelStartError(f"{what} failed to start {len(errors)} times in a row:\n{tries}")


def start_with_retries(start: Callable[[Any], T], what: str, *, tries: int = TRIES,
                       sleep: Callable[[float], Any] = time.sleep) -> T:
    """``start(stderr)``, again on failure, up to ``tries`` times in all; its result.

    ``start`` starts a kernel with its stderr sent to ``stderr`` (a binary temporary file), waits
    until it answers, and cleans up after itself when it fails. ``what`` names the kernel in the
    messages. Raises :class:`KernelStartError` with every try's error and stderr when all fail.
    """
    if tries < 1:
        raise ValueError(f"expected at least one try, got tries={tries}")
    errors: list[tuple[BaseException, str]] = []
    for attempt in range(1, tries + 1):
        stderr = tempfile.TemporaryFile(prefix="kernel-stderr-")
        try:
            return start(stderr)
        except _retryable() as error:
            errors.append((error, read_stderr(stderr)))
            stderr.close()
            if attempt == tries:
                raise _failure(what, errors) from error
            _record(f"{what}: try {attempt + 1} of {tries} after {type(error).__name__}: "
                    f"{str(error).splitlines()[0] if str(error) else ''}".rstrip())
            _pause(attempt, sleep)
    raise AssertionError("unreachable")  # pragma: no cover


# --------------------------------------------------------------------------------------------
# nbval


def _nbval_running_kernel_init(self, kernel_name, cwd=None, startup_timeout=60):
    """nbval's ``RunningKernel.__init__``, its start retried and the kernel's stderr kept."""
    from nbval import kernel as nbval_kernel

    def start(stderr):
        self.km, self.kc = nbval_kernel.start_new_kernel(startup_timeout=startup_timeout, kernel_name=kernel_name,
                                                         stderr=stderr, cwd=cwd)
        try:
            self._ensure_iopub_up()
        except BaseException:
            self.kc.stop_channels()
            self.km.shutdown_kernel(now=True)
            del self.km
            raise
        return None

    start_with_retries(start, f"kernel {kernel_name!r}")


def install_nbval() -> bool:
    """Wrap nbval's kernel start (once); whether nbval is there to wrap."""
    try:
        from nbval import kernel as nbval_kernel
    except ImportError:
        return False
    if not getattr(nbval_kernel.RunningKernel.__init__, "course_retry", False):
        _nbval_running_kernel_init.course_retry = True
        nbval_kernel.RunningKernel.__init__ = _nbval_running_kernel_init
    return True


# --------------------------------------------------------------------------------------------
# nbclient (the lesson executor, jupyter-cache under jupyter-book, tests that run notebooks)


def install_nbclient() -> bool:
    """Wrap nbclient's kernel start (once); whether nbclient is there to wrap.

    ``NotebookClient.async_start_new_kernel`` starts the process (its stderr now in a temporary
    file unless the caller chose one) and ``async_start_new_kernel_client`` waits for it; when the
    wait fails, nbclient has already shut the kernel down, and a new kernel manager starts a new
    one. A client given a kernel manager by its caller is not retried (the manager is not ours).
    """
    try:
        from nbclient import NotebookClient
    except ImportError:
        return False
    if getattr(NotebookClient.async_start_new_kernel_client, "course_retry", False):
        return True
    from jupyter_core.utils import run_sync

    start_kernel, start_client = NotebookClient.async_start_new_kernel, NotebookClient.async_start_new_kernel_client

    @functools.wraps(start_kernel)
    async def async_start_new_kernel(self, **kwargs):
        self._course_start_kwargs = dict(kwargs)
        if "stderr" not in kwargs:
            self._course_stderr = kwargs["stderr"] = tempfile.TemporaryFile(prefix="kernel-stderr-")
        return await start_kernel(self, **kwargs)

    @functools.wraps(start_client)
    async def async_start_new_kernel_client(self):
        what = f"kernel {self.kernel_name or 'of the notebook'!r}"
        errors: list[tuple[BaseException, str]] = []
        for attempt in range(1, TRIES + 1):
            try:
                return await start_client(self)
            except _retryable() as error:
                stderr = getattr(self, "_course_stderr", None)
                errors.append((error, read_stderr(stderr) if stderr is not None else "(the caller kept it)"))
                if not self.owns_km:
                    raise
                if attempt == TRIES:
                    # nbclient's atexit clean-up of this client would find no kernel manager and fail
                    atexit.unregister(self._cleanup_kernel)
                    raise _failure(what, errors) from error
                _record(f"{what}: try {attempt + 1} of {TRIES} after {type(error).__name__}: "
                        f"{str(error).splitlines()[0] if str(error) else ''}".rstrip())
                _pause(attempt, time.sleep)
                if self.km is not None:  # nbclient cleans up only when its client was made
                    await self._async_cleanup_kernel()
                self.km = self.create_kernel_manager()
                await self.async_start_new_kernel(**getattr(self, "_course_start_kwargs", {}))
        raise AssertionError("unreachable")  # pragma: no cover

    async_start_new_kernel_client.course_retry = True
    NotebookClient.async_start_new_kernel = async_start_new_kernel
    NotebookClient.async_start_new_kernel_client = async_start_new_kernel_client
    NotebookClient.start_new_kernel = run_sync(async_start_new_kernel)
    NotebookClient.start_new_kernel_client = run_sync(async_start_new_kernel_client)
    return True


def install() -> None:
    """Retry kernel starts in nbval and nbclient, whichever are installed (safe to call again)."""
    install_nbval()
    install_nbclient()


# --------------------------------------------------------------------------------------------
# pytest plugin (-p course_utils.authoring.kernel_retry)


def _optional_hook(function):
    """A hook of pytest-xdist's, which pytest must not refuse when xdist is not installed."""
    try:
        import pytest
    except ImportError:  # imported by the lesson executor or the book's build, not by pytest
        return function
    return pytest.hookimpl(optionalhook=True)(function)


def pytest_configure(config):
    install()
    config._course_kernel_retries = []


@_optional_hook
def pytest_testnodedown(node, error):
    """xdist's controller: collect the retries each worker made (sent through ``workeroutput``)."""
    retries = getattr(node, "workeroutput", {}).get("course_kernel_retries", [])
    getattr(node.config, "_course_kernel_retries", []).extend(retries)


def pytest_sessionfinish(session, exitstatus):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the retries to the controller
        workeroutput["course_kernel_retries"] = list(RETRIES)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    retries = list(RETRIES) + getattr(config, "_course_kernel_retries", [])
    if retries:
        terminalreporter.write_sep("-", f"kernel starts retried: {len(retries)}")
        for line in retries:
            terminalreporter.write_line(line)
