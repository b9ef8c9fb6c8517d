// verify, prune, export and import.
#include "cache_admin/cache_maintenance.hpp"
#include "cunumpy_kernels/error.hpp"
#include "host/cunumpy_entry.hpp"
#include "crafted_cubin.hpp"
#include "temp_tree.hpp"
#include "util/file_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <archive.h>
#include <chrono>
#include <archive_entry.h>

TEST_SUITE_BEGIN("cache_maintenance");

using namespace ck;
namespace fs = std::filesystem;

namespace {

// Publishes a sound entry whose key is the hash of its inputs; its cubin
// passes the load checks and carries `bytes` after it.
std::string publish(const fs::path& root, const std::string& module, const std::string& bytes,
                    const std::string& built_at = "2026-01-01T00:00:00Z", const std::string* cubin = nullptr)
{
    Manifest m;
    m.kind = "cuda";
    m.module = module;
    m.kernel = module.substr(module.rfind('.') + 1);
    m.entry_symbol = m.kernel;
    m.target = "sm_90";
    // As a build's: its inputs name the kernel and the target (verify reads the manifest against them).
    m.inputs = {{"module", module}, {"kernel", m.kernel}, {"target", m.target}, {"bytes", bytes}};
    m.key = cache_key(m.inputs);
    m.built_at = built_at;
    EntryWriter writer(root, "cuda", m.key);
    m.artifacts.push_back(
        writer.add_file(m.kernel + ".sm_90.cubin", "sm_90", cubin ? *cubin : test::loadable_cubin(m.kernel, bytes)));
    writer.commit(m);
    return m.key;
}

// Publishes a host entry as `build` lays it out: the extension under its
// package path, a stub beside it, imports' keys in the inputs. With `name`,
// cunumpy's `<stem>-<hash>` name is pointed at it.
std::string publish_host(const fs::path& root, const std::string& stem, const std::string& bytes,
                         const std::string& built_at, const nlohmann::json& imports = nlohmann::json::object(),
                         const std::string& name = "")
{
    Manifest m;
    m.kind = "host";
    m.module = "sim.kernels." + stem;
    m.target = "host";
    m.inputs = {{"module", m.module}, {"bytes", bytes}, {"imports", imports}};
    m.key = cache_key(m.inputs);
    m.built_at = built_at;
    EntryWriter writer(root, "host", m.key);
    fs::create_directories(writer.folder() / "sim/kernels/__pyccel__");
    m.artifacts.push_back(writer.add_file("sim/kernels/" + stem + ".so", "host", bytes));
    writer.add_file("sim/kernels/__pyccel__/" + stem + ".pyi", "host", "stub");
    writer.commit(m);
    EntryStore(root).remember_latest("host", m.module, "host", m.key);
    if (!name.empty()) point_cunumpy_entry(root, name, fs::path("host") / m.key.substr(0, 2) / m.key / "sim/kernels");
    return m.key;
}

std::vector<std::string> modules_of(const std::vector<EntryInfo>& entries)
{
    std::vector<std::string> modules;
    for (const auto& entry : entries) modules.push_back(entry.manifest ? entry.manifest->module : "?");
    return modules;
}

// Writes a tar archive with the given members; a member whose name ends in
// "@link" is written as a symlink to /etc/passwd.
void write_tar(const fs::path& path, const std::vector<std::pair<std::string, std::string>>& members)
{
    archive* a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    archive_write_open_filename(a, path.c_str());
    for (const auto& [name, bytes] : members) {
        archive_entry* e = archive_entry_new();
        bool link = name.size() > 5 && name.substr(name.size() - 5) == "@link";
        archive_entry_set_pathname(e, (link ? name.substr(0, name.size() - 5) : name).c_str());
        archive_entry_set_filetype(e, link ? AE_IFLNK : AE_IFREG);
        if (link) archive_entry_set_symlink(e, "/etc/passwd");
        archive_entry_set_size(e, link ? 0 : static_cast<la_int64_t>(bytes.size()));
        archive_entry_set_perm(e, 0644);
        archive_write_header(a, e);
        if (!link) archive_write_data(a, bytes.data(), bytes.size());
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
}

}  // namespace

TEST_CASE("verify finds corrupt artifacts, forged keys and unreadable manifests")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    std::string good = publish(tree.root(), "sim.kernels.push", "good cubin");
    std::string corrupt = publish(tree.root(), "sim.kernels.deposit", "deposit cubin");
    std::string broken = publish(tree.root(), "sim.kernels.sort", "sort cubin");
    CHECK(verify_entries(store, false).empty());

