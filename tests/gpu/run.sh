#!/usr/bin/env bash
# The GPU run, from a folder made by tests/gpu/pack.sh: builds the example
# package with the CLI, runs the GPU tests, the example application, the
# launch benchmark and the CuPy reference. Output to $OUT/gpu-run.log.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CK_SOURCE_ROOT="$here/src-root"
export CK_CUNUMPY_INCLUDE_DIR="$here/cunumpy-include"
out=${OUT:-/tmp}
work=$(mktemp -d)
export HOME="$work/home" TMPDIR="$work"
mkdir -p "$HOME"
cache="$work/cache"
src="$CK_SOURCE_ROOT/share/examples/particles/src"
{
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  ls /usr/local/cuda/lib64/libnvrtc.so* 2>&1 | head -3
  for b in "$here"/bin/*; do ldd "$b" | grep "not found"; done
  echo "== cunumpy-kernels build (the CLI) of the example package"
  # The host side comes built (pack.sh: this machine has no Pyccel); the
  # example application runs those cached Pyccel versions against the GPU.
  cp -r "$here/host-cache" "$cache"
  "$here/bin/cunumpy-kernels" build --only cuda --cache-dir "$cache" --cunumpy-include-dir "$CK_CUNUMPY_INCLUDE_DIR" "$src"
  echo "== GPU tests"
  CK_GPU_CLI_CACHE="$cache" CK_CLI="$here/bin/cunumpy-kernels" "$here/bin/test_gpu_runtime"
  echo "test_gpu_runtime exit status: $?"
  echo "== parameter layouts: the cubin's reading against cuFuncGetParamInfo (issue 43)"
  "$here/bin/cubin_param_info" "$cache"
  for cubin in "$here"/aligned/*.cubin; do
    "$here/bin/cubin_param_info" --cubin "$cubin" pointer_a16 pointer_a32 pointer_a64 char_a32_int pointer_a64_a32 \
      int_small_small three_pointers_a64
  done
  echo "== example application"
  "$here/bin/particles-app" --src "$src" --cache-dir "$cache" --cunumpy-include-dir "$CK_CUNUMPY_INCLUDE_DIR" --markers 1000000
  echo "particles-app exit status: $?"
  echo "== launch benchmark"
  CK_GPU_CLI_CACHE="$cache" "$here/bin/bench_runtime_launch" --benchmark_report_aggregates_only=true \
    --benchmark_enable_random_interleaving=true
  echo "== a Kernel call against a raw launch, in alternating pairs (five runs)"
  for run in 1 2 3 4 5; do CK_GPU_CLI_CACHE="$cache" "$here/bin/launch-pairs" 300 1000 "run $run"; done
  echo "== the runtime's own share of a call (null driver, this machine's CPU)"
  "$here/bin/bench_runtime_overhead" --benchmark_report_aggregates_only=true
  echo "== CuPy reference"
  cubin=$(find "$cache" -name 'push.sm_90.cubin' | head -1)
  python3 "$here/cupy_rawkernel_launch.py" "$cubin" "$CK_SOURCE_ROOT"
  echo "== CuPy's cache as cunumpy reads it (meson test gpu_cupy_cache)"
  mkdir -p "$work/site" && for w in "$here"/wheels/*.whl; do python3 -m zipfile -e "$w" "$work/site"; done
  PYTHONPATH="$work/site" python3 "$here/cupy_cache_gpu.py" "$here/bin/cunumpy-kernels" "$CK_SOURCE_ROOT"
  echo "cupy_cache_gpu exit status: $?"
} 2>&1 | tee "$out/gpu-run.log"
