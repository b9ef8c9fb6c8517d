// `cunumpy-kernels cache dir|info|list|verify|prune|export|import|path|clean`.
#include "commands.hpp"
#include "util/json_text.hpp"
#include "tree_options.hpp"

#include "builder/build.hpp"
#include "cache_admin/cache_maintenance.hpp"
#include "builder/target_flags.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/package.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <memory>

namespace ck::cli {

namespace fs = std::filesystem;

namespace {

struct CacheFlags {
    std::optional<std::string> cache_dir;
    std::optional<std::string> cache_name;
    std::string tree = ".";
    bool tree_given = false;  ///< --tree was on the command line (clean: that tree only)
    bool json = false;
    bool fix = false;
    bool dry_run = false;
    bool superseded = false;
    std::optional<std::string> max_age;
    std::optional<std::string> max_size;
    std::string archive;
    std::string kernel;                              ///< path: kernel name or dotted module
    std::optional<std::string> target;               ///< path: sm_90 or compute_90
    std::optional<std::string> compiler;             ///< path: nvrtc or nvcc
    std::optional<std::string> python;               ///< path: the interpreter that locates cunumpy's headers
    std::optional<std::string> cunumpy_include_dir;  ///< path: cunumpy's CUDA headers
    bool in_place = false;                           ///< clean: what build --in-place wrote in the tree
    bool zero = false;                               ///< info: zero the hit and miss counters
};

// Which cache: --cache-dir, else the name from --cache-name, the tree's
// pyproject.toml, or the top-level package of the kernels in the tree.
CacheLocation locate(const CacheFlags& flags, bool for_writing)
{
    Config config = load_config(flags.tree);
    if (flags.cache_dir) config.cache_dir = fs::path(*flags.cache_dir);
    if (flags.cache_name) config.cache_name = *flags.cache_name;
    return locate_tree_cache(flags.tree, config, for_writing);
}

bool root_exists(const CacheLocation& location)
{
    std::error_code error;
    return fs::is_directory(location.root, error);
}

// A cache root that does not exist is most often a mistyped --cache-dir or
// --cache-name: a check of it must not pass as a check of an empty cache.
CacheLocation existing(const CacheLocation& location, const std::string& command)
{
    if (!root_exists(location))
        throw UsageError("cache " + command + ": no cache at " + location.root.string() +
                         " (no build has written there); check --cache-dir, --cache-name or --tree, or run "
                         "`cunumpy-kernels build` first");
    return location;
}

std::string human_bytes(std::uint64_t bytes)
{
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024 && unit < 4) {
        value /= 1024;
        ++unit;
    }
    return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

nlohmann::json entry_json(const EntryInfo& entry)
{
    nlohmann::json j = {{"kind", entry.kind},          {"key", entry.key},         {"dir", entry.dir.string()},
                        {"bytes", entry.bytes},        {"current", entry.current}, {"linked", entry.linked},
                        {"last_used", entry.last_used}};
    if (entry.manifest) {
        j["module"] = entry.manifest->module;
        j["target"] = entry.manifest->target;
        j["built_at"] = entry.manifest->built_at;
    } else {
        j["problem"] = entry.problem;
    }
    return j;
}

// current: a build would hit it; linked: cunumpy loads it; else superseded.
const char* entry_state(const EntryInfo& entry)
{
    if (entry.linked) return "linked";
    return entry.current ? "current" : "superseded";
}

int run_dir(const CacheFlags& flags, Terminal& terminal)
{
    terminal.result(locate(flags, false).root.string() + "\n");
    return 0;
}

std::string percent(std::uint64_t part, std::uint64_t whole)
{
    return whole == 0 ? "no" : fmt::format("{:.1f} %", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string statistics_text(const CacheStatistics& statistics)
{
    const CacheCounters& c = statistics.counters;
    std::uint64_t hits = c.build_hits + c.load_hits, misses = c.build_misses + c.load_misses;
    return fmt::format(
        "hits:       {} ({} hit rate; build {}, runtime loads {})\n"
        "misses:     {} (build compiles {}, runtime compiles {})\n"
        "counted:    {}\n",
        hits, percent(hits, hits + misses), c.build_hits, c.load_hits, misses, c.build_misses, c.load_misses,
        statistics.since.empty() ? "since the cache began" : "since " + statistics.since);
}

int run_info(const CacheFlags& flags, Terminal& terminal)
{
    if (flags.zero) {
        CacheLocation location = locate(flags, true);
        zero_statistics(EntryStore(location.root));
        if (flags.json)
            terminal.result(util::json_text(nlohmann::json{{"root", location.root.string()}, {"zeroed", true}}, 2) +
                            "\n");
        else
            terminal.result(fmt::format("hit and miss counters of {} zeroed\n", location.root.string()));
        return 0;
    }
    CacheLocation location = locate(flags, false);
    auto entries = list_entries(EntryStore(location.root));
    CacheStatistics statistics = read_statistics(EntryStore(location.root));
    std::uint64_t bytes = 0;
    std::map<std::string, std::size_t> by_kind;
    std::map<std::string, std::uint64_t> bytes_by_kind;
    std::size_t superseded = 0;
    for (const auto& entry : entries) {
        bytes += entry.bytes;
        ++by_kind[entry.kind];
        bytes_by_kind[entry.kind] += entry.bytes;
        if (!entry.current) ++superseded;
    }
    if (flags.json) {
        nlohmann::json j{{"root", location.root.string()},
                         {"name", location.name},
                         {"entries", entries.size()},
                         {"bytes", bytes},
                         {"by_kind", by_kind},
                         {"bytes_by_kind", bytes_by_kind},
                         {"superseded", superseded},
                         {"statistics",
                          {{"build_hits", statistics.counters.build_hits},
                           {"build_misses", statistics.counters.build_misses},
                           {"load_hits", statistics.counters.load_hits},
                           {"load_misses", statistics.counters.load_misses},
                           {"since", statistics.since}}}};
        terminal.result(util::json_text(j, 2) + "\n");
        return 0;
    }
    std::string absent = root_exists(location) ? "" : " (does not exist: no build has written there)";
    std::string out = fmt::format("cache root: {}{}\nentries:    {} ({} superseded)\nsize:       {}\n",
                                  location.root.string(), absent, entries.size(), superseded, human_bytes(bytes));
    for (const auto& [kind, count] : by_kind)
        out += fmt::format("  {}: {} entries, {}\n", kind, count, human_bytes(bytes_by_kind[kind]));
    terminal.result(out + statistics_text(statistics));
    return 0;
}

int run_list(const CacheFlags& flags, Terminal& terminal)
{
    auto entries = list_entries(EntryStore(locate(flags, false).root));
    if (flags.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& entry : entries) list.push_back(entry_json(entry));
        terminal.result(util::json_text(list, 2) + "\n");
        return 0;
    }
    std::string out;
    for (const auto& entry : entries) {
        if (entry.manifest)
            out += fmt::format("{} {:<5} {:<10} {:<10} {:>10} {} {}\n", entry.key.substr(0, 12), entry.kind,
                               entry.manifest->target, entry_state(entry), human_bytes(entry.bytes),
                               entry.manifest->built_at, entry.manifest->module);
        else
            out += fmt::format("{} {:<12} unreadable: {}\n", entry.key.substr(0, 12), entry.kind, entry.problem);
    }
    terminal.result(out);
    return 0;
}

int run_verify(const CacheFlags& flags, Terminal& terminal)
{
    CacheLocation location = existing(locate(flags, false), "verify");
    if (flags.fix) location = locate(flags, true);  // where a build would write, as before
    std::size_t checked = 0;
    auto findings = verify_entries(EntryStore(location.root), flags.fix, &checked);
    bool unfixed = false;
    std::string out;
    for (const auto& finding : findings) {
        out += fmt::format("{}: {}{}\n", finding.entry.string(), finding.problem, finding.removed ? " (removed)" : "");
        unfixed = unfixed || !finding.removed;
    }
    out += fmt::format("{} of {} in {}\n", counted(findings.size(), "bad entry", "bad entries"), checked,
                       location.root.string());
    terminal.result(out);
    return unfixed ? 1 : 0;
}

int run_prune(const CacheFlags& flags, Terminal& terminal)
{
    if (!flags.max_age && !flags.max_size && !flags.superseded)
        throw UsageError("cache prune: give --max-age, --max-size, --superseded, or several");
    PruneOptions options;
    if (flags.max_age) options.max_age_seconds = parse_age(*flags.max_age);
    if (flags.max_size) options.max_bytes = parse_size(*flags.max_size);
    options.superseded = flags.superseded;
    options.dry_run = flags.dry_run;
    EntryStore store(locate(flags, !flags.dry_run).root);
    std::size_t before = list_entries(store).size();
    auto removed = prune_entries(store, options);
    if (!flags.dry_run) {
        int leftovers = remove_lock_leftovers(store);
        if (leftovers) terminal.note(fmt::format("removed {} lock files left by stopped builders", leftovers), 1);
    }
    std::uint64_t bytes = 0;
    std::string out;
    const char* verb = flags.dry_run ? "would remove" : "removed";
    for (const auto& entry : removed) {
        bytes += entry.bytes;
        std::string line = fmt::format("{} {} ({} {}, {}, {})", verb, entry.dir.string(), entry.kind,
                                       entry.manifest ? entry.manifest->module : "unreadable", entry_state(entry),
                                       human_bytes(entry.bytes));
        // A dry run exists to show the list: it goes to stdout, not behind -v.
        if (flags.dry_run)
            out += line + "\n";
        else
            terminal.note(line, 1);
    }
    out += fmt::format("{} {} entries, {}; {} of {} entries left\n", verb, removed.size(), human_bytes(bytes),
                       before - removed.size(), before);
    terminal.result(out);
    return 0;
}

// The current artifacts of one kernel: what `build` would hit now, planned as
// `build --dry-run` plans (same keys), for scripts and other loaders.
int run_path(const CacheFlags& flags, Terminal& terminal)
{
    BuildRequest request;
    request.paths = {flags.tree};
    request.config = load_config(flags.tree);
    if (flags.cache_dir) request.config.cache_dir = fs::path(*flags.cache_dir);
    if (flags.cache_name) request.config.cache_name = *flags.cache_name;
    if (flags.compiler) request.config.compiler = parse_compiler_kind(*flags.compiler, "--compiler");
    if (flags.python) request.config.python = *flags.python;
    if (flags.cunumpy_include_dir)
        request.config.cunumpy_include_dir = existing_dir(*flags.cunumpy_include_dir, "--cunumpy-include-dir");
    if (flags.target) select_one_target(request.config, *flags.target, "cache path: --arch");
    request.dry_run = true;
    request.host = false;
    BuildReport report = run_build(request);
    const std::string& name = flags.kernel;
    auto is_named = [&](const JobResult& job) {
        return job.kernel == name || job.module == name ||
               (job.module.size() > name.size() &&
                job.module.compare(job.module.size() - name.size(), name.size(), name) == 0 &&
                job.module[job.module.size() - name.size() - 1] == '.');
    };
    std::string out;
    int matched = 0, missing = 0;
    for (const auto& job : report.jobs) {
        if (!is_named(job) || (flags.target && job.target != *flags.target)) continue;
        ++matched;
        if (job.state == JobState::hit && !job.artifacts.empty()) {
            out += job.artifacts.front().string() + "\n";
            continue;
        }
        ++missing;
        terminal.note(fmt::format("{} [{}]: no current artifact ({}); run cunumpy-kernels build", job.module,
                                  job.target, job.reason.empty() ? "not built" : job.reason));
    }
    if (matched == 0)
        throw UsageError("cache path: no CUDA kernel '" + name + "'" +
                         (flags.target ? " with target " + *flags.target : "") + " in " + flags.tree +
                         " (a kernel name, or its dotted module)");
    terminal.result(out);
    return missing == 0 ? 0 : 1;
}

int run_export(const CacheFlags& flags, Terminal& terminal)
{
    auto summary = export_entries(EntryStore(existing(locate(flags, false), "export").root), flags.archive);
    for (const auto& left : summary.left_out)
        terminal.note(fmt::format("not exported: {}: {}", left.entry.string(), left.reason));
    terminal.result(fmt::format("exported {} entries ({}) to {}; left out {}\n", summary.entries,
                                human_bytes(summary.bytes), flags.archive, summary.skipped));
    return 0;
}

int run_import(const CacheFlags& flags, Terminal& terminal)
{
    if (auto mask = load_config(flags.tree).umask) ::umask(static_cast<mode_t>(*mask));  // as build writes entries
    // Read and checked first: a bad archive leaves no cache folder behind.
    CheckedArchive archive = read_archive(flags.archive);
    CacheLocation location = locate(flags, true);
    auto summary = import_entries(EntryStore(location.root), archive);
    terminal.result(fmt::format("imported {} entries ({}) into {}; {} already present\n", summary.entries,
                                human_bytes(summary.bytes), location.root.string(), summary.skipped));
    return 0;
}

// What build --in-place wrote below the tree, and nothing else.
int run_clean_in_place(const CacheFlags& flags, Terminal& terminal)
{
    auto removed = clean_in_place({flags.tree}, flags.dry_run);
    if (terminal.verbosity() > 0 || flags.dry_run)
        for (const auto& file : removed)
            terminal.result((flags.dry_run ? "would remove " : "removed ") + file.string() + "\n");
    terminal.result(fmt::format("{} {} in-place files below {}\n", flags.dry_run ? "would remove" : "removed",
                                removed.size(), flags.tree));
    return 0;
}

// Everything, or with --tree the entries built from that tree's modules.
int run_clean(const CacheFlags& flags, Terminal& terminal)
{
    if (flags.in_place) return run_clean_in_place(flags, terminal);
    CacheLocation location = locate(flags, !flags.dry_run);
    std::set<std::string> modules;
    if (flags.tree_given) {
        Config config = load_config(flags.tree);
        modules = tree_modules(flags.tree, config);
        if (modules.empty())
            throw UsageError("cache clean: no kernels in " + flags.tree +
                             "; without --tree, clean removes every entry");
    }
    CleanSummary summary = clean_entries(EntryStore(location.root), modules, flags.dry_run);
    if (flags.dry_run) {
        std::string out;
        for (const auto& dir : summary.removed) out += "would remove " + dir.string() + "\n";
        terminal.result(out + fmt::format("would remove {} entries ({}) from {}\n", summary.entries,
                                          human_bytes(summary.bytes), location.root.string()));
        return 0;
    }
    if (summary.lock_leftovers)
        terminal.note(fmt::format("removed {} lock files left by stopped builders", summary.lock_leftovers), 1);
    terminal.result(fmt::format("removed {} entries ({}) and {} records from {}{}\n", summary.entries,
                                human_bytes(summary.bytes), summary.records, location.root.string(),
                                flags.tree_given ? " built from " + flags.tree : ""));
    return 0;
}

using CacheRunner = int (*)(const CacheFlags&, Terminal&);

struct CacheCommand {
    const char* name;
    const char* help;
    CacheRunner run;
};

const CacheCommand cache_commands[] = {
    {"dir", "Print the cache root", run_dir},
    {"info", "Entries, size, and hits and misses since --zero", run_info},
    {"list", "One line per entry: key, kind, target, state, size, build time, kernel", run_list},
    {"verify", "Check every entry's manifest, key and artifact checksums", run_verify},
    {"prune", "Remove superseded entries, then the least recently used, by age or to a size", run_prune},
    {"export", "Write every sound CUDA entry to a .tar.zst archive", run_export},
    {"import", "Publish the entries of an exported archive that the cache lacks", run_import},
    {"path", "Print the current cubin or PTX of a kernel (exit 1 when missing or stale)", run_path},
    {"clean", "Remove every entry, or with --tree those built from that tree; --in-place: what build --in-place wrote",
     run_clean},
};

void add_location_flags(CLI::App& command, CacheFlags& flags)
{
    command.add_option("--cache-dir", flags.cache_dir, "Cache root")->check(non_empty_path());
    command.add_option("--cache-name", flags.cache_name,
                       "PyccelCache name (root from $<NAME>_KERNEL_CACHE or ~/.cache/<name>/kernels)");
    command.add_option("--tree", flags.tree, "Kernel tree whose cache is meant (default: .)")->check(non_empty_path());
}

}  // namespace

CommandRunner setup_cache(CLI::App& command)
{
    auto flags = std::make_shared<CacheFlags>();
    command.require_subcommand(1);
    std::vector<std::pair<CLI::App*, CacheRunner>> runners;
    for (const auto& spec : cache_commands) {
        CLI::App* sub = command.add_subcommand(spec.name, spec.help);
        add_location_flags(*sub, *flags);
        std::string name = spec.name;
        if (name == "info" || name == "list") sub->add_flag("--json", flags->json, "JSON on stdout");
        if (name == "info") sub->add_flag("-z,--zero", flags->zero, "Zero the hit and miss counters");
        if (name == "verify") sub->add_flag("--fix", flags->fix, "Remove bad entries (the next build rebuilds them)");
        if (name == "prune") {
            sub->add_option("--max-age", flags->max_age,
                            "Remove entries not used or built for longer than this (30d, 12h, 45m, 90s)");
            sub->add_option("--max-size", flags->max_size,
                            "Then remove superseded entries, then the least recently used, until the cache is under "
                            "this size (500M, 2G)");
            sub->add_flag("--superseded", flags->superseded, "Remove every entry that is no kernel's current build");
            sub->add_flag("-n,--dry-run", flags->dry_run, "List what would be removed");
        }
        if (name == "export" || name == "import")
            sub->add_option("archive", flags->archive, "The .tar.zst file")->required();
        if (name == "path") {
            sub->add_option("kernel", flags->kernel, "Kernel name, or its dotted module")->required();
            sub->add_option("--arch", flags->target,
                            "One target: sm_90 (cubin) or compute_90 (PTX); default: the tree's targets");
            sub->add_option("--compiler", flags->compiler, "nvrtc (default) or nvcc: whose build is meant");
            sub->add_option("--python", flags->python,
                            "Python interpreter that locates cunumpy's headers, as given to build (default python3)");
            sub->add_option("--cunumpy-include-dir", flags->cunumpy_include_dir,
                            "cunumpy's CUDA header folder, as given to build (skips the Python probe)");
        }
        if (name == "clean") {
            sub->add_flag(
                "--in-place", flags->in_place,
                "Remove the files build --in-place wrote below --tree (another tool's builds stay); not the cache");
            sub->add_flag("-n,--dry-run", flags->dry_run, "List what would be removed");
        }
        runners.emplace_back(sub, spec.run);
    }
    return [flags, runners](Terminal& terminal) {
        for (const auto& [sub, run] : runners) {
            if (!sub->parsed()) continue;
            flags->tree_given = sub->count("--tree") > 0;
            return run(*flags, terminal);
        }
        throw UsageError("cache: name a subcommand (dir, info, list, verify, prune, export, import, path, clean)");
    };
}

}  // namespace ck::cli
