"""What the deployment asks of the ``saxml`` backend: build, ingress, metrics, bucket access, outputs."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping

from ...catalog import SliceShape
from ...common.quota import ContainerRequests, PodSet, PodShape, deployment_surge
from ...common.settings import to_settings
from ...operations.alerts.job_alerts import JobPods
from ...operations.observability import ServingMetrics
from ...operations.prober import ProbeTarget
from ...platform.controllers import JOBSET
from ...platform.node_identity import Access
from ...tenancy.tenant import DEFAULT_CPU_REQUEST, DEFAULT_MEMORY_REQUEST, SERVING_PRIORITY
from ..base import Built, Platform, ServingBackend, Stack
from ..rollout import HOST_MAINTENANCE, stack_maintenance, stack_upgrade_schedule
from . import checks
from .args import Exposure, SaxmlImages, SaxmlServingArgs, SaxModel
from .component import SaxmlServing
from .facts import (
    ADMIN,
    GENERATE_ANSWER,
    GENERATE_PATH,
    HTTP,
    HTTP_PORT,
    HTTP_REPLICAS,
    HTTP_SERVICE,
    MODEL_JOB,
    MODEL_PORT,
    MODEL_SERVER_BUCKETS,
    MODEL_SET,
    PROBE_INTERVAL_SECONDS,
    PROBE_QUERY,
    PROBE_TIMEOUT_SECONDS,
    SEED_DECODE_STEPS,
)
from .pods import PUBLISHER_REQUESTS, SERVER_REQUESTS
from .settings import NAME, SaxmlServingConfig
from .settings import model_size as largest_model


def http_examples(model: str) -> dict[str, tuple[str, str, dict[str, str]]]:
    """Output name -> (method, path, JSON body) of the sax-http calls the stack prints for ``model``: the
    model lifecycle over the sax-http API of the seed (its manifest's comment: ``GET /listcell {"model": ...}``,
    ``POST /generate {"model": ..., "query": ...}``)."""
    return {
        "generateExample": ("POST", "/generate", {"model": model, "query": "How many days are in a week?"}),
        "listcellExample": ("GET", "/listcell", {"model": model}),
    }


def curl_command(address: str, *, method: str, path: str, body: dict[str, str]) -> str:
    """The curl command of one sax-http call at ``address``."""
    return (
        f"curl -s -X {method} http://{address}:{HTTP_PORT}{path} -H 'Content-type: application/json' "
        f"-d '{json.dumps(body)}'"
    )


PROBE_COVERS = (
    "it goes through the Service's cluster IP to one of the sax-http pods, the Sax client, the admin server's lookup "
    f"and one model-server replica's decode of up to the model's own limit ({SEED_DECODE_STEPS} steps for the seed's "
    "LmCloudSpmd175B32Test), as kube-proxy and the Sax client pick; not through the load balancer in front of the "
    "Service (http.exposure internal or public), nor the other models of the cell; each sax-http pod serves one "
    "request at a time, so the probe waits behind a client's generation on its pod and holds the pod for its own"
)
"""What the Saxml probe covers, and what not (:data:`~.facts.GENERATE_PATH`)."""


READINESS = (
    f"a model server turns Ready once it listens on port {MODEL_PORT} (its readiness probe is a TCP connect), before "
    "the admin server has loaded the model onto it: after a restart or a drain the pods are Ready while the cell "
    "still serves nothing, and the not-ready alerts stay quiet; a request through sax-http shows whether it serves, "
    "as the serving probe's does (observability.servingProbe)"
)
"""What the model servers' readiness says (SRE review M4): :func:`~.pods` probes ``tcpSocket`` on
:data:`~.facts.MODEL_PORT`, which the server opens at start; no readiness probe reads whether the model is
loaded: the serving probe's generation through sax-http (:func:`probe`) fails until it is."""