    fs::path cubin = store.entry_dir("cuda", corrupt) / "deposit.sm_90.cubin";
    std::string tampered = util::read_file(cubin);
    tampered.back() = 'N';  // the same size, another checksum
    util::write_file_synced(cubin, tampered);
    util::write_file_synced(store.entry_dir("cuda", broken) / "manifest.json", "{");
    auto findings = verify_entries(store, false);
    REQUIRE(findings.size() == 2);
    for (const auto& f : findings) {
        CHECK_FALSE(f.removed);
        bool known = f.problem.find("SHA-256 mismatch") != std::string::npos ||
                     f.problem.find("manifest.json unreadable") != std::string::npos;
        CHECK_MESSAGE(known, f.problem);
    }
    findings = verify_entries(store, true);
    CHECK(findings.size() == 2);
    CHECK(findings[0].removed);
    CHECK(verify_entries(store, false).empty());
    CHECK(store.find("cuda", good));
    CHECK(list_entries(store).size() == 1);
}

TEST_CASE("verify finds an entry no build would publish: 1 of 3 unloadable (relocatable, another architecture)")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    publish(tree.root(), "sim.kernels.push", "push");
    test::CraftedCubin relocatable;
    relocatable.type = ET_REL;
    std::string rel = test::craft(relocatable);
    publish(tree.root(), "sim.kernels.push2", "", "2026-01-01T00:00:00Z", &rel);
    test::CraftedCubin sm_80;
    sm_80.flags = 0x06005004;
    sm_80.symbols = {{"push3"}};
    std::string other = test::craft(sm_80);
    publish(tree.root(), "sim.kernels.push3", "", "2026-01-01T00:00:00Z", &other);
    auto findings = verify_entries(store, true);
    REQUIRE(findings.size() == 2);
    std::string all = findings[0].problem + "\n" + findings[1].problem;
    CHECK(all.find("check 'executable' failed") != std::string::npos);
    CHECK(all.find("check 'architecture' failed") != std::string::npos);
    CHECK(findings[0].removed);
    CHECK(list_entries(store).size() == 1);
}

TEST_CASE("prune by age, then by size, oldest built first")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    publish(tree.root(), "sim.kernels.a", std::string(1000, 'a'), "2020-01-01T00:00:00Z");
    publish(tree.root(), "sim.kernels.b", std::string(1000, 'b'), "2099-01-01T00:00:00Z");
    publish(tree.root(), "sim.kernels.c", std::string(1000, 'c'), "2098-01-01T00:00:00Z");

    PruneOptions dry;
    dry.max_age_seconds = 365 * 86400.0;
    dry.dry_run = true;
    auto would = prune_entries(store, dry);
    REQUIRE(would.size() == 1);
    CHECK(would[0].manifest->module == "sim.kernels.a");
    CHECK(list_entries(store).size() == 3);

    PruneOptions by_size;
    by_size.max_bytes = list_entries(store)[0].bytes + 10;  // room for one entry
    auto removed = prune_entries(store, by_size);
    REQUIRE(removed.size() == 2);
    CHECK(removed[0].manifest->module == "sim.kernels.a");
    CHECK(removed[1].manifest->module == "sim.kernels.c");
    auto left = list_entries(store);
    REQUIRE(left.size() == 1);
    CHECK(left[0].manifest->module == "sim.kernels.b");
}

TEST_CASE("prune to a size removes 2 superseded entries before 1 current older one: 3 entries before, 1 after")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    std::string current = publish(tree.root(), "sim.kernels.a", std::string(1000, 'a'), "2020-01-01T00:00:00Z");
    store.remember_latest("cuda", "sim.kernels.a", "sm_90", current);
    publish(tree.root(), "sim.kernels.b", std::string(1000, 'b'), "2098-01-01T00:00:00Z");
    std::string newest_b = publish(tree.root(), "sim.kernels.b", std::string(1000, 'B'), "2099-01-01T00:00:00Z");
    store.remember_latest("cuda", "sim.kernels.b", "sm_90", newest_b);
    publish(tree.root(), "sim.kernels.b", std::string(1000, 'c'), "2097-01-01T00:00:00Z");
    REQUIRE(list_entries(store).size() == 4);

    PruneOptions by_size;
    std::uint64_t one = list_entries(store)[0].bytes;
    by_size.max_bytes = 2 * one + 10;  // room for two entries
    by_size.dry_run = true;
    auto would = prune_entries(store, by_size);
    REQUIRE(would.size() == 2);
    CHECK_FALSE(would[0].current);
    CHECK_FALSE(would[1].current);
    CHECK(would[0].manifest->built_at == "2097-01-01T00:00:00Z");  // oldest superseded first
    CHECK(list_entries(store).size() == 4);

    by_size.max_bytes = one + 10;  // room for one: the older current entry goes before the newer one
    by_size.dry_run = false;
    auto removed = prune_entries(store, by_size);
    REQUIRE(removed.size() == 3);
    CHECK(removed[2].key == current);
    auto left = list_entries(store);
    REQUIRE(left.size() == 1);
    CHECK(left[0].key == newest_b);
    CHECK(left[0].current);
}

