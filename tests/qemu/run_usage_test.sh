#!/usr/bin/env bash
# kernel/qemu/run's bad input: every RSEQMC_QEMU_* value it cannot use is
# refused with exit status 2 and a message naming the variable and the value,
# before anything is installed, built or booted.
# Usage: run_usage_test.sh REPO_ROOT
set -uo pipefail
run=$1/kernel/qemu/run
fails=0
expect_usage_error() {  # VAR=VALUE EXPECTED_MESSAGE_PART
  local out rc
  out=$(env "$1" "$run" 2>&1 </dev/null)
  rc=$?
  if [[ $rc -ne 2 || $out != *"$2"* ]]; then
    echo "FAIL: $1: exit $rc (want 2), output: $out"
    fails=$((fails + 1))
  else
    echo "ok: $1 -> exit 2: $out"
  fi
}
expect_usage_error "RSEQMC_QEMU_SMP= " "RSEQMC_QEMU_SMP is blank"
expect_usage_error RSEQMC_QEMU_SMP=9 "RSEQMC_QEMU_SMP: '9' is not 1..8"
expect_usage_error "RSEQMC_QEMU_SMP=2 x" "RSEQMC_QEMU_SMP: 'x' is not 1..8"
expect_usage_error RSEQMC_QEMU_PERCPU_OPS=yes "RSEQMC_QEMU_PERCPU_OPS: 'yes' is not 0 or 1"
expect_usage_error RSEQMC_QEMU_SAMPLES=-1 "RSEQMC_QEMU_SAMPLES: '-1' is not a number"
expect_usage_error RSEQMC_QEMU_MAX_SINGLE_EVENTS=all "RSEQMC_QEMU_MAX_SINGLE_EVENTS: 'all' is not a number"
expect_usage_error RSEQMC_QEMU_TIMEOUT=0 "RSEQMC_QEMU_TIMEOUT: '0' is not a number of seconds"
expect_usage_error RSEQMC_QEMU_MMAP_SEED_SMP=9 "RSEQMC_QEMU_MMAP_SEED_SMP: '9' is not 0..8"
[[ $fails -eq 0 ]]