def rollout(serving: SaxmlServingConfig, cfg: Stack) -> dict[str, str]:
    """What a rollout, a drain and a node upgrade do to the cell (the ``rollout`` output, which the preview
    prints)."""
    return {
        "summary": "a change to the model servers replaces their JobSet, deleted before its replacement is created "
        "(JobSet's webhook refuses changes to replicatedJobs): every slice goes down at once and the cell serves "
        "nothing until the new slices have loaded the model, a full outage; sax-http and the admin server roll "
        "one pod at a time",
        "drain": "a drain, node upgrade or host maintenance of any slice's VM restarts every slice (a JobSet restart "
        "recreates all its Jobs): the cell serves nothing until they have reloaded, and the restart does not count "
        f"against maxRestarts ({serving.max_restarts}, spent only by crashes, for the JobSet's life); a crash "
        f"after {serving.max_restarts} counted restarts fails the JobSet for good: the controller deletes its Jobs, the "
        "cell serves nothing (the No serving pod ready alert, if observability is on, fires), and a later pulumi up sees no change (kubectl "
        f"delete jobset {MODEL_SET} in the stack's namespace, then pulumi up --refresh); sax-http keeps one of its "
        "two pods",
        "upgrade": f"{stack_upgrade_schedule(cfg)}; each upgrade of a slice's nodes restarts every slice, as a drain "
        f"does; {HOST_MAINTENANCE}",
        "scaleDown": "no autoscaling: the stack fixes the cell's model-server slices (serving.slices); a different "
        "count replaces the JobSet, a full outage as above",
        "maintenance": stack_maintenance(cfg, serving.slices, whole=True),  # a JobSet restarts as a whole
    }


