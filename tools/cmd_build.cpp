// `cunumpy-kernels build`: flags in, run_build, progress and report out.
#include "commands.hpp"
#include "util/json_text.hpp"
#include "target_options.hpp"
#include "tree_options.hpp"

#include "builder/build.hpp"
#include "compilers/cuda_compiler.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/elapsed.hpp"
#include "util/subprocess.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <sstream>

namespace ck::cli {

namespace {

struct BuildFlags {
    TreeOptions tree;
    std::optional<int> jobs;
    TargetOptions targets;
    bool dry_run = false;
    bool json = false;
    std::optional<std::string> only;
    bool replace_foreign = false;
    bool cupy_cache = false;
    std::optional<std::string> cupy_cache_dir;
};

bool asks_cupy(const BuildFlags& flags) { return flags.cupy_cache || flags.cupy_cache_dir || flags.only == "cupy"; }

Config build_config(const BuildFlags& flags)
{
    Config config = flags.tree.resolve();
    flags.targets.apply(config);
    if (flags.jobs) {
        if (*flags.jobs < 1) throw UsageError("--jobs: expected a positive number, got " + std::to_string(*flags.jobs));
        config.jobs = flags.jobs;
    }
    return config;
}

std::string label(const JobResult& job)
{
    return job.module + " [" + (job.kind == "cupy" ? "cupy:" : "") + job.target + "]";
}

// Lock breaks, printed when they happen, with --json too: a batch job's log
// read while the build runs says at once that a holder was found gone. The
// warnings printed at the end leave them out.
class LockBreakLog : public BuildObserver {
public:
    void lock_broken(const std::string& message) override
    {
        spdlog::warn("{}", message);
        spdlog::default_logger()->flush();
        printed_.insert(message);
    }

    bool printed(const std::string& warning) const { return printed_.count(warning) > 0; }

private:
    std::set<std::string> printed_;
};

// Progress: a live line on a terminal, one line per finished compile off it.
class BuildDisplay : public LockBreakLog {
public:
    BuildDisplay(Terminal& terminal, bool dry_run) : terminal_(terminal), dry_run_(dry_run) {}

    void lock_broken(const std::string& message) override
    {
        terminal_.clear_progress();
        LockBreakLog::lock_broken(message);
    }

    void planned(std::size_t jobs, std::size_t misses) override
    {
        total_ = jobs;
        if (!dry_run_ && misses > 0) terminal_.note(fmt::format("{} jobs, {} to compile", jobs, misses), 1);
    }

    void started(const JobResult& job) override
    {
        current_ = label(job);
        show();
    }

    void finished(const JobResult& job) override
    {
        ++done_;
        total_ = std::max(total_, done_);  // CuPy's jobs are known only once its child reports
        switch (job.state) {
            case JobState::hit:
                terminal_.note(fmt::format("cached  {}", label(job)), 1);
                break;
            case JobState::built:
                terminal_.note(fmt::format("{}   {} ({:.2f} s{})", terminal_.green("built"), label(job), job.seconds,
                                           job.reason == "no entry" ? "" : ", " + job.reason),
                               terminal_.interactive() ? 1 : 0);
                break;
            case JobState::failed:
                // Its compiler died of this build's own stop (SIGTERM, Ctrl-C):
                // nothing failed, and the signal ends the process next.
                if (util::stop_requested()) break;
                terminal_.note(fmt::format("{}  {}\n{}", terminal_.red("failed"), label(job), job.log), -1);
                break;
            case JobState::would_build:
                break;
        }
        show();
    }

    // Who holds a lock matters to someone watching, not to a log.
    void waiting(const std::string& message) override
    {
        if (terminal_.interactive()) terminal_.note(message);
    }

private:
    void show()
    {
        double elapsed = util::seconds_since(start_);
        terminal_.progress(fmt::format("[{}/{}] {} ({:.1f} s)", done_, total_, current_, elapsed));
    }

