// Build locks: one builder per key, waiters that use the published entry,
// and locks of dead or silent holders broken.
#include "cache/build_lock.hpp"
#include "cache/cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "scoped_env.hpp"
#include "temp_tree.hpp"
#include "util/file_util.hpp"
#include "util/signal_paths.hpp"
#include "util/temporary_name.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

TEST_SUITE_BEGIN("build_lock");

using namespace ck;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

LockTiming timing_of(std::chrono::milliseconds stale_after)
{
    LockTiming timing;
    timing.stale_after = stale_after;
    return timing;
}

auto never = [] { return false; };

// A lock file as another process would have left it: of this scope
// (process_scope) when `host` is this host's name.
void write_holder(const fs::path& file, const std::string& host, long pid)
{
    nlohmann::json holder = {{"host", host},
                             {"scope", host == host_name() ? process_scope() : host + "~0~0"},
                             {"pid", pid},
                             {"started", "2026-12-01T00:00:00Z"},
                             {"token", "theirs"}};
    fs::create_directories(file.parent_path());
    util::replace_file_atomically(file, holder.dump());
}

long dead_pid()
{
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);
    return child;
}

timespec modified(const fs::path& file)
{
    struct stat info {};
    REQUIRE(::stat(file.c_str(), &info) == 0);
    return info.st_mtim;
}

}  // namespace

TEST_CASE("a free lock is taken, names its holder, and goes with its owner")
{
    test::TempTree tree;
    fs::path file = BuildLock::file_of(tree / "cuda/ab/abcd");
    CHECK(file == tree / "cuda/ab/abcd.lock");
    {
        auto lock = BuildLock::acquire(file, never, timing_of(60s));
        REQUIRE(lock);
        CHECK(lock->held());
        auto holder = nlohmann::json::parse(util::read_file(file));  // the shard folder was created
        CHECK(holder.at("host") == host_name());
        CHECK(holder.at("pid") == static_cast<long>(::getpid()));
        CHECK(!holder.at("started").get<std::string>().empty());
    }
    CHECK(!fs::exists(file));
}

TEST_CASE("an entry published already takes no lock")
{
    test::TempTree tree;
    fs::path file = tree / "x.lock";
    CHECK(BuildLock::acquire(
              file, [] { return true; }, timing_of(60s)) == nullptr);
    CHECK(!fs::exists(file));
}

TEST_CASE("a waiter uses the entry its holder publishes, and says whom it waits for")
{
    test::TempTree tree;
    fs::path file = tree / "x.lock";
    auto holder = BuildLock::acquire(file, never, timing_of(60s));
    std::atomic<bool> published{false};
    std::string waiting;
    LockEvents events;
    events.what = "kernel push for sm_90";
    events.waiting = [&](const std::string& message) { waiting = message; };
    std::unique_ptr<BuildLock> waited;
    bool returned = false;
    std::thread waiter([&] {
        waited = BuildLock::acquire(
            file, [&] { return published.load(); }, timing_of(60s), events);
        returned = true;
    });
    std::this_thread::sleep_for(200ms);
    published = true;
    holder.reset();
    waiter.join();
    CHECK(returned);
    CHECK(waited == nullptr);
    CHECK(waiting.find("waiting for " + host_name() + ":" + std::to_string(::getpid())) == 0);
    CHECK(waiting.find("which builds kernel push for sm_90") != std::string::npos);
}

TEST_CASE("a lock released without an entry passes to the waiter")
{
    test::TempTree tree;
    fs::path file = tree / "x.lock";
    auto holder = BuildLock::acquire(file, never, timing_of(60s));
    std::unique_ptr<BuildLock> waited;
    std::thread waiter([&] { waited = BuildLock::acquire(file, never, timing_of(60s)); });
    std::this_thread::sleep_for(100ms);
    holder.reset();
    waiter.join();
    REQUIRE(waited);
    CHECK(waited->held());
}

TEST_CASE("the holder keeps its lock fresh while it builds, so no waiter breaks it")
{
    test::TempTree tree;
    fs::path file = tree / "x.lock";
    auto holder = BuildLock::acquire(file, never, timing_of(300ms));
    timespec first = modified(file);
    std::string broken;
    LockEvents events;
    events.broken = [&](const std::string& message) { broken = message; };
    std::unique_ptr<BuildLock> waited;
    std::thread waiter([&] { waited = BuildLock::acquire(file, never, timing_of(300ms), events); });
    std::this_thread::sleep_for(1s);  // more than three times stale_after
    timespec later = modified(file);
    CHECK((later.tv_sec != first.tv_sec || later.tv_nsec != first.tv_nsec));
    holder.reset();
    waiter.join();
    CHECK(broken.empty());
    REQUIRE(waited);
    CHECK(waited->held());
}

