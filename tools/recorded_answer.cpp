#include "recorded_answer.hpp"

#include "file_access_log.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/elapsed.hpp"

#include <fmt/format.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <gnu/libc-version.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace ck::cli {

namespace {

void print_logs(const std::vector<std::pair<int, std::string>>& logs)
{
    for (const auto& [level, message] : logs) spdlog::log(static_cast<spdlog::level::level_enum>(level), "{}", message);
}

// CUNUMPY_KERNELS_ANSWER_RECORD: unset or "on", "off" (never read or write
// the record), "check" (plan afresh on every recorded answer, and fail when
// the two differ: for tests of the record itself).
enum class RecordMode { on, off, check };

RecordMode record_mode()
{
    const char* value = std::getenv("CUNUMPY_KERNELS_ANSWER_RECORD");
    std::string v = value ? value : "on";
    if (v == "on" || v.empty()) return RecordMode::on;
    if (v == "off") return RecordMode::off;
    if (v == "check") return RecordMode::check;
    throw UsageError("CUNUMPY_KERNELS_ANSWER_RECORD=" + v + ": expected on, off or check");
}

// Everything an answer depends on besides what the file access log sees:
// this build of the tool, the command line, the working folder (relative
// paths, and how paths are shown), who asks (file modes decide what may be
// read), the system it runs on (the Python probe keys on the kernel release
// and the C library's version, which no file access shows: a reboot into
// another kernel, or a home folder shared by nodes of another system), and
// how the terminal shows it.
std::string answer_key(const CommandLine& line, const Terminal& terminal)
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
    struct utsname system {};
    if (::uname(&system) == 0)
        key += fmt::format("\n{} {} {} {}", system.sysname, system.release, system.version, system.machine);
    key += fmt::format("\nglibc {}", gnu_get_libc_version());
    key += fmt::format("\n{} {} {}\n", terminal.colored(), terminal.interactive(), terminal.verbosity());
    for (const auto& word : line) key += word + '\0';
    return key;
}

// Holds back what is logged while a command plans, so that a recorded
// answer prints the same messages; a plan that throws prints them at once.
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

RecordedAnswer planned(const std::function<RecordedAnswer()>& plan)
{
    LogCapture capture;
    RecordedAnswer answer = plan();
    answer.logs = capture.finish();
    return answer;
}

// `seconds`: how long the command took, for an answer that says so.
void print(const RecordedAnswer& answer, Terminal& terminal, double seconds)
{
    print_logs(answer.logs);
    std::string result = answer.result;
    if (answer.seconds_at) result.insert(*answer.seconds_at, fmt::format("{:.2f}", seconds));
    terminal.result(result);
    for (const auto& note : answer.notes) terminal.note(note, -1);
}

// A recorded answer that a fresh plan contradicts: the record missed a
// witness. The fresh plan does its bookkeeping itself, so the recorded
// answer's is not repeated.
void check_recorded(const RecordedAnswer& recorded, const std::function<RecordedAnswer()>& plan)
{
    RecordedAnswer fresh = planned(plan);
    auto differs = [](const char* what) {
        return Error(std::string("answer record: the recorded answer's ") + what +
                     " differs from a fresh plan's (CUNUMPY_KERNELS_ANSWER_RECORD=check); a witness was missed");
    };
    if (recorded.result != fresh.result || recorded.seconds_at != fresh.seconds_at) throw differs("result");
    if (recorded.logs != fresh.logs) throw differs("log");
    if (recorded.notes != fresh.notes || recorded.exit_code != fresh.exit_code) throw differs("gates");
    if (recorded.bookkeeping != fresh.bookkeeping) throw differs("bookkeeping");
    spdlog::info("answered from the answer record, and a fresh plan agrees");
}

}  // namespace

int answer(const CommandLine& line, Terminal& terminal, bool recordable, const std::function<RecordedAnswer()>& plan,
           const std::function<void(const std::string&)>& repeat_bookkeeping)
{
    auto begun = std::chrono::steady_clock::now();
    RecordMode mode = record_mode();
    std::optional<std::filesystem::path> folder = answer_record_folder();
    if (mode == RecordMode::off || !recordable || !folder) {
        RecordedAnswer answer = planned(plan);
        print(answer, terminal, util::seconds_since(begun));
        return answer.exit_code;
    }
    AnswerRecord record(*folder);
    std::string key = answer_key(line, terminal);
    if (auto recorded = record.find(key)) {
        if (mode == RecordMode::check) check_recorded(*recorded, plan);
        else if (!recorded->bookkeeping.empty() && repeat_bookkeeping) repeat_bookkeeping(recorded->bookkeeping);
        spdlog::debug("answered from {}: nothing it rests on changed", record.file_of(key).string());
        print(*recorded, terminal, util::seconds_since(begun));
        return recorded->exit_code;
    }
    auto started = std::chrono::system_clock::now();
    FileAccessLog log;
    RecordedAnswer answer = planned(plan);
    FileAccesses accesses = log.finish();
    std::string not_kept = answer.not_to_keep.empty() ? record.keep(key, answer, accesses, started) : answer.not_to_keep;
    print(answer, terminal, util::seconds_since(begun));
    if (!not_kept.empty()) spdlog::debug("answer not recorded: {}", not_kept);
    return answer.exit_code;
}

}  // namespace ck::cli
