// Choosing the cache root exactly as cunumpy's PyccelCache(name) does, so that
// both tools read and write one folder.
#include "cache/cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdlib>

namespace ck {

namespace fs = std::filesystem;

namespace {

std::string env(const std::string& name)
{
    const char* value = std::getenv(name.c_str());
    return value ? value : "";
}

// Python's tempfile.gettempdir() order: TMPDIR, TEMP, TMP, then /tmp.
fs::path temporary_dir()
{
    for (const char* name : {"TMPDIR", "TEMP", "TMP"}) {
        std::string value = env(name);
        if (!value.empty()) return value;
    }
    return "/tmp";
}

// cunumpy's Path.home(): batch and cron jobs often run without HOME, and
// then the password database names the folder. An empty HOME is `/`, as
// Python's expanduser makes it, so the root is never a relative path.
fs::path home_folder(const std::string& cache_name)
{
    if (auto home = util::home_folder()) return *home;
    throw CacheError(
        "no home folder for the kernel cache: HOME is not set and the password database has no home for "
        "user id " +
        std::to_string(::getuid()) + "; set HOME or " + env_prefix_of(cache_name) +
        "_KERNEL_CACHE, or pass --cache-dir");
}

// `$<NAME>_KERNEL_CACHE` is taken literally, as cunumpy's Path() takes it:
// `~` is not expanded, a relative value is relative to the working folder,
// and set but empty it is Path(""): the working folder.
fs::path preferred_root(const std::string& name)
{
    if (const char* from_env = std::getenv((env_prefix_of(name) + "_KERNEL_CACHE").c_str()))
        return util::absolute_normal(*from_env ? fs::path(from_env) : fs::current_path());
    return util::absolute_normal(home_folder(name) / ".cache" / name / "kernels");
}

// Where PyccelCache goes when the preferred root cannot be written.
fs::path fallback_root(const std::string& name) { return util::absolute_normal(temporary_dir() / (name + "-kernels")); }

}  // namespace

std::string env_prefix_of(const std::string& cache_name)
{
    std::string prefix;
    for (unsigned char c : cache_name)
        prefix.push_back(std::isalnum(c) && c < 128 ? static_cast<char>(std::toupper(c)) : '_');
    return prefix;
}

std::optional<fs::path> source_record_file(const Config& config)
{
    if (config.cache_dir) return util::absolute_normal(*config.cache_dir) / ".records" / "sources";
    if (auto home = util::home_folder())
        return util::absolute_normal(*home / ".cache" / "cunumpy-kernels" / "sources.record");
    return std::nullopt;
}

std::string cache_name_of(const Config& config, const std::string& top_package)
{
    return config.cache_name.value_or(top_package);
}

CacheLocation planned_cache_location(const std::string& cache_name, const std::optional<fs::path>& override_root)
{
    CacheLocation location = resolve_cache_location(cache_name, override_root, false);
    if (override_root || util::could_make_writable_dir(location.preferred, nullptr)) return location;
    fs::path fallback = fallback_root(cache_name);
    if (!util::could_make_writable_dir(fallback, nullptr)) return location;
    location.root = fallback;
    location.fallback = true;
    return location;
}

std::string unwritable_cache_problem(const CacheLocation& planned, const std::optional<fs::path>& override_root)
{
    std::string why;
    if (util::could_make_writable_dir(planned.root, &why)) return "";
    if (override_root) return "cache folder " + planned.root.string() + " is not writable: " + why;
    std::string preferred_why;
    util::could_make_writable_dir(planned.preferred, &preferred_why);
    fs::path fallback = fallback_root(planned.name);
    std::string fallback_why;
    util::could_make_writable_dir(fallback, &fallback_why);
    return "no writable kernel cache: " + planned.preferred.string() + " (" + preferred_why + "), " +
           fallback.string() + " (" + fallback_why + "); set " + env_prefix_of(planned.name) +
           "_KERNEL_CACHE or pass --cache-dir";
}

CacheLocation resolve_cache_location(const std::string& cache_name, const std::optional<fs::path>& override_root,
                                     bool for_writing)
{
    CacheLocation location;
    location.name = cache_name;
    if (override_root) {
        location.root = location.preferred = util::absolute_normal(*override_root);
        std::string why;
        if (for_writing && !util::make_writable_dir(location.root, &why))
            throw CacheError("cache folder " + location.root.string() + " is not writable: " + why);
        return location;
    }
    location.preferred = preferred_root(cache_name);
    location.root = location.preferred;
    if (!for_writing) return location;
    std::string preferred_problem;
    if (util::make_writable_dir(location.preferred, &preferred_problem)) return location;
    location.root = fallback_root(cache_name);
    location.fallback = true;
    std::string fallback_problem;
    if (util::make_writable_dir(location.root, &fallback_problem)) return location;
    throw CacheError("no writable kernel cache: " + location.preferred.string() + " (" + preferred_problem + "), " +
                     location.root.string() + " (" + fallback_problem + "); set " + env_prefix_of(cache_name) +
                     "_KERNEL_CACHE or pass --cache-dir");
}

}  // namespace ck
