"""The ResourceManager's REST API (``/ws/v1/cluster``), found as every Hadoop tool finds it:
``$YARN_AM_RM_WEB``, else ``yarn.resourcemanager.webapp.address`` (``.https.address`` under
``yarn.http.policy`` ``HTTPS_ONLY``; every RM of ``yarn.resourcemanager.ha.rm-ids``) from
``yarn-site.xml`` in ``$YARN_CONF_DIR`` / ``$HADOOP_CONF_DIR``.

Authentication is simple (``user.name``). A cluster whose ``hadoop.security.authentication``
is ``kerberos`` needs SPNEGO, which this client does not do yet: it says so."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence
from urllib.parse import quote, urlencode

from ._http import error_text, web_request
from .errors import ConfigError, RmError, UnreachableError

_APP_ID = re.compile(r"^application_[0-9]+_[0-9]+$")
_VAR = re.compile(r"\$\{([^}$]+)\}")


def check_app_id(app_id: str) -> str:
    """``application_<timestamp>_<number>``, as ``yarn-am submit`` prints it (checked before
    it goes into a URL)."""
    if not isinstance(app_id, str) or not _APP_ID.match(app_id):
        from .errors import InvalidArgument

        raise InvalidArgument(
            f"{app_id!r} is not an application id (application_<timestamp>_<number>, as "
            "`yarn-am submit` prints it)"
        )
    return app_id


def load_site(conf_dir: str, names: Sequence[str]) -> Dict[str, str]:
    """The properties of the named ``*-site.xml`` files of ``conf_dir`` (later files and later
    properties win, as in Hadoop); missing files are skipped."""
    props: Dict[str, str] = {}
    for name in names:
        path = os.path.join(conf_dir, name)
        if not os.path.exists(path):
            continue
        try:
            root = ET.parse(path).getroot()
        except (ET.ParseError, OSError) as e:
            raise ConfigError(f"reading {path}: {e}") from None
        for prop in root.iter("property"):
            n, v = prop.findtext("name"), prop.findtext("value")
            if n is not None and v is not None:
                props[n.strip()] = v.strip()
    return props


def expand(props: Dict[str, str], key: str, default: Optional[str] = None) -> Optional[str]:
    """A property with ``${other}`` references expanded (20 rounds at most, as Hadoop)."""
    value = props.get(key, default)
    for _ in range(20):
        if value is None or "${" not in value:
            break
        value = _VAR.sub(lambda m: props.get(m.group(1), os.environ.get(m.group(1), m.group(0))), value)
    return value


def conf_dir() -> Optional[str]:
    return os.environ.get("YARN_CONF_DIR") or os.environ.get("HADOOP_CONF_DIR") or None


def rm_web_urls_from_conf(props: Dict[str, str]) -> List[str]:
    """Every configured RM's web address as a URL, the first RM first."""
    https = (props.get("yarn.http.policy") or "HTTP_ONLY").strip().upper() == "HTTPS_ONLY"
    scheme, key, port = ("https", "yarn.resourcemanager.webapp.https.address", 8090) if https else (
        "http",
        "yarn.resourcemanager.webapp.address",
        8088,
    )
    ha = (props.get("yarn.resourcemanager.ha.enabled") or "").strip().lower() == "true"
    ids = [i.strip() for i in (props.get("yarn.resourcemanager.ha.rm-ids") or "").split(",") if i.strip()]
    out = []
    for rm_id in ids if ha and ids else [None]:
        suffix = f".{rm_id}" if rm_id else ""
        addr = expand(props, key + suffix)
        if addr is None:
            host = expand(props, "yarn.resourcemanager.hostname" + suffix) or expand(
                props, "yarn.resourcemanager.hostname"
            ) or "0.0.0.0"
            addr = f"{host}:{port}"
        out.append(f"{scheme}://{addr}")
    return out


def normalize_web(address: str) -> str:
    """``host:port`` or a URL -> a URL without a trailing ``/``."""
    a = address.strip().rstrip("/")
    if "://" not in a:
        a = "http://" + a
    return a


@dataclass(frozen=True)
class AppStatus:
    """An application as the RM reports it (``GET /ws/v1/cluster/apps/<id>``)."""

    app_id: str
    #: NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED
    state: str
    #: UNDEFINED while running; SUCCEEDED, FAILED or KILLED at the end
    final_status: str
    name: str = ""
    user: str = ""
    queue: str = ""
    progress: float = 0.0
    diagnostics: str = ""
    tracking_url: Optional[str] = None
    #: ``host:port`` of the AM's driver API (the RPC address it registered), once RUNNING
    am_rpc_address: Optional[str] = None
    am_container_logs: Optional[str] = None
    running_containers: int = 0
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_report(cls, r: Dict[str, Any]) -> "AppStatus":
        rpc = r.get("amRPCAddress")
        if not rpc or str(rpc).startswith("N/A") or str(rpc).endswith(":-1"):
            rpc = None
        return cls(
            app_id=r.get("id", ""),
            state=r.get("state", ""),
            final_status=r.get("finalStatus", ""),
            name=r.get("name", ""),
            user=r.get("user", ""),
            queue=r.get("queue", ""),
            progress=float(r.get("progress") or 0.0),
            diagnostics=r.get("diagnostics") or "",
            tracking_url=r.get("trackingUrl") or None,
            am_rpc_address=rpc,
            am_container_logs=r.get("amContainerLogs") or None,
            running_containers=max(0, int(r.get("runningContainers") or 0)),
            raw=r,
        )

    @property
    def done(self) -> bool:
        return self.state in ("FINISHED", "FAILED", "KILLED")

    @property
    def outcome(self) -> str:
        """``succeeded``, ``failed``, ``killed`` or ``running``: the CLI's exit codes 0, 1, 3
        and 4 (``yarn-am status``)."""
        if self.state == "FINISHED" and self.final_status == "SUCCEEDED":
            return "succeeded"
        if self.state == "KILLED" or self.final_status == "KILLED":
            return "killed"
        if self.state in ("FINISHED", "FAILED"):
            return "failed"
        return "running"

    @property
    def succeeded(self) -> bool:
        return self.outcome == "succeeded"

    @property
    def exit_code(self) -> int:
        return {"succeeded": 0, "failed": 1, "killed": 3}.get(self.outcome, 4)

    @property
    def job_summary(self) -> Optional[Dict[str, Any]]:
        """The embedded job's summary, which the AM leaves in the diagnostics as one JSON line
        (``None`` for an app without a job, or before it ends)."""
        for line in self.diagnostics.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    v = json.loads(line)
                except ValueError:
                    continue
                if isinstance(v, dict) and "tasks_total" in v:
                    return v
        return None


