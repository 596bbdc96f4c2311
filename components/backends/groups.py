"""What the LeaderWorkerSet backends share (``jetstream-pathways``; ``vllm``, but for its disaggregated mode): leader-worker
groups of one LeaderWorkerSet, each on its share of the serving slices, fixed or scaled by an HPA (:mod:`.scaling`)
and replaced by whole slices (:mod:`.rollout`), behind a ClusterIP Service on the leaders.

- :class:`GroupBackend`: what such a backend answers the deployment, and the stack outputs, gateway entry and
  autoscaler of its build (:meth:`GroupBackend.built`);
- :func:`group_arguments`: the arguments of its component that its settings and the platform give alike;
- :func:`group_resources`, :func:`leader_service`, :func:`port_forward`: its component's LeaderWorkerSet, disruption
  budget and Service, and the command that reaches the Service from a workstation.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypedDict, TypeVar

import pulumi
import pulumi_kubernetes as k8s

from ..catalog import SliceShape
from ..common.options import child_options
from ..common.podspec import Shutdown
from ..platform import lws
from ..platform.controllers import ControllerInstall
from ..platform.lws import Rollout
from ..tenancy.tenant import SERVING_PRIORITY
from . import rollout, scaling
from .base import Built, Gap, Platform, ServingBackend, ServingEndpoint, longest_request_seconds


class StartupWindow(Protocol):
    """What a group backend reads of its settings' ``probes``."""

    @property
    def max_startup_seconds(self) -> int: ...


class GroupSettings(scaling.Scaled, Protocol):
    """The serving settings of a LeaderWorkerSet backend: its groups (:class:`.scaling.Scaled`), its Service, the LWS
    release the stack installs, and its probes."""

    @property
    def service_name(self) -> str: ...
    @property
    def lws_version(self) -> str: ...
    @property
    def probes(self) -> StartupWindow: ...


G = TypeVar("G", bound=GroupSettings)
"""A group backend's settings."""


class GroupArguments(TypedDict):
    """The arguments of a group backend's component that every such backend takes alike from its settings and the
    platform (:func:`group_arguments`); its component's arguments class takes them as keywords."""

    namespace: str
    service_account: str
    shape: SliceShape
    replicas: int
    autoscaled: bool
    rollout: Rollout
    canary_groups: int | None
    lws_version: str
    name: str
    service_name: str
    shutdown: Shutdown
    priority_class_name: str | None
    labels: Mapping[str, str]


def group_arguments(platform: Platform, serving: GroupSettings) -> GroupArguments:
    """The workload identity's namespace and service account, the serving slices' shape, the groups (with autoscaling
    the HPA's minimum, and the LeaderWorkerSet then has no replicas: what ``canaryGroups`` counts from), their rollout
    and LWS release, the LeaderWorkerSet's and the Service's names, the drain of the longest request
    (:func:`~.base.longest_request_seconds`), the serving priority and the stack's labels."""
    identity = platform.identity
    return GroupArguments(
        namespace=identity.namespace_name,
        service_account=identity.service_account_name,
        shape=platform.slices.shape,
        replicas=scaling.fewest_groups(serving),
        autoscaled=serving.autoscaling is not None,
        rollout=serving.rollout,
        canary_groups=serving.canary_groups,
        lws_version=serving.lws_version,
        name=serving.name,
        service_name=serving.service_name,
        shutdown=Shutdown(longest_request_seconds(platform.settings)),
        priority_class_name=SERVING_PRIORITY,
        labels=platform.k8s_labels,
    )


@dataclass(frozen=True)
class GroupWorkload:
    """What a group component hands :func:`group_resources`: its LeaderWorkerSet's name, namespace, labels and
    annotations, the LeaderWorkerSet's spec, and the Service on its leaders."""

    name: str
    namespace: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    spec: Mapping[str, object]
    service: k8s.core.v1.ServiceInitArgs


@dataclass(frozen=True)
class GroupResources:
    """A group component's children: its LeaderWorkerSet, their disruption budget and the Service on the leaders."""

    leader_worker_set: k8s.apiextensions.CustomResource
    disruption_budget: k8s.policy.v1.PodDisruptionBudget
    service: k8s.core.v1.Service


def group_resources(
    component: pulumi.ComponentResource,
    name: str,
    workload: GroupWorkload,
    opts: pulumi.ResourceOptions | None,
) -> GroupResources:
    """The children of the group component ``component`` named ``name``, from ``workload``: the LeaderWorkerSet
    ``workload.name`` with its annotations and spec (:func:`tpu_serving.platform.lws.leader_worker_set`), the disruption budget of
    its groups (:func:`tpu_serving.platform.lws.leader_worker_set_disruption_budget`) and the Service; each waits for the
    component's own ``depends_on`` (:func:`~tpu_serving.common.options.child_options`)."""
    w = workload
    return GroupResources(
        lws.leader_worker_set(
            f"{name}-lws",
            k8s.meta.v1.ObjectMetaArgs(
                name=w.name, namespace=w.namespace, labels=dict(w.labels), annotations=dict(w.annotations)
            ),
            w.spec,
            child_options(component, opts),
        ),
        k8s.policy.v1.PodDisruptionBudget(
            f"{name}-pdb",
            lws.leader_worker_set_disruption_budget(w.name, w.namespace, w.labels),
            opts=child_options(component, opts),
        ),
        k8s.core.v1.Service(f"{name}-svc", w.service, opts=child_options(component, opts)),
    )


