#!/usr/bin/env bash
# Builds and runs examples/percpu_counter (an unrelated project using rseqmc)
# against rseqmc obtained one of three ways, then checks what a user sees:
#   install  `cmake --install` of this build into a temporary prefix, find_package
#   fetch    FetchContent (add_subdirectory) of the source tree
#   deb      `cpack -G DEB` of this build, the .deb unpacked with `dpkg -x`
#            into a temporary root, find_package from there (exit 77 = skipped
#            when dpkg-deb is not available)
# In every mode the example's suite must pass (the fixed section is rseq-safe,
# the planted bug is caught), and its disabled test, run on purpose, must fail
# with a readable counterexample whose replay command reproduces the failure
# with this build's rseqmc.
#
# usage: example_test.sh MODE SOURCE_DIR BUILD_DIR RSEQMC_BINARY
set -euo pipefail
mode=$1 src=$2 build=$3 rseqmc=$4

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rseqmc-example-$mode.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export TEST_TMPDIR=$tmp/gtest/  # where the failing test saves its .rsq and viewer page
mkdir -p "$TEST_TMPDIR"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

case $mode in
  install)
    cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
    test -f "$tmp/prefix/include/rseqmc/rseqmc.h"
    ls "$tmp"/prefix/lib*/librseqmc.so.0 >/dev/null
    ls "$tmp"/prefix/lib*/cmake/rseqmc/rseqmcConfigVersion.cmake >/dev/null
    config=(-DCMAKE_PREFIX_PATH="$tmp/prefix")
    ;;
  fetch)
    config=(-DRSEQMC_SOURCE_DIR="$src")
    ;;
  deb)
    if ! command -v dpkg-deb >/dev/null; then
      echo "SKIP: dpkg-deb is not installed: the Debian package cannot be built or unpacked" >&2
      exit 77
    fi
    (cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" >"$tmp/cpack.log")
    deb=$(ls "$tmp"/rseqmc_*.deb)
    info=$(dpkg-deb --info "$deb") contents=$(dpkg-deb --contents "$deb")  # (grep -q would cut the pipe)
    grep -q 'Depends: libboost-context1.74.0' <<<"$info"
    for f in ./usr/include/rseqmc/rseqmc.h ./usr/include/rseqmc/gtest.h ./usr/include/rseqmc/rapidcheck.h \
             ./usr/bin/rseqmc ./usr/lib/librseqmc.so.0.1.0 ./usr/lib/cmake/rseqmc/rseqmcConfigVersion.cmake; do
      grep -qF " $f" <<<"$contents" || { echo "FAIL: the package lacks $f" >&2; echo "$contents" >&2; exit 1; }
    done
    dpkg -x "$deb" "$tmp/root"
    config=(-DCMAKE_PREFIX_PATH="$tmp/root/usr")
    echo "built and unpacked $(basename "$deb")"
    ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac

cmake -S "$src/examples/percpu_counter" -B "$tmp/build" -G Ninja "${launcher[@]}" "${config[@]}" >"$tmp/configure.log" ||
  { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/build" -j2 >"$tmp/build.log" || { tail -50 "$tmp/build.log"; exit 1; }
test=$tmp/build/percpu_counter_test

# The suite passes: fixed section safe, planted bug caught (gtest-spi).
(cd "$tmp" && "$test") >"$tmp/suite.log" 2>&1 || { cat "$tmp/suite.log"; exit 1; }
grep -q '\[  PASSED  \]' "$tmp/suite.log"

# The planted bug as a user sees it: the test fails with a counterexample.
set +e
(cd "$tmp" && "$test" --gtest_also_run_disabled_tests --gtest_filter='*DISABLED_PlantedBug*') >"$tmp/fail.log" 2>&1
code=$?
set -e
cat "$tmp/fail.log"
[[ $code -eq 1 ]] || { echo "FAIL: expected the planted-bug test to fail (exit 1), got $code" >&2; exit 1; }
for want in 'is not rseq-safe: verdict property' 'broken: property sum(counter) == THREADS' \
            'sum(counter) = 1' '\*\* MIGRATE' 'final symbols:' 'replay:   rseqmc replay ' 'viewer:   '; do
  grep -q -- "$want" "$tmp/fail.log" || { echo "FAIL: the failure message lacks: $want" >&2; exit 1; }
done

# The printed replay command reproduces the failure with this build's rseqmc.
replay=$(grep -m1 '^replay:   rseqmc replay ' "$tmp/fail.log" | sed 's/^replay:   rseqmc //')
set +e
(cd "$tmp" && eval "\"$rseqmc\" $replay") >"$tmp/replay.log" 2>&1
code=$?
set -e
[[ $code -eq 1 ]] && grep -q 'verdict: FAIL (property)' "$tmp/replay.log" ||
  { cat "$tmp/replay.log"; echo "FAIL: the replay command did not reproduce the failure (exit $code)" >&2; exit 1; }
echo "example ($mode): suite passed, planted bug reported and replayed"
