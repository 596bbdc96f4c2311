"""What a stack's plan says the cluster should hold: its Kubernetes objects, its namespaces and its TPU pools.

Read from a plan (``plan.json`` of ``tpu-serving preview``, or a Pulumi state's resources, which have the same
``type`` and ``inputs``/``outputs`` fields) and the stack's settings, never from the cluster.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tpu_serving import catalog
from tpu_serving.common.settings import PROJECT_NAMESPACE
from tpu_serving.config.loading import load_stack_config
from tpu_serving.config.models import StackConfig
from tpu_serving_tools.gcp_types import NODE_POOL
from tpu_serving_tools.preview.offline import OPAQUE_KUBERNETES_TYPES

from .checks import SERVING_KINDS, Pool

Declared = tuple[str, str, str | None, str]
"""An object the plan declares: apiVersion, kind, namespace (None when cluster-scoped) and name."""


@dataclass(frozen=True)
class Expectations:
    """What the checks compare the cluster with."""

    declared: Sequence[Declared]
    namespaces: Sequence[str]
    pools: Mapping[str, Pool]
    serving: bool
    classes: Mapping[str, Pool] = dataclasses.field(default_factory=dict)
    """The slice of each of the plan's ComputeClasses (its first priority's pools'), for the pools GKE makes for it."""


PATCH_SUFFIX = "Patch"
"""A Patch resource's type is its kind's with this suffix (``kubernetes:scheduling.k8s.io/v1:PriorityClassPatch``): a
server-side apply of the kind's object, which is what the API server holds (found by the e2e run of
vllm-llama33-70b-existing: its shared-cluster PriorityClasses were looked up as a kind PriorityClassPatch)."""


def api_version(type_token: str) -> tuple[str, str]:
    """``kubernetes:apps/v1:Deployment`` -> (``apps/v1``, ``Deployment``); the core group is ``v1``; a Patch
    resource's type gives the kind it patches."""
    _, group_version, kind = type_token.split(":", 2)
    return (group_version.removeprefix("core/"), kind.removesuffix(PATCH_SUFFIX))


def declared_objects(resources: Sequence[Mapping[str, Any]]) -> list[Declared]:
    """The Kubernetes objects of a plan's (or a state's) resources, in order."""
    out: list[Declared] = []
    for r in resources:
        token = str(r.get("type", ""))
        if (
            not token.startswith("kubernetes:")
            or token in OPAQUE_KUBERNETES_TYPES
            or token.startswith("pulumi:providers:")
        ):
            continue
        metadata = (r.get("outputs") or r.get("inputs") or {}).get("metadata") or {}
        name = metadata.get("name")
        if not isinstance(name, str):
            continue
        version, kind = api_version(token)
        namespace = metadata.get("namespace")
        out.append((version, kind, namespace if isinstance(namespace, str) and kind != "Namespace" else None, name))
    return out


def pools(cfg: StackConfig) -> dict[str, Pool]:
    """The stack's TPU pools by their GKE name (an existing pool's own name, else the name the stack gives it), with
    the labels GKE gives their nodes."""
    out = {}
    for kind in cfg.tpu_slices:
        shape = kind.shape
        for name in cfg.node_pool_names(kind):
            out[name] = Pool(name, shape.generation.gke_accelerator, shape.topology, shape.vms, shape.chips_per_vm)
    return out


DEPLOYMENT_TYPE = "tpu-serving:index:TpuServingDeployment"
"""The component a stack file's program makes (``__main__.py``): its plan holds the stack's settings."""


def expectations(plan: Mapping[str, Any]) -> Expectations:
    """The expectations of a plan: from its stack's settings (``config``) when a stack file's deployment made it,
    else (a program that builds the components itself: no ``TpuServingDeployment``) from its resources alone."""
    config, resources = plan.get("config") or {}, plan.get("resources") or []
    if not any(r.get("type") == DEPLOYMENT_TYPE for r in resources):
        return expectations_of_resources(resources)
    project = plan.get("project")
    return expectations_from(
        config,
        resources,
        f"stack configuration in the plan of {plan.get('stack')}",
        project if isinstance(project, str) and project else PROJECT_NAMESPACE,
    )


def resource_pools(resources: Sequence[Mapping[str, Any]]) -> dict[str, Pool]:
    """The TPU node pools a plan creates, by their GKE name, read off each pool's machine type and topology (a
    multi-host pool's ``placementPolicy.tpuTopology``, else the machine type's one topology)."""
    out = {}
    for r in resources:
        if r.get("type") != NODE_POOL:
            continue
        inputs = r.get("inputs") or {}
        machine = str((inputs.get("nodeConfig") or {}).get("machineType"))
        shape = catalog.pool_slice(machine, (inputs.get("placementPolicy") or {}).get("tpuTopology"))
        if shape is None or not isinstance(inputs.get("name"), str):
            continue  # a CPU pool
        out[inputs["name"]] = Pool(
            inputs["name"], shape.generation.gke_accelerator, shape.topology, shape.vms, shape.chips_per_vm
        )
    return out


def expectations_of_resources(resources: Sequence[Mapping[str, Any]]) -> Expectations:
    """The expectations of a program's plan without stack settings (the library used directly): its objects and their
    namespaces, the TPU pools it creates, and a serving workload when it declares one."""
    objects = declared_objects(resources)
    namespaces = sorted(
        {ns for _, kind, ns, _ in objects if ns} | {n for _, kind, _, n in objects if kind == "Namespace"}
    )
    serving = any(kind in SERVING_KINDS for _, kind, _, _ in objects)
    made = resource_pools(resources)
    return Expectations(objects, namespaces, made, serving, class_pools(resources, made))


def expectations_from(
    config: Mapping[str, Any],
    resources: Sequence[Mapping[str, Any]],
    source: str,
    project: str = PROJECT_NAMESPACE,
) -> Expectations:
    """The expectations of a stack's flat config (``namespace:key`` -> value) and its resources (a plan's, or a
    deployed state's). Settings are read under ``project``, the Pulumi project of the program that made the plan,
    as the program itself read them."""
    cfg = load_stack_config(config, source=source, namespace=project)
    objects = declared_objects(resources)
    namespaces = sorted({ns for _, kind, ns, _ in objects if ns} | {cfg.workload_identity.namespace})
    known = pools(cfg)
    return Expectations(objects, namespaces, known, cfg.serving is not None, class_pools(resources, known))


COMPUTE_CLASS_TYPE = "kubernetes:cloud.google.com/v1:ComputeClass"


def class_pools(resources: Sequence[Mapping[str, Any]], pools: Mapping[str, Pool]) -> dict[str, Pool]:
    """Each ComputeClass of the resources whose first priority names pools of ``pools``, by its name: the slice of
    those pools, which every pool GKE makes for the class has (the class's priorities are that one shape)."""
    out = {}
    for r in resources:
        if r.get("type") != COMPUTE_CLASS_TYPE:
            continue
        inputs = r.get("outputs") or r.get("inputs") or {}
        name = (inputs.get("metadata") or {}).get("name")
        first = ((inputs.get("spec") or {}).get("priorities") or [{}])[0].get("nodepools") or []
        known = [pools[p] for p in first if p in pools]
        if isinstance(name, str) and known:
            out[name] = dataclasses.replace(known[0], name=name)
    return out
