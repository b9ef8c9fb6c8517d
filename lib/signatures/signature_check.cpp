// Comparing the declarations of one kernel, in cunumpy's words.
#include "cunumpy_kernels/error.hpp"
#include "util/json_text.hpp"
#include "signatures/signatures.hpp"

#include "signatures/kernel_entry.hpp"
#include "signatures/kernel_declaration.hpp"
#include "signatures/cunumpy_readability.hpp"
#include "util/file_util.hpp"
#include "util/side_thread.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <optional>

namespace ck {

namespace fs = std::filesystem;

namespace {

using Kind = SignatureFinding::Kind;

/// A declaration to read: which file, in which language, in what role.
struct Source {
    std::string role;
    fs::path file;
    enum class Language { python_module, python_stub, cuda } language;
};

std::string joined(const std::vector<std::string>& names)
{
    std::string text;
    for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
    return "(" + text + ")";
}

std::vector<Source> sources_of(const KernelSource& kernel)
{
    std::vector<Source> sources = {{"host kernel", kernel.host.front().file, Source::Language::python_module}};
    if (kernel.cuda_file) sources.push_back({"CUDA kernel", *kernel.cuda_file, Source::Language::cuda});
    for (std::size_t i = 1; i < kernel.host.size(); ++i)
        sources.push_back({kernel.host[i].kind + " version", kernel.host[i].file, Source::Language::python_module});
    for (const auto& host : kernel.host) {
        if (host.kind != "pyccel") continue;
        fs::path stub = kernel.folder / "__pyccel__" / (host.file.stem().string() + ".pyi");
        std::error_code error;
        if (fs::is_regular_file(stub, error)) sources.push_back({"Pyccel stub", stub, Source::Language::python_stub});
    }
    return sources;
}

// A Python declaration depends on the file's bytes alone: a record answers
// for unchanged files without reading them.
SignatureRead read_python(const Source& source, const std::string& name, SourceRecord& record)
{
    PythonDefinition which =
        source.language == Source::Language::python_stub ? PythonDefinition::first : PythonDefinition::last;
    auto read = [&](const std::string& text) { return signatures::to_json(read_python_signature(text, name, which)); };
    std::string question =
        util::json_text(nlohmann::json::array({"signature/1", name, which == PythonDefinition::first}));
    return signatures::signature_read_of(record.fact(source.file, question, read));
}

SignatureRead read_source(const Source& source, const std::string& text, const KernelSource& kernel,
                          const Config& config, signatures::HeaderCache* header_cache, SourceRecord* record,
                          const std::string& sha256)
{
    const std::string& name = kernel.name;
    switch (source.language) {
        case Source::Language::cuda:
            // A `KERNEL` macro may come from a project header, as the build finds it.
            return signatures::read_kernel_declaration(kernel, config, text, header_cache, record, sha256).read;
        case Source::Language::python_stub:
            return read_python_signature(text, name, PythonDefinition::first);
        case Source::Language::python_module:
            break;
    }
    return read_python_signature(text, name, PythonDefinition::last);
}

class KernelCheck {
public:
    KernelCheck(const KernelSource& kernel, const Config& config, const CunumpyVersion& version,
                signatures::HeaderCache* headers, SourceRecord* record)
        : kernel_(kernel),
          config_(config),
          version_(version),
          headers_(headers),
          record_(record),
          prefix_("kernel '" + kernel.name + "': ")
    {
        result_.module = kernel.module;
        result_.name = kernel.name;
    }

    KernelSignatures run()
    {
        if (kernel_.host.empty()) return std::move(result_);
        std::vector<Source> sources = sources_of(kernel_);
        if (sources.size() < 2) return std::move(result_);
        for (const auto& source : sources) read(source);
        return std::move(result_);
    }

private:
    void read(const Source& source)
    {
        Signature signature{source.role, source.file, {}};
        bool recorded = record_ && source.language != Source::Language::cuda;
        std::string text, text_sha256;
        try {
            if (recorded)
                signature.read = read_python(source, kernel_.name, *record_);
            else
                text = record_ ? record_->read(source.file, &text_sha256) : util::read_file(source.file);
        } catch (const Error& error) {
            signature.read = {SignatureRead::Status::unreadable, 0, {}, error.what()};
            add(Kind::unreadable_file, prefix_ + "cannot read the " + source.role + ": " + error.what(), {signature});
            result_.declarations.push_back(std::move(signature));
            return;
        }
        if (!recorded) signature.read = read_source(source, text, kernel_, config_, headers_, record_, text_sha256);
        result_.declarations.push_back(signature);
        if (signature.read.status != SignatureRead::Status::found) {
            // Which branch runs is the program's business: said, not called a mismatch.
            Kind kind = signature.read.conditional ? Kind::conditional : Kind::unreadable;
            add(kind, prefix_ + "cannot read the " + source.role + ": " + signature.read.reason, {signature});
            return;
        }
        if (source.language == Source::Language::cuda) check_cunumpy_reading(signature, text, text_sha256);
        const Signature& host = result_.declarations.front();
        if (&host == &result_.declarations.back() || host.read.status != SignatureRead::Status::found) return;
        if (host.read.parameters != signature.read.parameters)
            add(Kind::mismatch,
                prefix_ + "the host kernel takes " + joined(host.read.parameters) + ", the " + source.role + " " +
                    joined(signature.read.parameters),
                {host, signature});
    }

