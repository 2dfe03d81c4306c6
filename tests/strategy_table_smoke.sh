#!/bin/sh
# ctest strategy_table_smoke: tools/bench/strategy_table on two small built-ins
# (percpu_counter and the planted bug buggy/cpu_not_rechecked) at K=1 with
# --counts-only (no times, RSS or fastest: reproducible output) and a cap of
# 20,000 executions. Asserts the exit status (0: no count differs from
# tests/golden/explore_counts.txt), every row's exact counts, and that the
# golden column compared the DPOR and stateful rows (`= golden`). Plain DFS
# at K=1 has no golden line; its counts here are pinned instead (percpu_counter
# completes in 3,310 since the ample sets; it stopped at the cap before). A changed count needs the reason in the commit message, as
# a golden count does.
#
# Then the same against a copy of the goldens with one count changed: the
# table must say DIFFERS and exit 1 (the column can fail).
#
# usage: strategy_table_smoke.sh STRATEGY_TABLE GOLDEN_FILE
set -u
out=$("$1" --scenarios percpu_counter,buggy/cpu_not_rechecked --counts-only --cap-executions 20000 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || { echo "strategy_table exited $rc"; exit 1; }
fail=0
for want in \
  "percpu_counter +dfs +3310 +0 +- +4 +exhausted +-" \
  "percpu_counter +dpor +81 +0 +- +4 +exhausted += golden" \
  "percpu_counter +stateful +420 +392 +2486 +4 +exhausted += golden" \
  "buggy/cpu_not_rechecked +dfs +389 +0 +- +3 +exhausted +-" \
  "buggy/cpu_not_rechecked +dpor +43 +0 +- +3 +exhausted += golden" \
  "buggy/cpu_not_rechecked +stateful +108 +83 +789 +3 +exhausted += golden"; do
  printf '%s\n' "$out" | grep -Eq "^$want\$" || { echo "missing row: $want"; fail=1; }
done
[ "$(printf '%s\n' "$out" | grep -c 'exhausted\|max-executions')" -eq 6 ] || { echo "expected exactly 6 rows"; fail=1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/strategy_table_smoke.XXXXXX")
trap 'rm -rf "$dir"' EXIT
sed 's/^\(percpu_counter | dpor events<=1 | executions\) 81 /\1 82 /' "$2" >"$dir/golden.txt"
grep -q 'percpu_counter | dpor events<=1 | executions 82 ' "$dir/golden.txt" || { echo "could not plant the change"; exit 1; }
bad=$("$1" --scenarios percpu_counter --strategies dpor --counts-only --golden "$dir/golden.txt" 2>&1)
brc=$?
printf '%s\n' "$bad"
[ $brc -eq 1 ] || { echo "a changed golden count gave exit status $brc, not 1"; fail=1; }
printf '%s\n' "$bad" | grep -q "percpu_counter .*dpor .* DIFFERS (golden: executions 82 " || { echo "no DIFFERS row"; fail=1; }
exit $fail
