"""The watchdog that stops a silent (hung) nbval run and runs it again."""

import os
import sys
import time

import pytest

from course_utils.authoring import watchdog

PY = sys.executable


def test_a_run_that_prints_and_ends_is_its_own_outcome():
    outcome = watchdog.run([PY, "-c", "print('one'); print('two')"], silence_s=5, echo=False)
    assert (outcome.returncode, outcome.hangs, outcome.attempts) == (0, 0, 1)
    assert outcome.output.split() == ["one", "two"]


def test_a_failing_run_is_not_retried():
    outcome = watchdog.run([PY, "-c", "import sys; print('F'); sys.exit(3)"], silence_s=5, echo=False)
    assert (outcome.returncode, outcome.hangs, outcome.attempts) == (3, 0, 1)


def test_a_run_that_prints_slowly_but_steadily_is_not_stopped():
    # longer in all (4 s) than the silence allowed (2.5 s), never silent that long
    code = "import time\nfor i in range(5):\n    print(i, end='', flush=True); time.sleep(0.8)"
    outcome = watchdog.run([PY, "-c", code], silence_s=2.5, echo=False)
    assert (outcome.returncode, outcome.hangs) == (0, 0)
    assert outcome.output == "01234"


def test_a_silent_run_is_killed_and_retried_then_reported_hung(capsys):
    start = time.monotonic()
    outcome = watchdog.run([PY, "-c", "print('started', flush=True); import time; time.sleep(60)"],
                           silence_s=0.5, attempts=2, echo=False)
    assert time.monotonic() - start < 20
    assert (outcome.returncode, outcome.hangs, outcome.attempts) == (watchdog.HUNG, 2, 2)
    said = capsys.readouterr().out
    assert "attempt 1 of 2 hung" in said and "running it again" in said
    assert "attempt 2 of 2 hung" in said and "giving up" in said
    assert "the processes of the run" in said and "time.sleep(60)" in said  # what was stuck is shown


def test_a_run_that_hangs_once_passes_on_the_second_attempt(tmp_path):
    marker = tmp_path / "first-attempt-was-here"
    code = (f"import pathlib, time\nm = pathlib.Path({str(marker)!r})\n"
            "if not m.exists():\n    m.touch(); time.sleep(60)\nprint('passed')")
    outcome = watchdog.run([PY, "-c", code], silence_s=3, attempts=2, echo=False)
    assert (outcome.returncode, outcome.hangs, outcome.attempts) == (0, 1, 2)
    assert outcome.output.strip() == "passed"  # the last attempt's output only


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="walks /proc")
def test_a_hung_run_is_killed_with_its_grandchildren_in_their_own_session(tmp_path):
    # a kernel-like grandchild in a session of its own, as Jupyter starts kernels: a process group
    # kill would miss it; the watchdog walks the process tree
    pid_file = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time, pathlib\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
        f"pathlib.Path({str(pid_file)!r}).write_text(str(p.pid))\n"
        "time.sleep(60)\n"
    )
    outcome = watchdog.run([PY, "-c", code], silence_s=1.0, attempts=1, echo=False)
    assert outcome.returncode == watchdog.HUNG
    grandchild = int(pid_file.read_text())
    for _ in range(50):  # killed; reaped by init shortly after
        try:
            state = open(f"/proc/{grandchild}/stat").read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            break
        if state == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the grandchild {grandchild} still runs after the watchdog killed its run")


@pytest.mark.parametrize("kwargs, expected", [
    ({"command": "pytest --nbval"}, "non-empty list of strings"),
    ({"command": []}, "non-empty list of strings"),
    ({"command": ["pytest", 3]}, "non-empty list of strings"),
    ({"command": ["true"], "silence_s": 0}, "positive number of seconds"),
    ({"command": ["true"], "silence_s": True}, "positive number of seconds"),
    ({"command": ["true"], "attempts": 0}, "whole number >= 1"),
    ({"command": ["true"], "attempts": 1.5}, "whole number >= 1"),
])
def test_bad_arguments_say_what_was_expected(kwargs, expected):
    command = kwargs.pop("command")
    with pytest.raises(ValueError, match=expected):
        watchdog.run(command, echo=False, **kwargs)


def test_the_command_line_runs_the_command_after_the_double_dash(capfd):
    assert watchdog.main(["--silence", "5", "--", PY, "-c", "import sys; print('hi'); sys.exit(2)"]) == 2
    assert "hi" in capfd.readouterr().out


def test_the_command_line_without_a_command_is_an_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        watchdog.main(["--silence", "5"])
    assert exit_.value.code == 2
    assert "expected a command to run" in capsys.readouterr().err


def test_a_command_that_cannot_start_is_named(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_:
        watchdog.main(["--", str(tmp_path / "no-such-pytest")])
    assert exit_.value.code == 2
    said = capsys.readouterr().err
    assert "cannot start" in said and "no-such-pytest" in said and "No such file" in said


def test_the_makefile_and_the_portability_and_compat_runs_go_through_the_watchdog(monkeypatch, tmp_path):
    from course_utils.authoring import compat, kernels
    from course_utils.authoring.lessons import ROOT, lesson_sources

    makefile = (ROOT / "Makefile").read_text()
    line = next(line for line in makefile.splitlines() if line.startswith("LESSONS_NBVAL :="))
    assert "course_utils.authoring.watchdog --" in line and line.index("watchdog") < line.index("pytest")
    command = kernels.nbval_command()
    assert command[:4] == [sys.executable, "-m", "course_utils.authoring.watchdog", "--"]
    assert command[4:7] == [sys.executable, "-m", "pytest"]

    seen = []

    def fake_run(command, **kwargs):
        seen.append(command)
        return watchdog.Outcome(returncode=watchdog.HUNG, output="watchdog: attempt 2 of 2 hung", hangs=2,
                                attempts=2)

    monkeypatch.setattr(watchdog, "run", fake_run)
    stack = compat.STACKS[0]
    result = compat.run_lessons(compat.Result(stack=stack), tmp_path, lesson_sources()[:1])
    assert seen and "--nbval-lax" in seen[0]
    assert "exit 124" in result.error and "hung" in result.error and not result.ok