class Saxml(ServingBackend[SaxmlServingConfig]):
    """Saxml admin, HTTP and model servers: one JobSet of model servers, which restarts as a whole."""

    name = NAME
    settings = SaxmlServingConfig
    problems = staticmethod(checks.problems)
    model_size = staticmethod(largest_model)

    def ingress(self, serving: SaxmlServingConfig) -> tuple[dict[str, str], list[int]]:
        """sax-http takes clients on its HTTP port."""
        return {"app": "sax-http"}, [HTTP_PORT]

    def metrics(self, serving: SaxmlServingConfig) -> ServingMetrics:
        """Nothing to scrape: Saxml exports no Prometheus metrics.

        google/saxml@v1.1.0 has no Prometheus exporter (``prometheus`` appears in no source file of the tag, only as
        a pinned package in its requirements files); the admin's status page is HTML on ``localhost:8080``
        (saxml/common/platform/cloud.go ``httpPort = 8080``, ``http.ListenAndServe(fmt.Sprintf("localhost:%v",
        httpPort), nil)``; saxml/admin/admin_status.go). The dashboard shows the TPU signals; the not-ready alert
        applies.

        The no-ready alert watches each slice's first host, ``<jobset>-<replicated job>-<job index>-0-<random>``: JobSet
        names its Jobs ``<jobset>-<replicated job>-<index>`` (kubernetes-sigs/jobset@v0.12.0
        pkg/util/placement/placement.go l.14-16) and makes them Indexed (pkg/webhooks/jobset_webhook.go l.121-122),
        whose pods the Job controller names ``<job>-<completion index>-`` plus a random suffix (k8s.io/kubernetes
        v1.36.3 pkg/controller/job/indexed_job_utils.go l.496-503).

        The model servers' pods are also watched as a JobSet's (:mod:`tpu_serving.operations.alerts.job_alerts`): a JobSet that spent its
        ``maxRestarts`` fails for good, its Jobs deleted, and only deleting it lets ``pulumi up --refresh`` recreate it;
        that page says so (SRE review 31, M2: the no-ready page gave no way back).
        """
        pods = JobPods(f"JobSet {MODEL_SET}", f"{MODEL_SET}-{MODEL_JOB}-[0-9]+-.+", True, delete=f"jobset {MODEL_SET}")
        return ServingMetrics(leader_pods=f"{MODEL_SET}-{MODEL_JOB}-[0-9]+-0-.+", job_pods=pods)

    def probe(self, serving: SaxmlServingConfig) -> ProbeTarget | None:
        """One generation of the first published model (``serving.models[0]``, the model of the ``generateExample``
        output) to the sax-http Service: sax-http v1.0.0 takes no option that limits its decode steps, so it decodes up
        to the model's own limit, :data:`~.facts.SEED_DECODE_STEPS` for the seed's model, within a 60 s timeout every
        75 s (:data:`~.facts.PROBE_TIMEOUT_SECONDS`, :data:`~.facts.PROBE_INTERVAL_SECONDS`). None without a model: the
        cell serves nothing the stack publishes."""
        if not serving.models:
            return None
        model = serving.models[0].model
        return ProbeTarget(
            server="Saxml's sax-http",
            service=HTTP_SERVICE,
            port=HTTP_PORT,
            path=GENERATE_PATH,
            body=json.dumps({"model": model, "query": PROBE_QUERY}),
            answer=GENERATE_ANSWER,
            covers=PROBE_COVERS,
            request=f"a generation of {model} (up to the model's decode limit, {SEED_DECODE_STEPS} steps for the "
            "seed's)",
            timeout_seconds=PROBE_TIMEOUT_SECONDS,
            interval_seconds=PROBE_INTERVAL_SECONDS,
            slow_alert=False,
            find_part=f"the Service sends each probe to one of the {HTTP_REPLICAS} sax-http pods and the Sax client to "
            "one model-server replica (how it picks is not read here), so a hung or failing pod or replica fails the "
            "probes sent to it. Find which: port-forward "
            f"each sax-http pod (port {HTTP_PORT}) and send the same request; GET /listcell with the model (the "
            "listcellExample output) gives its active replicas.",
            remedy=f"Then read the logs: `kubectl -n {{namespace}} logs deploy/{HTTP}`, `kubectl -n {{namespace}} logs "
            f"deploy/{ADMIN}`, and the "
            f"model servers' pods (JobSet {MODEL_SET}). After a restart the model servers are Ready before the admin "
            "server has loaded the model onto them (the caveats output): the probe fails until it has.",
        )

    def host_network_buckets(self, serving: SaxmlServingConfig) -> dict[str, Access]:
        """The model servers run on the host network and read the cell's location in the state bucket."""
        return dict(MODEL_SERVER_BUCKETS)

    def quota_pods(self, serving: SaxmlServingConfig, shapes: Mapping[str, SliceShape], pools: int) -> list[PodSet]:
        """The model servers (one Job per slice, a pod per TPU VM whose container names only its chips, so it requests
        the LimitRange's defaults), restarted all together and replaced, never surged (``delete_before_replace``); the
        admin server (one replica) and the HTTP server (:data:`~.facts.HTTP_REPLICAS`), Deployments with the default
        rolling update (one surge pod each); the
        publication Job, whose pod leaves the quota once it completes."""
        shape = shapes[serving.slices[0]]
        server = ContainerRequests("sax-model-server", DEFAULT_CPU_REQUEST, DEFAULT_MEMORY_REQUEST, shape.chips_per_vm)
        return [
            PodSet(
                "JobSet sax-model-server-set",
                (PodShape("model server", shape.vms, (server,)),),
                pools,
                restart_groups=pools,
            ),
            *(
                PodSet(
                    f"Deployment {d}",
                    (PodShape(d, 1, (ContainerRequests(d, *SERVER_REQUESTS),)),),
                    n,
                    deployment_surge(n),
                )
                for d, n in (("sax-admin-server", 1), ("sax-http", HTTP_REPLICAS))
            ),
            *(
                [
                    PodSet(
                        "Job sax-publisher",
                        (PodShape("publish", 1, (ContainerRequests("publish", *PUBLISHER_REQUESTS),)),),
                        1,
                        restart_groups=0,
                    )
                ]
                if serving.models
                else []
            ),
        ]

    def build(self, platform: Platform, serving: SaxmlServingConfig) -> Built:
        """The JobSet install and the Sax servers, with the publication Job."""
        name, identity = platform.name, platform.identity
        jobset = platform.install(JOBSET, serving.jobset_version, ())
        workload = SaxmlServing(
            f"{name}-saxml",
            SaxmlServingArgs(
                namespace=identity.namespace_name,
                service_account=identity.service_account_name,
                shape=platform.slices.shape,
                num_slices=len(platform.slices.names),
                state_bucket=platform.buckets.names["state"],
                cell=serving.cell,
                models=[SaxModel(m.model, m.model_path, m.checkpoint, m.replicas) for m in serving.models],
                images=to_settings(serving.images, SaxmlImages),
                max_restarts=serving.max_restarts,
                privileged=checks.privileged(serving, platform.settings.cluster.min_master_version),
                exposure=Exposure(serving.http.exposure),
                source_ranges=tuple(serving.http.source_ranges),
                publish_timeout_seconds=serving.publish_timeout_seconds,
                labels=platform.k8s_labels,
                priority_class_name=SERVING_PRIORITY,
            ),
            opts=platform.workload_options(jobset),
        )
        model = serving.models[0].model if serving.models else f"{serving.cell}/<model>"
        examples = {
            key: workload.address.apply(functools.partial(curl_command, method=method, path=path, body=body))
            for key, (method, path, body) in http_examples(model).items()
        }

        return Built(
            installs=[jobset],
            outputs={
                "saxHttpAddress": workload.address,
                "saxModels": [m.model for m in serving.models],
                "rollout": rollout(serving, platform.settings),
                "caveats": [READINESS],
                **examples,
            },
        )


BACKEND = Saxml()
