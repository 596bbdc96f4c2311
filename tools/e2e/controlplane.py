"""A real Kubernetes control plane on loopback, from the binaries of the pinned Go modules (``make e2e``).

``ControlPlane`` starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (its in-cluster
controller mode: it plays the kubelets of the Nodes that carry :data:`KWOK_LABEL`) in a fresh temporary
directory, on 127.x addresses and free ports only, waits for each to be ready, writes an admin kubeconfig, logs
each process to ``<dir>/logs/<component>.log``, and stops them all (process groups) on exit, on a timeout of the
whole run, or when the interpreter exits; the directory is removed unless ``keep``.

Addresses: all in 127.0.0.0/8, so every one of them is this machine; each run claims its own block
``127.<b>.0.0/16`` (:mod:`.addresses`): Services take ClusterIPs from ``127.<b>.208.0/20``, Node ``n`` has
InternalIP ``127.<b>.250.<n+1>`` and ``spec.podCIDR`` ``127.<b>.<n>.0/24``. kwok gives a pod the next free address
of its node's ``spec.podCIDRs`` or ``spec.podCIDR`` (``--cidr`` when the node has none): v0.7.0
``pkg/kwok/controllers/pod_controller.go`` 591-621 (``funcPodIPWith``; its pool starts at the CIDR's own address,
``utils.go`` 64-77), v0.8.0 ``pod_controller.go`` 745-815 (``funcPodIPWith``, ``funcPodIPsWith``; ``utils.go``
56-68 starts at the next address). The default pod Stage asks for it (``kustomize/stage/pod/fast/pod-ready.yaml``:
``PodIPWith`` in v0.7.0, ``PodIPsWith`` in v0.8.0). So a process can listen on its pod's IP.

The Stages are read from the kwok module of the binary's own version (``kwok --version``), in the Go module cache.

Webhooks: the brief was to dial webhooks at the Service's endpoint (``--enable-aggregator-routing=true``). In
k8s.io/kubernetes v1.36.3 that flag does switch the admission webhooks' service resolver
(``cmd/kube-apiserver/app/server.go`` 221 and 283-303: ``NewEndpointServiceResolver`` instead of
``NewClusterIPServiceResolver``, k8s.io/kube-aggregator v0.36.3 ``pkg/apiserver/resolvers.go`` 33-47; handed to
the webhook plugins through ``pkg/controlplane/apiserver/config.go`` 369 and
``pkg/controlplane/apiserver/admission/config.go`` 45; k8s.io/apiserver v0.36.3 ``pkg/util/proxy/proxy.go`` 59-127
picks a ready address of the Service's EndpointSlices). But an EndpointSlice
may not hold a loopback address (``pkg/apis/core/validation/validation.go`` 8433-8434, applied to slices by
``pkg/apis/discovery/validation/validation.go`` 123), so with 127.x pod IPs no endpoint ever exists. The harness
keeps the default ClusterIP resolver (``proxy.go`` 129-156: ``https://<clusterIP>:<service port>``) with the
ClusterIPs on loopback, and :mod:`.serviceproxy` forwards a controller's Service port to its pod's port, as
kube-proxy would.
"""

from __future__ import annotations

import atexit
import functools
import http.client
import json
import os
import re
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from .addresses import AddressBlock, claim
from .kube import Kube, wait_for
from .pki import KeyPair, Pki, make_pki
from .processes import LOOPBACK, ComponentError, Process, free_ports

KWOK_LABEL = ("kwok.x-k8s.io/node", "fake")
"""The label that hands a Node to kwok (``--manage-nodes-with-label-selector``: a label selector is the API server's
to apply, so a Node labelled after its creation enters kwok's watch then)."""
KWOK_VERSION = re.compile(r"\bversion (v\d+\.\d+\.\d+\S*)")
"""The version in ``kwok --version`` (``kwok version v0.7.0 go1.26.8 (linux/amd64)``)."""
KWOK_STAGES = (
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
)
"""kwok's default Stages (``kustomize/stage/fast/kustomization.yaml``: node fast, node heartbeat-with-lease,
pod fast): a Node becomes Ready, keeps its Lease; a pod becomes Running and Ready with an IP, a pod whose
containers all end completes, a deleted pod goes."""
GKE_ADMISSION_PLUGINS = "ExtendedResourceToleration"
"""Admission plugins GKE enables beyond kube-apiserver's defaults, as far as a source here shows."""
SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
"""The namespaces the API server creates itself (k8s.io/kubernetes v1.36.3 ``pkg/controlplane/apiserver/options/
options.go`` l.131 and ``cmd/kube-apiserver/app/options/options.go`` l.94, made by the controller that
``pkg/controlplane/apiserver/server.go`` l.143-148 starts), in each of which kube-controller-manager's ServiceAccount controller then creates the ``default``
ServiceAccount (``pkg/controller/serviceaccount/serviceaccounts_controller.go`` l.56-61). The control plane is
ready only once they exist: a run that takes its inventory before they appear finds them "left" after destroy."""
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
DEFAULT_TOOLCHAIN = Path("build") / "e2e" / "toolchain.json"
"""What ``make e2e-tools`` writes (``python -m tpu_serving_tools.e2e.toolchain``), under the repository's root."""
TOOLCHAIN_ENV = "TPU_SERVING_E2E_TOOLCHAIN"


