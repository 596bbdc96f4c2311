"""Backend ``pathways-job``: Pathways batch and interactive workloads with the PathwaysJob API (seed 003).

- :mod:`.facts`: what the PathwaysJob controller does (ports, names, limits), sourced;
- :mod:`.args`: the typed arguments of :class:`PathwaysWorkload`;
- :mod:`.pods`: pure builders of the PathwaysJob object;
- :mod:`.component`: the ``PathwaysWorkload`` component;
- :mod:`.settings` and :mod:`.checks`: the stack file's ``serving`` block and its checks;
- :mod:`.backend`: what the deployment asks of a backend;
- ``policy_allowlist.json``: the policy pack's exceptions this backend needs (none).
"""

from .args import CustomComponent, PathwaysWorkloadArgs, UserContainer
from .backend import BACKEND
from .component import PathwaysWorkload
from .settings import PathwaysJobConfig

__all__ = [
    "BACKEND",
    "CustomComponent",
    "PathwaysJobConfig",
    "PathwaysWorkload",
    "PathwaysWorkloadArgs",
    "UserContainer",
]
