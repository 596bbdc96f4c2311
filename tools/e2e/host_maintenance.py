"""The host-maintenance gate on a real control plane: its objects as the stack's plan declares them, its program run
as its ServiceAccount, and its admission policy as the real kube-apiserver evaluates it.

In the host-maintenance test, not the Pulumi engine: the gate's objects (Namespace, ServiceAccount, Role, ClusterRole, their bindings, the
ValidatingAdmissionPolicy and its binding, the ConfigMap and the CronJob) and the HPA it reads are created from the stack's offline plan
(:func:`tpu_serving_tools.preview.offline.kubernetes_objects`), the objects the provider would send; in a stack's run, the
objects ``pulumi up`` created. The program runs as a process of this machine, as the pod would run it: the files of
the ConfigMap read back from the API server, each at its CronJob volume item's path, the CronJob's arguments and
environment (its mount path replaced by the folder), ``KUBERNETES_SERVICE_HOST``/``PORT`` of the control plane, and in
``SERVICE_ACCOUNT_DIR`` a token of the gate's ServiceAccount from the TokenRequest API (kubernetes.io/docs/reference/
kubernetes-api/authentication-resources/token-request-v1/) and the cluster's CA, as the kubelet mounts them in the
pod. The interpreter runs with ``-S`` (no site-packages), so that it cannot import the library in place of the
ConfigMap's files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tpu_serving.common.naming import MAINTENANCE_GATE_STATE

from .controlplane import ControlPlane
from .kube import ApiError, Kube, wait_for

Obj = dict[str, Any]
GATE = "host-maintenance-gate"
ORDER = (
    "Namespace",
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ConfigMap",
    "CronJob",
    "HorizontalPodAutoscaler",
)


def gate_objects(objects: Sequence[Mapping[str, Any]], namespace: str) -> list[Obj]:
    """The serving namespace, the gate's objects (its state ConfigMap among them) and the HPA it reads, of a plan's
    Kubernetes objects, in an order the API server takes."""
    names = {namespace, GATE, f"{namespace}-{GATE}", MAINTENANCE_GATE_STATE}
    chosen = [
        dict(o)
        for o in objects
        if o.get("kind") in ORDER
        and (o["metadata"]["name"] in names or o["kind"] == "HorizontalPodAutoscaler")
        and o["metadata"].get("namespace") in (None, namespace)
    ]
    chosen = [o for o in chosen if o["kind"] != "Namespace" or o["metadata"]["name"] == namespace]
    return sorted(chosen, key=lambda o: ORDER.index(o["kind"]))


def create_gate(cp: ControlPlane, objects: Sequence[Mapping[str, Any]], namespace: str) -> list[Obj]:
    """Create the gate's objects; what the API server returned."""
    return [cp.kube.create(o) for o in gate_objects(objects, namespace)]


def create_leader_worker_sets(cp: ControlPlane, objects: Sequence[Mapping[str, Any]], namespace: str) -> list[Obj]:
    """The controllers' CRDs installed, then the plan's LeaderWorkerSets of ``namespace`` created (no controller
    runs: a watching gate reads their ``spec.replicas``, and the test creates the serving pods itself)."""
    from .crds import SHARED_CRDS, controller_crds, install

    skipped: list[str] = []
    crds = [(o, c) for o, c in controller_crds(SHARED_CRDS, skipped) if c["spec"]["names"]["kind"] == "LeaderWorkerSet"]
    if not crds:
        raise ApiError("APPLY", "the LeaderWorkerSet CRD", 404, "; ".join(skipped) or "not in the reference folder")
    install(cp.kube, crds)
    sets = [
        {k: v for k, v in o.items() if k != "status"}
        for o in objects
        if o.get("kind") == "LeaderWorkerSet" and o["metadata"].get("namespace") == namespace
    ]
    return [cp.kube.create(o) for o in sets]


def gate_token(kube: Kube, namespace: str, seconds: int = 3600) -> str:
    """A token of the gate's ServiceAccount (TokenRequest), asked for with ``kube`` (the admin's connection)."""
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": seconds}}
    answer = kube.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{GATE}/token", body)
    return str(answer["status"]["token"])


def as_gate(cp: ControlPlane, namespace: str) -> Kube:
    """A connection to the API server as the gate's ServiceAccount."""
    return Kube(cp.server, cp.pki.ca.cert, token=gate_token(cp.kube, namespace))


def _container(kube: Kube, namespace: str) -> tuple[Obj, Obj]:
    cron = kube.get("batch/v1", "CronJob", GATE, namespace)
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    return pod, container


