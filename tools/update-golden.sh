#!/usr/bin/env bash
# Regenerates the golden timelines under tests/golden/*.txt and the golden
# execution counts (tests/golden/explore_counts.txt, Explore.Golden*) and --strategy
# auto's pick on every built-in (tests/golden/strategy_auto.txt): builds
# the test binary and runs the golden tests with RSEQMC_UPDATE_GOLDEN=1, which makes
# them rewrite their files instead of comparing. Review the result with
# `git diff tests/golden` before committing it.
#
#   tools/update-golden.sh            # build dir: build/ (RSEQMC_BUILD_DIR overrides)
set -euo pipefail
cd "$(dirname "$0")/.."

build=${RSEQMC_BUILD_DIR:-build}
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -G Ninja -DRSEQMC_BENCH=OFF
fi
cmake --build "$build" --target rseqmc_tests
filter='GoldenTest.*:Explore.Golden*:StrategyChoice.Golden*'
RSEQMC_UPDATE_GOLDEN=1 "$build/tests/rseqmc_tests" --gtest_filter="$filter" --gtest_brief=1
# The files now match: the same tests must pass when comparing.
"$build/tests/rseqmc_tests" --gtest_filter="$filter" --gtest_brief=1
git --no-pager diff --stat -- tests/golden || true
