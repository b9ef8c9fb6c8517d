// What `build`, `status` and `check-signatures` take from the reading of a
// kernel's `__global__` declaration, read once per content: a SourceRecord
// remembers it under the CUDA source's digest together with the project
// headers the reading opened, and gives it back while each of them still
// resolves to the same file with the same content (the rule of ccache's
// manifests). Reading a kernel with its headers was most of a warm check
// after the Python side was recorded (bench/RESULTS.md, issue 14).
#pragma once

#include "source/source_record.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/package.hpp"
#include "cunumpy_kernels/signature_read.hpp"
#include "signatures/cuda_declaration_scanner.hpp"
#include "signatures/cuda_signature_reader.hpp"
#include "signatures/cunumpy_readability.hpp"
#include "source/project_headers.hpp"

#include <functional>
#include <string_view>
#include <vector>

namespace ck::signatures {

/// read_cuda_declaration of a kernel, reduced to what its users need.
struct KernelDeclaration {
    SignatureRead read;  ///< as read_cuda_signature_with reports it
    /// read.status == found: of the chosen declaration (the definition, else the first).
    bool is_template = false;
    int line = 0;
    std::vector<TemplateParameter> template_parameters;
    std::vector<ExplicitInstantiation> instantiations;  ///< of the name, in source order
};

/// What `found` (a read_cuda_declaration) gives its users.
KernelDeclaration reduced(const CudaKernelDeclaration& found);

/// A project header a declaration reading asked for.
struct HeaderOpening {
    std::string spelled;   ///< as the directive spells it, quotes or brackets included
    std::string includer;  ///< the file that includes it (canonical), "" for the main file
    std::string path;      ///< canonical path opened; "" when none was (not found, a bound, unreadable)
    std::string sha256;    ///< of the text read; "" when none was
};

/// What a declaration reading of `kernel` is remembered under, beside its
/// source's content: the kernel, its CUDA file and the header folders of
/// `config` (another configuration finds other headers).
std::string declaration_question(const KernelSource& kernel, const Config& config);

/// read_cuda_declaration(source, name, &headers), appending to `opened` each
/// header the reading asks for (a header included again, once). `tokens`,
/// when given, is lex_cpp(source): the caller lexed it already.
CudaKernelDeclaration read_cuda_declaration_logged(std::string_view source, const std::string& name,
                                                   ProjectHeaders& headers, std::vector<HeaderOpening>& opened,
                                                   const std::vector<CppToken>* tokens = nullptr);

/// Whether a reading that opened `opened` would open the same headers with
/// the same content now: each is found where it was (`canonical` of the
/// path `headers` finds) with the same digest (`digest` of that path), and
/// each not opened then is still not found. SourceError from either
/// function counts as changed.
bool opens_the_same(const std::vector<HeaderOpening>& opened, const ProjectHeaders& headers,
                    const std::function<std::string(const std::filesystem::path&)>& canonical,
                    const std::function<std::string(const std::string&)>& digest);

/// Reads the declaration of `kernel` in its CUDA source text `source`, with
/// the project headers `project_headers_of(kernel, config, headers)` finds.
/// With `record`, the reading is taken from it when the source's digest is
/// the same and every header the recorded reading opened is found at the
/// same path with the same digest (and every header it missed is still
/// missing); else read and remembered. Never throws.
/// `source_sha256`, when known, is the digest of `source` (spares hashing it again).
KernelDeclaration read_kernel_declaration(const KernelSource& kernel, const Config& config, std::string_view source,
                                          HeaderCache* headers = nullptr, SourceRecord* record = nullptr,
                                          std::string_view source_sha256 = {});

/// A SignatureRead as the record keeps it, and back.
nlohmann::json to_json(const SignatureRead& read);
SignatureRead signature_read_of(const nlohmann::json& json);

/// read_as_cunumpy(source, kernel.name, template_args, hint_line), taken
/// from `record` for a source of the same digest (it reads no header).
CunumpyReading read_as_cunumpy_recorded(std::string_view source, const std::string& name,
                                        const std::vector<std::string>* template_args, int hint_line,
                                        SourceRecord* record, std::string_view source_sha256 = {});

}  // namespace ck::signatures
