"""What the side-by-side benchmarks (spark_bench.py, mr_bench.py) share: the test cluster's
client environment, the shared cluster lock, the RM's app report, the peak RSS of an app's
AM container, and a median table."""
import fcntl
import glob
import json
import os
import statistics
import subprocess
import time
import urllib.request
from contextlib import contextmanager

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOCK = "/tmp/yarn-am-it.lock"


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout.strip()


def cluster_env():
    """os.environ plus the exports `cluster.sh env` prints."""
    env = dict(os.environ)
    for line in sh("bash", os.path.join(REPO, "tests/cluster/cluster.sh"), "env").splitlines():
        k, v = line.removeprefix("export ").split("=", 1)
        env[k] = v
    return env


@contextmanager
def cluster_lock():
    """The shared lock every user of the real cluster holds (the PREAMBLE's rule)."""
    with open(LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def rm_app(rm_web, app):
    with urllib.request.urlopen(f"http://{rm_web}/ws/v1/cluster/apps/{app}", timeout=15) as r:
        return json.load(r)["app"]


def rm_app_final(rm_web, app, limit_s=60):
    """The RM's report of `app` once it has ended (or as it stands after `limit_s`)."""
    deadline = time.time() + limit_s
    rep = rm_app(rm_web, app)
    while rep["state"] not in ("FINISHED", "FAILED", "KILLED") and time.time() < deadline:
        time.sleep(0.5)
        rep = rm_app(rm_web, app)
    return rep


def am_rss_sampler(app_holder, stop, peak):
    """Peak summed RSS (KiB) of the processes running in the app's first-attempt containers:
    those whose working directory is the container's (the host's /proc sees the docker
    nodes' processes too). The AM container's goes to `peak["kib"]`, the `yarn-am` processes
    in it to `peak["yarn_am"]`, each other container's to `peak["exec"][container]`. Run in a
    thread; `app_holder["app"]` names the app once known, `stop` ends it."""
    peak.setdefault("exec", {})
    while not stop.is_set():
        app = app_holder.get("app")
        if app:
            _, ts, seq = app.split("_")
            prefix = f"_{ts}_{seq}_01_"
            totals, ours = {}, 0
            for p in glob.glob("/proc/[0-9]*"):
                try:
                    container = os.path.basename(os.readlink(p + "/cwd"))
                    if not (container.startswith("container_") and prefix in container):
                        continue
                    with open(p + "/comm") as f:
                        comm = f.read().strip()
                    with open(p + "/status") as f:
                        kib = next((int(l.split()[1]) for l in f if l.startswith("VmRSS:")), 0)
                except (OSError, ValueError):
                    continue
                totals[container] = totals.get(container, 0) + kib
                if container.endswith("_000001") and comm == "yarn-am":
                    ours += kib
            for container, kib in totals.items():
                if container.endswith("_000001"):
                    peak["kib"] = max(peak.get("kib", 0), kib)
                else:
                    peak["exec"][container] = max(peak["exec"].get(container, 0), kib)
            if ours:
                peak["yarn_am"] = max(peak.get("yarn_am", 0), ours)
        stop.wait(0.5)


def median_table(rows, modes, keys, label, ratio=None):
    """A Markdown table of each key's median (min-max) per mode; with `ratio=(a, b)` a last
    row of a's median over b's."""
    lines = [f"| {label} | runs | " + " | ".join(keys) + " |", "|---|---|" + "---|" * len(keys)]
    medians = {}
    for mode in modes:
        rs = [r for r in rows if r["mode"] == mode]
        cells = []
        for k in keys:
            vals = sorted(r[k] for r in rs if r.get(k) is not None)
            medians[(mode, k)] = statistics.median(vals) if vals else None
            cells.append(f"{statistics.median(vals):g} ({vals[0]:g}-{vals[-1]:g})" if vals else "-")
        lines.append(f"| {mode} | {len(rs)} | " + " | ".join(cells) + " |")
    if ratio:
        a, b = ratio
        cells = []
        for k in keys:
            ours, theirs = medians[(a, k)], medians[(b, k)]
            cells.append(f"{ours / theirs:.2f}x" if ours is not None and theirs else "-")
        lines.append(f"| {a} / {b} | | " + " | ".join(cells) + " |")
    return "\n".join(lines)
