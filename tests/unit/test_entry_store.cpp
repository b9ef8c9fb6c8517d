// Publishing: whole entries or none, concurrent builders, killed builders.
#include "util/temporary_name.hpp"
#include "cache/cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "temp_tree.hpp"
#include "util/file_util.hpp"
#include "util/json_text.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <set>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

TEST_SUITE_BEGIN("entry_store");

using namespace ck;
namespace fs = std::filesystem;

namespace {

Manifest manifest_for(const std::string& key)
{
    Manifest m;
    m.key = key;
    m.kind = "cuda";
    m.module = "sim.kernels.push";
    m.kernel = "push";
    m.entry_symbol = "push";
    m.target = "sm_90";
    m.inputs = {{"kernel", "push"}};
    m.built_at = "2026-01-01T00:00:00Z";
    return m;
}

fs::path publish(const fs::path& root, const std::string& key, const std::string& bytes)
{
    EntryWriter writer(root, "cuda", key);
    Manifest m = manifest_for(key);
    m.artifacts.push_back(writer.add_file("push.sm_90.cubin", "sm_90", bytes));
    return writer.commit(m);
}

std::size_t count_children(const fs::path& dir)
{
    std::error_code error;
    std::size_t n = 0;
    for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) ++n;
    return n;
}

const std::string key_a = std::string(64, 'a');

}  // namespace

TEST_CASE("a published entry is found whole, with its manifest")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    CHECK_FALSE(store.find("cuda", key_a));
    fs::path dir = publish(tree.root(), key_a, "cubin bytes");
    CHECK(dir == store.entry_dir("cuda", key_a));
    auto found = store.find("cuda", key_a);
    REQUIRE(found);
    CHECK(found->module == "sim.kernels.push");
    REQUIRE(found->artifacts.size() == 1);
    CHECK(found->artifacts[0].sha256 == sha256_hex("cubin bytes"));
    CHECK(util::read_file(dir / "push.sm_90.cubin") == "cubin bytes");
    CHECK(count_children(tree / temporary_folder_name) == 0);
}

TEST_CASE("has_entry: a published entry with its files, its manifest opened")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    CHECK_FALSE(store.has_entry("cuda", key_a, {"push.sm_90.cubin"}));
    fs::path dir = publish(tree.root(), key_a, "cubin bytes");
    CHECK(store.has_entry("cuda", key_a, {"push.sm_90.cubin"}));
    CHECK_FALSE(store.has_entry("cuda", key_a, {"push.sm_80.cubin"}));
    fs::remove(dir / "push.sm_90.cubin");
    CHECK_FALSE(store.has_entry("cuda", key_a, {"push.sm_90.cubin"}));
}

TEST_CASE("has_entry: an entry removed (as by another node's cache clean), or whose manifest is no file, is a miss")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    fs::path dir = publish(tree.root(), key_a, "cubin bytes");
    fs::remove(dir / "manifest.json");
    CHECK_FALSE(store.has_entry("cuda", key_a, {"push.sm_90.cubin"}));
    fs::create_directory(dir / "manifest.json");
    CHECK_FALSE(store.has_entry("cuda", key_a, {"push.sm_90.cubin"}));
    fs::remove_all(dir);
    CHECK_FALSE(store.has_entry("cuda", key_a, {"push.sm_90.cubin"}));
    REQUIRE(::mkfifo((dir.parent_path() / "fifo").c_str(), 0600) == 0);
    fs::create_directories(dir);
    fs::create_symlink(dir.parent_path() / "fifo", dir / "manifest.json");
    CHECK_FALSE(store.has_entry("cuda", key_a, {}));  // not waited on: the open does not block
}

TEST_CASE("a manifest names the process that published it; one written before that is still read")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    fs::path dir = publish(tree.root(), key_a, "cubin bytes");
    auto found = store.find("cuda", key_a);
    REQUIRE(found);
    CHECK(found->published_by == host_name() + ":" + std::to_string(::getpid()));
    auto json = util::parse_json(util::read_file(dir / "manifest.json"));
    json.erase("published_by");
    util::replace_file_atomically(dir / "manifest.json", json.dump());
    found = store.find("cuda", key_a);
    REQUIRE(found);
    CHECK(found->published_by.empty());
    CHECK(found->module == "sim.kernels.push");
}

TEST_CASE("a writer destroyed without commit leaves nothing")
{
    test::TempTree tree;
    {
        EntryWriter writer(tree.root(), "cuda", key_a);
        writer.add_file("push.sm_90.cubin", "sm_90", "partial");
    }
    CHECK_FALSE(EntryStore(tree.root()).find("cuda", key_a));
    CHECK(count_children(tree / temporary_folder_name) == 0);
}

