"""Several stacks' e2e runs at once: each stack a process of its own (``python -m tpu_serving_tools.e2e.command
<stack>``), at most ``jobs`` at a time.

A stack's run spends most of its time waiting on the control plane (a rollout's groups, a destroy's finalizers and
namespace deletion), so two at once may take less wall time than one after the other. Each run has its own control
plane on its own loopback addresses and free ports (:mod:`.addresses`, :mod:`.processes`), its own work folder and
its own ``PULUMI_HOME`` (:mod:`.stack_run`), so runs share nothing but the machine. Each child is a
:class:`~.processes.Process` (its own process group, its output in ``<logs>/<stack>.log``, printed whole when it
ends, so that two stacks' lines never interleave). When this process is interrupted (``run.py`` turns CI's SIGTERM
into one), each running child gets a SIGTERM, which stops its control plane, and its log is printed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .processes import Process

STOP_GRACE = 60.0
"""Seconds a child is given to stop its control plane after a SIGTERM, before its process group is killed."""


def _finish(child: Process, echo: Callable[[str], None]) -> bool:
    """Print the ended child's log whole; whether its run passed (exit code 0)."""
    echo(child.log.read_text(errors="replace").rstrip("\n"))
    return child.popen is not None and child.popen.returncode == 0


def run_stacks(
    stacks: Sequence[str],
    jobs: int,
    argv_for: Callable[[str], Sequence[str]],
    logs: Path,
    echo: Callable[[str], None] = print,
    poll: float = 0.5,
    grace: float = STOP_GRACE,
) -> list[str]:
    """Run ``argv_for(stack)`` for every stack, ``jobs`` at a time, in the order given, each logging to
    ``logs/<stack>.log``; the stacks whose run failed (any exit code but 0), in the order they ended."""
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    waiting = list(stacks)
    running: list[Process] = []
    failed: list[str] = []
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                stack = waiting.pop(0)
                log = logs / f"{stack}.log"
                log.unlink(missing_ok=True)  # an earlier run's
                running.append(Process(stack, argv_for(stack), log).start())
            ended = [c for c in running if not c.running()]
            for child in ended:
                running.remove(child)
                if not _finish(child, echo):
                    failed.append(child.name)
            if not ended:
                time.sleep(poll)
    finally:
        for child in running:  # interrupted: each run stopped, and what it had printed, to see where it was
            child.stop(grace)
            _finish(child, echo)
    return failed