TEST_CASE("host entries: listed by kind with nested sizes, 1 truncated to 0 bytes found, fixed with its cunumpy name")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    publish(tree.root(), "sim.kernels.push", "cubin");
    std::string host = publish_host(tree.root(), "push", std::string(500, 'x'), "2026-01-01T00:00:00Z",
                                    nlohmann::json::object(), "push-0123456789abcdef0123");
    auto entries = list_entries(store);
    REQUIRE(entries.size() == 2);
    CHECK(entries[1].kind == "host");
    CHECK(entries[1].bytes > 500);  // the extension and stub below the package path, and the manifest
    CHECK(entries[1].current);
    CHECK(entries[1].linked);
    CHECK(verify_entries(store, false).empty());

    util::write_file_synced(store.entry_dir("host", host) / "sim/kernels/push.so", "");
    auto findings = verify_entries(store, true);
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].problem == "sim/kernels/push.so: 0 bytes, manifest says 500");
    CHECK(findings[0].removed);
    CHECK_FALSE(fs::exists(fs::symlink_status(tree.root() / "push-0123456789abcdef0123")));
    CHECK(list_entries(store).size() == 1);
}

TEST_CASE(
    "prune removes 2 superseded host builds and 1 stale name, never the 2 current builds a name needs: 4 entries "
    "before, 2 after")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    std::string old_util = publish_host(tree.root(), "util", "util v0", "2020-01-01T00:00:00Z");
    // cunumpy's name for the older text of push: it goes with that build.
    std::string old_push = publish_host(tree.root(), "push", "push v0", "2021-01-01T00:00:00Z",
                                        {{"sim.kernels.util", old_util}}, "push-00000000000000000000");
    // The current util is imported by the current push, which cunumpy's name points at.
    std::string util = publish_host(tree.root(), "util", "util v1", "2022-01-01T00:00:00Z");
    std::string push = publish_host(tree.root(), "push", "push v1", "2022-01-01T00:00:00Z",
                                    {{"sim.kernels.util", util}}, "push-0123456789abcdef0123");
    store.remember_latest("host", "sim.kernels.util", "host", "0000");  // util's record moved on: not current
    REQUIRE(list_entries(store).size() == 4);

    PruneOptions everything;
    everything.max_bytes = 0;
    everything.superseded = true;
    auto removed = prune_entries(store, everything);
    // util v0 waits for push v0, which imports it; then goes in the next pass.
    CHECK(modules_of(removed) == std::vector<std::string>{"sim.kernels.push", "sim.kernels.util"});
    REQUIRE(removed.size() == 2);
    CHECK(removed[0].key == old_push);
    CHECK(removed[1].key == old_util);
    auto left = list_entries(store);
    REQUIRE(left.size() == 2);
    CHECK(left[0].linked);
    CHECK(left[1].linked);
    CHECK(fs::exists(store.entry_dir("host", util)));
    CHECK(fs::exists(store.entry_dir("host", push)));
    CHECK(fs::exists(tree.root() / "push-0123456789abcdef0123" / "push.so"));
    CHECK_FALSE(fs::exists(fs::symlink_status(tree.root() / "push-00000000000000000000")));
}

