#!/usr/bin/env bash
# Packs this machine's Debian Python 3 (the python3 package: /usr/bin/python3.X and its
# standard library /usr/lib/python3.X) as a relocatable Python environment archive, and prints
# its path: bin/python3 and lib/python3.X/ (Python finds its library next to its executable).
# For nodes of the same Debian suite without Python, such as the docker test cluster's (its
# base image is a debootstrap of this machine's suite): ship it with --archives
# <archive>#pyenv and --conf spark.pyspark.python=./pyenv/bin/python3, as a conda-pack or
# venv-pack archive would be shipped on a real cluster. Made once (deterministic bytes, so
# yarn-am's staging cache uploads it once); about 12 MB.
#
#   bash scripts/python-env.sh      # prints the archive's path (~/.cache/yarn-am/...)
set -euo pipefail
py=/usr/bin/python3
[[ -x "$py" ]] || { echo "[python-env] no $py (apt-get install python3-minimal)" >&2; exit 1; }
ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
lib=/usr/lib/python$ver
[[ -f "$lib/os.py" ]] || { echo "[python-env] no standard library at $lib" >&2; exit 1; }
cache=$HOME/.cache/yarn-am
out="$cache/python-env-$ver-$(sha256sum "$(readlink -f "$py")" | cut -c1-12).tar.gz"
if [[ ! -f "$out" ]]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/python-env.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/bin" "$tmp/lib"
  cp "$(readlink -f "$py")" "$tmp/bin/python3"
  # The standard library without its tests, GUI and packaging tools, nor compiled caches.
  tar -C /usr/lib -c --exclude=__pycache__ --exclude="python$ver/test" --exclude="python$ver/idlelib" \
    --exclude="python$ver/tkinter" --exclude="python$ver/turtledemo" --exclude="python$ver/ensurepip" \
    --exclude="python$ver/lib2to3" --exclude="python$ver/config-*" --exclude="python$ver/dist-packages" \
    --exclude="python$ver/site-packages" "python$ver" | tar -C "$tmp/lib" -x
  tar -C "$tmp" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -c bin lib | gzip -n >"$out.part"
  mv "$out.part" "$out"
fi
echo "$out"
