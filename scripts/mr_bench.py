#!/usr/bin/env python3
"""MapReduce beside yarn-am: the same per-split work over the same HDFS input, alternating.

    python3 scripts/mr_bench.py [--work words|lines] [--rounds N] [--rounds-per-hold N]
                                [--slots N] [--files N --mb MB --block-mb MB] [--no-lock]
                                [--out FILE]

The work, per split of the input, writing "path offset length count":
- `words` (the default): conf/examples/hdfs-job.json as it is, a word count of the split's
  whole lines (`{split.cat} | wc -w`: yarn-am's `split cat`, MapReduce's line rule); on the
  MapReduce side mapreduce/src/main/java/io/yarnam/mr/SplitWordCount.java, TextInputFormat's
  lines counted as `wc -w` counts.
- `lines`: the newline bytes of the split's byte range (yarn-am: curl of the WebHDFS URL |
  `wc -l`; MapReduce: SplitLineCount.java reading the range with the HDFS client).
yarn-am runs one task per block (HDFS inputs, on reused executors of 256 MB and 1 core);
MapReduce a map-only job, one map (a 256 MB container) per FileInputFormat split.
Both may run at most --slots tasks at a time (yarn-am: max_executors; MapReduce:
mapreduce.job.running.map.limit). Each run holds the shared cluster lock
(/tmp/yarn-am-it.lock) by itself; the order alternates each round.

Per run: wall time (the client command, `yarn-am submit --wait` or the MR job's driver JVM,
from start to exit), the RM's elapsed time of the app, data-local tasks (MapReduce's
DATA_LOCAL_MAPS / RACK_LOCAL_MAPS counters from the job's history file; yarn-am's job report
by locality), containers launched (container folders of the app on the NMs, the AM's
included), the RM's memory-seconds and vcore-seconds, the AM's peak RSS (benchlib), and
whether the per-file line counts equal the generated files' (kept locally).

Needs the test cluster up (tests/cluster/cluster.sh up); runs `cluster.sh mapreduce` (MR jars,
the NMs' shuffle service) and mapreduce/build.sh, writes the input with
scripts/hdfs-gen-text.sh when it is missing, and uses YARN_AM_BIN (default
target/release/yarn-am).
"""
import argparse
import collections
import contextlib
import getpass
import glob
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from benchlib import REPO, am_rss_sampler, cluster_env, cluster_lock, median_table, rm_app_final, sh

HISTORY = "/tmp/hadoop-yarn/staging/history/done_intermediate"


def webhdfs(env, path, op, **params):
    q = urllib.parse.urlencode({"op": op, "user.name": getpass.getuser(), **params})
    # History file names carry %-escapes of their own (mr%2Dsplit...): quote the path.
    url = f"{env['YARN_AM_WEBHDFS']}/webhdfs/v1{urllib.parse.quote(path)}?{q}"
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read()


def hdfs_length(env, path):
    """The file's length, or None when it does not exist."""
    try:
        return json.loads(webhdfs(env, path, "GETFILESTATUS"))["FileStatus"]["length"]
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise


def ensure_input(env, a, local):
    """The generated files in HDFS and locally (the generator is deterministic: the same
    arguments give the same bytes; a file of another length is written again); their names."""
    names = [f"part-{i:05d}.txt" for i in range(a.files)]
    have = all(os.path.exists(os.path.join(local, n)) for n in names) and all(
        hdfs_length(env, f"{a.dir}/{n}") == os.path.getsize(os.path.join(local, n)) for n in names)
    if not have:
        sh("bash", os.path.join(REPO, "scripts/hdfs-gen-text.sh"), "--webhdfs", env["YARN_AM_WEBHDFS"],
           "--dir", a.dir, "--files", str(a.files), "--mb", str(a.mb), "--block-mb", str(a.block_mb),
           "--local-copy", local, env=env)
    return names


