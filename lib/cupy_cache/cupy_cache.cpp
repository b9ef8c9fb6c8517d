#include "cupy_cache/cupy_cache.hpp"
#include "util/json_text.hpp"

#include "compilers/compiler_scratch.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cupy_cache_script.hpp"
#include "util/file_util.hpp"
#include "util/subprocess.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <thread>

namespace ck {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json kernel_json(const CupyKernel& kernel)
{
    json dirs = json::array();
    for (const auto& dir : kernel.include_dirs) dirs.push_back(dir.string());
    json result = {{"module", kernel.module},
                   {"name", kernel.name},
                   {"cuda_file", kernel.cuda_file.string()},
                   {"include_dirs", dirs},
                   {"options", kernel.options}};
    if (!kernel.template_args.empty()) result["template_args"] = kernel.template_args;
    return result;
}

CupyEntryState state_of(const std::string& text)
{
    if (text == "hit") return CupyEntryState::hit;
    if (text == "built") return CupyEntryState::built;
    if (text == "missing") return CupyEntryState::missing;
    return CupyEntryState::failed;
}

// One child's share: its request file, its result file, what it printed.
struct Share {
    std::vector<std::size_t> jobs;
    fs::path request;
    fs::path result;
    util::ProcessResult process;
};

void run_share(Share& share, const fs::path& python, const util::EnvironmentOverrides& environment)
{
    try {
        share.process = util::run_process(
            {python.string(), "-c", cupy_cache_script, share.request.string(), share.result.string()}, {}, environment);
    } catch (const ToolchainError& error) {
        share.process = {127, error.what()};
    }
}

std::string child_failure(const Share& share, const fs::path& python)
{
    std::string output = share.process.output;
    while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
    return python.string() + " stopped (exit status " + std::to_string(share.process.exit_code) +
           ") before reporting: " + (output.empty() ? "no output" : output);
}

// Reads one child's report into `run`; entries it does not report stay failed
// with what the child printed.
void read_share(const Share& share, const fs::path& python, CupyCacheRun& run)
{
    json report;
    try {
        report = util::parse_json(util::read_file(share.result));
    } catch (const std::exception&) {
        for (std::size_t job : share.jobs) run.entries[job].message = child_failure(share, python);
        return;
    }
    CupyInstallation& installation = run.installation;
    installation.unavailable = report.value("unavailable", installation.unavailable);
    installation.cupy_version = report.value("cupy_version", installation.cupy_version);
    installation.cupy_dir = report.value("cupy_dir", installation.cupy_dir.string());
    installation.nvrtc_version = report.value("nvrtc_version", installation.nvrtc_version);
    installation.cache_dir = report.value("cache_dir", installation.cache_dir.string());
    for (const auto& result : report.value("results", json::array())) {
        std::size_t job = result.at("job").get<std::size_t>();
        if (job >= run.entries.size()) continue;
        CupyEntry& entry = run.entries[job];
        entry.state = state_of(result.value("state", ""));
        entry.file = result.value("file", "");
        entry.seconds = result.value("seconds", 0.0);
        entry.message = result.value("message", "");
    }
}

}  // namespace

std::string CupyInstallation::description() const
{
    if (cupy_version.empty() || !unavailable.empty()) return "";
    return "CuPy " + cupy_version + " in " + cupy_dir.string() + ", NVRTC " + nvrtc_version + "; " + cache_dir.string();
}

json to_json(const CupyInstallation& installation)
{
    return {{"unavailable", installation.unavailable},
            {"cupy_version", installation.cupy_version},
            {"cupy_dir", installation.cupy_dir.string()},
            {"nvrtc_version", installation.nvrtc_version},
            {"cache_dir", installation.cache_dir.string()}};
}

std::vector<std::string> cupy_architectures(const std::vector<std::string>& targets)
{
    std::vector<std::string> architectures;
    for (const auto& target : targets) {
        auto underscore = target.find('_');
        if (underscore == std::string::npos) continue;
        // sm_90a and sm_100f build for the device of capability 90 and 100: CuPy's number.
        std::string capability = target.substr(underscore + 1);
        while (!capability.empty() && !std::isdigit(static_cast<unsigned char>(capability.back())))
            capability.pop_back();
        if (capability.empty()) continue;
        if (std::find(architectures.begin(), architectures.end(), capability) == architectures.end())
            architectures.push_back(capability);
    }
    return architectures;
}

CupyCacheRun run_cupy_cache(const CupyCacheRequest& request, const std::vector<CupyKernel>& kernels)
{
    CupyCacheRun run;
    for (std::size_t k = 0; k < kernels.size(); ++k)
        for (const auto& architecture : request.architectures) {
            CupyEntry entry;
            entry.kernel = k;
            entry.architecture = architecture;
            run.entries.push_back(std::move(entry));
        }
    if (run.entries.empty()) return run;
    fs::path python = util::find_in_path(request.python);
    if (python.empty()) {
        run.installation.unavailable = "no Python interpreter '" + request.python +
                                       "' (set --python or the `python` key to the one with CuPy and cunumpy)";
        return run;
    }

    json kernel_list = json::array();
    for (const auto& kernel : kernels) kernel_list.push_back(kernel_json(kernel));
    std::size_t processes =
        std::clamp<std::size_t>(static_cast<std::size_t>(std::max(request.processes, 1)), 1, run.entries.size());
    CompilerScratch scratch;
    std::vector<Share> shares(processes);
    for (std::size_t job = 0; job < run.entries.size(); ++job) shares[job % processes].jobs.push_back(job);
    for (std::size_t i = 0; i < processes; ++i) {
        json jobs = json::array();
        for (std::size_t job : shares[i].jobs)
            jobs.push_back({{"id", job}, {"kernel", run.entries[job].kernel}, {"arch", run.entries[job].architecture}});
        shares[i].request = scratch.path() / ("request-" + std::to_string(i) + ".json");
        shares[i].result = scratch.path() / ("result-" + std::to_string(i) + ".json");
        util::write_file(shares[i].request,
                         util::json_text(json{{"probe", request.probe}, {"kernels", kernel_list}, {"jobs", jobs}}));
    }

    util::EnvironmentOverrides environment;
    if (request.cache_dir) environment.emplace_back("CUPY_CACHE_DIR", fs::absolute(*request.cache_dir).string());
    std::vector<std::thread> threads;
    for (auto& share : shares)
        threads.emplace_back([&share, &python, &environment] { run_share(share, python, environment); });
    for (auto& thread : threads) thread.join();
    for (const auto& share : shares) read_share(share, python, run);
    return run;
}

}  // namespace ck
