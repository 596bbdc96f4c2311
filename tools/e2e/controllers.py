"""A real controller (the LWS or JobSet manager binary) run as a local process in place of its Deployment's pod.

The stack installs the controller itself (its release manifest: Deployment, webhook Service, webhook
configurations, the Secret for the webhook certificate, RBAC); kwok runs that Deployment's pod, which gets a 127.x
IP. :func:`run_controller` waits for that pod, then starts the binary the toolchain built with the container's own
arguments and environment, as the pod would:

- in its own mount namespace (``unshare --mount``, root), with a private ``/tmp`` and the pod's service account
  volume at ``/var/run/secrets/kubernetes.io/serviceaccount`` (the host's ``/tmp``, where the run's directory and
  maybe the binary are, is seen at :data:`HOST_TMP`): JobSet v0.12.0 hard-codes its webhook certificate directory
  (``pkg/util/cert/cert.go`` 30 and 61: ``/tmp/k8s-webhook-server/serving-certs``) and reads its namespace from
  that volume (``cert.go`` 37-44); LWS v0.10.0 defaults to the same directory (``api/config/v1alpha1/defaults.go``
  25 and 46-47, handed to its certificate manager in ``cmd/main.go`` 166) and reads its namespace from the same file
  (``pkg/utils/utils.go`` 74-75, ``cmd/main.go`` 273 and 349); so two controllers never share a certificate
  directory, and each finds its namespace;
- authenticated as the pod's service account (``KUBECONFIG``: a token bound to the pod), so the release's RBAC is
  what it has;
- its configuration file materialised from the ConfigMap the container mounts (:mod:`.podfs`), with the webhook
  server, metrics and health probes bound to the pod's IP: the ``webhook.host``/``port``/``certDir``,
  ``metrics.bindAddress`` and ``health.healthProbeBindAddress`` fields of both controllers' Configuration (LWS
  v0.10.0 ``api/config/v1alpha1/configuration_types.go`` 73-85 and 94-103, applied in ``pkg/config/config.go``
  53-58 and 77-93 and ``cmd/main.go`` 284, 333 and 356; JobSet v0.12.0 ``pkg/config/config.go`` 65-74 and
  ``main.go`` 125-132); an argument binding ``:<port>`` or ``0.0.0.0:<port>`` is bound to the pod's IP as well;
- the Services that select the pod get their ClusterIP ports forwarded to it (:mod:`.serviceproxy`), which is how
  the API server reaches the webhooks.

JobSet's lines are of its module in the Go module cache; LWS's of the kubernetes-sigs/lws repository at tag v0.10.0
(commit 5666259), since the module proxy does not serve ``sigs.k8s.io/lws@v0.10.0``.

Leader election stays as configured (on, in both releases). The process logs to ``logs/<controller>-<pod>.log``
and stops with the control plane. Nothing about the workloads is asserted here.
"""

from __future__ import annotations

import functools
import http.client
import re
import socket
import ssl
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tpu_serving.platform import controllers as library

from . import crds
from .controlplane import ControlPlane, write_kubeconfig
from .kube import ApiError, Kube, Obj, wait_for
from .podfs import SA_DIR, PodFiles, environment
from .processes import ComponentError, Process, check_loopback
from .serviceproxy import Forwarder, target_port
from .status_sync import status_sync_stage

HOST_TMP = "/run/e2e-host-tmp"
"""Where the host's /tmp is seen inside the controller's mount namespace (its own /tmp is the pod's)."""
MOUNT_SCRIPT = (
    f'mount -t tmpfs tmpfs /run && mkdir -p "$1" {HOST_TMP} && mount --bind "$E2E_SERVICE_ACCOUNT" "$1" '
    f'&& mount --rbind /tmp {HOST_TMP} && mount --bind "$E2E_TMP" /tmp && shift && exec "$@"'
)
"""Run inside ``unshare --mount``: a private /run holding the service account volume and the host's /tmp, then the
pod's /tmp over /tmp (bound last: the pod's directories are under the host's /tmp), then the controller."""