TEST_CASE("a truncated artifact or a corrupt manifest makes the entry absent, with the reason")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    fs::path dir = publish(tree.root(), key_a, "cubin bytes");
    tree.write(fs::relative(dir / "push.sm_90.cubin", tree.root()).string(), "cub");
    std::string problem;
    CHECK_FALSE(store.find("cuda", key_a, &problem));
    CHECK(problem.find("truncated") != std::string::npos);
    tree.write(fs::relative(dir / "manifest.json", tree.root()).string(), "{not json");
    CHECK_FALSE(store.find("cuda", key_a, &problem));
}

TEST_CASE("a manifest naming a path outside the entry is rejected")
{
    nlohmann::json j = manifest_for(key_a).to_json();
    j["artifacts"] = {{{"file", "../../etc/passwd"}, {"target", "sm_90"}, {"sha256", ""}, {"size", 1}}};
    CHECK_THROWS_AS(Manifest::from_json(j, "m.json"), CacheError);
}

TEST_CASE("a manifest read from a parsed document it may move gives the same manifest, and the same errors")
{
    Manifest written = manifest_for(key_a);
    written.inputs = {{"source", {{"sha256", "ab"}}}, {"headers", {{"a.cuh", "cd"}}}};
    nlohmann::json j = written.to_json();
    Manifest copied = Manifest::from_json(j, "m.json");
    Manifest moved = Manifest::from_json(nlohmann::json(j), "m.json");
    CHECK(copied.to_json() == j);
    CHECK(moved.to_json() == j);
    for (const char* field : {"inputs", "artifacts", "key"}) {
        CAPTURE(field);
        nlohmann::json without = j;
        without.erase(field);
        CHECK_THROWS_WITH_AS(Manifest::from_json(without, "m.json"),
                             doctest::Contains(("no '" + std::string(field) + "'").c_str()), CacheError);
        CHECK_THROWS_WITH_AS(Manifest::from_json(std::move(without), "m.json"),
                             doctest::Contains(("no '" + std::string(field) + "'").c_str()), CacheError);
    }
}

TEST_CASE("a manifest read to load an entry has every field but the inputs, and the same errors")
{
    Manifest written = manifest_for(key_a);
    written.inputs = {{"source", {{"sha256", "ab"}}}, {"headers", {{"a.cuh", "cd"}}}, {"absent", {"<kernel>/x.h"}}};
    written.artifacts.push_back({"push.sm_90.cubin", "sm_90", std::string(64, 'b'), 12});
    nlohmann::json j = written.to_json();
    Manifest lean = Manifest::without_inputs(j.dump(2), "m.json");
    CHECK(lean.inputs.is_null());
    nlohmann::json expected = j;
    expected["inputs"] = nullptr;
    CHECK(lean.to_json() == expected);
    for (const char* field : {"inputs", "artifacts", "key", "format"}) {
        CAPTURE(field);
        nlohmann::json without = j;
        without.erase(field);
        CHECK_THROWS_WITH_AS(Manifest::without_inputs(without.dump(), "m.json"),
                             doctest::Contains(("no '" + std::string(field) + "'").c_str()), CacheError);
    }
    // An "inputs" key below the top level is no manifest's inputs.
    nlohmann::json nested = j;
    nested.erase("inputs");
    nested["log"] = {{"inputs", 1}};
    CHECK_THROWS_AS(Manifest::without_inputs(nested.dump(), "m.json"), CacheError);
    CHECK_THROWS_WITH_AS(Manifest::without_inputs(j.dump().substr(0, 40), "m.json"), doctest::Contains("m.json"),
                         CacheError);

    test::TempTree tree;
    EntryStore store(tree.root());
    fs::path dir = publish(tree.root(), key_a, "cubin bytes");
    auto full = store.find("cuda", key_a);
    auto to_load = store.find_to_load("cuda", key_a);
    REQUIRE(full);
    REQUIRE(to_load);
    CHECK(to_load->artifacts.at(0).sha256 == full->artifacts.at(0).sha256);
    CHECK(to_load->entry_symbol == full->entry_symbol);
    tree.write(fs::relative(dir / "push.sm_90.cubin", tree.root()).string(), "cub");
    std::string problem;
    CHECK_FALSE(store.find_to_load("cuda", key_a, &problem));
    CHECK(problem.find("truncated") != std::string::npos);
}

