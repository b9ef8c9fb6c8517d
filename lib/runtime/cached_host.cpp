#include "runtime/cached_host.hpp"

#include "cache/cache.hpp"
#include "cache/in_place_record.hpp"
#include "compilers/cuda_elf.hpp"
#include "cunumpy_kernels/error.hpp"
#include "source/python_text.hpp"
#include "util/dynamic_library.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"

#include <algorithm>
#include <cerrno>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>

namespace ck {

namespace fs = std::filesystem;

namespace {

// The shim's array (doc/host-libraries.md, ABI version 1).
struct HostArray {
    void* data;
    std::int64_t element_type;
    std::int64_t ndim;
    const std::int64_t* shape;
    const std::int64_t* strides;
};

constexpr std::int64_t abi_version = 1;

using Entry = int (*)(void* const*, std::int64_t, char*, std::size_t);

ElementType element_type_named(const std::string& name, const std::string& where)
{
    for (int type = 0; type <= static_cast<int>(ElementType::complex128); ++type)
        if (name == to_string(static_cast<ElementType>(type))) return static_cast<ElementType>(type);
    throw CacheError(where + ": unknown element type '" + name + "'");
}

// One call: arrays as views of the caller's memory, scalars converted to the
// declared types into slots that live as long as the call.
class HostLibraryCall {
public:
    HostLibraryCall(const HostLibraryFunction& function, std::span<const Argument> args)
    {
        std::size_t count = function.parameters.size();
        if (args.size() != count)
            throw ArgumentError("the kernel takes " + std::to_string(count) + " arguments, got " +
                                std::to_string(args.size()));
        arrays_.resize(count);
        scalars_.resize(count);
        pointers_.resize(count);
        for (std::size_t i = 0; i < count; ++i) pointers_[i] = prepare(function.parameters[i], args[i], i);
    }

    void run(Entry entry) const
    {
        char error[512] = "";
        if (entry(pointers_.data(), static_cast<std::int64_t>(pointers_.size()), error, sizeof error) != 0)
            throw ArgumentError(error[0] ? error : "the host library refused the call");
    }

private:
    void* prepare(const HostLibraryParameter& parameter, const Argument& argument, std::size_t index)
    {
        if (parameter.rank == 0) {
            convert_scalar(argument, parameter.type, &scalars_[index],
                           "argument " + parameter.name + " (" + to_string(parameter.type) + ")");
            return &scalars_[index];
        }
        if (!argument.is_array())
            throw ArgumentError("argument " + parameter.name + ": expected a " + std::to_string(parameter.rank) + "D " +
                                to_string(parameter.type) + " array, got " + argument.describe());
        const ArrayView& view = argument.array();
        if (view.memory != Memory::host)
            throw ArgumentError("argument " + parameter.name + " must be a host array, got " + argument.describe() +
                                "; host kernels take host arrays (missing_cuda = fallback copies device arrays)");
        arrays_[index] = {view.data, static_cast<std::int64_t>(view.type), view.ndim, view.shape, view.strides};
        return &arrays_[index];
    }

