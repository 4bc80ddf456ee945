"""A small builder for the embedded driver's job file (``conf/examples/README.md``): the same
JSON ``yarn-am submit --job FILE`` reads. Fields left unset are left out of the file, so the
AM's defaults apply. :meth:`Job.validate` checks what the AM would refuse, naming the field.

>>> job = Job("wordcount", cores=2, memory_mb=512, max_executors=6)
>>> job.task("t0", "echo hello", hosts=["nm1"])
Task(id='t0', command='echo hello', hosts=['nm1'], racks=[], cpus=1, timeout_ms=None)
>>> job.write("job.json")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Union

from .errors import InvalidArgument

WEEK_MS = 604_800_000
I32_MAX = 2_147_483_647


@dataclass
class Executors:
    """The executors a job asks for (``executor`` in the file)."""

    cores: int
    memory_mb: int
    min_executors: Optional[int] = None
    max_executors: Optional[int] = None
    initial_executors: Optional[int] = None
    idle_timeout_ms: Optional[int] = None
    #: countable resources each executor asks for besides memory and cores (``{"yarn.io/gpu": 1}``)
    resources: Optional[Dict[str, int]] = None
    #: the node-label partition the executors are asked in
    node_label: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"cores": self.cores, "memory_mb": self.memory_mb}
        for k in ("min_executors", "max_executors", "initial_executors", "idle_timeout_ms", "node_label"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        if self.resources:
            d["resources"] = dict(self.resources)
        return d

    @classmethod
    def from_dict(cls, e: Dict[str, Any]) -> "Executors":
        return cls(
            e["cores"],
            e["memory_mb"],
            e.get("min_executors"),
            e.get("max_executors"),
            e.get("initial_executors"),
            e.get("idle_timeout_ms"),
            e.get("resources"),
            e.get("node_label"),
        )


@dataclass
class Task:
    """One shell task. ``hosts``/``racks`` are its preferred hosts and racks."""

    id: str
    command: str
    hosts: List[str] = field(default_factory=list)
    racks: List[str] = field(default_factory=list)
    cpus: int = 1
    timeout_ms: Optional[int] = None
    #: the executor kind it runs on (a name from :meth:`Job.kind`); ``None``: the job's executors
    kind: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {
            "id": self.id,
            "command": self.command,
            "preferred_hosts": list(self.hosts),
            "preferred_racks": list(self.racks),
            "cpus": self.cpus,
        }
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        if self.kind is not None:
            d["kind"] = self.kind
        return d


@dataclass
class Inputs:
    """HDFS inputs: one task per split (``submit`` lists them through WebHDFS)."""

    paths: List[str]
    command: str
    #: ``block``, ``file`` or ``size``
    split: Optional[str] = None
    split_size_bytes: Optional[int] = None
    #: ``text`` or ``bytes``
    format: Optional[str] = None
    cpus: Optional[int] = None
    id_prefix: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"paths": list(self.paths), "command": self.command}
        for k in ("split", "split_size_bytes", "format", "cpus", "id_prefix"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        return d


class Job:
    """A job for the embedded driver: tasks and/or HDFS inputs, run on elastic executors of
    ``cores`` cpus and ``memory_mb`` each."""

    def __init__(
        self,
        name: str,
        *,
        cores: int = 1,
        memory_mb: int = 256,
        min_executors: Optional[int] = None,
        max_executors: Optional[int] = None,
        initial_executors: Optional[int] = None,
        idle_timeout_ms: Optional[int] = None,
        task_retries: Optional[int] = None,
        timeout_ms: Optional[int] = None,
        locality_wait_ms: Optional[Union[int, Dict[str, int]]] = None,
        allocation: Optional[Dict[str, Any]] = None,
        resources: Optional[Dict[str, int]] = None,
        node_label: Optional[str] = None,
    ):
        self.name = name
        self.executor = Executors(
            cores, memory_mb, min_executors, max_executors, initial_executors, idle_timeout_ms,
            resources, node_label,
        )
        #: further executor kinds by name (:meth:`kind`)
        self.kinds: Dict[str, Executors] = {}
        self.task_retries = task_retries
        self.timeout_ms = timeout_ms
        if isinstance(locality_wait_ms, int):
            locality_wait_ms = {"node": locality_wait_ms, "rack": locality_wait_ms}
        self.locality_wait_ms = locality_wait_ms
        self.allocation = allocation
        self.tasks: List[Task] = []
        self.inputs: Optional[Inputs] = None

    def __repr__(self) -> str:
        return f"Job({self.name!r}, {len(self.tasks)} tasks{', inputs' if self.inputs else ''})"

    def task(
        self,
        id: str,
        command: str,
        *,
        hosts: Sequence[str] = (),
        racks: Sequence[str] = (),
        cpus: int = 1,
        timeout_ms: Optional[int] = None,
        kind: Optional[str] = None,
    ) -> Task:
        """Adds a task and returns it. Earlier tasks run first among equally good ones.
        ``kind`` runs it on executors of that kind (see :meth:`kind`)."""
        t = Task(id, command, list(hosts), list(racks), cpus, timeout_ms, kind)
        self.tasks.append(t)
        return t

    def kind(self, name: str, *, cores: int = 1, memory_mb: int = 256, **options: Any) -> Executors:
        """Adds a further kind of executor with its own size and the options of
        :class:`Executors` (``min_executors``, ``max_executors``, ``initial_executors``,
        ``idle_timeout_ms``, ``resources``, ``node_label``); tasks naming it
        (``task(..., kind=name)``) run only there. Returns it."""
        try:
            k = Executors(cores, memory_mb, **options)
        except TypeError as e:
            raise InvalidArgument(f"kind {name}: {e}") from None
        self.kinds[name] = k
        return k

    def add_inputs(
        self,
        paths: Sequence[str],
        command: str,
        *,
        split: Optional[str] = None,
        split_size_bytes: Optional[int] = None,
        format: Optional[str] = None,
        cpus: Optional[int] = None,
        id_prefix: Optional[str] = None,
    ) -> Inputs:
        """Sets the job's HDFS inputs (``command`` may use ``{split.cat}``, ``{split.url}``,
        ``{split.path}``, ...; submit with ``webhdfs=``)."""
        self.inputs = Inputs(list(paths), command, split, split_size_bytes, format, cpus, id_prefix)
        return self.inputs

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"name": self.name, "executor": self.executor.to_dict()}
        if self.task_retries is not None:
            d["task_retries"] = self.task_retries
        if self.locality_wait_ms is not None:
            d["locality_wait_ms"] = dict(self.locality_wait_ms)
        if self.allocation is not None:
            d["allocation"] = dict(self.allocation)
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        d["tasks"] = [t.to_dict() for t in self.tasks]
        if self.inputs is not None:
            d["inputs"] = self.inputs.to_dict()
        if self.kinds:
            d["kinds"] = {n: k.to_dict() for n, k in self.kinds.items()}
        return d

    def to_json(self, indent: Optional[int] = 2) -> str:
        self.validate()
        return json.dumps(self.to_dict(), indent=indent)

    def write(self, path: Union[str, "os.PathLike[str]"]) -> str:
        """Validates and writes the job file; returns its path."""
        p = os.fspath(path)
        with open(p, "w", encoding="utf-8") as f:
            f.write(self.to_json())
            f.write("\n")
        return p

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Job":
        """A builder holding a parsed job file (unknown fields are refused, as the AM does)."""
        known = {"name", "executor", "task_retries", "locality_wait_ms", "allocation", "timeout_ms", "tasks", "inputs",
                 "kinds"}
        extra = set(d) - known
        if extra:
            raise InvalidArgument(f"unknown job field(s): {', '.join(sorted(extra))}")
        e = d.get("executor") or {}
        try:
            job = cls(
                d.get("name", ""),
                cores=e["cores"],
                memory_mb=e["memory_mb"],
                min_executors=e.get("min_executors"),
                max_executors=e.get("max_executors"),
                initial_executors=e.get("initial_executors"),
                idle_timeout_ms=e.get("idle_timeout_ms"),
                task_retries=d.get("task_retries"),
                timeout_ms=d.get("timeout_ms"),
                locality_wait_ms=d.get("locality_wait_ms"),
                allocation=d.get("allocation"),
                resources=e.get("resources"),
                node_label=e.get("node_label"),
            )
            for n, k in (d.get("kinds") or {}).items():
                job.kinds[n] = Executors.from_dict(k)
            for t in d.get("tasks") or []:
                job.task(
                    t["id"],
                    t["command"],
                    hosts=t.get("preferred_hosts", []),
                    racks=t.get("preferred_racks", []),
                    cpus=t.get("cpus", 1),
                    timeout_ms=t.get("timeout_ms"),
                    kind=t.get("kind"),
                )
            if d.get("inputs") is not None:
                i = d["inputs"]
                job.add_inputs(
                    i["paths"],
                    i["command"],
                    split=i.get("split"),
                    split_size_bytes=i.get("split_size_bytes"),
                    format=i.get("format"),
                    cpus=i.get("cpus"),
                    id_prefix=i.get("id_prefix"),
                )
        except KeyError as k:
            raise InvalidArgument(f"job file: missing field {k}") from None
        return job

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "Job":
        with open(os.fspath(path), encoding="utf-8") as f:
            return cls.from_dict(json.load(f))

    def validate(self) -> None:
        """Raises :class:`InvalidArgument` naming the first field the AM would refuse."""

        def bad(where: str, why: str) -> None:
            raise InvalidArgument(f"{where}: {why}")

        def whole(where: str, v: Any, lo: int, hi: int) -> None:
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                bad(where, f"must be an integer from {lo} to {hi}, not {v!r}")

        if not isinstance(self.name, str) or not self.name.strip():
            bad("name", "must not be empty")
        ex = self.executor
        whole("executor.cores", ex.cores, 1, I32_MAX)
        whole("executor.memory_mb", ex.memory_mb, 1, 2**32 - 1)
        lo = ex.min_executors or 0
        for k in ("min_executors", "initial_executors"):
            v = getattr(ex, k)
            if v is not None:
                whole(f"executor.{k}", v, 0, 2**32 - 1)
        if ex.max_executors is not None:
            whole("executor.max_executors", ex.max_executors, 1, 2**32 - 1)
            if ex.max_executors < lo:
                bad("executor.max_executors", "must be >= min_executors")
        if ex.initial_executors is not None:
            hi = ex.max_executors if ex.max_executors is not None else I32_MAX
            if not lo <= ex.initial_executors <= hi:
                bad("executor.initial_executors", "must be within [min_executors, max_executors]")
        if ex.idle_timeout_ms is not None:
            whole("executor.idle_timeout_ms", ex.idle_timeout_ms, 0, WEEK_MS)
        if self.task_retries is not None:
            whole("task_retries", self.task_retries, 1, 2**32 - 1)
        if self.timeout_ms is not None:
            whole("timeout_ms", self.timeout_ms, 1, WEEK_MS)
        if self.locality_wait_ms is not None:
            for k, v in self.locality_wait_ms.items():
                if k not in ("node", "rack"):
                    bad(f"locality_wait_ms.{k}", "unknown field (node, rack)")
                whole(f"locality_wait_ms.{k}", v, 0, WEEK_MS)
        if self.allocation is not None:
            for k in self.allocation:
                if k not in ("backlog_timeout_ms", "sustained_backlog_timeout_ms", "executor_allocation_ratio"):
                    bad(f"allocation.{k}", "unknown field")
            ratio = self.allocation.get("executor_allocation_ratio")
            if ratio is not None and not (isinstance(ratio, (int, float)) and 0 < ratio <= 1):
                bad("allocation.executor_allocation_ratio", "must be in (0, 1]")
        for n, k in self.kinds.items():
            if not isinstance(n, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", n) or n == "default":
                bad(f"kinds.{n}", "a kind name is 1-32 letters, digits, '-' or '_', not 'default'")
            whole(f"kinds.{n}.cores", k.cores, 1, I32_MAX)
            whole(f"kinds.{n}.memory_mb", k.memory_mb, 1, 2**32 - 1)
            if k.max_executors is not None:
                whole(f"kinds.{n}.max_executors", k.max_executors, 1, 2**32 - 1)
            for r, c in (k.resources or {}).items():
                whole(f"kinds.{n}.resources.{r}", c, 1, 2**63 - 1)
        if not self.tasks and self.inputs is None:
            bad("tasks", "a job needs at least one task, or inputs")
        seen = set()
        for i, t in enumerate(self.tasks):
            w = f"tasks[{i}]"
            if not isinstance(t.id, str) or not t.id:
                bad(f"{w}.id", "must not be empty")
            if len(t.id.encode()) > 200 or "/" in t.id or any(ord(c) < 32 or ord(c) == 127 for c in t.id):
                bad(f"{w}.id", f"{t.id!r}: at most 200 bytes, no '/' or control characters")
            if t.id in seen:
                bad(f"{w}.id", f"duplicate task id {t.id!r}")
            seen.add(t.id)
            if not isinstance(t.command, str) or not t.command.strip():
                bad(f"{w}.command", "must not be blank")
            runs_on = ex
            if t.kind is not None:
                if t.kind not in self.kinds:
                    bad(f"{w}.kind", f"{t.kind!r} is not one of the job's kinds")
                runs_on = self.kinds[t.kind]
            whole(f"{w}.cpus", t.cpus, 1, runs_on.cores if isinstance(runs_on.cores, int) else 1)
            if t.timeout_ms is not None:
                whole(f"{w}.timeout_ms", t.timeout_ms, 1, WEEK_MS)
            for h in t.hosts:
                if not isinstance(h, str) or not h.strip():
                    bad(f"{w}.preferred_hosts", "host names must not be empty")
        if self.inputs is not None:
            inp = self.inputs
            if not inp.paths or len(inp.paths) > 1000:
                bad("inputs.paths", "1 to 1000 absolute HDFS paths")
            for p in inp.paths:
                if not isinstance(p, str) or not p.startswith("/"):
                    bad("inputs.paths", f"{p!r} is not an absolute path")
            if not inp.command.strip():
                bad("inputs.command", "must not be blank")
            if inp.split not in (None, "block", "file", "size"):
                bad("inputs.split", "block, file or size")
            if (inp.split == "size") != (inp.split_size_bytes is not None):
                bad("inputs.split_size_bytes", 'given exactly when "split" is "size"')
            if inp.format not in (None, "text", "bytes"):
                bad("inputs.format", "text or bytes")
            if inp.cpus is not None:
                whole("inputs.cpus", inp.cpus, 1, ex.cores if isinstance(ex.cores, int) else 1)