TEST_CASE("concurrent builders of one key all succeed and leave one entry")
{
    test::TempTree tree;
    constexpr int builders = 8;
    std::vector<pid_t> children;
    for (int i = 0; i < builders; ++i) {
        pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            try {
                publish(tree.root(), key_a, "same bytes");
                ::_exit(0);
            } catch (...) {
                ::_exit(1);
            }
        }
        children.push_back(pid);
    }
    for (pid_t pid : children) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    CHECK(count_children(tree / "cuda" / "aa") == 1);
    CHECK(EntryStore(tree.root()).find("cuda", key_a));
    CHECK(count_children(tree / temporary_folder_name) == 0);
}

TEST_CASE("a builder killed with SIGKILL mid-write leaves no entry; its leftovers are removed once stale")
{
    test::TempTree tree;
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        EntryWriter writer(tree.root(), "cuda", key_a);
        writer.add_file("push.sm_90.cubin", "sm_90", "half of a cubin");
        char byte = 1;
        if (::write(ready[1], &byte, 1) != 1) ::_exit(2);
        ::pause();  // "compiling" until killed
        ::_exit(3);
    }
    char byte = 0;
    REQUIRE(::read(ready[0], &byte, 1) == 1);
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));
    ::close(ready[0]);
    ::close(ready[1]);

    EntryStore store(tree.root());
    CHECK_FALSE(store.find("cuda", key_a));
    CHECK(count_children(tree / temporary_folder_name) == 1);
    CHECK(store.remove_stale_temporaries() == 1);
    CHECK(count_children(tree / temporary_folder_name) == 0);
}

TEST_CASE("a live writer's temporary folder is kept; an old one from elsewhere is removed")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    EntryWriter live(tree.root(), "cuda", key_a);
    fs::path foreign = tree / temporary_folder_name / "other-host.123.0.42";
    fs::create_directories(foreign);
    CHECK(store.remove_stale_temporaries() == 0);
    fs::last_write_time(foreign, fs::file_time_type::clock::now() - std::chrono::hours(48));
    CHECK(store.remove_stale_temporaries() == 1);
    CHECK(count_children(tree / temporary_folder_name) == 1);
}

TEST_CASE("latest keys: a hit makes its key current again, and an unchanged record is not rewritten")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    store.remember_latest("cuda", "sim.kernels.push", "sm_90", "k2");
    store.remember_latest("cuda", "sim.kernels.push", "sm_80", "k3");
    CHECK(store.latest_keys("cuda") == std::set<std::string>{"k2", "k3"});
    fs::path record = tree / "cuda-last/sim.kernels.push@sm_90";
    auto written = fs::last_write_time(record) - std::chrono::hours(1);
    fs::last_write_time(record, written);
    store.remember_hit("cuda", "sim.kernels.push", "sm_90", "k2");
    CHECK(fs::last_write_time(record) == written);
    store.remember_hit("cuda", "sim.kernels.push", "sm_90", "k1");  // reverted to an older entry
    CHECK(store.latest_keys("cuda") == std::set<std::string>{"k1", "k3"});
    CHECK(store.latest_keys("host").empty());
}

TEST_CASE("temporary names carry the process scope and pid")
{
    auto owner = owner_of_temporary(unique_temporary_name());
    REQUIRE(owner);
    CHECK(owner->pid == ::getpid());
    CHECK(owner->host == process_scope());
    owner = owner_of_temporary("node1.cluster.org.77.3.9");
    REQUIRE(owner);
    CHECK(owner->host == "node1.cluster.org");
    CHECK(owner->pid == 77);
    CHECK_FALSE(owner_of_temporary("garbage"));
}

TEST_CASE("latest-entry and failure records")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    publish(tree.root(), key_a, "x");
    store.remember_latest("cuda", "sim.kernels.push", "sm_90", key_a);
    auto latest = store.latest("cuda", "sim.kernels.push", "sm_90");
    REQUIRE(latest);
    CHECK(latest->key == key_a);
    CHECK_FALSE(store.latest("cuda", "sim.kernels.push", "sm_80"));
    store.remember_failure("cuda", "sim.kernels.push", "sm_90", key_a, "push_cuda.cu:3: error");
    auto failure = store.failure("cuda", "sim.kernels.push", "sm_90");
    REQUIRE(failure);
    CHECK((*failure)["log"] == "push_cuda.cu:3: error");
    store.forget_failure("cuda", "sim.kernels.push", "sm_90");
    CHECK_FALSE(store.failure("cuda", "sim.kernels.push", "sm_90"));
}

TEST_CASE("CACHEDIR.TAG has the standard signature")
{
    test::TempTree tree;
    EntryStore(tree.root()).ensure_tagged();
    CHECK(util::read_file(tree / "CACHEDIR.TAG").rfind("Signature: 8a477f597d28d172789f06886806bc55", 0) == 0);
}

TEST_SUITE_END();
