// The CuPy cache filler's side of its child: the request each child reads,
// the work shared between children, and every way a child can answer. A
// stand-in child (Debian's python3 running a script of the test's) plays
// CuPy; the real one runs in tests/e2e/test_cupy_cache.py.
#include "cupy_cache/cupy_cache.hpp"

#include "scoped_env.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <fstream>
#include <set>

TEST_SUITE_BEGIN("cupy_cache");

using namespace ck;

namespace {

// Answers every job "built" (a kernel named "bad": "failed"), naming in the
// file what it was given, and notes its process id and CUPY_CACHE_DIR.
constexpr const char* stand_in_child = R"(
import json, os, sys
request = json.load(open(sys.argv[1]))
with open(os.environ["CK_TEST_RUNS"], "a") as runs:
    runs.write(f"{os.getpid()} {os.environ.get('CUPY_CACHE_DIR', '-')}\n")
results = []
for job in request["jobs"]:
    kernel = request["kernels"][job["kernel"]]
    given = "|".join([kernel["cuda_file"], *kernel["include_dirs"], *kernel["options"], *kernel.get("template_args", [])])
    failed = kernel["name"] == "bad"
    results.append({"job": job["id"], "state": "failed" if failed else ("missing" if request["probe"] else "built"),
                    "file": f"{kernel['name']}-{job['arch']}.cubin", "seconds": 0.5,
                    "message": "NVRTC says no" if failed else given})
json.dump({"cupy_version": "14.2.0", "cupy_dir": "/site/cupy", "nvrtc_version": "13.0", "cache_dir": "/c",
           "results": results}, open(sys.argv[2], "w"))
)";

// A `python` that ignores the script it is given and runs `body` instead.
std::string stand_in_python(const test::TempTree& tree, const std::string& body)
{
    tree.write("child.py", body);
    auto path = tree.write("bin/python",
                           "#!/bin/sh\nexec /usr/bin/python3 " + (tree / "child.py").string() + " \"$3\" \"$4\"\n");
    ::chmod(path.c_str(), 0755);
    return path.string();
}

// A request to the stand-in child for sm_90 alone.
CupyCacheRequest stand_in_request(const test::TempTree& tree, const std::string& body = stand_in_child)
{
    CupyCacheRequest request;
    request.python = stand_in_python(tree, body);
    request.architectures = {"90"};
    return request;
}

std::vector<std::string> lines_of(const std::filesystem::path& file)
{
    std::vector<std::string> lines;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::vector<CupyKernel> two_kernels()
{
    return {{"pkg.kernels.push", "push", "/src/pkg/kernels/push/push_cuda.cu", {"/src", "/extra"}, {"-DX=1"}, {}},
            {"pkg.kernels.scale", "scale", "/src/pkg/kernels/scale/scale_cuda.cu", {"/src"}, {}, {"double", "3"}}};
}

}  // namespace

TEST_CASE("sm_XX and compute_XX targets give one compute capability each, in order")
{
    CHECK(cupy_architectures({"sm_80", "sm_90", "compute_90"}) == std::vector<std::string>{"80", "90"});
    CHECK(cupy_architectures({"sm_90a", "sm_100f", "sm_90"}) == std::vector<std::string>{"90", "100"});
    CHECK(cupy_architectures({"compute_120", "sm_90"}) == std::vector<std::string>{"120", "90"});
    CHECK(cupy_architectures({}).empty());
}