def one_or_many(v: Any) -> List[Any]:
    """Hadoop's web services give one object or a list of them."""
    if v is None:
        return []
    return v if isinstance(v, list) else [v]


class ResourceManager:
    """A client of the RM's REST API. ``address``: ``host:port`` or a URL; default from the
    environment (see the module doc). ``user``: the simple-auth user, default ``$USER``."""

    def __init__(
        self,
        address: Optional[str] = None,
        *,
        user: Optional[str] = None,
        timeout: float = 30.0,
    ):
        self.user = user or os.environ.get("USER") or "yarn"
        self.timeout = timeout
        self.urls: List[str] = []
        props: Dict[str, str] = {}
        directory = conf_dir()
        if directory:
            props = load_site(directory, ["core-site.xml", "yarn-site.xml"])
        if address:
            self.urls = [normalize_web(address)]
        elif os.environ.get("YARN_AM_RM_WEB"):
            self.urls = [normalize_web(os.environ["YARN_AM_RM_WEB"])]
        elif directory:
            self.urls = rm_web_urls_from_conf(props)
        else:
            raise ConfigError(
                "no ResourceManager given: pass address=HOST:PORT, set YARN_AM_RM_WEB, or set "
                "HADOOP_CONF_DIR to a folder with yarn-site.xml"
            )
        auth = (props.get("hadoop.security.authentication") or "simple").strip().lower()
        if auth == "kerberos":
            raise ConfigError(
                "the cluster uses Kerberos (hadoop.security.authentication=kerberos): the "
                "Python client does not do SPNEGO yet; use the yarn-am CLI"
            )

    def __repr__(self) -> str:
        return f"ResourceManager({', '.join(self.urls)!r}, user={self.user!r})"

    def _call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        query = urlencode({"user.name": self.user})
        last: Optional[Exception] = None
        for base in self.urls:
            url = f"{base}/ws/v1/cluster{path}?{query}"
            try:
                status, payload = web_request(method, url, timeout=self.timeout, body=body)
            except UnreachableError as e:
                last = e
                continue
            if status >= 400:
                msg = error_text(payload)
                if status == 401:
                    msg += " (the RM wants authentication: Kerberos/SPNEGO is not supported by this client)"
                raise RmError(method, f"{base}/ws/v1/cluster{path}", status, msg)
            if not payload.strip():
                return {}
            try:
                return json.loads(payload)
            except ValueError:
                raise RmError(method, f"{base}/ws/v1/cluster{path}", status, "the answer is not JSON") from None
        assert last is not None
        raise last

    def app(self, app_id: str) -> AppStatus:
        check_app_id(app_id)
        r = self._call("GET", f"/apps/{quote(app_id)}")
        return AppStatus.from_report(r.get("app") or {})

    def attempts(self, app_id: str) -> List[Dict[str, Any]]:
        """The app's attempts: ``containerId``, ``nodeHttpAddress``, ``nodeId``, ..."""
        check_app_id(app_id)
        r = self._call("GET", f"/apps/{quote(app_id)}/appattempts")
        return one_or_many((r.get("appAttempts") or {}).get("appAttempt"))

    def kill(self, app_id: str) -> None:
        """Asks the RM to kill the application (``PUT .../state``); returns at once."""
        check_app_id(app_id)
        self._call("PUT", f"/apps/{quote(app_id)}/state", {"state": "KILLED"})

    def nodes(self) -> List[Dict[str, Any]]:
        """The NodeManagers: ``nodeHostName``, ``nodeHTTPAddress``, ``rack``, ``state``, ..."""
        r = self._call("GET", "/nodes")
        return one_or_many((r.get("nodes") or {}).get("node"))

    def node_web_urls(self) -> Dict[str, str]:
        """NodeManager host name -> its web services' base URL (``http://host:8042``)."""
        https = any(u.startswith("https://") for u in self.urls)
        out = {}
        for n in self.nodes():
            addr = n.get("nodeHTTPAddress")
            host = n.get("nodeHostName") or (addr or "").split(":")[0]
            if addr:
                out[host] = f"{'https' if https else 'http'}://{addr}"
        return out
