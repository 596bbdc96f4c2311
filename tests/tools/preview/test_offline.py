"""The offline run of a Pulumi program (tools/preview/offline.py): what it sends the recording monitor and what it leaves."""

import pulumi
from pulumi.runtime import resource as sdk_resource

from tpu_serving_tools.preview.offline import run_program


def test_offline_run_program_walks_no_stack_for_source_positions_and_puts_the_sdks_walk_back(monkeypatch):
    walks: list[str] = []
    original = sdk_resource._get_stack_trace

    def counted():  # stands in for the SDK's walk, as the SDK would call it
        walks.append("walk")
        return original()

    monkeypatch.setattr(sdk_resource, "_get_stack_trace", counted)

    def program() -> None:
        pulumi.ComponentResource("test:index:Thing", "thing")
        pulumi.export("answer", 42)

    plan = run_program(program, {}, project="p", stack="s")
    assert [r.type for r in plan.resources] == ["test:index:Thing"]
    assert plan.outputs == {"answer": 42}
    assert walks == []
    assert sdk_resource._get_stack_trace is counted


def test_offline_run_program_calls_the_monitor_on_the_loops_thread_and_puts_the_loops_executor_back(monkeypatch):
    import asyncio
    import concurrent.futures
    import threading

    from tpu_serving_tools.preview import offline

    loop = asyncio.get_event_loop_policy().get_event_loop()
    before = vars(loop).get("_default_executor")
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    loop.set_default_executor(pool)  # a pool of the loop's own, as a `pulumi up` in this process leaves it
    threads: list[threading.Thread] = []

    class Counted(offline.RecordingMonitor):
        def RegisterResource(self, request):  # noqa: N802 (the SDK's name)
            threads.append(threading.current_thread())
            return super().RegisterResource(request)

    monkeypatch.setattr(offline, "RecordingMonitor", Counted)

    def program() -> None:
        pulumi.ComponentResource("test:index:Thing", "thing")
        pulumi.ComponentResource("test:index:Thing", "other")

    try:
        plan = run_program(program, {}, project="p", stack="s")
        assert vars(loop)["_default_executor"] is pool
    finally:
        vars(loop)["_default_executor"] = before
        pool.shutdown()
    assert [r.name for r in plan.resources] == ["other", "thing"]
    assert len(threads) == 3 and set(threads) == {threading.current_thread()}  # the stack, then each component


def test_offline_run_program_refuses_a_urn_registered_twice():
    """Library review 4, M7: two components of one name went through the offline preview (the mocks allow it) and
    the check then blamed "2 stacks"; the engine refuses the second registration."""
    import pulumi
    import pulumi_kubernetes as k8s
    import pytest

    from tpu_serving_tools.preview.offline import run_program

    def program() -> None:
        k8s.core.v1.ConfigMap("a", data={"x": "1"})
        k8s.core.v1.ConfigMap("a", data={"x": "2"})

    with pytest.raises(
        pulumi.RunError, match=r"^Duplicate resource URN '.*ConfigMap::a'; try giving it a unique name$"
    ):
        run_program(program, {}, project="p", stack="s")


def test_offline_preview_stacks_says_a_program_error_in_one_line(tmp_path, capsys):
    """Library review 4, m3: ``tpu-serving check`` printed the program's traceback where ``preview`` says one line."""
    from tpu_serving_tools.preview.offline import preview_stacks

    (tmp_path / "Pulumi.yaml").write_text("name: e\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text("import pulumi\nx = undefined_name\n")
    assert preview_stacks(tmp_path, ["dev"]) is None
    err = capsys.readouterr().err
    assert "error: dev: __main__.py:2: NameError: name 'undefined_name' is not defined" in err
    assert "Traceback" not in err


def test_run_program_keeps_the_programs_warnings_for_the_summary():
    """New-user review 17, m11: the component's ``Caution:`` warning was printed as the program ran, and again by the
    summary; the run keeps what the program logs, and the summary says it once."""
    import pulumi

    from tpu_serving_tools.preview.offline import run_program

    def program() -> None:
        pulumi.log.warn("Caution: one")
        pulumi.log.info("not kept")
        pulumi.log.warn("look at this")

    plan = run_program(program, {}, project="p", stack="s")
    assert plan.warnings == ["Caution: one", "look at this"]
