"""The catalog. This module: the TPU catalog, pure data plus the maths that derives slice shapes from it. Beside it:
machine types (:mod:`.machines`), the zones of each TPU generation (:mod:`.tpu_zones`), model sizes (:mod:`.models`),
capacity types (:mod:`.capacity`), list prices (:mod:`.prices`), the version set (:mod:`.versions`), container images
(:mod:`.images`) and the Pathways releases (:mod:`.pathways`).

A slice is keyed by ``(machine type, topology)``, never by topology alone: ``2x4`` is one
host on ``ct6e-standard-8t`` (8 chips per VM) and two hosts on ``ct6e-standard-4t``
(4 chips per VM). Everything the rest of the library needs about a slice (GKE accelerator
label, VMs per slice, chips, HBM, the Pathways/Saxml chip name) is derived here, so node
pools, node selectors, ``--instance_type`` and resource limits can never disagree.

Sources: the GKE "Plan TPUs" documentation and the Cloud TPU system architecture pages
(machine types, topologies, HBM per chip), cross-checked with xpk's system table.
"""

import difflib
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import prod
from types import MappingProxyType

import pulumi


class CatalogError(pulumi.RunError, ValueError):
    """A machine type, topology or slice name that the catalog does not know.

    Its message names the valid values (also in ``choices``). It is a ``pulumi.RunError``, so a program
    that asks the catalog for a slice that does not exist stops with this message and no traceback.
    """

    def __init__(self, message: str, choices: tuple[str, ...] = ()):
        super().__init__(f"{message}; valid: {', '.join(choices)}" if choices else message)
        self.choices = choices


@dataclass(frozen=True)
class TpuGeneration:
    """One TPU generation as GKE and the serving stacks name it."""

    name: str
    """Short generation name: ``v5e``, ``v6e``, ``v5p`` or ``tpu7x``."""
    gke_accelerator: str
    """Value of the ``cloud.google.com/gke-tpu-accelerator`` node label."""
    chip_name: str
    """Chip name used by Pathways ``--instance_type=<chip>:<topology>`` and Saxml ``--platform_chip``."""
    hbm_gib_per_chip: int
    """High-bandwidth memory per chip, in GiB."""
    slice_name_prefixes: Sequence[str]
    """Prefixes of the Cloud TPU slice names (``v6e-16``, ``v5litepod-32``); the first is canonical."""
    cores_per_chip: int
    """TensorCores per chip; Cloud TPU slice names count cores for v5p and chips otherwise."""
    dimensions: int
    """Topology dimensions: 2 (``4x8``) or 3 (``2x2x4``)."""
    min_gke: str | None = None
    """The first GKE version with node pools of this generation, where a source gives it; None: not read here."""
    devices_per_chip: int = 1
    """JAX devices (what tensor parallelism splits over) per chip: 1, or 2 on TPU7x, whose chips each expose their two
    TensorCores as two devices."""
    workload_policy: bool = False
    """Whether a multi-host slice of this generation is placed by a workload policy (a ``HIGH_THROUGHPUT`` Compute
    Engine resource policy carrying the slice topology, named in the pool's placement policy) instead of the COMPACT
    placement GKE makes from a TPU topology."""


@dataclass(frozen=True)
class MachineType:
    """A GKE TPU machine type and the topologies GKE accepts for it."""

    name: str
    """GCE machine type, e.g. ``ct6e-standard-4t``."""
    generation: TpuGeneration
    """The TPU generation of its chips."""
    chips_per_vm: int
    """TPU chips attached to one VM (one Kubernetes node)."""
    topologies: Sequence[str]
    """Valid ``tpu_topology`` values for this machine type, smallest first."""


