#!/usr/bin/env python3
"""`yarn-am split cat` against curl of the split's WebHDFS URL: one split read end to end.

    python3 scripts/split_bench.py [--mb 64] [--rounds 7] [--no-lock]

Writes one text file of --mb MB into HDFS as a single block (scripts/hdfs-gen-text.sh; kept
between runs), then reads it whole as a task's split, alternating the order each round:
- `curl`: `curl -sSfL` of the URL a task gets in YARN_AM_SPLIT_URL (what tasks did before
  `yarn-am split`: bytes, no record rule, no credential, no replica choice);
- `split-bytes`: `yarn-am split cat --format bytes` (the same range through our reader);
- `split-text`: `yarn-am split cat --format text` (whole lines, MapReduce's rule).
Each writes to /dev/null; a check pass first compares the bytes each one writes with the
local copy (bytes: identical; text: the split is the whole file, so identical too). Per
reader: median wall seconds (min-max) and MB/s of the median. The client runs on this host,
which holds no replica, so every reader goes to a remote DataNode the NameNode names.

Needs the test cluster up (tests/cluster/cluster.sh up) and YARN_AM_BIN (default
target/release/yarn-am). Holds the shared cluster lock unless --no-lock.
"""
import argparse
import contextlib
import getpass
import hashlib
import os
import subprocess
import sys
import time

from benchlib import REPO, cluster_env, cluster_lock, median_table, sh


def reader_cmds(env, yarn_am):
    return {
        "curl": ["curl", "-sSfL", "--max-time", "300", f"{env['YARN_AM_SPLIT_URL']}&user.name={env['USER']}"],
        "split-bytes": [yarn_am, "split", "cat", "--format", "bytes"],
        "split-text": [yarn_am, "split", "cat", "--format", "text"],
    }


def digest_of(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} {' '.join(cmd[1:3])} failed (exit {p.returncode}): {p.stderr.decode(errors='replace')[-500:]}")
    return hashlib.sha256(p.stdout).hexdigest(), len(p.stdout)


def timed(cmd, env):
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--no-lock", action="store_true", help="the caller holds the cluster lock")
    a = ap.parse_args()
    env = cluster_env()
    yarn_am = env.get("YARN_AM_BIN", os.path.join(REPO, "target/release/yarn-am"))
    if not os.access(yarn_am, os.X_OK):
        sys.exit(f"no yarn-am binary at {yarn_am} (cargo build --release, or set YARN_AM_BIN)")
    user = getpass.getuser()
    hdfs_dir = f"/user/{user}/split-bench"
    local = f"/tmp/split-bench-{a.mb}mb"
    path = f"{hdfs_dir}/part-00000.txt"
    size = a.mb * 1024 * 1024
    rows = []
    with contextlib.nullcontext() if a.no_lock else cluster_lock():
        sh("bash", os.path.join(REPO, "scripts/hdfs-gen-text.sh"), "--webhdfs", env["YARN_AM_WEBHDFS"],
           "--dir", hdfs_dir, "--files", "1", "--mb", str(a.mb), "--block-mb", str(a.mb),
           "--local-copy", local, env=env)
        size = os.path.getsize(f"{local}/part-00000.txt")
        env.update({
            "USER": user,
            "YARN_AM_SPLIT_URL": f"{env['YARN_AM_WEBHDFS']}/webhdfs/v1{path}?op=OPEN&offset=0&length={size}",
            "YARN_AM_SPLIT_PATH": path,
            "YARN_AM_SPLIT_OFFSET": "0",
            "YARN_AM_SPLIT_LENGTH": str(size),
        })
        cmds = reader_cmds(env, yarn_am)
        with open(f"{local}/part-00000.txt", "rb") as f:
            want = hashlib.sha256(f.read()).hexdigest()
        for mode, cmd in cmds.items():
            got, n = digest_of(cmd, env)
            if got != want:
                sys.exit(f"{mode} wrote {n} bytes that differ from the file's {size}")
        order = list(cmds)
        for i in range(a.rounds):
            for mode in order if i % 2 == 0 else order[::-1]:
                s = timed(cmds[mode], env)
                rows.append({"mode": mode, "wall_s": round(s, 3), "mb_per_s": round(size / s / 1e6, 1)})
    print(f"one split of {size} bytes (a single block), {a.rounds} rounds, order alternating; "
          f"every reader's output equals the file\n"
          + median_table(rows, list(cmds), ["wall_s", "mb_per_s"], "reader", ratio=("split-text", "curl")))


if __name__ == "__main__":
    main()
