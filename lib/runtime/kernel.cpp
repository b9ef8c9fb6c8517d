// Kernel: the dispatch between host kernel, CUDA kernel and fallback.
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/kernel.hpp"
#include "cunumpy_kernels/selection.hpp"
#include "signatures/signatures.hpp"

#include "runtime/artifact_cache.hpp"
#include "runtime/cached_host.hpp"
#include "runtime/cuda_kernel.hpp"
#include "runtime/kernel_state.hpp"
#include "runtime/selection_state.hpp"
#include "util/byte_text.hpp"
#include "util/file_util.hpp"
#include "util/library_surface.hpp"

#include <cstdio>

#include <algorithm>

namespace ck {

namespace {

bool any_on_device(std::span<const Argument> args)
{
    return std::any_of(args.begin(), args.end(), [](const Argument& a) { return a.on_device(); });
}

void run_host(const Kernel::State& s, const HostKernel& host, const std::string& implementation,
              std::span<const Argument> args)
{
    try {
        util::run_caller_code([&] { host(args); });
    } catch (const ArgumentError& error) {
        throw ArgumentError("kernel '" + s.name + "' (host implementation '" + implementation + "'): " + error.what());
    }
}

// The kernel a device call runs when there is no CUDA kernel, after the
// checks of cunumpy's _device_kernel: an explicit CUDA choice never falls back.
void require_fallback(const Kernel::State& s)
{
    if (cuda_explicitly_selected())
        throw ImplementationError("kernel '" + s.name +
                                  "' has no 'cuda' implementation (explicitly selected device "
                                  "implementation)");
    if (s.options.missing_cuda == MissingCuda::raise)
        throw MissingKernelError("No CUDA version of kernel '" + s.name + "'" +
                                 (s.cuda_path.empty() ? std::string() : " (expected " + s.cuda_path.string() + ")") +
                                 "; write it, or open the catalog with missing_cuda = fallback");
}

// Kernel::call inside the library surface.
void call_inside(Kernel::State& s, std::span<const Argument> args, const Launch& launch)
{
    bool on_device = s.options.dispatch == Dispatch::arrays ? any_on_device(args) : get_backend() == Backend::cuda;
    if (on_device && s.cuda) {
        s.cuda->launch(args, launch, s.options.block_size, s.options.n_threads_from);
        return;
    }
    std::string implementation;
    if (!on_device) {
        const HostKernel& host = s.host.selected(s.warn, &implementation);
        run_host(s, host, implementation, args);
        return;
    }
    require_fallback(s);
    const HostKernel& host = s.host.selected(s.warn, &implementation);
    // Warned and counted once the arrays are on the host: a copy that fails
    // ran no fallback.
    auto fallback = [&](std::span<const Argument> copied) {
        if (!s.warned_fallback.exchange(true))
            s.warn("No CUDA version of kernel '" + s.name +
                   "': calling the host kernel, which copies its "
                   "arrays to the host and back at every call.");
        s.counts.fallbacks += 1;
        run_host(s, host, implementation, copied);
    };
    if (!any_on_device(args)) return fallback(args);
    const Gpu& gpu = s.gpu ? *s.gpu : *Gpu::system();
    run_with_host_copies(HostKernel(fallback), args, s.options.outputs, gpu, s.counts);
}

}  // namespace

void write_warning_line(const std::string& message)
{
    // One fputs of the whole line: stderr is unbuffered, and lines of
    // threads or ranks sharing it must not interleave mid-line.
    std::string line = "cunumpy-kernels: warning: " + util::printable(message) + "\n";
    std::fputs(line.c_str(), stderr);
}

WarningSink warning_sink(const KernelOptions& options)
{
    if (!options.warn) return write_warning_line;
    return [sink = options.warn](const std::string& message) {
        util::run_caller_code([&] { sink(util::printable(message)); });
    };
}

TransferCounts& TransferCounts::operator+=(const TransferCounts& other)
{
    fallbacks += other.fallbacks;
    to_host += other.to_host;
    to_host_bytes += other.to_host_bytes;
    to_device += other.to_device;
    to_device_bytes += other.to_device_bytes;
    return *this;
}

Kernel::State::State(std::string name_, KernelOptions options_)
    : name(std::move(name_)), options(std::move(options_)), host(name), warn(warning_sink(options))
{
}

Kernel::Kernel(std::string name, KernelOptions options)
    : state_(std::make_unique<State>(std::move(name), std::move(options)))
{
}

Kernel::Kernel(std::unique_ptr<State> state) : state_(std::move(state)) {}
Kernel::Kernel(Kernel&&) noexcept = default;
Kernel& Kernel::operator=(Kernel&&) noexcept = default;
Kernel::~Kernel() = default;

Kernel make_kernel(const KernelSource& source, KernelOptions options, const Config& config,
                   std::shared_ptr<ArtifactCache> cache, std::shared_ptr<Gpu> gpu, std::vector<std::string>* notes)
{
    auto state = std::make_unique<Kernel::State>(source.name, std::move(options));
    state->gpu = gpu;
    state->cuda_path = source.cuda_file ? *source.cuda_file : source.folder / cuda_file_name(source.name, config);
    state->source = source;
    state->config = config;
    if (source.cuda_file)
        state->cuda = std::make_shared<CudaKernel>(source, config, std::move(cache), std::move(gpu), state->warn);
    std::string note, absent;
    if (auto cached = cached_host_kernel(source, config, &note, &absent)) {
        state->host.attach_cached(std::move(*cached));
        return KernelFactory::make(std::move(state));
    }
    state->host.set_no_cached_reason(note.empty() ? absent : note);
    if (!note.empty()) {
        note = "kernel '" + source.name + "': the cache's Pyccel version is not attached: " + note;
        if (notes)
            notes->push_back(std::move(note));
        else
            state->warn(note);
    }
    return KernelFactory::make(std::move(state));
}

namespace {

Kernel folder_kernel(const std::filesystem::path& folder, KernelOptions& options, const LoadOptions& load)
{
    Config config = load.config ? *load.config : load_config(folder);
    auto kernels = find_kernels({folder}, config);
    std::error_code error;
    if (kernels.size() != 1 || !std::filesystem::equivalent(kernels.front().folder, folder, error))
        throw UsageError(folder.string() + " is not a kernel folder (<name>/<name>" + config.host_suffix +
                         ".py); use KernelCatalog::from_package for packages");
    const KernelSource& source = kernels.front();
    std::shared_ptr<Gpu> gpu = load.gpu ? load.gpu : Gpu::system();
    std::shared_ptr<ArtifactCache> cache;
    if (source.cuda_file)
        cache = std::make_shared<ArtifactCache>(config, cache_name_of(config, source.top_package), load.read_only_cache,
                                                warning_sink(options));
    return make_kernel(source, std::move(options), config, std::move(cache), std::move(gpu));
}

}  // namespace

Kernel Kernel::from_folder(const std::filesystem::path& folder, KernelOptions options, LoadOptions load)
{
    return util::at_library_surface("Kernel::from_folder", [&] { return folder_kernel(folder, options, load); });
}

const std::string& Kernel::name() const { return state_->name; }
bool Kernel::has_cuda() const { return state_->cuda != nullptr; }
const std::filesystem::path& Kernel::cuda_path() const { return state_->cuda_path; }
const KernelOptions& Kernel::options() const { return state_->options; }
void Kernel::set_n_threads_from(NThreadsFrom n_threads_from)
{
    state_->options.n_threads_from = std::move(n_threads_from);
}
void Kernel::set_block_size(Dim3 block_size) { state_->options.block_size = block_size; }
void Kernel::attach_host(HostKernel host) { state_->host.attach_plain(std::move(host)); }

void Kernel::attach_host(const std::string& implementation, HostKernel host)
{
    state_->host.attach(implementation, std::move(host));
}

std::vector<std::string> Kernel::implementations() const
{
    auto names = state_->host.names();
    if (has_cuda()) names.emplace_back("cuda");
    return names;
}

std::string Kernel::selected(bool device) const
{
    if (device) {
        if (has_cuda()) return "cuda";
        require_fallback(*state_);
        return "host";
    }
    std::string name;
    state_->host.selected(state_->warn, &name);
    return name;
}

void Kernel::call(std::span<const Argument> args, const Launch& launch)
{
    util::at_library_surface("Kernel::call", [&] { call_inside(*state_, args, launch); });
}

bool Kernel::compile()
{
    if (!state_->cuda) return false;
    util::at_library_surface("Kernel::compile", [&] { state_->cuda->load(); });
    return true;
}

std::optional<CudaLoadInfo> Kernel::load_info() const
{
    if (!state_->cuda) return std::nullopt;
    return util::at_library_surface("Kernel::load_info", [&] { return state_->cuda->load_info(); });
}

std::vector<std::string> Kernel::cuda_parameters() const
{
    std::vector<std::string> names;
    if (!state_->cuda) return names;
    return util::at_library_surface("Kernel::cuda_parameters", [&] {
        for (const auto& p : state_->cuda->parameters()) names.push_back(p.name);
        return names;
    });
}

std::optional<std::vector<std::string>> Kernel::host_parameters() const
{
    if (!state_->source || state_->source->host.empty()) return std::nullopt;
    return util::at_library_surface("Kernel::host_parameters", [&]() -> std::optional<std::vector<std::string>> {
        SignatureRead read = read_python_signature(util::read_file(state_->source->host.front().file), state_->name);
        if (read.status != SignatureRead::Status::found) return std::nullopt;
        return read.parameters;
    });
}

std::vector<std::string> Kernel::signature_mismatches() const
{
    std::vector<std::string> messages;
    if (!state_->source) return messages;
    return util::at_library_surface("Kernel::signature_mismatches", [&] {
        for (const auto& finding : check_kernel_signatures(*state_->source, state_->config).findings)
            if (finding.kind == SignatureFinding::Kind::mismatch) messages.push_back(finding.message);
        return messages;
    });
}

TransferCounts Kernel::transfers() const { return state_->counts.snapshot(); }

// --- typed host kernels ------------------------------------------------------

namespace detail {

void throw_argument_count(std::size_t expected, std::size_t got)
{
    throw ArgumentError("the host kernel takes " + std::to_string(expected) + " arguments, got " + std::to_string(got));
}

void* host_array_data(const Argument& argument, std::size_t index, ElementType type, bool need_contiguous)
{
    std::string what = "argument " + std::to_string(index);
    if (!argument.is_array() || argument.type() != type)
        throw ArgumentError(what + " must be a host array of " + to_string(type) + ", got " + argument.describe());
    if (argument.array().memory != Memory::host)
        throw ArgumentError(what + " must be a host array, got " + argument.describe() +
                            "; host kernels take host arrays (missing_cuda = fallback copies device arrays)");
    if (need_contiguous && !argument.array().c_contiguous())
        throw ArgumentError(what + " must be C-contiguous for a pointer parameter; take an ArrayView to read strides");
    return argument.array().data;
}

const void* struct_data(const Argument& argument, std::size_t index, std::size_t size)
{
    if (!argument.is_struct() || argument.structure().size != size)
        throw ArgumentError("argument " + std::to_string(index) + " must be a struct of " + std::to_string(size) +
                            " bytes, got " + argument.describe());
    return argument.structure().data;
}

}  // namespace detail

}  // namespace ck