def inside(path: str) -> str:
    """A host path as the controller sees it: the host's /tmp is at :data:`HOST_TMP`."""
    return f"{HOST_TMP}/{path.removeprefix('/tmp/')}" if path.startswith("/tmp/") else path


@dataclass(frozen=True)
class ControllerSpec:
    """Which Deployment a controller binary stands in for."""

    tool: str
    """The binary's name in the toolchain."""
    namespace: str
    deployment: str
    container: str = "manager"


LWS = ControllerSpec("lws-manager", "lws-system", "lws-controller-manager")
"""LeaderWorkerSet v0.10.0's release manifest: namespace lws-system, Deployment lws-controller-manager."""
JOBSET = ControllerSpec("jobset-manager", "jobset-system", "jobset-controller-manager")
"""JobSet v0.12.0's release manifest: namespace jobset-system, Deployment jobset-controller-manager."""

STARTED_STAGE = "pod-started"
_READY_TRUE = re.compile(r'status: "True"(\n\s+)type: (Ready|ContainersReady)\n')


APPLY_FIRST = {"CustomResourceDefinition": 0, "Namespace": 1}


def install_release(
    cp: ControlPlane, manifest: Path, controller: library.Controller | None = None, version: str = ""
) -> None:
    """A release manifest's objects, server-side applied as a stack applies them: as the library's install of
    ``controller`` at ``version`` changes them and adds to them (:meth:`~tpu_serving.platform.controllers.Controller.installed`
    and :meth:`~tpu_serving.platform.controllers.Controller.extra_objects`: its webhook readiness probe, its replicas and
    disruption budget; None: as upstream ships them), its CRDs first (until Established), then its Namespace, then
    the rest."""
    docs: list[Obj] = [d for d in yaml.safe_load_all(manifest.read_text()) if d]
    if controller is not None:
        release = version or controller.default_version
        docs = [dict(controller.installed(d, release)) for d in docs] + controller.extra_objects()
    crds.install(cp.kube, [(str(manifest), d) for d in docs if d["kind"] == "CustomResourceDefinition"])
    for doc in sorted(docs, key=lambda d: APPLY_FIRST.get(d["kind"], 2)):
        if doc["kind"] != "CustomResourceDefinition":
            cp.kube.apply(doc)


def kubelet_stages(stages: Sequence[Path], folder: Path, namespaces: Sequence[str]) -> list[Path]:
    """kwok's Stages (``stages``), with the pods of ``namespaces`` (the controllers', whose pods a real binary stands
    in for) started but not Ready: kwok's ``pod-ready`` makes every pod Ready at once, which no kubelet does for a
    container with a readiness probe. Their readiness is then the binary's own probe, reported by :class:`Prober`.
    The new Stage is ``pod-ready`` for those namespaces, with its ``Ready``/``ContainersReady`` conditions and its
    containers' ``ready`` false; written to ``folder``. Last comes the kubelet's status sync, for the other namespaces
    (:func:`.status_sync.status_sync_stage`)."""
    out = []
    for stage in stages:
        if stage.name != "pod-ready.yaml" or not namespaces:
            out.append(stage)
            continue
        doc = yaml.safe_load(stage.read_text())
        started = yaml.safe_load(stage.read_text())
        doc["spec"]["selector"]["matchExpressions"].append(
            {"key": ".metadata.namespace", "operator": "NotIn", "values": list(namespaces)}
        )
        started["metadata"]["name"] = STARTED_STAGE
        started["spec"]["selector"]["matchExpressions"].append(
            {"key": ".metadata.namespace", "operator": "In", "values": list(namespaces)}
        )
        template = str(started["spec"]["next"]["statusTemplate"])
        template, conditions = _READY_TRUE.subn(r'status: "False"\1type: \2\n', template)
        head, sep, tail = template.partition("initContainerStatuses:")
        head, containers = re.subn(r"\bready: true\b", "ready: false", head)
        if conditions != 2 or containers != 1 or not sep:
            raise ValueError(f"{stage}: kwok's pod-ready Stage no longer has the Ready fields this rewrites")
        started["spec"]["next"]["statusTemplate"] = head + sep + tail
        folder.mkdir(parents=True, exist_ok=True)
        for written in (doc, started):
            path = folder / f"{written['metadata']['name']}.yaml"
            path.write_text(yaml.safe_dump(written, sort_keys=False))
            out.append(path)
    return [*out, status_sync_stage(folder, namespaces)]


