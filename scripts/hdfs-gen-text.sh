#!/usr/bin/env bash
# Writes text files into HDFS through WebHDFS (CREATE with a chosen block size, via curl), as
# input for conf/examples/hdfs-job.json and tests/cluster/it_hdfs_input.rs. The text is deterministic
# (the same arguments give the same bytes), lines of varying length, so splits cut lines.
#
#   scripts/hdfs-gen-text.sh [--webhdfs URL] [--user NAME] [--dir HDFS_DIR] [--files N]
#                            [--mb MB_PER_FILE] [--block-mb MB] [--local-copy DIR]
#
# Defaults: --webhdfs $YARN_AM_WEBHDFS or http://rm:9870, --user $(id -un), --dir
# /user/<user>/hdfs-gen, 4 files of 64 MB, 16 MB blocks (a few hundred MB in all). With
# --local-copy the generated files are also kept in DIR (to check results against). Simple
# authentication only (user.name): on a Kerberos cluster use `hdfs dfs -put` instead.
set -euo pipefail

WEB=${YARN_AM_WEBHDFS:-http://rm:9870}
USER_NAME=$(id -un)
DIR=""
FILES=4
MB=64
BLOCK_MB=16
KEEP=""
while (($#)); do
  case "$1" in
    --webhdfs) WEB=$2; shift 2 ;;
    --user) USER_NAME=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --files) FILES=$2; shift 2 ;;
    --mb) MB=$2; shift 2 ;;
    --block-mb) BLOCK_MB=$2; shift 2 ;;
    --local-copy) KEEP=$2; shift 2 ;;
    *) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
[[ "$WEB" == http* ]] || WEB="http://$WEB"
WEB=${WEB%/}
DIR=${DIR:-/user/$USER_NAME/hdfs-gen}
for n in "$FILES" "$MB" "$BLOCK_MB"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "hdfs-gen-text: --files, --mb and --block-mb take positive integers" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${KEEP:-$work}
mkdir -p "$out"

for ((f = 0; f < FILES; f++)); do
  name=$(printf 'part-%05d.txt' "$f")
  # Lines of 10..89 bytes; the file stops at the first line ending past MB megabytes.
  awk -v f="$f" -v bytes=$((MB * 1048576)) 'BEGIN {
    n = 0; total = 0; pad = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyz"
    while (total < bytes) {
      line = sprintf("f%d l%d ", f, n) substr(pad, 1, (n * 7 + f) % 80)
      print line; total += length(line) + 1; n++
    }
  }' >"$out/$name"
  url="$WEB/webhdfs/v1$DIR/$name?op=CREATE&overwrite=true&blocksize=$((BLOCK_MB * 1048576))&user.name=$USER_NAME"
  # Two steps, as WebHDFS wants: the NameNode names a DataNode, the bytes go there.
  loc=$(curl -sS --max-time 30 -i -X PUT "$url" | tr -d '\r' | awk 'tolower($1) == "location:" {print $2}')
  [[ -n "$loc" ]] || { echo "hdfs-gen-text: the NameNode at $WEB gave no DataNode for $DIR/$name" >&2; exit 1; }
  curl -sSf --max-time 300 -X PUT -T "$out/$name" "$loc" >/dev/null
  echo "$DIR/$name $(stat -c %s "$out/$name") bytes"
done
