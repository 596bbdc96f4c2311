"""What the deployment asks of the ``jetstream-pathways`` backend: build, ingress, metrics, bucket access, outputs."""

from __future__ import annotations

import json
from collections.abc import Mapping

from ... import lws as lws_api
from ...catalog import SliceShape
from ...controllers import LWS
from ...models import ModelSize
from ...observability import ScrapeTarget, ServingMetrics, ServingSignals
from ...podspec import ProbeSettings, Shutdown
from ...prober import ProbeTarget
from ...quota import ContainerRequests, PodSet, PodShape
from ...settings import to_settings
from ...tenancy import SERVING_PRIORITY
from .. import rollout, scaling
from ..base import (
    Built,
    Gap,
    Platform,
    ServingBackend,
    ServingEndpoint,
    Stack,
    longest_request_seconds,
    probes_startup_seconds,
)
from . import checks
from .args import (
    MaxTextSettings,
    Mode,
    PathwaysImages,
    PathwaysRequests,
    PathwaysServingArgs,
)
from .checks import declared_size
from .component import PathwaysServing
from .facts import GENERATE_ANSWER, GENERATE_PATH, HEALTH_PATH, HTTP_PORT, METRICS_PATH, JetStreamMetric
from .settings import NAME, PathwaysServingConfig


class JetStream(ServingBackend[PathwaysServingConfig]):
    """JetStream + MaxText on Pathways: leader-worker groups of one LeaderWorkerSet, each on its share of the serving
    slices."""

    name = NAME
    settings = PathwaysServingConfig
    restarts_as_a_whole = False

    def problems(self, cfg: Stack, serving: PathwaysServingConfig, shape: SliceShape, pools: int) -> list[str]:
        return checks.problems(cfg, serving, shape, pools)

    def model_size(self, serving: PathwaysServingConfig) -> ModelSize | None:
        return checks.model_size(serving)

    def restart_unit_chips(self, serving: PathwaysServingConfig, chips: int) -> int:
        return scaling.restart_unit_chips(serving, chips)

    def startup_seconds(self, serving: PathwaysServingConfig) -> int:
        return probes_startup_seconds(serving)

    def always_on_slices(self, serving: PathwaysServingConfig, pools: int) -> int:
        return scaling.always_on_slices(serving, pools)

    def spare_slices(self, serving: PathwaysServingConfig, pools: int) -> int:
        return scaling.spare_slices(serving, pools)

    def production_gaps(self, serving: PathwaysServingConfig, shape: SliceShape) -> list[Gap]:
        return [g for g in [scaling.fewest_groups_gap(serving)] if g]

    def ingress(self, serving: PathwaysServingConfig) -> tuple[dict[str, str], list[int]]:
        """The leader pods take clients on the JetStream HTTP port."""
        return {"app": serving.name}, [HTTP_PORT]

    def metrics(self, serving: PathwaysServingConfig) -> ServingMetrics:
        """JetStream's metrics from ``jax-tpu`` on the leaders, when ``maxtext.prometheusPort`` is set.

        The Pathways containers (resource manager, IFRT proxy, workers) are closed-source images that
        document no Prometheus endpoint (GKE "Serve an LLM using multi-host TPUs on GKE with JetStream
        and Pathways" and the seeds name none), so nothing else is scraped. The group recreations of its one
        LeaderWorkerSet are watched, with or without the port.
        """
        port = serving.maxtext.prometheus_port
        groups = (serving.name,)
        if not port:
            return ServingMetrics(
                leader_worker_sets=groups,
                fewest_groups=scaling.fewest_groups(serving),
                autoscalers=scaling.autoscalers(serving),
            )
        return ServingMetrics(
            scrape=[ScrapeTarget(f"{serving.name}-leaders", self.ingress(serving)[0], port, METRICS_PATH)],
            signals=ServingSignals(
                requests_waiting=JetStreamMetric.PREFILL_BACKLOG.value,
                time_to_first_token=JetStreamMetric.TIME_TO_FIRST_TOKEN.value,
                time_per_output_token=JetStreamMetric.TIME_PER_OUTPUT_TOKEN.value,
                cache_usage=JetStreamMetric.SLOTS_USED.value,
                cache_title="Decode slots in use",
            ),
            leader_worker_sets=groups,
            fewest_groups=scaling.fewest_groups(serving),
            autoscalers=scaling.autoscalers(serving),
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
        autoscaling the metrics adapter and the HPA."""
        name, identity, buckets = platform.name, platform.identity, platform.buckets
        lws = platform.install(LWS, serving.lws_version, ())
        pools = list(platform.slices.pools)
        args = PathwaysServingArgs(
            namespace=identity.namespace_name,
            service_account=identity.service_account_name,
            shape=platform.slices.shape,
            num_slices=len(platform.slices.names) // scaling.groups(serving),
            # the HPA's minimum with autoscaling (the LeaderWorkerSet then has no replicas): what canaryGroups counts from
            replicas=serving.autoscaling.min_replicas if serving.autoscaling is not None else serving.replicas,
            autoscaled=serving.autoscaling is not None,
            rollout=serving.rollout,
            canary_groups=serving.canary_groups,
            lws_version=serving.lws_version,
            mode=Mode(serving.mode),
            maxtext=to_settings(serving.maxtext, MaxTextSettings),
            model_size=declared_size(serving),
            checkpoint_uri=f"gs://{buckets.names['checkpoints']}/{serving.checkpoint_path}",
            scratch_uri=f"gs://{buckets.names['scratch']}/pathways",
            name=serving.name,
            service_name=serving.service_name,
            images=to_settings(serving.images, PathwaysImages),
            probes=to_settings(serving.probes, ProbeSettings),
            shutdown=Shutdown(longest_request_seconds(platform.settings)),
            requests=to_settings(serving.requests, PathwaysRequests),
            priority_class_name=SERVING_PRIORITY,
            resource_manager_flags=tuple(serving.resource_manager_flags),
            jax_env=serving.jax_tpu.env,
            jax_capabilities=tuple(serving.jax_tpu.capabilities),
            labels=platform.k8s_labels,
        )
        workload = PathwaysServing(
            f"{name}-serving",
            args,
            opts=platform.options(lws, identity.service_account, *identity.access, platform.tenancy, *pools),
        )
        built = Built(
            installs=[lws],
            outputs={
                "service": workload.service.metadata.name,
                "leaderPod": workload.leader_pod,
                "portForward": workload.port_forward,
                "generateExample": workload.generate_example,
                "rollout": rollout.plan_output(
                    rollout.plan(
                        platform.settings, serving, probes_startup_seconds(serving), args.shutdown.grace_seconds
                    ),
                    platform.platform_upgrades_held,
                ),
            },
            endpoint=ServingEndpoint(serving.service_name, HTTP_PORT, HEALTH_PATH, self.ingress(serving)[0]),
        )
        if serving.autoscaling is not None:
            scaling.add_autoscaler(
                platform,
                built,
                serving,
                (JetStreamMetric.PREFILL_BACKLOG.value, probes_startup_seconds(serving)),
                workload,
            )
        return built

    def quota_pods(self, serving: PathwaysServingConfig, shapes: Mapping[str, SliceShape], pools: int) -> list[PodSet]:
        """The LeaderWorkerSet's groups at their maximum: a leader of the Pathways and JetStream containers on the CPU
        pool, and one worker per TPU VM of the group's slices (as :func:`build` shares them out), with a surge
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
