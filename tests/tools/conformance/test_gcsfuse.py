"""tpu_serving_tools.conformance.gcsfuse: the GCS FUSE volumes' mount options against the release's table (make check's
engines)."""

from __future__ import annotations

from tests.tools.conformance.test_vllm import _view
from tpu_serving_tools.conformance import table


def test_gcsfuse_mount_options_are_options_of_the_release():
    from tpu_serving_tools.conformance import gcsfuse

    view = _view("vllm-llama33-70b-v5e16")
    found = gcsfuse.findings(view)
    assert len(found) == 2 and all(f.ok for f in found)  # weights and compilation cache
    t = table.load(f"gcsfuse-{gcsfuse.GCSFUSE_TAG}")
    assert gcsfuse.option_problem("metadata-cache:ttl-secs:-1", t) == ""
    assert gcsfuse.option_problem("only-dir=x", t) == ""
    assert gcsfuse.option_problem("file-cache:max-size:-1", t) == "file-cache:max-size: no such config entry"
    assert gcsfuse.option_problem("implicit-dir", t) == "implicit-dir: no such flag"
    lws = next(r["inputs"] for r in view.resources if r["inputs"].get("kind") == "LeaderWorkerSet")
    weights = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["volumes"][1]["csi"]["volumeAttributes"]
    weights["mountOptions"] += ",metadata-cache:ttl:-1"
    assert any("metadata-cache:ttl: no such config entry" in f.reason for f in gcsfuse.findings(view) if not f.ok)
