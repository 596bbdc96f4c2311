"""tools/conformance/extract_vllm.py: the vLLM, tpu-inference and Ray tables read from the wheels, and what they hold."""

from __future__ import annotations

import pytest

from tpu_serving_tools.conformance import table


@pytest.mark.parametrize(
    "name", ["vllm-0.29.0", "tpu-inference-0.29.0", "ray-2.60.0", "vllm-0.21.0", "tpu-inference-0.21.0"]
)
def test_extract_vllm_tables_carry_their_provenance(name):
    t = table.load(name)
    assert t.source["artefact"].startswith("PyPI ") and len(t.source["sha256"]) == 64
    assert t.source["by"] == "tools/conformance/extract_vllm.py" and t.source["extracted"]
    assert t.flags or t.env


def test_extract_vllm_vllm_tables_name_the_front_end_file_they_read():
    """vLLM moved the front end's flags (``FrontendArgs``) from ``entrypoints/openai/`` to ``entrypoints/launchers/``
    between vllm-tpu 0.27.0 and 0.29.0; the extractor reads whichever the wheel has and the table says which."""
    from tpu_serving_tools.conformance.extract_vllm import CLI_ARGS, cli_args_files

    old, new = table.load("vllm-0.21.0"), table.load("vllm-0.29.0")
    assert "vllm/entrypoints/openai/cli_args.py" in old.source["files"].split(", ")
    assert "vllm/entrypoints/launchers/cli_args.py" in new.source["files"].split(", ")
    assert {"--port", "--allowed-origins", "--api-key"} <= new.flags  # FrontendArgs fields, read from launchers/
    assert cli_args_files(["vllm/envs.py", *CLI_ARGS[1:]]) == list(CLI_ARGS[1:])
    assert cli_args_files(["vllm/envs.py", *CLI_ARGS]) == list(CLI_ARGS)
    with pytest.raises(ValueError, match="front end's flags"):
        cli_args_files(["vllm/envs.py"])


def test_extract_vllm_connector_inits_tells_a_connector_that_skips_its_base_initializer():
    """The extractor's reading of a KV connector module: a ``*Connector*`` class whose ``__init__`` runs its base's
    (``super().__init__`` or ``Base.__init__``) and one whose ``__init__`` does not (tpu-inference 0.29.0's
    ``TPUConnectorHMA``); a class without an ``__init__`` of its own is left out."""
    from tpu_serving_tools.conformance.extract_vllm import connector_inits

    source = (
        "class AConnector(Base):\n    def __init__(self, c):\n        super().__init__(c)\n"
        "class BConnector(AConnector):\n    def __init__(self, c):\n        self.x = None\n"
        "class CConnector(Base):\n    def __init__(self, c):\n        Base.__init__(self, c)\n"
        "class DConnector(AConnector):\n    pass\n"
    )
    assert connector_inits(source, "m.py") == {
        "connector AConnector": "base initialized: m.py l.2",
        "connector BConnector": "base not initialized: m.py l.5",
        "connector CConnector": "base initialized: m.py l.8",
    }


def test_extract_vllm_vllm_metrics_the_extractor_reads_the_loggers_constructors_names_and_kinds():
    from tpu_serving_tools.conformance.extract_vllm import logger_metrics

    source = """
class PrometheusStatLogger:
    _gauge_cls = Gauge

    def __init__(self):
        g = self._gauge_cls(name="vllm:num_requests_running", documentation="x")
        c = self._counter_cls(name="vllm:generation_tokens", documentation="x")
        h = Histogram(name="vllm:e2e_request_latency_seconds", documentation="x", buckets=[1])
        other = self._gauge_cls(name="not_vllm", documentation="x")
        doc = make(name="vllm:not_a_metric")

    def log_metrics_info(self, type):
        name = None
        if type == "cache_config":
            name = "vllm:cache_config_info"
        self._gauge_cls(name=name, documentation="x")
"""
    assert logger_metrics(source) == {
        "vllm:num_requests_running": "gauge",
        "vllm:generation_tokens": "counter",
        "vllm:e2e_request_latency_seconds": "histogram",
        "vllm:cache_config_info": "gauge",
    }


def test_extract_vllm_vllm_metrics_the_table_holds_the_wheels_logger_metrics_with_its_provenance():
    t = table.load("vllm-0.29.0")
    assert "vllm/v1/metrics/loggers.py" in t.source["files"].split(", ")
    assert t.source["sha256"] == "82a17acc30f67725e41d0676c0c86b51aedd0f97d4d4da2caad82750e5e2e4f1"
    assert len(t.metrics) == 39
    assert {t.metrics[m] for m in ("vllm:num_requests_waiting", "vllm:kv_cache_usage_perc")} == {"gauge"}
