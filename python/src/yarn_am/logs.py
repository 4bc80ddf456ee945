"""Container logs through the NodeManagers' web services, as a user reads them without log
aggregation (``tests/cluster/support/cluster.rs`` does the same): the app's containers from the RM's
attempts (each attempt's AM container and node), the container ids the AM's log names, the
NodeManagers' current container lists and the AM's executor list; then each container's
files (``/ws/v1/node/containers/<id>/logs``) and their text
(``/ws/v1/node/containerlogs/<id>/<file>``) from the NodeManager that has them."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Iterable, List, Optional, Set
from urllib.parse import quote

from ._http import web_request
from .errors import UnreachableError
from .rm import ResourceManager, one_or_many

_WORD = re.compile(r"container_[A-Za-z0-9_]+")


def is_container_of(word: str, app_id: str) -> bool:
    """Whether ``word`` is a container id of ``app_id`` (with or without the RM epoch,
    ``container_e01_<ts>_<app>_...``)."""
    if not app_id.startswith("application_") or not word.startswith("container_"):
        return False
    app = app_id[len("application_"):]
    rest = word[len("container_"):]
    m = re.match(r"^e[0-9]+_(.*)$", rest)
    if m:
        rest = m.group(1)
    return rest.startswith(app + "_")


def strip_log_wrapper(body: bytes, name: str) -> bytes:
    """The file's bytes from the NM's ``containerlogs`` answer, without its header (up to
    ``LogContents:``) and footer (``End of LogType:<name>.``); the body itself when it has no
    such wrapper."""
    head = b"LogContents:\n"
    start = body.find(head)
    if start < 0:
        return body
    start += len(head)
    foot = f"End of LogType:{name}.".encode()
    end = body.rfind(foot)
    if end < start:
        return body[start:]
    return body[start:end]


class LogReader:
    def __init__(self, rm: ResourceManager, timeout: float = 10.0):
        self.rm = rm
        self.timeout = timeout

    def _get(self, url: str, accept: str = "application/json") -> Optional[bytes]:
        try:
            status, body = web_request("GET", url, timeout=self.timeout, accept=accept, what="a NodeManager")
        except UnreachableError:
            return None
        return body if status < 400 else None

    def _json(self, url: str) -> Dict[str, Any]:
        body = self._get(url)
        if body is None:
            return {}
        try:
            v = json.loads(body)
        except ValueError:
            return {}
        return v if isinstance(v, dict) else {}

    def container_ids(self, app_id: str, known: Iterable[str] = ()) -> Dict[str, Optional[str]]:
        """Container id -> the NodeManager web URL known to run it (``None``: unknown)."""
        nodes = self.rm.node_web_urls()
        found: Dict[str, Optional[str]] = {}
        for c in known:
            if is_container_of(c, app_id):
                found.setdefault(c, None)
        scheme = "https" if any(u.startswith("https://") for u in self.rm.urls) else "http"
        for a in self.rm.attempts(app_id):
            am, node = a.get("containerId"), a.get("nodeHttpAddress")
            if not am:
                continue
            base = f"{scheme}://{node}" if node else None
            found[am] = base
            if base:
                body = self._get(f"{base}/ws/v1/node/containerlogs/{quote(am)}/stderr", accept="text/plain")
                for w in _WORD.findall((body or b"").decode("utf-8", "replace")):
                    if is_container_of(w, app_id):
                        found.setdefault(w, None)
        for base in nodes.values():
            listing = self._json(f"{base}/ws/v1/node/containers")
            for c in one_or_many((listing.get("containers") or {}).get("container")):
                cid = c.get("id")
                if cid and is_container_of(cid, app_id):
                    found[cid] = base
        return found

    def files(self, base: str, container_id: str) -> List[str]:
        info = self._json(f"{base}/ws/v1/node/containers/{quote(container_id)}/logs")
        names: List[str] = []
        for i in one_or_many(info.get("containerLogsInfo")):
            for f in one_or_many((i or {}).get("containerLogInfo")):
                n = (f or {}).get("fileName")
                if n and n not in names:
                    names.append(n)
        return names

    def read(self, base: str, container_id: str, name: str) -> Optional[str]:
        body = self._get(
            f"{base}/ws/v1/node/containerlogs/{quote(container_id)}/{quote(name)}", accept="text/plain"
        )
        if body is None:
            return None
        return strip_log_wrapper(body, name).decode("utf-8", "replace")

    def logs(
        self,
        app_id: str,
        *,
        containers: Optional[Iterable[str]] = None,
        files: Optional[Iterable[str]] = None,
        known: Iterable[str] = (),
    ) -> Dict[str, Dict[str, str]]:
        """Container id -> file name -> text, for the app's containers (or those named) whose
        NodeManager still has their logs, and their files (or those named)."""
        found = self.container_ids(app_id, known)
        if containers is not None:
            want: Set[str] = set(containers)
            found = {c: b for c, b in found.items() if c in want}
            for c in want:
                found.setdefault(c, None)
        nodes = list(self.rm.node_web_urls().values())
        wanted_files = set(files) if files is not None else None
        out: Dict[str, Dict[str, str]] = {}
        for cid in sorted(found):
            known_base = found[cid]
            bases: List[str] = [known_base] if known_base else []
            bases += [b for b in nodes if b not in bases]
            for base in bases:
                names = self.files(base, cid)
                if not names:
                    continue
                texts: Dict[str, str] = {}
                for n in names:
                    if wanted_files is not None and n not in wanted_files:
                        continue
                    t = self.read(base, cid, n)
                    if t is not None:
                        texts[n] = t
                out[cid] = texts
                break
        return out