def leader_service(
    name: str, namespace: str, labels: Mapping[str, str], leaders: Mapping[str, str], port: tuple[str, int]
) -> k8s.core.v1.ServiceInitArgs:
    """ClusterIP Service ``name`` on the serving port ``port`` (its name and number) of the pods labelled ``leaders``;
    it skips Pulumi's await (:data:`~tpu_serving.platform.lws.SKIP_SERVICE_AWAIT`: the model servers take far longer to be
    ready)."""
    port_name, number = port
    return k8s.core.v1.ServiceInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=name,
            namespace=namespace,
            labels=dict(labels),
            annotations=dict(lws.SKIP_SERVICE_AWAIT),
        ),
        spec=k8s.core.v1.ServiceSpecArgs(
            type="ClusterIP",
            selector=dict(leaders),
            ports=[k8s.core.v1.ServicePortArgs(protocol="TCP", name=port_name, port=number, target_port=number)],
        ),
    )


def leader_pod(name: str) -> str:
    """The first group's leader pod of the LeaderWorkerSet ``name``."""
    return f"{name}-0"


def port_forward(namespace: str, service: str, port: int) -> str:
    """``kubectl port-forward`` to ``port`` of ``service`` in ``namespace``, on the same local port."""
    return f"kubectl -n {namespace} port-forward svc/{service} {port}:{port}"


@dataclass(frozen=True)
class GroupServing:
    """A group backend's serving component as its build made it, for :meth:`GroupBackend.built`."""

    component: pulumi.Resource
    """The component: an autoscaler waits for it."""
    service: k8s.core.v1.Service
    """Its ClusterIP Service on the leaders."""
    example: tuple[str, str]
    """A request through the :func:`port_forward`: the name of its stack output and its command."""
    grace_seconds: int
    """How long a group's pods may take to leave (the rollout plan's drain)."""


class GroupBackend(ServingBackend[G]):
    """A backend whose serving is leader-worker groups of one LeaderWorkerSet, each on its share of the serving
    slices, behind a ClusterIP Service on the leaders: one group restarts at once (:func:`.scaling.restart_unit_chips`),
    the slices beyond the standing groups' scale from zero (:func:`.scaling.always_on_slices`), a surge rollout holds a
    spare share (:func:`.scaling.spare_slices`), the startup probes' window is its startup, and an autoscaled minimum
    of one group of several is a production gap (:func:`.scaling.fewest_groups_gap`)."""

    restarts_as_a_whole = False
    port: int
    """The leaders' serving port, which the Service and the gateway take."""
    health_path: str
    """A path that answers 200 once a leader serves (the gateway's health check)."""
    waiting: str
    """The leaders' gauge of waiting requests, which the HPA reads unless ``autoscaling.metric`` names another."""

    @abstractmethod
    def leaders(self, serving: G) -> dict[str, str]:
        """Labels of the leader pods, which take the clients."""

    def models(self, serving: G) -> tuple[str, ...]:
        """The model names clients ask the server for (:attr:`~.base.ServingEndpoint.models`): none."""
        return ()

    def ingress(self, serving: G) -> tuple[dict[str, str], list[int]]:
        """The leaders take clients on the serving port."""
        return self.leaders(serving), [self.port]

    def restart_unit_chips(self, serving: G, chips: int) -> int:
        return scaling.restart_unit_chips(serving, chips)

    def startup_seconds(self, serving: G) -> int:
        return serving.probes.max_startup_seconds

    def always_on_slices(self, serving: G, pools: int) -> int:
        return scaling.always_on_slices(serving, pools)

    def spare_slices(self, serving: G, pools: int) -> int:
        return scaling.spare_slices(serving, pools)

    def production_gaps(self, serving: G, shape: SliceShape) -> Sequence[Gap]:
        return [g for g in [scaling.fewest_groups_gap(serving)] if g]

    def built(self, platform: Platform, serving: G, install: ControllerInstall, workload: GroupServing) -> Built:
        """What the build of ``workload`` after the LWS ``install`` gives the deployment: the stack outputs (the
        Service, the first leader pod, the port-forward and the example request through it, the rollout plan), the
        gateway's entry, and with autoscaling the metrics adapter and the HPA (:func:`.scaling.add_autoscaler`)."""
        startup = self.startup_seconds(serving)
        plan = rollout.plan(platform.settings, serving, startup, workload.grace_seconds)
        example, request = workload.example
        built = Built(
            installs=[install],
            outputs={
                "service": workload.service.metadata.name,
                "leaderPod": leader_pod(serving.name),
                "portForward": port_forward(platform.identity.namespace_name, serving.service_name, self.port),
                example: request,
                "rollout": rollout.plan_output(plan, platform.platform_upgrades_held),
            },
            endpoint=ServingEndpoint(
                serving.service_name, self.port, self.health_path, self.leaders(serving), models=self.models(serving)
            ),
        )
        if serving.autoscaling is not None:
            scaling.add_autoscaler(platform, built, serving, (self.waiting, startup), workload.component)
        return built
