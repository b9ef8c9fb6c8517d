#!/usr/bin/env bash
# Packs what the GPU run needs into one folder (default .ck-gpu), for machines
# that have a GPU but not this project's Debian libraries: stripped binaries
# of build-gpu/ (meson setup build-gpu -Dbench=true), the shared libraries
# they link that Ubuntu lacks, the example package, cunumpy's CUDA headers and
# the run script. Then run <folder>/run.sh there.
#
#   tests/gpu/pack.sh [FOLDER]                  binaries of build-gpu/ and copied system libraries
#   tests/gpu/pack.sh --wheel WHEEL [FOLDER]    the wheel instead (scripts/wheel): no binary, no
#                                               library; run <folder>/wheel_check.sh there
#                                               (the host cache is built with $CLI, default build/'s)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build-gpu}
wheel=
if [ "${1:-}" = "--wheel" ]; then
  wheel=$2
  shift 2
fi
out=${1:-.ck-gpu}
rm -rf "$out"

# The example's host modules built here, where Pyccel and Python's headers
# are, into a cache the GPU run starts from: the GPU machine has neither, and
# its application then runs these Python-free host libraries (a login node
# builds, a compute node runs). The runtime finds them by the module's source.
pack_host_cache() {
  "$1" build --only host --python "$PWD/.venv/bin/python" --cache-dir "$out/host-cache" \
    share/examples/particles/src | tail -1
}

# The wheel's check needs only what a user of the wheel has: the wheel, the
# example package and application sources, and cunumpy's CUDA headers (the
# example's deposit includes them).
if [ -n "$wheel" ]; then
  mkdir -p "$out/wheels" "$out/src-root/share/examples"
  cp "$wheel" "$out/wheels/"
  cp -r share/examples/particles "$out/src-root/share/examples/"
  cp -r share/examples/particles_app "$out/particles_app"
  # The GPU tests, built there against the wheel's library (public headers only).
  mkdir -p "$out/gpu_tests/doctest"
  cp tests/gpu/test_gpu_runtime.cpp tests/unit/temp_tree.hpp tests/particles_host.hpp "$out/gpu_tests/"
  cp "$(echo '#include <doctest/doctest.h>' | c++ -M -x c++ - | grep -o '/[^ ]*doctest/doctest.h')" "$out/gpu_tests/doctest/"
  cp -r .venv/lib/python3*/site-packages/cunumpy/cuda/include "$out/cunumpy-include"
  cp tests/gpu/wheel_check.sh "$out/"
  pack_host_cache "${CLI:-build/tools/cunumpy-kernels}"
  du -sh "$out"
  exit 0
fi
mkdir -p "$out/bin" "$out/lib" "$out/src-root/share/examples"
binaries=(tests/test_gpu_runtime tests/cubin_param_info bench/bench_runtime_launch bench/bench_runtime_overhead bench/launch-pairs bench/rank-start share/particles-app
  tools/cunumpy-kernels)
ninja -C "$build" "${binaries[@]}"  # scripts/setup builds only the tool and the library (tool-and-library)
for b in "${binaries[@]}"; do
  strip --strip-debug -o "$out/bin/$(basename "$b")" "$build/$b"
done
# The library's soname, as the binaries ask for it (a build folder may still hold an older one).
soname=$(readelf -d "$build/lib/libcunumpy-kernels.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
strip --strip-debug -o "$out/lib/$soname" "$build/lib/$soname"
# Every library the binaries link except the C and C++ runtimes the GPU machine has.
for b in "$out"/bin/* "$out/lib/$soname"; do ldd "$b"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libz|libpthread|libdl|librt)\.so' | grep -v libcunumpy-kernels |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
cp -r share/examples/particles "$out/src-root/share/examples/"
cp -r .venv/lib/python3*/site-packages/cunumpy/cuda/include "$out/cunumpy-include"
pack_host_cache "$build/tools/cunumpy-kernels"
# Structs aligned past 16 bytes: the layouts the unit tests pin
# (parameter_bank_offset), compared with the driver's there.
mkdir -p "$out/aligned"
for arch in sm_80 sm_90 sm_90a; do
  "${NVCC:-/usr/local/cuda/bin/nvcc}" -cubin -arch=$arch -o "$out/aligned/aligned_params.$arch.cubin" \
    tests/unit/cubins/aligned_params.cu
done
cp bench/cupy_rawkernel_launch.py bench/rank_start.sh tests/gpu/run.sh tests/gpu/cupy_cache_proof.py tests/gpu/cupy_cache_proof.sh \
  tests/gpu/cupy_cache_gpu.py "$out/"

# The CuPy cache proof (cupy_cache_proof.sh): cunumpy and Struphy at paths the
# GPU machine recreates, CuPy's cache filled here, on a machine without a GPU,
# with the CuPy of .venv.
proof=/tmp/ckproof
rm -rf "$proof" && mkdir -p "$proof/site" "$out/wheels"
.venv/bin/pip download -q --no-deps -d "$out/wheels" cunumpy==0.7.1 array-api-compat==1.16.0 maybempi==0.1.2 struphy==3.5.0
for w in "$out"/wheels/*.whl; do
  case $w in *struphy*) .venv/bin/python -m zipfile -e "$w" "$proof/struphy-root" ;;
             *) .venv/bin/python -m zipfile -e "$w" "$proof/site" ;; esac
done
cp -r share/examples/particles/src "$proof/particles-src"
for tree in particles-src/particles struphy-root/struphy; do
  PYTHONPATH="$proof/site" "$build/tools/cunumpy-kernels" build --only cupy --arch sm_90 --no-ptx \
    --python "$PWD/.venv/bin/python" --cupy-cache-dir "$proof/cupy-here" "$proof/$tree" 2>/dev/null | tail -1
done
# Within the 64 MiB a device run carries: CuPy's entries compressed, and of
# Struphy only what the walk and the CUDA compiles read.
tar czf "$out/cupy-here.tgz" -C "$proof" cupy-here
(cd "$proof/struphy-root" && find struphy \( -name "__init__.py" -o -name "*_kernels.py" -o -name "*.cu" -o -name "*.cuh" \)) |
  tar czf "$out/struphy-kernels.tgz" -C "$proof/struphy-root" -T -
rm "$out"/wheels/struphy-*.whl
du -sh "$out"