TEST_CASE(
    "lock leftovers: clean removes 2 turns and moved-aside locks over an hour old, keeps a fresh turn and a build lock")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    std::string key = publish(tree.root(), "sim.kernels.push", "push");
    fs::path shard = store.entry_dir("cuda", key).parent_path();
    auto write_aged = [&](const std::string& name, std::chrono::hours age) {
        util::write_file(shard / name, "node-1:42");
        fs::last_write_time(shard / name, fs::file_time_type::clock::now() - age);
    };
    write_aged("aaaa.lock.breaking", std::chrono::hours(2));
    write_aged("bbbb.lock.broken.node-1.42", std::chrono::hours(30));
    write_aged("cccc.lock.breaking", std::chrono::hours(0));  // a breaker's live turn
    write_aged("dddd.lock", std::chrono::hours(5));           // a build lock: the waiters' to break

    CHECK(remove_lock_leftovers(store) == 2);
    CHECK_FALSE(fs::exists(shard / "aaaa.lock.breaking"));
    CHECK_FALSE(fs::exists(shard / "bbbb.lock.broken.node-1.42"));
    CHECK(fs::exists(shard / "cccc.lock.breaking"));
    CHECK(fs::exists(shard / "dddd.lock"));

    write_aged("eeee.lock.breaking", std::chrono::hours(3));
    CleanSummary summary = clean_entries(store, {});
    CHECK(summary.entries == 1);
    CHECK(summary.lock_leftovers == 1);
    CHECK_FALSE(fs::exists(shard / "eeee.lock.breaking"));
    CHECK(fs::exists(shard / "dddd.lock"));
}

TEST_CASE("ages and sizes")
{
    CHECK(parse_age("90") == 90);
    CHECK(parse_age("45m") == 2700);
    CHECK(parse_age("12h") == 43200);
    CHECK(parse_age("30d") == 30 * 86400);
    CHECK(parse_size("1024") == 1024);
    CHECK(parse_size("500M") == 500ull << 20);
    CHECK(parse_size("2G") == 2ull << 30);
    CHECK_THROWS_AS(parse_age("soon"), UsageError);
    CHECK_THROWS_AS(parse_age("3w"), UsageError);
    CHECK_THROWS_AS(parse_size("-1G"), UsageError);
    CHECK_THROWS_AS(parse_size("12GB"), UsageError);
}

TEST_CASE("export then import reproduces every sound CUDA entry, naming the 2 left out; import twice adds nothing")
{
    test::TempTree tree;
    EntryStore from(tree / "from");
    publish(from.root(), "sim.kernels.push", "push cubin");
    std::string corrupt = publish(from.root(), "sim.kernels.deposit", "deposit cubin");
    util::write_file_synced(from.entry_dir("cuda", corrupt) / "deposit.sm_90.cubin", "tampered");
    publish_host(from.root(), "push", "extension", "2026-01-01T00:00:00Z");
    auto exported = export_entries(from, tree / "cache.tar.zst");
    CHECK(exported.entries == 1);
    CHECK(exported.skipped == 2);
    REQUIRE(exported.left_out.size() == 2);
    std::string reasons = exported.left_out[0].reason + "\n" + exported.left_out[1].reason;
    std::string recorded = std::to_string(test::loadable_cubin("deposit", "deposit cubin").size());
    CHECK_MESSAGE(
        reasons.find("unsound (deposit.sm_90.cubin: 8 bytes, manifest says " + recorded + ")") != std::string::npos,
        reasons);
    std::string host_reason =
        "host (Pyccel) build of sim.kernels.push: it holds absolute paths into " + from.root().string();
    CHECK_MESSAGE(reasons.find(host_reason) != std::string::npos, reasons);

    EntryStore to(tree / "to");
    auto imported = import_entries(to, tree / "cache.tar.zst");
    CHECK(imported.entries == 1);
    CHECK(verify_entries(to, false).empty());
    CHECK(list_entries(to).size() == 1);
    CHECK(fs::exists(to.root() / "CACHEDIR.TAG"));
    CHECK(import_entries(to, tree / "cache.tar.zst").skipped == 1);
}

TEST_CASE("import keeps the local current entry current: 1 imported, 0 superseded locally, prune removes 0 of ours")
{
    test::TempTree tree;
    EntryStore from(tree / "from");
    publish(from.root(), "sim.kernels.push", "their push cubin");
    export_entries(from, tree / "cache.tar.zst");
    EntryStore to(tree / "to");
    std::string ours = publish(to.root(), "sim.kernels.push", "our push cubin");
    to.remember_latest("cuda", "sim.kernels.push", "sm_90", ours);
    CHECK(import_entries(to, tree / "cache.tar.zst").entries == 1);
    CHECK(to.latest_keys("cuda") == std::set<std::string>{ours});
    CHECK(to.latest("cuda", "sim.kernels.push", "sm_90")->key == ours);
}

