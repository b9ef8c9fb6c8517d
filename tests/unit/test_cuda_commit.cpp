// The one CUDA commit `build` and the runtime share: the artifact checked,
// the manifest written, the entry published with one rename or not at all.
#include "cuda_job/cuda_commit.hpp"
#include "compilers/artifact_check.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"
#include "util/temporary_name.hpp"

#include "first_call_tree.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("cuda_commit");

using namespace ck;
using test::FirstCallTree;
namespace fs = std::filesystem;

namespace {

// What lies in the cache's folder of temporaries and of entries.
std::size_t files_under(const fs::path& folder)
{
    std::error_code error;
    std::size_t count = 0;
    for (fs::recursive_directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) ++count;
    return count;
}

}  // namespace

TEST_CASE_FIXTURE(FirstCallTree, "a published entry's manifest describes the checked artifact")
{
    CudaJob job = planned_job();
    EntryStore store(location.root);
    fs::path artifact = commit_cuda_entry(store, job, output_for(job), 1.5);
    CHECK(artifact.filename() == "push.sm_90.cubin");
    CHECK(util::read_file(artifact) == compiler.cubin);
    auto manifest = store.find("cuda", job.key);
    REQUIRE(manifest);
    CHECK(manifest->kernel == "push");
    CHECK(manifest->module == push.module);
    CHECK(manifest->target == "sm_90");
    CHECK(manifest->entry_symbol == "push");
    CHECK(manifest->inputs == job.inputs);
    REQUIRE(manifest->artifacts.size() == 1);
    CHECK(manifest->artifacts[0].sha256 == sha256_hex(compiler.cubin));
    CHECK(manifest->artifacts[0].size == compiler.cubin.size());
    CHECK(store.latest("cuda", push.module, "sm_90")->key == job.key);
    CHECK(fs::exists(location.root / "CACHEDIR.TAG"));
}

TEST_CASE_FIXTURE(FirstCallTree, "nothing is visible before publish, nor left when a staged entry is dropped")
{
    CudaJob job = planned_job();
    EntryStore store(location.root);
    {
        CudaCommit staged(store, job, output_for(job), 1.0);
        CHECK_FALSE(store.find("cuda", job.key));
    }
    CHECK_FALSE(store.find("cuda", job.key));
    CHECK(files_under(location.root / "cuda") == 0);
    CHECK(files_under(location.root / temporary_folder_name) == 0);
}

TEST_CASE_FIXTURE(FirstCallTree, "an artifact that fails a check is never staged")
{
    CudaJob job = planned_job();
    SUBCASE("another architecture") { compiler.cubin = test::craft({.flags = 0x06005004}); }
    SUBCASE("no entry symbol") { compiler.cubin = test::craft({.symbols = {{"pull"}}}); }
    SUBCASE("PTX for a cubin target") { compiler.cubin = ".version 9.0\n.target sm_90\n"; }
    EntryStore store(location.root);
    CHECK_THROWS_AS(CudaCommit(store, job, output_for(job), 1.0), ArtifactCheckError);
    CHECK(files_under(location.root / "cuda") == 0);
    CHECK(files_under(location.root / temporary_folder_name) == 0);
}

TEST_CASE_FIXTURE(FirstCallTree, "of two commits of one key the first published stays and both succeed")
{
    CudaJob job = planned_job();
    EntryStore store(location.root);
    CudaCommit first(store, job, output_for(job), 1.0);
    CudaCommit second(store, job, output_for(job), 2.0);
    fs::path entry = first.publish();
    CHECK(second.publish() == entry);
    CHECK(store.find("cuda", job.key)->seconds == 1.0);
    CHECK(EntryStore(location.root).entry_dirs("cuda").size() == 1);
}