@dataclass(frozen=True)
class SliceShape:
    """One TPU slice: a machine type with a topology. All sizes derive from the two."""

    machine_type: MachineType
    """The machine type of every VM in the slice."""
    topology: str
    """The slice topology, e.g. ``4x4``."""

    @property
    def generation(self) -> TpuGeneration:
        """The TPU generation of the slice."""
        return self.machine_type.generation

    @property
    def chips(self) -> int:
        """TPU chips in the slice (the product of the topology's dimensions)."""
        return prod(parse_topology(self.topology))

    @property
    def chips_per_vm(self) -> int:
        """TPU chips per VM; the ``google.com/tpu`` resource each TPU pod requests."""
        return self.machine_type.chips_per_vm

    @property
    def vms(self) -> int:
        """VMs (GKE nodes) in the slice: the node pool's node count."""
        return self.chips // self.machine_type.chips_per_vm

    @property
    def multi_host(self) -> bool:
        """Whether the slice spans several VMs (needs COMPACT placement with a topology)."""
        return self.vms > 1

    @property
    def devices(self) -> int:
        """JAX devices of the slice: its chips, or twice as many on TPU7x (:attr:`TpuGeneration.devices_per_chip`)."""
        return self.chips * self.generation.devices_per_chip

    @property
    def workload_policy(self) -> bool:
        """Whether the slice's pool is placed by a workload policy (a multi-host slice of a generation that takes one)
        rather than COMPACT placement."""
        return self.multi_host and self.generation.workload_policy

    @property
    def hbm_gib(self) -> int:
        """Total HBM of the slice, in GiB."""
        return self.chips * self.generation.hbm_gib_per_chip

    @property
    def slice_name(self) -> str:
        """The Cloud TPU slice name, e.g. ``v6e-16`` or ``v5litepod-32``."""
        gen = self.generation
        return f"{gen.slice_name_prefixes[0]}-{self.chips * gen.cores_per_chip}"

    @property
    def instance_type(self) -> str:
        """The Pathways resource manager's ``--instance_type`` value, e.g. ``tpuv6e:4x4``."""
        return f"{self.generation.chip_name}:{self.topology}"

    def describe(self) -> str:
        """One line for humans: ``v6e-16 (ct6e-standard-4t 4x4: 4 VMs x 4 chips, 512 GiB HBM)``."""
        vms, chips = (
            f"{self.vms} VM{'s' if self.vms != 1 else ''}",
            f"{self.chips_per_vm} chip{'s' if self.chips_per_vm != 1 else ''}",
        )
        return f"{self.slice_name} ({self.machine_type.name} {self.topology}: {vms} x {chips}, {self.hbm_gib} GiB HBM)"


V5E = TpuGeneration(
    name="v5e",
    gke_accelerator="tpu-v5-lite-podslice",
    chip_name="tpuv5e",
    hbm_gib_per_chip=16,
    slice_name_prefixes=("v5litepod", "v5e"),
    cores_per_chip=1,
    dimensions=2,
)
V6E = TpuGeneration(
    name="v6e",
    gke_accelerator="tpu-v6e-slice",
    chip_name="tpuv6e",
    hbm_gib_per_chip=32,
    slice_name_prefixes=("v6e",),
    cores_per_chip=1,
    dimensions=2,
    # "TPU v6e is supported in GKE versions 1.31.2-gke.1115000 or later" (Ray's KubeRay guide for GKE TPUs,
    # docs.ray.io cluster/kubernetes/user-guides/gcp-gke-tpu-cluster, after GKE's table of TPU versions).
    min_gke="1.31.2-gke.1115000",
)
V5P = TpuGeneration(
    name="v5p",
    gke_accelerator="tpu-v5p-slice",
    chip_name="tpuv5",
    hbm_gib_per_chip=95,
    slice_name_prefixes=("v5p",),
    cores_per_chip=2,
    dimensions=3,
)
TPU7X = TpuGeneration(
    # Ironwood. HBM per chip: https://docs.cloud.google.com/tpu/docs/tpu7x (192 GiB, two
    # TensorCores per chip); GKE accelerator label, machine types and the Pathways chip name:
    # Google's xpk (AI-Hypercomputer/xpk src/xpk/core/system_characteristics.py:
    # gke_accelerator='tpu7x', tensorcores_per_chip=2, pathways_tpu_version='tpu7x').
    name="tpu7x",
    gke_accelerator="tpu7x",
    chip_name="tpu7x",
    hbm_gib_per_chip=192,
    slice_name_prefixes=("tpu7x",),
    cores_per_chip=2,
    dimensions=3,
    # "Ironwood (TPU7x) is available in GKE Standard clusters that run version 1.34.0-gke.2201000 and later"
    # (GKE "About Ironwood (TPU7x) in GKE", https://docs.cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood).
    min_gke="1.34.0-gke.2201000",
    # "Dual-chiplet architecture: The Ironwood programming model lets you access two TPU devices" per chip (Cloud TPU
    # "TPU7x (Ironwood)", https://docs.cloud.google.com/tpu/docs/tpu7x); vLLM TPU runs TP 8 on one 4-chip VM
    # (AI-Hypercomputer/tpu-recipes c8cfe2f6 inference/ironwood/vLLM/Qwen3.5-397B/README.md l.5: "4 TPU v7x chips,
    # 8 TensorCores ... Tensor Parallelism (TP) size of 8") and TP 16 on a 2x2x2 (vllm-project/tpu-inference
    # b8692ff0 examples/offload/gke/benchmarks/multi-host/deploy-baseline.yaml l.101).
    devices_per_chip=2,
    # Same page: "You create a workload policy and then apply it by using the `--placement-policy` flag. This policy
    # replaces the `--tpu-topology` flag used by other TPU versions", of type High throughput. A COMPACT placement
    # with no workload policy is refused: "Creation of a managed instance group with tpu7x-standard-4t machine type
    # with placement policy is not supported. Use workload policy instead." (vllm-project/ci-infra PR 547,
    # 2026-09-11, a live pool's error).
    workload_policy=True,
)
GENERATIONS: tuple[TpuGeneration, ...] = (V5E, V6E, V5P, TPU7X)


