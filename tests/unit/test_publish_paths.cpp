// The seven forms of issue 9 through both ways an entry is made: `build`
// (run_build) and the runtime's NVRTC build on a miss. For each, both make the
// same entry (the same key, so either serves the other), or both refuse it for
// the same reason and leave the cache without an entry. The driver is a fake;
// the cache, the scanner and NVRTC are real.
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/kernel_catalog.hpp"

#include "runtime_package.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

TEST_SUITE_BEGIN("publish_paths");

using namespace ck;
using test::FakeCudaDriver;
using test::RuntimePackage;

namespace {

const char* const push_signature = "(double* x, const double* e, double dt, long long n)";

struct Form {
    const char* what;
    std::string source;                            ///< push_cuda.cu
    std::vector<std::string> options;              ///< compiler options; `{inc}` is the package's inc/ folder
    std::function<void(test::TempTree&)> prepare;  ///< files beside the kernel
    const char* refusal;                           ///< nullptr: both build it; else what both say
};

std::string body(const std::string& statement = "if (i < n) x[i] += dt * e[i];")
{
    return std::string(push_signature) +
           "\n{\n    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n    " + statement + "\n}\n";
}

std::vector<Form> forms()
{
    auto tune = [](test::TempTree& tree) { tree.write("inc/tune.cuh", "#define SCALE 2.0\n"); };
    return {
        {"1: a header found through -I",
         "#include \"tune.cuh\"\nextern \"C\" __global__ void push" + body("if (i < n) x[i] += SCALE * dt * e[i];"),
         {"-I{inc}"},
         tune,
         nullptr},
        {"3: a target option",
         "extern \"C\" __global__ void push" + body(),
         {"-arch=sm_80"},
         nullptr,
         "-arch=sm_80 is not accepted"},
        {"4: an extern device function defined nowhere",
         "extern \"C\" __device__ double helper(double);\nextern \"C\" __global__ void push" +
             body("if (i < n) x[i] += helper(dt) * e[i];"),
         {},
         nullptr,
         "helper"},
        {"4: relocatable device code",
         "extern \"C\" __global__ void push" + body(),
         {"-rdc=true"},
         nullptr,
         "-rdc=true is not accepted"},
        {"6: a stale prototype in #if 0 and a macro __global__",
         "#if 0\n__global__ void push(float* x, const float* e, float dt, int n);\n#endif\n"
         "#define KERNEL extern \"C\" __global__\nKERNEL void push" +
             body(),
         {},
         nullptr,
         nullptr},
        {"6: a __restrict__ macro and an attribute",
         "#define RESTRICT __restrict__\nextern \"C\" __global__ void __launch_bounds__(256) push"
         "(double* RESTRICT x, const double* RESTRICT e, double dt, long long n)\n{\n"
         "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] += dt * e[i];\n}\n",
         {},
         nullptr,
         nullptr},
        {"7: a CCCL header",
         "#include <cuda/std/cstdint>\nextern \"C\" __global__ void push" +
             body("if (i < n) x[i] += dt * e[i] * (cuda::std::int64_t)1;"),
         {},
         nullptr,
         nullptr},
    };
}

struct Outcome {
    bool ok = false;
    std::string key;
    std::string message;
};

struct Paths {
    explicit Paths(const Form& form)
    {
        package.config.architectures = {"sm_90"};
        package.config.ptx = false;
        // Both paths search the same folders: `build` may ask a Python for
        // cunumpy's header folder, the runtime never does (it only reads what a
        // build recorded in its cache), and a name looked up there is a key input.
        package.tree.write("no-cunumpy/.keep", "");
        package.config.cunumpy_include_dir = package.tree / "no-cunumpy";
        for (auto option : form.options) {
            auto at = option.find("{inc}");
            if (at != std::string::npos) option.replace(at, 5, (package.tree / "inc").string());
            package.config.options.push_back(option);
        }
        if (form.prepare) form.prepare(package.tree);
        package.tree.write("src/sim/kernels/push/push_cuda.cu", form.source);
    }

    Outcome build()
    {
        package.config.cache_dir = package.tree / "cache-build";
        try {
            BuildReport report = package.build({"sm_90"}, false);
            for (const auto& job : report.jobs)
                if (job.kernel == "push") return {job.state == JobState::built, job.key, job.log};
            return {false, "", "no push job"};
        } catch (const Error& error) {
            return {false, "", error.what()};
        }
    }

    Outcome runtime()
    {
        package.config.cache_dir = package.tree / "cache-runtime";
        try {
            auto catalog = KernelCatalog::from_package(package.package(), package.options(driver));
            catalog["push"].compile();
            auto info = catalog["push"].load_info();
            if (!info) return {false, "", "no load info"};
            return {info->how == "nvrtc" && info->published, info->key, ""};
        } catch (const Error& error) {
            return {false, "", error.what()};
        }
    }

    // Whether the cache holds an artifact of push (the package's other kernels build fine).
    bool cache_has_push(const char* name) const
    {
        std::error_code error;
        for (std::filesystem::recursive_directory_iterator it(package.tree / name / "cuda", error), end;
             !error && it != end; it.increment(error))
            if (it->path().filename().string().rfind("push.", 0) == 0) return true;
        return false;
    }

    RuntimePackage package;
    std::shared_ptr<FakeCudaDriver> driver = std::make_shared<FakeCudaDriver>();
};

}  // namespace

TEST_CASE("build and the runtime's NVRTC miss make the same entry, or refuse alike and publish nothing")
{
    for (const auto& form : forms()) {
        std::string what = form.what;
        CAPTURE(what);
        Paths paths(form);
        Outcome built = paths.build();
        Outcome loaded = paths.runtime();
        CAPTURE(built.message);
        CAPTURE(loaded.message);
        if (!form.refusal) {
            CHECK(built.ok);
            CHECK(loaded.ok);
            CHECK(built.key == loaded.key);
        } else {
            CHECK_FALSE(built.ok);
            CHECK_FALSE(loaded.ok);
            CHECK(built.message.find(form.refusal) != std::string::npos);
            CHECK(loaded.message.find(form.refusal) != std::string::npos);
            CHECK_FALSE(paths.cache_has_push("cache-build"));
            CHECK_FALSE(paths.cache_has_push("cache-runtime"));
        }
    }
}

TEST_CASE("an edited header through -I gives both paths a new key, the same one")
{
    Form form = forms().front();
    Paths paths(form);
    Outcome before = paths.build();
    REQUIRE(before.ok);
    paths.package.tree.write("inc/tune.cuh", "#define SCALE 3.0\n");
    Outcome built = paths.build();
    Outcome loaded = paths.runtime();
    CHECK(built.ok);
    CHECK(loaded.ok);
    CHECK(built.key != before.key);
    CHECK(built.key == loaded.key);
}

TEST_SUITE_END();
