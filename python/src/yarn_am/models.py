"""Typed views of the driver API's JSON (``crates/wire/src/driver_api.rs``). Each keeps the
answer it came from in ``raw`` for fields added later."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass(frozen=True)
class Executor:
    """One executor (``GET /v1/executors``, and in every event)."""

    id: str
    container_id: str
    host: str
    rack: str
    #: where the container matched its request: ``node``, ``rack`` or ``any``
    locality: str
    #: ``starting``, ``running`` or ``exited``
    state: str
    exit_status: Optional[int] = None
    reason: Optional[str] = None
    #: whether the exit counts as an application failure
    counts_against_app: Optional[bool] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, v: Dict[str, Any]) -> "Executor":
        return cls(
            id=str(v.get("id")),
            container_id=v.get("container_id", ""),
            host=v.get("host", ""),
            rack=v.get("rack", ""),
            locality=v.get("locality", ""),
            state=v.get("state", ""),
            exit_status=v.get("exit_status"),
            reason=v.get("reason"),
            counts_against_app=v.get("counts_against_app"),
            raw=v,
        )

    @property
    def live(self) -> bool:
        return self.state != "exited"


@dataclass(frozen=True)
class KillOutcome:
    """Which executors a kill request reached (ids the AM does not know are ``unknown``)."""

    killed: List[str]
    unknown: List[str]


@dataclass(frozen=True)
class State:
    """``GET /v1/state``: the demand, pending requests, counts and executors."""

    app_id: str
    demand: Dict[str, Any]
    #: outstanding container requests: ``{"locality": n, "any_host": n}``
    pending: Dict[str, int]
    starting: int
    running: int
    executor_failures: int
    executors: List[Executor]
    #: what the AM no longer keeps: ``finished_kept``, ``forgotten``, ``last_id``
    retention: Dict[str, Any]
    recent_events: List["ExecutorEvent"]
    #: the embedded job's live report, when the AM runs a job
    job: Optional[Dict[str, Any]] = None
    #: how far the app has come, 0 to 1, as the AM reports it to the RM
    progress: float = 0.0
    #: executors asked for and not granted: ``executors``, ``waited_ms`` and the likely
    #: ``reason`` (a full cluster or queue, no node large enough, locality); ``None`` when
    #: nothing waits
    waiting: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, v: Dict[str, Any]) -> "State":
        return cls(
            app_id=v.get("app_id", ""),
            demand=v.get("demand") or {},
            pending=v.get("pending") or {},
            starting=int(v.get("starting") or 0),
            running=int(v.get("running") or 0),
            executor_failures=int(v.get("executor_failures") or 0),
            executors=[Executor.from_json(e) for e in v.get("executors") or []],
            retention=v.get("retention") or {},
            recent_events=[ExecutorEvent.from_json(e) for e in v.get("recent_events") or []],
            job=v.get("job"),
            progress=float(v.get("progress") or 0.0),
            waiting=v.get("waiting"),
            raw=v,
        )

    @property
    def live_executors(self) -> List[Executor]:
        return [e for e in self.executors if e.live]


@dataclass(frozen=True)
class ExecutorEvent:
    """An executor was added, updated or removed (``/v1/events``)."""

    #: ``executor_added``, ``executor_updated`` or ``executor_removed``
    type: str
    executor: Executor

    @classmethod
    def from_json(cls, v: Dict[str, Any]) -> "ExecutorEvent":
        # The data's own `type` is `added` / `updated` / `removed`; the SSE name is
        # `executor_<that>`: both spellings end up as the latter.
        t = str(v.get("type", ""))
        return cls(
            type=t if t.startswith("executor_") else f"executor_{t}",
            executor=Executor.from_json(v.get("executor") or {}),
        )


@dataclass(frozen=True)
class Resync:
    """The stream may have missed events: the AM said ``lagged`` (the client fell more than
    the AM's buffer behind; ``missed`` counts them), or the connection broke and was opened
    again (``missed`` is ``None``). ``state`` is a fresh ``/v1/state`` read after the stream
    resumed, so a consumer rebuilds its picture from it; the events that follow come after
    that read (a few may repeat what ``state`` already shows)."""

    #: ``lagged`` or ``reconnected``
    reason: str
    missed: Optional[int]
    state: Optional[State]
