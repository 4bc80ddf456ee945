# Sourced by the prerequisite scripts: `apt_install_missing PKG...` installs the named Debian
# packages (as root, quietly, without recommends) and says so; with none named it does nothing.
# Not root: it names what is missing and fails, so a fresh machine says what it lacks.
apt_install_missing() {
  (($#)) || return 0
  [[ $(id -u) == 0 ]] || { say "missing packages: $*; run as root or install them"; exit 1; }
  say "installing $*"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
