// `cunumpy-kernels status`: the porting line, one row per kernel, and the CI
// gates.
#include "commands.hpp"
#include "path_display.hpp"
#include "status_bundle.hpp"
#include "target_options.hpp"
#include "tree_options.hpp"

#include "file_access_log.hpp"

#include "cunumpy_kernels/error.hpp"
#include "status/status.hpp"
#include "status/status_record.hpp"

#include <fmt/format.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

namespace ck::cli {

namespace {

struct StatusFlags {
    TreeOptions tree;
    TargetOptions targets;
    StatusGates gates;
    bool json = false;
    std::optional<std::string> only;
    bool cupy_cache = false;
    std::optional<std::string> cupy_cache_dir;
    std::optional<std::string> bundle;
};

// --bundle compares a bundle's keys for the bundle's targets: flags that
// choose targets or other reports would be silently ignored, so they are refused.
void refuse_with_bundle(const StatusFlags& flags)
{
    const TargetFlags& t = flags.targets;
    bool other = !t.architectures.empty() || t.ptx || t.no_ptx || t.compiler || !t.options.empty() || flags.only ||
                 flags.cupy_cache || flags.cupy_cache_dir || flags.gates.require_cuda ||
                 flags.gates.require_built || flags.gates.check_signatures;
    if (other)
        throw UsageError("--bundle: the bundle names its targets, compiler and compiler options and is one gate of its "
                         "own; --arch, --ptx, --no-ptx, --compiler, --compiler-option, --only, --cupy-cache, "
                         "--cupy-cache-dir, --require-cuda, --require-built and --check-signatures do not apply to it");
}

std::string host_kinds(const KernelSource& kernel)
{
    std::string kinds;
    for (const auto& host : kernel.host)
        if (kinds.find(host.kind) == std::string::npos) kinds += (kinds.empty() ? "" : "+") + host.kind;
    return kinds;
}

// Long reasons (a compiler not probed yet, an interpreter that cannot be
// reached) tend to hold for every row: each is printed once, under the
// table, and the rows refer to it by number.
class Footnotes {
public:
    std::string refer(const std::string& reason)
    {
        constexpr std::size_t inline_limit = 60;
        if (reason.size() <= inline_limit && reason.find('\n') == std::string::npos) return reason;
        auto it = std::find(notes_.begin(), notes_.end(), reason);
        if (it == notes_.end()) it = notes_.insert(notes_.end(), reason);
        return "see [" + std::to_string(it - notes_.begin() + 1) + "]";
    }

    std::string text() const
    {
        std::string out;
        for (std::size_t i = 0; i < notes_.size(); ++i) out += "[" + std::to_string(i + 1) + "] " + notes_[i] + "\n";
        return out.empty() ? out : "\n" + out;
    }

private:
    std::vector<std::string> notes_;
};

// "sm_90" for a cubin, "host" for a host module in the cache, "in-place" for
// one beside its source.
std::string target_label(const ArtifactStatus& artifact)
{
    if (artifact.kind == "cuda" || artifact.kind == artifact.target) return artifact.target;
    return artifact.kind + ":" + artifact.target;
}

// Artifacts grouped by state and reason: "built: sm_80, sm_90" reads better
// than three rows that say the same.
std::string artifacts_cell(const KernelStatus& status, const Terminal& terminal, Footnotes& notes)
{
    std::vector<std::pair<std::string, std::string>> groups;
    for (const auto& a : status.artifacts) {
        std::string head = to_string(a.state);
        if (!a.reason.empty()) head += " (" + notes.refer(a.reason) + ")";
        std::string label = target_label(a);
        auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == head; });
        if (it == groups.end())
            groups.emplace_back(head, label);
        else
            it->second += ", " + label;
    }
    std::string cell;
    for (const auto& [head, labels] : groups) {
        std::string text = head + ": " + labels;
        cell += (cell.empty() ? "" : "; ") + (head.rfind("built", 0) == 0 ? terminal.green(text) : terminal.yellow(text));
    }
    return cell.empty() ? "-" : cell;
}

