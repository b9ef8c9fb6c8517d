// Only ck::Error leaves the runtime library (util/library_surface.hpp), and
// every public entry point that takes a path works on one that is not UTF-8:
// each is called below on a package, cache and bundle under a Latin-1 folder
// ("caf\xe9") and either succeeds or throws a ck:: error naming the path with
// the byte escaped.
#include "bundle/bundle_writer.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/kernel_catalog.hpp"
#include "cunumpy_kernels/package.hpp"
#include "cunumpy_kernels/selection.hpp"
#include "runtime/selection_state.hpp"
#include "util/library_surface.hpp"

#include "runtime_package.hpp"

#include <doctest/doctest.h>

#include <stdexcept>

TEST_SUITE_BEGIN("library_surface");

using namespace ck;
using test::CudaBackend;
using test::RuntimePackage;

namespace {

const std::string latin1_folder = "caf\xe9";

// The example package under a Latin-1 folder, its cache there too, built.
struct Latin1Package {
    Latin1Package()
    {
        REQUIRE(package.build({"sm_80", "sm_90"}, true).ok());
        RuntimePackage::emulate_push(*driver);
    }
    std::filesystem::path missing() const { return package.tree / (latin1_folder + "/nothing-here"); }

    RuntimePackage package{latin1_folder};
    std::shared_ptr<test::FakeCudaDriver> driver = std::make_shared<test::FakeCudaDriver>();
};

}  // namespace

TEST_CASE("the surface lets ck errors and the caller's exceptions through and names any other as internal")
{
    CHECK_THROWS_WITH_AS(util::at_library_surface("f", [] { throw CacheError("disk full"); }), "disk full", CacheError);
    CHECK_THROWS_WITH_AS(util::at_library_surface("KernelCatalog::from_package", [] { throw std::out_of_range("at"); }),
                         "internal error in KernelCatalog::from_package: at; please report it", Error);
    CHECK_THROWS_WITH_AS(util::at_library_surface("f", [] { throw 7; }), doctest::Contains("unknown type"), Error);
    auto callers = [] { util::run_caller_code([] { throw std::logic_error("the caller's own"); }); };
    CHECK_THROWS_WITH_AS(util::at_library_surface("f", callers), "the caller's own", std::logic_error);
    // Nested surfaces (a public function calling another) translate once, at the outermost.
    CHECK_THROWS_WITH_AS(util::at_library_surface("outer", [&] { util::at_library_surface("inner", callers); }),
                         "the caller's own", std::logic_error);
    CHECK(util::at_library_surface("f", [] { return 42; }) == 42);
    CHECK_FALSE(util::SurfaceDepth::inside());
}

TEST_CASE_FIXTURE(Latin1Package, "the config and walk entry points take a Latin-1 path")
{
    std::filesystem::path pyproject =
        package.tree.write(latin1_folder + "/pyproject.toml", "[tool.cunumpy-kernels]\narch = [\"sm_90\"]\n");
    CHECK(load_config_file(pyproject).architectures == std::vector<std::string>{"sm_90"});
    CHECK(load_config(package.package()).source_file == pyproject);
    CHECK_THROWS_WITH_AS(load_config_file(missing() / "pyproject.toml"), doctest::Contains("caf\\xe9/nothing-here"),
                         ConfigError);
    auto kernels = find_kernels({package.package()}, package.config);
    REQUIRE(kernels.size() == 3);
    CHECK(kernels[0].cuda_file == package.package() / "push" / "push_cuda.cu");
    CHECK(kernels_of_paths({package.package() / "scale"}, package.config).at(0).name == "scale");
    auto push = kernel_of_file(package.package() / "push" / "push_cuda.cu", package.config);
    REQUIRE(push);
    CHECK(push->name == "push");
    CHECK_THROWS_WITH_AS(find_kernels({missing()}, package.config), doctest::Contains("caf\\xe9"), UsageError);
    std::vector<std::string> warned;
    package.tree.write(latin1_folder + "/src/sim/kernels/gather/gather_kernels.py", "def other(x):\n    pass\n");
    find_kernels({package.package()}, package.config, [&](const std::string& w) { warned.push_back(w); });
    REQUIRE(warned.size() == 1);  // the caller's sink gets the path escaped
    CHECK(warned[0].find("caf\\xe9/src/sim/kernels/gather/gather_kernels.py: defines no function") !=
          std::string::npos);
}

TEST_CASE_FIXTURE(Latin1Package, "a catalog of a Latin-1 tree, with its cache there, loads, launches and checks")
{
    CudaBackend cuda;
    auto options = package.options(driver);
    auto catalog = KernelCatalog::from_package(package.package(), options);
    catalog.attach_host("push", host_kernel(&test::push_host));
    catalog.attach_host("sort", host_kernel(&test::sort_host));
    catalog.check_signatures();
    CHECK(catalog.compile_all(2) == std::vector<std::string>{"push", "scale"});
    CHECK(catalog["push"].cuda_parameters() == std::vector<std::string>{"x", "e", "dt", "n"});
    CHECK(catalog["push"].host_parameters() == std::vector<std::string>{"x", "e", "dt", "n"});
    CHECK(catalog["push"].signature_mismatches().empty());
    auto info = catalog["push"].load_info();
    REQUIRE(info);
    CHECK(info->how == "cubin");
    auto gpu = GpuAccess::over(driver);
    std::vector<double> x = {1, 2}, e = {2, 2};
    DeviceBuffer dx = gpu->allocate(16), de = gpu->allocate(16);
    dx.upload(x.data(), 16);
    de.upload(e.data(), 16);
    catalog["push"](dx.view<double>({2}), de.view<double>({2}), 0.5, 2LL);
    dx.download(x.data(), 16);
    CHECK(x == std::vector<double>{2, 3});
    auto single = Kernel::from_folder(package.package() / "scale", {}, options.load);
    CHECK(single.compile());
    CHECK_THROWS_WITH_AS(KernelCatalog::from_package(missing(), options), doctest::Contains("caf\\xe9"), UsageError);
    CHECK_THROWS_WITH_AS(Kernel::from_folder(missing(), {}, options.load), doctest::Contains("caf\\xe9"), Error);
}

TEST_CASE_FIXTURE(Latin1Package, "a host kernel's own exception reaches the caller as it was thrown")
{
    auto catalog = KernelCatalog::from_package(package.package(), package.options(driver));
    catalog.attach_host("sort", host_kernel(+[](double*, long long) { throw std::domain_error("the user's"); }));
    std::vector<double> x = {2, 1};
    CHECK_THROWS_WITH_AS(catalog["sort"](host_array(x.data(), {2}), 2LL), "the user's", std::domain_error);
}

TEST_CASE_FIXTURE(Latin1Package, "a bundle written to and read from a Latin-1 path launches")
{
    BundleRequest request{{package.package()}, package.config, package.tree / (latin1_folder + "/k\xe9.ckb")};
    write_bundle(request);
    auto catalog = KernelCatalog::from_bundle(request.output, package.options(driver));
    catalog["push"].compile();
    auto info = catalog["push"].load_info();
    REQUIRE(info);
    CHECK(info->artifact == request.output.string() + "#push@sm_90");
    CHECK_THROWS_WITH_AS(KernelCatalog::from_bundle(missing(), package.options(driver)),
                         doctest::Contains("caf\\xe9/nothing-here"), ArtifactError);
}
