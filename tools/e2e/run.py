"""``make e2e``: each stack's Kubernetes half applied by the real Pulumi engine to a real control plane that runs the
real controllers, then judged from the API server.

Per stack, in a control plane of its own (:class:`~.controlplane.ControlPlane`):

1. GKE's built-in CRDs, and kwok Nodes for the stack's node pools as GKE labels, taints and sizes them (from the
   stack's own offline plan: the pools an existing cluster would have);
2. the stack in existing-cluster mode (:mod:`.overlay`: every cloud resource named existing, the cluster reached
   with the control plane's kubeconfig, each controller's release manifest read from a local file rendered from
   its pinned Go module), ``pulumi up`` through the engine (:mod:`.stack_run`), while the real controller binaries
   stand in for the pods of the controller Deployments the stack itself installs (:mod:`.controllers`);
3. ``tpu-serving verify``'s checks (:mod:`tpu_serving_tools.verify`) against the API server;
4. the lifecycle (:mod:`.lifecycle`): a second preview with no change, a scale from one group to two through the
   scale subresource, and ``pulumi destroy`` leaving nothing behind.

Every step's findings are printed; the run fails on any failed finding. Nothing reaches a cloud.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpu_serving_tools.verify.checks import Finding
from tpu_serving_tools.verify.expect import Expectations, declared_objects, pools
from tpu_serving_tools.verify.snapshot import read

from .controllers import JOBSET, LWS, ControllerSpec, run_controller
from .controlplane import ControlPlane, load_toolchain
from .crds import install_crds
from .lifecycle import inventory, second_preview
from .nodes import create_plan_nodes
from .stack_run import Engine, StackRun, project_dir


@dataclass
class StackReport:
    """What one stack's run found, and how long each step took."""

    stack: str
    findings: list[Finding] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and bool(self.findings) and all(f.ok for f in self.findings)

    def step(self, name: str, action: Callable[[], Any]) -> Any:
        began = time.monotonic()
        try:
            return action()
        finally:
            self.timings[name] = round(time.monotonic() - began, 1)


@dataclass
class Background:
    """A controller started in a thread once its Deployment's pod exists (the stack installs it during ``up``)."""

    spec: ControllerSpec
    cp: ControlPlane
    error: str = ""
    _thread: threading.Thread | None = None

    def start(self) -> Background:
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"controller-{self.spec.tool}")
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            run_controller(self.cp, self.spec, timeout=600.0)
        except Exception as err:  # reported with the stack's findings
            self.error = f"{type(err).__name__}: {err}"


def expectations_of(config: Mapping[str, Any], state: Sequence[Mapping[str, Any]]) -> Expectations:
    """What the checks compare the cluster with: the objects in the stack's state, its namespaces and pools."""
    from tpu_serving.config.loading import load_stack_config

    flat = {(k if ":" in k else f"tpu-serving:{k}"): v for k, v in config.items()}
    cfg = load_stack_config(flat, source="the e2e stack configuration")
    objects = declared_objects(state)
    namespaces = sorted({ns for _, _, ns, _ in objects if ns} | {cfg.workload_identity.namespace})
    return Expectations(objects, namespaces, pools(cfg), cfg.serving is not None)


def api_client(kubeconfig: Path) -> Any:
    from kubernetes import config as kube_config

    return kube_config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]


def controllers_for(config: Mapping[str, Any]) -> list[ControllerSpec]:
    """The controllers a stack installs, by its backend."""
    backend = str((config.get("serving") or {}).get("backend", ""))
    if backend in ("saxml",):
        return [JOBSET]
    if backend in ("pathways-job",):
        return [JOBSET]
    return [LWS] if backend else []


RELEASES: dict[str, tuple[str, str, str, str]] = {
    # controller -> (module, version, kustomize manager folder, image): see .manifests
    "lws": ("sigs.k8s.io/lws", "v0.9.0", "config/manager", "registry.k8s.io/lws/lws:v0.9.0"),
    "jobset": ("sigs.k8s.io/jobset", "v0.12.0", "config/components/manager", "registry.k8s.io/jobset/jobset:v0.12.0"),
}
"""The controller releases the run renders and runs. LeaderWorkerSet runs v0.9.0, the newest release whose module
the proxy serves (``go mod download sigs.k8s.io/lws@v0.10.0`` answers 403 "This module version is not available"):
the stacks are run with ``serving.lwsVersion: v0.9.0``."""

CONTROLLER_SPECS = {"lws": LWS, "jobset": JOBSET}
MANIFEST_HOSTS = {"kubernetes-sigs/lws/": "lws", "kubernetes-sigs/jobset/": "jobset", "google/pathways-job/": "pathways-job"}


def installed_controllers(plan: Mapping[str, Any]) -> list[str]:
    """The controllers whose release manifests a stack's plan applies (its ConfigGroups' files)."""
    found = []
    for r in plan.get("resources") or []:
        if r.get("type") != "kubernetes:yaml/v2:ConfigGroup":
            continue
        for url in (r.get("inputs") or {}).get("files") or []:
            found += [name for host, name in MANIFEST_HOSTS.items() if host in str(url)]
    return sorted(set(found))
