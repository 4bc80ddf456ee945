#!/usr/bin/env python3
"""Start-up timeline: where the time goes from `yarn-am submit` to the first executor's first
poll, for two yarn-am binaries on the idle test cluster, alternating.

    python3 scripts/startup_bench.py [--runs 5] [--before BIN] [--after BIN]
                                     [--job one|sample|FILE] [--no-lock] [--json FILE]

--before defaults to /tmp/startup-base/yarn-am (a binary built from the base commit, e.g. with
`git worktree add /tmp/startup-base-src BASE && cargo build --release` there), --after to
target/release/yarn-am. Needs the running test cluster (tests/cluster/cluster.sh up: the
default profile, 3 NodeManagers, NM heartbeat 500 ms) with HDFS staging (YARN_AM_WEBHDFS
from `cluster.sh env`). Holds the shared cluster lock unless --no-lock.

The job: `one` (default) is one task (`true`) with `initial_executors` 1, so the AM asks for
an executor as soon as it has registered; `sample` is conf/examples/job.json (60 tasks,
`initial_executors` 0: its first ask waits for the driver's 1 s backlog timeout, Spark's
`schedulerBacklogTimeout`). Before the timed runs each binary is submitted twice untimed
(`warm-up`), so the timed runs have nothing new to upload and the NodeManagers hold the
binary's PRIVATE localised copy (a run whose executor's node still localised it is flagged).

Every time is seconds after `t0`, this script's clock just before it starts `submit`; every
source runs on this machine's one clock (the Docker backend shares the host's kernel clock).
Sources, per phase:

- `submit returns`: this process, when the `submit` process exits.
- `RM accepted`, `AM container allocated`, `AM container launched` (the RM's
  ApplicationMasterLauncher done with startContainers), `AM registered`, `first grant (RM)`
  (the RM's scheduler allocating the first executor container on an NM heartbeat): the RM's
  own log (state transitions of the app, its attempt and its containers, millisecond stamps).
- `AM process started`: the AM's log, its first line ("ApplicationMaster starting").
- `first ask`: the AM's log ("asking the RM for containers": the allocate call carrying it
  leaves then).
- `first grant (AM)`: the AM's log ("container granted": the allocate reply that carried it).
- `executor start accepted`: the AM's log ("executor started": the NodeManager answered its
  startContainers).
- `executor process`: the executor's own log, its first line ("executor starting").
- `first poll`: the AM's log ("executor registered": the AM answering the executor's first
  poll). This is "the first executor".

The AM's and the executor's logs are read back with `yarn-am logs` (aggregated on HDFS once
the app ends), the RM's from <cluster dir>/logs/rm.log.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import REPO, cluster_env, cluster_lock, rm_app_final, sh

CLUSTER = os.path.join(REPO, "tests/cluster/cluster.sh")

ONE_JOB = {
    "name": "startup-one",
    "executor": {"cores": 1, "memory_mb": 256, "min_executors": 0, "max_executors": 1,
                 "initial_executors": 1, "idle_timeout_ms": 5000},
    "tasks": [{"id": "t0", "command": "true", "preferred_hosts": [], "preferred_racks": [], "cpus": 1}],
}

# (key, label, source): the rows of the table, in the order they happen.
PHASES = [
    ("submit_s", "submit returns", "this process"),
    ("accepted_s", "RM accepted", "RM log"),
    ("am_alloc_s", "AM container allocated", "RM log"),
    ("am_launched_s", "AM container launched", "RM log"),
    ("am_start_s", "AM process started", "AM log"),
    ("registered_s", "AM registered", "RM log"),
    ("first_ask_s", "first ask", "AM log"),
    ("rm_grant_s", "first grant (RM)", "RM log"),
    ("am_grant_s", "first grant (AM)", "AM log"),
    ("exec_started_s", "executor start accepted", "AM log"),
    ("exec_proc_s", "executor process", "executor log"),
    ("first_poll_s", "first poll (first executor)", "AM log"),
]

# The RM's log4j stamps: `2026-11-27 17:09:08,968` (UTC in the cluster's daemons).
RM_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")
# tracing's: `2026-11-27T17:09:09.274063Z`.
TRACING_STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z ")


def rm_time(line):
    m = RM_STAMP.match(line)
    if not m:
        return None
    dt = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
    return dt.replace(tzinfo=datetime.timezone.utc).timestamp()


def tracing_time(line):
    m = TRACING_STAMP.match(line)
    if not m:
        return None
    stamp = m.group(1)
    whole, frac = stamp.split(".")
    dt = datetime.datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S")
    return dt.replace(tzinfo=datetime.timezone.utc).timestamp() + float("0." + frac)


def first(lines, parse, *needles):
    """The time of the first line holding every needle."""
    for line in lines:
        if all(n in line for n in needles):
            t = parse(line)
            if t is not None:
                return t
    return None


def rm_log_lines(cluster_dir, app):
    num = app.removeprefix("application_")
    with open(os.path.join(cluster_dir, "logs/rm.log"), errors="replace") as f:
        return [line for line in f if num in line]


def container_logs(binary, env, app):
    """The AM's and the first executor's stderr lines, from `yarn-am logs` (aggregated)."""
    out = subprocess.run([binary, "logs", app, "--file", "stderr"], env=env,
                         capture_output=True, text=True, timeout=120).stdout
    am, executor, current = [], [], None
    for line in out.splitlines():
        m = re.match(r"^==> (container_\S+)/stderr <==", line)
        if m:
            current = m.group(1)
            continue
        if current and current.endswith("_01_000001"):
            am.append(line)
        elif current and current.endswith("_01_000002"):
            executor.append(line)
    return am, executor


def one_run(env, binary, mode, job_file):
    t0 = time.time()
    p = subprocess.run([binary, "submit", "--name", f"startup-bench-{mode}", "--max-attempts", "1",
                        "--job", job_file], env=env, capture_output=True, text=True)
    t_ret = time.time()
    out = p.stdout + p.stderr
    m = re.search(r"^submitted (application_\S+)", out, re.M)
    if p.returncode != 0 or not m:
        sys.exit(f"submit failed (exit {p.returncode}): {out[-2000:]}")
    app = m.group(1)
    rep = rm_app_final(env["YARN_AM_RM_WEB"], app, limit_s=120)
    if rep["finalStatus"] != "SUCCEEDED":
        sys.exit(f"{app} ended {rep['state']}/{rep['finalStatus']}: {rep.get('diagnostics', '')[:500]}")
    rm = rm_log_lines(env["YARN_AM_CLUSTER_DIR"], app)
    am, executor = container_logs(binary, env, app)
    attempt = app.replace("application_", "appattempt_") + "_000001"
    first_exec = app.replace("application_", "container_") + "_01_000002"
    # A NodeManager starts a localizer for a container only when something must be fetched.
    exec_fetched = False
    for nm in ("nm1", "nm2", "nm3"):
        with open(os.path.join(env["YARN_AM_CLUSTER_DIR"], f"logs/{nm}.log"), errors="replace") as f:
            exec_fetched |= any(f"Created localizer for {first_exec}" in l for l in f)
    stamps = {
        "submit_s": t_ret,
        "accepted_s": first(rm, rm_time, app, "to ACCEPTED"),
        "am_alloc_s": first(rm, rm_time, attempt, "to ALLOCATED_SAVING"),
        "am_launched_s": first(rm, rm_time, attempt, "ALLOCATED to LAUNCHED"),
        "am_start_s": first(am, tracing_time, "ApplicationMaster starting"),
        "registered_s": first(rm, rm_time, attempt, "LAUNCHED to RUNNING"),
        "first_ask_s": first(am, tracing_time, "asking the RM for containers"),
        "rm_grant_s": first(rm, rm_time, first_exec, "NEW to ALLOCATED"),
        "am_grant_s": first(am, tracing_time, "container granted"),
        "exec_started_s": first(am, tracing_time, "executor started"),
        "exec_proc_s": first(executor, tracing_time, "executor starting"),
        "first_poll_s": first(am, tracing_time, "executor registered"),
    }
    staged = re.search(r"^staged .*?(\d+) uploaded", out, re.M)
    row = {"mode": mode, "app": app, "uploaded": int(staged.group(1)) if staged else None,
           # The executor's only file is the binary: fetched means its PRIVATE copy was not
           # on that node yet (the warm-up runs did not reach it).
           "exec_fetched_binary": exec_fetched}
    for k, t in stamps.items():
        row[k] = round(t - t0, 3) if t is not None else None
    print(json.dumps(row), flush=True)
    return row


def table(rows, modes):
    head = "| phase (seconds after `submit` starts) | source | " + " | ".join(
        f"{m} (median of {sum(r['mode'] == m for r in rows)}, min-max)" for m in modes) + " |"
    lines = [head, "|---|---|" + "---|" * len(modes)]
    for key, label, source in PHASES:
        cells = []
        for m in modes:
            vals = sorted(r[key] for r in rows if r["mode"] == m and r.get(key) is not None)
            cells.append(f"{statistics.median(vals):.2f} ({vals[0]:.2f}-{vals[-1]:.2f})" if vals else "-")
        lines.append(f"| {label} | {source} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def steps_table(rows, modes):
    """Each phase's own share: the median over runs of its time minus the previous phase's."""
    lines = ["| step | " + " | ".join(f"{m} (median s)" for m in modes) + " |",
             "|---|" + "---|" * len(modes)]
    prev = None
    for key, label, _ in PHASES:
        cells = []
        for m in modes:
            diffs = sorted(r[key] - (r[prev] if prev else 0) for r in rows
                           if r["mode"] == m and r.get(key) is not None and (not prev or r.get(prev) is not None))
            cells.append(f"{statistics.median(diffs):.2f}" if diffs else "-")
        lines.append(f"| {'start' if not prev else dict((k, l) for k, l, _ in PHASES)[prev]} -> {label} | "
                     + " | ".join(cells) + " |")
        prev = key
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--before", default="/tmp/startup-base/yarn-am")
    ap.add_argument("--after", default=os.path.join(REPO, "target/release/yarn-am"))
    ap.add_argument("--job", default="one", help="one, sample, or a job file")
    ap.add_argument("--warm-up", type=int, default=2)
    ap.add_argument("--no-lock", action="store_true")
    ap.add_argument("--json", help="also write every run's row to this file")
    a = ap.parse_args()
    for b in (a.before, a.after):
        if not os.access(b, os.X_OK):
            sys.exit(f"no executable yarn-am at {b}")
    tmp = None
    if a.job == "one":
        tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump(ONE_JOB, tmp)
        tmp.close()
        job_file = tmp.name
    elif a.job == "sample":
        job_file = os.path.join(REPO, "conf/examples/job.json")
    else:
        job_file = a.job
    env = cluster_env()
    env.pop("YARN_AM_LOG", None)
    if not env.get("YARN_AM_WEBHDFS"):
        sys.exit("YARN_AM_WEBHDFS is not set: the bench measures HDFS staging")
    modes = {"before": a.before, "after": a.after}
    rows = []
    lock = cluster_lock() if not a.no_lock else None
    try:
        if lock:
            lock.__enter__()
        if subprocess.run(["bash", CLUSTER, "status"], capture_output=True).returncode != 0:
            sys.exit("the test cluster is not up: tests/cluster/cluster.sh up")
        for _ in range(a.warm_up):
            for mode, b in modes.items():
                one_run(env, b, f"warm-up-{mode}", job_file)
        for _ in range(a.runs):
            for mode, b in modes.items():
                rows.append(one_run(env, b, mode, job_file))
    finally:
        if lock:
            lock.__exit__(None, None, None)
        if tmp:
            os.unlink(tmp.name)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    print()
    print(f"job: {a.job}; before: {a.before}; after: {a.after}")
    print(table(rows, list(modes)))
    print()
    print(steps_table(rows, list(modes)))
    flagged = [r["app"] for r in rows if r.get("exec_fetched_binary")]
    if flagged:
        print(f"runs whose executor's node fetched the binary: {', '.join(flagged)}")


if __name__ == "__main__":
    main()
