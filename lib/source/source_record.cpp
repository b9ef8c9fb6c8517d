#include "source/source_record.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"
#include "util/checksummed.hpp"
#include "util/code_identity.hpp"
#include "util/temporary_name.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <unordered_set>
#include <vector>

namespace ck {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The file is one text line, "<format> <SHA-256 of the body>", then the body
// in MessagePack.
// 2: a checksum over the body (a flipped byte read as a fact gave wrong
// answers that lasted), and facts of builds that named the tool by argv[0] dropped.
// 3: the line before the body, which was a MessagePack binary inside an
// envelope: nlohmann's reader copied it out byte by byte, a third of a load.
constexpr std::string_view record_format = "cunumpy-kernels/source-record/3";

std::int64_t now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Facts stay packed until asked: a run asks for some of them only (a CUDA
// build for none of the host modules'), and unpacking all was most of a load.
// A discarded value when the bytes do not decode (a record that passed its
// checksum always decodes; this keeps a bug from becoming an answer).
json unpacked(const std::string& packed) { return json::from_msgpack(packed, true, false); }

std::string fact_key(const std::string& sha256, const std::string& question) { return sha256 + "\n" + question; }

}  // namespace

SourceRecord::SourceRecord(const std::optional<fs::path>& file, std::chrono::nanoseconds margin)
    : margin_ns_(margin.count())
{
    if (file) {
        file_ = *file;
        load();
    }
}

// Both times: a rewrite that puts the modification time back moves the change
// time, but within one tick of a coarse clock it may not, so that too must be
// older than the margin (ext4 and xfs before Linux 6.13, NFS, ext2).
bool SourceRecord::old_enough(const FileStat& stat, std::int64_t hashed_at_ns) const
{
    return stat.modified_ns + margin_ns_ <= hashed_at_ns && stat.changed_ns + margin_ns_ <= hashed_at_ns;
}

SourceRecord::FileStat SourceRecord::stat_of(const fs::path& file)
{
    struct stat info {};
    if (::stat(file.c_str(), &info) != 0)
        throw SourceError("cannot read " + file.string() + ": " + util::errno_message(errno));
    return {static_cast<std::uint64_t>(info.st_dev), static_cast<std::uint64_t>(info.st_ino),
            static_cast<std::uint64_t>(info.st_size), util::ns_of(info.st_mtim), util::ns_of(info.st_ctim)};
}

std::pair<std::string, std::string> SourceRecord::read_and_record(const fs::path& file)
{
    // Time and stat before the read: a write during the read leaves a newer
    // stat than the recorded one, or one too recent to trust.
    std::int64_t hashed_at = now_ns();
    FileStat stat = stat_of(file);
    std::string bytes = util::read_file(file);
    std::string sha256 = sha256_hex(bytes);
    std::lock_guard lock(mutex_);
    Entry& entry = entries_[file.string()];
    // Unchanged, and as trusted as before: nothing new to write.
    bool same = entry.stat == stat && entry.sha256 == sha256 &&
                (old_enough(stat, entry.hashed_at_ns) || !old_enough(stat, hashed_at));
    if (!same) {
        entry = {stat, hashed_at, sha256};
        changed_ = true;
    }
    read_now_[file.string()] = bytes;
    ++files_read_;
    return {std::move(bytes), std::move(sha256)};
}

std::string SourceRecord::digest(const fs::path& file)
{
    FileStat stat = stat_of(file);
    {
        std::lock_guard lock(mutex_);
        auto it = entries_.find(file.string());
        bool trusted = it != entries_.end() && it->second.stat == stat && old_enough(stat, it->second.hashed_at_ns);
        if (trusted) return it->second.sha256;
        // Hashed in this run already, too recently to trust across runs. A
        // record kept in a process has no runs: the process may live long, and
        // on a coarse clock a rewrite within one tick keeps the stat.
        if (file_ && it != entries_.end() && it->second.stat == stat && read_now_.count(file.string()))
            return it->second.sha256;
    }
    return read_and_record(file).second;
}

std::string SourceRecord::read(const fs::path& file, std::string* sha256)
{
    // Read once a run: a planned source is asked for again by the signature
    // check and the build. Its stat says whether it is still the same, with
    // the trust digest() gives it (a file changed within the margin is read again).
    FileStat stat = stat_of(file);
    {
        std::lock_guard lock(mutex_);
        auto bytes = read_now_.find(file.string());
        auto entry = entries_.find(file.string());
        if (bytes != read_now_.end() && entry != entries_.end() && entry->second.stat == stat &&
            old_enough(stat, entry->second.hashed_at_ns)) {
            if (sha256) *sha256 = entry->second.sha256;
            return bytes->second;
        }
    }
    auto [bytes, digest] = read_and_record(file);
    if (sha256) *sha256 = std::move(digest);
    return bytes;
}

json SourceRecord::fact(const fs::path& file, const std::string& question,
                        const std::function<json(const std::string& bytes)>& answer, std::string* sha256_out)
{
    std::string sha256 = digest(file);
    if (sha256_out) *sha256_out = sha256;
    std::optional<std::string> bytes;
    {
        std::lock_guard lock(mutex_);
        if (const json* known = remembered(fact_key(sha256, question))) return *known;
        if (auto it = read_now_.find(file.string()); it != read_now_.end() && entries_[file.string()].sha256 == sha256)
            bytes = it->second;
    }
    if (!bytes) std::tie(bytes, sha256) = read_and_record(file);  // read now: if it changed since, its new bytes answer
    if (sha256_out) *sha256_out = sha256;
    json value = answer(*bytes);
    remember(sha256, question, value);
    return value;
}

std::string SourceRecord::canonical(const fs::path& path)
{
    std::lock_guard lock(mutex_);
    auto it = canonical_now_.find(path.string());
    if (it != canonical_now_.end()) return it->second;
    std::error_code error;
    fs::path resolved = util::canonical_path(path, error);
    if (error) throw SourceError("cannot resolve " + path.string() + ": " + error.message());
    return canonical_now_.emplace(path.string(), resolved.string()).first->second;
}

const json* SourceRecord::remembered(const std::string& key)
{
    if (auto decoded = decoded_now_.find(key); decoded != decoded_now_.end()) return &decoded->second;
    auto packed = facts_.find(key);
    if (packed == facts_.end()) return nullptr;
    json answer = unpacked(packed->second);
    if (answer.is_discarded()) return nullptr;
    return &decoded_now_.emplace(key, std::move(answer)).first->second;
}

std::optional<json> SourceRecord::known(const std::string& sha256, const std::string& question,
                                        const std::function<bool(const json&)>& still_holds)
{
    std::string key = fact_key(sha256, question);
    std::optional<json> answer;
    {
        std::lock_guard lock(mutex_);
        const json* known = remembered(key);
        if (!known) return std::nullopt;
        if (!still_holds) return *known;
        if (auto held = held_now_.find(key); held != held_now_.end()) {
            if (!held->second) return std::nullopt;
            return *known;
        }
        answer = *known;
    }
    bool holds = still_holds(*answer);  // unlocked: it may ask this record about other files
    std::lock_guard lock(mutex_);
    held_now_[key] = holds;
    if (!holds) return std::nullopt;
    return answer;
}

json SourceRecord::answer(const std::string& sha256, const std::string& question, const std::function<json()>& compute,
                          const std::function<bool(const json&)>& still_holds)
{
    if (auto known_answer = known(sha256, question, still_holds)) return *std::move(known_answer);
    json computed = compute();
    remember(sha256, question, computed);
    return computed;
}

void SourceRecord::remember(const std::string& sha256, const std::string& question, const json& answer)
{
    std::lock_guard lock(mutex_);
    std::string key = fact_key(sha256, question);
    held_now_[key] = true;  // answered in this run from what it read
    decoded_now_.insert_or_assign(key, answer);
    std::vector<std::uint8_t> packed = json::to_msgpack(answer);
    std::string& place = facts_[key];
    if (place.size() == packed.size() && std::equal(packed.begin(), packed.end(), place.begin())) return;
    place.assign(packed.begin(), packed.end());
    changed_ = true;
}

std::size_t SourceRecord::files_read() const
{
    std::lock_guard lock(mutex_);
    return files_read_;
}

// Reads a record's body, {"code": ..., "files": {path: [device, inode, size,
// modified, changed, hashed at, sha256]}, "facts": {key: MessagePack}},
// straight into the record's maps: building the document first was most of
// a warm run's load (bench/RESULTS.md, issue 14). Anything else fails the read.
class SourceRecord::BodyReader final : public nlohmann::json_sax<json> {
public:
    explicit BodyReader(SourceRecord& record) : record_(record) {}

