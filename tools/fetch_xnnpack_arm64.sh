#!/usr/bin/env bash
# Unpacks Debian's arm64 XNNPACK + pthreadpool (and cpuinfo, which they load) into a
# folder, for the linux-aarch64 preset: cmake --preset linux-aarch64 finds them there.
#
#   tools/fetch_xnnpack_arm64.sh [PREFIX]    (default: build/deps/xnnpack-arm64)
#
# Why not `dpkg --add-architecture arm64 && apt-get install libxnnpack-dev:arm64`: the
# Debian 12 XNNPACK and pthreadpool packages are not Multi-Arch: same, so installing the
# arm64 ones removes the host's (amd64) ones. `apt-get download` needs no architecture
# added to dpkg, only arm64 in apt's list of architectures for this one command.
set -euo pipefail
KILN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${1:-$KILN_ROOT/build/deps/xnnpack-arm64}"
PACKAGES=(libxnnpack0 libxnnpack-dev libpthreadpool0 libpthreadpool-dev libcpuinfo0)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"  # apt's download user must be able to write here
(cd "$work" && apt-get download -o APT::Architectures::=amd64 -o APT::Architectures::=arm64 \
  "${PACKAGES[@]/%/:arm64}")
mkdir -p "$PREFIX"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$PREFIX"; done
echo "XNNPACK for arm64 in $PREFIX/usr (lib/aarch64-linux-gnu, include)"
