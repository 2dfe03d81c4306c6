#!/bin/sh
# ctest spin_compare_smoke: tools/bench/spin_compare on its smallest question
# (the per-CPU counter, 2 threads x 2 ops, any placement, K=1) and on the
# planted bug (the same counter without the cpu_id compare at start_ip).
# Asserts the verdicts of SPIN and rseqmc (pass, and fail for the bug) and
# rseqmc's exact counts in one exploration over the 4 placements
# (--placements all): 25,929 visited states (stateful, with the default
# hash128 storage and with hash compaction, which collides nowhere here; the
# visited set is shared between the placements, so a state reached from two
# is stored once; 43,368 before the ample sets took rseq_load/rseq_arm and
# any thread's register-only step alone) and 2,322 executions
# (dpor: the sum over the placements, as before). Never a time. Skipped (77) without
# spin or gcc. A changed count needs the reason in the commit message, as a
# golden count (tests/golden/).
#
# usage: spin_compare_smoke.sh SPIN_COMPARE RSEQMC
set -u
dir=$(mktemp -d "${TMPDIR:-/tmp}/spin_compare_smoke.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$1" --rseqmc "$2" --questions counter2,counter2-bug -k 1 \
  --tools spin,stateful,stateful-hash64,dpor --require-spin --tsv "$dir/rows.tsv" >"$dir/out" 2>&1
rc=$?
[ $rc -eq 77 ] && exit 77
cat "$dir/out"
[ $rc -eq 0 ] || { echo "spin_compare exited $rc"; exit 1; }
tab=$(printf '\t')
for want in \
  "counter2${tab}1${tab}2${tab}spin${tab}[0-9]*${tab}pass${tab}" \
  "counter2${tab}1${tab}2${tab}rseqmc-stateful${tab}25929${tab}pass${tab}" \
  "counter2${tab}1${tab}2${tab}rseqmc-stateful-hash64${tab}25929${tab}pass${tab}" \
  "counter2${tab}1${tab}2${tab}rseqmc-dpor${tab}552${tab}pass${tab}" \
  "counter2-bug${tab}1${tab}2${tab}spin${tab}[0-9]*${tab}fail${tab}" \
  "counter2-bug${tab}1${tab}2${tab}rseqmc-stateful${tab}[0-9]*${tab}fail${tab}" \
  "counter2-bug${tab}1${tab}2${tab}rseqmc-stateful-hash64${tab}[0-9]*${tab}fail${tab}" \
  "counter2-bug${tab}1${tab}2${tab}rseqmc-dpor${tab}[0-9]*${tab}fail${tab}"; do
  grep -q "^$want" "$dir/rows.tsv" || { echo "no row matching: $want"; cat "$dir/rows.tsv"; exit 1; }
done
[ "$(wc -l <"$dir/rows.tsv")" -eq 8 ] || { echo "expected 8 rows"; cat "$dir/rows.tsv"; exit 1; }
echo "spin_compare_smoke: verdicts and counts as expected"