    bool null() override { return false; }
    bool boolean(bool) override { return false; }
    bool number_float(number_float_t, const string_t&) override { return false; }
    bool number_integer(number_integer_t value) override { return field(static_cast<std::uint64_t>(value)); }
    bool number_unsigned(number_unsigned_t value) override { return field(value); }

    bool string(string_t& text) override
    {
        if (depth_ == 1 && section_ == Section::code) {
            // Facts answered by another build of the tool are not taken.
            code_matches_ = !record_.code_.empty() && text == record_.code_;
            return true;
        }
        if (depth_ != 3 || field_ != 6) return false;
        entry_.sha256 = std::move(text);
        ++field_;
        return true;
    }

    bool binary(binary_t& packed) override
    {
        if (depth_ != 2 || section_ != Section::facts) return false;
        if (code_matches_) record_.facts_[std::move(key_)].assign(packed.begin(), packed.end());
        return true;
    }

    bool key(string_t& name) override
    {
        if (depth_ == 1) {
            section_ = name == "code"    ? Section::code
                       : name == "files" ? Section::files
                       : name == "facts" ? Section::facts
                                         : Section::other;
            return section_ != Section::other;
        }
        key_ = std::move(name);
        return depth_ == 2;
    }

    bool start_object(std::size_t) override
    {
        ++depth_;
        return depth_ == 1 || (depth_ == 2 && (section_ == Section::files || section_ == Section::facts));
    }