_ADDRESS_ARG = re.compile(r"^(--[a-z-]*(?:address|addr)=)(?:0\.0\.0\.0)?(:\d+)$")


def bind_to(pod_ip: str, address: str, default_port: int) -> str:
    """``address`` (``:8443``, ``0.0.0.0:8443`` or empty) bound to ``pod_ip``; ``"0"`` (off) is kept."""
    if address == "0":
        return address
    port = address.rpartition(":")[2] if address else ""
    return f"{pod_ip}:{port or default_port}"


def configure(config: Mapping[str, Any], pod_ip: str, ports: Mapping[str, int]) -> dict[str, Any]:
    """A controller Configuration with its webhook server, metrics and health probes on ``pod_ip``."""
    out = dict(config)
    webhook = dict(out.get("webhook") or {})
    webhook["host"] = pod_ip
    out["webhook"] = webhook
    metrics = dict(out.get("metrics") or {})
    metrics["bindAddress"] = bind_to(pod_ip, str(metrics.get("bindAddress", "")), ports.get("metrics", 8443))
    out["metrics"] = metrics
    health = dict(out.get("health") or {})
    probe = str(health.get("healthProbeBindAddress", ""))
    health["healthProbeBindAddress"] = bind_to(pod_ip, probe, ports.get("health", 8081))
    out["health"] = health
    return out


def container_ports(container: Mapping[str, Any]) -> dict[str, int]:
    """The container's named ports, and ``health``: the port of its health probes server (its liveness probe's,
    ``/healthz``; else its readiness probe's: a stack may point the readiness probe at the webhook server)."""
    ports = {str(p["name"]): int(p["containerPort"]) for p in container.get("ports") or () if p.get("name")}
    for kind in ("readinessProbe", "livenessProbe"):
        probe = ((container.get(kind) or {}).get("httpGet") or {}).get("port")
        if isinstance(probe, int):
            ports["health"] = probe
        elif isinstance(probe, str) and probe in ports:
            ports["health"] = ports[probe]
    return ports


def _selector(match_labels: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(match_labels.items()))


@dataclass
class PodProcess:
    """One controller process standing in for one pod."""

    pod: Obj
    files: PodFiles
    process: Process
    address: str
    """Where the process listens: the stand-in address of the pod's IP (:meth:`.addresses.AddressBlock.stand_in`)."""
    started: float = field(default_factory=time.monotonic)

    @property
    def pod_ip(self) -> str:
        """The address the pod's traffic goes to here: its stand-in's."""
        return self.address


@dataclass
class Controller:
    """The running stand-ins of a Deployment's pods and the forwarders of its Services."""

    spec: ControllerSpec
    pods: list[PodProcess] = field(default_factory=list)
    forwarders: list[Forwarder] = field(default_factory=list)
    probers: list[Prober] = field(default_factory=list)
    forwarded: set[tuple[str, int]] = field(default_factory=set)
    """The (ClusterIP, port) pairs forwarded."""
    stopped: threading.Event = field(default_factory=threading.Event)

    def stop(self) -> None:
        self.stopped.set()
        for prober in self.probers:
            prober.stop()
        for forwarder in self.forwarders:
            forwarder.stop()
        for pod in self.pods:
            pod.files.stop()
            pod.process.stop()


