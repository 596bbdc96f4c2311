"""Backend ``saxml``: Saxml admin, HTTP and model servers over multi-host TPU slices.

- :mod:`.facts`: Saxml's ports and names, sourced;
- :mod:`.args`: the typed arguments of :class:`SaxmlServing`;
- :mod:`.pods`: pure builders of its Deployments, JobSet, Service, NetworkPolicy and Job;
- :mod:`.publisher`: the publication Job's script, deployed verbatim;
- :mod:`.component`: the ``SaxmlServing`` component;
- :mod:`.settings` and :mod:`.checks`: the stack file's ``serving`` block and its checks;
- :mod:`.backend`: what the deployment asks of a backend;
- ``policy_allowlist.json``: the policy pack's exceptions this backend needs.
"""

from .args import SaxmlImages, SaxmlServingArgs, SaxModel
from .backend import BACKEND
from .component import SaxmlServing
from .settings import SaxmlServingConfig

__all__ = ["BACKEND", "SaxModel", "SaxmlImages", "SaxmlServing", "SaxmlServingArgs", "SaxmlServingConfig"]