    std::vector<HostArray> arrays_;
    std::vector<std::complex<double>> scalars_;  // 16 bytes, aligned for every scalar type
    std::vector<void*> pointers_;
};

std::optional<Artifact> library_artifact(const Manifest& manifest)
{
    for (const auto& artifact : manifest.artifacts)
        if (artifact.target == "host-library") return artifact;
    return std::nullopt;
}

// The latest entry of the kernel's module whose source is the file's now;
// `absent` says why there is none.
std::optional<Manifest> current_entry(const KernelSource& source, const EntryStore& store, std::string* damaged,
                                      std::string* absent)
{
    std::string problem;
    auto manifest = store.latest("host", source.module, "host", &problem);
    if (!manifest) {
        if (!problem.empty())
            *damaged = "its cache entry is damaged (" + problem +
                       "); run `cunumpy-kernels cache verify --fix`, then `cunumpy-kernels build`";
        else
            *absent = "the cache " + store.root().string() + " holds no build of " + source.module +
                      "; run `cunumpy-kernels build`";
        return std::nullopt;
    }
    if (!records_current_source(manifest->inputs, source.host.front().file)) {
        *absent = source.host.front().file.string() + " changed since its last build; run `cunumpy-kernels build`";
        return std::nullopt;
    }
    return manifest;
}

}  // namespace

bool records_current_source(const nlohmann::json& recorded, const fs::path& file)
{
    if (!recorded.is_object() || !recorded.contains("source") || !recorded["source"].is_object()) return false;
    const auto& digest = recorded["source"].value("sha256", std::string());
    return digest == sha256_hex(python_source_text(util::read_file(file)));
}

std::vector<HostLibraryFunction> parse_host_library_description(const std::string& text, const std::string& where)
{
    std::vector<HostLibraryFunction> functions;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string kind, name;
        words >> kind >> name;
        if (kind == "function") {
            functions.push_back({name, {}, ""});
        } else if (kind == "parameter" && !functions.empty()) {
            std::string type;
            HostLibraryParameter parameter{name, ElementType::float64, 0, 'A'};
            words >> type >> parameter.rank >> parameter.order;
            if (!words) throw CacheError(where + ": cannot read '" + line + "'");
            parameter.type = element_type_named(type, where);
            functions.back().parameters.push_back(parameter);
        } else if (kind == "skipped") {
            std::string reason;
            std::getline(words >> std::ws, reason);
            functions.push_back({name, {}, reason});
        } else {
            throw CacheError(where + ": cannot read '" + line + "'");
        }
    }
    return functions;
}

namespace {

// The library of the module's current cache entry, its checksum verified;
// nothing when no current entry has one, or (with `note`) when it differs
// from its manifest.
std::optional<HostLibraryFile> entry_library(const KernelSource& source, const fs::path& root, std::string* note,
                                             std::string* absent)
{
    EntryStore store(root);
    auto manifest = current_entry(source, store, note, absent);
    if (!manifest) return std::nullopt;
    auto artifact = library_artifact(*manifest);
    if (!artifact) return std::nullopt;
    fs::path file = store.entry_dir("host", manifest->key) / artifact->file;
    if (sha256_hex(util::read_file(file)) != artifact->sha256) {
        *note = file.string() +
                " differs from its manifest; run `cunumpy-kernels cache verify --fix`, then "
                "`cunumpy-kernels build`";
        return std::nullopt;
    }
    return HostLibraryFile{file, manifest->key, manifest->inputs, ""};
}

// The library `build --in-place` left beside the module, when its record
// (a finished build: it names a key) holds the module's current source
// digest and lists the library among the files it wrote.
std::optional<HostLibraryFile> in_place_library(const KernelSource& source, std::string* absent)
{
    const fs::path& file = source.host.front().file;
    auto record = read_in_place_record(in_place_record_path(file.parent_path(), file.stem().string()));
    if (!record || record->key.empty()) return std::nullopt;
    if (!records_current_source(record->inputs, file)) {
        *absent = file.string() + " changed since its in-place build; run `cunumpy-kernels build --in-place`";
        return std::nullopt;
    }
    if (record->library.empty()) {
        *absent = "its in-place build made no host library; run `cunumpy-kernels build --in-place`";
        return std::nullopt;
    }
    return HostLibraryFile{file.parent_path() / record->library, record->key, record->inputs, record->library_sha256};
}

// A file's bytes mapped read-only: the pages a reader touches are read, not
// the whole file.
class MappedFile {
public:
    explicit MappedFile(const fs::path& file)
    {
        util::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
        struct stat facts {};
        if (!fd.valid() || ::fstat(fd.get(), &facts) != 0)
            throw CacheError("cannot read " + file.string() + ": " + std::strerror(errno));
        size_ = static_cast<std::size_t>(facts.st_size);
        if (size_ == 0) return;
        void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
        if (mapped == MAP_FAILED) throw CacheError("cannot map " + file.string() + ": " + std::strerror(errno));
        data_ = static_cast<const char*>(mapped);
    }
    ~MappedFile()
    {
        if (data_) ::munmap(const_cast<char*>(data_), size_);
    }
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    std::string_view bytes() const { return {data_ ? data_ : "", data_ ? size_ : 0}; }

private:
    const char* data_ = nullptr;
    std::size_t size_ = 0;
};

// Why the ELF file at `file` is no whole library: its headers reach past its
// end (a copy cut short, a full disk). dlopen maps such a file and the
// process dies of SIGBUS when the loader touches the missing pages.
std::optional<std::string> truncation(const fs::path& file, const std::string& shown_as, const std::string& fix)
{
    auto found = elf_file_extent(file);
    if (!found) return std::nullopt;
    if (found->extent == 0) return shown_as + " is no ELF file (damaged); " + fix;
    if (found->extent <= found->size) return std::nullopt;
    return shown_as + " is truncated (" + std::to_string(found->size) + " bytes; its ELF headers reach " +
           std::to_string(found->extent) + "); " + fix;
}

}  // namespace

