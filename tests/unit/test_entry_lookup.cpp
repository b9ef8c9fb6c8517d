// The verified entry that serves a kernel's key: a miss, a hit, and every
// kind of damaged entry refused with an ArtifactError, never loaded. Entries
// are published through the commit `build` uses, from a fake compiler.
#include "cunumpy_kernels/error.hpp"
#include "runtime/artifact_cache.hpp"
#include "runtime/entry_lookup.hpp"
#include "util/file_util.hpp"

#include "first_call_tree.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>

TEST_SUITE_BEGIN("entry_lookup");

using namespace ck;
using test::FirstCallTree;
namespace fs = std::filesystem;

namespace {

struct PublishedEntry : FirstCallTree {
    PublishedEntry()
    {
        job = planned_job("sm_90");
        artifact = commit_cuda_entry(EntryStore(location.root), job, output_for(job), 0.5);
    }

    // `file` of the entry rewritten with `bytes` (published files are read-only).
    void rewrite(const fs::path& file, const std::string& bytes)
    {
        fs::permissions(file, fs::perms::owner_write, fs::perm_options::add);
        std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    }

    // The entry's manifest as `edit` changes it.
    void edit_manifest(const std::function<void(nlohmann::json&)>& edit)
    {
        fs::path file = artifact.parent_path() / "manifest.json";
        auto manifest = nlohmann::json::parse(util::read_file(file));
        edit(manifest);
        rewrite(file, manifest.dump(2));
    }

    std::string artifact_bytes() const { return util::read_file(artifact); }

    CudaJob job;
    fs::path artifact;
};

}  // namespace

TEST_CASE_FIXTURE(FirstCallTree, "a key with no entry is a miss, not a problem")
{
    auto lookup = entries();
    EntryFound found = lookup->find(planned_job("sm_90"), nullptr, false);
    CHECK_FALSE(found.candidate);
    CHECK(found.problem.empty());
    CHECK(lookup->held(push) == std::vector<std::string>{"no entry of sim.kernels.push (run cunumpy-kernels build)"});
}

TEST_CASE_FIXTURE(PublishedEntry, "a hit gives the entry, and read() its checked bytes")
{
    auto lookup = entries();
    EntryFound found = lookup->find(job, nullptr, false);
    REQUIRE(found.candidate);
    CHECK(found.problem.empty());
    CHECK(found.read);  // the manifest was read, for the key record
    CHECK(found.candidate->entry == artifact.parent_path());
    ModuleImage image = lookup->read(*found.candidate);
    CHECK(image.bytes == compiler.cubin);
    CHECK(image.entry_symbol == "push");
    CHECK(image.info.key == job.key);
    CHECK(image.info.artifact == artifact);
    CHECK(lookup->images_read() == 1);
    // Another target's key of the same kernel is a miss.
    CHECK_FALSE(lookup->find(planned_job("sm_80"), nullptr, false).candidate);
}

TEST_CASE_FIXTURE(PublishedEntry, "a manifest the key record kept replaces reading the file while its stat holds")
{
    auto lookup = entries();
    std::optional<ManifestReading> reading = lookup->find(job, nullptr, false).read;
    REQUIRE(reading);
    EntryFound found = lookup->find(job, &*reading, false);
    REQUIRE(found.candidate);
    CHECK_FALSE(found.read);
    CHECK(lookup->manifests_from_record() == 1);
    // "check" reads the file anyway and compares.
    found = lookup->find(job, &*reading, true);
    CHECK(found.read);
    CHECK(lookup->manifests_from_record() == 1);
}

TEST_CASE_FIXTURE(PublishedEntry, "a damaged entry is refused with an ArtifactError and never loaded")
{
    auto lookup = entries();
    auto candidate = lookup->find(job, nullptr, false).candidate;
    REQUIRE(candidate);
    std::string bytes = artifact_bytes();
    std::string expected;
    SUBCASE("the artifact with one byte changed")
    {
        bytes[bytes.size() / 2] ^= 0x5a;
        rewrite(artifact, bytes);
        expected = "checksum mismatch";
    }
    SUBCASE("the artifact's SHA-256 in the manifest changed")
    {
        edit_manifest([](nlohmann::json& manifest) { manifest["artifacts"][0]["sha256"] = std::string(64, 'a'); });
        candidate = lookup->find(job, nullptr, false).candidate;
        REQUIRE(candidate);
        expected = "checksum mismatch";
    }
    SUBCASE("the artifact replaced after the lookup by one of the same size")
    {
        rewrite(artifact, std::string(bytes.size(), '\0'));
        expected = "the entry is corrupt and was not loaded";
    }
    SUBCASE("the entry's folder writable by others")
    {
        fs::permissions(candidate->entry, fs::perms::others_write, fs::perm_options::add);
        expected = "chmod o-w " + candidate->entry.string();
    }
    CHECK_THROWS_WITH_AS(lookup->read(*candidate), doctest::Contains(expected.c_str()), ArtifactError);
    CHECK(lookup->images_read() == 0);
}

TEST_CASE_FIXTURE(PublishedEntry, "an entry the lookup cannot use is a problem that names it; the cache then throws")
{
    std::string expected;
    SUBCASE("a truncated artifact")
    {
        std::string bytes = artifact_bytes();
        rewrite(artifact, bytes.substr(0, bytes.size() / 2));
        expected = "is missing or truncated";
    }
    SUBCASE("the artifact removed")
    {
        fs::remove(artifact);
        expected = "is missing or truncated";
    }
    SUBCASE("a manifest that does not parse")
    {
        rewrite(artifact.parent_path() / "manifest.json", "{ not a manifest");
        expected = "manifest.json";
    }
    SUBCASE("another kernel's entry under this key")
    {
        edit_manifest([](nlohmann::json& manifest) { manifest["kernel"] = "pull"; });
        expected = "holds kernel 'pull' for sm_90, not 'push' for sm_90";
    }
    EntryFound found = entries()->find(job, nullptr, false);
    CHECK_FALSE(found.candidate);
    CHECK(found.problem.find(expected) != std::string::npos);
    // The cache in front of it raises it as an ArtifactError naming the target.
    ArtifactCache cache(
        config, "sim", true, [](const std::string&) {}, std::make_unique<test::FakeCudaCompiler>());
    CHECK_THROWS_WITH_AS(cache.find(push, {"sm_90", "cubin"}), doctest::Contains("sm_90: unusable entry"),
                         ArtifactError);
}

TEST_CASE_FIXTURE(PublishedEntry, "without the compiler's identity the latest entry is matched by its other inputs")
{
    // The kernel's latest sm_90 entry is this one: its inputs but the compiler match.
    CudaJob unknown = job;
    unknown.key = std::string(64, '0');
    unknown.inputs["compiler"] = "";
    auto found = entries(false, false)->find(unknown, nullptr, false);
    REQUIRE(found.candidate);
    CHECK(found.candidate->manifest.key == job.key);
    // Any other input changed: no match.
    unknown.inputs["source"] = "another source";
    CHECK_FALSE(entries(false, false)->find(unknown, nullptr, false).candidate);
    // and what the cache holds is named for the error
    auto held = entries()->held(push);
    REQUIRE(held.size() == 1);
    CHECK(held[0].find("sm_90: an entry built") == 0);
}