TEST_CASE("the lock of a process of this host that is gone is broken at once")
{
    test::TempTree tree;
    fs::path file = tree / "x.lock";
    write_holder(file, host_name(), dead_pid());
    std::string broken;
    LockEvents events;
    events.broken = [&](const std::string& message) { broken = message; };
    auto start = std::chrono::steady_clock::now();
    auto lock = BuildLock::acquire(file, never, timing_of(60s), events);
    CHECK(std::chrono::steady_clock::now() - start < 10s);
    REQUIRE(lock);
    CHECK(lock->held());
    CHECK(broken.find("broke the build lock " + file.string()) == 0);
    CHECK(broken.find("its process is gone") != std::string::npos);
    CHECK(nlohmann::json::parse(util::read_file(file)).at("pid") == static_cast<long>(::getpid()));
}

TEST_CASE("another host's lock is broken once it has not been touched for the timeout")
{
    test::TempTree tree;
    fs::path file = tree / "x.lock";
    write_holder(file, "other-node.cluster", 4242);
    std::string broken;
    LockEvents events;
    events.broken = [&](const std::string& message) { broken = message; };
    auto start = std::chrono::steady_clock::now();
    auto lock = BuildLock::acquire(file, never, timing_of(300ms), events);
    auto waited = std::chrono::steady_clock::now() - start;
    CHECK(waited >= 300ms);
    REQUIRE(lock);
    CHECK(lock->held());
    CHECK(broken.find("of other-node.cluster:4242 (since 2026-12-01T00:00:00Z): untouched for 0.3 s") !=
          std::string::npos);
    CHECK(fs::directory_iterator(tree.root()) != fs::directory_iterator());  // only the new lock is left
    int files = 0;
    for (const auto& entry : fs::directory_iterator(tree.root())) files += entry.path() == file ? 1 : 100;
    CHECK(files == 1);
}

TEST_CASE("a live holder that never finishes is waited for at most ten timeouts")
{
    test::TempTree tree;
    fs::path file = tree / "x.lock";
    auto holder = BuildLock::acquire(file, never, timing_of(50ms));
    std::string broken;
    LockEvents events;
    events.broken = [&](const std::string& message) { broken = message; };
    auto start = std::chrono::steady_clock::now();
    auto lock = BuildLock::acquire(file, never, timing_of(50ms), events);
    CHECK(std::chrono::steady_clock::now() - start >= 500ms);
    REQUIRE(lock);
    CHECK(!lock->held());
    CHECK(broken.find("waited 0.5 s for " + host_name()) == 0);
    CHECK(broken.find("building it here too") != std::string::npos);
    CHECK(fs::exists(file));  // still the holder's
}

TEST_CASE("a lock that cannot be created builds without one")
{
    test::TempTree tree;
    tree.write("file", "");
    auto lock = BuildLock::acquire(tree / "file/x.lock", never, timing_of(60s));
    REQUIRE(lock);
    CHECK(!lock->held());
}

TEST_CASE("a holder whose lock was broken and taken leaves the new holder's file, and says so")
{
    test::TempTree tree;
    fs::path file = tree / "x.lock";
    std::vector<std::string> told;
    LockEvents events;
    events.what = "kernel push for sm_90";
    events.broken = [&](const std::string& message) { told.push_back(message); };
    auto lock = BuildLock::acquire(file, never, timing_of(60s), events);
    write_holder(file, "other-node.cluster", 4242);
    lock.reset();
    REQUIRE(fs::exists(file));
    CHECK(nlohmann::json::parse(util::read_file(file)).at("token") == "theirs");
    REQUIRE(told.size() == 1);
    CHECK(told[0].find("was broken while it stalled (other-node.cluster:4242") != std::string::npos);
    CHECK(told[0].find("kernel push for sm_90 may have been compiled twice") != std::string::npos);
}

TEST_CASE("a dead process id of another scope with this host's name is not found gone by its id")
{
    // A container sharing the host's name but not its process ids: only the timeout tells.
    test::TempTree tree;
    fs::path file = tree / "x.lock";
    nlohmann::json holder = {{"host", host_name()},
                             {"scope", host_name() + "~other~1"},
                             {"pid", dead_pid()},
                             {"started", "2026-12-01T00:00:00Z"},
                             {"token", "theirs"}};
    tree.write("x.lock", holder.dump());
    std::vector<std::string> broken;
    LockEvents events;
    events.broken = [&](const std::string& message) { broken.push_back(message); };
    auto lock = BuildLock::acquire(file, never, timing_of(300ms), events);
    REQUIRE(lock);
    REQUIRE(broken.size() == 1);
    CHECK(broken[0].find("untouched for 0.3 s") != std::string::npos);
    CHECK(broken[0].find("its process is gone") == std::string::npos);
}

