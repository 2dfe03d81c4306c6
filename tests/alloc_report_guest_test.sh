#!/bin/sh
# tools/alloc/report --guest FILE: bad input is exit 2 with the file (and
# line) named, before anything runs; nothing the user gave is written.
# Usage: alloc_report_guest_test.sh PYTHON REPORT BUILD_DIR
set -u
py=$1 report=$2 build=$3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {  # expect WHAT PATTERN ARGS...: exit 2 and PATTERN in the output
  what=$1 pattern=$2
  shift 2
  out=$("$py" "$report" --build "$build" --out "$tmp/out" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne 2 ] || ! printf '%s\n' "$out" | grep -q -- "$pattern"; then
    echo "FAIL: $what: exit $rc, wanted 2 and '$pattern' in: $out"
    fail=1
  else
    echo "ok: $what"
  fi
}
expect "missing file" "report: --guest $tmp/none.csv: cannot read it" --guest "$tmp/none.csv"
printf 'a,b\n1,2\n' > "$tmp/notbench.csv"
expect "not an alloc_bench CSV" "$tmp/notbench.csv:1:1: not an alloc_bench CSV (no column variant, threads, ns_per_op)" \
  --guest "$tmp/notbench.csv"
printf 'variant,cpu_read,threads,ops,wall_s,ns_per_op\npreempt_lock,-,x,1,1,2\n' > "$tmp/badnum.csv"
expect "a bad number" "$tmp/badnum.csv:2:1: threads 'x' or ns_per_op '2' is not a number" --guest "$tmp/badnum.csv"
printf 'variant,cpu_read,threads,ops,wall_s,ns_per_op\npercpu_rseq,cpu_id,1,1,1,2\n' > "$tmp/nopl.csv"
expect "no preempt_lock row" "$tmp/nopl.csv: no preempt_lock row" --guest "$tmp/nopl.csv"
[ ! -e "$tmp/out" ] || { echo "FAIL: --out was created before the input was checked"; fail=1; }
exit $fail
