"""What Saxml is, as the ``saxml`` backend relies on it: the ports of the admin, model and HTTP
servers, the object names, the exclusive-topology annotation, the bucket access of the
host-network model servers and the publication Job's lifetime. Each fact names its source."""

from ...platform.node_identity import Access

ADMIN_PORT = 10000
"""Sax admin server port."""
MODEL_PORT = 10001
"""Sax model server port."""
MEGASCALE_PORT = 8471
"""Default port for VM-to-VM communication within a slice."""
HTTP_PORT = 8888
"""sax-http port."""
GENERATE_PATH = "/generate"
"""sax-http's generation: ``POST /generate`` with exactly ``{"model": ..., "query": ...}`` (any other key count
answers 400, so no request limits its decode steps) calls ``lm.Generate(query)`` with no options and answers 200 with
``{"generate_response": [[text, score], ...]}``, indented (the seed's sax-http:v1.0.0, whose source is
GoogleCloudPlatform/ai-on-gke@10048202 saxml-on-gke/httpserver/http_server.py l.143-160 and ``success_res``
l.31-36; the same repository's GPT-J walkthrough on sax-http:v1.0.0, fdd403c0
saxml-on-gke/single-host-inference/gptj/README.md l.268-304). It reads the body by its Content-Length header (l.97),
which the prober's request carries (a ``strings.Reader`` body, whose length Go's ``http.NewRequest`` sets:
blackbox_exporter v0.28.0 prober/http.go l.521-522, l.536). One request at a time per pod: it runs Python's single-threaded
``http.server.HTTPServer`` (l.203)."""
GENERATE_ANSWER = r'"generate_response":\s*\[\s*\['
"""RE2 pattern of :data:`GENERATE_PATH`'s answer holding at least one ``[text, score]`` sample (an error answers 400
``{"Error": ...}``, l.38-44)."""
PROBE_QUERY = "Say OK."
"""The serving probe's query: a few tokens, well within the seed model's 128-token input (google/saxml v1.1.0
saxml/server/pax/lm/params/lm_cloud.py l.564 ``INPUT_SEQ_LEN = 128``)."""
SEED_DECODE_STEPS = 128
"""How many steps a generation of the seed's ``LmCloudSpmd175B32Test`` decodes at most: ``MAX_DECODE_STEPS = 128``
and ``per_example_max_decode_steps`` 128 in ``LmCloudSpmd175B``, which it inherits (google/saxml v1.1.0
saxml/server/pax/lm/params/lm_cloud.py l.547, l.566-569, l.585). Another model class decodes up to its own limit."""
PROBE_TIMEOUT_SECONDS = 60
"""The Saxml probe's module timeout: one generation of up to the model's decode limit (SRE review round 40, M5: "a
128-step decode once a minute is an acceptable probe cost"; with a 60 s timeout). The only upstream figure read is
LmCloudSpmd175B's docstring, "Latency = 2.337s with 128 decoded tokens" on TPU v4-32 (lm_cloud.py l.548-552); on
the stack's v5e slices it is not measured here."""
PROBE_INTERVAL_SECONDS = 75
"""How often the Saxml probe runs: its scrape timeout (the module's 60 s plus the prober's 5 s margin,
:data:`tpu_serving.operations.prober.SCRAPE_MARGIN_SECONDS`) must not exceed the interval (prometheus-engine v0.17.2
podmonitorings CRD l.556-559), and the exporter keeps the module's 60 s only while it is below the scrape timeout
less 0.5 s (blackbox_exporter v0.28.0 prober/handler.go l.282-287); 75 s leaves the scrape 10 s to spare."""
HTTP_REPLICAS = 2
"""sax-http pods: a drain or a node upgrade takes one while the other serves (its budget allows one eviction)."""
EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
MODEL_SERVER_BUCKETS: dict[str, Access] = {"state": Access.READ}
"""Bucket access of the model servers by bucket purpose. They run on the host network (as in
the Saxml guide), so they act as their TPU nodes' service account, not the KSA's: they read
the cell's location under ``SAX_ROOT`` in the state bucket to find the admin server."""
INTERNAL_LB = {"networking.gke.io/load-balancer-type": "Internal"}
"""Annotation that makes a GKE LoadBalancer Service internal to the VPC."""

ADMIN, MODEL_SET, MODEL_JOB, HTTP, HTTP_SERVICE, PUBLISHER = (
    "sax-admin-server",
    "sax-model-server-set",
    "sax-model-server",
    "sax-http",
    "sax-http-lb",
    "sax-publisher",
)

PUBLISHER_TTL_SECONDS = 3600
"""How long the finished publication Job (and its pods, with their logs) stays before it is deleted."""

DISRUPTION_RULE = "disruption"
"""Name of the JobSet failure-policy rule that restarts the slices after a disruption without spending a restart
(a rule name matches ``^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$``: kubernetes-sigs/jobset@v0.12.0
api/jobset/v1alpha2/jobset_types.go l.443-446)."""
DISRUPTION_TARGET = "DisruptionTarget"
"""The pod condition Kubernetes sets on a pod it is about to remove for a disruption (k8s.io/api v0.36.3
core/v1/types.go l.3534): an eviction through the Eviction API, as a node drain or a GKE node upgrade does (reason
``EvictionByEvictionAPI``, k8s.io/kubernetes v1.36.3 pkg/registry/core/pod/storage/eviction.go l.345-347),
preemption (``PreemptionByScheduler``, types.go l.3573), the taint manager on a node that went away
(``DeletionByTaintManager``, pkg/controller/tainteviction/taint_eviction.go l.139), the pod GC of a deleted node
(``DeletionByPodGC``, pkg/controller/podgc/gc_controller.go l.257) and the kubelet's graceful node shutdown
(``TerminationByKubelet``, types.go l.3569)."""
POD_FAILURE_POLICY_REASON = "PodFailurePolicy"
"""The reason of a Job's Failed condition when a ``FailJob`` rule of its ``podFailurePolicy`` matched (k8s.io/api
v0.36.3 batch/v1/types.go l.622); JobSet's ``onJobFailureReasons`` accepts it (kubernetes-sigs/jobset@v0.12.0
pkg/webhooks/jobset_webhook.go l.85-91)."""
FAILURE_RULES_SINCE = "v0.6.0"
"""The first JobSet release with failure-policy ``rules`` and ``RestartJobSetAndIgnoreMaxRestarts`` (the tag v0.6.0's
api/jobset/v1alpha2/jobset_types.go has them, v0.5.2's does not)."""