    Terminal& terminal_;
    bool dry_run_;
    std::size_t total_ = 0;
    std::size_t done_ = 0;
    std::string current_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// "CUDA toolkit: /usr/local/cuda (found by $CUDA_PATH)": the toolkit that
// compiles, which cunumpy's ranks must load from.
std::string toolkit_line(const Config& config)
{
    CudaToolkit toolkit = find_cuda_toolkit(config);
    return "CUDA toolkit: " + toolkit.root.string() + " (found by " + toolkit.found_by + ")\n";
}

std::string dry_run_text(const BuildReport& report, const Config& config, bool cuda)
{
    std::string out = cuda ? toolkit_line(config) : "";
    for (const auto& job : report.jobs)
        if (job.state == JobState::would_build) out += fmt::format("would build {}: {}\n", label(job), job.reason);
    out += fmt::format("{} to build, {} cached", report.count(JobState::would_build), report.count(JobState::hit));
    if (std::size_t failed = report.count(JobState::failed)) out += fmt::format(", {} failed", failed);
    return out + "\n";
}

void print_summary(Terminal& terminal, const BuildReport& report)
{
    std::size_t ported = 0;
    for (const auto& kernel : report.kernels) ported += kernel.cuda_file ? 1 : 0;
    std::size_t host = static_cast<std::size_t>(std::count_if(
        report.jobs.begin(), report.jobs.end(), [](const JobResult& job) { return job.target == "host"; }));
    std::string host_part = host == 0 ? "" : ", " + counted(host, "host module");
    std::string line =
        fmt::format("{} ({} with CUDA{}): {} built, {} cached, {} failed in {:.2f} s\n",
                    counted(report.kernels.size(), "kernel"), ported, host_part, report.count(JobState::built),
                    report.count(JobState::hit), report.count(JobState::failed), report.seconds);
    if (report.cupy && !report.cupy->description().empty()) {
        auto cupy = [&](JobState state) {
            return std::count_if(report.jobs.begin(), report.jobs.end(),
                                 [&](const JobResult& job) { return job.kind == "cupy" && job.state == state; });
        };
        line += fmt::format("CuPy's kernel cache ({}): {} built, {} cached, {} failed\n", report.cupy->description(),
                            cupy(JobState::built), cupy(JobState::hit), cupy(JobState::failed));
    }
    if (terminal.verbosity() >= 0 || !report.ok()) terminal.result(report.ok() ? line : terminal.red(line));
}

void note_schedule(Terminal& terminal, const ScheduleReport& schedule)
{
    if (schedule.jobs == 0) return;
    terminal.note(fmt::format("schedule: {} in {:.2f} s on {} (jobs {:.2f} s in all, longest chain {:.2f} s, "
                              "the list-scheduler bound it stays under {:.2f} s); planning {:.3f} s",
                              counted(schedule.jobs, "compiler run"), schedule.wall_seconds,
                              counted(static_cast<std::size_t>(schedule.workers), "worker"), schedule.job_seconds,
                              schedule.longest_path_seconds, schedule.bound_seconds(), schedule.plan_seconds),
                  1);
}

int run_build_command(const BuildFlags& flags, Terminal& terminal)
{
    BuildRequest request;
    request.paths = flags.tree.path_list();
    request.config = build_config(flags);
    // The process's mask decides the mode of every entry and folder written: the tool sets it, the library never.
    if (request.config.umask) ::umask(static_cast<mode_t>(*request.config.umask));
    request.dry_run = flags.dry_run;
    request.host = flags.only.value_or("host") == "host";
    request.cuda = flags.only.value_or("cuda") == "cuda";
    request.cupy = asks_cupy(flags);
    if (flags.cupy_cache_dir) request.cupy_cache_dir = std::filesystem::path(*flags.cupy_cache_dir);
    request.replace_foreign = flags.replace_foreign;
    if (flags.replace_foreign && !request.config.in_place)
        throw UsageError("--replace-foreign replaces in-place builds of other tools: add --in-place");
    BuildDisplay display(terminal, flags.dry_run);
    LockBreakLog lock_breaks;
    LockBreakLog& log = flags.json ? lock_breaks : display;
    BuildReport report = run_build(request, &log);
    terminal.clear_progress();
    for (const auto& warning : report.warnings)
        if (!log.printed(warning)) spdlog::warn("{}", warning);
    if (flags.json) {
        terminal.result(util::json_text(to_json(report), 2) + "\n");
    } else if (flags.dry_run) {
        terminal.result(dry_run_text(report, request.config, request.cuda));
    } else {
        print_summary(terminal, report);
        note_schedule(terminal, report.schedule);
    }
    return report.ok() ? 0 : 1;
}

}  // namespace

CommandRunner setup_build(CLI::App& command)
{
    auto flags = std::make_shared<BuildFlags>();
    flags->tree.add_to(command);
    command.add_option("-j,--jobs", flags->jobs, "Parallel compilations (default: number of cores)");
    flags->targets.add_to(command);
    command.add_flag("-n,--dry-run", flags->dry_run, "List what would compile and why; compile nothing");
    command.add_flag("--json", flags->json, "Print one JSON report on stdout");
    command
        .add_option("--only", flags->only,
                    "Build only the host (Pyccel) kernels, only the CUDA kernels, or only CuPy's cache entries (cupy); "
                    "--cupy-cache adds CuPy's to host or cuda")
        ->check(CLI::IsMember({"host", "cuda", "cupy"}));
    command.add_flag("--cupy-cache", flags->cupy_cache,
                     "Also fill CuPy's kernel cache as cunumpy's first call of each CUDA kernel would (needs CuPy and "
                     "cunumpy in --python; no GPU)");
    command
        .add_option("--cupy-cache-dir", flags->cupy_cache_dir,
                    "CuPy's cache folder to fill (implies --cupy-cache; default: $CUPY_CACHE_DIR, else "
                    "~/.cupy/kernel_cache)")
        ->check(non_empty_path());
    command.add_flag(
        "--replace-foreign", flags->replace_foreign,
        "With --in-place: also rebuild in-place modules another tool built, even when newer than their sources");
    return [flags](Terminal& terminal) { return run_build_command(*flags, terminal); };
}

}  // namespace ck::cli
