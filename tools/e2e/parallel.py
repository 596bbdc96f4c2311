"""Several stacks' e2e runs at once: each stack a process of its own (``python -m tpu_serving_tools.e2e.run
<stack>``), at most ``jobs`` at a time.

A stack's run spends most of its time waiting on the control plane (a rollout's groups, a destroy's finalizers and
namespace deletion), so two at once on CI's 2 cores take less wall time than one after the other. Each run has its
own control plane on its own loopback addresses and free ports (:mod:`.addresses`, :mod:`.processes`), its own
work folder and its own ``PULUMI_HOME`` (:mod:`.stack_run`), so runs share nothing but the machine. A child's output
is printed whole when it ends, so that two stacks' lines never interleave. A SIGTERM to this process (CI's timeout)
reaches each running child as a SIGTERM, which stops its control plane (``run.py``'s handler), before this one ends.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

STOP_GRACE = 60.0
"""Seconds a child is given to stop its control plane after a SIGTERM, before it is killed."""


@dataclass
class Child:
    """One stack's run in a process of its own, its output going to a temporary file."""

    stack: str
    process: subprocess.Popen[bytes]
    output: IO[bytes]


def _start(stack: str, argv: Sequence[str]) -> Child:
    output = tempfile.TemporaryFile()  # noqa: SIM115 (closed by _finish, once the child ended)
    process = subprocess.Popen(list(argv), stdout=output, stderr=subprocess.STDOUT)
    return Child(stack, process, output)


def _finish(child: Child, echo: Callable[[str], None]) -> bool:
    """Print the ended child's output whole; whether its run passed (exit code 0)."""
    child.output.seek(0)
    echo(child.output.read().decode(errors="replace").rstrip("\n"))
    child.output.close()
    return child.process.returncode == 0


def _stop(children: Sequence[Child], grace: float) -> None:
    for child in children:
        if child.process.poll() is None:
            child.process.terminate()
    deadline = time.monotonic() + grace
    for child in children:
        try:
            child.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.process.kill()
            child.process.wait()


def run_stacks(
    stacks: Sequence[str],
    jobs: int,
    argv_for: Callable[[str], Sequence[str]],
    echo: Callable[[str], None] = print,
    poll: float = 0.5,
    grace: float = STOP_GRACE,
) -> list[str]:
    """Run ``argv_for(stack)`` for every stack, ``jobs`` at a time, in the order given; the stacks whose run failed
    (any exit code but 0), in the order they ended."""
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    waiting = list(stacks)
    running: list[Child] = []
    failed: list[str] = []
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                stack = waiting.pop(0)
                running.append(_start(stack, argv_for(stack)))
            ended = [c for c in running if c.process.poll() is not None]
            for child in ended:
                running.remove(child)
                if not _finish(child, echo):
                    failed.append(child.stack)
            if not ended:
                time.sleep(poll)
    finally:
        _stop(running, grace)
        for child in running:  # interrupted: what each stopped run had printed, to see where it was
            _finish(child, echo)
    return failed
