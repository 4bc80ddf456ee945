#!/usr/bin/env python3
"""Spark on yarn-am beside Spark's own YARN mode: the same job, the same cluster, alternating.

    python3 scripts/spark_bench.py [--rounds N] [--task-ms MS] [--out FILE]

(scripts/compare-spark.sh runs it after building what it needs.)

Each round runs spark/src/test/java/io/yarnam/spark/LocalityJob.java (60 partitions preferring
nm1..nm3, tasks of --task-ms (1 s), dynamic allocation 1 initial 0..3 executors of 512 MB heap
and 2 cores, spark.locality.wait 3 s)
once with master yarn-am (spark/bin/spark-submit-yarn-am) and once with master yarn (client mode,
spark.yarn.jars=local:$SPARK_HOME/jars/* so nothing is uploaded), each under the shared cluster
lock (/tmp/yarn-am-it.lock), and reports per run: wall time from the driver JVM's start to
spark-submit's exit, the job's time,
time from the driver JVM's start to its first and to its third executor, the node-local share,
the AM's peak RSS (processes whose working directory is the AM container's, sampled every
0.5 s), the largest executor container's peak RSS (likewise) and the RM's memory-seconds and
vcore-seconds of the app; then the medians per master and their ratios (yarn-am / yarn). Needs the running test cluster
(tests/cluster/cluster.sh up), Spark (scripts/spark-env.sh) and the yarn-am binary
(YARN_AM_BIN, default target/release/yarn-am).
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

from benchlib import REPO, am_rss_sampler, cluster_env, median_table, rm_app_final, sh

CONFS = {
    "spark.driver.host": "127.0.0.1",
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


def run(mode, env, spark_home, tests_jar, rm_web, task_ms):
    confs = dict(CONFS)
    if mode == "yarn-am":
        cmd = [os.path.join(REPO, "spark/bin/spark-submit-yarn-am")]
    else:
        cmd = [os.path.join(spark_home, "bin/spark-submit"), "--master", "yarn", "--deploy-mode", "client"]
        confs["spark.yarn.jars"] = f"local:{spark_home}/jars/*"
    for k, v in confs.items():
        cmd += ["--conf", f"{k}={v}"]
    cmd += ["--driver-memory", "512m", "--class", "io.yarnam.spark.LocalityJob", tests_jar, "60", str(task_ms), "0"]
    holder, stop, peak, result = {}, threading.Event(), {}, None
    sampler = threading.Thread(target=am_rss_sampler, args=(holder, stop, peak), daemon=True)
    sampler.start()
    t0 = time.time()
    log = open(f"/tmp/spark-bench-{mode}.log", "w")
    p = subprocess.Popen(["flock", "/tmp/yarn-am-it.lock"] + cmd, env=env, stdout=subprocess.PIPE,
                         stderr=log, text=True)
    for line in p.stdout:
        if line.startswith("APP_ID "):
            holder["app"] = line.split()[1]
        elif line.startswith("RESULT "):
            result = json.loads(line[7:])
    rc = p.wait()
    # From the driver JVM's start (after the lock was taken) to spark-submit's exit.
    wall = time.time() - result["jvm_start_ms"] / 1000 if result else time.time() - t0
    stop.set()
    if rc != 0 or result is None:
        sys.exit(f"{mode} run failed (exit {rc}); see /tmp/spark-bench-{mode}.log")
    app = result["app_id"]
    rep = rm_app_final(rm_web, app)
    adds = sorted(e["time"] for e in result["executor_events"] if e["event"] == "added")
    start = result["jvm_start_ms"]
    return {
        "mode": mode,
        "app": app,
        "wall_s": round(wall, 1),
        "job_s": round(result["job_ms"] / 1000, 1),
        "first_exec_s": round((adds[0] - start) / 1000, 1) if adds else None,
        "third_exec_s": round((adds[2] - start) / 1000, 1) if len(adds) >= 3 else None,
        "node_local": result["by_locality"].get("NODE_LOCAL", 0),
        "exec_hosts": sorted(e.get("host", "?") for e in result["executor_events"] if e["event"] == "added"),
        "am_rss_mib": round(peak.get("kib", 0) / 1024, 1),
        "exec_rss_mib": round(max(peak["exec"].values(), default=0) / 1024, 1),
        "mem_mb_s": rep.get("memorySeconds"),
        "vcore_s": rep.get("vcoreSeconds"),
        "final": rep.get("finalStatus"),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--task-ms", type=int, default=1000)
    a = ap.parse_args()
    spark_home = sh("bash", os.path.join(REPO, "scripts/spark-env.sh"))
    sh("bash", os.path.join(REPO, "spark/build.sh"), env={**os.environ, "SPARK_HOME": spark_home})
    tests_jar = os.path.join(REPO, "spark/target/yarn-am-spark-tests.jar")
    env = cluster_env()
    env.pop("YARN_AM_WEBHDFS", None)
    env["SPARK_HOME"] = spark_home
    env.setdefault("YARN_AM_BIN", os.path.join(REPO, "target/release/yarn-am"))
    rm_web = env["YARN_AM_RM_WEB"]
    rows = []
    for i in range(a.rounds):
        for mode in (("yarn-am", "yarn") if i % 2 == 0 else ("yarn", "yarn-am")):
            r = run(mode, env, spark_home, tests_jar, rm_web, a.task_ms)
            print(json.dumps(r), flush=True)
            rows.append(r)
    keys = ["wall_s", "job_s", "first_exec_s", "third_exec_s", "node_local", "am_rss_mib",
            "exec_rss_mib", "mem_mb_s", "vcore_s"]
    table = median_table(rows, ("yarn-am", "yarn"), keys, "master", ratio=("yarn-am", "yarn"))
    print("\nmedians:\n" + table)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