std::optional<HostKernel> load_host_library_kernel(const std::string& kernel, const fs::path& file,
                                                   const std::string& shown_as, std::string* note)
{
    // The bytes of a cache entry, an in-place build and a bundle were checked
    // against their digests already; a library given by path alone was not.
    if (auto truncated = truncation(file, shown_as, "run `cunumpy-kernels build`")) {
        if (note) *note = *truncated;
        return std::nullopt;
    }
    std::string error;
    // Never unloaded: an OpenMP build's runtime (libgomp, loaded with it)
    // keeps its idle worker threads after a call, and unmapping their code
    // under them crashes the process at the catalog's destruction.
    auto library = std::make_shared<util::DynamicLibrary>(
        util::DynamicLibrary::open_first({file.string()}, &error, /*keep_loaded=*/true));
    if (!library->loaded()) {
        if (note) *note = "its host library does not load: " + error;
        return std::nullopt;
    }
    auto version = static_cast<const std::int64_t*>(library->symbol("ck_host_abi_version"));
    auto description = static_cast<const char*>(library->symbol("ck_host_description"));
    if (!version || *version != abi_version || !description) {
        if (note) *note = shown_as + " was built for another version of the runtime; run `cunumpy-kernels build`";
        return std::nullopt;
    }
    for (auto& function : parse_host_library_description(description, shown_as)) {
        if (function.name != kernel) continue;
        if (!function.skip_reason.empty()) {
            if (note) *note = "its Pyccel version is not callable from C++: " + function.skip_reason;
            return std::nullopt;
        }
        auto entry = reinterpret_cast<Entry>(library->symbol(("ck_host__" + kernel).c_str()));
        if (!entry) break;
        auto shared = std::make_shared<const HostLibraryFunction>(std::move(function));
        int arity = static_cast<int>(shared->parameters.size());
        return HostKernel(
            [library, shared, entry](std::span<const Argument> args) { HostLibraryCall(*shared, args).run(entry); },
            arity);
    }
    if (note) *note = shown_as + " has no entry for kernel '" + kernel + "'; run `cunumpy-kernels build`";
    return std::nullopt;
}

std::optional<std::string> read_host_library(const HostLibraryFile& library, std::string* note)
{
    std::string bytes = util::read_file(library.file);
    if (library.in_place_sha256.empty() || sha256_hex(bytes) == library.in_place_sha256) return bytes;
    if (note)
        *note = library.file.string() +
                " changed since `build --in-place` made it (damaged or replaced); run `cunumpy-kernels build "
                "--in-place`";
    return std::nullopt;
}

std::optional<HostKernel> load_host_library_bytes(const std::string& kernel, std::string_view bytes,
                                                  const std::string& shown_as, std::string* note)
{
    util::UniqueFd file(::memfd_create(("ck-host-" + kernel).c_str(), MFD_CLOEXEC));
    if (!file.valid()) {
        if (note) *note = "cannot create a memory file for " + shown_as + ": " + std::strerror(errno);
        return std::nullopt;
    }
    std::string path = "/proc/self/fd/" + std::to_string(file.get());
    util::write_all(file.get(), bytes, path);
    auto host = load_host_library_kernel(kernel, path, shown_as, note);
    // Whenever the library loaded, even one that cannot serve the kernel: a
    // loaded library stays loaded, and a later memory file given this number
    // would be taken for it.
    if (void* loaded = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
        ::dlclose(loaded);
        file.release();
    }
    return host;
}

