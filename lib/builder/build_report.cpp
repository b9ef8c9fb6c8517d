// A build's report: job states, counts, and the JSON of `build --json`.
#include "builder/build.hpp"

#include <algorithm>

namespace ck {

bool BuildReport::ok() const { return count(JobState::failed) == 0 && (!cupy || cupy->unavailable.empty()); }

std::size_t BuildReport::count(JobState state) const
{
    return static_cast<std::size_t>(
        std::count_if(jobs.begin(), jobs.end(), [state](const JobResult& job) { return job.state == state; }));
}

nlohmann::json to_json(const BuildReport& report)
{
    using nlohmann::json;
    json kernels = json::array();
    for (const auto& kernel : report.kernels) {
        json host = json::array();
        for (const auto& h : kernel.host) host.push_back({{"kind", h.kind}, {"file", h.file.string()}});
        kernels.push_back({{"module", kernel.module},
                           {"name", kernel.name},
                           {"folder", kernel.folder.string()},
                           {"host", host},
                           {"cuda", kernel.cuda_file ? json(kernel.cuda_file->string()) : json(nullptr)}});
    }
    json jobs = json::array();
    for (const auto& job : report.jobs) {
        json artifacts = json::array();
        for (const auto& a : job.artifacts) artifacts.push_back(a.string());
        json entry = {{"module", job.module},        {"kernel", job.kernel},   {"kind", job.kind},
                      {"target", job.target},        {"key", job.key},         {"state", to_string(job.state)},
                      {"entry", job.entry.string()}, {"artifacts", artifacts}, {"seconds", job.seconds},
                      {"phases", job.phases},        {"reason", job.reason},   {"log", job.log}};
        if (job.target == "host") {
            entry["host_module"] = job.host_module;
            entry["cunumpy_entry"] = job.cunumpy_entry.string();
            if (!job.cunumpy_name_problem.empty()) entry["cunumpy_name_problem"] = job.cunumpy_name_problem;
            if (!job.foreign.empty()) entry["foreign"] = job.foreign;
        }
        jobs.push_back(std::move(entry));
    }
    json result = {{"ok", report.ok()},
                   {"seconds", report.seconds},
                   {"summary",
                    {{"kernels", report.kernels.size()},
                     {"hit", report.count(JobState::hit)},
                     {"built", report.count(JobState::built)},
                     {"failed", report.count(JobState::failed)},
                     {"would_build", report.count(JobState::would_build)}}},
                   {"warnings", report.warnings},
                   {"kernels", kernels},
                   {"jobs", jobs}};
    const ScheduleReport& schedule = report.schedule;
    result["schedule"] = {{"workers", schedule.workers},
                          {"jobs", schedule.jobs},
                          {"plan_seconds", schedule.plan_seconds},
                          {"wall_seconds", schedule.wall_seconds},
                          {"job_seconds", schedule.job_seconds},
                          {"longest_path_seconds", schedule.longest_path_seconds},
                          {"bound_seconds", schedule.bound_seconds()}};
    if (report.cupy) result["cupy"] = to_json(*report.cupy);
    return result;
}

}  // namespace ck