def expected_counts(local, names, work):
    """Per file: its words as `wc -w` counts them (bytes.split() splits on the same six ASCII
    white-space bytes), or its newline bytes."""
    out = {}
    for n in names:
        with open(os.path.join(local, n), "rb") as f:
            data = f.read()
        out[n] = len(data.split()) if work == "words" else data.count(b"\n")
    return out


def container_dirs(cluster_dir, app):
    return sorted(glob.glob(f"{cluster_dir}/nm*/logs/{app}/container_*"))


def per_file(lines):
    """{file name: summed count} from "path offset length count" lines; also the split count."""
    sums, splits = collections.Counter(), 0
    for line in lines:
        parts = line.split()
        if len(parts) == 4:
            sums[os.path.basename(parts[0])] += int(parts[3])
            splits += 1
    return dict(sums), splits


def timed(cmd, env, log_path, on_line):
    """Runs `cmd` (the caller holds the cluster lock), passing each stdout line and a dict to `on_line`
    (which names the app there: `holder["app"]`); returns (exit code, wall seconds, peak AM
    RSS KiB, app id or None)."""
    holder, stop, peak = {}, threading.Event(), {}
    sampler = threading.Thread(target=am_rss_sampler, args=(holder, stop, peak), daemon=True)
    sampler.start()
    with open(log_path, "w") as log:
        t0 = time.time()
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
        for line in p.stdout:
            log.write(line)
            on_line(line.rstrip("\n"), holder)
        rc = p.wait()
        wall = time.time() - t0
    stop.set()
    sampler.join()
    return rc, wall, peak.get("kib", 0), holder.get("app")


def run_yarn_am(env, a, job_path):
    name = "mr-bench-yarn-am"
    cmd = [env["YARN_AM_BIN"], "submit", "--name", name, "--max-attempts", "1", "--user", getpass.getuser(),
           "--webhdfs", env["YARN_AM_WEBHDFS"], "--job", job_path, "--wait", "--wait-timeout", "600"]

    def on_line(line, holder):
        if line.startswith("submitted "):
            holder["app"] = line.split()[1]

    rc, wall, rss, app = timed(cmd, env, "/tmp/mr-bench-yarn-am.log", on_line)
    if rc != 0 or not app:
        sys.exit(f"yarn-am run failed (exit {rc}); see /tmp/mr-bench-yarn-am.log")
    rep = rm_app_final(env["YARN_AM_RM_WEB"], app)
    dirs = container_dirs(env["YARN_AM_CLUSTER_DIR"], app)
    report = next((json.load(open(f"{d}/job-report.json")) for d in dirs if os.path.exists(f"{d}/job-report.json")), None)
    if report is None:
        sys.exit(f"no job-report.json of {app}")
    lines = []
    for t in report["tasks"]:
        out = [f"{d}/task-{t['task_id']}.{t['attempts'] - 1}.stdout" for d in dirs]
        out = [f for f in out if os.path.exists(f)]
        if out:
            with open(out[0]) as f:
                lines += f.read().splitlines()
    loc = report["by_locality"]
    return app, rep, wall, rss, dirs, lines, {
        "tasks": report["tasks_total"],
        "data_local": loc.get("node_local", 0),
        "rack_local": loc.get("rack_local", 0),
        "off_rack": loc.get("any", 0) + loc.get("no_pref", 0),
    }


def jhist_counters(env, job_id):
    """JobCounter group of the job's history file (no JobHistory server runs here; the file is
    JSON Avro, mapred-site.xml's mapreduce.jobhistory.jhist.format)."""
    user_dir = f"{HISTORY}/{getpass.getuser()}"
    deadline = time.time() + 30
    while True:
        entries = json.loads(webhdfs(env, user_dir, "LISTSTATUS"))["FileStatuses"]["FileStatus"]
        names = [e["pathSuffix"] for e in entries if e["pathSuffix"].startswith(job_id) and e["pathSuffix"].endswith(".jhist")]
        if names or time.time() > deadline:
            break
        time.sleep(0.5)
    if not names:
        sys.exit(f"no history file of {job_id} in {user_dir}")
    text = webhdfs(env, f"{user_dir}/{names[0]}", "OPEN").decode(errors="replace")
    for line in text.splitlines():
        # "Avro-Json", the schema (which names JOB_FINISHED too), then one event a line.
        if not line.startswith('{"type":"JOB_FINISHED"'):
            continue
        fin = next(iter(json.loads(line)["event"].values()))
        for group in fin["totalCounters"]["groups"]:
            if group["name"] == "org.apache.hadoop.mapreduce.JobCounter":
                return {c["name"]: c["value"] for c in group["counts"]}
    sys.exit(f"no JOB_FINISHED event in {names[0]}")


