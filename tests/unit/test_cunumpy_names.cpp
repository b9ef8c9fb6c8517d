// Two modules of one text that import different code share cunumpy's build
// name: caught within one plan (both fail) and across builds (the name points
// at another module's build).
#include "host/cunumpy_names.hpp"
#include "host/host_job.hpp"
#include "host/host_planner.hpp"
#include "host/cunumpy_entry.hpp"
#include "cache/cache.hpp"
#include "cunumpy_kernels/package.hpp"

#include "host_toolchain.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

using namespace ck;
namespace fs = std::filesystem;

namespace {

const char* kd = "from ..util.helpers import scale\n\ndef kd(x: 'float[:]'):\n    x[0] = scale(x[0])\n";

// pkg/kernels and pkg/kernels2: one kd_kernels.py, helpers multiplying by 3 and `factor2`.
void write_copies(const test::TempTree& tree, int factor2)
{
    for (const std::string package : {"kernels", "kernels2"}) {
        int factor = package == "kernels" ? 3 : factor2;
        tree.write("src/pkg/__init__.py", "");
        tree.write("src/pkg/" + package + "/__init__.py", "");
        tree.write("src/pkg/" + package + "/kd/kd_kernels.py", kd);
        tree.write("src/pkg/" + package + "/util/helpers.py",
                   "def scale(a: float) -> float:\n    return " + std::to_string(factor) + ".0 * a\n");
    }
}

struct Planned {
    std::vector<KernelSource> kernels;
    HostPlan plan;
};

Planned plan_of(const fs::path& path, const fs::path& cache_root)
{
    Planned planned{find_kernels({path}, Config{}), {}};
    std::vector<const KernelSource*> pointers;
    for (const auto& k : planned.kernels) pointers.push_back(&k);
    planned.plan = plan_host_builds(pointers, test::host_toolchain(cache_root.string()));
    return planned;
}

std::size_t index_of(const HostPlan& plan, const std::string& name)
{
    for (std::size_t i = 0; i < plan.modules.size(); ++i)
        if (plan.modules[i].name == name) return i;
    FAIL("no module " << name);
    return 0;
}

// Publishes an entry for every module of `plan`, as a build would (no extension file).
void publish_all(const HostPlan& plan, const EntryStore& store)
{
    for (std::size_t i = 0; i < plan.modules.size(); ++i) {
        EntryWriter writer(store.root(), "host", plan.jobs[i].key);
        Manifest manifest;
        manifest.key = plan.jobs[i].key;
        manifest.kind = "host";
        manifest.module = plan.modules[i].name;
        manifest.target = "host";
        manifest.inputs = plan.jobs[i].inputs;
        writer.commit(manifest);
    }
}

// The two packages planned as two separate builds into one cache, both published.
struct TwoBuilds {
    explicit TwoBuilds(int factor2) : store(tree / "cache")
    {
        write_copies(tree, factor2);
        first = plan_of(tree / "src/pkg/kernels", store.root());
        second = plan_of(tree / "src/pkg/kernels2", store.root());
        kd1 = index_of(first.plan, "pkg.kernels.kd.kd_kernels");
        kd2 = index_of(second.plan, "pkg.kernels2.kd.kd_kernels");
        publish_all(first.plan, store);
        publish_all(second.plan, store);
    }
    CunumpyEntry named() const { return read_cunumpy_entry(store.root(), first.plan.jobs[kd1].cunumpy_name, ".so"); }

    test::TempTree tree;
    EntryStore store;
    Planned first, second;
    std::size_t kd1 = 0, kd2 = 0;
};

void point_at(const HostPlan& plan, std::size_t index, const EntryStore& store)
{
    point_cunumpy_entry(
        store.root(), plan.jobs[index].cunumpy_name,
        host_build_folder(store, plan.jobs[index].key, plan.modules[index]).lexically_relative(store.root()));
}

}  // namespace