// A sound entry published in a cache of its own: its manifest and the
// archive folder its files go in, for archives that carry it damaged.
struct PublishedElsewhere {
    test::TempTree source;
    std::string key = publish(source.root(), "sim.kernels.push", "push cubin");
    std::string manifest = util::read_file(EntryStore(source.root()).entry_dir("cuda", key) / "manifest.json");
    std::string prefix = "cuda/" + key.substr(0, 2) + "/" + key + "/";
};

TEST_CASE("import rejects untrusted archives whole")
{
    test::TempTree tree;
    EntryStore store(tree / "cache");
    std::string key(64, 'a');
    std::string dir = "cuda/aa/" + key + "/";

    SUBCASE("a path outside the cache layout")
    {
        write_tar(tree / "bad.tar", {{"../../etc/evil", "x"}});
        CHECK_THROWS_WITH_AS(import_entries(store, tree / "bad.tar"), doctest::Contains("is not a cache file"),
                             CacheError);
    }
    SUBCASE("a symlink")
    {
        write_tar(tree / "bad.tar", {{dir + "push.sm_90.cubin@link", ""}});
        CHECK_THROWS_WITH_AS(import_entries(store, tree / "bad.tar"), doctest::Contains("only regular files"),
                             CacheError);
    }
    SUBCASE("an artifact that does not match its manifest")
    {
        PublishedElsewhere real;
        write_tar(tree / "bad.tar",
                  {{real.prefix + "manifest.json", real.manifest}, {real.prefix + "push.sm_90.cubin", "evil cubin"}});
        CHECK_THROWS_WITH_AS(import_entries(store, tree / "bad.tar"), doctest::Contains("does not match its checksum"),
                             CacheError);
    }
    SUBCASE("an entry without the cubin its manifest names, and one with a file its manifest does not name")
    {
        PublishedElsewhere real;
        write_tar(tree / "bad.tar", {{real.prefix + "manifest.json", real.manifest}});
        CHECK_THROWS_WITH_AS(import_entries(store, tree / "bad.tar"),
                             doctest::Contains("push.sm_90.cubin, which its manifest names, is not in the archive"),
                             CacheError);
        write_tar(tree / "bad.tar", {{real.prefix + "manifest.json", real.manifest},
                                     {real.prefix + "push.sm_90.cubin", "push cubin"},
                                     {real.prefix + "extra.ptx", "not named"}});
        CHECK_THROWS_WITH_AS(import_entries(store, tree / "bad.tar"),
                             doctest::Contains("holds files its manifest does not name (extra.ptx)"), CacheError);
    }
    SUBCASE("a relocatable cubin with a matching manifest and checksum")
    {
        test::TempTree source;
        EntryStore real(source.root());
        test::CraftedCubin relocatable;
        relocatable.type = ET_REL;
        std::string rel = test::craft(relocatable);
        std::string real_key = publish(source.root(), "sim.kernels.push", "", "2026-01-01T00:00:00Z", &rel);
        std::string prefix = "cuda/" + real_key.substr(0, 2) + "/" + real_key + "/";
        std::string manifest = util::read_file(real.entry_dir("cuda", real_key) / "manifest.json");
        write_tar(tree / "bad.tar", {{prefix + "manifest.json", manifest}, {prefix + "push.sm_90.cubin", rel}});
        CHECK_THROWS_WITH_AS(import_entries(store, tree / "bad.tar"), doctest::Contains("check 'executable' failed"),
                             CacheError);
        CHECK(list_entries(store).empty());
    }
    SUBCASE("a manifest whose key is not the hash of its inputs")
    {
        write_tar(
            tree / "bad.tar",
            {{dir + "manifest.json",
              R"({"format":1,"key":")" + key +
                  R"(","kind":"cuda","module":"m","kernel":"k","entry_symbol":"k","target":"sm_90","inputs":{},"artifacts":[],"built_at":"","seconds":0,"log":""})"}});
        CHECK_THROWS_WITH_AS(import_entries(store, tree / "bad.tar"),
                             doctest::Contains("does not match the recorded inputs"), CacheError);
    }
    SUBCASE("not an archive")
    {
        tree.write("bad.tar", "plain text, not a tar archive at all");
        CHECK_THROWS_AS(import_entries(store, tree / "bad.tar"), CacheError);
    }
    CHECK(list_entries(store).empty());
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("cache_maintenance");

TEST_CASE("clean removes the entries and records of the given modules, 2 of 3, then every one")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    std::string push = publish(tree.root(), "sim.kernels.push", "push");
    store.remember_latest("cuda", "sim.kernels.push", "sm_90", push);
    store.remember_failure("cuda", "sim.kernels.push", "sm_80", "k", "log");
    publish(tree.root(), "other.kernels.scale", "scale");
    publish_host(tree.root(), "push_kernels", "extension", "2026-01-01T00:00:00Z", nlohmann::json::object(),
                 "push_kernels-0123456789abcdef0123");
    CleanSummary some = clean_entries(store, {"sim.kernels.push", "sim.kernels.push_kernels"});
    CHECK(some.entries == 2);
    CHECK(some.records == 3);  // cuda-last and cuda-failed of push, host-last of push_kernels
    CHECK(modules_of(list_entries(store)) == std::vector<std::string>{"other.kernels.scale"});
    CHECK_FALSE(fs::exists(tree.root() / "push_kernels-0123456789abcdef0123"));
    CleanSummary all = clean_entries(store, {});
    CHECK(all.entries == 1);
    CHECK(list_entries(store).empty());
}

