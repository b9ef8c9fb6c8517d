// Compiler options are parsed: include options join the search, target and
// output options are refused, the rest is keyed.
#include "compilers/compiler_options.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/error.hpp"

#include <doctest/doctest.h>

#include <fstream>

using namespace ck;
namespace fs = std::filesystem;

using Strings = std::vector<std::string>;

TEST_SUITE("compiler_options")
{
    TEST_CASE("every spelling of an include folder joins the search, none is keyed")
    {
        for (const Strings& spelling :
             {Strings{"-I/inc"}, Strings{"-I", "/inc"}, Strings{"-I /inc"}, Strings{"-I=/inc"},
              Strings{"--include-path=/inc"}, Strings{"--include-path", "/inc"}}) {
            CAPTURE(spelling.front());
            CompilerOptions parsed = parse_compiler_options(spelling, "test");
            CHECK(parsed.include_dirs == std::vector<fs::path>{"/inc"});
            CHECK(parsed.keyed.empty());
        }
    }

    TEST_CASE("system folders and forced includes, in order")
    {
        CompilerOptions parsed =
            parse_compiler_options({"-isystem", "/s1", "-isystem/s2", "--system-include=/s3", "-include", "a.cuh",
                                    "--pre-include=b.cuh", "--pre-include", "c.cuh", "-I/i"},
                                   "test");
        CHECK(parsed.system_include_dirs == std::vector<fs::path>{"/s1", "/s2", "/s3"});
        CHECK(parsed.pre_includes == Strings{"a.cuh", "b.cuh", "c.cuh"});
        CHECK(parsed.include_dirs == std::vector<fs::path>{"/i"});
        CHECK(parsed.keyed.empty());
    }

    TEST_CASE("target and output options are refused, naming what to use instead")
    {
        for (const Strings& spelling :
             {Strings{"-arch=sm_80"}, Strings{"-arch", "sm_80"}, Strings{"-arch sm_80"},
              Strings{"--gpu-architecture=sm_80"}, Strings{"-gencode=arch=compute_80,code=sm_80"},
              Strings{"--generate-code", "arch=compute_80"}, Strings{"-code=sm_80"}, Strings{"--gpu-code", "sm_80"}}) {
            CAPTURE(spelling.front());
            CHECK_THROWS_WITH_AS(parse_compiler_options(spelling, "--compiler-option"), doctest::Contains("--arch"),
                                 UsageError);
        }
        for (const Strings& spelling : {Strings{"-rdc=true"},
                                        Strings{"--relocatable-device-code", "true"},
                                        Strings{"-dc"},
                                        Strings{"-dlink"},
                                        Strings{"-lto"},
                                        Strings{"-dlto"},
                                        Strings{"--dlink-time-opt"},
                                        Strings{"-G"},
                                        Strings{"--device-debug"},
                                        Strings{"-ptx"},
                                        Strings{"-cubin"},
                                        Strings{"-fatbin"},
                                        Strings{"-o", "x"},
                                        Strings{"--output-file=x"},
                                        Strings{"-c"},
                                        Strings{"-E"},
                                        Strings{"-M"},
                                        Strings{"-MD"},
                                        Strings{"-MF", "x.d"},
                                        Strings{"--no-source-include"},
                                        Strings{"--use-pch=x"},
                                        Strings{"-Xcompiler", "-I/x"},
                                        Strings{"--compiler-options=-O2,-isystem/x"},
                                        Strings{"-keep"},
                                        Strings{"--keep-dir=/tmp/kd"},
                                        Strings{"-keep-dir", "kd"},
                                        Strings{"--time=/tmp/t.csv"},
                                        Strings{"-time", "t.csv"},
                                        Strings{"-save-temps"},
                                        Strings{"--dryrun"}}) {
            CAPTURE(spelling.front());
            CHECK_THROWS_WITH_AS(parse_compiler_options(spelling, "--compiler-option"),
                                 doctest::Contains(("--compiler-option: " + spelling.front()).c_str()), UsageError);
        }
    }

    TEST_CASE("known options are keyed as given, values kept beside them")
    {
        Strings options = {"-DSCALE=2",
                           "-D",
                           "N=3",
                           "--define-macro=M",
                           "-UX",
                           "-std=c++17",
                           "--std",
                           "c++20",
                           "--use_fast_math",
                           "-O3",
                           "-lineinfo",
                           "-maxrregcount=32",
                           "--maxrregcount",
                           "64",
                           "--extra-device-vectorization",
                           "-Xptxas",
                           "-v",
                           "-ftz=true",
                           "-w"};
        CompilerOptions parsed = parse_compiler_options(options, "test");
        CHECK(parsed.keyed == options);
        CHECK(parsed.verbatim.empty());
    }

    TEST_CASE("an unknown option is refused, naming the verbatim door; through it, it is keyed by spelling")
    {
        for (const char* option : {"--frobnicate", "-Xcicc", "@opts.txt", "-fno-fast"}) {
            CAPTURE(option);
            CHECK_THROWS_WITH_AS(parse_compiler_options({option}, "test"), doctest::Contains("is not accepted"),
                                 UsageError);
        }
        CHECK_THROWS_WITH_AS(parse_compiler_options({"--frobnicate"}, "test"),
                             doctest::Contains("--verbatim-option=--frobnicate"), UsageError);
        CompilerOptions parsed = parse_compiler_options({"--verbatim-option=--frobnicate", "-DX"}, "test");
        CHECK(parsed.keyed == Strings{"--frobnicate", "-DX"});
        CHECK(parsed.verbatim == Strings{"--frobnicate"});
    }

    TEST_CASE("-Xcompiler and -Xptxas parts are checked against the host compiler's and ptxas's tables")
    {
        for (const Strings& accepted : {Strings{"-Xcompiler", "-O2,-Wall,-fno-math-errno"}, Strings{"-Xcompiler=-DX=1"},
                                        Strings{"--compiler-options", "-march=x86-64-v3"}, Strings{"-Xptxas", "-v,-O3"},
                                        Strings{"-Xptxas=--maxrregcount=32"}, Strings{"--ptxas-options", "-dlcm,ca"}}) {
            CAPTURE(accepted.front());
            CHECK(parse_compiler_options(accepted, "test").keyed == accepted);
        }
        for (const Strings& refused :
             {Strings{"-Xcompiler", "-imacros,/x.h"}, Strings{"-Xcompiler", "@/opts"},
              Strings{"-Xcompiler=--sysroot=/s"}, Strings{"-Xcompiler", "-iprefix,/p"},
              Strings{"-Xcompiler", "-include,/f.h"}, Strings{"-Xcompiler", "-I/x"}, Strings{"-Xcompiler", "-specs=/s"},
              Strings{"-Xcompiler", "-fplugin=/p.so"}, Strings{"-Xcompiler", "--frobnicate"},
              Strings{"-Xptxas", "-arch=sm_80"}, Strings{"-Xptxas", "--options-file=/f"}, Strings{"-Xptxas", "-g"},
              Strings{"-Xptxas", "--frobnicate"}}) {
            CAPTURE(refused.back());
            CHECK_THROWS_AS(parse_compiler_options(refused, "test"), UsageError);
        }
    }

    TEST_CASE("host options that read files or folders, or mean this machine's CPU, are refused; -Wall is not -Wa")
    {
        for (const char* part :
             {"-fmodule-mapper=/m", "-fself-test=/d", "-fprofile-dir=/d", "-fprofile-use", "-fmodules-ts",
              "-fplugin-arg-a-b=c", "-flto-incremental=/d", "-imultiarch", "-Wa", "-Wl"}) {
            CAPTURE(part);
            CHECK_THROWS_WITH_AS(parse_compiler_options({"-Xcompiler", std::string("-O2,") + part}, "test"),
                                 doctest::Contains("is not accepted"), UsageError);
        }
        for (const char* part : {"-march=native", "-mtune=native", "-mcpu=native", "-march=host"}) {
            CAPTURE(part);
            CHECK_THROWS_WITH_AS(parse_compiler_options({"-Xcompiler=" + std::string(part)}, "test"),
                                 doctest::Contains("the CPU of the machine that builds"), UsageError);
        }
        for (const char* part : {"-Wall", "-Wextra", "-march=x86-64-v3", "-mtune=generic", "-fno-fast-math"})
            CHECK_NOTHROW(parse_compiler_options({"-Xcompiler=" + std::string(part)}, "test"));
    }

    TEST_CASE("at nvcc's level only nvcc's own -W options are known")
    {
        for (const char* option :
             {"-Wreorder", "-Wno-deprecated-gpu-targets", "--Werror=all-warnings", "-Werror=reorder"})
            CHECK(parse_compiler_options({option}, "test").keyed == Strings{option});
        for (const char* option : {"-Wall", "-Wp,-imacros,/m.h", "-Wl,-rpath,/x", "-Wfrobnicate"}) {
            CAPTURE(option);
            CHECK_THROWS_WITH_AS(parse_compiler_options({option}, "test"),
                                 doctest::Contains("nvcc's only -W options are its own"), UsageError);
        }
    }

    TEST_CASE("nvcc's comma lists of folders and forced includes are split as nvcc splits them")
    {
        CompilerOptions parsed = parse_compiler_options(
            {"-I/a,/b", "--include-path", "/c,,/d", "-isystem=/e,/f", "--system-include", "/g", "-include", "x.h,y.h"},
            "test");
        CHECK(parsed.include_dirs == std::vector<fs::path>{"/a", "/b", "/c", "/d"});
        CHECK(parsed.system_include_dirs == std::vector<fs::path>{"/e", "/f", "/g"});
        CHECK(parsed.pre_includes == Strings{"x.h", "y.h"});
        CHECK(resolve_compiler_options({"-I", "a,/b", "-isystem=c,d"}, "/base", "options") ==
              Strings{"-I=/base/a", "-I=/b", "-isystem=/base/c", "-isystem=/base/d"});
    }

    TEST_CASE("an options file is expanded in place: its words are keyed and checked, the file never passed")
    {
        fs::path dir = fs::temp_directory_path() / "ck-test-optf";
        fs::create_directories(dir);
        std::ofstream(dir / "a.opts") << "-DSCALE=3 -I inc --options-file b.opts\n";
        std::ofstream(dir / "b.opts") << "--use_fast_math\n";
        std::ofstream(dir / "bad.opts") << "-arch=sm_80\n";
        std::ofstream(dir / "loop.opts") << "-optf loop.opts\n";
        CompilerOptions parsed = parse_compiler_options({"-optf", "a.opts", "-DY"}, "test", dir);
        CHECK(parsed.keyed == Strings{"-DSCALE=3", "--use_fast_math", "-DY"});
        CHECK(parsed.include_dirs == std::vector<fs::path>{"inc"});
        CHECK(parsed.options_files.size() == 2);
        CHECK_THROWS_WITH_AS(parse_compiler_options({"--options-file=bad.opts"}, "test", dir),
                             doctest::Contains("-arch=sm_80 is not accepted"), UsageError);
        CHECK_THROWS_WITH_AS(parse_compiler_options({"-optf", "loop.opts"}, "test", dir), doctest::Contains("nest"),
                             UsageError);
        CHECK_THROWS_WITH_AS(parse_compiler_options({"-optf", "missing.opts"}, "test", dir),
                             doctest::Contains("cannot read options file"), UsageError);
        CHECK(resolve_compiler_options({"-optf", "a.opts"}, dir, "options") ==
              Strings{"-optf=" + (dir / "a.opts").string()});
        fs::remove_all(dir);
    }

    TEST_CASE("a value missing at the end is a usage error")
    {
        CHECK_THROWS_AS(parse_compiler_options({"-I"}, "test"), UsageError);
        CHECK_THROWS_AS(parse_compiler_options({"-D"}, "test"), UsageError);
    }

    TEST_CASE("resolve_compiler_options makes include folders absolute, nothing else")
    {
        Strings resolved = resolve_compiler_options({"-Iinc", "-isystem", "sys", "-DX", "--include-path=/abs"}, "/base",
                                                    "--compiler-option");
        CHECK(resolved == Strings{"-I=/base/inc", "-isystem=/base/sys", "-DX", "--include-path=/abs"});
        CompilerOptions parsed = parse_compiler_options(resolved, "test");
        CHECK(parsed.include_dirs == std::vector<fs::path>{"/base/inc", "/abs"});
        CHECK_THROWS_WITH_AS(resolve_compiler_options({"-arch=sm_80"}, "/base", "--compiler-option"),
                             doctest::Contains("--compiler-option: -arch=sm_80 is not accepted"), UsageError);
    }

    TEST_CASE("an option and its value given as one argument are read as two, for the key and the compiler")
    {
        CompilerOptions parsed = parse_compiler_options(
            {"-isystem /sys", "-include  pre.cuh", "--include-path /i", "-Xptxas -v", "-maxrregcount 32", "-DX=a b"},
            "--compiler-option");
        CHECK(parsed.system_include_dirs == std::vector<fs::path>{"/sys"});
        CHECK(parsed.pre_includes == Strings{"pre.cuh"});
        CHECK(parsed.include_dirs == std::vector<fs::path>{"/i"});
        CHECK(parsed.keyed == Strings{"-Xptxas", "-v", "-maxrregcount", "32", "-DX=a b"});
        CHECK(resolve_compiler_options({"-isystem sys"}, "/base", "options") == Strings{"-isystem=/base/sys"});
    }

    TEST_CASE("split_flags splits at white space, quotes group")
    {
        CHECK(split_flags("  -DA=1\t-I \"/a b\" 'c d'  ") == Strings{"-DA=1", "-I", "/a b", "c d"});
        CHECK(split_flags("").empty());
    }
}