def _tpu7x_topologies(max_cubes: int = 144) -> tuple[str, ...]:
    """The topologies of ``tpu7x-standard-4t`` as Google's xpk generates them (AI-Hypercomputer/xpk 367c8382,
    src/xpk/core/system_characteristics.py ``generate_tpu_topologies``, l.207-231, with ``max_cubes=144`` for
    ``tpu7x-standard-4t``, l.584-594): 2x2x1 (one VM), 2x2x2, 2x2x4 and 2x4x4, then every AxBxC with A <= B <= C,
    each a multiple of 4 up to 256, of at most ``max_cubes`` 4x4x4 cubes."""
    cubes = [
        f"{a}x{b}x{c}"
        for a in range(4, 257, 4)
        for b in range(a, 257, 4)
        for c in range(b, 257, 4)
        if (a // 4) * (b // 4) * (c // 4) <= max_cubes
    ]
    return ("2x2x1", "2x2x2", "2x2x4", "2x4x4", *cubes)


# Multi-host topologies of the 4-chip v5e/v6e machine types; 2x2 is a single 4-chip host.
_PODSLICE_4T = ("2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")
# v5p: 3-D topologies, one per slice size, as GKE and xpk list them (2x2x1 is one host).
_V5P_4T = (
    "2x2x1",
    "2x2x2",
    "2x2x4",
    "2x4x4",
    "4x4x4",
    "4x4x8",
    "4x4x12",
    "4x8x8",
    "4x4x20",
    "4x8x12",
    "4x4x28",
    "8x8x8",
    "4x12x12",
    "4x8x20",
    "4x4x44",
    "8x8x12",
    "4x4x52",
    "4x8x28",
    "4x12x20",
    "8x8x16",
    "4x4x68",
    "8x12x12",
    "4x4x76",
    "8x8x20",
    "4x12x28",
    "4x8x44",
    "4x4x92",
    "8x12x16",
    "4x20x20",
    "4x8x52",
    "12x12x12",
    "8x8x28",
    "4x4x116",
    "8x12x20",
    "4x4x124",
    "8x16x16",
    "4x12x44",
    "4x8x68",
    "4x20x28",
    "12x12x16",
    "4x4x148",
    "4x8x76",
    "4x12x52",
    "8x16x20",
    "4x4x164",
    "8x12x28",
    "4x4x172",
    "8x8x44",
    "12x12x20",
    "4x8x92",
    "4x4x188",
    "12x16x16",
    "4x28x28",
    "8x20x20",
    "4x12x68",
    "8x8x52",
    "4x4x212",
    "12x12x24",
    "4x20x44",
    "8x16x28",
    "4x12x76",
    "4x8x116",
    "4x4x236",
    "12x16x20",
    "4x4x244",
    "4x8x124",
    "12x12x28",
    "16x16x16",
    "4x20x52",
    "8x12x44",
    "8x8x68",
    "4x12x92",
    "8x20x28",
    "12x16x24",
    "4x8x148",
    "12x20x20",
    "8x8x76",
    "4x28x44",
    "8x12x52",
    "16x16x20",
    "12x12x36",
    "4x8x164",
    "12x16x28",
    "4x20x68",
    "4x8x172",
    "4x12x116",
    "8x16x44",
    "12x20x24",
    "4x28x52",
    "8x8x92",
    "4x12x124",
    "4x8x188",
    "4x20x76",
    "16x16x24",
    "12x24x24",
    "16x20x28",
)

MACHINE_TYPES: dict[str, MachineType] = {
    m.name: m
    for m in (
        MachineType("ct5lp-hightpu-1t", V5E, 1, ("1x1",)),
        MachineType("ct5lp-hightpu-4t", V5E, 4, _PODSLICE_4T),
        MachineType("ct5lp-hightpu-8t", V5E, 8, ("2x4",)),
        MachineType("ct6e-standard-1t", V6E, 1, ("1x1",)),
        MachineType("ct6e-standard-4t", V6E, 4, _PODSLICE_4T),
        MachineType("ct6e-standard-8t", V6E, 8, ("2x4",)),
        MachineType("ct5p-hightpu-4t", V5P, 4, _V5P_4T),
        # TPU7x: 1 chip (1x1x1) or 4 chips per VM (xpk l.573-594); a multi-host 4t slice (every topology but 2x2x1)
        # is placed by a workload policy (TPU7X.workload_policy).
        MachineType("tpu7x-standard-1t", TPU7X, 1, ("1x1x1",)),
        MachineType("tpu7x-standard-4t", TPU7X, 4, _tpu7x_topologies()),
    )
}


def parse_topology(topology: str) -> tuple[int, ...]:
    """Split ``"4x8"`` into ``(4, 8)``; raise :class:`CatalogError` for anything else."""
    parts = topology.split("x")
    if len(parts) not in (2, 3) or not all(p.isdigit() and int(p) > 0 for p in parts):
        hint = f" (did you mean {topology.lower()!r}?)" if topology.lower() != topology else ""
        raise CatalogError(
            f"topology {topology!r} is not of the form AxB or AxBxC with positive integers and a lower-case x{hint}"
        )
    return tuple(int(p) for p in parts)


def machine_type(name: str) -> MachineType:
    """The catalog entry of a machine type; :class:`CatalogError` lists the known ones."""
    try:
        return MACHINE_TYPES[name]
    except KeyError:
        raise CatalogError(f"unknown TPU machine type {name!r}", tuple(MACHINE_TYPES)) from None


def slice_shape(machine_type_name: str, topology: str) -> SliceShape:
    """The slice of ``topology`` on ``machine_type_name``, checked against the catalog."""
    mt = machine_type(machine_type_name)
    parse_topology(topology)
    if topology not in mt.topologies:
        raise CatalogError(f"topology {topology!r} is not supported by {mt.name}", tuple(mt.topologies))
    return SliceShape(mt, topology)


@functools.cache
def _canonical_shapes() -> Mapping[str, SliceShape]:
    """Slice name -> the shape Cloud TPU means by it (computed once: the catalog is constant, and every slice name
    of every stack and test resolves through it).

    A slice name means the shape on the fewest VMs, as Cloud TPU's accelerator types do: ``v6e-8`` is the
    single-host ``ct6e-standard-8t`` 2x4 ("2x4 | 8 chips | 1 host | 1 VM | v6e-8 | ct6e-standard-8t", Cloud TPU
    v6e "Supported configurations"; the two-VM ``ct6e-standard-4t`` 2x4 has no accelerator type there, "only
    supported when using the GKE API"), and ``v5litepod-8`` the one 8-chip v5e host (Cloud TPU v5e: 8 chips per
    host). On a tie, the 4-chip machine type: ``v6e-4`` is ``ct6e-standard-4t`` 2x2, ``v6e-16`` its 4x4 over 4 VMs.
    The two-VM 2x4 is chosen with an explicit machine type (new-user review 20, M1: ``v6e-8`` meant it here, and one
    VM in Cloud TPU's naming and in this project's own docs).
    """
    shapes: dict[str, SliceShape] = {}
    for mt in MACHINE_TYPES.values():
        for topo in mt.topologies:
            shape = SliceShape(mt, topo)
            held = shapes.get(shape.slice_name)
            if held is None or (shape.vms, shape.chips_per_vm != 4) < (held.vms, held.chips_per_vm != 4):
                shapes[shape.slice_name] = shape
    return MappingProxyType(dict(sorted(shapes.items(), key=lambda kv: (kv[1].generation.name, kv[1].chips))))


def _known(name: str) -> bool:
    try:
        resolve_slice_name(name)
    except CatalogError:
        return False
    return True


def resolve_slice_name(name: str) -> SliceShape:
    """Resolve a Cloud TPU slice name (``v6e-16``, ``v5litepod-32``, ``v5e-32``, ``v5p-16``)."""
    prefix, _, count = name.rpartition("-")
    gen = next((g for g in GENERATIONS if prefix in g.slice_name_prefixes), None)
    shapes = _canonical_shapes()
    if gen is None or not count.isdigit():
        dashed = re.sub(r"(?<=[a-z])(\d+)$", r"-\1", name)  # v6e16 -> v6e-16, v5e16 -> v5e-16
        close = [dashed] if dashed != name and _known(dashed) else difflib.get_close_matches(name, list(shapes), 1, 0.8)
        hint = f"; did you mean {close[0]!r}" if close else ""
        raise CatalogError(f"unknown TPU slice name {name!r}{hint}", tuple(shapes))
    canonical = f"{gen.slice_name_prefixes[0]}-{count}"
    if canonical not in shapes:
        raise CatalogError(
            f"no {gen.name} slice has {count} {'TensorCores' if gen.cores_per_chip > 1 else 'chips'} ({name!r})",
            tuple(n for n, s in shapes.items() if s.generation is gen),
        )
    return shapes[canonical]


def smallest_fitting_topology(machine_type_name: str, required_gib: float) -> SliceShape | None:
    """The smallest slice of ``machine_type_name`` whose HBM holds ``required_gib``, if any."""
    mt = machine_type(machine_type_name)
    fitting = [s for s in (SliceShape(mt, t) for t in mt.topologies) if s.hbm_gib >= required_gib]
    return min(fitting, key=lambda s: s.chips, default=None)


def smallest_fitting_slice(generation: TpuGeneration, required_gib: float, one_vm: bool = False) -> SliceShape | None:
    """The slice of ``generation``, of any of its machine types (on one VM only, with ``one_vm``), with the fewest
    chips whose HBM holds ``required_gib`` (on a tie, the shape a slice name means: the fewest VMs, then the 4-chip
    machine type), if any."""
    fitting = [
        shape
        for mt in MACHINE_TYPES.values()
        if mt.generation == generation  # equal, not the same: a validated argument holds a copy
        for shape in (SliceShape(mt, t) for t in mt.topologies)
        if shape.hbm_gib >= required_gib and not (one_vm and shape.multi_host)
    ]
    return min(fitting, key=lambda s: (s.chips, s.vms, s.chips_per_vm != 4), default=None)


def pool_slice(machine_type_name: str, tpu_topology: str | None) -> SliceShape | None:
    """The slice a GKE node pool of ``machine_type_name`` holds (None: not a TPU machine type). A multi-host pool names
    its topology (``placementPolicy.tpuTopology``); a single-host pool has no placement policy, and its slice is the
    machine type's one-VM topology, the first the catalog lists, with which GKE labels its node all the same."""
    if machine_type_name not in MACHINE_TYPES:
        return None
    mt = MACHINE_TYPES[machine_type_name]
    return slice_shape(machine_type_name, tpu_topology or mt.topologies[0])


ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
"""Node label GKE sets to the TPU generation's accelerator name."""


TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
"""Node label GKE sets to the slice topology."""


def node_selector(shape: SliceShape) -> dict[str, str]:
    """The node selector that lands a pod on a slice of ``shape``."""
    return {ACCELERATOR_LABEL: shape.generation.gke_accelerator, TOPOLOGY_LABEL: shape.topology}
