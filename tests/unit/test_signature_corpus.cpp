// Replays the fuzz seed corpus and every regression input through both
// readers: each must keep the readers' contract (fuzz/reader_input.hpp), and
// the real-looking seed kernels must read as a person reads them.
#include "../fuzz/reader_input.hpp"

#include "cunumpy_kernels/error.hpp"
#include "host/python_imports.hpp"
#include "runtime/kernel_signature.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

TEST_SUITE_BEGIN("signature_corpus");

using namespace ck;
namespace fs = std::filesystem;
using Status = SignatureRead::Status;
using Names = std::vector<std::string>;

namespace {

fs::path fuzz_dir()
{
    const char* dir = std::getenv("CK_FUZZ_DIR");
    REQUIRE_MESSAGE(dir, "CK_FUZZ_DIR must name tests/fuzz (tests/meson.build sets it)");
    return dir;
}

std::string read(const fs::path& file)
{
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<fs::path> files_in(const fs::path& dir)
{
    std::vector<fs::path> files;
    std::error_code error;
    for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
        if (it->is_regular_file() && it->path().extension() != ".md") files.push_back(it->path());
    std::sort(files.begin(), files.end());
    return files;
}

struct Expected {
    Status status;
    Names parameters;
    std::string reason_part;
};

void check_seed(const fs::path& file, const SignatureRead& read, const std::map<std::string, Expected>& table)
{
    auto expected = table.find(file.stem().string());
    REQUIRE_MESSAGE(expected != table.end(), "no expected reading for seed " << file);
    INFO(file);
    INFO(read.reason);
    CHECK(read.status == expected->second.status);
    CHECK(read.parameters == expected->second.parameters);
    CHECK(read.reason.find(expected->second.reason_part) != std::string::npos);
}

}  // namespace

TEST_CASE("the CUDA seed corpus reads as written")
{
    const std::map<std::string, Expected> table = {
        {"guide_axpy", {Status::found, {"a", "x", "y", "n"}, ""}},
        {"push_structs", {Status::found, {"dt", "stage", "args", "domain", "b1", "b2", "b3"}, ""}},
        {"deposit_template", {Status::found, {"x", "w", "rho", "dx", "n", "n_cells"}, ""}},
        {"extern_block", {Status::found, {"x", "offsets", "order", "bounds", "dx", "n"}, ""}},
        {"macros_and_branches", {Status::found, {"field", "positions", "result", "n"}, ""}},
        {"macro_generated", {Status::unreadable, {}, "function-like macro DEFINE_SCALE"}},
        {"conflicting_branches", {Status::unreadable, {}, "conflicting declarations"}},
        {"comments_and_strings", {Status::found, {"x", "v", "dt", "n"}, ""}},
        {"declarators",
         {Status::found,
          {"weights", "rows", "cols", "flag", "grid", "profile", "hook", "count", "tolerance", "mode", "frozen"},
          ""}},
        {"prototype_then_definition", {Status::found, {"markers", "outside", "axis"}, ""}},
        // __global__ hides in a macro of another file: not found, and the line says where
        {"library_style", {Status::not_found, {}, "declares 'RadixUpsweep' without __global__"}},
    };
    auto files = files_in(fuzz_dir() / "corpus" / "cuda");
    CHECK(files.size() == table.size());
    for (const auto& file : files) {
        std::string data = read(file);
        CHECK_MESSAGE(fuzz::check_cuda(data).empty(), file);
        auto input = fuzz::split_input(data);
        check_seed(file, read_cuda_signature(input.source, input.name), table);
    }
}

TEST_CASE("the Python seed corpus reads as written")
{
    const std::map<std::string, Expected> table = {
        {"pyccel_kernel", {Status::found, {"dt", "stage", "args", "domain", "b1", "b2", "b3"}, ""}},
        {"numba_version", {Status::found, {"x", "w", "rho", "dx", "n", "n_cells"}, ""}},
        {"numpy_version", {Status::found, {"x", "cells", "order", "counts", "n_cells"}, ""}},
        {"pyccel_stub", {Status::found, {"x", "v", "e", "dt", "length", "n"}, ""}},  // the first, as a stub
        {"methods_and_nesting", {Status::found, {"eta1", "eta2", "eta3", "kind", "out"}, ""}},
        {"strings_and_fstrings", {Status::found, {"field", "positions", "result"}, ""}},
        {"markers_and_type_params", {Status::found, {"markers", "outside", "axis"}, ""}},
        {"imported_only", {Status::unreadable, {}, "imported"}},
    };
    auto files = files_in(fuzz_dir() / "corpus" / "python");
    CHECK(files.size() == table.size());
    for (const auto& file : files) {
        std::string data = read(file);
        CHECK_MESSAGE(fuzz::check_python(data).empty(), file);
        auto input = fuzz::split_input(data);
        check_seed(file, read_python_signature(input.source, input.name, PythonDefinition::first), table);
    }
}

TEST_CASE("every input that once failed a reader keeps its contract")
{
    for (const char* reader : {"cuda", "python"})
        for (const auto& file : files_in(fuzz_dir() / "regressions" / reader)) {
            std::string data = read(file);
            std::string problem = std::string(reader) == "cuda" ? fuzz::check_cuda(data) : fuzz::check_python(data);
            CHECK_MESSAGE(problem.empty(), file << ": " << problem);
        }
}

TEST_CASE("the runtime reads every CUDA input as check-signatures does, and imports scan every Python input")
{
    auto inputs = [](const char* reader) {
        auto files = files_in(fuzz_dir() / "corpus" / reader);
        auto regressions = files_in(fuzz_dir() / "regressions" / reader);
        files.insert(files.end(), regressions.begin(), regressions.end());
        return files;
    };
    for (const auto& file : inputs("cuda")) {
        INFO(file);
        std::string data = read(file);
        auto input = fuzz::split_input(data);
        SignatureRead check = read_cuda_signature(input.source, input.name);
        try {
            GlobalSignature runtime = read_global_signature(std::string(input.source), input.name, file);
            CHECK(check.status == Status::found);
            Names names;
            for (const auto& p : runtime.parameters) names.push_back(p.name);
            CHECK(names == check.parameters);
        } catch (const SourceError& error) {
            // Unread by both, or read and then refused for a type the launch cannot check.
            bool typed_out = check.status == Status::found;
            CHECK((typed_out || std::string(error.what()).find(check.reason) != std::string::npos));
        }
    }
    for (const auto& file : inputs("python")) {
        std::string data = read(file);
        CHECK_NOTHROW(scan_python_imports(std::string(fuzz::split_input(data).source)));
    }
}

TEST_SUITE_END();
