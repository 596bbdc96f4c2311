"""Backend ``jetstream-pathways``: JetStream + MaxText on Pathways, one LeaderWorkerSet per group.

- :mod:`.facts`: ports, paths, metrics and images of JetStream, MaxText and Pathways, sourced;
- :mod:`.args`: the typed arguments of :class:`PathwaysServing`;
- :mod:`.pods`: pure builders of the LeaderWorkerSet and Service;
- :mod:`.component`: the ``PathwaysServing`` component;
- :mod:`.settings` and :mod:`.checks`: the stack file's ``serving`` block and its checks;
- :mod:`.backend`: what the deployment asks of a backend;
- ``policy_allowlist.json``: the policy pack's exceptions this backend needs.
"""

from .args import MaxTextSettings, PathwaysImages, PathwaysServingArgs
from .backend import BACKEND
from .component import PathwaysServing
from .settings import PathwaysServingConfig

__all__ = [
    "BACKEND",
    "MaxTextSettings",
    "PathwaysImages",
    "PathwaysServing",
    "PathwaysServingArgs",
    "PathwaysServingConfig",
]
