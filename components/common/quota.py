"""The namespace quota a stack's plan needs at its peak: pure, typed builders.

ResourceQuota admission charges a pod's requests from its creation until it is terminal, or until its deletion grace
period has passed (k8s.io/kubernetes ``pkg/quota/v1/evaluator/core/pods.go`` ``QuotaV1Pod``, l.491-508, and
``PodUsageFunc``, l.381-411, which charges ``resourcehelper.PodRequests``). A pod's requests follow Kubernetes' rule
(``k8s.io/component-helpers/resource/helpers.go`` ``PodRequests``; "Resource sharing within containers" of the
init-containers page): the app containers' sum plus every sidecar (an init container with ``restartPolicy: Always``),
against the largest plain init container plus the sidecars started before it.

The peak the quota must admit (:func:`derive`):

- every workload at its maximum replicas (an HPA's maximum, else its fixed count);
- plus the surge of one rollout: the extra groups its controller creates before any old one goes (a LeaderWorkerSet's
  ``maxSurge``, a DisaggregatedSet's one group per role at once, a Deployment's ``maxSurge`` of 25% by default, none
  for a JobSet, which is replaced);
- plus one restart unit held twice (its old pods still terminating while the new ones are created), the same unit
  the TPU quota's headroom covers (:attr:`tpu_serving.tenancy.tenant.TenancyArgs.tpu_headroom_chips`);
- with the pods GKE's webhooks inject (the Cloud Storage FUSE sidecars) and the requests a LimitRange gives
  containers that name none.
"""

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .settings import described

_CPU = re.compile(r"^(\d+(?:\.\d+)?)(m?)$")
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
GIB = 2**30


def millicores(cpu: str) -> int:
    """``cpu`` (``24``, ``250m``, ``0.5``) in millicores, rounded up as Kubernetes rounds a request."""
    m = _CPU.match(cpu.strip())
    if m is None:
        raise ValueError(f"{cpu!r} is not a CPU quantity such as 24 or 250m")
    value = float(m.group(1))
    return math.ceil(value if m.group(2) else value * 1000)


def memory_bytes(memory: str) -> int:
    """``memory`` (``96Gi``, ``512Mi``, ``32000000000``, ``4G``) in bytes."""
    m = _MEMORY.match(memory.strip())
    if m is None:
        raise ValueError(f"{memory!r} is not a memory quantity such as 96Gi")
    return math.ceil(float(m.group(1)) * _BINARY.get(m.group(2) or "", 1))


@dataclass(frozen=True)
class Requests:
    """CPU (millicores), memory (bytes) and TPU chips requested."""

    cpu: int = 0
    memory: int = 0
    tpu: int = 0

    def __add__(self, other: "Requests") -> "Requests":
        return Requests(self.cpu + other.cpu, self.memory + other.memory, self.tpu + other.tpu)

    def times(self, n: int) -> "Requests":
        return Requests(self.cpu * n, self.memory * n, self.tpu * n)

    def max(self, other: "Requests") -> "Requests":
        return Requests(max(self.cpu, other.cpu), max(self.memory, other.memory), max(self.tpu, other.tpu))

    @property
    def cpu_text(self) -> str:
        """Whole CPUs, rounded up (the quota's ``requests.cpu``)."""
        return str(math.ceil(self.cpu / 1000))

    @property
    def memory_text(self) -> str:
        """Whole GiB, rounded up (the quota's ``requests.memory``)."""
        return f"{math.ceil(self.memory / GIB)}Gi"

    def describe(self) -> str:
        cpu = f"{self.cpu / 1000:g} CPU"
        return f"{cpu}, {self.memory / GIB:.4g} GiB"


@dataclass(frozen=True)
class ContainerRequests:
    """One container's requests, as the API server stores them (after a LimitRange's defaults)."""

    name: str = described("Container name.")
    cpu: str = described("CPU request, e.g. 24 or 250m.", pattern=r"^\d+(\.\d+)?m?$")
    memory: str = described("Memory request, e.g. 96Gi.", pattern=r"^\d+(\.\d+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$")
    tpu: int = described("TPU chips requested.", default=0, ge=0)
    sidecar: bool = described(
        "An init container with `restartPolicy: Always` (a native sidecar): it runs beside the app containers.",
        default=False,
    )

    @property
    def requests(self) -> Requests:
        return Requests(millicores(self.cpu), memory_bytes(self.memory), self.tpu)


@dataclass(frozen=True)
class PodShape:
    """``count`` pods of one template in a group: a leader, the workers, a Deployment's pod."""

    name: str = described("The pods' part, e.g. leader.")
    count: int = described("Pods of this template in a group.", ge=1)
    containers: Sequence[ContainerRequests] = described("Its containers.")
    init_containers: Sequence[ContainerRequests] = described("Its init containers.", default=())

    @property
    def requests(self) -> Requests:
        """One pod's requests as quota charges them: the app containers and the sidecars, against each plain init
        container with the sidecars started before it (``PodRequests``)."""
        sidecars, peak = Requests(), Requests()
        for c in self.init_containers:
            if c.sidecar:
                sidecars = sidecars + c.requests
                peak = peak.max(sidecars)
            else:
                peak = peak.max(c.requests + sidecars)
        regular = sum((c.requests for c in self.containers), Requests())
        return peak.max(regular + sidecars)


