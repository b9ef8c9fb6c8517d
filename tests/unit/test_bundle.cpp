// Bundles: the file format (round trip, and every way a file can be wrong),
// the ranking of targets shared with the cache, writing a bundle from the
// cache `build` filled, opening a catalog from it over a fake driver (checksums
// checked before loading, nothing fits -> an error naming what is held), and
// status --bundle's comparison with the tree.
#include "bundle/bundle_writer.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/kernel_catalog.hpp"
#include "runtime/bundle_format.hpp"
#include "runtime/target_ranking.hpp"
#include "status/bundle_status.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"

#include "runtime_package.hpp"

#include <doctest/doctest.h>

#include <fstream>

TEST_SUITE_BEGIN("bundle");

using namespace ck;
using test::FakeCudaDriver;
using test::RuntimePackage;

namespace {

BundleCatalog two_kernel_catalog(std::string& data)
{
    BundleCatalog catalog;
    catalog.tool = "cunumpy-kernels test";
    catalog.created = "2026-12-01T00:00:00Z";
    catalog.paths = {"/src"};
    catalog.targets = {"sm_90", "compute_90"};
    catalog.compiler = "nvrtc";
    catalog.options = {"-DX=1"};
    catalog.cache_root = "/cache";
    catalog.toolkit = {"/opt/cuda-13.0", "$CUDA_PATH", "nvrtc 13.0"};
    KernelParameter x{"x", "double*", ParameterKind::pointer, ElementType::float64, 0};
    KernelParameter a{"a", "Array2D<float>", ParameterKind::array_view, ElementType::float32, 2};
    KernelParameter n{"n", "long long", ParameterKind::scalar, ElementType::int64, 0};
    BundleKernel push{"push",
                      "sim.kernels.push",
                      "/src/sim/kernels/push",
                      "/src/sim/kernels/push/push_cuda.cu",
                      true,
                      std::vector<KernelParameter>{x, a, n},
                      "",
                      {},
                      std::nullopt,
                      "no current host build of sim.kernels.push"};
    for (const char* target : {"sm_90", "compute_90"}) {
        BundleArtifact artifact{target, std::string(64, 'a'), "push", 0, 0, "", {{"target", target}}};
        add_artifact_bytes(artifact, std::string("bytes of ") + target, data);
        push.artifacts.push_back(artifact);
    }
    BundleKernel sort{"sort",
                      "sim.kernels.sort",
                      "/src/sim/kernels/sort",
                      "/src/sim/kernels/sort/sort_cuda.cu",
                      false,
                      std::nullopt,
                      "",
                      {},
                      BundleArtifact{"host-library", std::string(64, 'b'), "", 0, 0, "", {{"language", "c"}}},
                      ""};
    add_artifact_bytes(*sort.host_library, "bytes of a host library", data);
    catalog.host_platform = "linux-x86_64";
    catalog.kernels = {push, sort};
    return catalog;
}

std::string encoded_bundle()
{
    std::string data;
    BundleCatalog catalog = two_kernel_catalog(data);
    return encode_bundle(catalog, data);
}

struct Fixture {
    Fixture() { RuntimePackage::emulate_push(*driver); }

    std::filesystem::path bundle(std::vector<std::string> architectures, bool ptx)
    {
        REQUIRE(package.build(architectures, ptx).ok());
        BundleRequest request{{package.package()}, package.config, package.tree / "kernels.ckb"};
        request.config.architectures = std::move(architectures);
        request.config.ptx = ptx;
        write_bundle(request);
        return request.output;
    }

    KernelCatalog open(const std::filesystem::path& file)
    {
        auto options = package.options(driver);
        options.kernel.missing_cuda = MissingCuda::fallback;
        options.kernel.dispatch = Dispatch::arrays;
        return KernelCatalog::from_bundle(file, options);
    }

    void device(int major, int minor)
    {
        driver->devices[0].cc_major = major;
        driver->devices[0].cc_minor = minor;
    }

