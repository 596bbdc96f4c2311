"""Backend ``vllm``: vLLM TPU (vllm-project/tpu-inference) on a LeaderWorkerSet, one group per slice.

The package holds everything of the backend:

- :mod:`.facts`: what the engine and its image are (ports, paths, metrics, scripts, flags the
  library writes), each with its upstream source;
- :mod:`.args`: the typed arguments of :class:`VllmServing` (and the engine settings the stack
  file shares with it);
- :mod:`.pods`: pure builders of the LeaderWorkerSet and Service;
- :mod:`.component`: the ``VllmServing`` component;
- :mod:`.settings` and :mod:`.checks`: the stack file's ``serving`` block for this backend and
  its checks against the rest of the stack;
- :mod:`.backend`: what the deployment asks of a backend (build, ingress, metrics, outputs);
- ``policy_allowlist.json``: the policy pack's exceptions this backend needs (none).
"""

from .args import SecretKey, VllmEngineSettings, VllmImages, VllmRequests, VllmServingArgs, WeightsLoader
from .backend import BACKEND
from .component import VllmServing
from .settings import VllmServingConfig

__all__ = [
    "BACKEND",
    "SecretKey",
    "VllmEngineSettings",
    "VllmImages",
    "VllmRequests",
    "VllmServing",
    "VllmServingArgs",
    "VllmServingConfig",
    "WeightsLoader",
]