std::string table(const StatusReport& report, const Terminal& terminal)
{
    Footnotes notes;
    std::vector<std::array<std::string, 5>> rows = {{"kernel", "host", "CUDA", "signatures", "artifacts"}};
    for (const auto& k : report.kernels)
        rows.push_back({k.kernel.module, host_kinds(k.kernel), k.kernel.cuda_file ? "yes" : "no",
                        to_string(k.signatures.agreement()), artifacts_cell(k, terminal, notes)});
    std::array<std::size_t, 4> width{};
    for (const auto& row : rows)
        for (std::size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
    std::string out;
    for (const auto& row : rows)
        out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", row[0], width[0], row[1], width[1], row[2], width[2],
                           row[3], width[3], row[4]);
    return out + notes.text();
}

// `text` with every line after the first starting with `indent`.
std::string indented(const std::string& text, const std::string& indent)
{
    std::string out;
    for (char c : text) out += c == '\n' ? "\n" + indent : std::string(1, c);
    return out;
}

// In place: one line of counts for the modules kernels import, then a line
// for each that is not built.
std::string modules_lines(const StatusReport& report, const Terminal& terminal)
{
    if (report.modules.empty()) return "";
    std::map<std::string, std::size_t> counts;
    std::string details;
    for (const auto& m : report.modules) {
        ++counts[to_string(m.artifact.state)];
        if (m.artifact.state == ArtifactState::built) continue;
        std::string reason = m.artifact.reason.empty() ? "" : " (" + indented(m.artifact.reason, "    ") + ")";
        details += "  " + m.module + ": " + terminal.yellow(to_string(m.artifact.state) + reason) + "\n";
    }
    std::string line;
    for (const auto& [state, n] : counts) line += (line.empty() ? "" : ", ") + std::to_string(n) + " " + state;
    return "\nother modules built in place: " + line + "\n" + details;
}

void print_logs(const std::vector<std::pair<int, std::string>>& logs)
{
    for (const auto& [level, message] : logs) spdlog::log(static_cast<spdlog::level::level_enum>(level), "{}", message);
}

bool asks_cupy(const StatusFlags& flags)
{
    return flags.cupy_cache || flags.cupy_cache_dir || flags.only == "cupy";
}

// CUNUMPY_KERNELS_STATUS_RECORD: unset or "on", "off" (never read or write
// the record), "check" (plan afresh on every recorded answer, and fail when
// the two differ: for tests of the record itself).
enum class RecordUse { on, off, check };

RecordUse record_use()
{
    const char* value = std::getenv("CUNUMPY_KERNELS_STATUS_RECORD");
    std::string v = value ? value : "on";
    if (v == "on" || v.empty()) return RecordUse::on;
    if (v == "off") return RecordUse::off;
    if (v == "check") return RecordUse::check;
    throw UsageError("CUNUMPY_KERNELS_STATUS_RECORD=" + v + ": expected on, off or check");
}

// Everything an answer depends on besides what the file access log sees:
// this build of the tool, the command line, the working folder (relative
// paths, and how paths are shown), who asks (file modes decide what may be
// read), and how the terminal shows it.
std::string status_key(const CommandLine& line, const Terminal& terminal)
{
    std::string key = std::string("cunumpy-kernels ") + CUNUMPY_KERNELS_VERSION + "\n";
    struct stat tool {};
    if (::stat("/proc/self/exe", &tool) == 0)
        key += fmt::format("{} {} {} {}.{}\n", tool.st_dev, tool.st_ino, tool.st_size, tool.st_mtim.tv_sec,
                           tool.st_mtim.tv_nsec);
    char cwd[PATH_MAX];
    key += std::string(::getcwd(cwd, sizeof cwd) ? cwd : "?") + "\n";
    key += fmt::format("{} {}", ::geteuid(), ::getegid());
    std::vector<gid_t> groups(static_cast<std::size_t>(std::max(::getgroups(0, nullptr), 0)));
    groups.resize(static_cast<std::size_t>(std::max(::getgroups(static_cast<int>(groups.size()), groups.data()), 0)));
    for (gid_t g : groups) key += fmt::format(" {}", g);
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct capabilities[2]{};
    if (::syscall(SYS_capget, &header, capabilities) == 0)
        key += fmt::format(" caps {:x} {:x}", capabilities[0].effective, capabilities[1].effective);
    key += fmt::format("\n{} {} {}\n", terminal.colored(), terminal.interactive(), terminal.verbosity());
    for (const auto& word : line) key += word + '\0';
    return key;
}