    RuntimePackage package;
    std::shared_ptr<FakeCudaDriver> driver = std::make_shared<FakeCudaDriver>();
};

void flip_byte(const std::filesystem::path& file, std::size_t from_end)
{
    std::string bytes = util::read_file(file);
    bytes[bytes.size() - from_end] ^= 0x5a;
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

TEST_CASE("a bundle's header and artifacts read back as they were written")
{
    std::string data;
    BundleCatalog written = two_kernel_catalog(data);
    Bundle bundle = decode_bundle(encode_bundle(written, data), "/x/kernels.ckb");
    CHECK(bundle.catalog.tool == written.tool);
    CHECK(bundle.catalog.targets == written.targets);
    CHECK(bundle.catalog.options == written.options);
    CHECK(bundle.catalog.cache_root == "/cache");
    CHECK(bundle.catalog.toolkit.root == "/opt/cuda-13.0");
    CHECK(bundle.catalog.toolkit.found_by == "$CUDA_PATH");
    CHECK(bundle.catalog.toolkit.compiler == "nvrtc 13.0");
    REQUIRE(bundle.catalog.kernels.size() == 2);
    const BundleKernel& push = bundle.catalog.kernels[0];
    CHECK(push.cuda);
    CHECK(push.cuda_path == "/src/sim/kernels/push/push_cuda.cu");
    REQUIRE(push.parameters);
    REQUIRE(push.parameters->size() == 3);
    CHECK((*push.parameters)[1].kind == ParameterKind::array_view);
    CHECK((*push.parameters)[1].element == ElementType::float32);
    CHECK((*push.parameters)[1].view_ndim == 2);
    CHECK((*push.parameters)[2].element == ElementType::int64);
    REQUIRE(push.artifacts.size() == 2);
    CHECK(bundle.artifact_bytes(push.artifacts[1]) == "bytes of compute_90");
    CHECK(push.artifacts[1].sha256 == sha256_hex("bytes of compute_90"));
    CHECK(push.artifacts[1].inputs["target"] == "compute_90");
    CHECK(bundle.artifact_name(push, push.artifacts[0]) == "/x/kernels.ckb#push@sm_90");
    CHECK_FALSE(bundle.catalog.kernels[1].cuda);
    CHECK_FALSE(bundle.catalog.kernels[1].parameters);
    CHECK(bundle.catalog.host_platform == "linux-x86_64");
    CHECK_FALSE(push.host_library);
    CHECK(push.host_library_note == "no current host build of sim.kernels.push");
    const BundleKernel& sort = bundle.catalog.kernels[1];
    REQUIRE(sort.host_library);
    CHECK(bundle.artifact_bytes(*sort.host_library) == "bytes of a host library");
    CHECK(sort.host_library->inputs["language"] == "c");
}

TEST_CASE("a file that is not a bundle, of another version, truncated or corrupt is refused, naming the file")
{
    std::string good = encoded_bundle();
    auto refused = [](std::string bytes) {
        try {
            decode_bundle(std::move(bytes), "/x/kernels.ckb");
        } catch (const ArtifactError& error) {
            return std::string(error.what());
        }
        return std::string("accepted");
    };
    CHECK(refused("ELF\n" + good).find("/x/kernels.ckb: not a cunumpy-kernels bundle") == 0);
    CHECK(refused("").find("not a cunumpy-kernels bundle") != std::string::npos);
    for (std::string version : {"0", "3"}) {
        std::string other = good;
        other.replace(other.find(" 2 "), 3, " " + version + " ");
        CHECK(refused(other).find("bundle format version " + version + ", but") != std::string::npos);
        CHECK(refused(other).find("but this library reads versions 1 to 2: make the bundle again") !=
              std::string::npos);
        CHECK(refused(other).find("(cunumpy-kernels bundle)") != std::string::npos);
    }
    CHECK(refused(good.substr(0, good.size() - 1)).find("truncated: 56 bytes of artifacts expected, 55 present") !=
          std::string::npos);
    CHECK(refused(good.substr(0, good.find('\n') + 10)).find("truncated: the header needs") != std::string::npos);
    CHECK(refused(good + "x").find("longer than its header says") != std::string::npos);
    std::string corrupt = good;
    corrupt[good.find("sim.kernels")] = 'S';
    CHECK(refused(corrupt).find("corrupt header (its SHA-256") != std::string::npos);
    std::string bad_line = good;
    bad_line.replace(bad_line.find(' ', 23), 1, "x");
    CHECK(refused(bad_line).find("corrupt magic line") != std::string::npos);
    CHECK(refused(good) == "accepted");
}

TEST_CASE("a format 1 bundle still reads: no cache root and no toolkit")
{
    std::string data;
    BundleCatalog catalog = two_kernel_catalog(data);
    std::string encoded = encode_bundle(catalog, data);
    std::size_t start = encoded.find('\n') + 1;
    nlohmann::json header = nlohmann::json::parse(encoded.substr(start, encoded.size() - data.size() - start));
    header.erase("cache_root");
    header.erase("toolkit");
    std::string text = header.dump();
    Bundle bundle = decode_bundle(
        "cunumpy-kernels-bundle 1 " + std::to_string(text.size()) + " " + sha256_hex(text) + "\n" + text + data,
        "/x/old.ckb");
    CHECK(bundle.catalog.cache_root == "");
    CHECK(bundle.catalog.toolkit.root == "");
    CHECK(bundle.catalog.kernels.size() == 2);
    CHECK(bundle.artifact_bytes(bundle.catalog.kernels[0].artifacts[0]) == "bytes of sm_90");
}

TEST_CASE("every truncation and every flipped byte of the header is refused; flipped artifact bytes wait for the load")
{
    std::string good = encoded_bundle();
    std::size_t data_offset = decode_bundle(good, "b").data_offset;
    for (std::size_t length = 0; length < good.size(); ++length)
        CHECK_THROWS_AS(decode_bundle(good.substr(0, length), "b"), ArtifactError);
    for (std::size_t at = 0; at < good.size(); ++at) {
        std::string flipped = good;
        flipped[at] ^= 0x01;
        if (at < data_offset)
            CHECK_THROWS_AS(decode_bundle(flipped, "b"), ArtifactError);
        else
            CHECK(decode_bundle(flipped, "b").bytes == flipped);
    }
}

TEST_CASE("targets rank as the cache ranks them: exact cubin, compatible cubins, then PTX not newer than the device")
{
    std::vector<std::string> targets = {"compute_80", "sm_80", "sm_90", "compute_90", "sm_86"};
    auto ranked = [&](int major, int minor) {
        std::vector<std::string> order;
        for (const auto& fit : rank_targets(targets, major, minor)) order.push_back(targets[fit.index] + ":" + fit.how);
        return order;
    };
    CHECK(ranked(8, 6) == std::vector<std::string>{"sm_86:cubin", "sm_80:compatible cubin", "compute_80:ptx"});
    CHECK(ranked(8, 9) ==
          std::vector<std::string>{"sm_86:compatible cubin", "sm_80:compatible cubin", "compute_80:ptx"});
    CHECK(ranked(9, 0) == std::vector<std::string>{"sm_90:cubin", "compute_90:ptx", "compute_80:ptx"});
    CHECK(ranked(12, 0) == std::vector<std::string>{"compute_90:ptx", "compute_80:ptx"});
    CHECK(ranked(7, 5).empty());
}

TEST_CASE_FIXTURE(Fixture, "a catalog from a bundle launches its kernels and says where each module came from")
{
    auto file = bundle({"sm_80", "sm_90"}, true);
    auto catalog = open(file);
    CHECK(catalog.summary() == "CUDA kernels: 2 of 3 (missing: sort)");
    CHECK(catalog["push"].cuda_parameters() == std::vector<std::string>{"x", "e", "dt", "n"});
    catalog.attach_host("sort", host_kernel(&test::sort_host));
    auto gpu = GpuAccess::over(driver);
    std::vector<double> x = {1, 2, 3}, e = {10, 10, 10};
    DeviceBuffer dx = gpu->allocate(24), de = gpu->allocate(24);
    dx.upload(x.data(), 24);
    de.upload(e.data(), 24);
    catalog["push"](dx.view<double>({3}), de.view<double>({3}), 0.5, 3LL);
    dx.download(x.data(), 24);
    CHECK(x == std::vector<double>{6, 7, 8});
    auto info = catalog["push"].load_info();
    REQUIRE(info);
    CHECK(info->how == "bundle cubin");
    CHECK(info->target == "sm_90");
    CHECK(info->key.size() == 64);
    CHECK(info->artifact == file.string() + "#push@sm_90");
    CHECK_THROWS_WITH_AS(catalog["push"](dx.view<double>({3}), 0.5, 3LL), doctest::Contains("kernel 'push'"),
                         ArgumentError);
    catalog["sort"](dx.view<double>({3}), 3LL);
    CHECK(catalog["sort"].transfers().fallbacks == 1);
}

TEST_CASE_FIXTURE(Fixture, "a catalog from a bundle reads nothing of the tree or the cache")
{
    auto file = bundle({"sm_90"}, false);
    std::filesystem::rename(package.tree / "src", package.tree / "moved");
    std::filesystem::rename(package.cache(), package.tree / "cache-moved");
    auto catalog = open(file);
    CHECK(catalog["push"].compile());
    CHECK(catalog["push"].load_info()->how == "bundle cubin");
    CHECK(catalog["push"].cuda_path() == package.tree / "src/sim/kernels/push/push_cuda.cu");
    CHECK_FALSE(catalog["push"].host_parameters());
}

TEST_CASE_FIXTURE(Fixture, "a device of a newer minor takes the compatible cubin, another the PTX")
{
    auto file = bundle({"sm_80"}, true);
    device(8, 6);
    auto catalog = open(file);
    catalog["push"].compile();
    CHECK(catalog["push"].load_info()->how == "bundle compatible cubin");
    device(9, 0);
    auto again = open(file);
    again["push"].compile();
    CHECK(again["push"].load_info()->how == "bundle ptx");
    CHECK(again["push"].load_info()->target == "compute_80");
}

TEST_CASE_FIXTURE(Fixture, "an artifact whose bytes changed is never loaded: its checksum is checked first")
{
    auto file = bundle({"sm_90"}, false);
    flip_byte(file, 100);  // inside the last artifact: scale's or push's cubin
    auto catalog = open(file);
    std::string failed;
    for (const char* name : {"push", "scale"}) {
        try {
            catalog[name].compile();
        } catch (const ArtifactError& error) {
            failed = error.what();
        }
    }
    CHECK(failed.find("nothing in the bundle fits CUDA device 0, Fake H200 (sm_90)") != std::string::npos);
    CHECK(failed.find("checksum mismatch") != std::string::npos);
    CHECK(failed.find(file.string() + "#") != std::string::npos);
    CHECK(driver->loads == 1);  // the intact kernel only
    REQUIRE(package.warnings.size() == 1);
    CHECK(package.warnings[0].find("checksum mismatch") != std::string::npos);
}

TEST_CASE_FIXTURE(Fixture, "when nothing in the bundle fits, the error names the bundle, kernel, device and targets")
{
    auto file = bundle({"sm_90"}, true);
    device(8, 0);
    auto catalog = open(file);
    std::string expected = "kernel 'push': nothing in the bundle fits CUDA device 0, Fake H200 (sm_80); the bundle " +
                           file.string() +
                           " holds:\n  kernel 'push' for sm_90, compute_90, none of which runs on "
                           "sm_80\nA bundle is never compiled from";
    CHECK_THROWS_WITH_AS(catalog["push"].compile(), doctest::Contains(expected.c_str()), ArtifactError);
    CHECK(driver->loads == 0);
}

TEST_CASE_FIXTURE(Fixture, "bundling a target the cache lacks names the kernel and target and says to build")
{
    REQUIRE(package.build({"sm_90"}, false).ok());
    BundleRequest request{{package.package()}, package.config, package.tree / "kernels.ckb"};
    request.config.architectures = {"sm_80", "sm_90"};
    request.config.ptx = false;
    CHECK_THROWS_WITH_AS(write_bundle(request),
                         doctest::Contains("kernel 'push' (sim.kernels.push) for sm_80: no entry"), ArtifactError);
    CHECK_THROWS_WITH_AS(write_bundle(request), doctest::Contains("run cunumpy-kernels build with the same paths"),
                         ArtifactError);
    CHECK_FALSE(std::filesystem::exists(request.output));
}

TEST_CASE_FIXTURE(Fixture, "status --bundle: current, then the kernel whose source changed, and kernels added")
{
    auto file = bundle({"sm_90"}, false);
    auto config_at = [&](const std::filesystem::path&) { return package.config; };
    BundleStatus status = read_bundle_status(file, {}, config_at);
    CHECK(status.current());
    CHECK(status.targets == std::vector<std::string>{"sm_90"});
    package.tree.write("src/sim/kernels/push/push_cuda.cu", std::string(test::push_cuda) + "// edited\n");
    package.tree.kernel("src/sim/kernels", "gather");
    status = read_bundle_status(file, {}, config_at);
    CHECK_FALSE(status.current());
    CHECK(status.modules("changed") == std::vector<std::string>{"sim.kernels.push"});
    CHECK(status.modules("added") == std::vector<std::string>{"sim.kernels.gather"});
    const auto& push = *std::find_if(status.kernels.begin(), status.kernels.end(),
                                     [](const BundleKernelStatus& k) { return k.name == "push"; });
    REQUIRE(push.artifacts.size() == 1);
    CHECK(push.artifacts[0].reason.rfind("source ", 0) == 0);
    CHECK(push.artifacts[0].reason.find("push_cuda.cu changed") != std::string::npos);
    std::filesystem::remove_all(package.tree / "src/sim/kernels/sort");
    CHECK(read_bundle_status(file, {}, config_at).modules("removed") == std::vector<std::string>{"sim.kernels.sort"});
}

TEST_CASE_FIXTURE(Fixture, "a bundle records its cache and toolkit; status computes keys in that cache unless told")
{
    auto file = bundle({"sm_90"}, false);
    Bundle written = read_bundle(file);
    CHECK(written.catalog.cache_root == package.cache().string());
    CHECK(written.catalog.toolkit.root == util::absolute_normal(cuda_root_of(package.config)).string());
    CHECK(written.catalog.toolkit.compiler.rfind("nvrtc ", 0) == 0);
    Config elsewhere = package.config;
    elsewhere.cache_dir = package.tree / "empty-cache";  // as a status without --cache-dir resolves another cache
    auto config_at = [&](const std::filesystem::path&) { return elsewhere; };
    BundleStatus status = read_bundle_status(file, {}, config_at);
    CHECK(status.current());
    CHECK(status.cache_root == package.cache());
    CHECK(status.toolkit_change == "");
    status = read_bundle_status(file, {}, config_at, true);  // --cache-dir given: that cache, never probed
    CHECK(status.modules("unknown") == std::vector<std::string>{"sim.kernels.push", "sim.kernels.scale"});
    std::filesystem::rename(package.cache(), package.tree / "moved-cache");
    status = read_bundle_status(file, {}, config_at);
    REQUIRE_FALSE(status.warnings.empty());
    CHECK(status.warnings[0].find("made from the cache " + package.cache().string() + ", which is not here") !=
          std::string::npos);
}

TEST_CASE_FIXTURE(Fixture, "with another toolkit, status --bundle names both instead of asking for a build")
{
    auto file = bundle({"sm_90"}, false);
    std::string made_with = read_bundle(file).catalog.toolkit.root;
    Config other = package.config;
    other.cuda_root = package.tree / "other-toolkit";
    std::filesystem::create_directories(other.cuda_root / "lib64");
    auto config_at = [&](const std::filesystem::path&) { return other; };
    BundleStatus status = read_bundle_status(file, {}, config_at);
    CHECK_FALSE(status.current());
    CHECK(status.toolkit_change.find("the CUDA toolkit " + made_with + " (found by ") != std::string::npos);
    CHECK(status.toolkit_change.find("status finds " + other.cuda_root.string() + " (found by cuda-root)") !=
          std::string::npos);
    CHECK(status.toolkit_change.find("the bundle was made with nvrtc ") == 0);
    for (const auto& kernel : status.kernels)
        for (const auto& artifact : kernel.artifacts) {
            CHECK(artifact.state == "unknown");
            CHECK(artifact.reason == "the toolkit is not the bundle's " + made_with);
        }
}

TEST_SUITE_END();
