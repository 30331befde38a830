#!/usr/bin/env bash
# Installs the Debian 12 packages servebench needs (only those missing), then configures and
# builds it in ./build. Safe to run again: it does only what is left to do.
#   scripts/setup.sh            install + build (RelWithDebInfo)
#   BUILD_DIR=b scripts/setup.sh   build elsewhere
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ ninja-build pkg-config libcurl4-openssl-dev libssl-dev zlib1g-dev nlohmann-json3-dev
          libcli11-dev libfmt-dev libyaml-cpp-dev libre2-dev libgtest-dev libgmock-dev libbenchmark-dev
          # quality suites: generated media (images, MP4, speech), the code sandbox
          libcairo2-dev libpango1.0-dev fonts-dejavu-core libavcodec-dev libavformat-dev
          libavutil-dev libswscale-dev libespeak-ng-dev libseccomp-dev python3
          # the run store (docs/store.md): SQLite, and libpqxx for a team's PostgreSQL
          libsqlite3-dev libpqxx-dev
          # packaging: cpack's dpkg-shlibdeps (scripts/package-test.sh, docs/install.md)
          dpkg-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir=${BUILD_DIR:-build}
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" -G Ninja "${launcher[@]}" ${CMAKE_ARGS:-} >/dev/null
fi
cmake --build "$build_dir" -j "$(nproc)"
