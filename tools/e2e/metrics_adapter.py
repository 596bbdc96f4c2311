"""The custom metrics API of ``make e2e``: a stand-in for the Custom Metrics Stackdriver Adapter's pod.

A stack that autoscales reads ``prometheus.googleapis.com|<metric>|gauge`` (a ``Pods`` metric of its leaders,
:mod:`tpu_serving.operations.autoscaling`) from the custom metrics API, which GKE's Custom Metrics Stackdriver Adapter serves
from Cloud Monitoring. That adapter cannot run here (its module, ``github.com/GoogleCloudPlatform/k8s-stackdriver``,
is not served by the Go module proxy, and no local run has Cloud Monitoring), and the e2e stack names its install
existing (:data:`.overlay.ADAPTER_EXISTING`: the platform's). So the run plays that platform install:

- :func:`platform_objects`: the objects of the adapter's release manifest the aggregated API and the HPA go through,
  named as it names them (GoogleCloudPlatform/k8s-stackdriver, tag cm-sd-adapter-v0.16.9,
  ``custom-metrics-stackdriver-adapter/deploy/production/adapter_new_resource_model.yaml``: Namespace
  ``custom-metrics`` l.1-4, its ServiceAccount l.6-10, the auth-delegator and auth-reader bindings l.12-37, the pod
  reader l.39-66, the Deployment l.68-121, the Service on port 443 l.123-141, the APIServices
  ``v1beta1``/``v1beta2.custom.metrics.k8s.io`` and ``v1beta1.external.metrics.k8s.io`` with
  ``insecureSkipTLSVerify: true`` l.143-183); kwok runs the Deployment's pod, which gets a pod IP;
- :func:`start_adapter`: in place of that pod, ``test-adapter`` of ``sigs.k8s.io/custom-metrics-apiserver`` v1.36.0
  (pin ``go-custom-metrics``, the library's own sample adapter: ``test-adapter/main.go``,
  ``test-adapter/provider/provider.go``), on the pod's stand-in address (:meth:`.addresses.AddressBlock.stand_in`),
  port 443, with a self-signed serving certificate (its ``--cert-dir``: the APIServices skip verification, as the
  manifest's do), authenticated as the pod's service account (a TokenRequest bound to the pod), so the manifest's
  RBAC is what it has; the aggregator reaches it through the Service's ClusterIP (:mod:`.serviceproxy`) as
  ``front-proxy-client`` (:mod:`.pki`);
- :meth:`Adapter.write`: a metric's value for one pod, by HTTP POST to the adapter's
  ``/write-metrics/namespaces/{namespace}/{resourceType}/{name}/{metric}`` (``provider.go`` l.140-141 and
  153-212), which it then serves for any metric name (``GetMetricBySelector``, l.305-310: the pods the HPA's
  selector lists that have a value).

What this proves: the HPA's spec (its metric's name, type and target) and its target's selector (the
LeaderWorkerSet's ``status.hpaPodSelector``) resolve through the aggregated API to the leader pods' values, and the
real HPA controller and the LWS scale subresource act on them. What it does not: Managed Service for Prometheus
(the engine's scrape, the series' name and labels in Cloud Monitoring), the Stackdriver adapter's own naming of that
series and its queries, its Workload Identity grant, or its Deployment as the library installs it.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import http.client
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from tpu_serving.operations.autoscaling import ADAPTER_DEPLOYMENT, ADAPTER_NAMESPACE, ADAPTER_SERVICE_ACCOUNT

from .addresses import LOCKS
from .controlplane import ControlPlane, write_kubeconfig
from .kube import ApiError, Obj, wait_for
from .processes import ComponentError, Process, check_loopback
from .serviceproxy import Forwarder

STAND_IN = (
    "a stand-in for the Custom Metrics Stackdriver Adapter: sigs.k8s.io/custom-metrics-apiserver's test-adapter "
    "serves the values the run writes, not Managed Prometheus' series"
)
"""How the run's findings name the adapter (it is not the Stackdriver adapter)."""

