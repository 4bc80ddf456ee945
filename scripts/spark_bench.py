#!/usr/bin/env python3
"""Spark on yarn-am beside Spark's own YARN mode: the same job, the same cluster, alternating.

    python3 scripts/spark_bench.py [--rounds N] [--task-ms MS] [--out FILE]
                                   [--deploy-mode client|cluster] [--archive hdfs://NN/PATH.zip]

(scripts/compare-spark.sh runs it after building what it needs.)

Each round runs spark/src/test/java/io/yarnam/spark/LocalityJob.java (60 partitions preferring
nm1..nm3, tasks of --task-ms (1 s), dynamic allocation 1 initial 0..3 executors of 512 MB heap
and 2 cores, spark.locality.wait 3 s) once with master yarn-am (spark/bin/spark-submit-yarn-am)
and once with master yarn (Spark's own YARN mode), in --deploy-mode (client: the driver on
this machine; cluster: the driver in the AM's container, spark-submit waiting for the app's
end as spark.yarn.submit.waitAppCompletion does by default). Each run holds the shared
cluster lock (/tmp/yarn-am-it.lock) from its submit to the collection of its figures, and in
that hold first brings the cluster up (`cluster.sh up`, plain profile) if another user left it
down or in another profile.

Spark's jars: with --archive (default on the docker backend, whose nodes have no Spark) a zip
of $SPARK_HOME/jars (jars at its root) is put on HDFS once, before the rounds (again only if it
is missing or of another size, e.g. after the cluster was restarted), and both masters use it
as spark.yarn.archive; master yarn then stages its own files under spark.yarn.stagingDir on
the same HDFS (fs.defaultFS is file:/// on the test cluster). Without an archive (native
backend only) master yarn uses spark.yarn.jars=local:$SPARK_HOME/jars/* and yarn-am the jars in
place (spark.yarnam.executor.jars), so nothing is uploaded.

Per run: wall time from spark-submit's start to its exit; the time from that start to the
driver JVM's start (cluster mode: the AM container's start and launch), to the first and to
the Nth (= maxExecutors, 3) executor registering with the driver (the job's SparkListener
times, epoch ms from the driver; in cluster mode the driver runs in a container on this same
kernel, so its clock is this machine's); the job's time; the node-local share (the job's own
count of successful tasks); the AM container's peak RSS (summed over the processes whose
working directory is the container's, sampled every 0.5 s from this machine's /proc, which
sees the docker nodes' processes too) and, for yarn-am, the peak RSS of its own `yarn-am am`
process in it; the largest executor container's peak RSS; the RM's memory-seconds and
vcore-seconds of the app. In cluster mode the job's RESULT line is read from the AM
container's driver log (yarn-am: driver.stdout; Spark: stdout), copied off its node with
`tests/cluster/cluster.sh from-node` after the app ended. Then the medians per master and
their ratios (yarn-am / yarn). Needs the running test cluster (tests/cluster/cluster.sh up),
Spark (scripts/spark-env.sh) and the yarn-am binary (YARN_AM_BIN, default
target/release/yarn-am).
"""
import argparse
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile

from benchlib import REPO, am_rss_sampler, cluster_env, cluster_lock, median_table, rm_app_final, sh

CONFS = {
    "spark.yarn.maxAppAttempts": "1",
    "spark.executor.memory": "512m",
    "spark.executor.cores": "2",
    "spark.dynamicAllocation.enabled": "true",
    "spark.dynamicAllocation.shuffleTracking.enabled": "true",
    "spark.dynamicAllocation.initialExecutors": "1",
    "spark.dynamicAllocation.minExecutors": "0",
    "spark.dynamicAllocation.maxExecutors": "3",
    "spark.dynamicAllocation.schedulerBacklogTimeout": "1s",
    "spark.dynamicAllocation.executorIdleTimeout": "5s",
    "spark.locality.wait": "3s",
}
MAX_EXECUTORS = int(CONFS["spark.dynamicAllocation.maxExecutors"])
RUN_LIMIT_S = 420
APP_RE = re.compile(r"application_\d+_\d+")