def cron_env(kube: Kube, namespace: str) -> dict[str, str]:
    """The gate container's environment, read from the CronJob in the API server."""
    _, container = _container(kube, namespace)
    return {e["name"]: e.get("value", "") for e in container.get("env", [])}  # an empty value is not stored


def lay_out_program(kube: Kube, namespace: str, folder: Path) -> tuple[list[str], str]:
    """The ConfigMap's files written under ``folder`` at the CronJob's volume item paths; the container's arguments
    and its mount path."""
    pod, container = _container(kube, namespace)
    (mount,) = container["volumeMounts"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    data = kube.get("v1", "ConfigMap", volume["configMap"]["name"], namespace)["data"]
    for item in volume["configMap"]["items"]:
        (folder / item["path"]).parent.mkdir(parents=True, exist_ok=True)
        (folder / item["path"]).write_text(data[item["key"]])
    return list(container["args"]), str(mount["mountPath"])


def run_gate(
    cp: ControlPlane, namespace: str, folder: Path, overrides: Mapping[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    """:func:`run_gate_on` the control plane ``cp``."""
    return run_gate_on(cp.kube, namespace, folder, overrides)


def run_gate_on(
    kube: Kube, namespace: str, folder: Path, overrides: Mapping[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    """One run of the program as the gate, on the API server ``kube`` connects to as its admin: its exit code and
    its JSON line. ``overrides``: settings of the CronJob's environment to change (a shorter ``LOST_SECONDS``, so
    that a run sees a node lost without waiting 10 minutes)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "token").write_text(gate_token(kube, namespace))
    (folder / "ca.crt").write_bytes(Path(kube.ca_file).read_bytes())
    args, mount = lay_out_program(kube, namespace, folder / "program")
    host, port = kube.server.removeprefix("https://").rsplit(":", 1)
    env = {
        **{k: v.replace(mount, str(folder / "program")) for k, v in cron_env(kube, namespace).items()},
        **(overrides or {}),
        "SERVICE_ACCOUNT_DIR": str(folder),
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": port,
        "PATH": os.environ.get("PATH", ""),
    }
    done = subprocess.run(
        [sys.executable, "-S", *args], env=env, cwd=folder, capture_output=True, text=True, timeout=120
    )
    lines = done.stdout.strip().splitlines()
    if len(lines) != 1:
        raise AssertionError(f"the gate printed {len(lines)} lines: {done.stdout!r} {done.stderr!r}")
    line: dict[str, Any] = json.loads(lines[0])
    return done.returncode, line


def label_status(kube: Kube, node: str, labels: Mapping[str, str]) -> int:
    """The HTTP status of a merge patch of ``node``'s labels (200 when it passed)."""
    try:
        kube.request(
            "PATCH",
            f"/api/v1/nodes/{node}",
            {"metadata": {"labels": dict(labels)}},
            content_type="application/merge-patch+json",
        )
    except ApiError as err:
        return err.status
    return 200


def await_policy(cp: ControlPlane, kube: Kube, node: str, timeout: float = 60.0) -> None:
    """Wait until the admission policy is in force: a label the gate may not add is refused (the policy and its
    binding reach the API server's admission through informers, a moment after they are created)."""

    def refused() -> bool:
        status = label_status(kube, node, {"tpu-serving.dev/e2e-probe": "x"})
        if status == 200:  # before the policy: take it off again
            cp.kube.request(
                "PATCH",
                f"/api/v1/nodes/{node}",
                {"metadata": {"labels": {"tpu-serving.dev/e2e-probe": None}}},
                content_type="application/merge-patch+json",
            )
        return status == 422

    wait_for("the gate's admission policy in force", refused, timeout=timeout, interval=1.0)


def serving_pod(namespace: str, name: str, lws: str, node: str) -> Obj:
    """A leader pod of a LeaderWorkerSet group bound to ``node`` (kwok reports it Running and Ready), named
    ``<lws>-<group index>`` and labelled as the LWS pod webhook labels a leader."""
    labels = {
        "leaderworkerset.sigs.k8s.io/name": lws,
        "leaderworkerset.sigs.k8s.io/worker-index": "0",
        "leaderworkerset.sigs.k8s.io/group-index": name.rsplit("-", 1)[-1],
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "server", "image": "registry.invalid/stand-in:1"}],
            "tolerations": [{"operator": "Exists"}],
        },
    }


def await_ready(cp: ControlPlane, namespace: str, names: Sequence[str], timeout: float = 60.0) -> None:
    def ready() -> bool:
        pods = [cp.kube.get("v1", "Pod", n, namespace) for n in names]
        return all(
            any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in p.get("status", {}).get("conditions", [])
            )
            for p in pods
        )

    wait_for(f"pods {', '.join(names)} Ready", ready, timeout=timeout, interval=0.5)
