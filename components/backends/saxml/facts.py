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
