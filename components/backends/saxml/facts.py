"""What Saxml is, as the ``saxml`` backend relies on it: the ports of the admin, model and HTTP
servers, the object names, the exclusive-topology annotation, the bucket access of the
host-network model servers and the publication Job's lifetime. Each fact names its source."""

from ...node_identity import Access

ADMIN_PORT = 10000
"""Sax admin server port."""
MODEL_PORT = 10001
"""Sax model server port."""
MEGASCALE_PORT = 8471
"""Default port for VM-to-VM communication within a slice."""
HTTP_PORT = 8888
"""sax-http port."""
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
