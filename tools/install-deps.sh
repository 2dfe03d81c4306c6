#!/usr/bin/env bash
# Installs the Debian 12 packages rseqmc needs to build and test, and only the
# ones that are missing. Idempotent and silent when everything is installed.
# Run as root (or as a user with sudo) on Debian 12 (bookworm).
#
#   tools/install-deps.sh            what the build and the tests need
#   tools/install-deps.sh --browser  also headless Chromium and Selenium for
#                                    the timeline viewer's browser test
#                                    (tests/browser/; tools/test.sh asks for it)
#   tools/install-deps.sh --bench    also SPIN and GNU time for
#                                    tools/bench/spin_compare (rseqmc vs SPIN;
#                                    without them it skips the SPIN column and
#                                    ctest spin_compare_smoke is skipped;
#                                    tools/test.sh asks for it)
set -euo pipefail

packages=(
  build-essential cmake ninja-build
  libboost-context-dev libboost-program-options-dev
  librapidcheck-dev libgtest-dev libgmock-dev libbenchmark-dev
  libxbyak-dev libzydis-dev libxxhash-dev libelf-dev
  clang libclang-rt-14-dev
  python3-matplotlib  # tools/mmap-seed/seed-table --chart, tools/alloc/report
)
# The browser test of the HTML timeline viewer (about 100 MB): optional, so
# that the README's first command stays quick.
browser_packages=(chromium chromium-driver python3-selenium fonts-dejavu-core)
# The SPIN comparison (tools/bench/spin_compare): the model checker it
# compares with, and /usr/bin/time for each process's peak memory.
bench_packages=(spin time)
for arg in "$@"; do
  case $arg in
    --browser) packages+=("${browser_packages[@]}") ;;
    --bench) packages+=("${bench_packages[@]}") ;;
    *) echo "usage: tools/install-deps.sh [--browser] [--bench]" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  if [[ "$status" != "installed" ]]; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "install-deps: missing packages: ${missing[*]}; run this script as root to install them" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
