"""An application whose AM is yarn-am: its driver API, its status at the RM, its logs."""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from .driver import DriverClient
from .errors import (
    ApplicationNotRunning,
    ConfigError,
    InvalidArgument,
    RmError,
    UnreachableError,
    WaitTimeout,
    YarnAmError,
)
from .kv import KeyValueStore
from .logs import LogReader
from .models import Executor, KillOutcome, State
from .rm import AppStatus, ResourceManager, check_app_id
from .secret import DriverSecret, secret_path
from .sse import EventStream

PathLike = Union[str, "os.PathLike[str]"]


class Application:
    """A running (or ended) yarn-am application.

    Get one from :func:`yarn_am.submit` or :meth:`Application.connect`. The driver API's
    address comes from the RM (the AM registers it as its RPC address, ``amRPCAddress``), the
    secret and the certificate pin from ``~/.yarn-am/<app>.secret``. Driver-API calls raise
    :class:`ApplicationNotRunning` when the app has no AM to talk to (not started yet, or
    ended)."""

    def __init__(
        self,
        app_id: str,
        *,
        rm: Optional[ResourceManager] = None,
        secret_file: Optional[PathLike] = None,
        secret_dir: Optional[PathLike] = None,
        timeout: float = 15.0,
    ):
        self.app_id = check_app_id(app_id)
        self.rm = rm or ResourceManager()
        self.secret_file = os.fspath(secret_file) if secret_file else str(secret_path(app_id, secret_dir))
        self.timeout = timeout
        self._secret: Optional[DriverSecret] = None
        self._driver: Optional[DriverClient] = None

    def __repr__(self) -> str:
        return f"Application({self.app_id!r})"

    @classmethod
    def connect(
        cls,
        app_id: str,
        *,
        rm: Optional[ResourceManager] = None,
        secret_file: Optional[PathLike] = None,
        secret_dir: Optional[PathLike] = None,
        timeout: float = 15.0,
        wait: float = 120.0,
    ) -> "Application":
        """Connects to ``app_id``'s driver API: reads its secret file, then waits (at most
        ``wait`` seconds) until the AM has registered its address with the RM, and checks that
        the AM answers with the pinned certificate and takes the secret."""
        app = cls(app_id, rm=rm, secret_file=secret_file, secret_dir=secret_dir, timeout=timeout)
        app.secret()  # a missing or malformed file fails here, before any waiting
        app.wait_for_driver(wait)
        return app

    # -- the secret and the driver API's address ---------------------------------------------

    def secret(self) -> DriverSecret:
        if self._secret is None:
            self._secret = DriverSecret.read(self.secret_file)
        return self._secret

    def driver_url(self, status: Optional[AppStatus] = None) -> str:
        """``https://host:port`` of the driver API, from the RM's report."""
        st = status or self.status()
        if st.done:
            raise ApplicationNotRunning(self.app_id, st, f"the application has ended ({st.state}/{st.final_status})")
        if st.state != "RUNNING" or not st.am_rpc_address:
            raise ApplicationNotRunning(self.app_id, st, f"the AM has not registered yet (state {st.state})")
        scheme = "https" if self.secret().tls_pin else "http"
        return f"{scheme}://{st.am_rpc_address}"

    def driver(self) -> DriverClient:
        if self._driver is None:
            self._driver = DriverClient(self.driver_url(), self.secret(), self.timeout)
        return self._driver

    def wait_for_driver(self, timeout: float = 120.0) -> None:
        """Waits until the driver API answers ``/v1/state`` (the pin and the secret checked)."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while True:
            try:
                self.state()
                return
            except ApplicationNotRunning as e:
                st = e.status
                if isinstance(st, AppStatus) and st.done:
                    raise
                last = e
            except UnreachableError as e:
                last = e
            if time.monotonic() >= deadline:
                raise WaitTimeout(f"the driver API of {self.app_id}", timeout, last)
            time.sleep(0.5)

    def _call(self, method: str, path: str, body: Optional[Any] = None, **kw: Any) -> Any:
        """A driver-API call; when the AM cannot be reached, the address is read again from
        the RM once (a next AM attempt registers another one)."""
        try:
            return self.driver().call(method, path, body, **kw)
        except UnreachableError:
            self._driver = None
            driver = self.driver()  # ApplicationNotRunning if the app has ended
            return driver.call(method, path, body, **kw)

    @property
    def kv(self) -> KeyValueStore:
        """The application's key-value store (get, put, delete, list, wait)."""
        return KeyValueStore(lambda method, path, **kw: self._call(method, path, **kw))

    # -- the driver API ----------------------------------------------------------------------

    def demand(
        self,
        target_executors: int,
        *,
        locality_aware_tasks: int = 0,
        host_to_local_task_count: Optional[Mapping[str, int]] = None,
        excluded_hosts: Sequence[str] = (),
    ) -> Dict[str, Any]:
        """States the whole demand (Spark's RequestExecutors): executors wanted in total, and
        the pending tasks' preferred hosts. Returns the demand as the AM took it."""
        for name, v in [("target_executors", target_executors), ("locality_aware_tasks", locality_aware_tasks)]:
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise InvalidArgument(f"{name} must be a non-negative integer, not {v!r}")
        body = {
            "target_executors": target_executors,
            "locality_aware_tasks": locality_aware_tasks,
            "host_to_local_task_count": dict(host_to_local_task_count or {}),
            "excluded_hosts": list(excluded_hosts),
        }
        took: Dict[str, Any] = self._call("POST", "/v1/demand", body)
        return took

    def executors(self) -> List[Executor]:
        """Every live executor and the last finished ones."""
        return [Executor.from_json(e) for e in self._call("GET", "/v1/executors") or []]

    def kill(self, executor_ids: Union[str, int, Iterable[Union[str, int]]]) -> KillOutcome:
        """Releases those executors' containers (not counted as failures)."""
        if isinstance(executor_ids, (str, int)):
            executor_ids = [executor_ids]
        ids = [str(i) for i in executor_ids]
        r = self._call("POST", "/v1/executors/kill", {"executor_ids": ids}) or {}
        return KillOutcome([str(i) for i in r.get("killed", [])], [str(i) for i in r.get("unknown", [])])

    def loss_reason(self, executor_id: Union[str, int]) -> Dict[str, Any]:
        """Why an executor ended, and whether it counts against the app."""
        from urllib.parse import quote

        reason: Dict[str, Any] = self._call("GET", f"/v1/executors/{quote(str(executor_id), safe='')}/loss-reason")
        return reason

    def state(self) -> State:
        return State.from_json(self._call("GET", "/v1/state") or {})

    def job(self) -> Dict[str, Any]:
        """The embedded job's live report (:class:`NotFoundError` for an app without a job)."""
        report: Dict[str, Any] = self._call("GET", "/v1/job")
        return report

    def metrics(self) -> str:
        """The Prometheus text of ``/metrics``."""
        return str(self._call("GET", "/metrics"))

    def finish(self, status: str = "succeeded", diagnostics: str = "") -> None:
        """Ends the application: the AM unregisters with ``status`` (``succeeded``, ``failed``
        or ``killed``) and ``diagnostics``, and stops."""
        s = str(status).lower()
        if s not in ("succeeded", "failed", "killed"):
            raise InvalidArgument(f"status must be succeeded, failed or killed, not {status!r}")
        self._call("POST", "/v1/finish", {"status": s, "diagnostics": diagnostics})

    def report_progress(self, progress: float) -> None:
        """Tells the AM how far the application has come, from 0 to 1: the RM's UI and REST
        show it (an app without an embedded job has no measure of its own)."""
        p = float(progress)
        if not 0.0 <= p <= 1.0:
            raise InvalidArgument(f"progress must be from 0 to 1, not {progress!r}")
        self._call("POST", "/v1/progress", {"progress": p})

    def events(
        self, *, resync: bool = True, read_timeout: float = 45.0, reconnect_timeout: float = 120.0
    ) -> EventStream:
        """The executor events as they happen (see :class:`yarn_am.sse.EventStream`): an
        iterator of :class:`ExecutorEvent` and :class:`Resync`, which reconnects when the
        stream breaks and ends when the application does. Use it in a ``with`` block or
        ``close()`` it."""

        def connect() -> Any:
            try:
                driver = self.driver()
            except ApplicationNotRunning as e:
                self._driver = None
                raise UnreachableError("the driver API", self.app_id, e) from None
            try:
                conn, resp = driver.open("GET", "/v1/events", timeout=read_timeout, accept="text/event-stream")
            except UnreachableError:
                self._driver = None  # read the address again next time
                raise
            return _Stream(conn, resp)

        def is_over() -> bool:
            try:
                return self.status().done
            except (RmError, UnreachableError):
                return False

        return EventStream(connect, self.state, is_over, resync=resync, reconnect_timeout=reconnect_timeout)

    # -- the RM ---------------------------------------------------------------------------------

    def status(self) -> AppStatus:
        return self.rm.app(self.app_id)

    def wait(self, timeout: Optional[float] = None, *, poll: float = 1.0) -> AppStatus:
        """Waits until the application ends and returns its final status (see
        ``AppStatus.outcome``). RM errors are ridden out for 120 s, as ``submit --wait``
        does. Raises :class:`WaitTimeout` after ``timeout`` seconds."""
        start = time.monotonic()
        last_ok = start
        last: Any = None
        while True:
            try:
                st = self.status()
                last, last_ok = st, time.monotonic()
                if st.done:
                    return st
            except (UnreachableError, RmError) as e:
                if isinstance(e, RmError) and e.status in (400, 401, 403, 404):
                    raise
                last = e
                if time.monotonic() - last_ok > 120:
                    raise
            if timeout is not None and time.monotonic() - start >= timeout:
                raise WaitTimeout(f"{self.app_id} to end", timeout, last)
            time.sleep(poll)

    def kill_application(self, *, wait: float = 60.0) -> AppStatus:
        """Kills the whole application through the RM (``yarn-am kill``), waiting at most
        ``wait`` seconds until the RM says it ended."""
        self.rm.kill(self.app_id)
        return self.wait(wait, poll=0.5)

    # -- logs -------------------------------------------------------------------------------------

    def logs(
        self,
        containers: Optional[Iterable[str]] = None,
        files: Optional[Iterable[str]] = None,
        *,
        timeout: float = 10.0,
    ) -> Dict[str, Dict[str, str]]:
        """Container id -> file name -> text, read through the NodeManagers' web services,
        for every container of the app whose NodeManager still has its logs (or those named),
        every file (or those named: ``stderr``, ``task-<id>.<attempt>.stdout``, ...). The AM
        container is the one ending ``_000001``. Without log aggregation, logs stay on the
        nodes for ``yarn.nodemanager.log.retain-seconds``; with it, they move to HDFS when the
        app ends and this finds none there: :meth:`task_output` and ``yarn-am logs`` read them."""
        known: List[str] = []
        try:
            if self._driver is not None or self.status().state == "RUNNING":
                known = [e.container_id for e in self.executors()]
        except Exception:  # noqa: BLE001 - the RM's and NMs' lists are enough
            known = []
        return LogReader(self.rm, timeout).logs(self.app_id, containers=containers, files=files, known=known)

    def task_output(
        self,
        task_id: str,
        attempt: int = 0,
        stream: str = "stdout",
        *,
        binary: Optional[PathLike] = None,
        aggregation_wait: float = 60.0,
    ) -> Optional[str]:
        """What a job's task attempt wrote (``task-<id>.<attempt>.stdout`` or ``.stderr``), from
        whichever executor ran it; ``None`` when nothing has it. While the app runs, and after
        it ends for as long as the NodeManagers keep the containers, from their web services;
        after the end with log aggregation on, from the aggregated files on HDFS, which the
        ``yarn-am`` binary reads (``binary``, else ``$YARN_AM_BIN`` or ``PATH``; it waits up to
        ``aggregation_wait`` seconds for the NodeManagers to finish writing them)."""
        name = f"task-{task_id}.{attempt}.{stream}"
        for files in self.logs(files=[name]).values():
            if name in files:
                return files[name]
        if self.status().state not in ("FINISHED", "FAILED", "KILLED"):
            return None
        return self._aggregated_file(name, binary, aggregation_wait)

    def _aggregated_file(self, name: str, binary: Optional[PathLike], wait: float) -> Optional[str]:
        """The file ``name`` of an ended app through ``yarn-am logs --file`` (which reads the
        aggregated logs when aggregation is on); ``None`` when it has none (exit 1) or there
        is no binary to ask."""
        from .submit import find_binary  # submit imports this module

        try:
            exe = find_binary(binary)
        except ConfigError:
            return None
        args = [exe, "logs", self.app_id, "--file", name, "--rm-web", self.rm.urls[0]]
        args += ["--user", self.rm.user, "--aggregation-wait", str(max(0, int(wait)))]
        try:
            proc = subprocess.run(
                args, capture_output=True, text=True, timeout=wait + 60, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired:
            raise YarnAmError(f"yarn-am logs {self.app_id} did not finish within {wait + 60:g} s") from None
        if proc.returncode == 1:
            return None
        if proc.returncode != 0:
            said = proc.stderr.strip() or "(no output)"
            raise YarnAmError(f"yarn-am logs {self.app_id} failed (exit {proc.returncode}): {said}")
        return proc.stdout


class _Stream:
    """An open ``/v1/events`` response that closes its connection with it."""

    def __init__(self, conn: Any, resp: Any):
        self._conn = conn
        self._resp = resp

    def read1(self, n: int) -> bytes:
        return bytes(self._resp.read1(n))

    def close(self) -> None:
        try:
            self._resp.close()
        finally:
            self._conn.close()
