// The environment variables a compiler reads are keyed or removed, never left to chance.
#include "compilers/compiler_environment.hpp"
#include "util/subprocess.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <map>

using namespace ck;

namespace {

// CUDA 13.0's nvcc.profile.
const char* profile = R"(
TOP              = $(_HERE_)/..
CICC_PATH        = $(TOP)/nvvm/bin
LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(CICC_PATH):$(_HERE_):
INCLUDES        +=  "-I$(TOP)/$(_TARGET_DIR_)/include" $(_SPACE_)
SYSTEM_INCLUDES +=  "-isystem" "$(TOP)/$(_TARGET_DIR_)/include/cccl" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
)";

EnvironmentReader fake(std::map<std::string, std::string> variables)
{
    return [variables](const std::string& name) -> std::optional<std::string> {
        auto it = variables.find(name);
        return it == variables.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
}

bool contains(const std::vector<std::string>& names, const std::string& name)
{
    return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

TEST_SUITE("compiler_environment")
{
    TEST_CASE("the variables nvcc.profile extends are read from the environment")
    {
        auto names = profile_extended_variables(profile);
        CHECK(names == std::vector<std::string>{"LD_LIBRARY_PATH", "PATH", "INCLUDES", "SYSTEM_INCLUDES", "LIBRARIES",
                                                "CUDAFE_FLAGS", "PTXAS_FLAGS"});
    }

    TEST_CASE(
        "nvcc: flags and the host compiler are keyed, variables meant to change builds refused, the rest not inherited")
    {
        auto env = nvcc_environment(profile, fake({{"NVCC_APPEND_FLAGS", "-DSCALE=7.0 -I /x"},
                                                   {"NVCC_PREPEND_FLAGS", "-lineinfo"},
                                                   {"NVCC_CCBIN", "g++-12"},
                                                   {"CPATH", "/inc"},
                                                   {"PTXAS_FLAGS", "-O0"},
                                                   {"TMPDIR", "/scratch"}}));
        CHECK(env.keyed == nlohmann::json{{"NVCC_APPEND_FLAGS", "-DSCALE=7.0 -I /x"},
                                          {"NVCC_PREPEND_FLAGS", "-lineinfo"},
                                          {"NVCC_CCBIN", "g++-12"}});
        CHECK(env.append_flags == std::vector<std::string>{"-DSCALE=7.0", "-I", "/x"});
        CHECK(env.prepend_flags == std::vector<std::string>{"-lineinfo"});
        for (const char* removed : {"NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS", "CPATH", "C_INCLUDE_PATH",
                                    "CPLUS_INCLUDE_PATH", "INCLUDES", "SYSTEM_INCLUDES", "PTXAS_FLAGS", "CUDAFE_FLAGS",
                                    "NVVM_FLAGS", "GCC_EXEC_PREFIX", "COMPILER_PATH", "PKG_CONFIG_PATH"})
            CHECK_MESSAGE(!contains(env.inherited, removed), removed);
        for (const char* kept : {"PATH", "LD_LIBRARY_PATH", "TMPDIR", "NVCC_CCBIN", "HOME", "LC_*"})
            CHECK_MESSAGE(contains(env.inherited, kept), kept);
        CHECK(env.refused == std::vector<std::string>{"CPATH", "PTXAS_FLAGS"});
        CHECK(env.profile_sha256.size() == 64);
    }

    TEST_CASE("gcc's own variables: those that pick its programs or folders refused, dependency output removed")
    {
        auto env = nvcc_environment(profile, fake({{"GCC_EXEC_PREFIX", "/x/"},
                                                   {"COMPILER_PATH", "/x"},
                                                   {"DEPENDENCIES_OUTPUT", "d"},
                                                   {"SUNPRO_DEPENDENCIES", "d"}}));
        CHECK(env.refused == std::vector<std::string>{"GCC_EXEC_PREFIX", "COMPILER_PATH"});
        for (const char* removed : {"DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES"})
            CHECK(!contains(env.inherited, removed));
        auto host = host_compiler_refused(fake(
            {{"CPATH", "/inc"}, {"COMPILER_PATH", "/x"}, {"DEPENDENCIES_OUTPUT", "d"}, {"NVCC_APPEND_FLAGS", "-DX"}}));
        CHECK(host == std::vector<std::string>{"CPATH", "COMPILER_PATH"});
        CHECK(refused_variable_message("COMPILER_PATH", "nvcc").find("-ccbin") != std::string::npos);
        CHECK(refused_variable_message("CPATH", "nvcc").find("-isystem DIR") != std::string::npos);
        CHECK(refused_variable_message("PTXAS_FLAGS", "nvcc").find("unset PTXAS_FLAGS") != std::string::npos);
    }

    TEST_CASE("nvcc.profile's content is keyed")
    {
        auto a = nvcc_environment(profile, fake({}));
        auto b = nvcc_environment(std::string(profile) + "PTXAS_FLAGS += -O0\n", fake({}));
        CHECK(a.profile_sha256 != b.profile_sha256);
        CHECK(a.keyed.empty());
    }

    TEST_CASE("NVRTC: only NVRTC_APPEND_FLAGS, keyed when set")
    {
        CHECK(nvrtc_environment(fake({{"CPATH", "/inc"}, {"NVCC_APPEND_FLAGS", "-DX"}})).keyed.empty());
        auto env = nvrtc_environment(fake({{"NVRTC_APPEND_FLAGS", "-DX"}}));
        CHECK(env.keyed == nlohmann::json{{"NVRTC_APPEND_FLAGS", "-DX"}});
        CHECK(env.inherited == run_variables());
        CHECK(env.refused.empty());
        CHECK(env.profile_sha256.empty());
    }
}

TEST_SUITE("child_environment")
{
    TEST_CASE("a child inherits only the allow-listed variables, patterns included, and what is set over them")
    {
        ::setenv("CK_TEST_SECRET", "1", 1);
        ::setenv("LC_CK_TEST", "x", 1);
        auto result = ck::util::run_process({"/usr/bin/env"}, {}, {{"CK_SET", "2"}}, ck::run_variables());
        ::unsetenv("CK_TEST_SECRET");
        ::unsetenv("LC_CK_TEST");
        CHECK(result.exit_code == 0);
        CHECK(result.output.find("CK_TEST_SECRET") == std::string::npos);
        CHECK(result.output.find("LC_CK_TEST=x") != std::string::npos);
        CHECK(result.output.find("CK_SET=2") != std::string::npos);
        CHECK(result.output.find("PATH=") != std::string::npos);
    }
}
