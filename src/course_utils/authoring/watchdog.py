"""Run a test command, and stop it when it has printed nothing for too long: a hung run.

nbval prints a dot per cell it checks; the longest lesson cell runs about a minute, and a cell that
runs past nbval's ``--nbval-cell-timeout`` (600 s) is interrupted and reported. So a run that prints
nothing for far longer is not slow but stuck outside any cell's timeout: a pytest-xdist worker
or a kernel that never answered. CI saw one: ``make test``'s nbval printed its last dot and then
nothing for over an hour (one of the two workers never finished lesson 07's first cell, a 4-second
import), until CI's 90 minutes ran out and nothing of the stop was checked.

:func:`run` starts the command, echoes what it prints as it prints it, and when ``silence_s`` pass
with no output it prints the stuck processes (state, kernel wait channel, age, command line), kills
the command and every process under it (Jupyter kernels start in sessions of their own, so the
process tree is walked, not a process group), and runs it again, ``attempts`` times in all. A retry
checks exactly what the first attempt would have: it is a second run, not a looser one; and it is
said loudly, so that a hang that recurs is seen.

``python -m course_utils.authoring.watchdog [--silence S] [--attempts N] -- COMMAND ...`` (the
Makefile's nbval runs through it) exits with the last attempt's status, 124 if it hung.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

# Far above nbval's cell timeout (600 s, after which a cell is reported) and the longest cell.
SILENCE_S = 900.0
ATTEMPTS = 2
HUNG = 124  # the exit status of a run that was stopped for its silence (as `timeout` uses)


@dataclass
class Outcome:
    """What :func:`run` saw: the last attempt's ``returncode`` (:data:`HUNG` if it was stopped),
    the text that attempt printed, and how many attempts hung."""

    returncode: int
    output: str
    hangs: int
    attempts: int


def _children() -> dict[int, list[int]]:
    """Every process's children, from ``/proc`` (pid -> child pids)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # the command name may hold spaces and ')'
        children.setdefault(parent, []).append(int(entry.name))
    return children


def descendants(pid: int) -> list[int]:
    """The processes under ``pid`` (children, their children, ...), parents before children."""
    if not Path("/proc").is_dir():
        return []
    tree, found, queue = _children(), [], [pid]
    while queue:
        for child in tree.get(queue.pop(0), []):
            found.append(child)
            queue.append(child)
    return found


def describe(pids: list[int]) -> str:
    """One line per process: pid, state, what it waits on in the kernel, age, command line."""
    if not pids:
        return "(no processes)"
    listing = subprocess.run(["ps", "-o", "pid,ppid,stat,wchan:24,etime,args", "-p", ",".join(map(str, pids))],
                             capture_output=True, text=True, check=False)
    return listing.stdout.rstrip() or listing.stderr.rstrip()


def _kill_tree(process: subprocess.Popen) -> None:
    """Kill ``process`` and every process under it (those that are gone already are skipped)."""
    for pid in [process.pid, *descendants(process.pid)]:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    process.wait()


def _attempt(command, *, silence_s, env, cwd, echo) -> tuple[int, str, bool]:
    """One run of ``command``: (status, its output, whether it was stopped for its silence)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    chunks: list[bytes] = []
    last = [time.monotonic()]

    def pump() -> None:
        while chunk := os.read(process.stdout.fileno(), 65536):
            chunks.append(chunk)
            last[0] = time.monotonic()
            if echo:
                sys.stdout.buffer.write(chunk)
                sys.stdout.flush()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    hung = False
    while process.poll() is None:
        if time.monotonic() - last[0] > silence_s:
            hung = True
            print(f"\nwatchdog: nothing printed for {silence_s:.0f} s; the processes of the run:\n"
                  f"{describe([process.pid, *descendants(process.pid)])}", flush=True)
            _kill_tree(process)
            break
        time.sleep(min(1.0, silence_s / 10))
    reader.join(timeout=5)
    output = b"".join(chunks).decode("utf-8", errors="replace")
    return (HUNG if hung else process.returncode), output, hung


def run(command: list[str], *, silence_s: float = SILENCE_S, attempts: int = ATTEMPTS, env=None, cwd=None,
        echo: bool = True) -> Outcome:
    """Run ``command`` (a list of strings), stopping an attempt that prints nothing for ``silence_s``
    seconds and running it again, ``attempts`` times at most. Only a hang is retried: an attempt
    that ends, passing or failing, is the outcome. ``echo`` prints the output as it comes."""
    if not isinstance(command, (list, tuple)) or not command or not all(isinstance(c, str) for c in command):
        raise ValueError(f"expected the command as a non-empty list of strings, got {command!r}")
    if isinstance(silence_s, bool) or not isinstance(silence_s, (int, float)) or not silence_s > 0:
        raise ValueError(f"expected silence_s to be a positive number of seconds, got {silence_s!r}")
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ValueError(f"expected attempts to be a whole number >= 1, got {attempts!r}")
    hangs = 0
    for number in range(1, attempts + 1):
        status, output, hung = _attempt(list(command), silence_s=silence_s, env=env, cwd=cwd, echo=echo)
        if not hung:
            break
        hangs += 1
        again = "running it again" if number < attempts else "giving up"
        print(f"watchdog: attempt {number} of {attempts} hung (silent for {silence_s:.0f} s) and was killed; "
              f"{again}: {' '.join(command)}", flush=True)
    return Outcome(returncode=status, output=output, hangs=hangs, attempts=number)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_utils.authoring.watchdog",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--silence", type=float, default=SILENCE_S,
                        help=f"seconds without output after which a run counts as hung (default {SILENCE_S:.0f})")
    parser.add_argument("--attempts", type=int, default=ATTEMPTS,
                        help=f"runs at most, when they hang (default {ATTEMPTS})")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("expected a command to run, after --")
    try:
        return run(command, silence_s=args.silence, attempts=args.attempts).returncode
    except ValueError as error:
        parser.error(str(error))
    except OSError as error:  # a program that is not there, or not executable
        parser.error(f"cannot start {command[0]!r}: {error.strerror or error}")


if __name__ == "__main__":
    sys.exit(main())