// Holds back what is logged while a status plans, so that a recorded answer
// prints the same messages; a plan that throws prints them at once.
class LogCapture {
public:
    LogCapture() : sink_(std::make_shared<Sink>()), logger_(spdlog::default_logger())
    {
        std::swap(logger_->sinks(), held_);
        logger_->sinks().push_back(sink_);
    }
    ~LogCapture()
    {
        if (!finished_) print_logs(finish());
    }
    LogCapture(const LogCapture&) = delete;
    LogCapture& operator=(const LogCapture&) = delete;

    std::vector<std::pair<int, std::string>> finish()
    {
        finished_ = true;
        std::swap(logger_->sinks(), held_);
        return sink_->take();
    }

private:
    class Sink : public spdlog::sinks::base_sink<std::mutex> {
    public:
        std::vector<std::pair<int, std::string>> take()
        {
            std::lock_guard lock(mutex_);
            return std::move(messages_);
        }

    protected:
        void sink_it_(const spdlog::details::log_msg& message) override
        {
            messages_.emplace_back(static_cast<int>(message.level), std::string(message.payload.begin(), message.payload.end()));
        }
        void flush_() override {}

    private:
        std::vector<std::pair<int, std::string>> messages_;
    };

    std::shared_ptr<Sink> sink_;
    std::shared_ptr<spdlog::logger> logger_;
    std::vector<spdlog::sink_ptr> held_;
    bool finished_ = false;
};

// What one status prints, made by planning: the messages logged on the
// way are held back (log_capture) and printed with the rest by print().
RecordedAnswer plan_answer(const StatusFlags& flags, const Terminal& terminal)
{
    LogCapture capture;
    StatusRequest request{flags.tree.path_list(), flags.tree.resolve()};
    request.host = flags.only.value_or("host") == "host";
    request.cuda = flags.only.value_or("cuda") == "cuda";
    request.cupy = asks_cupy(flags);
    if (flags.cupy_cache_dir) request.cupy_cache_dir = std::filesystem::path(*flags.cupy_cache_dir);
    flags.targets.apply(request.config);
    StatusReport report = read_status(request);
    for (const auto& warning : report.warnings) spdlog::warn("{}", warning);
    std::vector<std::string> failures = failed_gates(report, flags.gates);
    RecordedAnswer answer;
    if (flags.json) {
        nlohmann::json j = to_json(report, display_path);
        j["ok"] = failures.empty();
        j["failed_gates"] = failures;
        answer.result = j.dump(2) + "\n";
    } else {
        std::string cupy = report.cupy && !report.cupy->description().empty()
                               ? "\nCuPy's kernel cache: " + report.cupy->description() + "\n"
                               : "";
        answer.result = report.summary() + "\n\n" + table(report, terminal) + modules_lines(report, terminal) + cupy;
    }
    for (const auto& failure : failures) answer.notes.push_back(terminal.red(failure));
    answer.exit_code = failures.empty() ? 0 : 1;
    answer.logs = capture.finish();
    return answer;
}

void print(const RecordedAnswer& answer, Terminal& terminal)
{
    print_logs(answer.logs);
    terminal.result(answer.result);
    for (const auto& note : answer.notes) terminal.note(note, -1);
}