def libs_zip(spark_home):
    """A zip of $SPARK_HOME/jars with the jars at its root (what spark.yarn.archive wants),
    stored uncompressed (jars are compressed already), named by a digest of the jars' names
    and sizes and kept in ~/.cache/yarn-am."""
    jars = sorted(glob.glob(os.path.join(spark_home, "jars", "*.jar")))
    digest = hashlib.sha256("".join(f"{os.path.basename(j)}:{os.path.getsize(j)}\n" for j in jars)
                            .encode()).hexdigest()[:16]
    cache = os.path.expanduser("~/.cache/yarn-am")
    os.makedirs(cache, exist_ok=True)
    path = os.path.join(cache, f"spark-bench-libs-{digest}.zip")
    if not os.path.exists(path):
        with zipfile.ZipFile(path + ".part", "w", zipfile.ZIP_STORED) as z:
            for j in jars:
                z.write(j, os.path.basename(j))
        os.replace(path + ".part", path)
    return path


def webhdfs_put_once(webhdfs, hdfs_path, local, user):
    """Puts `local` at `hdfs_path` over WebHDFS unless a file of its size is there; returns
    the seconds the upload took (0 if nothing was sent)."""
    base = f"{webhdfs.rstrip('/')}/webhdfs/v1{urllib.parse.quote(hdfs_path)}"
    size = os.path.getsize(local)
    try:
        with urllib.request.urlopen(f"{base}?op=GETFILESTATUS&user.name={user}", timeout=30) as r:
            if json.load(r)["FileStatus"]["length"] == size:
                return 0.0
    except urllib.error.HTTPError as e:
        if e.code != 404:
            raise
    t0 = time.time()
    req = urllib.request.Request(f"{base}?op=CREATE&overwrite=true&user.name={user}", method="PUT")
    try:
        urllib.request.build_opener(NoRedirect).open(req, timeout=30)
        sys.exit("WebHDFS CREATE did not redirect to a DataNode")
    except urllib.error.HTTPError as e:
        if e.code != 307:
            raise
        location = e.headers["Location"]
    with open(local, "rb") as f:
        req = urllib.request.Request(location, data=f, method="PUT",
                                     headers={"Content-Length": str(size),
                                              "Content-Type": "application/octet-stream"})
        urllib.request.urlopen(req, timeout=600).close()
    return time.time() - t0


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **kw):
        return None


def driver_result(cluster_sh, app):
    """The job's RESULT from the AM container's driver log, copied off its node (cluster
    mode: the driver ran there)."""
    runtime = os.environ.get("YARN_AM_CLUSTER_DIR", "/tmp/yarn-am-cluster")
    for nm in ("nm1", "nm2", "nm3"):
        app_dir = os.path.join(runtime, nm, "logs", app)
        subprocess.run(["bash", cluster_sh, "from-node", nm, app_dir], capture_output=True)
        for name in ("driver.stdout", "stdout"):
            for f in glob.glob(os.path.join(app_dir, "container_*_01_000001", name)):
                with open(f, errors="replace") as fh:
                    for line in fh:
                        if line.startswith("RESULT "):
                            return json.loads(line[7:])
    return None


