// The kernel's key at the runtime's first call: planned as `build` plans it,
// kept in the key record, and taken from there by the next process while the
// files its planning read are unchanged. The compiler is a fake.
#include "cunumpy_kernels/error.hpp"
#include "runtime/kernel_keys.hpp"

#include "first_call_tree.hpp"
#include "scoped_env.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <optional>

TEST_SUITE_BEGIN("kernel_keys");

using namespace ck;
using test::FirstCallTree;
namespace fs = std::filesystem;

namespace {

auto now() { return std::chrono::system_clock::now(); }

// Plans `push` for `target` in a fresh process and keeps its key, as a first
// call whose lookup found no entry does. Returns the key.
std::string plan_and_keep(FirstCallTree& t, const std::string& target = "sm_90")
{
    auto keys = t.keys();
    const CudaJob& job = keys->job(t.push, target);
    keys->keep(job, nullptr, now());
    return job.key;
}

}  // namespace

TEST_CASE_FIXTURE(FirstCallTree, "a key is planned as `build` plans it: one job a target, asked once")
{
    auto keys = this->keys();
    const CudaJob& sm_90 = keys->job(push, "sm_90");
    const CudaJob& sm_80 = keys->job(push, "sm_80");
    CHECK(sm_90.key.size() == 64);
    CHECK(sm_90.key != sm_80.key);
    CHECK(sm_90.inputs.at("compiler") == "fake-nvrtc 1.0");
    CHECK(&keys->job(push, "sm_90") == &sm_90);  // asked again: the same job, not planned again
    CHECK(keys->keys_from_record() == 0);
    CHECK(keys->identity_known());
}

TEST_CASE_FIXTURE(FirstCallTree, "a key computed and kept is taken from the record by the next process")
{
    std::string planned = plan_and_keep(*this);
    auto next = keys();
    const CudaJob& taken = next->job(push, "sm_90");
    CHECK(taken.key == planned);
    CHECK(next->keys_from_record() == 1);
    CHECK(taken.inputs.is_null());  // not planned: only kernel, target and key
    // Another target of the same kernel has no record: it is planned.
    CHECK(next->job(push, "sm_80").key != planned);
    CHECK(next->keys_from_record() == 1);
}

TEST_CASE_FIXTURE(FirstCallTree, "a kept key is not taken once a file its planning read changed")
{
    tree.write("src/sim/common.cuh", "#define PUSH_SCALE 1.0\n");
    tree.write("src/sim/kernels/push/push_cuda.cu", std::string("#include \"sim/common.cuh\"\n") + test::push_cuda);
    std::string planned = plan_and_keep(*this);
    SUBCASE("the source edited")
    {
        tree.write("src/sim/kernels/push/push_cuda.cu",
                   std::string("#include \"sim/common.cuh\"\n// edited\n") + test::push_cuda);
    }
    SUBCASE("the header edited") { tree.write("src/sim/common.cuh", "#define PUSH_SCALE 2.0 // edited\n"); }
    SUBCASE("a header of that name made earlier in the search (the kernel's folder)")
    {
        tree.write("src/sim/kernels/push/sim/common.cuh", "#define PUSH_SCALE 1.0\n");
    }
    auto next = keys();
    CHECK(next->job(push, "sm_90").key != planned);
    CHECK(next->keys_from_record() == 0);
}

TEST_CASE_FIXTURE(FirstCallTree, "the key record's modes: off plans and keeps nothing, check plans behind a kept key")
{
    std::string planned = plan_and_keep(*this);
    auto off = keys(KeyRecordMode::off);
    CHECK(off->job(push, "sm_90").key == planned);
    CHECK(off->keys_from_record() == 0);

    auto check = keys(KeyRecordMode::check);
    const CudaJob& checked = check->job(push, "sm_90");
    CHECK(checked.key == planned);
    CHECK_FALSE(checked.inputs.is_null());  // planned, and compared with the record's
    CHECK(check->keys_from_record() == 1);
}

TEST_CASE_FIXTURE(FirstCallTree,
                  "nothing is kept by a read-only cache, in mode off, or without the compiler's identity")
{
    SUBCASE("read-only")
    {
        auto keys = this->keys(KeyRecordMode::on, true);
        keys->keep(keys->job(push, "sm_90"), nullptr, now());
    }
    SUBCASE("off")
    {
        auto keys = this->keys(KeyRecordMode::off);
        keys->keep(keys->job(push, "sm_90"), nullptr, now());
    }
    SUBCASE("no identity")
    {
        KernelKeys keys(config, KeyCompiler{}, *probe, location, KeyRecordMode::on, false, &cleared,
                        std::chrono::nanoseconds{0});
        CHECK_FALSE(keys.identity_known());
        keys.keep(keys.job(push, "sm_90"), nullptr, now());
    }
    auto next = keys();
    next->job(push, "sm_90");
    CHECK(next->keys_from_record() == 0);
    CHECK_FALSE(fs::exists(location.root / ".keys"));
}

TEST_CASE("CUNUMPY_KERNELS_KEY_RECORD names the mode; any other value is a usage error")
{
    {
        test::ScopedEnv unset("CUNUMPY_KERNELS_KEY_RECORD", std::nullopt);
        CHECK(key_record_mode_from_environment() == KeyRecordMode::on);
    }
    for (auto [value, mode] : {std::pair{"on", KeyRecordMode::on}, std::pair{"off", KeyRecordMode::off},
                               std::pair{"check", KeyRecordMode::check}}) {
        test::ScopedEnv set("CUNUMPY_KERNELS_KEY_RECORD", value);
        CHECK(key_record_mode_from_environment() == mode);
    }
    for (const char* wrong : {"yes", "ON", "1"}) {
        test::ScopedEnv set("CUNUMPY_KERNELS_KEY_RECORD", wrong);
        CHECK_THROWS_WITH_AS(key_record_mode_from_environment(), doctest::Contains(wrong), UsageError);
    }
}

TEST_CASE_FIXTURE(FirstCallTree, "the keys' compiler: the given one under NVRTC, nvcc's recorded identity otherwise")
{
    KeyCompiler nvrtc = key_compiler(config, *probe, compiler);
    CHECK(nvrtc.identity == "fake-nvrtc 1.0");
    // nvcc's identity is only what `build` recorded in the probe records:
    // none here, and no process is started to learn it.
    config.compiler = CudaCompilerKind::nvcc;
    config.cuda_root = tree / "no-toolkit";
    CHECK(key_compiler(config, *probe, compiler).identity.empty());
}