// A recorded answer that a fresh plan contradicts: the record missed a witness.
void check_recorded(const RecordedAnswer& recorded, const StatusFlags& flags, const Terminal& terminal)
{
    RecordedAnswer fresh = plan_answer(flags, terminal);
    auto differs = [](const char* what) {
        return Error(std::string("status record: the recorded answer's ") + what +
                     " differs from a fresh plan's (CUNUMPY_KERNELS_STATUS_RECORD=check); a witness was missed");
    };
    if (recorded.result != fresh.result) throw differs("result");
    if (recorded.logs != fresh.logs) throw differs("log");
    if (recorded.notes != fresh.notes || recorded.exit_code != fresh.exit_code) throw differs("gates");
    spdlog::info("status: answered from the status record, and a fresh plan agrees");
}

int run_status(const StatusFlags& flags, Terminal& terminal, const CommandLine& line)
{
    if (flags.bundle) {
        refuse_with_bundle(flags);
        return run_status_bundle(*flags.bundle, flags.tree, flags.targets, flags.json, terminal);
    }
    RecordUse use = record_use();
    std::optional<std::filesystem::path> folder = status_record_folder();
    // CuPy's cache is read by a Python process, whose reads no log sees.
    if (use == RecordUse::off || asks_cupy(flags) || !folder) {
        RecordedAnswer answer = plan_answer(flags, terminal);
        print(answer, terminal);
        return answer.exit_code;
    }
    StatusRecord record(*folder);
    std::string key = status_key(line, terminal);
    if (auto recorded = record.find(key)) {
        if (use == RecordUse::check) check_recorded(*recorded, flags, terminal);
        spdlog::debug("status: answered from {}: nothing it rests on changed", record.file_of(key).string());
        print(*recorded, terminal);
        return recorded->exit_code;
    }
    auto started = std::chrono::system_clock::now();
    FileAccessLog log;
    RecordedAnswer answer = plan_answer(flags, terminal);
    std::string not_kept = record.keep(key, answer, log.finish(), started);
    print(answer, terminal);
    if (!not_kept.empty()) spdlog::debug("status: answer not recorded: {}", not_kept);
    return answer.exit_code;
}

}  // namespace

CommandRunner setup_status(CLI::App& command)
{
    auto flags = std::make_shared<StatusFlags>();
    flags->tree.add_to(command);
    flags->targets.add_to(command);
    command.add_flag("--json", flags->json, "Print one JSON document on stdout");
    command.add_option("--only", flags->only,
                       "Report only the host (Pyccel), only the CUDA artifacts, or only CuPy's cache (cupy), as build --only")
        ->check(CLI::IsMember({"host", "cuda", "cupy"}));
    command.add_flag("--cupy-cache", flags->cupy_cache,
                     "Also report whether CuPy's kernel cache holds each CUDA kernel (starts --python with CuPy; "
                     "compiles no kernel)");
    command.add_option("--cupy-cache-dir", flags->cupy_cache_dir,
                       "CuPy's cache folder to read (implies --cupy-cache; default: $CUPY_CACHE_DIR, else "
                       "~/.cupy/kernel_cache)")
        ->check(non_empty_path());
    command.add_option("--bundle", flags->bundle,
                       "Say whether this bundle (cunumpy-kernels bundle) is stale for the trees (default: those it was "
                       "made from): exit 1 when a kernel's key changed or kernels were added or removed")
        ->check(non_empty_path());
    command.add_flag("--require-cuda", flags->gates.require_cuda, "Exit 1 unless every kernel has a CUDA version");
    command.add_flag("--require-built", flags->gates.require_built,
                     "Exit 1 unless every artifact is in the cache for the current configuration");
    command.add_flag("--check-signatures", flags->gates.check_signatures,
                     "Exit 1 unless every kernel's versions take the same parameters");
    return [flags](Terminal& terminal, const CommandLine& line) { return run_status(*flags, terminal, line); };
}

}  // namespace ck::cli
