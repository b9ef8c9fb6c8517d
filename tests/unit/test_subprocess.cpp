// Child processes: output, exit status, folder and group as the compilers
// need them, and a child that ends with its parent.
#include "cunumpy_kernels/error.hpp"
#include "temp_tree.hpp"
#include "util/file_util.hpp"
#include "util/subprocess.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

TEST_SUITE_BEGIN("subprocess");

using namespace ck;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

util::ProcessResult shell(const std::string& script, const fs::path& cwd = {})
{
    return util::run_process({"sh", "-c", script}, cwd);
}

// The fields of /proc/<pid>/stat after the command name, which may hold spaces.
std::string stat_field(pid_t pid, int index)
{
    std::string text = util::read_file("/proc/" + std::to_string(pid) + "/stat");
    std::string rest = text.substr(text.rfind(')') + 2);
    std::istringstream fields(rest);
    std::string field;
    for (int i = 0; i <= index; ++i) fields >> field;
    return field;
}

bool running(pid_t pid)
{
    try {
        std::string state = stat_field(pid, 0);
        return state != "Z" && state != "X";
    } catch (const Error&) {
        return false;
    }
}

}  // namespace

TEST_CASE("stdout and stderr are captured together, in the order written")
{
    auto result = shell("echo one; echo two >&2; echo three");
    CHECK(result.exit_code == 0);
    CHECK(result.output == "one\ntwo\nthree\n");
}

TEST_CASE("exit statuses pass through, and a signal reads as 128 + its number")
{
    CHECK(shell("exit 3").exit_code == 3);
    CHECK(shell("kill -TERM $$").exit_code == 128 + SIGTERM);
    CHECK(shell("kill -KILL $$").exit_code == 128 + SIGKILL);
}

TEST_CASE("the child runs in the folder given, reads /dev/null and has a group of its own")
{
    test::TempTree tree;
    tree.write("here/marker", "");
    auto result = shell("ls; cat; echo \"pid $$ group $(cut -d' ' -f5 /proc/$$/stat)\"", tree / "here");
    CHECK(result.output.starts_with("marker\npid "));
    std::istringstream words(result.output.substr(result.output.find("pid ")));
    std::string word, pid, group;
    words >> word >> pid >> word >> group;
    CHECK(pid == group);
    CHECK(group != std::to_string(::getpgrp()));
}

TEST_CASE("a program that is not there, or cannot run, throws ToolchainError naming it")
{
    CHECK_THROWS_AS(util::run_process({"ck-no-such-program"}), ToolchainError);
    test::TempTree tree;
    tree.write("not-runnable", "#!/bin/sh\n");
    try {
        util::run_process({(tree / "not-runnable").string()});
        FAIL("expected a ToolchainError");
    } catch (const ToolchainError& error) {
        CHECK(std::string(error.what()).find("not-runnable") != std::string::npos);
    }
    tree.write("bad-format",
               "\x7f"
               "ELF nonsense");
    fs::permissions(tree / "bad-format", fs::perms::owner_all);
    CHECK_THROWS_AS(util::run_process({(tree / "bad-format").string()}), ToolchainError);
}

TEST_CASE("a child ends when the process that started it is killed with SIGKILL")
{
    test::TempTree tree;
    fs::path pid_file = tree / "child.pid";
    // A builder stand-in: it starts a sleeping child through run_process,
    // and is then killed without a chance to run any handler.
    pid_t builder = ::fork();
    REQUIRE(builder >= 0);
    if (builder == 0) {
        util::run_process({"sh", "-c", "echo $$ > " + pid_file.string() + "; exec sleep 300"});
        ::_exit(0);
    }
    std::string text;
    for (int i = 0; i < 500 && text.find('\n') == std::string::npos; ++i) {
        std::this_thread::sleep_for(10ms);
        std::ifstream in(pid_file);
        std::getline(in, text, '\0');
    }
    REQUIRE(text.find('\n') != std::string::npos);
    pid_t child = std::stoi(text);
    CHECK(running(child));
    ::kill(builder, SIGKILL);
    ::waitpid(builder, nullptr, 0);
    bool gone = false;
    for (int i = 0; i < 200 && !gone; ++i) {
        gone = !running(child);
        if (!gone) std::this_thread::sleep_for(10ms);
    }
    CHECK(gone);
}
