"""What the deployment asks of the ``vllm`` backend: its build, ingress, metrics, bucket access and outputs."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ...catalog import SliceShape
from ...catalog.versions import PINS
from ...common.naming import compute_class_name
from ...common.quota import PodSet
from ...common.settings import to_settings
from ...cost.serve_time import Engine, EngineProfile
from ...operations.observability import ServingMetrics
from ...operations.prober import ProbeTarget
from ...platform import lws
from ...platform.controllers import LWS
from ...pools.compute_class import Fallback
from ...tenancy.tenant import IsolatedPods
from .. import scaling
from ..base import Built, Gap, Platform
from ..groups import GroupBackend, GroupServing, group_arguments
from . import checks, disagg_backend
from .args import (
    SecretKey,
    VllmEngineSettings,
    VllmImages,
    VllmRequests,
    VllmServingArgs,
    WeightsLoader,
)
from .component import VllmServing
from .disagg_checks import roles
from .facts import (
    HEALTH_PATH,
    HTTP_PORT,
    MULTI_HOST_CAUTION,
    ROLE_LABEL,
    VllmMetric,
    caution,
    unpinned_revision,
)
from .lifecycle import shutdown
from .neighbours import PROBE_COVERS, leader_metrics, probe_target
from .progress import VllmProbeSettings
from .quota import group_pods
from .settings import (
    CACHE_FOLDER,
    NAME,
    VllmServingConfig,
    declared_size,
    memory_cache_gib,
    served_model_size,
)


class Vllm(GroupBackend[VllmServingConfig]):
    """vLLM TPU: leader-worker groups of one LeaderWorkerSet, one slice each, whose leaders run the OpenAI-compatible
    server; in the disaggregated mode a DisaggregatedSet of a prefill and a decode role (:mod:`.disagg_backend`),
    which answers for itself where it differs."""

    name = NAME
    settings = VllmServingConfig
    port = HTTP_PORT
    health_path = HEALTH_PATH
    waiting = VllmMetric.REQUESTS_WAITING.value
    problems = staticmethod(checks.problems)
    model_size = staticmethod(served_model_size)

    def leaders(self, serving: VllmServingConfig) -> dict[str, str]:
        """The LWS name label and ``role: leader`` (as upstream)."""
        return {lws.NAME_LABEL: serving.name, ROLE_LABEL: "leader"}

    def models(self, serving: VllmServingConfig) -> tuple[str, ...]:
        """``servedModelName`` and its aliases."""
        return (serving.served_model_name, *serving.served_model_aliases)

    def ingress(self, serving: VllmServingConfig) -> tuple[dict[str, str], list[int]]:
        """The leader pods take clients on the serving port; the decode leaders in the disaggregated mode
        (:func:`.disagg_backend.ingress`)."""
        if serving.disaggregation is not None:
            return disagg_backend.ingress(serving)
        return super().ingress(serving)

    def metrics(self, serving: VllmServingConfig) -> ServingMetrics:
        """The leaders' server exports vLLM's metrics on the serving port, its HTTP responses by status among them; the
        workers run Ray workers only. Its one LeaderWorkerSet's group recreations are watched."""
        if serving.disaggregation is not None:
            return disagg_backend.metrics(serving)
        return leader_metrics(
            serving.name, self.leaders(serving), scaling.fewest_groups(serving), scaling.autoscalers(serving)
        )

    def probe(self, serving: VllmServingConfig) -> ProbeTarget:
        """A 1-token completion of the served model (``--served-model-name``) to the serving Service
        (:func:`.neighbours.probe_target`); in the disaggregated mode the Service is on the decode leaders' sidecars
        (:data:`.disagg_backend.PROBE_COVERS`)."""
        covers = disagg_backend.PROBE_COVERS if serving.disaggregation is not None else PROBE_COVERS
        return probe_target(serving.service_name, serving.served_model_name, covers)

    def serving_args(self, platform: Platform, serving: VllmServingConfig) -> VllmServingArgs:
        """The engine's arguments from the settings (a disaggregated role's start from them,
        :func:`.disagg_backend.arguments`)."""
        identity, buckets = platform.identity, platform.buckets
        hf = serving.loader == WeightsLoader.HUGGING_FACE
        return VllmServingArgs(
            **group_arguments(platform, serving),
            model=serving.model,
            served_model_name=serving.served_model_name,
            served_model_aliases=serving.served_model_aliases,
            model_size=declared_size(serving),
            loader=serving.loader,
            model_revision=serving.model_revision,
            file_cache=serving.file_cache,
            weights_bucket=None if hf else buckets.names["checkpoints"],
            cache_bucket=buckets.names["scratch"] if serving.compilation_cache else None,
            cache_path=f"{CACHE_FOLDER}/{serving.name}",
            hf_token_secret=to_settings(serving.hf_token_secret, SecretKey) if serving.hf_token_secret else None,
            engine=to_settings(serving.engine, VllmEngineSettings),
            images=to_settings(serving.images, VllmImages),
            probes=to_settings(serving.probes, VllmProbeSettings),
            requests=to_settings(serving.requests, VllmRequests),
            # On an existing cluster the groups take only the stack's named pools (tpuSlices[].existingNodePools):
            # without it they take any pool of the slice's shape, another tenant's included. GKE labels each node with
            # its pool's name, cloud.google.com/gke-nodepool
            # (https://docs.cloud.google.com/kubernetes-engine/docs/concepts/node-pools, "Overview"). A created
            # cluster's pools of the shape are all the stack's own. With a ComputeClass the class fences the groups
            # instead: its label is on the stack's pools and on those GKE makes for it, whose names GKE picks, so a
            # pool affinity would keep every group off its fallback slices (GKE review of issue 37, B1).
            node_pools=tuple(platform.slices.names)
            if platform.settings.existing and not self.fallback(serving)
            else (),
            compute_class=compute_class_name(identity.namespace_name) if self.fallback(serving) else None,
            zones=max(1, len(platform.slices.zones)),
            zone_spread=serving.zone_spread,
        )

    def fallback(self, serving: VllmServingConfig) -> tuple[Fallback, ...]:
        """The groups' capacity fallback (``serving.fallback``): a ComputeClass over the serving slices' pools, which
        the pods of an aggregated serving select; a disaggregated one has none (its config refuses it)."""
        return tuple(serving.fallback or ()) if serving.disaggregation is None else ()

    def production_gaps(self, serving: VllmServingConfig, shape: SliceShape) -> list[Gap]:
        """What keeps vLLM serving from an SLO: groups over several VMs (:func:`caution`), a minimum of one group of
        several (:func:`~..scaling.fewest_groups_gap`), and the disaggregated mode's own
        (:func:`.disagg_backend.production_gaps`)."""
        gaps = list(super().production_gaps(serving, shape)) if serving.disaggregation is None else []
        if serving.disaggregation is None and caution(shape) is not None:
            gaps.insert(
                0,
                Gap(
                    "serving.slices",
                    json.dumps(list(serving.slices)),
                    f"each group spans the {shape.vms} VMs of a {shape.topology} slice: {MULTI_HOST_CAUTION} (the "
                    "preview's Caution: line has the sources)",
                ),
            )
        hub = serving.loader == WeightsLoader.HUGGING_FACE
        if unpinned := unpinned_revision(serving.model, hub, serving.model_revision):  # SRE review 34, m1
            gaps.append(Gap("serving.modelRevision", "null", f"{unpinned}: pin a commit sha"))
        if serving.images.unverified_vllm is not None:  # GKE review round 63, m3
            gaps.append(
                Gap(
                    "serving.images.unverifiedVllm",
                    serving.images.unverified_vllm,
                    f"an engine release run on the flags built and checked for {PINS['vllm-tpu'].version}; nothing "
                    "here checked it against its own release: try it with production: false, or wait for the "
                    "tpu-serving release that pins it",
                )
            )
        return [*gaps, *disagg_backend.production_gaps(serving, shape)]

    def build(self, platform: Platform, serving: VllmServingConfig) -> Built:
        """The LWS install, the LeaderWorkerSet and its Service, and with autoscaling the metrics adapter and the HPA
        (:meth:`~..groups.GroupBackend.built`), or in the disaggregated mode the DisaggregatedSet
        (:func:`.disagg_backend.build`); the ``caution`` output when the groups span several VMs (:func:`caution`)."""
        built = self._build(platform, serving)
        if (text := caution(platform.slices.shape)) is not None:
            built.outputs["caution"] = text
        return built

    def _build(self, platform: Platform, serving: VllmServingConfig) -> Built:
        install = platform.install(LWS, serving.lws_version, ())
        args = self.serving_args(platform, serving)
        if serving.disaggregation is not None:
            built = disagg_backend.build(platform, serving, install, args)
            built.installs.insert(0, install)
            return built
        workload = VllmServing(f"{platform.name}-serving", args, opts=platform.workload_options(install))
        example = ("completionExample", workload.completion_example)
        return self.built(
            platform, serving, install, GroupServing(workload, workload.service, example, shutdown(args).grace_seconds)
        )

    def spare_slices(self, serving: VllmServingConfig, pools: int) -> int:
        """The surge group's spare slices: one per role in the disaggregated mode (its rollouts surge by the
        DisaggregatedSet's default), else the single engine's (none in place)."""
        if serving.disaggregation is not None:
            return len(roles(serving))
        return super().spare_slices(serving, pools)

    def restart_unit_chips(self, serving: VllmServingConfig, chips: int) -> int:
        """One group restarts at once: the chips of its share of the slices."""
        if serving.disaggregation is not None:
            return disagg_backend.restart_unit_chips(serving, chips)
        return super().restart_unit_chips(serving, chips)

    def quota_pods(self, serving: VllmServingConfig, shapes: Mapping[str, SliceShape], pools: int) -> list[PodSet]:
        """The LeaderWorkerSet's groups at their maximum, with a surge rollout's extra group; per role in the
        disaggregated mode (:func:`.disagg_backend.quota_pods`)."""
        if serving.disaggregation is not None:
            return disagg_backend.quota_pods(serving, shapes)
        gcsfuse = serving.loader == WeightsLoader.GCSFUSE or serving.compilation_cache
        shape = shapes[serving.slices[0]]
        group = group_pods(
            to_settings(serving.requests, VllmRequests),
            shape,
            gcsfuse=gcsfuse,
            prefetch=serving.loader == WeightsLoader.GCSFUSE,
            cache_gib=memory_cache_gib(serving, shape),
        )
        return [
            PodSet(
                f"LeaderWorkerSet {serving.name}",
                group,
                scaling.groups(serving),
                surge=lws.surge_groups(serving.rollout),
            )
        ]

    def from_zero_pools(self, serving: VllmServingConfig, by_kind: Mapping[str, Sequence[str]]) -> set[str] | None:
        """Per role in the disaggregated mode; else None (the slices after :meth:`always_on_slices`)."""
        return disagg_backend.from_zero_pools(serving, by_kind) if serving.disaggregation is not None else None

    def isolation(self, serving: VllmServingConfig) -> IsolatedPods | None:
        """The disaggregated roles' pods accept only the flows between them (:func:`.disagg_backend.isolation`)."""
        return disagg_backend.isolation(serving) if serving.disaggregation is not None else None

    def engine_profile(self, serving: VllmServingConfig) -> EngineProfile:
        """vLLM TPU serving ``servedModelName``, with the stack's loader and compilation cache (the disaggregated
        roles share both, so one profile's start holds for each role's groups; their throughput is the disaggregated
        mode's)."""
        workload = (
            f"LeaderWorkerSet {serving.name}" if serving.disaggregation is None else f"vLLM roles of {serving.name}"
        )
        return EngineProfile(
            workload,
            Engine.VLLM_TPU,
            serving.served_model_name,
            str(serving.loader),
            bool(serving.compilation_cache),
            serving.images.vllm,
            f"{serving.images.vllm.rsplit('/', 1)[-1]}, max-model-len {serving.engine.max_model_len}, "
            f"gpu-memory-utilization {serving.engine.memory_utilization:g}",
            disaggregated=serving.disaggregation is not None,
            groups=(scaling.fewest_groups(serving), scaling.groups(serving)),
        )


BACKEND = Vllm()
