#!/usr/bin/env bash
# Builds rseqmc and runs every test: installs missing packages (with the
# browser for the timeline viewer's test, and SPIN for spin_compare_smoke:
# without either, ctest would skip that test and still say "passed"), then
#   1. build/       warnings as errors, ctest (with the example project built
#      against the installed, FetchContent and Debian packages, and the viewer
#      in headless Chromium; screenshot in build/artifacts/); then the
#      kernel-harness tests (JIT, cross-check, stress) once more, each repeated
#      until it fails, at most 3 times: they race real threads and clocks, so a
#      flaky one shows here rather than in the next session's CI run;
#   2. build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer, ctest;
#   3. the parser fuzzer for RSEQMC_FUZZ_SECONDS (default 30; 0 skips it), when
#      clang and tools/fuzz-parser.sh exist;
#   4. kernel/qemu/run: the patched kernel booted under QEMU at -smp 2 and 4,
#      with the self-tests and rseqmc crosscheck inside, its per-ABI table
#      (kernel/README.md; a cached kernel boots at once, a cold build adds
#      minutes). Its exit 77 (QEMU or the kernel source cannot be installed)
#      is a skip that the last line says, never a pass. RSEQMC_QEMU=0 leaves
#      the stage out, and the last line says that too.
# Exits non-zero on the first failure. Run from anywhere; works on the repo root.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${RSEQMC_TEST_JOBS:-2}
fuzz_seconds=${RSEQMC_FUZZ_SECONDS:-30}

tools/install-deps.sh --browser --bench

echo "== build (warnings as errors)"
cmake -S . -B build -G Ninja -DRSEQMC_WERROR=ON
cmake --build build
ctest --test-dir build --output-on-failure -j"$jobs"
echo "== kernel-harness tests again (--repeat until-fail:3)"
# The names of tests/CMakeLists.txt's RSEQMC_KERNEL_TESTS (they run serially).
ctest --test-dir build --output-on-failure --repeat until-fail:3 \
  -R '^(Jit|Crosscheck|CrosscheckCli|CrosscheckProperty|CrosscheckReplay|StressTest)\.'

echo "== build-asan (ASan + UBSan)"
cmake -S . -B build-asan -G Ninja -DRSEQMC_SANITIZE=ON -DRSEQMC_BENCH=OFF
cmake --build build-asan
ctest --test-dir build-asan --output-on-failure -j"$jobs"

if [[ "$fuzz_seconds" -gt 0 ]] && command -v clang++ >/dev/null 2>&1 && [[ -x tools/fuzz-parser.sh ]]; then
  echo "== fuzz the parser for ${fuzz_seconds}s"
  tools/fuzz-parser.sh "$fuzz_seconds"
fi
qemu_note=""
if [[ "${RSEQMC_QEMU:-1}" != 0 ]]; then
  echo "== kernel/qemu/run (patched kernel under QEMU)"
  qemu_rc=0
  kernel/qemu/run || qemu_rc=$?
  if [[ $qemu_rc -eq 77 ]]; then
    echo "== kernel/qemu/run SKIPPED (exit 77): nothing was tested under QEMU, see its message above"
    qemu_note=" (QEMU stage SKIPPED: see the kernel/qemu/run message above)"
  elif [[ $qemu_rc -ne 0 ]]; then
    echo "== kernel/qemu/run FAILED (exit $qemu_rc): see its table and messages above" >&2
    exit "$qemu_rc"
  fi
else
  qemu_note=" (QEMU stage not run: RSEQMC_QEMU=0)"
fi
echo "== all tests passed${qemu_note}"
