"""``collected_outside_the_run`` (tools/e2e/stack_run.py): an earlier program's unfinished coroutine is closed
before an engine command starts, where no event loop runs, and the collector stays off while the command's inline
program runs, so no such coroutine is closed inside that program's loop."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Generator
from typing import Any

import pytest

from tpu_serving_tools.e2e.stack_run import collected_outside_the_run


class _Suspend:
    def __await__(self) -> Generator[None, None, None]:
        yield


async def _left_running(closed: list[str]) -> None:
    """An SDK coroutine a failed ``up`` left suspended: its ``finally`` reads the running loop, as
    ``_CallbackServicer.shutdown`` does."""
    try:
        await _Suspend()
    finally:
        try:
            asyncio.get_running_loop()
            closed.append("inside a running loop")
        except RuntimeError:
            closed.append("where no loop runs")


def _garbage_coroutine(closed: list[str]) -> None:
    """A suspended coroutine reachable only through a cycle: only the collector closes it."""
    coroutine = _left_running(closed)
    coroutine.send(None)
    box: dict[str, Any] = {"coroutine": coroutine}
    box["box"] = box


@pytest.fixture
def collector_off() -> Generator[None, None, None]:
    was = gc.isenabled()
    gc.disable()
    yield
    if was:
        gc.enable()


@pytest.mark.usefixtures("collector_off")
def test_collected_outside_the_run_closes_left_coroutines_before_the_command() -> None:
    closed: list[str] = []
    _garbage_coroutine(closed)
    assert closed == []
    gc.enable()
    with collected_outside_the_run():
        assert closed == ["where no loop runs"]


def test_collected_outside_the_run_keeps_the_collector_off_during_the_command() -> None:
    assert gc.isenabled()
    with collected_outside_the_run():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_collected_outside_the_run_turns_the_collector_back_on_when_the_command_fails() -> None:
    with pytest.raises(RuntimeError, match="up failed"), collected_outside_the_run():
        raise RuntimeError("up failed")
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_off")
def test_collected_outside_the_run_leaves_a_collector_that_was_off_off() -> None:
    with collected_outside_the_run():
        pass
    assert not gc.isenabled()