def toolchain_file() -> Path:
    """Where the toolchain's JSON is: ``$TPU_SERVING_E2E_TOOLCHAIN``, or ``build/e2e/toolchain.json`` under the
    working directory."""
    return Path(os.environ.get(TOOLCHAIN_ENV) or DEFAULT_TOOLCHAIN)


def _toolchain(path: Path | None) -> dict[str, Any]:
    data = json.loads((path or toolchain_file()).read_text())
    return data if isinstance(data, dict) else {}


def load_toolchain(path: Path | None = None) -> dict[str, Path]:
    """Binary name -> path, from the toolchain's JSON (its ``binaries``; a flat ``{"name": "/path"}`` is read too).
    FileNotFoundError when the file does not exist."""
    data = _toolchain(path)
    binaries = data.get("binaries", data)
    return {name: Path(where) for name, where in binaries.items() if isinstance(where, str)}


def toolchain_files(path: Path | None = None) -> dict[str, Any]:
    """The toolchain's other files (its ``files``: ``kwok-stages``, ``jobset-manifests``, ...); {} without."""
    files = _toolchain(path).get("files", {})
    return files if isinstance(files, dict) else {}


def toolchain_stages(path: Path | None = None) -> list[Path]:
    """The kwok Stage files the toolchain copied from kwok's module (node Stages, then pod Stages)."""
    stages = toolchain_files(path).get("kwok-stages") or {}
    return [Path(f) for kind in ("node", "pod") for f in stages.get(kind, ())]


def go_mod_dir(module: str, version: str) -> Path:
    """The module's directory in the Go module cache (``go mod download -json``: fetched when missing; once a
    process, failures included: a module the proxy refuses is not asked for again). FileNotFoundError when it
    cannot be had."""
    where, problem = _go_mod_download(module, version)
    if where is None:
        raise FileNotFoundError(f"go mod download {module}@{version}: {problem}")
    return where


@functools.cache
def _go_mod_download(module: str, version: str) -> tuple[Path | None, str]:
    proc = subprocess.run(
        ["go", "mod", "download", "-json", f"{module}@{version}"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "GOFLAGS": "-mod=mod"},
    )
    info = json.loads(proc.stdout or "{}")
    if proc.returncode != 0 or "Dir" not in info:
        return None, str(info.get("Error") or proc.stderr.strip())
    return Path(info["Dir"]), ""


def write_kubeconfig(path: Path, server: str, ca: Path, user: KeyPair | None = None, token: str | None = None) -> Path:
    """A kubeconfig for ``server`` as a client certificate's user or a token's (JSON is YAML)."""
    creds: dict[str, str] = {"token": token} if token else {}
    if user:
        creds = {"client-certificate": str(user.cert), "client-key": str(user.key)}
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": {"server": server, "certificate-authority": str(ca)}}],
        "users": [{"name": "e2e", "user": creds}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "e2e"}}],
        "current-context": "e2e",
    }
    path.write_text(json.dumps(config, indent=1))
    path.chmod(0o600)
    return path


def _http_ok(url: str, *, tls: bool) -> bool:
    """GET ``url`` on loopback answers 200 (a component's own /healthz, its self-signed certificate unchecked)."""
    host, _, rest = url.partition("//")[2].partition("/")
    hostname, _, port = host.partition(":")
    conn: http.client.HTTPConnection
    if tls:
        conn = http.client.HTTPSConnection(hostname, int(port), timeout=5, context=ssl._create_unverified_context())
    else:
        conn = http.client.HTTPConnection(hostname, int(port), timeout=5)
    try:
        conn.request("GET", "/" + rest)
        return conn.getresponse().status == 200
    finally:
        conn.close()


