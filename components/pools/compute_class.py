"""A serving's capacity fallback: a GKE ComputeClass (``cloud.google.com/v1``) whose first priority is the serving's own
node pools and whose next ones let GKE create a whole slice of the same shape another way, in order, when those pools
cannot add one (a stockout, a reservation used up).

Catalog, pure builders and one thin component (:class:`TpuComputeClass`). Sources, each where it is used:

- Custom ComputeClasses: "available to use in GKE Autopilot mode and GKE Standard mode in version 1.30.3-gke.1451000
  and later" (GKE, "About custom ComputeClasses",
  https://docs.cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes).
- The schema: ``priorities[]`` with ``nodepools`` alone ("Nodepool field cannot be set along with other fields"),
  ``tpu{type,count,topology}`` (``count``: "preferred count of TPU chips for a node"), ``spot``, ``flexStart``
  ("Flex Start provisioning model is incompatible with Spot"); ``priorityDefaults.location.zones`` ("Zones lists
  zones considered for node autoprovisioning"; "PriorityDefaults doesn't apply to priorities with only Nodepools");
  ``whenUnsatisfiable`` ScaleUpAnyway or DoNotScaleUp; ``nodePoolConfig.serviceAccount`` ("ServiceAccount used by the
  node pool"); ``activeMigration.optimizeRulePriority`` (datreeio/CRDs-catalog 7b1e26ef
  ``cloud.google.com/computeclass_v1.json``, the reference folder's ``crds/gke-computeclass-v1.schema.json``).
- TPU classes as Google publishes them: ``tpu.type`` is the node label value (``tpu-v6e-slice``, ``tpu-v5p-slice``),
  ``count`` the chips of one VM (v5p 2x2x2: 4), node pool auto-creation on, and the ladder on-demand, flex-start,
  Spot, including the two-VM v5p 2x2x2 (GoogleCloudPlatform/accelerated-platforms 9320f3b,
  ``platforms/gke/base/core/custom_compute_class/templates/manifests/tpu/v5p/custom-compute-tpu-v5p-2x2x2.yaml``
  l.20-80, ``.../tpu/v6e/custom-compute-tpu-v6e-2x4.yaml``).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..catalog import SliceShape
from ..common.naming import check_dns_name
from ..common.options import child_options
from ..common.settings import described
from ..common.validation import Choice, check_arguments

API_VERSION = "cloud.google.com/v1"
KIND = "ComputeClass"

LABEL = "cloud.google.com/compute-class"
"""The node label (and taint key) of a class: GKE labels the nodes of a pod's class with it, and a pool made by hand
takes part in a class with that label and the taint ``cloud.google.com/compute-class=<name>:NoSchedule`` (GKE, "About
node pool auto-creation": "如果您在 Pod 中选择 ComputeClass,GKE 会添加一个节点标签,并将 cloud.google.com/compute-class
键设置为该 ComputeClass 的名称"; google/skills 1af77752 skills/cloud/gke-compute-classes/SKILL.md l.63-65: "Manual pools
STILL require cloud.google.com/compute-class=<NAME> as label AND taint")."""

CUSTOM_CLASS_MIN_GKE = "1.30.3-gke.1451000"
"""GKE's first version with custom ComputeClasses in Standard (the module's first source)."""

AUTO_CREATION_MIN_GKE = "1.33.3-gke.1136000"
"""GKE's first version that creates a ComputeClass's node pools without cluster-wide node auto-provisioning: "In GKE
version 1.33.3-gke.1136000 and later, you can enable node pool auto-creation for a ComputeClass even if the cluster
doesn't have node auto-provisioning enabled" (GKE, "Configure node pool auto-creation",
https://docs.cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning). The stack's cluster has no
cluster-wide auto-provisioning, so its fallback needs this version."""

FLEX_START_TPU_MIN_GKE = "1.33.0-gke.1712000"
"""Flex-start TPU VMs need "GKE version 1.33.0-gke.1712000 or later" (GKE, "About flex-start VMs",
https://cloud.google.com/kubernetes-engine/docs/concepts/dws)."""

FLEX_START_GENERATIONS = frozenset({"v5e", "v5p", "v6e"})
"""The TPU generations flex-start offers: "TPU Trillium (v6e) in asia-northeast1-b, us-east5-a, us-east5-b; TPU v5e in
us-west4-a; TPU v5p in us-east5-a; TPU v3 and v4 are not supported" (the same page)."""

WHEN_UNSATISFIABLE = "DoNotScaleUp"
"""When no priority can add a slice the group stays Pending: ScaleUpAnyway would make a node outside the priorities
(google/skills 1af77752 skills/cloud/gke-compute-classes/references/crd-fields.md l.106-109: "ScaleUpAnyway: Provisions
E2 nodes on Standard with node pool auto-creation"), which holds no TPU. Also the schema's default."""


class Fallback(Choice):
    """A way GKE may create a slice when the serving's own pools cannot add one."""

    ON_DEMAND = "on-demand"
    FLEX_START = "flex-start"
    SPOT = "spot"


FALLBACK_DESCRIPTION = (
    "Capacity fallback, in order: when the serving's own slice pools cannot add a slice (a stockout, a reservation "
    "used up), GKE creates a whole slice of the same shape in the slices' zones the first of these ways it can: "
    f"`on-demand`, `flex-start` (Dynamic Workload Scheduler; TPU {', '.join(sorted(FLEX_START_GENERATIONS))}, GKE "
    f"{FLEX_START_TPU_MIN_GKE} or later) or `spot`. The stack makes a ComputeClass whose first priority is its own "
    "pools (labelled and tainted for it) and the serving's pods select it; GKE creates the fallback pools itself (GKE "
    f"{AUTO_CREATION_MIN_GKE} or later). Unset: no class, the groups take only the stack's pools."
)


@dataclass(frozen=True)
class TpuComputeClassArgs:
    """Arguments of :class:`TpuComputeClass`."""

    shape: SliceShape
    """The shape of every slice the class gives: the serving's pools' and each fallback's."""
    node_pools: Sequence[str]
    """The serving's own GKE node pools, the first priority (each labelled and tainted for the class)."""
    zones: Sequence[str]
    """The zones a fallback slice may be created in: the serving slices' zones."""
    service_account: pulumi.Input[str] | None
    """The node service account email of the pools GKE creates (the serving slices' own); None on pools the stack does
    not make: GKE's default for the pools it creates, the cluster owner's to set."""
    fallback: Sequence[Fallback] = described(FALLBACK_DESCRIPTION, min_length=1)
    disk_size_gb: int | None = described(
        "Boot disk of each VM of a pool GKE makes, in GB (as the serving's pools': a file cache on the boot disk must "
        "fit there too); None: GKE's default.",
        default=None,
        ge=10,
    )
    image_streaming: bool = described("GKE image streaming on the pools GKE makes (as on the serving's).", default=True)
    labels: Mapping[str, str] | None = None
    """Kubernetes labels of the ComputeClass object."""

    def problems(self) -> list[str]:
        """The rules a stack file's ``serving.fallback`` obeys, for a program's class too (:func:`fallback_problems`;
        new-user review of the capacity fallback, M2), and at least one pool of its own."""
        steps = [str(f) for f in self.fallback]
        found = [f"fallback = {steps!r}: {p}" for p in fallback_problems(steps, self.shape)]
        return found + ([] if self.node_pools else ["node_pools = []: the serving's own pools, at least one"])


def name_problem(name: str | None) -> str:
    """Why ``name`` is not a ComputeClass name (a Kubernetes label value and object name: 63 characters at most), or
    ``""``."""
    return "" if name is None else check_dns_name(name)


FLEX_START_RECYCLING_SECONDS = 3600
"""How long before a flex-start VM's end GKE starts looking for its replacement (``flexStart.nodeRecycling
.leadTimeSeconds``), with the run at the flex-start maximum of 7 days (``maxRunDurationSeconds`` 604800): Google's TPU
classes set both so (GoogleCloudPlatform/accelerated-platforms 9320f3b, ``.../tpu/v6e/custom-compute-tpu-v6e-2x4.yaml``;
GKE "About flex-start VMs": flex-start VMs run for at most seven days)."""
FLEX_START_MAX_SECONDS = 7 * 24 * 3600


def fallback_priority(step: Fallback, shape: SliceShape, disk_size_gb: int | None = None) -> dict[str, Any]:
    """The ``priorities[]`` entry of one fallback: the whole slice's TPU (type as the node label, chips per VM,
    topology), how it is had, and the boot disk its VMs get."""
    tpu = {"type": shape.generation.gke_accelerator, "count": shape.chips_per_vm, "topology": shape.topology}
    storage = {"storage": {"bootDiskSize": disk_size_gb}} if disk_size_gb is not None else {}
    if step is Fallback.FLEX_START:
        recycled = {"enabled": True, "nodeRecycling": {"leadTimeSeconds": FLEX_START_RECYCLING_SECONDS}}
        return {"tpu": tpu, "flexStart": recycled, "maxRunDurationSeconds": FLEX_START_MAX_SECONDS, **storage}
    if step is Fallback.ON_DEMAND:
        # no reservation: a fallback slice must not take one that the serving's own pools count on (the schema's
        # "None" affinity "would prevent reservations from being used"; GKE review of issue 37, m2)
        return {"tpu": tpu, "spot": False, "reservations": {"affinity": "None"}, **storage}
    return {"tpu": tpu, "spot": True, **storage}


def compute_class_spec(args: TpuComputeClassArgs) -> dict[str, Any]:
    """``spec`` of the class: the serving's pools first, then each fallback in order, GKE creating their pools in the
    slices' zones as ``args.service_account``; nothing outside the priorities, and no move back to a preferred priority (a
    group moved is a group that reloads its model)."""
    return {
        "priorities": [
            {"nodepools": list(args.node_pools)},
            *(fallback_priority(Fallback(step), args.shape, args.disk_size_gb) for step in args.fallback),
        ],
        "priorityDefaults": {"location": {"zones": sorted(set(args.zones))}},
        "nodePoolAutoCreation": {"enabled": True},
        "nodePoolConfig": {
            **({"serviceAccount": args.service_account} if args.service_account is not None else {}),
            "imageStreaming": {"enabled": args.image_streaming},
        },
        "whenUnsatisfiable": WHEN_UNSATISFIABLE,
        "activeMigration": {"optimizeRulePriority": False},
    }


def node_labels(name: str) -> dict[str, str]:
    """The Kubernetes labels of a pool that takes part in class ``name``."""
    return {LABEL: name}


def node_taints(name: str) -> list[dict[str, str]]:
    """The node taint of a pool that takes part in class ``name`` (pulumi-gcp ``NodePoolNodeConfigTaint``)."""
    return [{"key": LABEL, "value": name, "effect": "NO_SCHEDULE"}]


def label_command(name: str, pool: str) -> str:
    """How the owner of an existing pool makes it take part in class ``name``: its Kubernetes label and its taint, each
    updated in place (``gcloud container node-pools update`` takes ``--node-labels`` and ``--node-taints`` in separate
    calls, and each replaces the pool's whole set: the pool's other labels and taints go in too), less the cluster's
    flags."""
    return (
        f"gcloud container node-pools update {pool} --node-labels=<its labels>,{LABEL}={name}; "
        f"gcloud container node-pools update {pool} --node-taints=<its taints>,{LABEL}={name}:NoSchedule"
    )


def toleration(name: str) -> k8s.core.v1.TolerationArgs:
    """The toleration of a pod that selects class ``name``, for the taint on the serving's own pools."""
    return k8s.core.v1.TolerationArgs(key=LABEL, operator="Equal", value=name, effect="NoSchedule")


SPOT_LABEL = "cloud.google.com/gke-spot"
"""GKE's label of a Spot VM node, and the key of the taint GKE puts on the Spot node pools it creates itself:
``cloud.google.com/gke-spot="true":NoSchedule`` (GKE, "About node auto-provisioning", "Support for Spot VMs",
https://cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning#support_for_spot_vms; for a class's Spot
priority: google/skills 1af77752 skills/cloud/gke-compute-classes/SKILL.md l.77-84, "GKE auto-taints Spot nodes ...
Pods targeting a Spot priority tier must tolerate this taint"). GKE's own toleration for a class covers the class's key
only (the same file, l.57-66)."""


def tolerations(name: str) -> list[k8s.core.v1.TolerationArgs]:
    """The tolerations of a pod that selects class ``name``: the class's taint, on the serving's own pools, and GKE's
    Spot taint, on the slices of a Spot step. A toleration only admits: the pod's class selector still keeps it on the
    class's nodes, and a class without a Spot step has no node with that taint (GKE review of issue 37 item 2, M1)."""
    return [
        toleration(name),
        k8s.core.v1.TolerationArgs(key=SPOT_LABEL, operator="Equal", value="true", effect="NoSchedule"),
    ]


def fallback_problems(fallback: Sequence[str], shape: SliceShape) -> list[str]:
    """What GKE or this library refuses in a fallback for ``shape``, each naming the step and its rule's source."""
    found = []
    repeated = sorted({str(step) for step in fallback if list(fallback).count(step) > 1})
    if repeated:  # the caller names the whole list (new-user review of the capacity fallback: it was said twice)
        found.append(f"{', '.join(repeated)} repeated: each way once; a repeated one is never reached")
    if Fallback.FLEX_START in fallback and shape.generation.name not in FLEX_START_GENERATIONS:
        found.append(
            f'flex-start: no flex-start {shape.generation.name} VMs (GKE "About flex-start VMs": TPU '
            f"{', '.join(sorted(FLEX_START_GENERATIONS))} only)"
        )
    if Fallback.FLEX_START in fallback and shape.vms > 1:
        found.append(
            f"flex-start: {shape.slice_name} spans {shape.vms} VMs, and GKE's flex-start page offers flex-start TPU VMs "
            'to workloads that run in single-host TPU slice node pools ("About flex-start VMs")'
        )
    if shape.workload_policy:
        found.append(
            f"{shape.slice_name} is placed by a workload policy: this library makes no ComputeClass for such a slice "
            "(the class's priorities take placement.policyName, but no TPU class Google publishes uses one, and none "
            "was tried here); leave fallback unset, and hold the slice with a reservation"
        )
    return found


class TpuComputeClass(pulumi.ComponentResource):
    """The ComputeClass of one serving: its pools first, then the fallbacks."""

    name: str
    """The class name, which the serving's pods select (``cloud.google.com/compute-class``)."""

    def __init__(self, name: str, args: TpuComputeClassArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"TpuComputeClass {name!r}", args, TpuComputeClassArgs)
        super().__init__("tpu-serving:index:TpuComputeClass", name, None, opts)
        self.name = name
        self.compute_class = k8s.apiextensions.CustomResource(
            name,
            api_version=API_VERSION,
            kind=KIND,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=name, labels=dict(args.labels or {}) or None),
            spec=compute_class_spec(args),
            opts=child_options(self, opts),
        )
        self.register_outputs({"name": name, "fallback": [str(s) for s in args.fallback]})