LABELS = {"run": ADAPTER_DEPLOYMENT, "k8s-app": ADAPTER_DEPLOYMENT}
"""The Deployment's selector and the Service's (adapter_new_resource_model.yaml l.78-81 and l.138-140)."""
PORT = 443
"""The Service's port and target port, where the adapter serves (l.134-137; its ``--secure-port`` default)."""
WRITE_PORT = 8080
"""Where test-adapter takes the values written: ``:8080``, every address, not configurable (``main.go`` l.81-88)."""
APISERVICES = (
    ("custom.metrics.k8s.io", "v1beta1", 100),
    ("custom.metrics.k8s.io", "v1beta2", 200),
    ("external.metrics.k8s.io", "v1beta1", 100),
)
"""(group, version, versionPriority) of the manifest's APIServices (l.143-183; groupPriorityMinimum 100 each)."""
WATCHED = "v1beta2.custom.metrics.k8s.io"
"""The APIService the HPA controller reads a Pods metric through: the group's preferred version (versionPriority
200), which its custom metrics client takes from discovery (k8s.io/metrics v0.36.3
``pkg/client/custom_metrics/discovery.go`` l.89 and l.106-108)."""


def _binding(kind: str, name: str, role_kind: str, role: str, namespace: str = "") -> Obj:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": ADAPTER_SERVICE_ACCOUNT, "namespace": ADAPTER_NAMESPACE}],
    }


def _apiservice(group: str, version: str, priority: int) -> Obj:
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": f"{version}.{group}"},
        "spec": {
            "group": group,
            "version": version,
            "insecureSkipTLSVerify": True,
            "groupPriorityMinimum": 100,
            "versionPriority": priority,
            "service": {"name": ADAPTER_DEPLOYMENT, "namespace": ADAPTER_NAMESPACE, "port": PORT},
        },
    }


def platform_objects() -> list[Obj]:
    """The adapter's install as the platform holds it (the module docstring's lines of its release manifest): what
    the aggregated API, the stand-in and the HPA controller need of it. Not its image, resources or tolerations'
    effect on a real node: kwok runs the pod, the stand-in serves."""
    ns, name = ADAPTER_NAMESPACE, ADAPTER_DEPLOYMENT
    tpu = {"key": "cloud.google.com/gke-tpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    container = {
        "name": "pod-custom-metrics-stackdriver-adapter",
        "image": "gcr.io/gke-release/custom-metrics-stackdriver-adapter:v0.16.7-gke.0",
        "command": ["/adapter", "--use-new-resource-model=true", "--fallback-for-container-metrics=true"],
        "resources": {"requests": {"cpu": "250m", "memory": "200Mi"}, "limits": {"cpu": "250m", "memory": "200Mi"}},
    }
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": ADAPTER_SERVICE_ACCOUNT, "namespace": ns}},
        _binding("ClusterRoleBinding", "custom-metrics:system:auth-delegator", "ClusterRole", "system:auth-delegator"),
        _binding(
            "RoleBinding",
            "custom-metrics-auth-reader",
            "Role",
            "extension-apiserver-authentication-reader",
            "kube-system",
        ),  # fmt: skip
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "custom-metrics-resource-reader"},
            "rules": [
                {"apiGroups": [""], "resources": ["pods", "nodes", "nodes/stats"], "verbs": ["get", "list", "watch"]}
            ],
        },
        _binding(
            "ClusterRoleBinding", "custom-metrics-resource-reader", "ClusterRole", "custom-metrics-resource-reader"
        ),
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": dict(LABELS)},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": dict(LABELS)},
                "template": {
                    "metadata": {"labels": dict(LABELS)},
                    "spec": {
                        "serviceAccountName": ADAPTER_SERVICE_ACCOUNT,
                        "tolerations": [tpu],
                        "containers": [container],
                    },
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": ns, "labels": dict(LABELS)},
            "spec": {
                "type": "ClusterIP",
                "selector": dict(LABELS),
                "ports": [{"port": PORT, "protocol": "TCP", "targetPort": PORT}],
            },
        },
        *(_apiservice(*a) for a in APISERVICES),
    ]


