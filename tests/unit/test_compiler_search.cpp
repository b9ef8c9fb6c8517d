// The compilers search what the key names: NVRTC the toolkit's headers as
// nvcc does, and nvcc reports what it read so the scanner is checked.
#include "compilers/cuda_compiler.hpp"
#include "compilers/nvcc_compiler.hpp"
#include "compilers/nvrtc_compiler.hpp"
#include "compile_request.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

using namespace ck;

using test::extern_c_kernel;
using test::request;

TEST_SUITE("compiler_search")
{
    TEST_CASE("NVRTC finds the toolkit's CCCL and cooperative groups headers, as nvcc does")
    {
        test::TempTree tree;
        NvrtcCompiler nvrtc(cuda_root_of(Config{}), nullptr);
        auto output = nvrtc.compile(request(tree,
                                            "#include <cuda/std/cstdint>\n#include <cuda/std/cmath>\n"
                                            "#include <cooperative_groups.h>\n" +
                                                extern_c_kernel,
                                            "sm_90"));
        CHECK_MESSAGE(output.ok, output.log);
    }

    TEST_CASE("NVRTC failing on a host-only header says to use nvcc")
    {
        test::TempTree tree;
        NvrtcCompiler nvrtc(cuda_root_of(Config{}), nullptr);
        auto output = nvrtc.compile(request(tree, "#include <iostream>\n" + extern_c_kernel, "sm_90"));
        CHECK_FALSE(output.ok);
        CHECK(output.log.find("iostream") != std::string::npos);
        CHECK(output.log.find("--compiler nvcc") != std::string::npos);
    }

    TEST_CASE("nvcc's dependency list checks the scanner: a header the key lacks fails the job")
    {
        test::TempTree tree;
        auto header = tree.write("inc/tune.cuh", "#define SCALE 2.0\n");
        NvccCompiler nvcc(cuda_root_of(Config{}), nullptr);
        auto req = request(tree, "#include \"tune.cuh\"\n" + extern_c_kernel, "sm_90");
        req.include_dirs.push_back(tree / "inc");
        auto unchecked = nvcc.compile(req);
        CHECK_FALSE(unchecked.ok);
        CHECK(unchecked.log.find("scanner bug: nvcc read " + header.string()) != std::string::npos);
        req.headers[header] = "<I:0>/tune.cuh";
        auto checked = nvcc.compile(req);
        REQUIRE_MESSAGE(checked.ok, checked.log);
        CHECK(checked.dependencies == std::vector<std::string>{"<I:0>/tune.cuh"});
    }

    TEST_CASE("make dependencies: the prerequisites, continuations joined, escaped spaces kept")
    {
        CHECK(parse_make_dependencies("a.cubin : /x/a.cu \\\n    /usr/include/b.h \\\n    /my\\ dir/c.cuh\n") ==
              std::vector<std::string>{"/x/a.cu", "/usr/include/b.h", "/my dir/c.cuh"});
        CHECK(parse_make_dependencies("").empty());
    }
}
