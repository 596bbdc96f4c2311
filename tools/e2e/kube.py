"""A small typed client of the Kubernetes API over HTTPS (the standard library only: no kubectl, no client library).

It authenticates with a client certificate (the admin's) or a bearer token, speaks JSON, and knows each resource's
path through the API server's discovery documents. Reads and writes return the decoded object; an error status
raises :class:`ApiError` with the API server's own message.
"""

from __future__ import annotations

import http.client
import json
import ssl
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Obj = dict[str, Any]

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"


class ApiError(RuntimeError):
    """The API server answered with an error status; ``message`` is its Status message."""

    def __init__(self, method: str, path: str, status: int, body: Mapping[str, Any] | str):
        self.status = status
        self.body = body
        self.message = str(body.get("message", body)) if isinstance(body, Mapping) else body
        self.reason = str(body.get("reason", "")) if isinstance(body, Mapping) else ""
        super().__init__(f"{method} {path}: {status} {self.reason}: {self.message}")


class WaitTimeout(TimeoutError):
    """A condition did not hold within its time; the message says what was awaited and what was last seen."""


@dataclass(frozen=True)
class Resource:
    """Where a kind is served: its plural name, whether namespaced, and its group/version."""

    api_version: str
    plural: str
    namespaced: bool

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        base = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        parts = [base]
        if self.namespaced and namespace:
            parts.append(f"namespaces/{namespace}")
        parts.append(self.plural)
        if name:
            parts.append(name)
        if subresource:
            parts.append(subresource)
        return "/".join(parts)


