// A bundle's artifacts checked as `build` checks what it publishes, wherever
// they are read: bundles whose headers were rewritten with every checksum
// recomputed (one kernel's artifact filed under another, a cubin relabelled
// with another target, an artifact cut short, a PTX of another entry) are
// refused by check_bundle_artifact, by `status --bundle` and by a rank's
// load, each naming the bundle, the kernel and what to do.
#include "bundle/bundle_writer.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/kernel_catalog.hpp"
#include "runtime/bundle_check.hpp"
#include "runtime/bundle_format.hpp"
#include "status/bundle_status.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"

#include "runtime_package.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <functional>

TEST_SUITE_BEGIN("bundle_check");

using namespace ck;
using test::FakeCudaDriver;
using test::RuntimePackage;

namespace {

namespace fs = std::filesystem;

// The artifact of `kernel` for `target` in `catalog`.
BundleArtifact& artifact_of(BundleCatalog& catalog, const std::string& kernel, const std::string& target)
{
    for (auto& k : catalog.kernels)
        for (auto& a : k.artifacts)
            if (k.name == kernel && a.target == target) return a;
    throw std::logic_error("no artifact " + kernel + "@" + target);
}

// Where `artifact`'s bytes lie, as a writer records them.
void point_at(BundleArtifact& artifact, const BundleArtifact& bytes_of)
{
    artifact.offset = bytes_of.offset;
    artifact.size = bytes_of.size;
    artifact.sha256 = bytes_of.sha256;
}

struct Fixture {
    Fixture()
    {
        RuntimePackage::emulate_push(*driver);
        REQUIRE(package.build({"sm_80", "sm_90"}, true).ok());
        BundleRequest request{{package.package()}, package.config, package.tree / "kernels.ckb"};
        request.config.architectures = {"sm_80", "sm_90"};
        request.config.ptx = true;
        write_bundle(request);
        file = request.output;
    }

    /// Rewrites the bundle's header with `edit`, every checksum recomputed
    /// (the header's by encode_bundle): only the load checks can tell.
    void rewrite(const std::function<void(BundleCatalog&, const std::string& data)>& edit)
    {
        Bundle bundle = read_bundle(file);
        std::string data = bundle.bytes.substr(bundle.data_offset);
        edit(bundle.catalog, data);
        std::ofstream(file, std::ios::binary | std::ios::trunc) << encode_bundle(bundle.catalog, data);
    }

    /// The fault check_bundle_artifact finds in `kernel`@`target`, "" for none.
    std::string fault(const std::string& kernel, const std::string& target)
    {
        Bundle bundle = read_bundle(file);
        for (const auto& k : bundle.catalog.kernels)
            for (const auto& a : k.artifacts)
                if (k.name == kernel && a.target == target) {
                    auto found = find_bundle_artifact_fault(bundle, k, a);
                    return found ? found->what : "";
                }
        FAIL("no artifact " << kernel << "@" << target);
        return {};
    }

    /// The error of push's first load from the bundle, "" when it loads.
    std::string load_error(const std::string& kernel = "push")
    {
        auto options = package.options(driver);
        options.kernel.missing_cuda = MissingCuda::fallback;
        auto catalog = KernelCatalog::from_bundle(file, options);
        try {
            catalog[kernel].compile();
        } catch (const ArtifactError& error) {
            return error.what();
        }
        return {};
    }

    RuntimePackage package;
    std::shared_ptr<FakeCudaDriver> driver = std::make_shared<FakeCudaDriver>();
    fs::path file;
};

}  // namespace

TEST_CASE_FIXTURE(Fixture, "every artifact of a bundle as written passes")
{
    for (const char* kernel : {"push", "scale"})
        for (const char* target : {"sm_80", "sm_90", "compute_90"}) {
            CAPTURE(kernel);
            CAPTURE(target);
            CHECK(fault(kernel, target) == "");
        }
    CHECK(load_error() == "");
}

TEST_CASE_FIXTURE(Fixture, "one kernel's artifacts filed under another fail the entry check, for cubins and PTX")
{
    rewrite([](BundleCatalog& catalog, const std::string&) {
        for (const char* target : {"sm_80", "sm_90", "compute_90"}) {
            BundleArtifact push = artifact_of(catalog, "push", target);
            point_at(artifact_of(catalog, "push", target), artifact_of(catalog, "scale", target));
            point_at(artifact_of(catalog, "scale", target), push);
        }
    });
    for (const char* target : {"sm_80", "sm_90"}) {
        CHECK(fault("push", target) == "check 'entry' failed: the cubin defines no function 'push'");
        CHECK(fault("scale", target) == "check 'entry' failed: the cubin defines no function 'scale'");
    }
    CHECK(fault("push", "compute_90") == "check 'ptx entry' failed: the PTX has no .entry push");
    std::string error = load_error();
    CHECK(error.find("kernel 'push': nothing in the bundle fits") != std::string::npos);
    CHECK(error.find(file.string() + "#push@sm_90: check 'entry' failed") != std::string::npos);
    CHECK(error.find("make it again (cunumpy-kernels build, then cunumpy-kernels bundle") != std::string::npos);
    CHECK(error.find("A bundle is never compiled from") == std::string::npos);  // not "bundle another target"
    CHECK(driver->loads == 0);
}

