#!/usr/bin/env bash
# Installs what the dockerized test cluster (`tests/cluster/cluster.sh up --docker`) needs, via
# apt as root: Debian's Docker engine (docker.io: dockerd and its client), docker-compose (1.29,
# compose file format 3) and debootstrap (the images' base root file system is built locally:
# there is no image registry). Nothing here starts a daemon; cluster.sh starts its own dockerd.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/apt-missing.sh"
say() { printf '[docker-prereqs] %s\n' "$*" >&2; }

missing=()
[[ -x /usr/sbin/dockerd && -x /usr/bin/docker ]] || missing+=(docker.io)
[[ -x /usr/bin/docker-compose ]] || missing+=(docker-compose)
[[ -x /usr/sbin/debootstrap ]] || missing+=(debootstrap)
# Without recommends: no containerd services or bridge utilities beyond what dockerd needs.
# Debian's package enables docker.service; with no systemd here nothing starts, and where
# systemd runs we still use our own dockerd (own socket and data root).
apt_install_missing ${missing[@]+"${missing[@]}"}
say "ok: $(/usr/bin/docker --version), $(/usr/bin/docker-compose version --short 2>/dev/null), debootstrap $(dpkg-query -W -f='${Version}' debootstrap)"