def _pod_container(pod: Obj, name: str) -> Obj:
    containers = pod["spec"]["containers"]
    found: Obj = next((c for c in containers if c["name"] == name), containers[0])
    return found


def _running_pods(cp: ControlPlane, spec: ControllerSpec, deployment: Obj) -> list[Obj]:
    """The Deployment's pods with their IPs, once every replica has one (else [])."""
    selector = _selector(deployment["spec"]["selector"].get("matchLabels") or {})
    pods = cp.kube.list("v1", "Pod", spec.namespace, label_selector=selector)
    live = [p for p in pods if (p.get("status") or {}).get("podIP") and not p["metadata"].get("deletionTimestamp")]
    return live if len(live) >= int(deployment["spec"].get("replicas", 1)) else []


def _config_arg(args: Sequence[str]) -> int | None:
    return next((i for i, a in enumerate(args) if a.startswith("--config=")), None)


def _arguments(files: PodFiles, container: Obj, pod_ip: str, ports: Mapping[str, int]) -> list[str]:
    """The container's arguments: mount paths rewritten, addresses bound to the pod IP, the config configured."""
    original = [str(a) for a in container.get("args") or ()]
    args = [files.rewrite(a, inside) for a in original]
    args = [_ADDRESS_ARG.sub(lambda m: f"{m.group(1)}{pod_ip}{m.group(2)}", a) for a in args]
    index = _config_arg(original)
    if index is not None:
        path = files.host_path_of(original[index].partition("=")[2])
        config = configure(yaml.safe_load(path.read_text()) or {}, pod_ip, ports)
        configured = path.with_name(f"{path.name}.e2e.yaml")
        configured.write_text(yaml.safe_dump(config, sort_keys=False))
        args[index] = f"--config={inside(str(configured))}"
    return args


def _prepared(files: PodFiles) -> bool:
    try:
        files.prepare()
    except FileNotFoundError:
        return False
    return True


def start_pod(cp: ControlPlane, spec: ControllerSpec, binary: Path, pod: Obj, volume_sync: float = 1.0) -> PodProcess:
    """Start the controller for ``pod`` (its container ``spec.container``): files, environment, mount namespace."""
    container = _pod_container(pod, spec.container)
    pod_ip = check_loopback(cp.addresses.stand_in(str(pod["status"]["podIP"])))
    name = str(pod["metadata"]["name"])
    files = PodFiles(cp.kube, pod, container, cp.directory / "pods" / f"{spec.namespace}_{name}", cp.pki.ca.cert)
    # The kubelet keeps a pod in ContainerCreating until its ConfigMap and Secret volumes exist; so does this.
    wait_for(f"the volumes of pod {spec.namespace}/{name}", functools.partial(_prepared, files), timeout=300)
    files.keep_in_sync(volume_sync)
    # The CA as the pod sees it, in its service account volume.
    kubeconfig = write_kubeconfig(files.root / "kubeconfig", cp.server, Path(SA_DIR) / "ca.crt",
                                  token=(files.service_account / "token").read_text())  # fmt: skip
    env = {
        **environment(cp.kube, pod, container),
        "KUBECONFIG": inside(str(kubeconfig)),
        "E2E_TMP": str(files.tmp),
        "E2E_SERVICE_ACCOUNT": str(files.service_account),
    }
    args = _arguments(files, container, pod_ip, container_ports(container))
    argv = ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", MOUNT_SCRIPT, "sh", SA_DIR,
            inside(str(binary)), *args]  # fmt: skip
    return PodProcess(pod, files, cp.spawn(f"{spec.tool}-{name}", argv, env), pod_ip)


