"""What the engines, controllers and GKE's add-ons listen on and are called, as the runtime model knows them.

The model's own table: the values and their sources are in ``data/engines.json``, and the backends' own facts in
their ``runtime_facts.json`` (see :mod:`.backend_facts`). The library holds its own copy of some of these, and
``tests/tools/runtime/test_runtime_facts_agree.py`` compares the two, so that neither can drift alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from tpu_serving_tools.runtime import backend_facts as bf
from tpu_serving_tools.runtime import sourced as _sourced

_SAXML, _JETSTREAM, _PATHWAYS_JOB = (bf.BACKENDS[n] for n in ("saxml", "jetstream-pathways", "pathways-job"))
SAX_ADMIN, SAX_MODEL, SAX_HTTP = (_SAXML.roles[r] for r in ("admin", "model", "http"))
"""Saxml roles (components/backends/saxml/runtime_facts.json, with their sources)."""
SAX_ADMIN_PORT, SAX_MODEL_PORT = _SAXML.ports["admin"], _SAXML.ports["model"]
PATHWAYS_WORKER_PORT = _JETSTREAM.ports["pathways_worker"]
PATHWAYS_PROXY_PORT = _PATHWAYS_JOB.ports["proxy"]

_T = _sourced.table("engines")

GMP_COLLECTOR_NAMESPACE = _T.text("GMP_COLLECTOR_NAMESPACE")
GMP_COLLECTOR_LABELS: Mapping[str, str] = _T.get("GMP_COLLECTOR_LABELS", dict[str, str])

GATEWAY_CLASS_REGIONAL_INTERNAL = _T.text("GATEWAY_CLASS_REGIONAL_INTERNAL")
PROXY_ONLY_PURPOSE = _T.text("PROXY_ONLY_PURPOSE")
HEALTH_CHECK_RANGES: tuple[str, ...] = _T.get("HEALTH_CHECK_RANGES", tuple[str, ...])

SERVING_SERVICE: Mapping[str, str] = bf.SERVING_SERVICE
"""The Service clients of a backend call when ``serving.serviceName`` does not name another (each backend's
``runtime_facts.json``). The PathwaysJob backend serves no clients."""

EPP_PORTS: Mapping[str, tuple[str, int]] = _T.get("EPP_PORTS", dict[str, tuple[str, int]])
EPP_POOL_FLAG = _T.text("EPP_POOL_FLAG")
GKE_EPP_HEALTH_CHECK_PORT = _T.integer("GKE_EPP_HEALTH_CHECK_PORT")
