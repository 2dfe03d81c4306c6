#!/bin/sh
# ctest random_vs_relacy_smoke: tools/bench/random_vs_relacy with --counts-only
# (no rates: reproducible output), 20,000 executions per side, one round. Both
# tools explore the same lost-update race (2 threads x 1 non-atomic increment
# of a shared counter) with seeded random schedulers, so the numbers of
# executions that lost an update / counted both are exact: Relacy's (its random
# scheduler seeds each iteration with its index), the simulator loop's at CPU
# switch probabilities 0.25 and 0.5, and the random strategy's (`rseqmc check
# --strategy random`, K=0; and asked at every boundary, which must give the
# counts of the random stream before the local-step shortcut). Each side must find the race and the clean result,
# and all executions must pass their property. Never a time.
#
# usage: random_vs_relacy_smoke.sh RANDOM_VS_RELACY
set -u
out=$("$1" --counts-only --iterations 20000 --repetitions 1 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || { echo "random_vs_relacy exited $rc"; exit 1; }
fail=0
for want in \
  "Relacy, random scheduler +4984 +15016" \
  "rseqmc sim loop, CPU switch p=0.25 +4042 +15958" \
  "rseqmc sim loop, CPU switch p=0.5 +7538 +12462" \
  "rseqmc check --strategy random, K=0 +4726 +15274" \
  "  the same, every boundary asked +8266 +11734"; do
  printf '%s\n' "$out" | grep -Eq "^$want\$" || { echo "missing row: $want"; fail=1; }
done
exit $fail
