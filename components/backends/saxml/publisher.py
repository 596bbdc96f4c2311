"""Reconcile the models published on a Saxml cell with the stack's model list.

Runs inside the publication Job (standard library only): it waits for sax-http, unpublishes
the models it published earlier that the stack no longer lists, publishes what ``/listcell``
does not already show (re-publishing a model whose path, checkpoint or replicas changed),
records the published list, and waits until every model has its active replicas.

The record of what this reconciler published lives in a ConfigMap, so removing a model
from the stack unpublishes it on the next ``pulumi up``. Configuration comes from the
environment: ``SAX_HTTP`` (base URL), ``SAX_MODELS`` (JSON list of
``{"model", "model_path", "checkpoint", "replicas"}``), ``STATE_CONFIGMAP``,
``POD_NAMESPACE``, ``WAIT_SECONDS``.
"""

from __future__ import annotations

import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request
from typing import Any, Optional, Protocol


def call(base: str, method: str, path: str, body: dict, timeout: float = 30) -> tuple[int, Optional[dict]]:
    """One sax-http request with a JSON body (``/listcell`` is a GET with a body)."""
    req = urllib.request.Request(
        f"{base}{path}", data=json.dumps(body).encode(), method=method,
        headers={"Content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            text = resp.read().decode() or "{}"
            return resp.status, json.loads(text)
    except urllib.error.HTTPError as err:
        return err.code, None


def listcell(base: str, model: str) -> Optional[dict]:
    """What sax-http reports about ``model``, or None when it is not published."""
    status, info = call(base, "GET", "/listcell", {"model": model})
    return info if status == 200 else None


def wait_for_http(base: str, deadline: float, poll: float) -> None:
    """Wait until sax-http answers at all (any HTTP status)."""
    while True:
        try:
            call(base, "GET", "/listcell", {"model": "/sax/probe/none"}, timeout=5)
            return
        except (urllib.error.URLError, OSError):
            if time.monotonic() > deadline:
                raise SystemExit(f"sax-http at {base} did not answer in time")
            time.sleep(poll)


def matches(info: dict, want: dict) -> bool:
    return (
        info.get("model_path") == want["model_path"]
        and str(info.get("checkpoint")) == str(want["checkpoint"])
        and int(info.get("max_replicas", -1)) == int(want["replicas"])
    )


class State(Protocol):
    def load(self) -> list[str]: ...
    def save(self, models: list[str]) -> None: ...


class FileState:
    """State in a local JSON file (tests, or a mounted volume)."""

    def __init__(self, path: str):
        self.path = path

    def load(self) -> list[str]:
        try:
            with open(self.path) as f:
                return json.load(f)
        except FileNotFoundError:
            return []

    def save(self, models: list[str]) -> None:
        with open(self.path, "w") as f:
            json.dump(models, f)


class ConfigMapState:
    """State in the ``published`` key of a ConfigMap, through the in-cluster API."""

    SA = "/var/run/secrets/kubernetes.io/serviceaccount"

    def __init__(self, namespace: str, name: str):
        host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"]
        self.url = f"https://{host}:{port}/api/v1/namespaces/{namespace}/configmaps/{name}"
        with open(f"{self.SA}/token") as f:
            self.token = f.read().strip()
        self.ctx = ssl.create_default_context(cafile=f"{self.SA}/ca.crt")

    def _request(self, method: str, body: Optional[dict] = None, content_type: str = "application/json") -> dict:
        req = urllib.request.Request(
            self.url, method=method, data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": content_type},
        )
        with urllib.request.urlopen(req, context=self.ctx, timeout=30) as resp:
            return json.loads(resp.read().decode())

    def load(self) -> list[str]:
        return json.loads((self._request("GET").get("data") or {}).get("published") or "[]")

    def save(self, models: list[str]) -> None:
        self._request("PATCH", {"data": {"published": json.dumps(models)}}, "application/merge-patch+json")


def reconcile(base: str, desired: list[dict], state: State, *, wait_seconds: float, poll: float = 10) -> list[str]:
    """Bring the cell to ``desired``; return a log of what was done."""
    log: list[str] = []
    deadline = time.monotonic() + wait_seconds
    wait_for_http(base, deadline, poll)
    wanted = {m["model"]: m for m in desired}
    for model in state.load():
        if model not in wanted and listcell(base, model) is not None:
            call(base, "POST", "/unpublish", {"model": model})
            log.append(f"unpublished {model}")
    for model, want in wanted.items():
        info = listcell(base, model)
        if info is not None and matches(info, want):
            log.append(f"kept {model}")
            continue
        if info is not None:
            call(base, "POST", "/unpublish", {"model": model})
        status, _ = call(base, "POST", "/publish", want)
        if status != 200:
            raise SystemExit(f"publishing {model} failed with HTTP {status}")
        log.append(f"published {model}")
    state.save(sorted(wanted))
    for model, want in wanted.items():
        while True:
            info = listcell(base, model) or {}
            if int(info.get("active_replicas", 0)) >= int(want["replicas"]):
                log.append(f"ready {model} ({want['replicas']} replicas)")
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"{model}: {info.get('active_replicas', 0)}/{want['replicas']} replicas active in time")
            time.sleep(poll)
    return log


def main() -> int:
    env: dict[str, Any] = os.environ
    state = ConfigMapState(env["POD_NAMESPACE"], env["STATE_CONFIGMAP"])
    log = reconcile(
        env["SAX_HTTP"], json.loads(env["SAX_MODELS"]), state, wait_seconds=float(env.get("WAIT_SECONDS", "1800"))
    )
    print("\n".join(log))
    return 0


if __name__ == "__main__":
    sys.exit(main())
