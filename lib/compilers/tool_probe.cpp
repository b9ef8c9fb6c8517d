#include "compilers/tool_probe.hpp"

#include "util/sha256.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"

#include <sys/stat.h>

namespace ck {

namespace fs = std::filesystem;

std::optional<std::string> ToolProbe::record_name(const fs::path& tool, const std::string& question) const
{
    std::error_code error;
    fs::path real = fs::canonical(tool, error);
    struct stat info {};
    if (error || ::stat(real.c_str(), &info) != 0) return std::nullopt;
    // The change time and inode too: an edit that keeps the size and sets
    // the old modification time back (`touch -d`) changes the change time,
    // and a file replaced by a rename gets another inode.
    auto time = [](const timespec& t) { return std::to_string(t.tv_sec) + "." + std::to_string(t.tv_nsec); };
    return sha256_hex(question + "\n" + real.string() + "\n" + std::to_string(info.st_size) + "\n" +
                      time(info.st_mtim) + "\n" + time(info.st_ctim) + "\n" + std::to_string(info.st_dev) + ":" +
                      std::to_string(info.st_ino))
        .substr(0, 32);
}

std::string ToolProbe::answer(const fs::path& tool, const std::string& question,
                              const std::function<std::string()>& ask) const
{
    auto name = record_name(tool, question);
    if (name && deferred_) {
        std::lock_guard<std::mutex> lock(deferred_->mutex);
        auto learnt = deferred_->answers.find(*name);
        if (learnt != deferred_->answers.end()) return learnt->second;
    }
    if (name) {
        for (const fs::path* dir : {&dir_, also_read_ ? &*also_read_ : nullptr}) {
            if (!dir) continue;
            // Not asked yet, or being rewritten by a builder on another node: ask.
            if (auto known = util::read_record(*dir / *name)) return *known;
        }
    }
    std::string value = ask();
    if (!value.empty()) remember(tool, question, value);
    return value;
}

void ToolProbe::remember(const fs::path& tool, const std::string& question, const std::string& value) const
{
    auto name = record_name(tool, question);
    if (!name) return;
    if (deferred_) {
        std::lock_guard<std::mutex> lock(deferred_->mutex);
        if (deferred_->deferring) {
            deferred_->answers[*name] = value;
            return;
        }
    }
    write_record(*name, value);
}

void ToolProbe::defer_writes()
{
    if (!deferred_) deferred_ = std::make_shared<Deferred>();
}

void ToolProbe::write_deferred() const
{
    if (!deferred_) return;
    std::lock_guard<std::mutex> lock(deferred_->mutex);
    for (const auto& [name, value] : deferred_->answers) write_record(name, value);
    deferred_->answers.clear();
    deferred_->deferring = false;
}

void ToolProbe::write_record(const std::string& name, const std::string& value) const
{
    std::error_code error;
    fs::create_directories(dir_, error);
    try {
        util::replace_file_atomically(dir_ / name, value);
    } catch (const CacheError&) {
        // A read-only cache asks again next time; nothing else depends on it.
    }
}

}  // namespace ck