def forward_services(cp: ControlPlane, spec: ControllerSpec, controller: Controller, container: Obj) -> None:
    """Forward the ClusterIP ports of every Service in the namespace that selects the controller's pods (each
    once: called again, it adds the Services created since)."""
    labels = controller.pods[0].pod["metadata"].get("labels") or {}
    for service in cp.kube.list("v1", "Service", spec.namespace):
        selector = service["spec"].get("selector") or {}
        cluster_ip = service["spec"].get("clusterIP", "None")
        if not selector or cluster_ip == "None" or any(labels.get(k) != v for k, v in selector.items()):
            continue
        for port in service["spec"].get("ports") or ():
            key = (cluster_ip, int(port["port"]))
            if key in controller.forwarded:
                continue
            target = target_port(port, [container])
            backends = functools.partial(_live_backends, controller.pods, target)
            controller.forwarders.append(Forwarder(key, backends).start())
            controller.forwarded.add(key)


def follow_services(cp: ControlPlane, spec: ControllerSpec, controller: Controller, container: Obj) -> None:
    """As kube-proxy does: the Services that select the pods are forwarded as they are created (``pulumi up``
    creates a release's Services and its Deployment in parallel, in no fixed order), until the controller stops."""
    while not controller.stopped.wait(0.5):
        try:
            forward_services(cp, spec, controller, container)
        except (ApiError, OSError):
            continue  # the API server is stopping, or busy: the next round retries


def _live_backends(pods: Sequence[PodProcess], port: int) -> list[tuple[str, int]]:
    return [(p.pod_ip, port) for p in pods if p.process.running()]


def _listening(ip: str, port: int) -> bool:
    try:
        socket.create_connection((ip, port), timeout=2).close()
    except OSError:
        return False
    return True


def probe_passes(ip: str, container: Mapping[str, Any]) -> bool:
    """The container's readiness probe, as the kubelet runs an ``httpGet`` one (``pkg/probe/http``: a status from 200
    to 399 passes; ``scheme: HTTPS`` does not verify the certificate): ``port`` a number or the name of a container
    port, ``path`` default ``/``. A ``tcpSocket`` probe connects; a container without a readiness probe is ready."""
    probe = container.get("readinessProbe") or {}
    check = probe.get("httpGet") or probe.get("tcpSocket")
    if not check:
        return True
    named = {str(p.get("name")): int(p["containerPort"]) for p in container.get("ports") or () if p.get("name")}
    port = check.get("port")
    number = named.get(port, 0) if isinstance(port, str) else int(port or 0)
    if "tcpSocket" in probe:
        return _listening(ip, number)
    if str(check.get("scheme", "HTTP")).upper() == "HTTPS":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            ip, number, timeout=3, context=ssl._create_unverified_context()
        )
    else:
        conn = http.client.HTTPConnection(ip, number, timeout=3)
    try:
        conn.request("GET", str(check.get("path", "/")))
        return 200 <= conn.getresponse().status < 400
    except OSError:
        return False
    finally:
        conn.close()


