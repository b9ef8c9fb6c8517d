#!/usr/bin/env bash
# Packs what the GPU run needs into one folder (default .ck-gpu), for machines
# that have a GPU but not this project's Debian libraries: stripped binaries
# of build-gpu/ (meson setup build-gpu -Dbench=true), the shared libraries
# they link that Ubuntu lacks, the example package, cunumpy's CUDA headers and
# the run script. Then run <folder>/run.sh there.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build-gpu}
out=${1:-.ck-gpu}
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/src-root/share/examples"
binaries=(tests/test_gpu_runtime bench/bench_runtime_launch bench/bench_runtime_overhead share/particles-app tools/cunumpy-kernels)
ninja -C "$build" "${binaries[@]}"  # scripts/setup builds only the tool and the library (tool-and-library)
for b in "${binaries[@]}"; do
  strip --strip-debug -o "$out/bin/$(basename "$b")" "$build/$b"
done
strip --strip-debug -o "$out/lib/libcunumpy-kernels.so.0" "$build/lib/libcunumpy-kernels.so.0"
# Every library the binaries link except the C and C++ runtimes the GPU machine has.
for b in "$out"/bin/* "$out/lib/libcunumpy-kernels.so.0"; do ldd "$b"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libz|libpthread|libdl|librt)\.so' | grep -v libcunumpy-kernels |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
cp -r share/examples/particles "$out/src-root/share/examples/"
cp -r .venv/lib/python3*/site-packages/cunumpy/cuda/include "$out/cunumpy-include"
cp bench/cupy_rawkernel_launch.py tests/gpu/run.sh "$out/"
du -sh "$out"
