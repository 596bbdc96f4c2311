"""What the deployment asks of the ``jetstream-pathways`` backend: build, ingress, metrics, outputs."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

from ...catalog import SliceShape
from ...common.podspec import ProbeSettings
from ...common.quota import ContainerRequests, PodSet, PodShape
from ...common.settings import to_settings
from ...operations.observability import ScrapeTarget, ServingMetrics, ServingSignals
from ...operations.prober import ProbeTarget
from ...platform import lws as lws_api
from ...platform.controllers import LWS
from .. import scaling
from ..base import Built, Platform
from ..groups import GroupBackend, GroupServing, group_arguments
from . import checks
from .args import MaxTextSettings, Mode, PathwaysImages, PathwaysRequests, PathwaysServingArgs
from .checks import declared_size
from .component import PathwaysServing
from .facts import GENERATE_ANSWER, GENERATE_PATH, HEALTH_PATH, HTTP_PORT, METRICS_PATH, JetStreamMetric
from .settings import NAME, PathwaysServingConfig


class JetStream(GroupBackend[PathwaysServingConfig]):
    """JetStream + MaxText on Pathways: leader-worker groups of one LeaderWorkerSet, each on its share of the serving
    slices, whose leaders take clients on jetstream-http."""

    name = NAME
    settings = PathwaysServingConfig
    port = HTTP_PORT
    health_path = HEALTH_PATH
    waiting = JetStreamMetric.PREFILL_BACKLOG.value
    problems = staticmethod(checks.problems)
    model_size = staticmethod(checks.model_size)

    def leaders(self, serving: PathwaysServingConfig) -> dict[str, str]:
        """``app: <name>``, which the leader template adds (:func:`.pods.selector_labels`)."""
        return {"app": serving.name}

    def metrics(self, serving: PathwaysServingConfig) -> ServingMetrics:
        """JetStream's metrics from ``jax-tpu`` on the leaders, when ``maxtext.prometheusPort`` is set.

        The Pathways containers (resource manager, IFRT proxy, workers) are closed-source images that
        document no Prometheus endpoint (GKE "Serve an LLM using multi-host TPUs on GKE with JetStream
        and Pathways" and the seeds name none), so nothing else is scraped. The group recreations of its one
        LeaderWorkerSet are watched, with or without the port.
        """
        port = serving.maxtext.prometheus_port
        watched = ServingMetrics(
            leader_worker_sets=(serving.name,),
            fewest_groups=scaling.fewest_groups(serving),
            autoscalers=scaling.autoscalers(serving),
        )
        if not port:
            return watched
        return dataclasses.replace(
            watched,
            scrape=[ScrapeTarget(f"{serving.name}-leaders", self.leaders(serving), port, METRICS_PATH)],
            signals=ServingSignals(
                requests_waiting=JetStreamMetric.PREFILL_BACKLOG.value,
                time_to_first_token=JetStreamMetric.TIME_TO_FIRST_TOKEN.value,
                time_per_output_token=JetStreamMetric.TIME_PER_OUTPUT_TOKEN.value,
                cache_usage=JetStreamMetric.SLOTS_USED.value,
                cache_title="Decode slots in use",
            ),
        )

    def probe(self, serving: PathwaysServingConfig) -> ProbeTarget:
        """A 1-token generation (``max_tokens`` 1) to the serving Service's jetstream-http, which passes it to the
        leader's JetStream server and the MaxText engine on Pathways."""
        return ProbeTarget(
            server="JetStream's jetstream-http",
            service=serving.service_name,
            port=HTTP_PORT,
            path=GENERATE_PATH,
            body=json.dumps({"prompt": "Say OK.", "max_tokens": 1}),
            answer=GENERATE_ANSWER,
            covers="it goes through the Service to one leader's jetstream-http, the JetStream server and the engine, "
            "as kube-proxy picks; not through a Gateway's load balancer (where the stack has one), whose own errors "
            "(502, 503, 504) it does not see",
        )

    def build(self, platform: Platform, serving: PathwaysServingConfig) -> Built:
        """The LWS install, the LeaderWorkerSet and its Service (the HTTP entry a gateway may front), and with
        autoscaling the metrics adapter and the HPA (:meth:`~..groups.GroupBackend.built`)."""
        buckets = platform.buckets
        install = platform.install(LWS, serving.lws_version, ())
        args = PathwaysServingArgs(
            **group_arguments(platform, serving),
            num_slices=len(platform.slices.names) // scaling.groups(serving),
            mode=Mode(serving.mode),
            maxtext=to_settings(serving.maxtext, MaxTextSettings),
            model_size=declared_size(serving),
            checkpoint_uri=f"gs://{buckets.names['checkpoints']}/{serving.checkpoint_path}",
            scratch_uri=f"gs://{buckets.names['scratch']}/pathways",
            images=to_settings(serving.images, PathwaysImages),
            probes=to_settings(serving.probes, ProbeSettings),
            requests=to_settings(serving.requests, PathwaysRequests),
            resource_manager_flags=tuple(serving.resource_manager_flags),
            jax_env=serving.jax_tpu.env,
            jax_capabilities=tuple(serving.jax_tpu.capabilities),
        )
        workload = PathwaysServing(f"{platform.name}-serving", args, opts=platform.workload_options(install))
        example = ("generateExample", workload.generate_example)
        return self.built(
            platform, serving, install, GroupServing(workload, workload.service, example, args.shutdown.grace_seconds)
        )

    def quota_pods(self, serving: PathwaysServingConfig, shapes: Mapping[str, SliceShape], pools: int) -> list[PodSet]:
        """The LeaderWorkerSet's groups at their maximum: a leader of the Pathways and JetStream containers on the CPU
        pool, and one worker per TPU VM of the group's slices (as :meth:`build` shares them out), with a surge
        rollout's extra group."""
        r, shape = to_settings(serving.requests, PathwaysRequests), shapes[serving.slices[0]]
        groups = scaling.groups(serving)
        leader = PodShape(
            "leader",
            1,
            (
                ContainerRequests("pathways-proxy", r.proxy_cpu, r.proxy_memory),
                ContainerRequests("pathways-rm", r.resource_manager_cpu, r.resource_manager_memory),
                ContainerRequests("jax-tpu", r.jax_cpu, r.jax_memory),
                ContainerRequests("jetstream-http", r.http_cpu, r.http_memory),
            ),
        )
        worker = PodShape(
            "worker",
            max(1, pools // groups) * shape.vms,
            (ContainerRequests("worker", r.worker_cpu, r.worker_memory, shape.chips_per_vm),),
        )
        return [
            PodSet(
                f"LeaderWorkerSet {serving.name}", (leader, worker), groups, surge=lws_api.surge_groups(serving.rollout)
            )
        ]


BACKEND = JetStream()