def adapter_argv(binary: Path, address: str, cert_dir: Path, kubeconfig: Path) -> list[str]:
    """test-adapter's command line: its secure port on the pod's stand-in address, a self-signed certificate in
    ``cert_dir``, and every client (listing pods, TokenReviews, SubjectAccessReviews) as the service account of
    ``kubeconfig`` (the flags of k8s.io/apiserver's serving and delegating options and ``lister-kubeconfig``,
    ``pkg/cmd/builder.go`` l.114)."""
    return [
        str(binary),
        f"--bind-address={address}",
        f"--secure-port={PORT}",
        f"--cert-dir={cert_dir}",
        f"--lister-kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--v=2",
    ]


def write_path(namespace: str, pod: str, metric: str) -> str:
    """The adapter's path that sets ``metric`` of a pod (``provider.go`` l.140; each part escaped: a Managed
    Prometheus name holds ``|`` and ``:``)."""
    parts = ("namespaces", namespace, "pods", pod, metric)
    return "/write-metrics/" + "/".join(urllib.parse.quote(p, safe="") for p in parts)


@dataclass
class Adapter:
    """The running stand-in: its process, its Service's forwarder, and the lock on its write port."""

    process: Process
    address: str
    forwarder: Forwarder | None = None
    lock: IO[str] | None = None
    written: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def write(self, namespace: str, pod: str, metric: str, value: str) -> None:
        """Set ``metric`` of pod ``namespace/pod`` to ``value`` (a quantity), as the README's example writes one
        (``curl -X POST -H 'Content-Type: application/json' .../write-metrics/... --data-raw '"300m"'``)."""
        conn = http.client.HTTPConnection(self.address, WRITE_PORT, timeout=10)
        try:
            conn.request("POST", write_path(namespace, pod, metric), body=f'"{value}"'.encode(),
                         headers={"Content-Type": "application/json"})  # fmt: skip
            resp = conn.getresponse()
            body = resp.read().decode(errors="replace")
        finally:
            conn.close()
        if resp.status >= 300:
            raise ComponentError("test-adapter", f"writing {metric} of {namespace}/{pod}: {resp.status} {body}")
        self.written[(namespace, pod, metric)] = value

    def stop(self) -> None:
        if self.forwarder is not None:
            self.forwarder.stop()
        self.process.stop()
        if self.lock is not None:
            self.lock.close()
            self.lock = None


def hold_write_port(timeout: float, locks: Path = LOCKS) -> IO[str]:
    """An exclusive lock on :data:`WRITE_PORT` among the runs of this machine (test-adapter binds it on every
    address, so two runs' adapters cannot both listen): waits up to ``timeout`` for another run's to stop."""
    locks.mkdir(parents=True, exist_ok=True)
    handle = (locks / f"test-adapter-{WRITE_PORT}.lock").open("w")
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return handle
        except BlockingIOError as err:
            if time.monotonic() > deadline:
                handle.close()
                why = f"port {WRITE_PORT} held by another run's adapter for {timeout:.0f} s"
                raise ComponentError("test-adapter", why) from err
            time.sleep(1)


def _pod_with_ip(cp: ControlPlane) -> Obj | None:
    selector = ",".join(f"{k}={v}" for k, v in sorted(LABELS.items()))
    pods = cp.kube.list("v1", "Pod", ADAPTER_NAMESPACE, label_selector=selector)
    return next(
        (p for p in pods if (p.get("status") or {}).get("podIP") and not p["metadata"].get("deletionTimestamp")), None
    )


def _token(cp: ControlPlane, pod: Obj) -> str:
    """A token of the pod's service account, bound to the pod (as its service account volume holds one)."""
    meta = pod["metadata"]
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {
            "expirationSeconds": 3600 * 6,
            "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]},
        },
    }
    path = f"/api/v1/namespaces/{ADAPTER_NAMESPACE}/serviceaccounts/{ADAPTER_SERVICE_ACCOUNT}/token"
    return str(cp.kube.request("POST", path, request)["status"]["token"])


