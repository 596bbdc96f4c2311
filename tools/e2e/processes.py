"""Local processes of a run: each in its own process group, logging to a file, stopped as a group."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

LOOPBACK = "127.0.0.1"


class ComponentError(RuntimeError):
    """A component failed to start or to become ready: names it and quotes the tail of its log."""

    def __init__(self, component: str, problem: str, log: Path | None = None):
        self.component = component
        self.problem = problem
        self.log = log
        tail = log_tail(log) if log else ""
        where = f"\n--- last lines of {log} ---\n{tail}" if tail else ""
        super().__init__(f"{component}: {problem}{where}")


def log_tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of ``path`` ("" when it does not exist)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port free on ``host`` now (the OS's choice; bound and released)."""
    (port,) = free_ports(1, host)
    return port


def free_ports(count: int, host: str = LOOPBACK) -> list[int]:
    """``count`` distinct TCP ports free on ``host`` now: all held bound until each is chosen, then released. Ports
    bound and released one at a time can repeat (the OS may hand the one just released out again): a CI run had
    etcd's client and peer URLs on one port, and etcd exited with "bind: address already in use"."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in socks:
            sock.bind((host, 0))
        return [int(sock.getsockname()[1]) for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def check_loopback(address: str) -> str:
    """``address`` if it is an IPv4 loopback address (127.0.0.0/8), else ValueError: a run binds nothing else."""
    parts = address.split(".")
    if len(parts) != 4 or parts[0] != "127" or not all(p.isdigit() and 0 <= int(p) <= 255 for p in parts):
        raise ValueError(f"{address!r} is not a 127.x loopback address; the e2e harness binds loopback only")
    return address


@dataclass
class Process:
    """One running component: its command, its log file and its process (group)."""

    name: str
    argv: Sequence[str]
    log: Path
    env: Mapping[str, str] = field(default_factory=dict)
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> Process:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            out.write(f"$ {' '.join(self.argv)}\n".encode())
            out.flush()
            try:
                self.popen = subprocess.Popen(
                    list(self.argv),
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env={**os.environ, **self.env},
                    start_new_session=True,
                )
            except OSError as err:
                raise ComponentError(self.name, f"cannot start {self.argv[0]}: {err}", self.log) from err
        return self

    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def check_running(self) -> None:
        """ComponentError when the process has exited."""
        if self.popen is not None and self.popen.poll() is not None:
            raise ComponentError(self.name, f"exited with code {self.popen.returncode}", self.log)

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM to the process group, SIGKILL after ``grace`` seconds."""
        if self.popen is None or self.popen.poll() is not None:
            return
        _signal_group(self.popen.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.popen.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.popen.poll() is None:
            _signal_group(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=grace)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)
