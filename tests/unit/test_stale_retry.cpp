// Reads that a network file system refuses for a moment (ESTALE) are tried
// again a bounded number of times; anything else fails at once.
#include "cunumpy_kernels/error.hpp"
#include "temp_tree.hpp"
#include "util/file_util.hpp"
#include "util/stale_retry.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>

TEST_SUITE_BEGIN("stale_retry");

using namespace ck;
using namespace std::chrono_literals;

namespace {

// A read that fails with ESTALE its first `stale` times, then returns "bytes".
struct FlakyRead {
    int stale;
    int calls = 0;
    std::string operator()()
    {
        if (calls++ < stale) util::throw_read_error("/shared/cache/manifest.json", ESTALE);
        return "bytes";
    }
};

const util::StaleRetry quick{5, 1ms};

}  // namespace

TEST_CASE("a read that fails with ESTALE fewer times than the tries succeeds, each failure tried again")
{
    for (int stale = 0; stale < quick.tries; ++stale) {
        FlakyRead read{stale};
        CHECK(util::read_retrying_stale([&] { return read(); }, quick) == "bytes");
        CHECK(read.calls == stale + 1);
    }
}

TEST_CASE("a read that keeps failing with ESTALE throws TransientReadError after exactly the tries")
{
    for (int stale : {5, 6, 100}) {
        FlakyRead read{stale};
        try {
            util::read_retrying_stale([&] { return read(); }, quick);
            FAIL("expected TransientReadError");
        } catch (const TransientReadError& error) {
            std::string message = error.what();
            CHECK(message.find("/shared/cache/manifest.json") != std::string::npos);
            CHECK(message.find("run the command again") != std::string::npos);
        }
        CHECK(read.calls == quick.tries);
    }
}

TEST_CASE("the pauses between tries double from the first")
{
    FlakyRead read{3};
    auto start = std::chrono::steady_clock::now();
    util::read_retrying_stale([&] { return read(); }, util::StaleRetry{5, 20ms});
    CHECK(std::chrono::steady_clock::now() - start >= 20ms + 40ms + 80ms);
}

TEST_CASE("other read errors are not tried again")
{
    for (int error : {ENOENT, EACCES, EIO, EISDIR}) {
        int calls = 0;
        auto read = [&]() -> std::string {
            ++calls;
            util::throw_read_error("/shared/cache/manifest.json", error);
        };
        CHECK_THROWS_AS(util::read_retrying_stale(read, quick), SourceError);
        CHECK(calls == 1);
    }
}

TEST_CASE("read_file reads as before and fails as before on what is not ESTALE")
{
    test::TempTree tree;
    tree.write("record", "content");
    CHECK(util::read_file(tree / "record") == "content");
    CHECK_THROWS_AS(util::read_file(tree / "missing"), SourceError);
    CHECK_THROWS_AS(util::read_file(tree.root()), SourceError);
}
