#include "tree_options.hpp"

#include "util/file_util.hpp"

#include "cunumpy_kernels/error.hpp"

namespace ck::cli {

namespace fs = std::filesystem;

CLI::Validator non_empty_path()
{
    return CLI::Validator([](std::string& value) { return value.empty() ? std::string("empty path") : std::string(); },
                          "PATH", "non-empty path");
}

void TreeOptions::add_to(CLI::App& command)
{
    command.add_option("paths", paths, "Kernel trees, kernel packages or kernel folders (default: .)");
    command.add_option("--host-suffix", host_suffix, "Host kernel file suffix: <name><suffix>.py (default _kernels)");
    command.add_option("--cuda-suffix", cuda_suffix,
                       "CUDA kernel file suffix: <name><suffix>, as cunumpy's cuda_suffix (default _cuda.cu)");
    command.add_option("--cache-dir", cache_dir, "Cache root, instead of cunumpy's ~/.cache/<name>/kernels")
        ->check(non_empty_path());
    command.add_option("--cache-name", cache_name, "PyccelCache name (default: the top-level package)");
    command.add_option("-I,--include-dir", include_dirs, "Extra CUDA include folder (repeatable)")
        ->allow_extra_args(false);
    command
        .add_option(
            "--python", python,
            "Python interpreter that locates cunumpy's headers and runs CuPy for --cupy-cache (default python3)")
        ->check(non_empty_path());
    command.add_option("--cunumpy-include-dir", cunumpy_include_dir,
                       "cunumpy's CUDA header folder (skips the Python probe)");
    command
        .add_option("--cuda-root", cuda_root,
                    "CUDA toolkit folder (default, as CuPy: $CUDA_PATH, $CUDA_HOME, the nvcc in PATH, /usr/local/cuda)")
        ->check(non_empty_path());
    command.add_flag("--no-name-check", no_name_check,
                     "Do not warn about kernel names too long for Pyccel's Fortran wrapper (bind_c_<name><host "
                     "suffix>, 63 characters)");
    command.add_option("--language", language, "Pyccel's language for host kernels: c (default) or fortran");
    auto* with =
        command.add_flag("--openmp", openmp, "Build host kernels with OpenMP (default: as <NAME>_OPENMP says, on)");
    command
        .add_flag("--no-openmp", no_openmp, "Build host kernels without OpenMP, except modules that call its runtime")
        ->excludes(with);
    command.add_flag(
        "--in-place", in_place,
        "Host modules are built beside their sources, as `pyccel compile` does (default: the config's in-place)");
}

std::vector<fs::path> TreeOptions::path_list() const { return {paths.begin(), paths.end()}; }

fs::path existing_dir(const std::string& dir, const char* flag)
{
    std::error_code error;
    if (!fs::is_directory(dir, error)) throw UsageError(std::string(flag) + ": '" + dir + "' is not a folder");
    return fs::absolute(dir);
}

Config TreeOptions::resolve() const { return resolve_at(paths.empty() ? fs::current_path() : fs::path(paths.front())); }

Config TreeOptions::resolve_at(const fs::path& start) const
{
    Config config = load_config(start);
    if (host_suffix) config.host_suffix = *host_suffix;
    if (cuda_suffix) config.cuda_suffix = *cuda_suffix;
    if (cache_dir) config.cache_dir = fs::path(*cache_dir);
    if (cache_name) {
        validate_cache_name(*cache_name, "--cache-name");
        config.cache_name = *cache_name;
    }
    for (const auto& dir : include_dirs) config.include_dirs.push_back(existing_dir(dir, "--include-dir"));
    // Compilers and interpreters run in scratch folders: a relative path must be made absolute here.
    // A bare name (python3) is looked up on PATH, as a shell would.
    if (python)
        config.python = python->find('/') == std::string::npos ? *python : util::absolute_normal(*python).string();
    if (cunumpy_include_dir) config.cunumpy_include_dir = existing_dir(*cunumpy_include_dir, "--cunumpy-include-dir");
    if (cuda_root) config.cuda_root = util::absolute_normal(*cuda_root);
    if (no_name_check) config.check_name_length = false;
    if (language) {
        validate_language(*language, "--language");
        config.language = *language;
    }
    if (openmp || no_openmp) config.openmp = openmp;
    if (in_place) config.in_place = true;
    return config;
}

}  // namespace ck::cli