TEST_CASE_FIXTURE(Fixture, "a whole record moved to another kernel, entry and key inputs with it, is not that kernel's")
{
    rewrite([](BundleCatalog& catalog, const std::string&) {
        artifact_of(catalog, "push", "sm_90") = artifact_of(catalog, "scale", "sm_90");
    });
    CHECK(fault("push", "sm_90") == "the header files entry 'scale' under kernel 'push', whose entry it is not");
    rewrite([](BundleCatalog& catalog, const std::string&) {
        artifact_of(catalog, "push", "sm_80").inputs["kernel"] = "scale";
    });
    CHECK(fault("push", "sm_80") == "the header files kernel 'scale''s artifact (its key inputs) under kernel 'push'");
}

TEST_CASE_FIXTURE(Fixture, "a cubin relabelled with another target fails the architecture check")
{
    rewrite([](BundleCatalog& catalog, const std::string&) {
        BundleArtifact& sm_80 = artifact_of(catalog, "push", "sm_80");
        BundleArtifact& sm_90 = artifact_of(catalog, "push", "sm_90");
        std::swap(sm_80.target, sm_90.target);
    });
    CHECK(fault("push", "sm_90").rfind("check 'architecture' failed: the cubin is for sm_80", 0) == 0);
    CHECK(fault("push", "sm_80").rfind("check 'architecture' failed: the cubin is for sm_90", 0) == 0);
    CHECK(load_error() == "");  // the PTX serves, with a warning that names the refused cubin
    REQUIRE(package.warnings.size() == 1);
    CHECK(package.warnings[0].find("#push@sm_90: check 'architecture' failed") != std::string::npos);
    CHECK(package.warnings[0].find("make the bundle again") != std::string::npos);
}

TEST_CASE_FIXTURE(Fixture, "the same key inputs under another target are caught when the bytes would pass")
{
    rewrite([](BundleCatalog& catalog, const std::string&) {
        artifact_of(catalog, "push", "sm_90").inputs["target"] = "sm_80";
    });
    CHECK(fault("push", "sm_90") == "the header files the artifact of sm_80 (its key inputs) under sm_90");
}

TEST_CASE_FIXTURE(Fixture, "an artifact cut short, its checksum recomputed, fails the completeness checks")
{
    rewrite([](BundleCatalog& catalog, const std::string& data) {
        for (const char* target : {"sm_90", "compute_90"}) {
            BundleArtifact& a = artifact_of(catalog, "push", target);
            a.size -= 40;
            a.sha256 = sha256_hex(std::string_view(data).substr(a.offset, a.size));
        }
    });
    CHECK(fault("push", "sm_90").rfind("check 'complete' failed: the file is ", 0) == 0);
    CHECK(fault("push", "compute_90").rfind("check 'ptx complete' failed", 0) == 0);
}

TEST_CASE_FIXTURE(Fixture, "bytes damaged in a copy are a checksum mismatch, with the advice to copy again")
{
    Bundle bundle = read_bundle(file);
    const BundleKernel& push = bundle.catalog.kernels.front();
    REQUIRE(push.name == "push");
    bundle.bytes[bundle.data_offset + push.artifacts.front().offset + 10] ^= 0x5a;
    auto found = find_bundle_artifact_fault(bundle, push, push.artifacts.front());
    REQUIRE(found);
    CHECK(found->what.rfind("checksum mismatch (recorded sha256 ", 0) == 0);
    CHECK(found->fix.find("copy the bundle again") != std::string::npos);
    CHECK_THROWS_WITH_AS(check_bundle_artifact(bundle, push, push.artifacts.front()),
                         doctest::Contains("#push@sm_80: checksum mismatch"), ArtifactError);
}

TEST_CASE_FIXTURE(Fixture, "status --bundle reports the same faults as corrupt, naming the kernel and artifact")
{
    rewrite([](BundleCatalog& catalog, const std::string&) {
        point_at(artifact_of(catalog, "push", "sm_90"), artifact_of(catalog, "scale", "sm_90"));
    });
    auto config_at = [&](const fs::path&) { return package.config; };
    BundleStatus status = read_bundle_status(file, {}, config_at);
    CHECK(status.modules("corrupt") == std::vector<std::string>{"sim.kernels.push"});
    const auto& push = *std::find_if(status.kernels.begin(), status.kernels.end(),
                                     [](const BundleKernelStatus& k) { return k.name == "push"; });
    REQUIRE(push.artifacts.size() == 1);
    CHECK(push.artifacts[0].target == "sm_90");
    CHECK(push.artifacts[0].reason ==
          file.string() + "#push@sm_90: check 'entry' failed: the cubin defines no function 'push'");
}

TEST_SUITE_END();
