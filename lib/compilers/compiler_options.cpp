#include "compilers/compiler_options.hpp"
#include "compilers/option_lists.hpp"

#include "compilers/forwarded_options.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

namespace ck {

namespace fs = std::filesystem;

namespace {

enum class Kind {
    include_dir,
    system_include_dir,
    pre_include,
    options_file,
    host_options,
    ptxas_options,
    verbatim,
    refused,
    keyed
};

// How an option takes its value: `none`; `separate` (`-x v`, `-x=v`);
// `joined` (`-xv`, also `-x v`, as -I and -D do).
enum class Value { none, separate, joined };

struct Spec {
    const char* name;
    Kind kind;
    Value value;
    const char* instead = "";  // refused: what to use instead
};

constexpr const char* use_arch = "set targets with --arch (config key arch) and PTX with --ptx/--no-ptx (key ptx)";
constexpr const char* whole_program =
    "the cache holds whole-program cubins and PTX that cuModuleLoadData loads; separate compilation and "
    "link-time optimisation are not supported";
constexpr const char* output_owned = "the tool chooses the output (one cubin per --arch target, PTX with --ptx)";
constexpr const char* search_owned = "it changes the include search the key follows; use -I and -isystem";
constexpr const char* dependencies_owned = "the tool asks nvcc for dependencies itself";
constexpr const char* pch_outside_key = "precompiled headers live outside the key";
constexpr const char* nothing_linked = "the cache holds cubins and PTX; nothing is linked";
constexpr const char* reads_outside_key = "it makes nvcc read files the cache key does not hold";
constexpr const char* forwards_unchecked =
    "it would pass options this tool has not checked to the host compiler; give them with -Xcompiler";
constexpr const char* run_owned =
    "the tool runs nvcc once per kernel with -keep, -keep-dir and --time of its own and reads each target's file "
    "from them (the phase times are in build --json)";

// nvcc's and NVRTC's spellings. Names are matched whole, or with `=value`,
// or (Value::joined) followed directly by the value.
constexpr std::array specs = {
    Spec{"-I", Kind::include_dir, Value::joined},
    Spec{"--include-path", Kind::include_dir, Value::separate},
    Spec{"-isystem", Kind::system_include_dir, Value::joined},
    Spec{"--system-include", Kind::system_include_dir, Value::separate},
    Spec{"-include", Kind::pre_include, Value::separate},
    Spec{"--pre-include", Kind::pre_include, Value::separate},

    Spec{"--verbatim-option", Kind::verbatim, Value::separate},
    Spec{"--options-file", Kind::options_file, Value::separate},
    Spec{"-optf", Kind::options_file, Value::separate},
    Spec{"-Xcompiler", Kind::host_options, Value::separate},
    Spec{"--compiler-options", Kind::host_options, Value::separate},
    Spec{"-Xptxas", Kind::ptxas_options, Value::separate},
    Spec{"--ptxas-options", Kind::ptxas_options, Value::separate},

    Spec{"-arch", Kind::refused, Value::separate, use_arch},
    Spec{"--gpu-architecture", Kind::refused, Value::separate, use_arch},
    Spec{"-gencode", Kind::refused, Value::separate, use_arch},
    Spec{"--generate-code", Kind::refused, Value::separate, use_arch},
    Spec{"-code", Kind::refused, Value::separate, use_arch},
    Spec{"--gpu-code", Kind::refused, Value::separate, use_arch},
    Spec{"-rdc", Kind::refused, Value::separate, whole_program},
    Spec{"--relocatable-device-code", Kind::refused, Value::separate, whole_program},
    Spec{"-dc", Kind::refused, Value::none, whole_program},
    Spec{"--device-c", Kind::refused, Value::none, whole_program},
    Spec{"-dw", Kind::refused, Value::none, whole_program},
    Spec{"--device-w", Kind::refused, Value::none, whole_program},
    Spec{"-dlink", Kind::refused, Value::none, whole_program},
    Spec{"--device-link", Kind::refused, Value::none, whole_program},
    Spec{"-lto", Kind::refused, Value::none, whole_program},
    Spec{"-dlto", Kind::refused, Value::none, whole_program},
    Spec{"--dlink-time-opt", Kind::refused, Value::none, whole_program},
    Spec{"-gen-opt-lto", Kind::refused, Value::none, whole_program},
    Spec{"--gen-opt-lto", Kind::refused, Value::none, whole_program},
    Spec{"-ewp", Kind::refused, Value::none, whole_program},
    Spec{"--extensible-whole-program", Kind::refused, Value::none, whole_program},
    Spec{"-G", Kind::refused, Value::none,
         "device debug code is not cached; use -lineinfo for source lines in profiles"},
    Spec{"--device-debug", Kind::refused, Value::none,
         "device debug code is not cached; use -lineinfo for source lines in profiles"},
    Spec{"-ptx", Kind::refused, Value::none, output_owned},
    Spec{"--ptx", Kind::refused, Value::none, output_owned},
    Spec{"-cubin", Kind::refused, Value::none, output_owned},
    Spec{"--cubin", Kind::refused, Value::none, output_owned},
    Spec{"-fatbin", Kind::refused, Value::none, output_owned},
    Spec{"--fatbin", Kind::refused, Value::none, output_owned},
    Spec{"-optix-ir", Kind::refused, Value::none, output_owned},
    Spec{"--optix-ir", Kind::refused, Value::none, output_owned},
    Spec{"-c", Kind::refused, Value::none, output_owned},
    Spec{"--compile", Kind::refused, Value::none, output_owned},
    Spec{"-E", Kind::refused, Value::none, output_owned},
    Spec{"--preprocess", Kind::refused, Value::none, output_owned},
    Spec{"-cuda", Kind::refused, Value::none, output_owned},
    Spec{"--cuda", Kind::refused, Value::none, output_owned},
    Spec{"-lib", Kind::refused, Value::none, output_owned},
    Spec{"--lib", Kind::refused, Value::none, output_owned},
    Spec{"-link", Kind::refused, Value::none, output_owned},
    Spec{"--link", Kind::refused, Value::none, output_owned},
    Spec{"-run", Kind::refused, Value::none, output_owned},
    Spec{"--run", Kind::refused, Value::none, output_owned},
    Spec{"--fdevice-syntax-only", Kind::refused, Value::none, output_owned},
    Spec{"-o", Kind::refused, Value::separate, output_owned},
    Spec{"--output-file", Kind::refused, Value::separate, output_owned},
    Spec{"-odir", Kind::refused, Value::separate, output_owned},
    Spec{"--output-directory", Kind::refused, Value::separate, output_owned},
    Spec{"-x", Kind::refused, Value::separate, output_owned},
    Spec{"--x", Kind::refused, Value::separate, output_owned},
    Spec{"-M", Kind::refused, Value::none, dependencies_owned},
    Spec{"--generate-dependencies", Kind::refused, Value::none, dependencies_owned},
    Spec{"-MM", Kind::refused, Value::none, dependencies_owned},
    Spec{"--generate-nonsystem-dependencies", Kind::refused, Value::none, dependencies_owned},
    Spec{"-MD", Kind::refused, Value::none, dependencies_owned},
    Spec{"--generate-dependencies-with-compile", Kind::refused, Value::none, dependencies_owned},
    Spec{"-MMD", Kind::refused, Value::none, dependencies_owned},
    Spec{"--generate-nonsystem-dependencies-with-compile", Kind::refused, Value::none, dependencies_owned},
    Spec{"-MF", Kind::refused, Value::separate, dependencies_owned},
    Spec{"-keep", Kind::refused, Value::none, run_owned},
    Spec{"--keep", Kind::refused, Value::none, run_owned},
    Spec{"-keep-dir", Kind::refused, Value::separate, run_owned},
    Spec{"--keep-dir", Kind::refused, Value::separate, run_owned},
    Spec{"-save-temps", Kind::refused, Value::none, run_owned},
    Spec{"--save-temps", Kind::refused, Value::none, run_owned},
    Spec{"-time", Kind::refused, Value::separate, run_owned},
    Spec{"--time", Kind::refused, Value::separate, run_owned},
    Spec{"-dryrun", Kind::refused, Value::none, run_owned},
    Spec{"--dryrun", Kind::refused, Value::none, run_owned},
    Spec{"--dependency-output", Kind::refused, Value::separate, dependencies_owned},
    Spec{"-MT", Kind::refused, Value::separate, dependencies_owned},
    Spec{"--dependency-target-name", Kind::refused, Value::separate, dependencies_owned},
    Spec{"-MP", Kind::refused, Value::none, dependencies_owned},
    Spec{"--generate-dependency-targets", Kind::refused, Value::none, dependencies_owned},
    Spec{"-no-source-include", Kind::refused, Value::none, search_owned},
    Spec{"--no-source-include", Kind::refused, Value::none, search_owned},
    Spec{"-iquote", Kind::refused, Value::joined, search_owned},
    Spec{"-idirafter", Kind::refused, Value::joined, search_owned},
    Spec{"-ltoir", Kind::refused, Value::none, output_owned},
    Spec{"--ltoir", Kind::refused, Value::none, output_owned},
    Spec{"-objtemp", Kind::refused, Value::none, run_owned},
    Spec{"--objdir-as-tempdir", Kind::refused, Value::none, run_owned},
    Spec{"-fdevice-time-trace", Kind::refused, Value::separate, run_owned},
    Spec{"--fdevice-time-trace", Kind::refused, Value::separate, run_owned},
    Spec{"-clean", Kind::refused, Value::none, run_owned},
    Spec{"--clean-targets", Kind::refused, Value::none, run_owned},
    Spec{"-run-args", Kind::refused, Value::separate, output_owned},
    Spec{"--run-args", Kind::refused, Value::separate, output_owned},
    Spec{"-code-ls", Kind::refused, Value::none, output_owned},
    Spec{"--list-gpu-code", Kind::refused, Value::none, output_owned},
    Spec{"-arch-ls", Kind::refused, Value::none, output_owned},
    Spec{"--list-gpu-arch", Kind::refused, Value::none, output_owned},
    Spec{"-h", Kind::refused, Value::none, output_owned},
    Spec{"--help", Kind::refused, Value::none, output_owned},
    Spec{"-V", Kind::refused, Value::none, output_owned},
    Spec{"--version", Kind::refused, Value::none, output_owned},
    Spec{"-l", Kind::refused, Value::joined, nothing_linked},
    Spec{"--library", Kind::refused, Value::separate, nothing_linked},
    Spec{"-L", Kind::refused, Value::joined, nothing_linked},
    Spec{"--library-path", Kind::refused, Value::separate, nothing_linked},
    Spec{"-Xlinker", Kind::refused, Value::separate, nothing_linked},
    Spec{"--linker-options", Kind::refused, Value::separate, nothing_linked},
    Spec{"-Xarchive", Kind::refused, Value::separate, nothing_linked},
    Spec{"--archive-options", Kind::refused, Value::separate, nothing_linked},
    Spec{"-Xnvlink", Kind::refused, Value::separate, nothing_linked},
    Spec{"--nvlink-options", Kind::refused, Value::separate, nothing_linked},
    Spec{"-shared", Kind::refused, Value::none, nothing_linked},
    Spec{"--shared", Kind::refused, Value::none, nothing_linked},
    Spec{"-cudart", Kind::refused, Value::separate, nothing_linked},
    Spec{"--cudart", Kind::refused, Value::separate, nothing_linked},
    Spec{"-cudadevrt", Kind::refused, Value::separate, nothing_linked},
    Spec{"--cudadevrt", Kind::refused, Value::separate, nothing_linked},
    Spec{"-arbin", Kind::refused, Value::separate, nothing_linked},
    Spec{"--archiver-binary", Kind::refused, Value::separate, nothing_linked},
    Spec{"-nodlink", Kind::refused, Value::none, nothing_linked},
    Spec{"--no-device-link", Kind::refused, Value::none, nothing_linked},
    Spec{"-r", Kind::refused, Value::none, whole_program},
    Spec{"--relocatable-link", Kind::refused, Value::none, whole_program},
    Spec{"-reloc-ptx", Kind::refused, Value::none, whole_program},
    Spec{"--relocatable-ptx", Kind::refused, Value::none, whole_program},
    Spec{"-hls", Kind::refused, Value::separate, nothing_linked},
    Spec{"--host-linker-script", Kind::refused, Value::separate, nothing_linked},
    Spec{"-aug-hls", Kind::refused, Value::none, nothing_linked},
    Spec{"--augment-host-linker-script", Kind::refused, Value::none, nothing_linked},
    Spec{"-ldir", Kind::refused, Value::separate, reads_outside_key},
    Spec{"--libdevice-directory", Kind::refused, Value::separate, reads_outside_key},
    Spec{"-target-dir", Kind::refused, Value::separate, reads_outside_key},
    Spec{"--target-directory", Kind::refused, Value::separate, reads_outside_key},
    Spec{"-noprof", Kind::refused, Value::none, "nvcc.profile is a key input; the tool runs nvcc with it"},
    Spec{"--dont-use-profile", Kind::refused, Value::none, "nvcc.profile is a key input; the tool runs nvcc with it"},
    Spec{"-qpp-config", Kind::refused, Value::separate, reads_outside_key},
    Spec{"--qpp-config", Kind::refused, Value::separate, reads_outside_key},
    Spec{"-use-local-env", Kind::refused, Value::none, reads_outside_key},
    Spec{"--use-local-env", Kind::refused, Value::none, reads_outside_key},
    Spec{"-force-cl-env-setup", Kind::refused, Value::none, reads_outside_key},
    Spec{"--force-cl-env-setup", Kind::refused, Value::none, reads_outside_key},
    Spec{"-idp", Kind::refused, Value::separate, reads_outside_key},
    Spec{"--input-drive-prefix", Kind::refused, Value::separate, reads_outside_key},
    Spec{"-ddp", Kind::refused, Value::separate, reads_outside_key},
    Spec{"--dependency-drive-prefix", Kind::refused, Value::separate, reads_outside_key},
    Spec{"-dp", Kind::refused, Value::separate, reads_outside_key},
    Spec{"--drive-prefix", Kind::refused, Value::separate, reads_outside_key},
    Spec{"-forward-unknown-to-host-compiler", Kind::refused, Value::none, forwards_unchecked},
    Spec{"--forward-unknown-to-host-compiler", Kind::refused, Value::none, forwards_unchecked},
    Spec{"-forward-unknown-to-host-linker", Kind::refused, Value::none, nothing_linked},
    Spec{"--forward-unknown-to-host-linker", Kind::refused, Value::none, nothing_linked},
    Spec{"-forward-unknown-opts", Kind::refused, Value::none, forwards_unchecked},
    Spec{"--forward-unknown-opts", Kind::refused, Value::none, forwards_unchecked},
    Spec{"--pch", Kind::refused, Value::none, pch_outside_key},
    Spec{"-pch", Kind::refused, Value::none, pch_outside_key},
    Spec{"--create-pch", Kind::refused, Value::separate, pch_outside_key},
    Spec{"--use-pch", Kind::refused, Value::separate, pch_outside_key},
    Spec{"--pch-dir", Kind::refused, Value::separate, pch_outside_key},

    Spec{"-D", Kind::keyed, Value::joined},
    Spec{"--define-macro", Kind::keyed, Value::separate},
    Spec{"-U", Kind::keyed, Value::joined},
    Spec{"--undefine-macro", Kind::keyed, Value::separate},
    Spec{"-std", Kind::keyed, Value::separate},
    Spec{"--std", Kind::keyed, Value::separate},
    Spec{"-O", Kind::keyed, Value::joined},
    Spec{"--optimize", Kind::keyed, Value::separate},
    Spec{"-Ofc", Kind::keyed, Value::separate},
    Spec{"--Ofast-compile", Kind::keyed, Value::separate},
    Spec{"-dopt", Kind::keyed, Value::separate},
    Spec{"--dopt", Kind::keyed, Value::separate},
    Spec{"-use_fast_math", Kind::keyed, Value::none},
    Spec{"--use_fast_math", Kind::keyed, Value::none},
    Spec{"-ftz", Kind::keyed, Value::separate},
    Spec{"--ftz", Kind::keyed, Value::separate},
    Spec{"-prec-div", Kind::keyed, Value::separate},
    Spec{"--prec-div", Kind::keyed, Value::separate},
    Spec{"-prec-sqrt", Kind::keyed, Value::separate},
    Spec{"--prec-sqrt", Kind::keyed, Value::separate},
    Spec{"-fmad", Kind::keyed, Value::separate},
    Spec{"--fmad", Kind::keyed, Value::separate},
    Spec{"-lineinfo", Kind::keyed, Value::none},
    Spec{"--generate-line-info", Kind::keyed, Value::none},
    Spec{"-maxrregcount", Kind::keyed, Value::separate},
    Spec{"--maxrregcount", Kind::keyed, Value::separate},
    Spec{"-extra-device-vectorization", Kind::keyed, Value::none},
    Spec{"--extra-device-vectorization", Kind::keyed, Value::none},
    Spec{"-ccbin", Kind::keyed, Value::separate},
    Spec{"--compiler-bindir", Kind::keyed, Value::separate},
    Spec{"-w", Kind::keyed, Value::none},
    Spec{"--disable-warnings", Kind::keyed, Value::none},
    // nvcc's own -W options only: it has no general -W<warning> (gcc's go
    // through -Xcompiler, where they are checked), and `-Wp,...` would hand
    // the preprocessor options nothing here reads.
    Spec{"-Werror", Kind::keyed, Value::separate},
    Spec{"--Werror", Kind::keyed, Value::separate},
    Spec{"-Wreorder", Kind::keyed, Value::none},
    Spec{"-Wdefault-stream-launch", Kind::keyed, Value::none},
    Spec{"-Wmissing-launch-bounds", Kind::keyed, Value::none},
    Spec{"-Wext-lambda-captures-this", Kind::keyed, Value::none},
    Spec{"-Wno-deprecated-declarations", Kind::keyed, Value::none},
    Spec{"-Wno-deprecated-gpu-targets", Kind::keyed, Value::none},
    Spec{"-restrict", Kind::keyed, Value::none},
    Spec{"--restrict", Kind::keyed, Value::none},
    Spec{"-default-device", Kind::keyed, Value::none},
    Spec{"--device-as-default-execution-space", Kind::keyed, Value::none},
    Spec{"-expt-relaxed-constexpr", Kind::keyed, Value::none},
    Spec{"--expt-relaxed-constexpr", Kind::keyed, Value::none},
    Spec{"-extended-lambda", Kind::keyed, Value::none},
    Spec{"--extended-lambda", Kind::keyed, Value::none},
    Spec{"-expt-extended-lambda", Kind::keyed, Value::none},
    Spec{"--expt-extended-lambda", Kind::keyed, Value::none},
    Spec{"-device-int128", Kind::keyed, Value::none},
    Spec{"--device-int128", Kind::keyed, Value::none},
    Spec{"-diag-suppress", Kind::keyed, Value::separate},
    Spec{"--diag-suppress", Kind::keyed, Value::separate},
    Spec{"-diag-error", Kind::keyed, Value::separate},
    Spec{"--diag-error", Kind::keyed, Value::separate},
    Spec{"-diag-warn", Kind::keyed, Value::separate},
    Spec{"--diag-warn", Kind::keyed, Value::separate},
    Spec{"--display-error-number", Kind::keyed, Value::none},
    Spec{"--no-display-error-number", Kind::keyed, Value::none},
    Spec{"-res-usage", Kind::keyed, Value::none},
    Spec{"--resource-usage", Kind::keyed, Value::none},
    Spec{"-src-in-ptx", Kind::keyed, Value::none},
    Spec{"--source-in-ptx", Kind::keyed, Value::none},
    Spec{"--builtin-move-forward", Kind::keyed, Value::separate},
    Spec{"--builtin-initializer-list", Kind::keyed, Value::separate},
    Spec{"-split-compile", Kind::keyed, Value::separate},
    Spec{"--split-compile", Kind::keyed, Value::separate},
    Spec{"-t", Kind::keyed, Value::separate},
    Spec{"--threads", Kind::keyed, Value::separate},
    Spec{"-allow-unsupported-compiler", Kind::keyed, Value::none},
    Spec{"--allow-unsupported-compiler", Kind::keyed, Value::none},
    Spec{"-modify-stack-limit", Kind::keyed, Value::separate},
    Spec{"--modify-stack-limit", Kind::keyed, Value::separate},
    Spec{"--jump-table-density", Kind::keyed, Value::separate},
    Spec{"--device-stack-protector", Kind::keyed, Value::separate},
    Spec{"-minimal", Kind::keyed, Value::none},
    Spec{"--minimal", Kind::keyed, Value::none},
    Spec{"-v", Kind::keyed, Value::none},
    Spec{"--verbose", Kind::keyed, Value::none},
    Spec{"-g", Kind::keyed, Value::none},
    Spec{"--debug", Kind::keyed, Value::none},
    Spec{"-pg", Kind::keyed, Value::none},
    Spec{"--profile", Kind::keyed, Value::none},
    Spec{"-opt-info", Kind::keyed, Value::separate},
    Spec{"--optimization-info", Kind::keyed, Value::separate},
    Spec{"-ftemplate-backtrace-limit", Kind::keyed, Value::separate},
    Spec{"--ftemplate-backtrace-limit", Kind::keyed, Value::separate},
    Spec{"-ftemplate-depth", Kind::keyed, Value::separate},
    Spec{"--ftemplate-depth", Kind::keyed, Value::separate},
    Spec{"-noeh", Kind::keyed, Value::none},
    Spec{"--no-exceptions", Kind::keyed, Value::none},
    Spec{"-nohdinitlist", Kind::keyed, Value::none},
    Spec{"--no-host-device-initializer-list", Kind::keyed, Value::none},
    Spec{"-nohdmoveforward", Kind::keyed, Value::none},
    Spec{"--no-host-device-move-forward", Kind::keyed, Value::none},
    Spec{"-m", Kind::keyed, Value::separate},
    Spec{"--machine", Kind::keyed, Value::separate},
    Spec{"-m64", Kind::keyed, Value::none},
    Spec{"--m64", Kind::keyed, Value::none},
    Spec{"-static-global-template-stub", Kind::keyed, Value::separate},
    Spec{"--static-global-template-stub", Kind::keyed, Value::separate},
    Spec{"-device-entity-has-hidden-visibility", Kind::keyed, Value::separate},
    Spec{"--device-entity-has-hidden-visibility", Kind::keyed, Value::separate},
    Spec{"-split-compile-extended", Kind::keyed, Value::separate},
    Spec{"--split-compile-extended", Kind::keyed, Value::separate},
    Spec{"-e", Kind::keyed, Value::separate},
    Spec{"--entries", Kind::keyed, Value::separate},
    Spec{"-default-stream", Kind::keyed, Value::separate},
    Spec{"--default-stream", Kind::keyed, Value::separate},
    Spec{"-keep-device-functions", Kind::keyed, Value::none},
    Spec{"--keep-device-functions", Kind::keyed, Value::none},
    Spec{"--Wreorder", Kind::keyed, Value::none},
    Spec{"--Wdefault-stream-launch", Kind::keyed, Value::none},
    Spec{"--Wmissing-launch-bounds", Kind::keyed, Value::none},
    Spec{"--Wext-lambda-captures-this", Kind::keyed, Value::none},
    Spec{"--Wno-deprecated-declarations", Kind::keyed, Value::none},
    Spec{"--Wno-deprecated-gpu-targets", Kind::keyed, Value::none},
    Spec{"-no-compress", Kind::keyed, Value::none},
    Spec{"--no-compress", Kind::keyed, Value::none},
    Spec{"-compress-mode", Kind::keyed, Value::separate},
    Spec{"--compress-mode", Kind::keyed, Value::separate},
    Spec{"-astoolspatch", Kind::keyed, Value::none},
    Spec{"--compile-as-tools-patch", Kind::keyed, Value::none},
    Spec{"-err-no", Kind::keyed, Value::none},
    Spec{"-no-err-no", Kind::keyed, Value::none},
    Spec{"-brief-diag", Kind::keyed, Value::separate},
    Spec{"--brief-diagnostics", Kind::keyed, Value::separate},
    Spec{"-jtd", Kind::keyed, Value::separate},
    Spec{"-frandom-seed", Kind::keyed, Value::separate},
    Spec{"--frandom-seed", Kind::keyed, Value::separate},
    Spec{"-sanitize", Kind::keyed, Value::separate},
    Spec{"--sanitize", Kind::keyed, Value::separate},
    Spec{"-jobserver", Kind::keyed, Value::none},
    Spec{"--jobserver", Kind::keyed, Value::none},
};

struct Match {
    const Spec* spec = nullptr;
    std::optional<std::string> value;  // given in the same argument
};

// Whole names and `name=value` first, then joined values (longest name first,
// so `-isystem` is never `-I` and `-Ofc` never `-O`).
Match match(const std::string& arg)
{
    for (const auto& spec : specs) {
        std::string_view name = spec.name;
        if (arg == name) return {&spec, std::nullopt};
        if (spec.value != Value::none && arg.size() > name.size() && arg.compare(0, name.size(), name) == 0 &&
            arg[name.size()] == '=')
            return {&spec, arg.substr(name.size() + 1)};
    }
    const Spec* best = nullptr;
    for (const auto& spec : specs) {
        std::string_view name = spec.name;
        if (spec.value == Value::joined && arg.size() > name.size() && arg.compare(0, name.size(), name) == 0 &&
            (!best || name.size() > std::string_view(best->name).size()))
            best = &spec;
    }
    if (best) return {best, arg.substr(std::string_view(best->name).size())};
    return {};
}

// "-isystem /x" given as one argument (a pyproject list item, a quoted
// flag): the user meant the option and its value. The compiler, handed one
// word, would not split it, and its folder would escape the key; so every
// option that takes a separate value is split here, once, for the key and
// the compiler alike.
std::vector<std::string> split_option_words(const std::vector<std::string>& options)
{
    std::vector<std::string> out;
    for (const auto& arg : options) {
        auto space = arg.find_first_of(" \t");
        if (space == std::string::npos || match(arg).spec) {
            out.push_back(arg);
            continue;
        }
        Match head = match(arg.substr(0, space));
        std::string rest = trimmed(arg.substr(space));
        if (head.spec && head.spec->value != Value::none && !head.value && !rest.empty()) {
            out.push_back(arg.substr(0, space));
            out.push_back(rest);
        } else {
            out.push_back(arg);
        }
    }
    return out;
}

}  // namespace

namespace {

// An options file nests at most this deep: a file that names itself is an error, not a hang.
constexpr int max_options_file_depth = 8;

void parse_into(CompilerOptions& parsed, const std::vector<std::string>& given, const std::string& where,
                const fs::path& base, int depth);

// `--options-file F,G`: each file's words are parsed as if given here, so
// that what they say is in the key (and checked) and the file itself never
// reaches the compiler. Relative names are the working folder's, as nvcc's.
void expand_options_files(CompilerOptions& parsed, const std::string& files, const std::string& arg,
                          const std::string& where, const fs::path& base, int depth)
{
    if (depth >= max_options_file_depth)
        throw UsageError(where + ": " + arg + ": options files nest deeper than " +
                         std::to_string(max_options_file_depth) + " (does one name itself?)");
    for (const auto& name : comma_list_items(files)) {
        fs::path file = fs::path(name).is_absolute() || base.empty() ? fs::absolute(name) : base / name;
        std::string text;
        try {
            text = util::read_file(file);
        } catch (const Error& error) {
            throw UsageError(where + ": " + arg + ": cannot read options file " + file.string() + ": " + error.what());
        }
        parsed.options_files.push_back(file.lexically_normal());
        parse_into(parsed, split_flags(text), where + " (options file " + file.string() + ")", base, depth + 1);
    }
}

std::string unknown_option_message(const std::string& arg, const std::string& where)
{
    if (!arg.empty() && arg[0] == '@')
        return where + ": " + arg +
               " is not accepted: nvcc reads no response files; put the options into a file "
               "named by --options-file, whose content the cache key holds";
    if (arg.rfind("-W", 0) == 0)
        return where + ": " + arg +
               " is not accepted: nvcc's only -W options are its own (-Werror=<kind>, -Wreorder, "
               "-Wdefault-stream-launch, -Wmissing-launch-bounds, -Wext-lambda-captures-this, "
               "-Wno-deprecated-declarations, -Wno-deprecated-gpu-targets); give the host "
               "compiler's warnings as -Xcompiler=-W..., which is checked, or " +
               verbatim_door(arg);
    return where + ": " + arg +
           " is not accepted: it is not one of nvcc's or NVRTC's documented options that "
           "cunumpy-kernels knows, so its effect could escape the cache key; " +
           verbatim_door(arg);
}

void parse_into(CompilerOptions& parsed, const std::vector<std::string>& given, const std::string& where,
                const fs::path& base, int depth)
{
    const std::vector<std::string> options = split_option_words(given);
    for (std::size_t i = 0; i < options.size(); ++i) {
        const std::string& arg = options[i];
        Match found = match(arg);
        if (!found.spec) {
            // "-arch sm_80" as one argument: the compiler splits nothing, yet the
            // user meant the option; refuse it as such.
            auto space = arg.find_first_of(" \t");
            Match head = space == std::string::npos ? Match{} : match(arg.substr(0, space));
            if (head.spec && head.spec->kind == Kind::refused)
                throw UsageError(where + ": " + arg + " is not accepted: " + head.spec->instead);
            throw UsageError(unknown_option_message(arg, where));
        }
        const Spec& spec = *found.spec;
        if (spec.kind == Kind::refused) throw UsageError(where + ": " + arg + " is not accepted: " + spec.instead);
        std::optional<std::string> value = found.value;
        bool separate = false;
        if (spec.value != Value::none && (!value || value->empty())) {
            if (i + 1 >= options.size()) throw UsageError(where + ": " + arg + " needs a value");
            value = options[++i];
            separate = true;
        }
        std::string text = value ? trimmed(*value) : "";
        auto keep = [&] {
            parsed.keyed.push_back(arg);
            if (separate) parsed.keyed.push_back(*value);
        };
        switch (spec.kind) {
            case Kind::include_dir:
                for (const auto& dir : comma_list_items(text)) parsed.include_dirs.emplace_back(dir);
                break;
            case Kind::system_include_dir:
                for (const auto& dir : comma_list_items(text)) parsed.system_include_dirs.emplace_back(dir);
                break;
            case Kind::pre_include:
                for (const auto& file : comma_list_items(text)) parsed.pre_includes.push_back(file);
                break;
            case Kind::options_file:
                expand_options_files(parsed, text, arg, where, base, depth);
                break;
            case Kind::host_options:
                check_host_compiler_options(text, separate ? arg + " " + text : arg, where);
                keep();
                break;
            case Kind::ptxas_options:
                check_ptxas_options(text, separate ? arg + " " + text : arg, where);
                keep();
                break;
            case Kind::verbatim:
                parsed.keyed.push_back(*value);
                parsed.verbatim.push_back(*value);
                break;
            case Kind::keyed:
                keep();
                break;
            case Kind::refused:
                break;
        }
    }
}

}  // namespace

CompilerOptions parse_compiler_options(const std::vector<std::string>& given, const std::string& where,
                                       const fs::path& base)
{
    CompilerOptions parsed;
    parse_into(parsed, given, where, base, 0);
    return parsed;
}

void append_compiler_options(CompilerOptions& into, const CompilerOptions& more)
{
    auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
    append(into.keyed, more.keyed);
    append(into.include_dirs, more.include_dirs);
    append(into.system_include_dirs, more.system_include_dirs);
    append(into.pre_includes, more.pre_includes);
    append(into.options_files, more.options_files);
    append(into.verbatim, more.verbatim);
}

namespace {

// One folder or file of a path option, made absolute against `base`.
fs::path resolved_path(const std::string& value, const fs::path& base, Kind kind)
{
    fs::path path = fs::path(value).is_absolute() ? fs::path(value) : base / value;
    // A relative forced include is searched in the working folder first, as
    // gcc does, then along the quoted include chain: keep it relative there.
    std::error_code error;
    if (kind == Kind::pre_include && !fs::path(value).is_absolute() && !fs::is_regular_file(path, error)) path = value;
    return path.lexically_normal();
}

}  // namespace

std::vector<std::string> resolve_compiler_options(const std::vector<std::string>& given, const fs::path& base,
                                                  const std::string& where)
{
    parse_compiler_options(given, where, base);  // refusals and missing values, in the user's words
    const std::vector<std::string> options = split_option_words(given);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < options.size(); ++i) {
        const std::string& arg = options[i];
        Match found = match(arg);
        bool path_option =
            found.spec && (found.spec->kind == Kind::include_dir || found.spec->kind == Kind::system_include_dir ||
                           found.spec->kind == Kind::pre_include || found.spec->kind == Kind::options_file);
        if (!path_option) {
            out.push_back(arg);
            continue;
        }
        std::string value = found.value ? trimmed(*found.value) : "";
        if (value.empty()) value = trimmed(options[++i]);
        for (const auto& item : comma_list_items(value))
            out.push_back(std::string(found.spec->name) + "=" + resolved_path(item, base, found.spec->kind).string());
    }
    return out;
}

std::vector<std::string> split_flags(const std::string& text)
{
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (char c : text) {
        if (quote) {
            if (c == quote)
                quote = 0;
            else
                word += c;
        } else if (c == '"' || c == '\'') {
            quote = c;
            in_word = true;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            if (in_word) words.push_back(word);
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (in_word) words.push_back(word);
    return words;
}

}  // namespace ck