std::optional<HostLibraryFile> find_host_library(const KernelSource& source, const std::optional<fs::path>& root,
                                                 std::string* note, std::string* absent)
{
    if (source.host.empty() || source.host.front().kind != "pyccel") return std::nullopt;
    std::string entry_note, entry_absent, in_place_absent;
    auto library = root ? entry_library(source, *root, &entry_note, &entry_absent) : std::nullopt;
    if (!library) library = in_place_library(source, &in_place_absent);
    if (!library && note && !entry_note.empty()) *note = entry_note;
    // An in-place build of the module says more than a cache that never had one.
    if (!library && absent) *absent = in_place_absent.empty() ? entry_absent : in_place_absent;
    return library;
}

std::optional<HostLibraryFile> find_host_library(const KernelSource& source, const Config& config, std::string* note,
                                                 std::string* absent)
{
    if (source.host.empty() || source.host.front().kind != "pyccel") return std::nullopt;
    std::optional<fs::path> root;
    std::string why;
    try {
        root = planned_cache_location(cache_name_of(config, source.top_package), config.cache_dir).root;
    } catch (const Error& error) {
        why = "no cache to look in: " + std::string(error.what());
    }
    auto library = find_host_library(source, root, note, absent);
    if (!library && note && note->empty()) *note = why;
    return library;
}

std::optional<HostKernel> cached_host_kernel(const KernelSource& source, const Config& config, std::string* note,
                                             std::string* absent)
{
    try {
        auto library = find_host_library(source, config, note, absent);
        if (!library) return std::nullopt;
        if (library->in_place_sha256.empty())
            return load_host_library_kernel(source.name, library->file, library->file.string(), note);
        auto bytes = read_host_library(*library, note);
        if (!bytes) return std::nullopt;
        return load_host_library_bytes(source.name, *bytes, library->file.string(), note);
    } catch (const Error& error) {
        // An entry or in-place build removed or rewritten while it was read:
        // the kernel keeps what the application attaches.
        if (note) *note = "its cached host library cannot be read: " + std::string(error.what());
        return std::nullopt;
    }
}

std::optional<std::string> host_library_note(const KernelSource& source, const fs::path& extension)
{
    std::string name = extension.filename().string();
    fs::path library = extension.parent_path() / (name.substr(0, name.find('.')) + std::string(host_library_suffix));
    std::error_code absent;
    if (!fs::is_regular_file(library, absent)) return std::nullopt;  // an entry made before host libraries
    try {
        if (auto truncated = truncation(library, library.string(),
                                        "run `cunumpy-kernels cache verify --fix`, then `cunumpy-kernels build`"))
            return *truncated;
        MappedFile mapped(library);
        auto version = read_elf_object(mapped.bytes(), "ck_host_abi_version");
        auto description = read_elf_object(mapped.bytes(), "ck_host_description");
        std::int64_t found = 0;
        if (version && version->size() == sizeof found) std::memcpy(&found, version->data(), sizeof found);
        if (found != abi_version || !description)
            return library.string() +
                   " is no host library of this version of the runtime; run `cunumpy-kernels build`, or "
                   "`cunumpy-kernels cache verify --fix` if it was damaged";
        std::string text = description->substr(0, description->find('\0'));
        for (const auto& function : parse_host_library_description(text, library.string()))
            if (function.name == source.name)
                return function.skip_reason.empty()
                           ? ""
                           : "its Pyccel version is not callable from C++: " + function.skip_reason;
        return std::nullopt;
    } catch (const Error& error) {
        return "its cached host library cannot be read: " + std::string(error.what());
    }
}

}  // namespace ck
