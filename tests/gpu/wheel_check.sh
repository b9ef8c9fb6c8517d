#!/usr/bin/env bash
# The wheel on a machine that has none of the project's libraries, only
# python3 (with venv and pip), a C++20 compiler, cmake and the NVIDIA driver
# and NVRTC: from a folder made by `tests/gpu/pack.sh --wheel`. Prints PASS or
# FAIL per step, and ends with the count; exit 1 when a step failed. Output
# also to $OUT/wheel-check.log.
#
#   <folder>/wheel_check.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp}
work=$(mktemp -d)
export HOME="$work/home" TMPDIR="$work"
mkdir -p "$HOME"
src="$here/src-root/share/examples/particles/src"
include="$here/cunumpy-include"
cache="$work/cache"
failed=0
passed=0

# step NAME COMMAND...: runs it, its output indented, and says PASS or FAIL.
step() {
  local name=$1
  shift
  echo "== $name"
  if "$@" 2>&1 | sed 's/^/   /'; [ "${PIPESTATUS[0]}" -eq 0 ]; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name"
    failed=$((failed + 1))
  fi
}

fresh_venv() {
  python3 -m venv "$work/venv" && "$work/venv/bin/pip" install --no-index --quiet "$here"/wheels/cunumpy_kernels-*.whl &&
    "$work/venv/bin/cunumpy-kernels" --version
}
# Every shared library the installed binaries load, resolved: nothing "not found".
nothing_missing() {
  local library
  library=$(ls "$("$work/venv/bin/python" -m cunumpy_kernels --libdir)"/libcunumpy-kernels.so.*)
  ldd "$work/venv/bin/cunumpy-kernels" "$library" && ! ldd "$work/venv/bin/cunumpy-kernels" "$library" | grep -q "not found"
}
# The host side comes built (pack.sh: this machine has no Pyccel).
build_example() {
  cp -r "$here/host-cache" "$cache" &&
    "$work/venv/bin/cunumpy-kernels" build --only cuda --cache-dir "$cache" --cunumpy-include-dir "$include" "$src"
}
status_example() {
  "$work/venv/bin/cunumpy-kernels" status --cache-dir "$cache" --cunumpy-include-dir "$include" "$src"
}
# The example application (share/examples/particles_app, the public API only)
# built by CMake against the wheel's library, found through the module.
cmake_app() {
  mkdir -p "$work/app" && cp "$here"/particles_app/* "$work/app/" && cat >"$work/app/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(particles_app CXX)
find_package(cunumpy-kernels REQUIRED)
add_executable(particles-app particles_app.cpp)
target_compile_definitions(particles-app PRIVATE PARTICLES_SRC="$src")
target_link_libraries(particles-app PRIVATE cunumpy-kernels::cunumpy-kernels)
CMAKE
  cmake -S "$work/app" -B "$work/app-build" -Dcunumpy-kernels_DIR="$("$work/venv/bin/python" -m cunumpy_kernels --cmakedir)" &&
    cmake --build "$work/app-build"
}
# On the GPU: the CUDA kernels from the cache `build` filled against the cached Pyccel host versions, in parity.
run_app() {
  local log="$work/app.log"
  "$work/app-build/particles-app" --src "$src" --cache-dir "$cache" --cunumpy-include-dir "$include" --markers 1000000 |
    tee "$log" && grep -q "^gpu: " "$log" && ! grep -q -e DIFFERENT -e "not compared" "$log"
}

# The GPU tests (tests/gpu/test_gpu_runtime.cpp: public headers only, caches
# filled by the CLI) built by CMake against the wheel's library and run on the
# GPU with the wheel's CLI. Exit 77 (no usable GPU) is a failure here.
gpu_tests() {
  cat >"$here/gpu_tests/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(gpu_tests CXX)
find_package(cunumpy-kernels REQUIRED)
add_executable(test_gpu_runtime test_gpu_runtime.cpp)
target_include_directories(test_gpu_runtime PRIVATE "$here/gpu_tests")
target_link_libraries(test_gpu_runtime PRIVATE cunumpy-kernels::cunumpy-kernels)
CMAKE
  cmake -S "$here/gpu_tests" -B "$work/gpu-tests-build" \
    -Dcunumpy-kernels_DIR="$("$work/venv/bin/python" -m cunumpy_kernels --cmakedir)" &&
    cmake --build "$work/gpu-tests-build" &&
    CK_CLI="$work/venv/bin/cunumpy-kernels" CK_SOURCE_ROOT="$here/src-root" CK_CUNUMPY_INCLUDE_DIR="$include" \
      "$work/gpu-tests-build/test_gpu_runtime"
}

{
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  python3 --version; cmake --version | head -1; c++ --version | head -1
  step "a fresh venv installs the wheel (no index)" fresh_venv
  step "the installed CLI and library load nothing that is missing" nothing_missing
  step "cunumpy-kernels build of the example (NVRTC)" build_example
  step "cunumpy-kernels status of the example" status_example
  step "a CMake application through python -m cunumpy_kernels --cmakedir" cmake_app
  step "the application on the GPU against the wheel's library" run_app
  step "the GPU tests built against the wheel's library, with the wheel's CLI" gpu_tests
  echo "wheel check: $passed passed, $failed failed"
} 2>&1 | tee "$out/wheel-check.log"
grep -q "wheel check: [0-9]* passed, 0 failed" "$out/wheel-check.log"
