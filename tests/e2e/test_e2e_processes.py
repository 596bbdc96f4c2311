"""The e2e harness's processes: a process group is stopped whole, a failure quotes the log, the run's timeout stops
everything. These spawn processes (``sleep``), hence ``slow``; they need no toolchain."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tpu_serving_tools.e2e.controlplane import ControlPlane
from tpu_serving_tools.e2e.processes import ComponentError, Process

pytestmark = pytest.mark.slow


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_e2e_process_group_is_stopped_whole(tmp_path):
    child_file = tmp_path / "child"
    # Written elsewhere and renamed, so the file is never seen empty (the shell's `>` creates it before `echo` writes).
    script = f"sleep 30 & echo $! > {child_file}.part && mv {child_file}.part {child_file}; wait"
    proc = Process("pair", ["sh", "-c", script], tmp_path / "pair.log").start()
    deadline = time.monotonic() + 5
    while not child_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(child_file.read_text())
    proc.stop(grace=2)
    assert not proc.running()
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child), "the group's other process outlived the stop"


def test_e2e_exited_component_error_quotes_its_log(tmp_path):
    proc = Process("broken", ["sh", "-c", "echo flag --frobnicate unknown; exit 3"], tmp_path / "broken.log").start()
    assert proc.popen is not None
    proc.popen.wait(timeout=5)
    with pytest.raises(ComponentError) as err:
        proc.check_running()
    assert str(err.value).startswith("broken: exited with code 3\n--- last lines of")
    assert "flag --frobnicate unknown" in str(err.value)


def test_e2e_run_timeout_stops_every_process(tmp_path):
    cp = ControlPlane(tools={}, run_timeout=0.5)
    cp.directory = tmp_path
    cp.arm_timer()
    proc = cp.spawn("sleeper", ["sleep", "30"])
    deadline = time.monotonic() + 5
    while proc.running() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not proc.running()
    assert (tmp_path / "TIMED-OUT").read_text() == "the run passed its 0 s; stopped\n"


def test_e2e_processes_free_ports_are_distinct_while_chosen(monkeypatch):
    """A CI run started etcd with its client and peer URLs on one port ("bind: address already in use"): ports bound and
    released one at a time can repeat, as an OS that hands out the port just released does. Here every bind gets the
    lowest port no open socket holds: released one by one, six draws are one port; held together, six."""
    from tpu_serving_tools.e2e import processes
    from tpu_serving_tools.e2e.controlplane import Ports

    held: set[int] = set()

    class ReusingSocket:
        def __init__(self, *args: object) -> None:
            self.port = 0

        def bind(self, address: tuple[str, int]) -> None:
            self.port = min(p for p in range(40000, 40100) if p not in held)
            held.add(self.port)

        def getsockname(self) -> tuple[str, int]:
            return ("127.0.0.1", self.port)

        def close(self) -> None:
            held.discard(self.port)

        def __enter__(self) -> ReusingSocket:
            return self

        def __exit__(self, *exc: object) -> None:
            self.close()

    monkeypatch.setattr(processes.socket, "socket", ReusingSocket)
    assert processes.free_ports(6) == [40000, 40001, 40002, 40003, 40004, 40005]
    assert len(set(vars(Ports.pick()).values())) == 6
    assert not held  # every socket released
