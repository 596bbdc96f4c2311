"""tools/e2e/parallel.py: several stacks' e2e runs at once, each a process of its own."""

import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from tpu_serving_tools.e2e.parallel import run_stacks


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_run_stacks_returns_the_stacks_whose_process_failed(tmp_path: Path):
    exits = {"a": 0, "b": 3, "c": 0, "d": 1}
    failed = run_stacks(
        list(exits), 2, lambda s: python(f"raise SystemExit({exits[s]})"), tmp_path, echo=lambda _: None
    )
    assert sorted(failed) == ["b", "d"]


@pytest.mark.slow  # four child processes, each sleeping 1.5 s, two at once then one at a time: 4.7 s (make test-slow)
def test_run_stacks_runs_jobs_at_once(tmp_path: Path):
    def sleep(stack: str) -> list[str]:
        return python("import time; time.sleep(1.5)")

    start = time.monotonic()
    run_stacks(["a", "b"], 2, sleep, tmp_path, echo=lambda _: None, poll=0.05)
    together = time.monotonic() - start
    start = time.monotonic()
    run_stacks(["a", "b"], 1, sleep, tmp_path, echo=lambda _: None, poll=0.05)
    one_by_one = time.monotonic() - start
    assert together < 2.5 <= one_by_one


def test_run_stacks_prints_each_childs_output_whole(tmp_path: Path):
    code = "import sys, time\nfor i in range(5):\n    print('{s}', i, flush=True); time.sleep(0.05)\nprint('err {s}', file=sys.stderr)"
    argv = {s: python(code.format(s=s)) for s in ("a", "b")}
    printed: list[str] = []
    run_stacks(["a", "b"], 2, argv.__getitem__, tmp_path, echo=printed.append, poll=0.01)
    assert sorted(printed) == sorted(
        "\n".join([f"$ {' '.join(argv[s])}", *(f"{s} {i}" for i in range(5)), f"err {s}"]) for s in ("a", "b")
    )


def test_run_stacks_logs_each_stack_afresh(tmp_path: Path):
    (tmp_path / "a.log").write_text("an earlier run's\n")
    run_stacks(["a"], 2, lambda s: python("print('now')"), tmp_path, echo=lambda _: None)
    assert (tmp_path / "a.log").read_text().splitlines()[1:] == ["now"]


def test_run_stacks_refuses_fewer_than_one_job(tmp_path: Path):
    with pytest.raises(ValueError, match="at least 1"):
        run_stacks(["a"], 0, lambda s: python(""), tmp_path)


def test_run_stacks_stops_its_children_when_interrupted(tmp_path: Path):
    # A child that records the SIGTERM it gets; the parent interrupted (as run.py's SIGTERM handler does) while both
    # children run must pass them the SIGTERM and wait for them.
    code = (
        "import signal, sys, time, pathlib\n"
        "def stop(*_):\n    pathlib.Path(sys.argv[1]).write_text('stopped'); sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        "print('running', flush=True)\n"  # before the mark the parent waits for: its log holds it when interrupted
        "pathlib.Path(sys.argv[1] + '.up').write_text('up')\n"
        "time.sleep(30)\n"
    )
    marks = {s: tmp_path / s for s in ("a", "b")}
    assert threading.main_thread() is threading.current_thread()

    def interrupt_when_up() -> None:
        while not all(Path(f"{m}.up").exists() for m in marks.values()):
            time.sleep(0.02)
        signal.raise_signal(signal.SIGINT)

    threading.Thread(target=interrupt_when_up, daemon=True).start()
    printed: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        run_stacks(
            list(marks), 2, lambda s: [*python(code), str(marks[s])], tmp_path / "logs", echo=printed.append, poll=0.02
        )
    assert {s: m.read_text() for s, m in marks.items()} == {"a": "stopped", "b": "stopped"}
    assert printed == [f"$ {' '.join([*python(code), str(marks[s])])}\nrunning" for s in marks]
