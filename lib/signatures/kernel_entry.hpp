// Which function of a kernel's CUDA source is its entry: `<name>`, or for a
// template `__global__` the instantiation cunumpy compiles through
// `template_args` (CuPy's RawModule name expression `<name><args>`). One
// answer for `build`, `status` and the runtime, so that keys, compiles and
// launches name the same function.
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/package.hpp"
#include "source/source_record.hpp"
#include "signatures/kernel_declaration.hpp"
#include "source/project_headers.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ck {

struct KernelEntry {
    /// The name expression NVRTC lowers and nvcc instantiates: "push", or "scale<double, 3>".
    std::string expression;
    /// The template arguments, empty for a plain entry; part of every key.
    std::vector<std::string> template_args;
    /// Where they came from: "template-args in <pyproject.toml>" or "the explicit instantiation at line N"; "" for
    /// none.
    std::string origin;

    bool is_template() const { return !template_args.empty(); }
};

/// The template arguments `config` sets for `kernel` (`template-args`, by
/// dotted module first, then by kernel name), or nullptr.
const std::vector<std::string>* configured_template_args(const KernelSource& kernel, const Config& config);

/// The entry of `kernel` whose CUDA source text is `source`. A template
/// entry takes the arguments of `template-args`, else those of the one
/// explicit instantiation in the source. A declaration the signature reader
/// cannot read is taken as a plain entry (the compiler reports what is
/// wrong), with the configured arguments if any.
///
/// Throws SourceError naming the file and line when the entry is a template
/// without arguments (naming the `template-args` key to set), when several
/// explicit instantiations leave the choice open, when `template-args` gives
/// another number of arguments than the template has parameters, and when
/// `template-args` names a kernel that is not a template. `headers`,
/// `record` and `source_sha256` as for signatures::read_kernel_declaration.
KernelEntry kernel_entry(const KernelSource& kernel, const Config& config, std::string_view source,
                         signatures::HeaderCache* headers = nullptr, SourceRecord* record = nullptr,
                         std::string_view source_sha256 = {});

/// kernel_entry from a reading of the declaration made already (the
/// runtime reads it once for the entry and the signature). Throws as
/// kernel_entry.
KernelEntry kernel_entry_of(const KernelSource& kernel, const Config& config,
                            const signatures::KernelDeclaration& found);

}  // namespace ck
