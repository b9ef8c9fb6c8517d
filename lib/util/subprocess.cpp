#include "util/subprocess.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <sstream>

extern char** environ;

namespace ck::util {

namespace fs = std::filesystem;

namespace {

// The children now running, for terminate_children(), and whether it ran: the
// global state here, as a signal handler can reach nothing else. Slots hold a
// pid or 0.
constexpr std::size_t max_children = 256;
std::atomic<pid_t> running_children[max_children];
// Set by terminate_children(), never cleared: the process is stopping.
std::atomic<bool> stopping{false};

class ChildRegistration {
public:
    explicit ChildRegistration(pid_t pid)
    {
        for (auto& slot : running_children) {
            pid_t empty = 0;
            if (slot.compare_exchange_strong(empty, pid)) {
                slot_ = &slot;
                return;
            }
        }
    }
    ~ChildRegistration()
    {
        if (slot_) slot_->store(0);
    }
    ChildRegistration(const ChildRegistration&) = delete;
    ChildRegistration& operator=(const ChildRegistration&) = delete;

private:
    std::atomic<pid_t>* slot_ = nullptr;
};

// Every signal blocked in this thread while it forks, so that the child runs
// none of the parent's handlers before it has reset them (a child's copy of
// the SIGTERM handler would stop the parent's other compilers).
class BlockedSignals {
public:
    BlockedSignals()
    {
        sigset_t all;
        sigfillset(&all);
        ::pthread_sigmask(SIG_SETMASK, &all, &saved_);
    }
    ~BlockedSignals() { ::pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }
    BlockedSignals(const BlockedSignals&) = delete;
    BlockedSignals& operator=(const BlockedSignals&) = delete;
    const sigset_t& saved() const { return saved_; }

private:
    sigset_t saved_;
};

// What the child needs, prepared before the fork: after it, only
// async-signal-safe calls (the parent has other threads).
struct ChildSetup {
    const char* program;  ///< absolute
    char* const* argv;
    char* const* envp;
    const char* cwd;  ///< null: the parent's
    int output_fd;    ///< becomes stdout and stderr
    int error_fd;     ///< receives errno when the exec fails; close-on-exec
    int guard_fd;     ///< receives the child's pid for its guard; close-on-exec
    pid_t parent;
    const sigset_t* mask;
};

// The child, between fork and exec. Its own process group, so that an
// interrupt reaches the whole compiler pipeline (nvcc, cicc, ptxas) through
// us; PR_SET_PDEATHSIG, so that it dies with the builder even when the
// builder is killed with SIGKILL and no handler runs. The signal fires when
// the forking thread exits: run_process's caller waits for the child, so
// that thread outlives it.
[[noreturn]] void exec_child(const ChildSetup& setup)
{
    ::setpgid(0, 0);
    pid_t self = ::getpid();
    if (::write(setup.guard_fd, &self, sizeof self) != sizeof self) ::_exit(127);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != setup.parent) ::_exit(127);  // the builder died before prctl
    for (int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(signal_number, SIG_DFL);
    ::pthread_sigmask(SIG_SETMASK, setup.mask, nullptr);
    int input = ::open("/dev/null", O_RDONLY);
    bool ready = input >= 0 && ::dup2(input, 0) == 0 && ::dup2(setup.output_fd, 1) == 1 &&
                 ::dup2(setup.output_fd, 2) == 2 && (!setup.cwd || ::chdir(setup.cwd) == 0);
    if (input > 2) ::close(input);
    if (ready) ::execve(setup.program, setup.argv, setup.envp);
    int error = errno;
    (void)!::write(setup.error_fd, &error, sizeof error);
    ::_exit(127);
}

// The guard, forked before the child and outside its group: PR_SET_PDEATHSIG
// reaches only our direct child, so nvcc's own children (cicc, ptxas) would
// outlive a builder ended with SIGKILL. The child sends the guard its pid,
// its group's id, before it runs its program (so before it can start
// children); the guard then waits for the end of the pipe, which comes when
// the child has run its program (close-on-exec) and this process's end is
// closed, as the kernel closes it however this process ends, and kills what
// is left of the group. It keeps every signal blocked (the mask it was forked
// with), so a Ctrl-C or a SIGTERM to the job does not remove it before the
// builder is gone. Only async-signal-safe calls.
[[noreturn]] void guard_group(int watched_fd)
{
    ::dup2(watched_fd, 0);
    ::close_range(1, ~0U, 0);  // its own pipe's write end, other guards' pipes: no one kept waiting
    pid_t group = 0;
    ssize_t n = 0;
    while ((n = ::read(0, &group, sizeof group)) < 0 && errno == EINTR) {}
    if (n != sizeof group || group <= 0) ::_exit(0);  // no child was started
    char byte = 0;
    while (::read(0, &byte, 1) < 0 && errno == EINTR) {}
    ::kill(-group, SIGKILL);
    ::_exit(0);
}

// The errno a child sent before exiting, 0 when it ran its program.
int exec_error(int error_fd)
{
    int error = 0;
    ssize_t n = 0;
    do {
        n = ::read(error_fd, &error, sizeof error);
    } while (n < 0 && errno == EINTR);
    return n == sizeof error ? error : 0;
}

std::string read_all(int fd)
{
    std::string output;
    char buffer[65536];
    for (;;) {
        ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        output.append(buffer, static_cast<std::size_t>(n));
    }
    return output;
}

int wait_for(pid_t pid)
{
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

// The parent's environment with `overrides` replacing or adding variables.
bool is_inherited(const std::string& name, const InheritedVariables& inherited)
{
    if (inherited.empty()) return true;
    for (const auto& kept : inherited) {
        bool pattern = !kept.empty() && kept.back() == '*';
        if (pattern ? name.compare(0, kept.size() - 1, kept, 0, kept.size() - 1) == 0 : name == kept) return true;
    }
    return false;
}

std::vector<std::string> child_environment(const EnvironmentOverrides& overrides, const InheritedVariables& inherited)
{
    std::vector<std::string> entries;
    for (char** entry = environ; *entry; ++entry) {
        std::string text = *entry;
        std::string name = text.substr(0, text.find('='));
        if (!is_inherited(name, inherited)) continue;
        bool replaced = false;
        for (const auto& [key, value] : overrides) replaced = replaced || key == name;
        if (!replaced) entries.push_back(std::move(text));
    }
    for (const auto& [key, value] : overrides)
        if (value) entries.push_back(key + "=" + *value);
    return entries;
}

}  // namespace

namespace {

// True while any process of `pid`'s group is alive. The group's leader is our
// child: reaped here when it has exited (the thread waiting for it then sees
// ECHILD), since an unreaped leader keeps its group alive to kill(2).
bool group_alive(pid_t pid)
{
    int status = 0;
    ::waitpid(pid, &status, WNOHANG);
    return ::kill(-pid, 0) == 0;
}

// Waits up to `milliseconds` for every registered group to empty.
bool wait_for_groups(int milliseconds)
{
    const timespec tick{0, 10 * 1000 * 1000};
    for (int waited = 0;; waited += 10) {
        bool alive = false;
        for (auto& slot : running_children) {
            pid_t pid = slot.load();
            alive = alive || (pid > 0 && group_alive(pid));
        }
        if (!alive) return true;
        if (waited >= milliseconds) return false;
        ::nanosleep(&tick, nullptr);
    }
}

void signal_groups(int signal_number)
{
    for (auto& slot : running_children) {
        pid_t pid = slot.load();
        if (pid > 0) ::kill(-pid, signal_number);
    }
}

}  // namespace

bool stop_requested() { return stopping.load(); }

void terminate_children()
{
    stopping.store(true);
    // A dying compiler still writes its intermediate files for a moment; the
    // caller removes the scratch folders after this returns, so wait for the
    // whole pipeline (nvcc, cicc, ptxas) to be gone.
    signal_groups(SIGTERM);
    if (wait_for_groups(2000)) return;
    signal_groups(SIGKILL);
    wait_for_groups(1000);
}

fs::path find_in_path(const std::string& program)
{
    // Absolute, because the tools run their children in other folders; not
    // canonical, because a virtual environment's python is known by its link.
    if (program.find('/') != std::string::npos) {
        std::error_code error;  // a folder we may not search reads as not there
        bool runnable = fs::is_regular_file(program, error) && ::access(program.c_str(), X_OK) == 0;
        return runnable ? fs::absolute(program).lexically_normal() : fs::path();
    }
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
        if (::access(candidate.c_str(), X_OK) == 0) return fs::absolute(candidate).lexically_normal();
    }
    return {};
}

namespace {

// A started child: its pid (and process group), the read end of its output,
// and its guard (guard_group) with the pipe that keeps the guard waiting.
struct Spawned {
    pid_t pid = 0;
    UniqueFd output;
    pid_t guard = 0;
    UniqueFd guard_pipe;
};

// Waits for the child to exit and returns its status. The guard is released
// while the child is still an unreaped zombie, whose pid keeps its group's
// id from being reused by a stranger the guard would then kill.
int finish(Spawned& child)
{
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {}
    child.guard_pipe = UniqueFd();
    wait_for(child.guard);
    return wait_for(child.pid);
}

// Forks a guard (guard_group); the write end of its pipe stays here. Throws
// ToolchainError, naming `program`, when it cannot.
std::pair<pid_t, UniqueFd> start_guard(const std::string& program)
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw ToolchainError("cannot create a pipe: " + errno_message(errno));
    UniqueFd read_end(fds[0]);
    UniqueFd write_end(fds[1]);
    BlockedSignals blocked;
    pid_t guard = ::fork();
    if (guard == 0) guard_group(read_end.get());
    if (guard < 0)
        throw ToolchainError("cannot run " + program +
                             ": cannot start the process that ends it with us: " + errno_message(errno));
    return {guard, std::move(write_end)};
}

Spawned spawn(const std::vector<std::string>& argv, const fs::path& cwd, const EnvironmentOverrides& environment,
              const InheritedVariables& inherited)
{
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw ToolchainError("cannot create a pipe: " + errno_message(errno));
    UniqueFd read_end(pipe_fds[0]);
    UniqueFd write_end(pipe_fds[1]);

    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> env_entries;
    std::vector<char*> env_pointers;
    char** envp = environ;
    if (!environment.empty() || !inherited.empty()) {
        env_entries = child_environment(environment, inherited);
        for (auto& entry : env_entries) env_pointers.push_back(entry.data());
        env_pointers.push_back(nullptr);
        envp = env_pointers.data();
    }

    fs::path program = find_in_path(argv[0]);
    if (program.empty()) throw ToolchainError("cannot run " + argv[0] + ": not found in PATH, or not executable");
    int error_fds[2];
    if (::pipe2(error_fds, O_CLOEXEC) != 0) throw ToolchainError("cannot create a pipe: " + errno_message(errno));
    UniqueFd error_read(error_fds[0]);
    UniqueFd error_write(error_fds[1]);

    auto [guard, guard_pipe] = start_guard(argv[0]);
    pid_t pid = 0;
    {
        BlockedSignals blocked;
        ChildSetup setup{program.c_str(),
                         args.data(),
                         envp,
                         cwd.empty() ? nullptr : cwd.c_str(),
                         write_end.get(),
                         error_write.get(),
                         guard_pipe.get(),
                         ::getpid(),
                         &blocked.saved()};
        pid = ::fork();
        if (pid == 0) exec_child(setup);
        if (pid < 0) {
            int error = errno;
            guard_pipe = UniqueFd();  // the guard, told of no child, exits
            wait_for(guard);
            throw ToolchainError("cannot run " + argv[0] + ": " + errno_message(error));
        }
        ::setpgid(pid, pid);  // also here: terminate_children may signal the group before the child runs
    }
    write_end = UniqueFd();
    error_write = UniqueFd();
    Spawned child{pid, std::move(read_end), guard, std::move(guard_pipe)};
    if (int error = exec_error(error_read.get())) {
        finish(child);
        throw ToolchainError("cannot run " + argv[0] + ": " + errno_message(error));
    }
    return child;
}

using Clock = std::chrono::steady_clock;

// Whether `pid` has exited, leaving it unreaped: its pid stays its group's
// id while we kill what is left of the group.
bool has_exited(pid_t pid)
{
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

// Reads `fd` for up to `milliseconds`: false at the end of the output.
bool read_some(int fd, int milliseconds, std::string& output)
{
    pollfd ready{fd, POLLIN, 0};
    int polled = ::poll(&ready, 1, milliseconds);
    if (polled <= 0) return true;  // nothing yet, or EINTR
    char buffer[65536];
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) return false;
    output.append(buffer, static_cast<std::size_t>(n));
    return true;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const fs::path& cwd,
                          const EnvironmentOverrides& environment, const InheritedVariables& inherited)
{
    if (stop_requested()) return {128 + SIGTERM, "not started: the build is being stopped"};
    Spawned child = spawn(argv, cwd, environment, inherited);
    ChildRegistration registration(child.pid);
    ProcessResult result;
    result.output = read_all(child.output.get());
    result.exit_code = finish(child);
    return result;
}

ProcessResult run_process_within(const std::vector<std::string>& argv, const fs::path& cwd, int seconds)
{
    if (stop_requested()) return {128 + SIGTERM, "not started: the build is being stopped"};
    Spawned child = spawn(argv, cwd, {}, {});
    ChildRegistration registration(child.pid);
    ProcessResult result;
    const auto deadline = Clock::now() + std::chrono::seconds(seconds);
    std::optional<Clock::time_point> ended;  // when the child exited
    bool open = true;                        // its output
    for (;;) {
        auto now = Clock::now();
        if (now >= deadline) {
            result.timed_out = !ended;
            break;
        }
        // Done once the output ends, or a second after the child: a grandchild outside its group holds the pipe.
        if (ended && (!open || now - *ended > std::chrono::seconds(1))) break;
        if (open) {
            open = read_some(child.output.get(), 50, result.output);
        } else {
            const timespec tick{0, 50 * 1000 * 1000};
            ::nanosleep(&tick, nullptr);
        }
        if (!ended && has_exited(child.pid)) {
            ended = Clock::now();
            ::kill(-child.pid, SIGKILL);  // what it left running
        }
    }
    ::kill(-child.pid, SIGKILL);
    result.exit_code = finish(child);
    return result;
}

}  // namespace ck::util
