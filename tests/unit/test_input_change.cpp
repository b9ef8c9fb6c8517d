// build --dry-run names the input that changed, new inputs included.
#include "cache/cache.hpp"
#include "explain/input_change.hpp"

#include <doctest/doctest.h>

using namespace ck;
using nlohmann::json;

TEST_SUITE("input_change")
{
    TEST_CASE("options, environment, nvcc.profile and appeared headers name themselves")
    {
        json before = {{"format", "cunumpy-kernels/cuda/2"},
                       {"source", {{"file", "k_cuda.cu"}, {"sha256", "a"}}},
                       {"headers", {{"<I:0>/tune.cuh", "1"}}},
                       {"absent", {"<kernel>/tune.cuh", "tune.cuh"}},
                       {"options", {"-DA"}},
                       {"environment", json::object()},
                       {"nvcc_profile", "p"}};
        json after = before;
        after["options"] = {"-DA", "-lineinfo"};
        CHECK(describe_input_change(before, after) == "compiler option -lineinfo added");
        after["options"] = json::array();
        CHECK(describe_input_change(before, after) == "compiler option -DA removed");
        after = before;
        after["environment"] = {{"NVCC_APPEND_FLAGS", "-DSCALE=7.0"}};
        CHECK(describe_input_change(before, after) ==
              "environment variable NVCC_APPEND_FLAGS: unset -> \"-DSCALE=7.0\"");
        CHECK(describe_input_change(after, before) ==
              "environment variable NVCC_APPEND_FLAGS: \"-DSCALE=7.0\" -> unset");
        after = before;
        after["nvcc_profile"] = "q";
        CHECK(describe_input_change(before, after) == "nvcc.profile changed");
        // From NVRTC to nvcc the profile appears too; the compiler is the change to name.
        json nvrtc = before;
        nvrtc.erase("nvcc_profile");
        nvrtc["compiler"] = "nvrtc 13.0";
        after = before;
        after["compiler"] = "nvcc 13.0";
        CHECK(describe_input_change(nvrtc, after) == "compiler: nvrtc 13.0 -> nvcc 13.0");
        after = before;
        after["absent"] = {"tune.cuh"};
        after["headers"] = {{"<kernel>/tune.cuh", "1"}};
        CHECK(describe_input_change(before, after) ==
              "header <kernel>/tune.cuh appeared (an earlier lookup found nothing there)");
        after = before;
        after["format"] = "cunumpy-kernels/cuda/3";
        CHECK(describe_input_change(before, after).rfind("key format", 0) == 0);
    }

    TEST_CASE("a header found before and nowhere now says so, and how to give cunumpy's headers")
    {
        json before = {{"format", "cunumpy-kernels/cuda/2"},
                       {"source", {{"file", "k_cuda.cu"}, {"sha256", "a"}}},
                       {"headers", {{"<cunumpy>/cunumpy/atomic.cuh", "1"}, {"<kernel>/tune.cuh", "2"}}}};
        json after = before;
        after["headers"] = {{"<kernel>/tune.cuh", "2"}};
        after["unresolved_includes"] = {"cunumpy/atomic.cuh"};
        CHECK(describe_input_change(before, after) ==
              "header cunumpy/atomic.cuh is not found now (before: <cunumpy>/cunumpy/atomic.cuh); cunumpy's CUDA "
              "headers: pass --python with the interpreter that has cunumpy, or --cunumpy-include-dir");
        after["headers"] = {{"<cunumpy>/cunumpy/atomic.cuh", "1"}};
        after["unresolved_includes"] = {"tune.cuh"};
        CHECK(describe_input_change(before, after) == "header tune.cuh is not found now (before: <kernel>/tune.cuh)");
        after.erase("unresolved_includes");
        CHECK(describe_input_change(before, after) == "header <kernel>/tune.cuh is no longer included");
    }
}
