"""The Pulumi type tokens of the pulumi-gcp resources the tools read in a plan, named once (each is the ``t`` of the
resource's ``super().__init__`` in pulumi-gcp's Python SDK, e.g. ``pulumi_gcp/container/node_pool.py``)."""

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
RESOURCE_POLICY = "gcp:compute/resourcePolicy:ResourcePolicy"
