#!/usr/bin/env bash
# How an MPI job's ranks start: from the cache (KernelCatalog::from_package)
# and from a bundle (KernelCatalog::from_bundle), each rank opening the
# catalog of TREE and loading every CUDA kernel (bench/rank_start.cpp).
#
#   bench/rank_start.sh BIN TREE CUNUMPY_INCLUDE [RANKS]
#
# BIN holds cunumpy-kernels and rank-start; TREE is a kernel tree (Struphy's);
# RANKS (default 64) processes are started at once; each makes its CUDA
# context (which the driver makes one process at a time: timed apart), and
# then all open their catalogs together, as after MPI_Init. Needs a GPU, or the
# project's stand-in driver on LD_LIBRARY_PATH (file operations only: its
# loads do nothing). Prints, per mode: one rank's time (median of 5), the
# wall time of RANKS ranks started together and their slowest and median
# rank, and with strace on PATH the file-system calls of one rank.
set -euo pipefail
bin=$(cd "$1" && pwd)
PATH="$bin:$PATH"
tree=$2 include=$3 ranks=${4:-64}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cache="$work/cache" bundle="$work/kernels.ckb"
targets=(--arch sm_90 --no-ptx --cache-dir "$cache" --cunumpy-include-dir "$include")

"$bin/cunumpy-kernels" build --only cuda "${targets[@]}" --jobs "$(nproc)" "$tree" > /dev/null 2>&1
"$bin/cunumpy-kernels" bundle "${targets[@]}" --output "$bundle" "$tree" 2> /dev/null
declare -A args=([cache]="--tree $tree --cache-dir $cache --cunumpy-include-dir $include" [bundle]="--bundle $bundle")

field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
now_ms() { date +%s%N | awk '{printf "%.1f", $1 / 1e6}'; }

echo "tree: $tree ($(ls -d "$cache"/cuda/*/* | grep -vc '\.lock') cubins), bundle $(stat -c %s "$bundle") bytes, $(nproc) cores"
for mode in cache bundle; do
  # shellcheck disable=SC2086
  for _ in 1 2 3 4 5; do "$bin/rank-start" ${args[$mode]}; done > "$work/one.$mode"
  one=$(field total_ms < "$work/one.$mode" | median)
  one_open=$(field open_ms < "$work/one.$mode" | median) one_load=$(field load_ms < "$work/one.$mode" | median)
  kernels=$(field kernels < "$work/one.$mode" | head -1)
  start=$(now_ms)
  # shellcheck disable=SC2086
  for i in $(seq "$ranks"); do
    "$bin/rank-start" ${args[$mode]} --barrier "$work/barrier.$mode" --ranks "$ranks" > "$work/rank.$mode.$i" &
  done
  wait
  wall=$(awk -v a="$start" -v b="$(now_ms)" 'BEGIN {printf "%.1f", b - a}')
  cat "$work"/rank."$mode".* > "$work/all.$mode"
  done_ranks=$(grep -c total_ms "$work/all.$mode" || true)
  slowest=$(field total_ms < "$work/all.$mode" | sort -n | tail -1)
  typical=$(field total_ms < "$work/all.$mode" | median)
  contexts=$(field context_ms < "$work/all.$mode" | sort -n | tail -1)
  opens=$(field open_ms < "$work/all.$mode" | median) loads=$(field load_ms < "$work/all.$mode" | median)
  echo "$mode: $kernels kernels; one rank ${one} ms (open ${one_open}, load ${one_load}); $ranks at once: $done_ranks ok, wall ${wall} ms," \
       "median rank ${typical} ms (open ${opens}, load ${loads}), slowest ${slowest} ms ($(awk -v s="$slowest" -v o="$one" 'BEGIN {printf "%.2f", s / o}')x one);" \
       "slowest context ${contexts} ms (not counted)"
  if command -v strace > /dev/null || [ -x "$bin/strace" ]; then
    # shellcheck disable=SC2086
    strace -f -c -o "$work/count.$mode" "$bin/rank-start" ${args[$mode]} > /dev/null
    # shellcheck disable=SC2086
    strace -f -o "$work/trace.$mode" "$bin/rank-start" ${args[$mode]} > /dev/null
    total=$(awk '$NF == "total" {print $4}' "$work/count.$mode")
    named=$(grep -c -E "\"($tree|$cache|$bundle)" "$work/trace.$mode" || true)
    opened=$(grep -E "\"($tree|$cache|$bundle)" "$work/trace.$mode" | grep -c -E "open(at)?\(" || true)
    echo "$mode: strace -f of one rank: $total system calls in all; $named name a path in the tree, the cache" \
         "or the bundle ($opened of them opens)"
  fi
done