def run_mapreduce(env, a, jar):
    r = env["YARN_AM_CLUSTER_DIR"]
    out_dir = f"/user/{getpass.getuser()}/mr-bench-out"
    cmd = [os.path.join(env["JAVA_HOME"], "bin/java") if env.get("JAVA_HOME") else "java",
           "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true",
           "--add-opens=java.base/java.lang=ALL-UNNAMED", f"-Dit.dir={r}/mr-client",
           "-cp", f"{r}/mr-conf:{r}/lib/*:{r}/mr-lib/*:{jar}",
           "io.yarnam.mr.SplitWordCount" if a.work == "words" else "io.yarnam.mr.SplitLineCount",
           "-D", f"mapreduce.job.running.map.limit={a.slots}",
           f"{a.dir}/part-*.txt", out_dir]
    result = {}

    def on_line(line, holder):
        if line.startswith("APP_ID "):
            holder["app"] = line.split()[1]
        elif line.startswith("RESULT "):
            result.update(json.loads(line[7:]))

    rc, wall, rss, _ = timed(cmd, env, "/tmp/mr-bench-mapreduce.log", on_line)
    if rc != 0 or not result:
        sys.exit(f"MapReduce run failed (exit {rc}); see /tmp/mr-bench-mapreduce.log")
    app = "application_" + result["job_id"].removeprefix("job_")
    rep = rm_app_final(env["YARN_AM_RM_WEB"], app)
    counters = jhist_counters(env, result["job_id"])
    lines = []
    for e in json.loads(webhdfs(env, out_dir, "LISTSTATUS"))["FileStatuses"]["FileStatus"]:
        if e["pathSuffix"].startswith("part-"):
            lines += webhdfs(env, f"{out_dir}/{e['pathSuffix']}", "OPEN").decode().splitlines()
    maps = counters.get("TOTAL_LAUNCHED_MAPS", 0)
    data, rack = counters.get("DATA_LOCAL_MAPS", 0), counters.get("RACK_LOCAL_MAPS", 0)
    return app, rep, wall, rss, container_dirs(r, app), lines, {
        "tasks": maps,
        "data_local": data,
        "rack_local": rack,
        "off_rack": counters.get("OTHER_LOCAL_MAPS", maps - data - rack),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", choices=("words", "lines"), default="words",
                    help="per split: its words (whole lines) or its newline bytes")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--slots", type=int, default=6, help="tasks at a time, both ways")
    ap.add_argument("--dir", default=f"/user/{getpass.getuser()}/mr-bench")
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--block-mb", type=int, default=16)
    ap.add_argument("--rounds-per-hold", type=int, default=3,
                    help="rounds per hold of the cluster lock (a round takes 2-3 minutes)")
    ap.add_argument("--no-lock", action="store_true", help="the caller holds the cluster lock")
    ap.add_argument("--out", default=None, help="write every run's row here (JSON)")
    a = ap.parse_args()
    env = cluster_env()
    env.setdefault("YARN_AM_BIN", os.path.join(REPO, "target/release/yarn-am"))
    if not os.access(env["YARN_AM_BIN"], os.X_OK):
        sys.exit(f"no yarn-am binary at {env['YARN_AM_BIN']} (cargo build --release, or set YARN_AM_BIN)")
    with open(os.path.join(REPO, "conf/examples/hdfs-job.json")) as f:
        job = json.load(f)
    job["name"] = "mr-bench"
    if a.work == "lines":
        # The newline bytes of each block's range, as SplitLineCount counts them.
        job["inputs"]["command"] = (
            'set -o pipefail; n=$(curl -sSfL --max-time 120 "$YARN_AM_SPLIT_URL&user.name=${USER:-yarn}" '
            '| wc -l) && echo "$YARN_AM_SPLIT_PATH $YARN_AM_SPLIT_OFFSET $YARN_AM_SPLIT_LENGTH $n"')
    job["inputs"]["paths"] = [f"{a.dir}/part-*.txt"]
    job["executor"]["max_executors"] = a.slots
    job_path = f"/tmp/mr-bench-job-{os.getpid()}.json"
    with open(job_path, "w") as f:
        json.dump(job, f)
    jar = os.path.join(REPO, "mapreduce/target/yarn-am-mr.jar")
    local = f"/tmp/mr-bench-data-{a.files}x{a.mb}mb-{a.block_mb}"

    rows = []
    # The cluster lock is held for --rounds-per-hold rounds at a time (the PREAMBLE's limit is
    # about 12 minutes), so other users get it in between; each hold first readies the
    # cluster (another user may have restarted it without MapReduce) and the input.
    want = None
    for first in range(0, a.rounds, a.rounds_per_hold):
        with contextlib.nullcontext() if a.no_lock else cluster_lock():
            sh("bash", os.path.join(REPO, "tests/cluster/cluster.sh"), "up", env=env)
            sh("bash", os.path.join(REPO, "tests/cluster/cluster.sh"), "mapreduce", env=env)
            sh("bash", os.path.join(REPO, "mapreduce/build.sh"), env=env)
            names = ensure_input(env, a, local)
            want = want or expected_counts(local, names, a.work)
            for i in range(first, min(first + a.rounds_per_hold, a.rounds)):
                for mode in (("yarn-am", "mapreduce") if i % 2 == 0 else ("mapreduce", "yarn-am")):
                    rows.append(one_run(mode, env, a, job_path, jar, want))
                    if a.out:
                        with open(a.out, "w") as f:
                            json.dump(rows, f, indent=1)
    keys = ["wall_s", "rm_elapsed_s", "tasks", "data_local_pct", "containers", "am_rss_mib", "mem_mb_s", "vcore_s"]
    print(f"\ninput: {a.files} files x {a.mb} MB, {a.block_mb} MB blocks, {sum(want.values())} {a.work}; "
          f"all counts equal the generated files'\nmedians:\n"
          + median_table(rows, ("yarn-am", "mapreduce"), keys, "way"))