TEST_CASE("a tree's modules are its Python files named from the source root")
{
    test::TempTree tree;
    tree.write("src/sim/__init__.py", "");
    tree.write("src/sim/kernels/__init__.py", "");
    tree.write("src/sim/kernels/push/push_kernels.py", "def push(x: 'float[:]'):\n    pass\n");
    tree.write("src/sim/util/helpers.py", "def scale(x: float):\n    return x\n");
    auto modules = tree_modules(tree / "src", Config{});
    CHECK(modules == std::set<std::string>{"sim", "sim.kernels", "sim.kernels.push", "sim.kernels.push.push_kernels",
                                           "sim.util.helpers"});
    CHECK(tree_modules(tree / "src/sim/util", Config{}).empty());
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("cache_maintenance");

TEST_CASE("prune goes by last use: of 3 current entries built in 2020, the 1 used today stays, by size and by age")
{
    for (bool by_size : {true, false}) {
        CAPTURE(by_size);
        test::TempTree tree;
        EntryStore store(tree.root());
        for (const char* name : {"a", "b", "c"}) {
            std::string module = std::string("sim.kernels.") + name;
            std::string key = publish(tree.root(), module, std::string(1000, name[0]), "2020-01-01T00:00:00Z");
            store.remember_latest("cuda", module, "sm_90", key);
            if (name == std::string("b")) store.remember_hit("cuda", module, "sm_90", key);  // a build hit it today
        }
        auto entries = list_entries(store);
        REQUIRE(entries.size() == 3);
        PruneOptions options;
        if (by_size)
            options.max_bytes = entries[0].bytes + 10;  // room for one
        else
            options.max_age_seconds = 365 * 86400.0;
        auto removed = prune_entries(store, options);
        auto gone = modules_of(removed);
        std::sort(gone.begin(), gone.end());
        CHECK(gone == std::vector<std::string>{"sim.kernels.a", "sim.kernels.c"});
        CHECK(modules_of(list_entries(store)) == std::vector<std::string>{"sim.kernels.b"});
        CHECK(std::distance(fs::directory_iterator(tree.root() / "cuda-used"), fs::directory_iterator()) == 1);
    }
}

TEST_CASE("a use is stamped at most once a day, in a file of its own per entry")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    std::string key = publish(tree.root(), "sim.kernels.a", "a");
    CHECK_FALSE(store.last_use("cuda", key));
    store.record_use("cuda", key);
    auto first = store.last_use("cuda", key);
    REQUIRE(first);
    // A stamp from two days ago is renewed; one from an hour ago is left alone.
    fs::path stamp = tree.root() / "cuda-used" / key;
    auto set_age = [&](int seconds) {
        fs::last_write_time(stamp, fs::file_time_type::clock::now() - std::chrono::seconds(seconds));
    };
    set_age(3600);
    auto hour_ago = fs::last_write_time(stamp);
    store.record_use("cuda", key);
    CHECK(fs::last_write_time(stamp) == hour_ago);
    set_age(2 * 86400);
    store.record_use("cuda", key);
    CHECK(*store.last_use("cuda", key) >= *first);
}

TEST_SUITE_END();