    bool end_object() override
    {
        --depth_;
        return true;
    }

    bool start_array(std::size_t) override
    {
        ++depth_;
        field_ = 0;
        return depth_ == 3 && section_ == Section::files;
    }

    bool end_array() override
    {
        --depth_;
        if (field_ != 7) return false;
        record_.entries_[std::move(key_)] = entry_;
        return true;
    }

    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

private:
    enum class Section { none, code, files, facts, other };

    bool field(std::uint64_t value)
    {
        if (depth_ != 3 || field_ > 5) return false;
        switch (field_++) {
            case 0:
                entry_.stat.device = value;
                break;
            case 1:
                entry_.stat.inode = value;
                break;
            case 2:
                entry_.stat.size = value;
                break;
            case 3:
                entry_.stat.modified_ns = static_cast<std::int64_t>(value);
                break;
            case 4:
                entry_.stat.changed_ns = static_cast<std::int64_t>(value);
                break;
            default:
                entry_.hashed_at_ns = static_cast<std::int64_t>(value);
                break;
        }
        return true;
    }

    SourceRecord& record_;
    int depth_ = 0;
    Section section_ = Section::none;
    bool code_matches_ = false;
    std::string key_;
    int field_ = 0;
    Entry entry_;
};

void SourceRecord::load()
{
    std::string bytes;
    try {
        bytes = util::read_file(*file_, max_bytes);
    } catch (const Error&) {
        return;  // none yet, unreadable, not a regular file or too large: an empty record
    }
    // A damaged or foreign record is an empty one: nothing read from it is trusted.
    std::optional<std::string_view> packed = util::checksummed_body(record_format, bytes);
    if (!packed) return;
    code_ = util::code_identity();
    BodyReader reader(*this);
    if (!json::sax_parse(packed->begin(), packed->end(), &reader, nlohmann::detail::input_format_t::msgpack)) {
        entries_.clear();  // another writer's format: start afresh
        facts_.clear();
    }
}

// A writer killed between writing its temporary and renaming it leaves the
// temporary (`.<record>.<host>.<pid>.<n>.<random>`, util::AtomicFile); each
// save sweeps those of dead writers, as builds sweep their folders.
void SourceRecord::remove_dead_writers_leftovers() const
{
    const std::string prefix = "." + file_->filename().string() + ".";
    std::error_code error;
    for (fs::directory_iterator it(file_->parent_path(), error), end; !error && it != end; it.increment(error)) {
        std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        if (is_stale_temporary(it->path(), name.substr(prefix.size()), 24 * 3600.0)) fs::remove(it->path(), error);
    }
}

void SourceRecord::save() noexcept
{
    std::lock_guard lock(mutex_);
    if (!file_ || !changed_) return;
    try {
        std::vector<std::pair<std::int64_t, std::string>> by_age;
        for (const auto& [path, entry] : entries_) by_age.emplace_back(entry.hashed_at_ns, path);
        if (by_age.size() > max_files) {
            std::sort(by_age.begin(), by_age.end());
            for (std::size_t i = 0; i < by_age.size() - max_files; ++i) entries_.erase(by_age[i].second);
        }
        json files = json::object(), facts = json::object();
        std::unordered_set<std::string> digests;
        for (const auto& [path, e] : entries_) {
            files[path] = {e.stat.device,     e.stat.inode,   e.stat.size, e.stat.modified_ns,
                           e.stat.changed_ns, e.hashed_at_ns, e.sha256};
            digests.insert(e.sha256);
        }
        // Facts about content no recorded file holds any more are dropped.
        for (const auto& [key, value] : facts_)
            if (digests.count(key.substr(0, key.find('\n')))) facts[key] = json::binary({value.begin(), value.end()});
        if (code_.empty()) code_ = util::code_identity();
        std::vector<std::uint8_t> body = json::to_msgpack(json{{"code", code_}, {"files", files}, {"facts", facts}});
        std::string_view body_bytes(reinterpret_cast<const char*>(body.data()), body.size());
        std::string record = util::checksummed(record_format, body_bytes);
        // A record in a cache root (`<root>/.records/`, with --cache-dir) waits
        // for the root: a cache folder that does not exist yet is created by a
        // build, never by status. The home folder's record makes its folders,
        // ~/.cache included, as XDG means it (a CI job's HOME often lacks one).
        fs::path folder = file_->parent_path();
        if (folder.filename() == ".records" && !fs::is_directory(folder.parent_path())) return;
        fs::create_directories(file_->parent_path());
        util::replace_file_atomically(*file_, record);
        changed_ = false;
        remove_dead_writers_leftovers();
    } catch (const std::exception&) {
        // A record is an optimisation: the next run reads the files again.
    }
}

}  // namespace ck