TEST_SUITE("cunumpy_names")
{
    TEST_CASE("one plan: both modules of one name and different imports fail, naming each other")
    {
        test::TempTree tree;
        write_copies(tree, 5);
        tree.write("src/pkg/kernels/user/user_kernels.py",
                   "from pkg.kernels.kd.kd_kernels import kd\n\ndef user():\n    pass\n");
        auto [kernels, plan] = plan_of(tree / "src", tree / "cache");
        std::size_t one = index_of(plan, "pkg.kernels.kd.kd_kernels");
        std::size_t two = index_of(plan, "pkg.kernels2.kd.kd_kernels");
        CHECK(plan.jobs[one].cunumpy_name == plan.jobs[two].cunumpy_name);
        CHECK(plan.jobs[one].content_key != plan.jobs[two].content_key);
        const std::string& problem = plan.modules[one].problem;
        CHECK(problem.find("shares cunumpy's build name " + plan.jobs[one].cunumpy_name +
                           " with pkg.kernels2.kd.kd_kernels") != std::string::npos);
        CHECK(problem.find("pkg.kernels.util.helpers and pkg.kernels2.util.helpers differ") != std::string::npos);
        CHECK(problem.find("Make the two texts differ") != std::string::npos);
        CHECK(plan.modules[two].problem.find("with pkg.kernels.kd.kd_kernels") != std::string::npos);
        CHECK(plan.modules[index_of(plan, "pkg.kernels.util.helpers")].problem.empty());
        CHECK(plan.modules[index_of(plan, "pkg.kernels.user.user_kernels")].problem.find(
                  "imports pkg.kernels.kd.kd_kernels, which cannot be built") != std::string::npos);
    }

    TEST_CASE("one plan: identical copies, imports included, share the name without a problem")
    {
        test::TempTree tree;
        write_copies(tree, 3);
        auto [kernels, plan] = plan_of(tree / "src", tree / "cache");
        std::size_t one = index_of(plan, "pkg.kernels.kd.kd_kernels");
        std::size_t two = index_of(plan, "pkg.kernels2.kd.kd_kernels");
        CHECK(plan.jobs[one].key != plan.jobs[two].key);  // our key names the module
        CHECK(plan.jobs[one].content_key == plan.jobs[two].content_key);
        for (const auto& module : plan.modules) CHECK(module.problem.empty());
    }

    TEST_CASE("across builds: status learns that the name points at another module's build")
    {
        TwoBuilds b(5);
        for (const auto& module : b.first.plan.modules) CHECK(module.problem.empty());  // alone, each is fine
        CHECK(check_cunumpy_name(b.first.plan, b.kd1, b.store, b.named()).problem.find("is missing") !=
              std::string::npos);
        point_at(b.first.plan, b.kd1, b.store);
        CHECK(check_cunumpy_name(b.first.plan, b.kd1, b.store, b.named()).problem.empty());

        point_at(b.second.plan, b.kd2, b.store);  // the other package's build re-points the name
        CunumpyNameHolder holder = check_cunumpy_name(b.first.plan, b.kd1, b.store, b.named());
        CHECK(holder.other_module == "pkg.kernels2.kd.kd_kernels");
        CHECK(holder.problem.find("points at the build of pkg.kernels2.kd.kd_kernels") != std::string::npos);
        CHECK(entry_content_key(b.store, b.second.plan.jobs[b.kd2].key) == b.second.plan.jobs[b.kd2].content_key);
        CHECK(entry_content_key(b.store, std::string(64, 'f')).empty());
    }

    TEST_CASE("across builds: an identical copy's build serves; an older build of the module does not")
    {
        TwoBuilds b(3);
        point_at(b.second.plan, b.kd2, b.store);
        CHECK(check_cunumpy_name(b.first.plan, b.kd1, b.store, b.named()).problem.empty());

        // helpers edited: kd's key changes, cunumpy's name does not, and still points at the old build.
        point_at(b.first.plan, b.kd1, b.store);
        b.tree.write("src/pkg/kernels/util/helpers.py", "def scale(a: float) -> float:\n    return 4.0 * a\n");
        auto edited = plan_of(b.tree / "src/pkg/kernels", b.store.root());
        std::size_t kd = index_of(edited.plan, "pkg.kernels.kd.kd_kernels");
        REQUIRE(edited.plan.jobs[kd].cunumpy_name == b.first.plan.jobs[b.kd1].cunumpy_name);
        CunumpyNameHolder holder = check_cunumpy_name(edited.plan, kd, b.store, b.named());
        CHECK(holder.problem.find("an older build of this module") != std::string::npos);
        CHECK(holder.other_module.empty());
    }
}
