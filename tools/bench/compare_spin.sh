#!/usr/bin/env bash
# SPIN and rseqmc side by side on the same question (DESIGN.md §9; figures in
# tools/bench/README.md, "SPIN comparison").
#
# For each model (the per-CPU counter and the per-CPU spinlock: 2 CPUs,
# 2 threads, 1 op each, at most K injected events per execution) this runs
#   * SPIN: spin -DMAXEV=K -a tools/bench/spin/<model>.pml (which includes
#     rseq_kernel.pml), gcc -O2 -DSAFETY pan.c
#     (exhaustive storage, partial-order reduction on), ./pan -w20;
#   * rseqmc: the same scenario (scenarios/percpu_<model>.rsq) with
#     --strategy dpor and --strategy stateful and --max-events K, through
#     `rseqmc check ... --json` when the rseqmc binary has it, else through the
#     driver mode of tools/bench/check_bench;
# each RUNS times, interleaved (so load on a shared machine hits both alike),
# and prints the medians: SPIN states stored / transitions / wall seconds of
# ./pan, rseqmc executions / wall seconds (and visited states for stateful),
# CPU seconds (user+sys) next to each wall time, and the ratios of SPIN's wall
# time to rseqmc's (above 1: rseqmc is faster).
# Wall times are of the whole process (startup, parsing and the search);
# SPIN's one-off `spin -a` + gcc time is printed separately.
#
# Usage: tools/bench/compare_spin.sh [-b BUILD_DIR] [-n RUNS] [-e "K..."] [-m "MODEL..."] [-d]
#   -b  build directory holding tools/bench/check_bench (default: $RSEQMC_BUILD
#       or build/); built with `cmake --build` if missing
#   -n  runs per measurement (default 5; the median is printed)
#   -e  events bounds to compare (default "1")
#   -m  models (default "counter spinlock")
#   -d  use check_bench --explore even when `rseqmc check` exists
# Installs the `spin` package with apt-get if it is missing (benchmark tool;
# not part of tools/install-deps.sh).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${RSEQMC_BUILD:-$root/build}
runs=5
bounds="1"
models="counter spinlock"
force_driver=0
while getopts "b:n:e:m:dh" opt; do
  case $opt in
    b) build=$OPTARG ;;
    n) runs=$OPTARG ;;
    e) bounds=$OPTARG ;;
    m) models=$OPTARG ;;
    d) force_driver=1 ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done

die() { echo "compare_spin: $*" >&2; exit 1; }

# --- tools -----------------------------------------------------------------
if ! command -v spin >/dev/null 2>&1; then
  if [[ $(id -u) -eq 0 ]]; then sudo=(); elif command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
    die "spin is not installed and this is not root: apt-get install spin"
  fi
  echo "compare_spin: installing spin (apt-get)" >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq spin >/dev/null 2>&1 ||
    { "${sudo[@]}" apt-get update -qq >/dev/null 2>&1 &&
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq spin >/dev/null 2>&1; } ||
    die "could not install spin"
fi
command -v gcc >/dev/null 2>&1 || die "gcc is needed to compile SPIN's pan.c"
command -v python3 >/dev/null 2>&1 || die "python3 is needed to read the JSON lines"

rseqmc_bin=$build/tools/rseqmc/rseqmc
driver=$build/tools/bench/check_bench
use_check=0
if [[ $force_driver -eq 0 && -x $rseqmc_bin ]] && "$rseqmc_bin" help 2>&1 | grep -q 'rseqmc check'; then
  use_check=1
else
  if [[ ! -x $driver ]]; then
    echo "compare_spin: building check_bench in $build" >&2
    cmake --build "$build" --target check_bench >/dev/null || die "could not build check_bench in $build"
  fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/compare_spin.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Fingerprint of a scenario's statements (comments and blank lines dropped):
# each .pml records the one it was written against.
fingerprint() { sed -e 's/#.*//' -e 's/[[:space:]]\+/ /g' -e 's/^ //' -e 's/ $//' "$1" | grep -v '^$' | sha256sum | cut -c1-16; }

