#!/usr/bin/env bash
# Fuzzes the .rsq parser with libFuzzer for a bounded time.
#
# Configures a clang build (-DRSEQMC_FUZZ=ON: ASan + coverage), builds
# tests/fuzz/parser_fuzz.cc, seeds a corpus with the built-in scenarios and
# runs the fuzzer. Each input must parse or raise InputError, and whatever
# parses must survive print -> parse unchanged; a crash or mismatch leaves
# a reproducer crash-* / leak-* in the current directory and fails the script.
#
# Usage: tools/fuzz-parser.sh [SECONDS] [extra libFuzzer flags...]
#   SECONDS     total fuzzing time (default 60)
#   BUILD_DIR   build directory (default build-fuzz under the repository)
#   CORPUS_DIR  working corpus, kept between runs (default $BUILD_DIR/parser-corpus)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
build=${BUILD_DIR:-$root/build-fuzz}
corpus=${CORPUS_DIR:-$build/parser-corpus}

cxx=${CXX:-}
if [[ -z "$cxx" ]]; then
  for c in clang++ clang++-16 clang++-15 clang++-14; do
    if command -v "$c" >/dev/null; then cxx=$c; break; fi
  done
fi
if [[ -z "$cxx" ]]; then
  echo "fuzz-parser: clang++ is needed (apt-get install clang)" >&2
  exit 77
fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRSEQMC_FUZZ=ON -DRSEQMC_TESTS=OFF -DRSEQMC_BENCH=OFF >/dev/null
ninja -C "$build" rseqmc_parser_fuzz

mkdir -p "$corpus"
shopt -s nullglob
for f in "$root"/scenarios/*.rsq "$root"/scenarios/buggy/*.rsq; do
  cp -n "$f" "$corpus/" 2>/dev/null || true
done

exec "$build/tests/fuzz/rseqmc_parser_fuzz" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
  -rss_limit_mb=4096 -dict="$root/tests/fuzz/rsq.dict" -print_final_stats=1 "$@" "$corpus"
