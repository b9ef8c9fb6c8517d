#include "runtime/bundle_format.hpp"
#include "util/stale_retry.hpp"
#include "util/json_text.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <stdexcept>

namespace ck {

using nlohmann::json;

namespace {

constexpr const char* parameter_kinds[] = {"scalar",     "pointer",     "void_pointer",
                                           "array_view", "carray_view", "structure"};
constexpr std::size_t element_type_count = static_cast<std::size_t>(ElementType::complex128) + 1;

json parameter_json(const KernelParameter& p)
{
    return {{"name", p.name},
            {"ctype", p.ctype},
            {"kind", parameter_kinds[static_cast<int>(p.kind)]},
            {"element", to_string(p.element)},
            {"view_ndim", p.view_ndim}};
}

KernelParameter parameter_of(const json& j)
{
    KernelParameter p;
    p.name = j.at("name").get<std::string>();
    p.ctype = j.at("ctype").get<std::string>();
    p.view_ndim = j.at("view_ndim").get<int>();
    std::string kind = j.at("kind").get<std::string>(), element = j.at("element").get<std::string>();
    std::size_t k = 0, e = 0;
    while (k < std::size(parameter_kinds) && kind != parameter_kinds[k]) ++k;
    while (e < element_type_count && element != to_string(static_cast<ElementType>(e))) ++e;
    if (k == std::size(parameter_kinds) || e == element_type_count)
        throw std::invalid_argument("parameter '" + p.name + "' has an unknown kind or element type");
    p.kind = static_cast<ParameterKind>(k);
    p.element = static_cast<ElementType>(e);
    return p;
}

json artifact_json(const BundleArtifact& a)
{
    return {{"target", a.target}, {"key", a.key},   {"entry_symbol", a.entry_symbol},
            {"offset", a.offset}, {"size", a.size}, {"sha256", a.sha256},
            {"inputs", a.inputs}};
}

BundleArtifact artifact_of(const json& a)
{
    return {a.at("target").get<std::string>(),
            a.at("key").get<std::string>(),
            a.at("entry_symbol").get<std::string>(),
            a.at("offset").get<std::uint64_t>(),
            a.at("size").get<std::uint64_t>(),
            a.at("sha256").get<std::string>(),
            a.at("inputs")};
}

json kernel_json(const BundleKernel& k)
{
    json artifacts = json::array();
    for (const auto& a : k.artifacts) artifacts.push_back(artifact_json(a));
    json parameters = nullptr;
    if (k.parameters) {
        parameters = json::array();
        for (const auto& p : *k.parameters) parameters.push_back(parameter_json(p));
    }
    return {{"name", k.name},
            {"module", k.module},
            {"folder", k.folder.string()},
            {"cuda_path", k.cuda_path.string()},
            {"cuda", k.cuda},
            {"parameters", parameters},
            {"signature_error", k.signature_error},
            {"artifacts", artifacts},
            {"host_library", k.host_library ? artifact_json(*k.host_library) : json(nullptr)},
            {"host_library_note", k.host_library_note}};
}

BundleKernel kernel_of(const json& j)
{
    BundleKernel k;
    k.name = j.at("name").get<std::string>();
    k.module = j.at("module").get<std::string>();
    k.folder = j.at("folder").get<std::string>();
    k.cuda_path = j.at("cuda_path").get<std::string>();
    k.cuda = j.at("cuda").get<bool>();
    k.signature_error = j.at("signature_error").get<std::string>();
    if (!j.at("parameters").is_null()) {
        k.parameters.emplace();
        for (const auto& p : j.at("parameters")) k.parameters->push_back(parameter_of(p));
    }
    for (const auto& a : j.at("artifacts")) k.artifacts.push_back(artifact_of(a));
    if (j.contains("host_library") && !j.at("host_library").is_null())
        k.host_library = artifact_of(j.at("host_library"));
    k.host_library_note = j.value("host_library_note", "");
    return k;
}

json header_json(const BundleCatalog& c, std::size_t data_size)
{
    json kernels = json::array();
    for (const auto& k : c.kernels) kernels.push_back(kernel_json(k));
    json toolkit = {{"root", c.toolkit.root}, {"found_by", c.toolkit.found_by}, {"compiler", c.toolkit.compiler}};
    return {{"tool", c.tool},
            {"created", c.created},
            {"paths", c.paths},
            {"targets", c.targets},
            {"compiler", c.compiler},
            {"options", c.options},
            {"python", c.python},
            {"cunumpy_include_dir", c.cunumpy_include_dir},
            {"cache_root", c.cache_root},
            {"toolkit", toolkit},
            {"host_platform", c.host_platform},
            {"data_size", data_size},
            {"kernels", kernels}};
}

BundleCatalog catalog_of(const json& j)
{
    BundleCatalog c;
    c.tool = j.at("tool").get<std::string>();
    c.created = j.at("created").get<std::string>();
    c.paths = j.at("paths").get<std::vector<std::string>>();
    c.targets = j.at("targets").get<std::vector<std::string>>();
    c.compiler = j.at("compiler").get<std::string>();
    c.options = j.at("options").get<std::vector<std::string>>();
    c.python = j.value("python", "");
    c.cunumpy_include_dir = j.value("cunumpy_include_dir", "");
    c.cache_root = j.value("cache_root", "");  // format 1 has neither
    c.host_platform = j.value("host_platform", "");
    if (j.contains("toolkit")) {
        const json& toolkit = j.at("toolkit");
        c.toolkit = {toolkit.at("root").get<std::string>(), toolkit.at("found_by").get<std::string>(),
                     toolkit.at("compiler").get<std::string>()};
    }
    for (const auto& k : j.at("kernels")) c.kernels.push_back(kernel_of(k));
    return c;
}

[[noreturn]] void refuse(const std::filesystem::path& file, const std::string& why)
{
    throw ArtifactError(file.string() + ": " + why);
}

// The magic line's four words: magic, version, header length, header SHA-256.
std::vector<std::string> magic_words(const std::string& bytes, const std::filesystem::path& file)
{
    std::size_t end = bytes.find('\n');
    if (bytes.rfind(std::string(bundle_magic) + " ", 0) != 0 || end == std::string::npos || end > 200)
        refuse(file, "not a cunumpy-kernels bundle (it does not start with '" + std::string(bundle_magic) +
                         "'); make one with cunumpy-kernels bundle --output FILE");
    std::vector<std::string> words;
    for (std::size_t start = 0; start <= end;) {
        std::size_t space = std::min(bytes.find(' ', start), end);
        words.push_back(bytes.substr(start, space - start));
        start = space + 1;
    }
    return words;
}

bool all_digits(const std::string& word, std::size_t max_length)
{
    return !word.empty() && word.size() <= max_length && word.find_first_not_of("0123456789") == std::string::npos;
}

void check_artifact_bounds(const BundleCatalog& catalog, std::uint64_t data_size, const std::filesystem::path& file)
{
    auto check = [&](const BundleKernel& k, const BundleArtifact& a) {
        if (a.offset > data_size || a.size > data_size - a.offset)
            refuse(file, "corrupt header: artifact " + k.name + "@" + a.target +
                             " lies outside the file; make "
                             "the bundle again (cunumpy-kernels bundle)");
    };
    for (const auto& k : catalog.kernels) {
        for (const auto& a : k.artifacts) check(k, a);
        if (k.host_library) check(k, *k.host_library);
    }
}

}  // namespace

std::string_view Bundle::artifact_bytes(const BundleArtifact& artifact) const
{
    return std::string_view(bytes).substr(data_offset + artifact.offset, artifact.size);
}

std::string Bundle::artifact_name(const BundleKernel& kernel, const BundleArtifact& artifact) const
{
    return file.string() + "#" + kernel.name + "@" + artifact.target;
}

void add_artifact_bytes(BundleArtifact& artifact, std::string_view bytes, std::string& data)
{
    artifact.offset = data.size();
    artifact.size = bytes.size();
    artifact.sha256 = sha256_hex(bytes);
    data.append(bytes);
}

std::string encode_bundle(const BundleCatalog& catalog, std::string_view data)
{
    std::string header = util::json_text(header_json(catalog, data.size()));
    std::string out = std::string(bundle_magic) + " " + std::to_string(bundle_format_version) + " " +
                      std::to_string(header.size()) + " " + sha256_hex(header) + "\n";
    out += header;
    out.append(data);
    return out;
}

Bundle decode_bundle(std::string bytes, const std::filesystem::path& file)
{
    std::vector<std::string> words = magic_words(bytes, file);
    if (words.size() != 4 || !all_digits(words[1], 6) || !all_digits(words[2], 12) || words[3].size() != 64)
        refuse(file, "corrupt magic line; make the bundle again (cunumpy-kernels bundle)");
    int version = std::stoi(words[1]);
    if (version < bundle_oldest_format_version || version > bundle_format_version)
        refuse(file, "bundle format version " + words[1] + ", but this library reads versions " +
                         std::to_string(bundle_oldest_format_version) + " to " + std::to_string(bundle_format_version) +
                         ": make the bundle again with the cunumpy-kernels tool of this library (cunumpy-kernels "
                         "bundle)");
    std::size_t header_start = bytes.find('\n') + 1;
    std::uint64_t header_size = std::stoull(words[2]);
    if (header_size > bytes.size() - header_start)
        refuse(file, "truncated: the header needs " + words[2] + " bytes, the file has " +
                         std::to_string(bytes.size() - header_start) + " after the magic line; copy it again");
    std::string_view header = std::string_view(bytes).substr(header_start, header_size);
    if (sha256_hex(header) != words[3])
        refuse(file,
               "corrupt header (its SHA-256 is not the one the magic line records); copy the bundle again or "
               "make it again (cunumpy-kernels bundle)");
    Bundle bundle;
    std::uint64_t data_size = 0;
    try {
        json j = util::parse_json(header);
        bundle.catalog = catalog_of(j);
        data_size = j.at("data_size").get<std::uint64_t>();
    } catch (const std::exception& error) {  // json's errors, and parameter_of's
        refuse(file,
               std::string("corrupt header: ") + error.what() + "; make the bundle again (cunumpy-kernels bundle)");
    }
    bundle.data_offset = header_start + header_size;
    if (bytes.size() - bundle.data_offset != data_size)
        refuse(file, (bytes.size() - bundle.data_offset < data_size ? "truncated" : "longer than its header says") +
                         std::string(": ") + std::to_string(data_size) + " bytes of artifacts expected, " +
                         std::to_string(bytes.size() - bundle.data_offset) + " present; copy it again");
    check_artifact_bounds(bundle.catalog, data_size, file);
    bundle.file = file;
    bundle.bytes = std::move(bytes);
    return bundle;
}

namespace {

struct BundleBytes {
    std::string bytes;
    struct stat info {};  ///< of the file the bytes came from
};

[[noreturn]] void refuse_read(const std::filesystem::path& file, int error)
{
    std::string why = "cannot read the bundle: " + util::errno_message(error);
    if (error == ESTALE)
        throw TransientReadError(file.string() + ": " + why + ", tried " + std::to_string(util::StaleRetry{}.tries) +
                                 " times: it is being replaced on a network file system; load it again");
    refuse(file, why);
}

// One open, one fstat, one read: what every rank of a large job pays.
BundleBytes read_bundle_bytes(const std::filesystem::path& file)
{
    util::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    BundleBytes read;
    if (!fd.valid() || ::fstat(fd.get(), &read.info) != 0) refuse_read(file, errno);
    read.bytes.assign(static_cast<std::size_t>(read.info.st_size), '\0');
    std::size_t done = 0;
    while (done < read.bytes.size()) {
        ssize_t n = ::read(fd.get(), read.bytes.data() + done, read.bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) refuse_read(file, errno);
        if (n == 0) break;
        done += static_cast<std::size_t>(n);
    }
    read.bytes.resize(done);
    return read;
}

// Whether the path now names another file than the one read: a bundle
// rewritten (renamed over) while this process read it.
bool replaced_since(const std::filesystem::path& file, const struct stat& read)
{
    struct stat now {};
    if (::stat(file.c_str(), &now) != 0) return false;
    return now.st_ino != read.st_ino || now.st_dev != read.st_dev || now.st_size != read.st_size ||
           now.st_mtim.tv_sec != read.st_mtim.tv_sec || now.st_mtim.tv_nsec != read.st_mtim.tv_nsec;
}

}  // namespace

Bundle read_bundle(const std::filesystem::path& file)
{
    auto read_once = [&] { return util::read_retrying_stale([&] { return read_bundle_bytes(file); }); };
    BundleBytes read = read_once();
    struct stat info = read.info;
    try {
        return decode_bundle(std::move(read.bytes), file);
    } catch (const ArtifactError&) {
        if (!replaced_since(file, info)) throw;
    }
    // Torn between the old file and the new one (NFS serves a reader cached
    // pages of the old one): the new one, read once more.
    return decode_bundle(read_once().bytes, file);
}

std::string host_platform()
{
    struct utsname name {};
    if (::uname(&name) != 0) return "unknown";
    std::string platform = std::string(name.sysname) + "-" + name.machine;
    for (char& c : platform) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return platform;
}

}  // namespace ck