# --- measurement helpers ---------------------------------------------------
# cpu_ms: user+sys CPU of this shell's finished children so far, in ms
# (sets CPU_MS; `times` must run in this shell, not in a $(...) subshell).
cpu_ms() {
  times >"$work/times"
  CPU_MS=$(tail -1 "$work/times" | awk '{ tot = 0;
    for (i = 1; i <= NF; i++) { split($i, b, "m"); sub("s", "", b[2]); tot += b[1] * 60 + b[2] }
    printf "%d", tot * 1000 }')
}
# run_timed OUT CMD...: runs CMD with stdout to OUT; sets WALL (s) and CPU (s).
run_timed() {
  local out=$1; shift
  local c0 w0 w1
  cpu_ms; c0=$CPU_MS
  w0=$EPOCHREALTIME
  "$@" >"$out" 2>"$out.err" || true
  w1=$EPOCHREALTIME
  cpu_ms
  WALL=$(awk -v a="$w0" -v b="$w1" 'BEGIN { printf "%.4f", b - a }')
  CPU=$(awk -v a="$c0" -v b="$CPU_MS" 'BEGIN { printf "%.3f", (b - a) / 1000 }')
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
json_field() { python3 -c 'import json,sys
try:
    d = json.loads(sys.stdin.read().strip().splitlines()[-1])
except Exception:
    print("-"); sys.exit(0)
v = d
for k in sys.argv[1].split("."):
    v = v.get(k, "-") if isinstance(v, dict) else "-"
print(str(v).lower() if isinstance(v, bool) else v)' "$1"; }

rseqmc_cmd() {  # scenario strategy events
  if [[ $use_check -eq 1 ]]; then
    echo "$rseqmc_bin check $1 --strategy $2 --max-events $3 --json"
  else
    echo "$driver --explore $1 --strategy $2 --max-events $3"
  fi
}

echo "compare_spin: $(spin -V | head -1); gcc $(gcc -dumpfullversion); rseqmc via" \
  "$([[ $use_check -eq 1 ]] && echo "rseqmc check" || echo "check_bench --explore"); $runs run(s) each, medians;" \
  "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '\n%-9s %2s | %10s %11s %8s %8s | %10s %8s %8s | %10s %9s %8s %8s | %s\n' \
  model ev "spin states" transitions "pan s" "pan cpu" "dpor execs" "dpor s" "dpor cpu" \
  "stful execs" "stful states" "stful s" "stful cpu" "pan s / dpor s, / stful s"
printf '%s\n' "$(printf '%.0s-' {1..170})"

compile_notes=()
for model in $models; do
  pml=$root/tools/bench/spin/$model.pml
  rsq=$root/scenarios/percpu_$model.rsq
  [[ -f $pml ]] || die "no model $pml"
  if [[ -f $rsq ]]; then
    want=$(sed -n 's/.*rsq-fingerprint: \([0-9a-f]*\).*/\1/p' "$pml" | head -1)
    have=$(fingerprint "$rsq")
    if [[ -n $want && $want != "$have" ]]; then
      echo "compare_spin: WARNING: scenarios/percpu_$model.rsq changed since $model.pml was written" \
        "(fingerprint $have, model written for $want): re-check the pc table in $model.pml" >&2
    fi
  fi
  for ev in $bounds; do
    dir=$work/$model.$ev
    mkdir -p "$dir"
    cp "$root"/tools/bench/spin/*.pml "$dir/"   # the model and rseq_kernel.pml
    c0=$EPOCHREALTIME
    (cd "$dir" && spin -DMAXEV="$ev" -a "$model.pml" >/dev/null && gcc -O2 -w -DSAFETY -o pan pan.c) ||
      die "spin -a / gcc failed for $model.pml"
    c1=$EPOCHREALTIME
    compile_notes+=("$model ev=$ev: $(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }') s")
    pan_w="" pan_c="" dp_w="" dp_c="" sf_w="" sf_c=""
    for ((i = 0; i < runs; i++)); do
      cd "$dir"
      run_timed pan.out ./pan -w20
      cd "$root"
      pan_w+=" $WALL" pan_c+=" $CPU"
      run_timed "$dir/dpor.json" $(rseqmc_cmd "percpu_$model" dpor "$ev")
      dp_w+=" $WALL" dp_c+=" $CPU"
      run_timed "$dir/stateful.json" $(rseqmc_cmd "percpu_$model" stateful "$ev")
      sf_w+=" $WALL" sf_c+=" $CPU"
    done
    grep -q 'errors: 0' "$dir/pan.out" || echo "compare_spin: SPIN reports errors for $model ev=$ev (see pan output)" >&2
    states=$(awk '/states, stored/ { print $1 }' "$dir/pan.out")
    trans=$(awk '/transitions \(= stored\+matched\)/ { print $1 }' "$dir/pan.out")
    for f in dpor stateful; do
      v=$(json_field verdict <"$dir/$f.json")
      [[ $v == pass ]] || echo "compare_spin: rseqmc $f on percpu_$model ev=$ev: verdict $v ($(tail -1 "$dir/$f.json"))" >&2
    done
    pw=$(echo "$pan_w" | median) dw=$(echo "$dp_w" | median) sw=$(echo "$sf_w" | median)
    printf '%-9s %2s | %10s %11s %8s %8s | %10s %8s %8s | %10s %9s %8s %8s | %s\n' "$model" "$ev" \
      "$states" "$trans" "$pw" "$(echo "$pan_c" | median)" \
      "$(json_field executions <"$dir/dpor.json")" "$dw" "$(echo "$dp_c" | median)" \
      "$(json_field executions <"$dir/stateful.json")" "$(json_field states <"$dir/stateful.json")" \
      "$sw" "$(echo "$sf_c" | median)" \
      "$(awk -v a="$pw" -v b="$dw" -v c="$sw" 'BEGIN { printf "%.2fx, %.2fx", a / b, a / c }')"
  done
done
echo
echo "SPIN's spin -a + gcc (once per model and bound, not in the pan times):"
printf '  %s\n' "${compile_notes[@]}"
echo "pan: -DSAFETY (no cycle checks), exhaustive storage (no bitstate), partial-order reduction on, -w20 hash table."