def one_run(mode, env, a, job_path, jar, want):
    if mode == "yarn-am":
        app, rep, wall, rss, dirs, lines, loc = run_yarn_am(env, a, job_path)
    else:
        app, rep, wall, rss, dirs, lines, loc = run_mapreduce(env, a, jar)
    got, splits = per_file(lines)
    row = {
        "mode": mode,
        "app": app,
        "wall_s": round(wall, 1),
        "rm_elapsed_s": round(rep.get("elapsedTime", 0) / 1000, 1),
        "tasks": loc["tasks"],
        "outputs": splits,
        "data_local": loc["data_local"],
        "rack_local": loc["rack_local"],
        "off_rack": loc["off_rack"],
        "data_local_pct": round(100 * loc["data_local"] / loc["tasks"], 1) if loc["tasks"] else None,
        "containers": len(dirs),
        "am_rss_mib": round(rss / 1024, 1),
        "mem_mb_s": rep.get("memorySeconds"),
        "vcore_s": rep.get("vcoreSeconds"),
        "final": rep.get("finalStatus"),
        "counts_ok": got == want,
    }
    print(json.dumps(row), flush=True)
    if not row["counts_ok"]:
        sys.exit(f"{mode} counted {got}, the generated files have {want}")
    return row


if __name__ == "__main__":
    main()