def run(mode, deploy, env, spark_home, tests_jar, rm_web, task_ms, archive, staging):
    confs = dict(CONFS)
    if deploy == "client":
        # The executors (host network on both backends) reach the driver here.
        confs["spark.driver.host"] = "127.0.0.1"
    if mode == "yarn-am":
        cmd = [os.path.join(REPO, "spark/bin/spark-submit-yarn-am"), "--deploy-mode", deploy]
        if archive:
            confs["spark.yarn.archive"] = archive
        else:
            confs["spark.yarnam.executor.jars"] = f"{spark_home}/jars"
    else:
        cmd = [os.path.join(spark_home, "bin/spark-submit"), "--master", "yarn", "--deploy-mode", deploy]
        if archive:
            confs["spark.yarn.archive"] = archive
            confs["spark.yarn.stagingDir"] = staging
        else:
            confs["spark.yarn.jars"] = f"local:{spark_home}/jars/*"
    for k, v in confs.items():
        cmd += ["--conf", f"{k}={v}"]
    cmd += ["--driver-memory", "512m", "--class", "io.yarnam.spark.LocalityJob", tests_jar, "60", str(task_ms), "0"]
    holder, stop, peak, result = {}, threading.Event(), {}, None
    sampler = threading.Thread(target=am_rss_sampler, args=(holder, stop, peak), daemon=True)
    sampler.start()
    log_path = f"/tmp/spark-bench-{mode}-{deploy}.log"
    with open(log_path, "w") as log:
        t0 = time.time()
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # A run that hangs (e.g. the RM went away) must not hold the shared lock for long.
        watchdog = threading.Timer(RUN_LIMIT_S, p.kill)
        watchdog.start()
        for line in p.stdout:
            log.write(line)
            if "app" not in holder:
                m = APP_RE.search(line)
                if m:
                    holder["app"] = m.group(0)
            if line.startswith("RESULT "):
                result = json.loads(line[7:])
        rc = p.wait()
        t_end = time.time()
        watchdog.cancel()
    stop.set()
    app = holder.get("app")
    if not app:
        sys.exit(f"{mode} ({deploy}): no application id (exit {rc}); see {log_path}")
    rep = rm_app_final(rm_web, app)
    if result is None and deploy == "cluster":
        result = driver_result(os.path.join(REPO, "tests/cluster/cluster.sh"), app)
    if rc != 0 or result is None:
        sys.exit(f"{mode} ({deploy}) run {app} failed (exit {rc}, RM {rep.get('finalStatus')}, "
                 f"result {'found' if result else 'missing'}); see {log_path}")
    adds = sorted(e["time"] for e in result["executor_events"] if e["event"] == "added")
    start_ms = t0 * 1000
    secs = lambda ms: round((ms - start_ms) / 1000, 1)  # noqa: E731
    return {
        "mode": mode,
        "deploy": deploy,
        "app": app,
        "wall_s": round(t_end - t0, 1),
        "driver_start_s": secs(result["jvm_start_ms"]),
        "first_exec_s": secs(adds[0]) if adds else None,
        "nth_exec_s": secs(adds[MAX_EXECUTORS - 1]) if len(adds) >= MAX_EXECUTORS else None,
        "job_s": round(result["job_ms"] / 1000, 1),
        "node_local": result["by_locality"].get("NODE_LOCAL", 0),
        "exec_hosts": sorted(e.get("host", "?") for e in result["executor_events"] if e["event"] == "added"),
        "am_rss_mib": round(peak["kib"] / 1024, 1) if "kib" in peak else None,
        "yarn_am_rss_mib": round(peak["yarn_am"] / 1024, 1) if "yarn_am" in peak else None,
        "exec_rss_mib": round(max(peak["exec"].values()) / 1024, 1) if peak["exec"] else None,
        "mem_mb_s": rep.get("memorySeconds"),
        "vcore_s": rep.get("vcoreSeconds"),
        "final": rep.get("finalStatus"),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--task-ms", type=int, default=1000)
    ap.add_argument("--deploy-mode", choices=("client", "cluster"), default="client")
    ap.add_argument("--archive", default=None,
                    help="hdfs:// URL to put the zip of $SPARK_HOME/jars at (once) and use as "
                         "spark.yarn.archive; 'none' for jars in place (native backend); "
                         "default: hdfs://<namenode>/user/<you>/spark-bench/<zip> on docker")
    ap.add_argument("--masters", default="yarn-am,yarn",
                    help="which masters to run, in round 1's order (a trial of one: yarn)")
    a = ap.parse_args()
    masters = tuple(a.masters.split(","))
    spark_home = sh("bash", os.path.join(REPO, "scripts/spark-env.sh"))
    sh("bash", os.path.join(REPO, "spark/build.sh"), env={**os.environ, "SPARK_HOME": spark_home})
    tests_jar = os.path.join(REPO, "spark/target/yarn-am-spark-tests.jar")
    env = cluster_env()
    runtime = env.get("YARN_AM_CLUSTER_DIR", "/tmp/yarn-am-cluster")
    try:
        backend = open(os.path.join(runtime, "backend")).read().strip()
    except OSError:
        backend = "docker"  # cluster.sh's default where Docker runs
    if backend not in ("docker", "native"):
        backend = "docker"
    env["SPARK_HOME"] = spark_home
    env.setdefault("YARN_AM_BIN", os.path.join(REPO, "target/release/yarn-am"))
    env.pop("YARN_AM_STAGING_DIR", None)
    rm_web = env["YARN_AM_RM_WEB"]
    user = os.environ.get("USER") or sh("id", "-un")
    # The NameNode's RPC address: hdfs:///... URLs would resolve against fs.defaultFS, which is
    # file:/// on the test cluster.
    nn = re.search(r"dfs.namenode.rpc-address</name><value>([^<]+)",
                   open(os.path.join(env["HADOOP_CONF_DIR"], "hdfs-site.xml")).read()).group(1)
    archive = a.archive
    if archive is None and backend == "docker":
        archive = f"hdfs://{nn}/user/{user}/spark-bench/" + os.path.basename(libs_zip(spark_home))
    if archive == "none":
        archive = None
    if archive:
        if archive.startswith("hdfs:///"):
            archive = f"hdfs://{nn}/" + archive[len("hdfs:///"):]
        if not archive.startswith("hdfs://"):
            sys.exit("--archive takes an hdfs:// URL (the zip is put there once)")
        # yarn-am stages through WebHDFS (the nodes cannot read this machine's disk).
        env.setdefault("YARN_AM_WEBHDFS", f"http://{nn.split(':')[0]}:9870")
    else:
        if backend == "docker":
            sys.exit("the docker nodes have no Spark: an --archive is needed")
        env.pop("YARN_AM_WEBHDFS", None)
    staging = f"hdfs://{nn}/user/{user}"
    zip_path = libs_zip(spark_home) if archive else None

    def ensure_archive():
        """Under the lock: the cluster up (another user may have taken it down at the end of
        their hold) and the zip on HDFS (again if the cluster was restarted since)."""
        cluster_sh = os.path.join(REPO, "tests/cluster/cluster.sh")
        profile = subprocess.run(["bash", cluster_sh, "profile"], capture_output=True, text=True).stdout.strip()
        if profile != "plain" or subprocess.run(["bash", cluster_sh, "status"],
                                                capture_output=True).returncode != 0:
            print(f"# the cluster is not up in the plain profile ({profile}): cluster.sh up --{backend}",
                  flush=True)
            sh("bash", cluster_sh, "up", f"--{backend}")
        if archive:
            took = webhdfs_put_once(env["YARN_AM_WEBHDFS"], urllib.parse.urlparse(archive).path,
                                    zip_path, user)
            if took:
                print(f"# put {os.path.getsize(zip_path) / 2**20:.0f} MiB at {archive} in {took:.1f} s",
                      flush=True)

    print(f"# backend {backend}, deploy mode {a.deploy_mode}, archive {archive or 'none (jars in place)'}",
          flush=True)
    rows = []
    for i in range(a.rounds):
        for mode in (masters if i % 2 == 0 else masters[::-1]):
            with cluster_lock():
                ensure_archive()
                r = run(mode, a.deploy_mode, env, spark_home, tests_jar, rm_web, a.task_ms, archive, staging)
            print(json.dumps(r), flush=True)
            rows.append(r)
    keys = ["wall_s", "driver_start_s", "first_exec_s", "nth_exec_s", "job_s", "node_local",
            "am_rss_mib", "yarn_am_rss_mib", "exec_rss_mib", "mem_mb_s", "vcore_s"]
    table = median_table(rows, ("yarn-am", "yarn"), keys, "master", ratio=("yarn-am", "yarn"))
    print("\nmedians:\n" + table)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
