"""kube-proxy's part for a Service that a local process serves: its ClusterIP ports forwarded to a pod's port.

The API server dials an admission webhook's Service at ``https://<clusterIP>:<port>`` (the ClusterIP resolver,
see :mod:`.controlplane`). ClusterIPs are loopback addresses here, so a listener on ``<clusterIP>:<port>`` relays
each connection, bytes unchanged (TLS passes through), to ``<pod IP>:<targetPort>`` of one of the Service's pods.
"""

from __future__ import annotations

import contextlib
import random
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .processes import check_loopback


def target_port(port: Mapping[str, Any], containers: Sequence[Mapping[str, Any]]) -> int:
    """A Service port's target on the pod: its number, or the container port of that name."""
    target = port.get("targetPort", port["port"])
    if isinstance(target, int) or str(target).isdigit():
        return int(target)
    for container in containers:
        for p in container.get("ports") or ():
            if p.get("name") == target:
                return int(p["containerPort"])
    raise ValueError(f"no container port named {target!r} for Service port {port.get('name') or port['port']}")


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for s in (sink, source):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


@dataclass
class Forwarder:
    """Listens on ``listen`` (host, port) and relays each connection to one of ``backends()`` (host, port)."""

    listen: tuple[str, int]
    backends: Callable[[], Sequence[tuple[str, int]]]
    _server: socket.socket | None = None
    _threads: list[threading.Thread] = field(default_factory=list)
    _stopped: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Forwarder:
        check_loopback(self.listen[0])
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(self.listen)
        server.listen(64)
        server.settimeout(0.5)
        self._server = server
        thread = threading.Thread(target=self._accept, name=f"forward-{self.listen}", daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def _accept(self) -> None:
        assert self._server is not None
        while not self._stopped.is_set():
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        backends = list(self.backends())
        if not backends:
            client.close()
            return
        try:
            upstream = socket.create_connection(random.choice(backends), timeout=10)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        threading.Thread(target=_pump, args=(client, upstream), daemon=True).start()
        _pump(upstream, client)
        client.close()
        upstream.close()

    def stop(self) -> None:
        self._stopped.set()
        if self._server is not None:
            self._server.close()
