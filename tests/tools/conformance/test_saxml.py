"""tpu_serving_tools.conformance.saxml: the Saxml containers' flags and environment against their release's table (make
check's engines)."""

from __future__ import annotations

from tests.tools.conformance.test_vllm import _view
from tpu_serving_tools.conformance import table


def test_saxml_containers_use_their_release_flags_and_environment():
    from tpu_serving_tools.conformance import saxml

    view = _view("saxml-175b-v5e32x2")
    found = saxml.findings(view)
    assert len(found) == 3 and all(f.ok for f in found), [f.reason for f in found]
    (js,) = [r["inputs"] for r in view.resources if r["inputs"].get("kind") == "JobSet"]
    server = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    server["args"].append("--sax_cells=/sax/x")
    server["env"].append({"name": "SAX_CELL_ROOT", "value": "x"})
    (bad,) = [f for f in saxml.findings(view) if not f.ok]
    assert "--sax_cells: no such flag in saxml v1.1.0" in bad.reason and "env SAX_CELL_ROOT" in bad.reason
    assert table.load("saxml-v1.1.0").source["artefact"].startswith("google/saxml@v1.1.0 (")
