"""course_utils.authoring.jobs: make assets' scheduler of jobs that depend on one another."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from course_utils.authoring import jobs
from course_utils.authoring.jobs import Job


class Log:
    """Job functions that record when they start and end, and how many run at once."""

    def __init__(self):
        self.events, self.lock, self.running, self.most = [], threading.Lock(), 0, 0

    def job(self, name, seconds=0.02, fails=False):
        def function():
            with self.lock:
                self.events.append(("start", name))
                self.running += 1
                self.most = max(self.most, self.running)
            time.sleep(seconds)
            with self.lock:
                self.running -= 1
                self.events.append(("end", name))
            if fails:
                raise RuntimeError(f"{name} failed")
            return name.upper()
        return function

    def when(self, kind, name):
        return self.events.index((kind, name))


def test_jobs_start_after_those_they_follow_and_at_most_workers_at_once():
    log = Log()
    planned = [
        Job("teacher", "teacher", log.job("teacher", 0.3)),
        Job("mlm-only", "students", log.job("mlm-only", 0.1)),
        Job("few-label", "task", log.job("few-label"), after=("mlm-only",)),
        Job("distilled", "students", log.job("distilled"), after=("teacher",)),
        Job("sweep", "sweep", log.job("sweep"), after=("distilled",)),
        Job("plateau", "plateau", log.job("plateau"), after=("distilled",)),
    ]
    seen = []
    with ThreadPoolExecutor(max_workers=4) as pool:  # more threads than workers: the runner must limit
        done = jobs.run(planned, pool, workers=2, on_done=lambda job, result, seconds: seen.append(job.name))
    assert {name: result for name, (result, _) in done.items()} == {job.name: job.name.upper() for job in planned}
    assert all(seconds >= 0.02 for _, seconds in done.values())
    assert log.most == 2 and sorted(seen) == sorted(done)
    for job in planned:
        for name in job.after:
            assert log.when("end", name) < log.when("start", job.name), (name, job.name)
    # the jobs that need no teacher ran beside it, not after it
    assert log.when("end", "few-label") < log.when("end", "teacher")


def test_of_the_ready_jobs_the_earliest_in_the_list_starts_first():
    log = Log()
    planned = [Job("first", "s", log.job("first", 0.1))] + [Job(name, "s", log.job(name)) for name in "abcd"]
    with ThreadPoolExecutor(max_workers=1) as pool:
        jobs.run(planned, pool, workers=1)
    assert [name for kind, name in log.events if kind == "start"] == ["first", "a", "b", "c", "d"]


def test_a_failing_job_stops_the_run_and_its_error_is_raised():
    log = Log()
    planned = [Job("breaks", "s", log.job("breaks", fails=True)), Job("later", "s", log.job("later"), after=("breaks",))]
    with ThreadPoolExecutor(max_workers=2) as pool, pytest.raises(RuntimeError, match="breaks failed"):
        jobs.run(planned, pool)
    assert ("start", "later") not in log.events


@pytest.mark.parametrize("planned, message", [
    ([Job("a", "s", print), Job("a", "s", print)], "expected unique job names, got 'a' twice"),
    ([Job("a", "s", print, after=("b",)), Job("b", "s", print)], "expected job 'a' to follow earlier jobs"),
    ([Job("a", "s", print, after=("nowhere",))], r"got \['nowhere'\]"),
])
def test_a_plan_that_cannot_run_is_refused_before_anything_starts(planned, message):
    with pytest.raises(ValueError, match=message):
        jobs.run(planned, pool=None)


def test_a_job_runs_on_its_thread_count_which_is_restored_even_when_it_fails():
    before = torch.get_num_threads()
    assert jobs.timed(torch.get_num_threads, (), 1)[0] == 1
    with pytest.raises(ZeroDivisionError):
        jobs.timed(lambda: 1 / 0, (), 1)
    assert torch.get_num_threads() == before


def test_workers_are_fresh_processes_whose_threads_wait_passively(monkeypatch):
    """Two workers side by side: their OpenMP threads must not spin (OMP_WAIT_POLICY=PASSIVE)."""
    monkeypatch.setenv("OMP_WAIT_POLICY", "unset")
    monkeypatch.delenv("OMP_WAIT_POLICY")  # and put back as it was after the test
    planned = [Job("policy", "s", os.getenv, ("OMP_WAIT_POLICY",)), Job("pid", "s", os.getpid)]
    with jobs.worker_pool() as pool:
        done = jobs.run(planned, pool)
    assert done["policy"][0] == "PASSIVE"
    assert done["pid"][0] != os.getpid()


def test_replay_plays_the_schedule_on_a_clock():
    from course_utils.authoring.jobs import Job, replay

    def job(name, after=()):
        return Job(name, "stage", print, after=tuple(after))

    # a long job on one worker while the other runs what needs nothing, then what waited for it
    jobs = [job("teacher"), job("free 1"), job("free 2"), job("student", ["teacher"]), job("short", ["teacher"])]
    seconds = {"teacher": 10, "free 1": 4, "free 2": 4, "student": 5, "short": 2}
    assert replay(jobs, seconds) == 15  # teacher 0-10, free 0-4-8, student 10-15, short 10-12
    assert replay(jobs, seconds, workers=1) == 25  # one after the other
    assert replay(jobs[:3], seconds) == 10
    with pytest.raises(ValueError, match="the seconds of every job"):
        replay(jobs, {"teacher": 1})
    with pytest.raises(ValueError, match="expected workers"):
        replay(jobs, seconds, workers=0)