TEST_CASE("a builder's locks name the same start, so that found gone at one it is known at the others")
{
    test::TempTree tree;
    auto first = BuildLock::acquire(tree / "a.lock", never, timing_of(60s));
    std::this_thread::sleep_for(1100ms);  // another second of the clock
    auto second = BuildLock::acquire(tree / "b.lock", never, timing_of(60s));
    auto a = nlohmann::json::parse(util::read_file(tree / "a.lock"));
    auto b = nlohmann::json::parse(util::read_file(tree / "b.lock"));
    CHECK(a.at("started") == b.at("started"));
    CHECK(a.at("scope") == process_scope());
}

TEST_CASE("a lock that cannot be created for another reason than a read-only cache is built without, and said")
{
    test::TempTree tree;
    tree.write("shard", "a file where the shard folder would be");
    std::vector<std::string> broken;
    LockEvents events;
    events.what = "kernel push for sm_90";
    events.broken = [&](const std::string& message) { broken.push_back(message); };
    auto lock = BuildLock::acquire(tree / "shard" / "x.lock", never, timing_of(60s), events);
    REQUIRE(lock);
    CHECK_FALSE(lock->held());
    REQUIRE(broken.size() == 1);
    CHECK(broken[0].find("cannot create the build lock " + (tree / "shard" / "x.lock").string()) == 0);
    CHECK(broken[0].find("building kernel push for sm_90 without it") != std::string::npos);
}

TEST_CASE("once a holder is found gone, its other locks are broken at once")
{
    test::TempTree tree;
    write_holder(tree / "a.lock", "other-node.cluster", 4242);
    write_holder(tree / "b.lock", "other-node.cluster", 4242);
    GoneHolders gone;
    std::vector<std::string> broken;
    LockEvents events;
    events.gone = &gone;
    events.broken = [&](const std::string& message) { broken.push_back(message); };
    auto first = BuildLock::acquire(tree / "a.lock", never, timing_of(300ms), events);
    auto start = std::chrono::steady_clock::now();
    auto second = BuildLock::acquire(tree / "b.lock", never, timing_of(60s), events);
    CHECK(std::chrono::steady_clock::now() - start < 30s);
    REQUIRE(second);
    CHECK(second->held());
    REQUIRE(broken.size() == 2);
    CHECK(broken[1].find("it was found gone at another lock") != std::string::npos);
}

TEST_CASE("waiters that break a dead holder's lock together hold it one at a time")
{
    // Each waiter breaks on its own sighting of the dead holder's lock, some
    // at once because the holder was found gone at a lock before: none may
    // remove or move the lock a faster one took meanwhile (issue 45).
    test::TempTree tree;
    fs::path file = tree / "x.lock";
    const long dead = dead_pid();
    constexpr int waiters = 8;
    for (int round = 0; round < 10; ++round) {
        write_holder(file, host_name(), dead);
        GoneHolders gone;
        LockEvents events;
        events.gone = &gone;
        std::atomic<int> holding{0}, most{0}, took{0};
        std::atomic<bool> go{false};
        std::vector<std::thread> threads;
        for (int i = 0; i < waiters; ++i)
            threads.emplace_back([&] {
                while (!go) std::this_thread::yield();
                // A lock left behind by a racing break (it names this live
                // process) is broken by the timeout, so a regression fails the
                // checks below rather than stalling for minutes.
                auto lock = BuildLock::acquire(file, never, timing_of(2s), events);
                if (!lock || !lock->held()) return;
                int now = ++holding;
                for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {}
                std::this_thread::sleep_for(1ms);
                --holding;
                ++took;
            });
        go = true;
        for (auto& thread : threads) thread.join();
        CHECK(most == 1);
        CHECK(took == waiters);
        CHECK(!fs::exists(file));
    }
    CHECK(!fs::exists(tree / "x.lock.breaking"));
}

TEST_CASE("an entry published between the last look and the lock's create is used, and the lock let go")
{
    test::TempTree tree;
    fs::path file = tree / "x.lock";
    int looks = 0;
    auto published_after_first_look = [&] { return ++looks > 1; };
    CHECK(BuildLock::acquire(file, published_after_first_look, timing_of(60s)) == nullptr);
    CHECK(looks == 2);
    CHECK(!fs::exists(file));
}

TEST_CASE("a breaker's turn that its breaker left behind is cleared once it stood for the timeout")
{
    // Seen on the waiter's own clock: a turn dated in the future (another
    // node's clock) is cleared as well.
    test::TempTree tree;
    write_holder(tree / "x.lock", host_name(), dead_pid());
    tree.write("x.lock.breaking", "");
    timespec hour_ahead[2] = {{::time(nullptr) + 3600, 0}, {::time(nullptr) + 3600, 0}};
    REQUIRE(::utimensat(AT_FDCWD, (tree / "x.lock.breaking").c_str(), hour_ahead, 0) == 0);
    auto lock = BuildLock::acquire(tree / "x.lock", never, timing_of(300ms));
    REQUIRE(lock);
    CHECK(lock->held());
    CHECK(!fs::exists(tree / "x.lock.breaking"));
}