def report_ready(kube: Kube, pod: Obj, ready: bool) -> None:
    """As the kubelet reports a readiness result: the pod's ``Ready`` and ``ContainersReady`` conditions and its
    containers' ``ready``, in its status. The EndpointSlice controller and the Deployment's availability follow."""
    current = kube.get("v1", "Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])
    status = current.get("status") or {}
    word = "True" if ready else "False"
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    conditions = [
        {**c, "status": word, "lastTransitionTime": now} if c.get("type") in READINESS_CONDITIONS and c.get("status") != word else c
        for c in status.get("conditions") or ()
    ]  # fmt: skip
    containers = [{**c, "ready": ready} for c in status.get("containerStatuses") or ()]
    kube.patch(current, {"status": {"conditions": conditions, "containerStatuses": containers}}, subresource="status")


READINESS_CONDITIONS = ("Ready", "ContainersReady")


@dataclass
class Prober:
    """The kubelet's prober for a stand-in pod: its readiness probe every ``periodSeconds`` (default 10), ready after
    ``successThreshold`` passes (default 1), unready after ``failureThreshold`` failures (default 3), or at once when
    the process has exited (``k8s.io/api`` core/v1 ``Probe``)."""

    kube: Kube
    pod: PodProcess
    container: Obj
    ready: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)

    def probe(self) -> bool:
        return self.pod.process.running() and probe_passes(self.pod.pod_ip, self.container)

    def run(self) -> None:
        spec = self.container.get("readinessProbe") or {}
        period = float(spec.get("periodSeconds", 10))
        needed = {True: int(spec.get("successThreshold", 1)), False: int(spec.get("failureThreshold", 3))}
        streak: tuple[bool, int] = (self.ready, 0)
        while not self._stop.wait(period):
            result = self.probe()
            streak = (result, streak[1] + 1 if streak[0] == result else 1)
            exited = not self.pod.process.running()
            if result != self.ready and (streak[1] >= needed[result] or exited):
                self.ready = result
                try:
                    report_ready(self.kube, self.pod.pod, result)
                except (ApiError, OSError):
                    self.ready = not result  # reported again on the next probe

    def start(self) -> Prober:
        threading.Thread(target=self.run, daemon=True, name=f"prober-{self.pod.process.name}").start()
        return self

    def stop(self) -> None:
        self._stop.set()


def _first_ready(kube: Kube, pod: PodProcess, container: Obj) -> bool:
    """Until the first readiness probe passes (the process must keep running), not before the probe's
    ``initialDelaySeconds`` from the container's start: then the pod is reported Ready."""
    pod.process.check_running()
    delay = float((container.get("readinessProbe") or {}).get("initialDelaySeconds", 0))
    if time.monotonic() < pod.started + delay or not probe_passes(pod.pod_ip, container):
        return False
    report_ready(kube, pod.pod, True)
    return True


def run_controller(
    cp: ControlPlane,
    spec: ControllerSpec,
    *,
    binary: Path | None = None,
    timeout: float = 180.0,
    volume_sync: float = 1.0,
) -> Controller:
    """Wait for the Deployment's pods to have their IPs under kwok, run the controller for each of them, forward
    its Services, and wait until each passes its readiness probe. Stopped with ``cp``. ``volume_sync``: how often a
    changed ConfigMap or Secret reaches the pod's files (the kubelet's is its sync period, ``syncFrequency``, 1 min
    by default, plus its cache's delay; the run's default, 1 s, is faster than any kubelet)."""
    assert cp.tools is not None
    found = binary or cp.tools.get(spec.tool)
    if found is None or not Path(found).is_file():
        raise ComponentError(spec.tool, f"no binary for {spec.tool} in the toolchain ({dict(cp.tools)})")
    what = f"Deployment {spec.namespace}/{spec.deployment}"
    deployment: Obj = wait_for(what, lambda: cp.kube.find("apps/v1", "Deployment", spec.deployment, spec.namespace),
                               timeout=timeout)  # fmt: skip
    pods: list[Obj] = wait_for(f"the pods of {what} with their IPs", lambda: _running_pods(cp, spec, deployment),
                               timeout=timeout)  # fmt: skip
    container = _pod_container(pods[0], spec.container)
    controller = Controller(spec)
    cp.at_stop(controller.stop)
    controller.pods = [start_pod(cp, spec, Path(found), pod, volume_sync) for pod in pods]
    forward_services(cp, spec, controller, container)
    threading.Thread(
        target=follow_services, args=(cp, spec, controller, container), daemon=True, name=f"services-{spec.tool}"
    ).start()
    for pod in controller.pods:
        try:
            wait_for(f"{spec.tool} on {pod.pod_ip} ready", functools.partial(_first_ready, cp.kube, pod, container),
                     timeout=timeout)  # fmt: skip
        except (TimeoutError, ComponentError) as err:
            raise ComponentError(pod.process.name, str(err), pod.process.log) from err
        controller.probers.append(Prober(cp.kube, pod, container, ready=True).start())
    return controller
