"""Jobs that depend on one another, run on a few worker processes: ``make assets``' scheduler.

A :class:`Job` names the jobs it must follow (``after``) and the number of torch threads it runs
on. :func:`run` starts each job as soon as those it follows are done and a worker is free, the
earliest ready job of the list first (the list is the priority: long chains first, short jobs
last, so that the workers finish together). A job gives the same bits in any worker and at any
time, since it seeds itself and sets its own thread count: the schedule changes only how long
the whole takes. On 2 cores, two one-thread jobs side by side do about 1.9 times the work of
one, and a two-thread job about 1.6 times (a student's fine-tuning step, batch 64: 0.113 s on
one thread alone, 0.116 s each for two side by side, 0.072 s on two threads), so a one-thread
job that would leave a core idle (the teacher's pre-training) runs beside the jobs that do not
need it.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass
from typing import Callable

WORKERS = 2


@dataclass(frozen=True)
class Job:
    """``function(*args)`` on ``threads`` torch threads, once every job named in ``after`` is done.

    ``function`` is a module-level function (a worker process imports it by name) and its result
    is sent back from the worker (it must pickle). ``stage`` is the ``make assets`` stage the job
    belongs to, which adds its time to that stage's.
    """

    name: str
    stage: str
    function: Callable
    args: tuple = ()
    threads: int = 1
    after: tuple[str, ...] = ()


def worker_pool(count: int = WORKERS):
    """A pool of ``count`` fresh processes (spawned, so that no state of this process, such as its
    torch threads or random generators, reaches them).

    Their OpenMP threads wait passively (``OMP_WAIT_POLICY=PASSIVE``, unless set otherwise): a
    spinning thread of one worker would take the core that another worker's thread needs (two
    two-thread runs side by side took twice as long as one alone). It changes how threads wait,
    not what they compute.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # read by each worker as it starts
    return ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("spawn"))


def timed(function: Callable, args: tuple, threads: int):
    """``(function(*args), seconds)``, computed on ``threads`` torch threads (restored after)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        start = time.perf_counter()
        result = function(*args)
        return result, time.perf_counter() - start
    finally:
        torch.set_num_threads(before)


def check(jobs: list[Job]) -> None:
    """Raise ``ValueError`` unless the names are unique and every ``after`` names an earlier job."""
    seen: set[str] = set()
    for job in jobs:
        if job.name in seen:
            raise ValueError(f"expected unique job names, got {job.name!r} twice")
        unknown = [name for name in job.after if name not in seen]
        if unknown:
            raise ValueError(f"expected job {job.name!r} to follow earlier jobs of the list, got {unknown}")
        seen.add(job.name)


def run(jobs: list[Job], pool, workers: int = WORKERS, on_done: Callable | None = None) -> dict:
    """Run ``jobs`` on ``pool``, at most ``workers`` at a time; ``{name: (result, seconds)}``.

    A job starts once the jobs it follows are done; among the ready ones, the earliest in
    ``jobs``. ``on_done(job, result, seconds)`` is called as each one ends. The first job that
    raises stops the run: no further job starts, and the error is raised here.
    """
    check(jobs)
    waiting, running, done = list(jobs), {}, {}
    while waiting or running:
        for job in [j for j in waiting if all(name in done for name in j.after)]:
            if len(running) == workers:
                break
            waiting.remove(job)
            running[pool.submit(timed, job.function, job.args, job.threads)] = job
        finished, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in finished:
            job = running.pop(future)
            done[job.name] = future.result()
            if on_done is not None:
                on_done(job, *done[job.name])
    return done


def replay(jobs: list[Job], seconds: dict[str, float], workers: int = WORKERS) -> float:
    """The wall time :func:`run` would take for ``jobs`` if each took ``seconds[job.name]``: the same
    rule (a job starts once those it follows are done and a worker is free, the earliest ready job of
    the list first), played on a clock instead of on processes. What a cut would save is read from
    the job seconds of a run that had every job (``report.json``'s ``job_seconds``)."""
    check(jobs)
    missing = [job.name for job in jobs if job.name not in seconds]
    if missing:
        raise ValueError(f"expected the seconds of every job, got none for {missing[:3]}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"expected workers, a positive int, got {workers!r}")
    waiting, running, done, now = list(jobs), {}, set(), 0.0
    while waiting or running:
        for job in [j for j in waiting if all(name in done for name in j.after)]:
            if len(running) == workers:
                break
            waiting.remove(job)
            running[job.name] = now + float(seconds[job.name])
        name = min(running, key=running.get)  # the next to end
        now = running.pop(name)
        done.add(name)
    return now
