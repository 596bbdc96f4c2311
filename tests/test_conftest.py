"""tests/conftest.py's hooks, run by an inner pytest session (pytester) on planted tests."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT

PLANTED = """
import asyncio
import gc

import pytest


async def run_in_stack():
    try:
        await asyncio.sleep(0)
    finally:
        asyncio.get_running_loop()  # raises outside a loop, as the SDK's _shutdown_callbacks does


async def run_engine():
    try:
        await asyncio.sleep(0)
    finally:
        asyncio.get_running_loop()


def leave(make):
    coroutine = make()
    coroutine.send(None)  # suspended at the sleep, never finished
    del coroutine
    gc.collect()


@pytest.mark.e2e
def test_sdk_coroutine_in_e2e():
    leave(run_in_stack)


@pytest.mark.e2e
def test_other_coroutine_in_e2e():
    leave(run_engine)


def test_sdk_coroutine_outside_e2e():
    leave(run_in_stack)
"""


LEFT_TO_THE_END = """
from test_planted import run_in_stack

import pytest

KEPT = []


@pytest.mark.e2e
def test_leaves_a_coroutine_for_the_sessions_last_collection():
    coroutine = run_in_stack()
    coroutine.send(None)
    cycle = [coroutine]
    cycle.append(cycle)  # only the collector frees it: at the session's end, after the test's own check
    KEPT.append(cycle)
    KEPT.clear()
"""


def test_conftest_ignores_only_the_sdks_inline_program_coroutines_in_e2e_tests(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("from tests.conftest import pytest_collection_modifyitems  # noqa: F401\n")
    pytester.makeini(
        "[pytest]\nmarkers =\n    e2e: planted\nfilterwarnings =\n    error::pytest.PytestUnraisableExceptionWarning\n"
    )
    pytester.makepyfile(test_planted=PLANTED)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    outcomes = {
        r.head_line: r.outcome for r in result.reprec.getreports("pytest_runtest_logreport") if r.when == "call"
    }
    assert outcomes == {
        "test_sdk_coroutine_in_e2e": "passed",
        "test_other_coroutine_in_e2e": "failed",
        "test_sdk_coroutine_outside_e2e": "failed",
    }, result.stdout.str()
    result.stdout.fnmatch_lines(["*Exception ignored in: <coroutine object run_engine at*"])


@pytest.mark.slow  # a pytest process of its own: the last collection runs as that process ends
@pytest.mark.parametrize(("markexpr", "ret"), [("e2e", pytest.ExitCode.OK), ("", pytest.ExitCode.TESTS_FAILED)])
def test_conftest_ignores_the_sdks_coroutine_at_the_end_of_an_e2e_session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, markexpr: str, ret: pytest.ExitCode
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeconftest("from tests.conftest import pytest_collection_modifyitems, pytest_configure  # noqa: F401\n")
    pytester.makeini(
        "[pytest]\nmarkers =\n    e2e: planted\nfilterwarnings =\n    error::pytest.PytestUnraisableExceptionWarning\n"
    )
    pytester.makepyfile(test_planted=PLANTED, test_last=LEFT_TO_THE_END)
    args = ["-p", "no:cacheprovider", "test_last.py", *(["-m", markexpr] if markexpr else [])]
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == ret, result.stdout.str() + result.stderr.str()
