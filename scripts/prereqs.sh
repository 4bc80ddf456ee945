#!/usr/bin/env bash
# Installs what the real test cluster and the build need, so the two README commands work on
# a fresh machine: a Java 17 JDK (Hadoop 3.4 breaks on Java 23+), Maven (fetches the Hadoop
# jars from Maven Central), curl and python3 (cluster readiness checks), an MIT Kerberos KDC and
# client tools (the `--secure` cluster runs its own KDC on loopback), Chromium (the tracking
# page's browser test), a Rust toolchain, and as
# root the Docker engine the dockerized test cluster runs on (docker-prereqs.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/apt-missing.sh"
say() { printf '[prereqs] %s\n' "$*" >&2; }

missing=()
compgen -G "/usr/lib/jvm/java-17-openjdk*" >/dev/null || compgen -G "/usr/lib/jvm/temurin-17*" >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
command -v curl >/dev/null || missing+=(curl)
command -v python3 >/dev/null || missing+=(python3)
# scripts/spark-env.sh installs Spark (pyspark from PyPI) into a venv.
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
command -v flock >/dev/null || missing+=(util-linux)
# python/tests/test_tls.py makes a throwaway certificate with the openssl command.
command -v openssl >/dev/null || missing+=(openssl)
command -v getent >/dev/null || missing+=(libc-bin)
[[ -x /usr/sbin/krb5kdc ]] || missing+=(krb5-kdc)
# kadmin.local (creates the test realm's principals) is packaged with kadmind on Debian.
[[ -x /usr/sbin/kadmin.local ]] || missing+=(krb5-admin-server)
command -v kinit >/dev/null || missing+=(krb5-user)
# tests/cluster/it_surface.rs loads the live tracking page in headless Chromium.
command -v chromium >/dev/null || missing+=(chromium)
apt_install_missing ${missing[@]+"${missing[@]}"}
# The test cluster runs in Docker where Docker can run (tests/cluster/cluster.sh): as root,
# Debian's engine, docker-compose and debootstrap (the images are built here). Without root
# the cluster is the native one.
if [[ $(id -u) == 0 && "${YARN_AM_CLUSTER_DOCKER:-}" != 0 ]]; then
  bash "$(dirname "${BASH_SOURCE[0]}")/docker-prereqs.sh"
fi
if ! command -v cargo >/dev/null; then
  for d in "$HOME/.cargo/bin" /usr/local/cargo/bin; do [[ -x "$d/cargo" ]] && export PATH="$d:$PATH"; done
fi
command -v cargo >/dev/null || { say "no Rust toolchain (cargo) found; install Rust (rustup) first"; exit 1; }
say "ok: $(cargo --version), $(mvn -v 2>/dev/null | head -1)"