@dataclass(frozen=True)
class Ports:
    etcd_client: int
    etcd_peer: int
    apiserver: int
    controller_manager: int
    scheduler: int
    kwok: int

    @classmethod
    def pick(cls) -> Ports:
        return cls(*free_ports(6))


@dataclass
class ControlPlane:
    """The control plane as a context manager: ``with ControlPlane() as cp: cp.kube.create(...)``.

    ``tools``: tool name -> binary (default: the toolchain's JSON); ``keep``: leave the directory (also
    ``TPU_SERVING_E2E_KEEP=1``); ``run_timeout``: seconds after which everything is stopped whatever runs;
    ``ready_timeout``: seconds each component has to become ready."""

    tools: Mapping[str, Path] | None = None
    keep: bool = False
    run_timeout: float = 1800.0
    ready_timeout: float = 90.0
    stages: Sequence[Path] = ()
    """kwok's Stage files; default: the toolchain's (``kwok-stages``) when ``tools`` come from it, else the files
    of :data:`KWOK_STAGES` in the kwok module of :attr:`kwok_version`."""
    kwok_version: str = ""
    """The kwok module whose Stages are read when no Stage files are given; default: the kwok binary's version."""
    directory: Path = field(init=False)
    ports: Ports = field(init=False)
    pki: Pki = field(init=False)
    kube: Kube = field(init=False)
    kubeconfig: Path = field(init=False)
    processes: list[Process] = field(init=False, default_factory=list)
    stop_hooks: list[Callable[[], None]] = field(init=False, default_factory=list)
    addresses: AddressBlock = field(init=False)
    _timer: threading.Timer | None = field(init=False, default=None)
    _lock: threading.RLock = field(init=False, default_factory=threading.RLock)
    started_in: float = field(init=False, default=0.0)

    @property
    def server(self) -> str:
        return f"https://{LOOPBACK}:{self.ports.apiserver}"

    # Lifecycle ----------------------------------------------------------------------------------------------
    def __enter__(self) -> ControlPlane:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        began = time.monotonic()
        if self.tools is None:
            self.tools = load_toolchain()
            self.stages = self.stages or toolchain_stages()
        self.tools = dict(self.tools)
        missing = [c for c in COMPONENTS if c not in self.tools or not Path(self.tools[c]).is_file()]
        if missing:
            raise ComponentError(missing[0], f"no binary for {', '.join(missing)} in the toolchain ({self.tools})")
        self.directory = Path(tempfile.mkdtemp(prefix="tpu-serving-e2e-"))
        self.addresses = claim()
        atexit.register(self.stop)
        self.arm_timer()
        try:
            self._start_all()
        except BaseException:
            self.stop()
            raise
        self.started_in = time.monotonic() - began

    def _start_all(self) -> None:
        self.ports = Ports.pick()
        self.pki = make_pki(self.directory / "pki", apiserver_ips=(LOOPBACK, self.addresses.kubernetes_service_ip))
        self.kubeconfig = write_kubeconfig(self.directory / "admin.kubeconfig", self.server, self.pki.ca.cert,
                                           self.pki.admin)  # fmt: skip
        self.kube = Kube(self.server, self.pki.ca.cert, self.pki.admin.cert, self.pki.admin.key)
        self._start_etcd()
        self._start_apiserver()
        self._start_controller_manager()
        self._start_scheduler()
        self._start_kwok()

    def arm_timer(self) -> None:
        """Stop every process once ``run_timeout`` seconds have passed (a ``TIMED-OUT`` file says so)."""
        self._timer = threading.Timer(self.run_timeout, self._run_timed_out)
        self._timer.daemon = True
        self._timer.start()

    def _run_timed_out(self) -> None:
        (self.directory / "TIMED-OUT").write_text(f"the run passed its {self.run_timeout:.0f} s; stopped\n")
        self.stop_processes()

    def stop_processes(self) -> None:
        """Run the stop hooks (last added first), then stop every process, the last started first."""
        with self._lock:
            hooks, self.stop_hooks = list(self.stop_hooks), []
            for hook in reversed(hooks):
                hook()
            for proc in reversed(self.processes):
                proc.stop()

    def stop(self) -> None:
        """Stop everything and remove the directory (unless kept). Safe to call twice."""
        if self._timer:
            self._timer.cancel()
        self.stop_processes()
        if getattr(self, "addresses", None):
            self.addresses.release()
        keep = self.keep or os.environ.get("TPU_SERVING_E2E_KEEP") == "1"
        if not keep and getattr(self, "directory", None) and self.directory.exists():
            shutil.rmtree(self.directory, ignore_errors=True)

    # Processes ---------------------------------------------------------------------------------------------
    def spawn(self, name: str, argv: Sequence[str], env: Mapping[str, str] | None = None) -> Process:
        """Start a process that is stopped with the control plane; it logs to ``logs/<name>.log``."""
        proc = Process(name, list(argv), self.directory / "logs" / f"{name}.log", dict(env or {}))
        with self._lock:
            self.processes.append(proc)
        return proc.start()

    def at_stop(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` when the control plane stops, before its processes are stopped."""
        with self._lock:
            self.stop_hooks.append(hook)

    def log(self, name: str) -> Path:
        return self.directory / "logs" / f"{name}.log"

    def _await(self, proc: Process, what: str, probe: Callable[[], bool]) -> None:
        def check() -> bool:
            proc.check_running()
            return probe()

        try:
            wait_for(f"{proc.name} {what}", check, timeout=self.ready_timeout, interval=0.2)
        except TimeoutError as err:
            raise ComponentError(proc.name, str(err), proc.log) from err

    def _tool(self, name: str) -> str:
        assert self.tools is not None
        return str(self.tools[name])

    def _start_etcd(self) -> None:
        client, peer = f"http://{LOOPBACK}:{self.ports.etcd_client}", f"http://{LOOPBACK}:{self.ports.etcd_peer}"
        argv = [
            self._tool("etcd"), "--name=e2e", f"--data-dir={self.directory / 'etcd'}",
            f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}", f"--initial-cluster=e2e={peer}",
            "--unsafe-no-fsync=true", "--log-level=warn",
        ]  # fmt: skip
        proc = self.spawn("etcd", argv)
        self._await(proc, "health", lambda: _http_ok(f"{client}/health", tls=False))

    def _start_apiserver(self) -> None:
        p = self.pki
        argv = [
            self._tool("kube-apiserver"),
            f"--etcd-servers=http://{LOOPBACK}:{self.ports.etcd_client}",
            f"--bind-address={LOOPBACK}", f"--advertise-address={LOOPBACK}", f"--secure-port={self.ports.apiserver}",
            f"--cert-dir={self.directory / 'apiserver'}",
            f"--tls-cert-file={p.apiserver.cert}", f"--tls-private-key-file={p.apiserver.key}",
            f"--client-ca-file={p.ca.cert}",
            # The aggregator proxies the metrics APIs to the metrics adapter's stand-in (.metrics_adapter) as
            # front-proxy-client, a client certificate of the request-header CA (k8s.io/kubernetes v1.36.3
            # pkg/controlplane/apiserver/options/options.go l.174-182); the adapter trusts that CA through the
            # extension-apiserver-authentication ConfigMap.
            f"--proxy-client-cert-file={p.front_proxy_client.cert}",
            f"--proxy-client-key-file={p.front_proxy_client.key}",
            f"--requestheader-client-ca-file={p.ca.cert}", "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group", "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            "--requestheader-allowed-names=front-proxy-client",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={p.service_account_pub}",
            f"--service-account-signing-key-file={p.service_account_key}",
            f"--service-cluster-ip-range={self.addresses.service_cidr}",
            # The kubernetes Service's endpoint would be 127.0.0.1, which an EndpointSlice may not hold.
            "--endpoint-reconciler-type=none",
            "--authorization-mode=Node,RBAC", "--allow-privileged=true", "--profiling=false",
            # GKE runs the ExtendedResourceToleration admission plugin: a pod that requests google.com/tpu gets the
            # toleration of the TPU nodes' google.com/tpu NoSchedule taint ("GKE will automatically apply
            # corresponding tolerations to Pods requesting GPUs by running the ExtendedResourceToleration admission
            # controller", KServe's docs/samples/accelerators after GKE's GPU page; the plugin: kubernetes/kubernetes
            # PR 55839, k8s.io/kubernetes v1.36.3 plugin/pkg/admission/extendedresourcetoleration/admission.go).
            f"--enable-admission-plugins={GKE_ADMISSION_PLUGINS}",
        ]  # fmt: skip
        proc = self.spawn("kube-apiserver", argv)
        self._await(proc, "/readyz", lambda: self.kube.get_raw("/readyz") == "ok")

    def _component_kubeconfig(self, name: str, user: KeyPair) -> Path:
        return write_kubeconfig(self.directory / f"{name}.kubeconfig", self.server, self.pki.ca.cert, user)

    def _start_controller_manager(self) -> None:
        p, kubeconfig = self.pki, self._component_kubeconfig("controller-manager", self.pki.controller_manager)
        argv = [
            self._tool("kube-controller-manager"),
            f"--kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            f"--bind-address={LOOPBACK}", f"--secure-port={self.ports.controller_manager}",
            f"--cert-dir={self.directory / 'controller-manager'}",
            "--controllers=*", "--use-service-account-credentials=true",
            f"--service-account-private-key-file={p.service_account_key}", f"--root-ca-file={p.ca.cert}",
            f"--cluster-signing-cert-file={p.ca.cert}", f"--cluster-signing-key-file={p.ca.key}",
            "--allocate-node-cidrs=false", "--leader-elect=false", "--profiling=false",
        ]  # fmt: skip
        proc = self.spawn("kube-controller-manager", argv)
        url = f"https://{LOOPBACK}:{self.ports.controller_manager}/healthz"
        self._await(proc, "/healthz", lambda: _http_ok(url, tls=True))
        self._await(proc, "default ServiceAccounts", self._default_service_accounts)

    def _default_service_accounts(self) -> bool:
        """Every system namespace holds its ``default`` ServiceAccount (:data:`SYSTEM_NAMESPACES`)."""
        return all(self.kube.find("v1", "ServiceAccount", "default", ns) for ns in SYSTEM_NAMESPACES)

    def _start_scheduler(self) -> None:
        kubeconfig = self._component_kubeconfig("scheduler", self.pki.scheduler)
        argv = [
            self._tool("kube-scheduler"),
            f"--kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            f"--bind-address={LOOPBACK}", f"--secure-port={self.ports.scheduler}",
            f"--cert-dir={self.directory / 'scheduler'}", "--leader-elect=false", "--profiling=false",
        ]  # fmt: skip
        proc = self.spawn("kube-scheduler", argv)
        url = f"https://{LOOPBACK}:{self.ports.scheduler}/readyz"
        self._await(proc, "/readyz", lambda: _http_ok(url, tls=True))

    def kwok_config(self) -> Path:
        """kwok's configuration: its default Stages, read from the kwok module's own files (the toolchain's copies,
        or the Go module cache's)."""
        path = self.directory / "kwok.yaml"
        files = list(self.stages) or self._module_stages()
        path.write_text("\n---\n".join(f.read_text().strip() for f in files) + "\n")
        return path

    def _module_stages(self) -> list[Path]:
        if not self.kwok_version:
            out = subprocess.run([self._tool("kwok"), "--version"], capture_output=True, text=True, check=False)
            found = KWOK_VERSION.search(out.stdout + out.stderr)
            if not found:
                raise ComponentError("kwok", f"no version in `kwok --version`: {out.stdout + out.stderr!r}")
            self.kwok_version = found.group(1)
        module = go_mod_dir("sigs.k8s.io/kwok", self.kwok_version)
        return [module / stage for stage in KWOK_STAGES]

    def _start_kwok(self) -> None:
        key, value = KWOK_LABEL
        kubeconfig = self._component_kubeconfig("kwok", self.pki.admin)
        argv = [
            self._tool("kwok"), f"--kubeconfig={kubeconfig}", f"--config={self.kwok_config()}",
            f"--manage-nodes-with-label-selector={key}={value}",
            f"--node-ip={LOOPBACK}", f"--cidr={self.addresses.kwok_cidr}", "--node-lease-duration-seconds=40",
            f"--server-address={LOOPBACK}:{self.ports.kwok}",
        ]  # fmt: skip
        proc = self.spawn("kwok", argv)
        self._await(proc, "/healthz", lambda: _http_ok(f"http://{LOOPBACK}:{self.ports.kwok}/healthz", tls=False))

    # Nodes' addresses ----------------------------------------------------------------------------------------
    def node_addresses(self) -> tuple[str, str]:
        """The next Node's InternalIP and pod CIDR (in the run's own block, :mod:`.addresses`)."""
        with self._lock:
            return self.addresses.next_node()