TEST_CASE("a stopped build's locks are removed by the signal handler's sweep")
{
    test::TempTree tree;
    auto a = BuildLock::acquire(tree / "a.lock", never, timing_of(60s));
    auto b = BuildLock::acquire(tree / "b.lock", never, timing_of(60s));
    remove_held_build_locks();
    CHECK(!fs::exists(tree / "a.lock"));
    CHECK(!fs::exists(tree / "b.lock"));
}

TEST_CASE("the signal handler's sweep leaves a lock that another builder broke and took")
{
    test::TempTree tree;
    auto ours = BuildLock::acquire(tree / "ours.lock", never, timing_of(60s));
    auto taken = BuildLock::acquire(tree / "taken.lock", never, timing_of(60s));
    REQUIRE(taken->held());
    // As a builder that broke the lock while this one was stopped: a new
    // file in its place, holding that builder's token.
    write_holder(tree / "taken.lock", "other-node.cluster", 4242);
    remove_held_build_locks();
    CHECK(!fs::exists(tree / "ours.lock"));
    REQUIRE(fs::exists(tree / "taken.lock"));
    CHECK(util::read_file(tree / "taken.lock").find("other-node.cluster") != std::string::npos);
    taken.reset();  // the normal release agrees
    CHECK(fs::exists(tree / "taken.lock"));
}

TEST_CASE("file_holds reads a file without allocating and finds text in it")
{
    test::TempTree tree;
    tree.write("lock", R"({"host":"a","token":"a.1.2.3"})");
    tree.write("empty", "");
    CHECK(util::file_holds((tree / "lock").c_str(), "\"a.1.2.3\""));
    CHECK(!util::file_holds((tree / "lock").c_str(), "\"a.1.2\""));  // a prefix of the token is not the token
    CHECK(!util::file_holds((tree / "empty").c_str(), "\"a.1.2.3\""));
    CHECK(!util::file_holds((tree / "missing").c_str(), "\"a.1.2.3\""));
}

TEST_CASE("lock files are not entries")
{
    test::TempTree tree;
    tree.write("cuda/ab/abcd/manifest.json", "{}");
    tree.write("cuda/ab/abcd.lock", "{}");
    tree.write("cuda/ab/abce.lock.broken.host.1.2.3", "{}");
    CHECK(is_lock_file(tree / "cuda/ab/abcd.lock"));
    CHECK(is_lock_file(tree / "cuda/ab/abcd.lock.breaking"));
    CHECK(!is_lock_file(tree / "cuda/ab/abcd"));
    EntryStore store(tree.root());
    CHECK(store.lock_file("cuda", "abcd") == tree / "cuda/ab/abcd.lock");
    CHECK(store.entry_dirs("cuda") == std::vector<fs::path>{tree / "cuda/ab/abcd"});
}

TEST_CASE("the timeout comes from CUNUMPY_KERNELS_LOCK_TIMEOUT")
{
    {
        test::ScopedEnv unset("CUNUMPY_KERNELS_LOCK_TIMEOUT", std::nullopt);
        CHECK(LockTiming::from_environment().stale_after == 120s);
        CHECK(LockTiming::from_environment().refresh() == 20s);
        CHECK(LockTiming::from_environment().longest_wait() == 1200s);
    }
    {
        test::ScopedEnv shortest("CUNUMPY_KERNELS_LOCK_TIMEOUT", "1");
        CHECK(LockTiming::from_environment().stale_after == 1000ms);
        test::ScopedEnv fraction("CUNUMPY_KERNELS_LOCK_TIMEOUT", "2.25");
        CHECK(LockTiming::from_environment().stale_after == 2250ms);
    }
    {
        test::ScopedEnv week("CUNUMPY_KERNELS_LOCK_TIMEOUT", "604800");
        CHECK(LockTiming::from_environment().stale_after == 604800s);
    }
    for (const char* bad :
         {"abc", "0", "0.001", "0.999", "-3", "5s", "nan", "inf", "1e17", "604801", " 7", "7 ", "0x10"}) {
        test::ScopedEnv set("CUNUMPY_KERNELS_LOCK_TIMEOUT", std::string(bad));
        std::string expected = "CUNUMPY_KERNELS_LOCK_TIMEOUT=" + std::string(bad);
        CHECK_THROWS_WITH_AS(LockTiming::from_environment(), doctest::Contains(expected.c_str()), UsageError);
    }
}

TEST_SUITE_END();