@dataclass(frozen=True)
class PodSet:
    """A workload's pods in the namespace, by group (a LeaderWorkerSet group, a Deployment's pod, a JobSet's Jobs)."""

    name: str = described("What makes them, e.g. `LeaderWorkerSet vllm`.")
    group: Sequence[PodShape] = described("The pods of one group.")
    groups: int = described("Groups at most: an HPA's maximum, else the fixed count.", ge=0)
    surge: int = described("Groups a rollout of it adds before any old one goes.", default=0, ge=0)
    rollout: str = described(
        "Sets that roll out together (a DisaggregatedSet's roles) share it; empty: the set rolls alone.", default=""
    )
    restart_groups: int = described(
        "Groups that restart at once, their old pods terminating while the new ones are created (a JobSet restarts "
        "all of them; 0: its pods are never recreated while they run, such as a Job's that runs to completion).",
        default=1,
        ge=0,
    )

    @property
    def group_requests(self) -> Requests:
        return sum((p.requests.times(p.count) for p in self.group), Requests())

    @property
    def pods(self) -> int:
        return sum(p.count for p in self.group)


@dataclass(frozen=True)
class QuotaNeed:
    """What the namespace needs at its peak, and what makes it up."""

    sets: tuple[PodSet, ...] = ()

    @property
    def steady(self) -> Requests:
        """Every set at its maximum groups."""
        return sum((s.group_requests.times(s.groups) for s in self.sets), Requests())

    @property
    def surge(self) -> tuple[str, Requests]:
        """The largest rollout's surge: (what rolls, its extra requests)."""
        rollouts: dict[str, Requests] = {}
        for s in self.sets:
            key = s.rollout or s.name
            rollouts[key] = rollouts.get(key, Requests()) + s.group_requests.times(s.surge)
        if not rollouts:
            return "", Requests()
        name = max(rollouts, key=lambda k: (rollouts[k].cpu, rollouts[k].memory))
        return name, rollouts[name]

    @property
    def restart(self) -> tuple[str, Requests]:
        """The largest restart unit: (whose, its requests)."""
        units = [(s.name, s.group_requests.times(s.restart_groups)) for s in self.sets if s.restart_groups]
        if not units:
            return "", Requests()
        return max(units, key=lambda u: (u[1].cpu, u[1].memory))

    @property
    def total(self) -> Requests:
        return self.steady + self.surge[1] + self.restart[1]

    def summary(self) -> str:
        """One line: what makes up the figures."""
        if not self.sets:
            return "no pods planned in the namespace"
        parts = [
            f"{s.name}: {s.groups} group{'s' if s.groups != 1 else ''} of {s.pods} pod{'s' if s.pods != 1 else ''} "
            f"({s.group_requests.describe()} a group)"
            for s in self.sets
        ]
        surge_of, surge = self.surge
        restart_of, restart = self.restart
        extra = []
        if surge.cpu or surge.memory:
            extra.append(f"a rollout's surge of {surge_of} ({surge.describe()})")
        if restart.cpu or restart.memory:
            extra.append(f"one restart unit of {restart_of} held twice ({restart.describe()})")
        return "; ".join(parts) + ("; plus " + " and ".join(extra) if extra else "")


def derive(sets: Sequence[PodSet]) -> QuotaNeed:
    """The namespace's peak for ``sets`` (see the module's description)."""
    return QuotaNeed(tuple(sets))


def deployment_surge(replicas: int, strategy: str = "RollingUpdate") -> int:
    """Pods a Deployment's rollout adds: ``maxSurge`` defaults to 25%, rounded up (k8s.io/api apps/v1 ``types.go``
    DeploymentStrategy; k8s.io/kubernetes ``pkg/apis/apps/v1/defaults.go`` ``SetDefaults_Deployment``:
    ``maxSurge = 25%``, ``maxUnavailable = 25%``; ``pkg/controller/deployment/util/deployment_util.go``
    ``ResolveFenceposts`` rounds the surge up); none for ``Recreate``, which removes the old pods first."""
    return 0 if strategy == "Recreate" else math.ceil(replicas * 25 / 100)


def quota_problems(need: QuotaNeed, cpu: str | None, memory: str | None, keys: tuple[str, str]) -> list[str]:
    """A given ``cpu``/``memory`` quota below ``need``, one problem each at its key path (``keys``: cpu's, memory's),
    naming both figures and what makes up the derived one."""
    total, found = need.total, []
    checks = (
        (keys[0], cpu, millicores, total.cpu, total.cpu_text),
        (keys[1], memory, memory_bytes, total.memory, total.memory_text),
    )
    for key, given, amount, derived, figure in checks:
        if given is None or amount(given) >= derived:
            continue
        found.append(
            f"{key} = {given!r}: below the {figure} the plan's pods need at their peak ({need.summary()}); "
            f"ResourceQuota admission would refuse the pods of a rollout or a restart. Set {figure} or more, or "
            "leave it unset for the derived figure"
        )
    return found