    void add(Kind kind, std::string message, std::vector<Signature> declarations)
    {
        bool warning = kind == Kind::cunumpy_unreadable || kind == Kind::cunumpy_mismatch || kind == Kind::conditional;
        result_.findings.push_back({kind,
                                    warning ? SignatureFinding::Severity::warning : SignatureFinding::Severity::error,
                                    std::move(message), std::move(declarations)});
    }

    std::string cunumpy_name()
    {
        if (version_text_.empty()) {
            std::string version = version_ ? version_() : "";
            version_text_ =
                "cunumpy " + (version.empty() ? std::string(signatures::cunumpy_reference_version) : version);
        }
        return version_text_;
    }

    // The program loads the kernel with cunumpy, whose reader is another:
    // what it cannot read, or reads otherwise, fails there though all agree here.
    void check_cunumpy_reading(const Signature& cuda, const std::string& text, const std::string& text_sha256)
    {
        auto reading = signatures::read_as_cunumpy_recorded(
            text, kernel_.name, configured_template_args(kernel_, config_), cuda.read.line, record_, text_sha256);
        Signature at = cuda;
        if (reading.line > 0) at.read.line = reading.line;
        if (reading.raises) {
            add(Kind::cunumpy_unreadable, prefix_ + cunumpy_name() + " cannot read this declaration: " + reading.why,
                {at});
        } else if (reading.names != cuda.read.parameters) {
            add(Kind::cunumpy_mismatch,
                prefix_ + cunumpy_name() + " reads the declaration at line " + std::to_string(reading.line) +
                    ", which takes " + joined(reading.names) + ", not " + joined(cuda.read.parameters) +
                    " as the compiler does (it reads the first `__global__ void " + kernel_.name +
                    "(` it finds, in `#if 0` or a prototype too), and its check against the host kernel fails: "
                    "remove that declaration or give it the definition's names",
                {at});
        }
    }

    const KernelSource& kernel_;
    const Config& config_;
    const CunumpyVersion& version_;
    signatures::HeaderCache* headers_;
    SourceRecord* record_;
    std::string version_text_;
    std::string prefix_;
    KernelSignatures result_;
};

}  // namespace

const char* to_string(SignatureAgreement agreement)
{
    switch (agreement) {
        case SignatureAgreement::nothing_to_compare:
            return "-";
        case SignatureAgreement::match:
            return "match";
        case SignatureAgreement::mismatch:
            return "mismatch";
        case SignatureAgreement::unreadable:
            return "unreadable";
    }
    return "?";
}

SignatureAgreement KernelSignatures::agreement() const
{
    auto has = [this](Kind kind) {
        return std::any_of(findings.begin(), findings.end(),
                           [kind](const SignatureFinding& f) { return f.kind == kind; });
    };
    if (has(Kind::mismatch)) return SignatureAgreement::mismatch;
    if (has(Kind::unreadable) || has(Kind::unreadable_file) || has(Kind::conditional))
        return SignatureAgreement::unreadable;
    return declarations.size() < 2 ? SignatureAgreement::nothing_to_compare : SignatureAgreement::match;
}

KernelSignatures check_kernel_signatures(const KernelSource& kernel, const Config& config,
                                         const CunumpyVersion& cunumpy_version, signatures::HeaderCache* headers,
                                         SourceRecord* record)
{
    return KernelCheck(kernel, config, cunumpy_version, headers, record).run();
}

std::vector<KernelSignatures> check_signatures(const std::vector<KernelSource>& kernels, const Config& config,
                                               const CunumpyVersion& cunumpy_version, signatures::HeaderCache* headers,
                                               SourceRecord* record)
{
    std::vector<std::optional<KernelSignatures>> checked(kernels.size());
    std::vector<std::exception_ptr> failed(kernels.size());
    std::atomic<std::size_t> next{0};
    // Each thread takes the next kernel not taken: kernels differ in size.
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < kernels.size();) {
            try {
                checked[i] = check_kernel_signatures(kernels[i], config, cunumpy_version, headers, record);
            } catch (...) {
                failed[i] = std::current_exception();
            }
        }
    };
    if (kernels.size() > 1)
        util::run_beside(work, work);  // without a thread, this one takes them all
    else
        work();
    std::vector<KernelSignatures> results;
    results.reserve(kernels.size());
    for (std::size_t i = 0; i < kernels.size(); ++i) {
        if (failed[i]) std::rethrow_exception(failed[i]);  // the first in order, as one thread would
        results.push_back(std::move(*checked[i]));
    }
    return results;
}

}  // namespace ck