def available(cp: ControlPlane, name: str = WATCHED) -> bool:
    """Whether the aggregator reports the APIService ``name`` Available (its discovery passed through the Service)."""
    found = cp.kube.find("apiregistration.k8s.io/v1", "APIService", name)
    conditions = ((found or {}).get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Available" and c.get("status") == "True" for c in conditions)


def _check(adapter: Adapter, cp: ControlPlane) -> bool:
    """The process runs, the aggregator reports the APIService Available, and its proxy answers through it (the
    proxy takes the availability from the APIService's status a moment later: 503 until then)."""
    adapter.process.check_running()
    if not available(cp):
        return False
    version, _, group = WATCHED.partition(".")
    try:
        cp.kube.request("GET", f"/apis/{group}/{version}")
    except (ApiError, OSError):
        return False
    return True


LOCK_SECONDS = 1800.0
"""How long a run waits for another run's adapter to give :data:`WRITE_PORT` back: longer than a whole stack run
(about 7 minutes on a loaded machine, 15 at most measured), so that runs on one machine take turns rather than fail
(SRE review round 26, m5; GKE review round 61: two reviewers' zone-outage runs failed on it). CI runs one at a time."""


def start_adapter(
    cp: ControlPlane, binary: Path | None = None, timeout: float = 180.0, lock_seconds: float = LOCK_SECONDS
) -> Adapter:
    """The platform's adapter objects applied, the stand-in started for the Deployment's pod once it has its IP, its
    Service's ClusterIP port forwarded to it; returns once the custom metrics APIService is Available. Stopped with
    ``cp``. Waits up to ``lock_seconds`` for the write port (:func:`hold_write_port`), then ``timeout`` to start."""
    assert cp.tools is not None
    found = binary or cp.tools.get("test-adapter")
    if found is None or not Path(found).is_file():
        raise ComponentError("test-adapter", f"no binary for test-adapter in the toolchain ({dict(cp.tools)})")
    # The lock first: an APIService applied while another run holds the port would stay unavailable, and a
    # namespace cannot finish deleting while an aggregated API fails discovery (NamespaceDeletionDiscoveryFailure;
    # SRE review round 16, m7: destroy then timed out)
    lock = hold_write_port(lock_seconds)
    try:
        return _start(cp, Path(found), lock, timeout)
    except BaseException:
        lock.close()
        withdraw_apiservices(cp)
        raise


def withdraw_apiservices(cp: ControlPlane) -> None:
    """Delete the adapter's APIServices: a stand-in that failed to start leaves no aggregated API that fails
    discovery, so the stack's namespaces can still be deleted."""
    for group, version, _ in APISERVICES:
        with contextlib.suppress(ApiError, OSError):  # the start's own error is the one to report
            cp.kube.delete("apiregistration.k8s.io/v1", "APIService", f"{version}.{group}")


def _start(cp: ControlPlane, found: Path, lock: IO[str], timeout: float) -> Adapter:
    for obj in platform_objects():
        cp.kube.apply(obj)
    pod: Obj = wait_for("the metrics adapter's pod with its IP", functools.partial(_pod_with_ip, cp), timeout=timeout)
    address = check_loopback(cp.addresses.stand_in(str(pod["status"]["podIP"])))
    folder = cp.directory / "pods" / f"{ADAPTER_NAMESPACE}_{pod['metadata']['name']}"
    folder.mkdir(parents=True, exist_ok=True)
    kubeconfig = write_kubeconfig(folder / "kubeconfig", cp.server, cp.pki.ca.cert, token=_token(cp, pod))
    process = cp.spawn("test-adapter", adapter_argv(found, address, folder / "certs", kubeconfig))
    adapter = Adapter(process, address, lock=lock)
    cp.at_stop(adapter.stop)
    service = cp.kube.get("v1", "Service", ADAPTER_DEPLOYMENT, ADAPTER_NAMESPACE)
    listen = (str(service["spec"]["clusterIP"]), PORT)
    adapter.forwarder = Forwarder(listen, lambda: [(address, PORT)] if process.running() else []).start()
    try:
        wait_for(f"APIService {WATCHED} Available", functools.partial(_check, adapter, cp), timeout=timeout)
    except (TimeoutError, ComponentError) as err:
        raise ComponentError("test-adapter", str(err), process.log) from err
    return adapter
