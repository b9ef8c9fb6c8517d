#include "cache/in_place_record.hpp"
#include "util/json_text.hpp"

#include "cache/cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"

#include <sys/stat.h>

namespace ck {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path in_place_record_path(const fs::path& folder, const std::string& stem)
{
    return folder / "__pyccel__" / (stem + ".cunumpy-kernels.json");
}

std::optional<InPlaceRecord> read_in_place_record(const fs::path& path, bool header_only)
{
    std::string text;
    try {
        text = util::read_file(path);
    } catch (const SourceError&) {
        return std::nullopt;
    }
    std::size_t end = text.find('\n');
    if (end == std::string::npos) return std::nullopt;
    json header = util::parse_json(std::string_view(text).substr(0, end), nullptr, false);
    if (!header.is_object() || header.value("format", std::string()) != in_place_record_format) return std::nullopt;
    try {
        InPlaceRecord record;
        record.key = header.at("key").get<std::string>();
        record.extension = header.at("extension").get<std::string>();
        record.size = header.at("size").get<std::uintmax_t>();
        record.mtime_ns = header.at("mtime_ns").get<std::int64_t>();
        record.sha256 = header.at("sha256").get<std::string>();
        record.own_files = header.value("own", std::vector<std::string>());
        record.library = header.value("library", std::string());
        record.library_size = header.value("library_size", std::uintmax_t(0));
        record.library_mtime_ns = header.value("library_mtime_ns", std::int64_t(0));
        record.library_sha256 = header.value("library_sha256", std::string());
        if (header_only) return record;
        json body = util::parse_json(std::string_view(text).substr(end + 1), nullptr, false);
        if (!body.is_object()) return std::nullopt;
        record.module = body.at("module").get<std::string>();
        record.inputs = body.value("inputs", json::object());
        record.files = body.at("files").get<std::vector<std::string>>();
        record.built_at = body.value("built_at", std::string());
        record.seconds = body.value("seconds", 0.0);
        return record;
    } catch (const json::exception&) {
        return std::nullopt;
    }
}

void write_in_place_record(const fs::path& path, const InPlaceRecord& record)
{
    json header = {{"format", in_place_record_format},
                   {"key", record.key},
                   {"extension", record.extension},
                   {"size", record.size},
                   {"mtime_ns", record.mtime_ns},
                   {"sha256", record.sha256},
                   {"own", record.own_files},
                   {"library", record.library},
                   {"library_size", record.library_size},
                   {"library_mtime_ns", record.library_mtime_ns},
                   {"library_sha256", record.library_sha256}};
    json body = {{"module", record.module},
                 {"inputs", record.inputs},
                 {"files", record.files},
                 {"built_at", record.built_at},
                 {"seconds", record.seconds}};
    util::replace_file_atomically(path, util::json_text(header) + "\n" + util::json_text(body) + "\n");
}

std::optional<FileStamp> file_stamp(const fs::path& path)
{
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
    return FileStamp{static_cast<std::uintmax_t>(info.st_size),
                     static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec};
}

namespace {

// Whether `file`, of stamp `stamp`, is the one recorded: same size and time,
// or same SHA-256 (a copy that kept the bytes).
bool describes(const fs::path& file, const FileStamp& stamp, const FileStamp& recorded, const std::string& sha256)
{
    if (stamp.size != recorded.size) return false;
    if (stamp.mtime_ns == recorded.mtime_ns) return true;
    try {
        return sha256_file(file) == sha256;
    } catch (const Error&) {
        return false;
    }
}

bool describes(const InPlaceRecord& record, const fs::path& extension, const FileStamp& stamp)
{
    return describes(extension, stamp, {record.size, record.mtime_ns}, record.sha256);
}

bool older_than_any(const FileStamp& stamp, const std::vector<fs::path>& sources)
{
    for (const auto& source : sources) {
        auto source_stamp = file_stamp(source);
        if (source_stamp && source_stamp->mtime_ns > stamp.mtime_ns) return true;
    }
    return false;
}

}  // namespace

bool record_describes_library(const InPlaceRecord& record, const fs::path& folder)
{
    if (record.library.empty()) return true;
    fs::path library = folder / record.library;
    auto stamp = file_stamp(library);
    return stamp && describes(library, *stamp, {record.library_size, record.library_mtime_ns}, record.library_sha256);
}

bool record_describes_extension(const InPlaceRecord& record, const fs::path& folder)
{
    auto stamp = file_stamp(folder / record.extension);
    return stamp && !record.key.empty() && describes(record, folder / record.extension, *stamp);
}

InPlaceState read_in_place_state(const fs::path& folder, const std::string& stem, const std::string& ext_suffix,
                                 const std::string& key, const std::vector<fs::path>& sources)
{
    InPlaceState state;
    fs::path extension = folder / (stem + ext_suffix);
    auto stamp = file_stamp(extension);
    state.record = read_in_place_record(in_place_record_path(folder, stem), true);
    if (state.record && state.record->extension != extension.filename().string()) state.record.reset();
    if (!stamp) {
        state.kind = InPlaceState::Kind::missing;
        return state;
    }
    if (state.record && !state.record->key.empty() && !describes(*state.record, extension, *stamp))
        state.record.reset();
    if (!state.record) {
        state.kind = InPlaceState::Kind::foreign;
        state.older_than_sources = older_than_any(*stamp, sources);
        return state;
    }
    state.kind = state.record->key == key ? InPlaceState::Kind::current : InPlaceState::Kind::stale;
    if (state.kind != InPlaceState::Kind::current) return state;
    for (const auto& file : state.record->own_files) {
        struct stat info {};
        if (::stat((folder / file).c_str(), &info) == 0) continue;
        state.kind = InPlaceState::Kind::incomplete;
        state.missing_file = file;
        return state;
    }
    if (!record_describes_library(*state.record, folder)) state.kind = InPlaceState::Kind::damaged;
    return state;
}

}  // namespace ck
