"""Submitting runs the ``yarn-am`` binary (``$YARN_AM_BIN``, else ``yarn-am`` on ``PATH``):
it stages the files, makes the secret and the certificate, and asks the RM. Its
``submitted <app>`` and ``driver API secret: <path>`` lines are read back."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from .app import Application
from .errors import ConfigError, InvalidArgument, SubmitError
from .job import Job
from .rm import ResourceManager

PathLike = Union[str, "os.PathLike[str]"]


def find_binary(binary: Optional[PathLike] = None) -> str:
    """The ``yarn-am`` binary: ``binary``, else ``$YARN_AM_BIN``, else ``yarn-am`` on PATH."""
    cand = os.fspath(binary) if binary else os.environ.get("YARN_AM_BIN")
    if cand:
        if not (os.path.isfile(cand) and os.access(cand, os.X_OK)):
            raise ConfigError(f"the yarn-am binary {cand} does not exist or is not executable")
        return cand
    found = shutil.which("yarn-am")
    if not found:
        raise ConfigError("no yarn-am binary: set YARN_AM_BIN or put yarn-am on PATH")
    return found


def _env_args(flag: str, env: Optional[Mapping[str, str]]) -> List[str]:
    out: List[str] = []
    for k, v in (env or {}).items():
        if not k or "=" in k:
            raise InvalidArgument(f"{flag}: {k!r} is not a variable name")
        out += [flag, f"{k}={v}"]
    return out


_KIND_KEYS = ("memory", "vcores", "executors", "min", "max", "label")


def _kind_arg(name: str, k: Mapping[str, Any]) -> str:
    """One ``--executor-kind`` value: ``NAME:memory=..,vcores=..,...[,command=...]``."""
    unknown = set(k) - set(_KIND_KEYS) - {"resources", "command"}
    if unknown:
        raise InvalidArgument(
            f"executor kind {name}: unknown key(s) {', '.join(sorted(unknown))} "
            f"({', '.join(_KIND_KEYS)}, resources, command)"
        )
    parts = [f"{key}={k[key]}" for key in _KIND_KEYS if k.get(key) is not None]
    parts += [f"resource.{r}={c}" for r, c in (k.get("resources") or {}).items()]
    if k.get("command") is not None:
        # Last: the command takes the rest of the value, commas included.
        parts.append(f"command={k['command']}")
    return f"{name}:{','.join(parts)}"


def submit_args(
    job: Optional[Union[Job, Dict[str, Any], PathLike]] = None,
    *,
    job_file: Optional[str] = None,
    executors: Optional[int] = None,
    command: Optional[str] = None,
    executor_memory: Optional[int] = None,
    executor_vcores: Optional[int] = None,
    min_executors: Optional[int] = None,
    max_executors: Optional[int] = None,
    executor_env: Optional[Mapping[str, str]] = None,
    files: Sequence[PathLike] = (),
    archives: Sequence[PathLike] = (),
    keep_running: bool = False,
    max_executor_failures: Optional[int] = None,
    executor_failures_validity_interval: Optional[int] = None,
    executor_kinds: Optional[Mapping[str, Mapping[str, Any]]] = None,
    host_exclusion_failures: Optional[int] = None,
    host_exclusion_window: Optional[int] = None,
    host_exclusion_timeout: Optional[int] = None,
    name: Optional[str] = None,
    queue: Optional[str] = None,
    tags: Sequence[str] = (),
    max_attempts: Optional[int] = None,
    priority: Optional[int] = None,
    lifetime: Optional[int] = None,
    application_type: Optional[str] = None,
    attempt_failures_validity_interval: Optional[int] = None,
    executor_resources: Optional[Mapping[str, int]] = None,
    node_label: Optional[str] = None,
    am_node_label: Optional[str] = None,
    view_acl: Optional[str] = None,
    modify_acl: Optional[str] = None,
    log_include_pattern: Optional[str] = None,
    log_exclude_pattern: Optional[str] = None,
    rolled_log_include_pattern: Optional[str] = None,
    rolled_log_exclude_pattern: Optional[str] = None,
    am_memory: Optional[int] = None,
    am_vcores: Optional[int] = None,
    am_resources: Optional[Mapping[str, int]] = None,
    env: Optional[Mapping[str, str]] = None,
    webhdfs: Optional[str] = None,
    staging_dir: Optional[str] = None,
    hdfs_uri: Optional[str] = None,
    secret_dir: Optional[PathLike] = None,
    strategy: Optional[str] = None,
    executor_silence_timeout: Optional[int] = None,
    rm_web: Optional[str] = None,
    user: Optional[str] = None,
    extra_args: Sequence[str] = (),
) -> List[str]:
    """The ``yarn-am submit`` arguments for these options (``job_file``: where the job went)."""
    executor_opts = {
        "executors": executors,
        "command": command,
        "executor_memory": executor_memory,
        "executor_vcores": executor_vcores,
        "min_executors": min_executors,
        "max_executors": max_executors,
        "executor_env": executor_env,
        "keep_running": keep_running or None,
        "max_executor_failures": max_executor_failures,
        "executor_kinds": executor_kinds or None,
    }
    if job is not None:
        clash = [k for k, v in executor_opts.items() if v is not None]
        if clash:
            raise InvalidArgument(
                f"a job sets its own executors: {', '.join(clash)} cannot be given with a job"
            )
    args: List[str] = ["submit"]

    def opt(flag: str, v: Any) -> None:
        if v is not None:
            args.extend([flag, str(v)])

    opt("--name", name)
    opt("--queue", queue)
    for t in tags:
        opt("--tag", t)
    opt("--max-attempts", max_attempts)
    opt("--priority", priority)
    opt("--lifetime", lifetime)
    opt("--application-type", application_type)
    opt("--attempt-failures-validity-interval", attempt_failures_validity_interval)
    for rname, count in (executor_resources or {}).items():
        opt("--executor-resource", f"{rname}={count}")
    opt("--node-label", node_label)
    opt("--am-node-label", am_node_label)
    opt("--view-acl", view_acl)
    opt("--modify-acl", modify_acl)
    opt("--log-include-pattern", log_include_pattern)
    opt("--log-exclude-pattern", log_exclude_pattern)
    opt("--rolled-log-include-pattern", rolled_log_include_pattern)
    opt("--rolled-log-exclude-pattern", rolled_log_exclude_pattern)
    opt("--am-memory", am_memory)
    opt("--am-vcores", am_vcores)
    for rname, count in (am_resources or {}).items():
        opt("--am-resource", f"{rname}={count}")
    args += _env_args("--env", env)
    if job is not None:
        args += ["--job", job_file or os.fspath(job)]  # type: ignore[arg-type]
    else:
        opt("--executors", executors)
        opt("--executor-command", command)
        opt("--executor-memory", executor_memory)
        opt("--executor-vcores", executor_vcores)
        opt("--min-executors", min_executors)
        opt("--max-executors", max_executors)
        args += _env_args("--executor-env", executor_env)
        if keep_running:
            args.append("--keep-running")
        opt("--max-executor-failures", max_executor_failures)
    opt("--executor-failures-validity-interval", executor_failures_validity_interval)
    opt("--host-exclusion-failures", host_exclusion_failures)
    opt("--host-exclusion-window", host_exclusion_window)
    opt("--host-exclusion-timeout", host_exclusion_timeout)
    for kname, k in (executor_kinds or {}).items():
        opt("--executor-kind", _kind_arg(kname, k))
    for f in files:
        opt("--file", os.fspath(f))
    for a in archives:
        opt("--archive", os.fspath(a))
    opt("--webhdfs", webhdfs)
    opt("--staging-dir", staging_dir)
    opt("--hdfs-uri", hdfs_uri)
    opt("--secret-dir", os.fspath(secret_dir) if secret_dir else None)
    opt("--strategy", strategy)
    opt("--executor-silence-timeout", executor_silence_timeout)
    opt("--rm-web", rm_web)
    opt("--user", user)
    args += list(extra_args)
    return args


def parse_submit_output(stdout: str) -> Dict[str, str]:
    """``app_id``, and when printed ``secret_file``, ``staging`` and ``tracking_url``, from what
    ``yarn-am submit`` printed."""
    out: Dict[str, str] = {}
    prefixes = {
        "submitted ": "app_id",
        "driver API secret: ": "secret_file",
        "staging folder: ": "staging",
        "tracking URL: ": "tracking_url",
    }
    for line in stdout.splitlines():
        for p, key in prefixes.items():
            if line.startswith(p) and key not in out:
                out[key] = line[len(p):].strip()
    return out


def submit(
    job: Optional[Union[Job, Dict[str, Any], PathLike]] = None,
    *,
    wait: bool = False,
    wait_timeout: Optional[float] = None,
    binary: Optional[PathLike] = None,
    rm: Optional[ResourceManager] = None,
    timeout: float = 300.0,
    **options: Any,
) -> Application:
    """Submits an application whose AM is yarn-am and returns it.

    ``job``: a :class:`Job`, a job dict, or the path of a job file; or no job and the
    executors' options (``executors``, ``command``, ``executor_memory``, ``executor_vcores``,
    ``min_executors``, ``max_executors``, ``executor_env``, ``keep_running``,
    ``max_executor_failures``, ``executor_kinds``: further kinds of executor by name, each
    ``{"memory": MB, "vcores": N, "executors": N, "max": N, "min": N, "label": L,
    "resources": {"yarn.io/gpu": 1}, "command": CMD}``; a job declares its kinds with
    :meth:`Job.kind`). Either way: ``host_exclusion_failures``, ``host_exclusion_window`` and
    ``host_exclusion_timeout`` (seconds: a host where that many executors failed within the
    window gets no new executors for the timeout; 0 failures: never), ``files`` and ``archives`` (``"path#name"``; a
    local path or an ``hdfs://`` URL; archives are unpacked into the folder ``name``),
    ``executor_failures_validity_interval`` (ms; older executor failures stop counting), ``name``, ``queue``, ``tags``, ``max_attempts``,
    ``priority``, ``lifetime`` (seconds; the RM kills the app then), ``application_type``,
    ``attempt_failures_validity_interval`` (ms), ``executor_resources`` (``{"yarn.io/gpu": 1}``:
    countable resources each executor asks for), ``node_label`` and ``am_node_label`` (the
    node-label partition of the executors and of the AM), ``view_acl`` and ``modify_acl`` (YARN's ACL
    syntax: ``"alice,bob ops"``), ``log_include_pattern``, ``log_exclude_pattern``,
    ``rolled_log_include_pattern``, ``rolled_log_exclude_pattern`` (which log files are
    aggregated; Java regular expressions on file names), ``am_memory``, ``am_vcores``,
    ``am_resources`` (``{"yarn.io/gpu": 1}`` for the AM's own container; submitted over the
    RM's client port then, not on a Kerberos cluster), ``env``, ``webhdfs`` (stage on HDFS; default
    ``$YARN_AM_WEBHDFS``), ``staging_dir``, ``hdfs_uri``, ``secret_dir``, ``strategy``,
    ``executor_silence_timeout``, ``rm_web``, ``user``, ``extra_args`` (more CLI flags).

    ``wait=True`` waits until the app ends (at most ``wait_timeout`` seconds); check
    ``app.status().outcome``. ``timeout`` bounds the ``yarn-am submit`` run itself.
    Raises :class:`SubmitError` with the binary's stderr when it fails."""
    exe = find_binary(binary)
    tmpdir: "Optional[tempfile.TemporaryDirectory[str]]" = None
    job_file: Optional[str] = None
    try:
        if isinstance(job, (Job, dict)):
            j = job if isinstance(job, Job) else Job.from_dict(job)
            tmpdir = tempfile.TemporaryDirectory(prefix="yarn-am-job-")
            job_file = j.write(os.path.join(tmpdir.name, "job.json"))
        args = submit_args(job, job_file=job_file, **options)
        env = dict(os.environ)
        if rm is not None and not options.get("rm_web"):
            args += ["--rm-web", rm.urls[0]]
        try:
            proc = subprocess.run(
                [exe, *args], capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired as e:
            raise SubmitError(None, f"yarn-am submit did not finish within {timeout:g} s: {_text(e.stderr)}") from None
        except OSError as e:
            raise ConfigError(f"running {exe}: {e}") from None
    finally:
        if tmpdir is not None:
            tmpdir.cleanup()
    if proc.returncode != 0:
        raise SubmitError(proc.returncode, proc.stderr, proc.stdout)
    printed = parse_submit_output(proc.stdout)
    if "app_id" not in printed:
        raise SubmitError(proc.returncode, f"no 'submitted <app>' line in its output: {proc.stdout.strip()}")
    app = Application(
        printed["app_id"],
        rm=rm or ResourceManager(options.get("rm_web"), user=options.get("user")),
        secret_file=printed.get("secret_file"),
        secret_dir=options.get("secret_dir"),
    )
    if wait:
        app.wait(wait_timeout)
    return app


def _text(b: Any) -> str:
    if b is None:
        return ""
    return b if isinstance(b, str) else b.decode("utf-8", "replace")


__all__ = ["submit", "submit_args", "parse_submit_output", "find_binary"]
