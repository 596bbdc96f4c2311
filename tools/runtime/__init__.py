"""The runtime model: would a stack's plan actually run on GKE?

Pure functions over an offline plan (``build/<stack>/plan.json``, as
:mod:`tools.offline` records it) plus small fact tables, each fact with its source.
Every check answers one question of the form "after ``pulumi up``, would X work?" and
returns a :class:`~tools.runtime.result.CategoryResult`:

- ``scheduling``: the pods the controllers create (LWS groups, JobSet jobs, PathwaysJob
  head and workers, Deployments, Jobs), placed on the node pools the plan declares;
- ``identity``: for every pod that uses a bucket, the identity it really acts as and
  whether that identity holds the role it needs on that bucket;
- ``network``: the flows each backend needs, evaluated against the namespace's
  NetworkPolicies;
- ``prerequisites``: project APIs, group RBAC, Cloud NAT for private nodes;
- ``second apply``: the resources whose fields the cloud reads back differently (the GKE cluster's), which a
  second ``pulumi up`` of the unchanged stack must not replace.

``python -m tpu_serving_tools.check`` (``make check``) runs every category over every stack.
"""