@dataclass
class Kube:
    """A connection to one API server (``server``: ``https://127.0.0.1:<port>``)."""

    server: str
    ca_file: Path
    cert_file: Path | None = None
    key_file: Path | None = None
    token: str | None = None
    timeout: float = 30.0
    impersonate: tuple[str, str] | None = None
    """(user, group) the requests act as (``Impersonate-User``, ``Impersonate-Group``: the API server's user
    impersonation, which the cluster-admin credentials may do), None: as themselves."""
    _resources: dict[tuple[str, str], Resource] = field(default_factory=dict)
    _ssl: ssl.SSLContext | None = None

    @classmethod
    def of(cls, api_client: Any) -> Kube:
        """The connection of a ``kubernetes`` client's ``ApiClient`` (its server, CA and client certificate)."""
        c = api_client.configuration
        return cls(c.host, Path(c.ssl_ca_cert), Path(c.cert_file), Path(c.key_file))

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            ctx = ssl.create_default_context(cafile=str(self.ca_file))
            if self.cert_file and self.key_file:
                ctx.load_cert_chain(str(self.cert_file), str(self.key_file))
            self._ssl = ctx
        return self._ssl

    def request(
        self, method: str, path: str, body: Any = None, *, content_type: str = "application/json", query: str = ""
    ) -> Any:
        """One API call; the decoded JSON answer (or text), :class:`ApiError` on a status of 400 or more."""
        url = urllib.parse.urlsplit(self.server)
        conn = http.client.HTTPSConnection(url.hostname or "", url.port, context=self._context(), timeout=self.timeout)
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.impersonate is not None:
            headers["Impersonate-User"], headers["Impersonate-Group"] = self.impersonate
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        try:
            conn.request(method, path + (f"?{query}" if query else ""), body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read().decode()
        finally:
            conn.close()
        try:
            decoded: Any = json.loads(raw) if raw else {}
        except ValueError:
            decoded = raw
        if resp.status >= 400:
            raise ApiError(method, path, resp.status, decoded)
        return decoded

    def get_raw(self, path: str) -> str:
        """A non-JSON endpoint such as ``/readyz`` (its text)."""
        answer = self.request("GET", path)
        return answer if isinstance(answer, str) else json.dumps(answer)

    # Discovery ---------------------------------------------------------------------------------------------
    def resource(self, api_version: str, kind: str) -> Resource:
        """The plural and scope of ``kind`` in ``api_version``, from the API server's discovery (cached)."""
        key = (api_version, kind)
        if key not in self._resources:
            base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            try:
                served = self.request("GET", base)
            except ApiError as err:
                if err.status != 404:
                    raise
                raise ApiError("GET", base, 404, f"{api_version} is not served (its CRD not yet Established?)") from err
            for r in served.get("resources", []):
                if "/" not in r["name"]:
                    self._resources[(api_version, r["kind"])] = Resource(api_version, r["name"], r["namespaced"])
        if key not in self._resources:
            raise ApiError("GET", f"discovery {api_version}", 404, f"no kind {kind} in {api_version}")
        return self._resources[key]

    def forget_discovery(self) -> None:
        """Drop the cached discovery (after CRDs are installed)."""
        self._resources.clear()

    def _path(self, obj: Mapping[str, Any], *, named: bool = True, subresource: str | None = None) -> str:
        res = self.resource(str(obj["apiVersion"]), str(obj["kind"]))
        meta = obj.get("metadata") or {}
        return res.path(meta.get("namespace"), meta.get("name") if named else None, subresource)

    # Verbs ---------------------------------------------------------------------------------------------------
    def create(self, obj: Mapping[str, Any]) -> Obj:
        """POST ``obj`` (its apiVersion, kind and metadata.namespace say where)."""
        result: Obj = self.request("POST", self._path(obj, named=False), obj)
        return result

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj:
        result: Obj = self.request("GET", self.resource(api_version, kind).path(namespace, name))
        return result

    def find(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """The object, or None when it does not exist."""
        try:
            return self.get(api_version, kind, name, namespace)
        except ApiError as err:
            if err.status == 404:
                return None
            raise

    def list(self, api_version: str, kind: str, namespace: str | None = None, *, label_selector: str = "") -> list[Obj]:
        query = urllib.parse.urlencode({"labelSelector": label_selector}) if label_selector else ""
        items: list[Obj] = self.request("GET", self.resource(api_version, kind).path(namespace), query=query)["items"]
        return items

    def patch(
        self,
        obj_ref: Mapping[str, Any],
        patch: Mapping[str, Any],
        *,
        subresource: str | None = None,
        content_type: str = MERGE_PATCH,
    ) -> Obj:
        """PATCH the object ``obj_ref`` names (apiVersion, kind, metadata.name/namespace)."""
        result: Obj = self.request(
            "PATCH", self._path(obj_ref, subresource=subresource), patch, content_type=content_type
        )
        return result

    def apply(self, obj: Mapping[str, Any], *, field_manager: str = "tpu-serving-e2e") -> Obj:
        """Server-side apply of ``obj`` (created or updated), forcing ownership of its fields."""
        query = urllib.parse.urlencode({"fieldManager": field_manager, "force": "true"})
        result: Obj = self.request(
            "PATCH", self._path(obj), obj, content_type="application/apply-patch+yaml", query=query
        )
        return result

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        try:
            self.request("DELETE", self.resource(api_version, kind).path(namespace, name))
        except ApiError as err:
            if err.status != 404:
                raise


def wait_for(
    what: str,
    probe: Callable[[], Any],
    *,
    timeout: float,
    interval: float = 0.25,
    seen: Callable[[], str] | None = None,
) -> Any:
    """Call ``probe`` until it returns something truthy (returned) or ``timeout`` seconds pass (:class:`WaitTimeout`
    naming ``what`` and, from ``seen``, what was last observed). Transient API and connection errors are retried."""
    deadline = time.monotonic() + timeout
    last_error = ""
    while True:
        try:
            result = probe()
            if result:
                return result
        except (ApiError, OSError) as err:
            last_error = str(err)
        if time.monotonic() >= deadline:
            observed = seen() if seen else last_error
            raise WaitTimeout(
                f"timed out after {timeout:.0f} s waiting for {what}" + (f"; {observed}" if observed else "")
            )
        time.sleep(interval)