TEST_CASE("every kernel and architecture is one entry, kernel-major, shared among the children")
{
    test::TempTree tree;
    test::ScopedEnv runs("CK_TEST_RUNS", (tree / "runs").string());
    CupyCacheRequest request = stand_in_request(tree);
    request.architectures = {"80", "90"};
    request.processes = 2;
    request.cache_dir = tree / "cupy";
    CupyCacheRun run = run_cupy_cache(request, two_kernels());

    CHECK(run.installation.unavailable.empty());
    CHECK(run.installation.cupy_version == "14.2.0");
    CHECK(run.installation.cupy_dir == "/site/cupy");
    CHECK(run.installation.cache_dir == "/c");
    CHECK(run.installation.description() == "CuPy 14.2.0 in /site/cupy, NVRTC 13.0; /c");
    CHECK(to_json(run.installation)["cupy_version"] == "14.2.0");
    REQUIRE(run.entries.size() == 4);
    CHECK(run.entries[0].kernel == 0);
    CHECK(run.entries[0].architecture == "80");
    CHECK(run.entries[3].kernel == 1);
    CHECK(run.entries[3].architecture == "90");
    for (const auto& entry : run.entries) CHECK(entry.state == CupyEntryState::built);
    CHECK(run.entries[1].file == "push-90.cubin");
    // cunumpy is given the include folders, the options and the template arguments as they are
    CHECK(run.entries[0].message == "/src/pkg/kernels/push/push_cuda.cu|/src|/extra|-DX=1");
    CHECK(run.entries[2].message == "/src/pkg/kernels/scale/scale_cuda.cu|/src|double|3");

    auto children = lines_of(tree / "runs");
    REQUIRE(children.size() == 2);
    std::set<std::string> pids{children[0].substr(0, children[0].find(' ')),
                               children[1].substr(0, children[1].find(' '))};
    CHECK(pids.size() == 2);
    CHECK(children[0].substr(children[0].find(' ') + 1) == (tree / "cupy").string());
}

TEST_CASE("never more children than entries; a probe asks for lookups only")
{
    test::TempTree tree;
    test::ScopedEnv runs("CK_TEST_RUNS", (tree / "runs").string());
    CupyCacheRequest request = stand_in_request(tree);
    request.processes = 16;
    request.probe = true;
    CupyCacheRun run = run_cupy_cache(request, two_kernels());
    CHECK(lines_of(tree / "runs").size() == 2);
    for (const auto& entry : run.entries) CHECK(entry.state == CupyEntryState::missing);
}

TEST_CASE("a kernel the child could not compile fails alone, with the child's message")
{
    test::TempTree tree;
    test::ScopedEnv runs("CK_TEST_RUNS", (tree / "runs").string());
    CupyCacheRequest request = stand_in_request(tree);
    auto kernels = two_kernels();
    kernels[0].name = "bad";
    CupyCacheRun run = run_cupy_cache(request, kernels);
    CHECK(run.entries[0].state == CupyEntryState::failed);
    CHECK(run.entries[0].message == "NVRTC says no");
    CHECK(run.entries[1].state == CupyEntryState::built);
}

TEST_CASE("a child that dies before reporting fails its entries with what it printed")
{
    test::TempTree tree;
    CupyCacheRequest request = stand_in_request(tree, "import sys\nprint('Traceback: boom')\nsys.exit(3)\n");
    CupyCacheRun run = run_cupy_cache(request, two_kernels());
    CHECK(run.installation.unavailable.empty());
    for (const auto& entry : run.entries) {
        CHECK(entry.state == CupyEntryState::failed);
        CHECK(entry.message.find("exit status 3") != std::string::npos);
        CHECK(entry.message.find("Traceback: boom") != std::string::npos);
    }
}

TEST_CASE("no CuPy, or no interpreter at all: unavailable says why, and no entry is claimed")
{
    test::TempTree tree;
    CupyCacheRequest request = stand_in_request(
        tree, "import json, sys\njson.dump({'unavailable': 'CuPy cannot be imported'}, open(sys.argv[2], 'w'))\n");
    CupyCacheRun run = run_cupy_cache(request, two_kernels());
    CHECK(run.installation.unavailable == "CuPy cannot be imported");
    CHECK(run.installation.description().empty());
    for (const auto& entry : run.entries) CHECK(entry.state == CupyEntryState::failed);

    request.python = (tree / "no-such-python").string();
    run = run_cupy_cache(request, two_kernels());
    CHECK(run.installation.unavailable.find("no-such-python") != std::string::npos);
    CHECK(run.installation.unavailable.find("--python") != std::string::npos);
}

TEST_CASE("no kernels or no architectures: nothing is started")
{
    CupyCacheRequest request;
    request.python = "/nonexistent/python";
    request.architectures = {"90"};
    CupyCacheRun run = run_cupy_cache(request, {});
    CHECK(run.entries.empty());
    CHECK(run.installation.unavailable.empty());
}
