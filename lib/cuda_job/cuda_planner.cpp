#include "cuda_job/cuda_planner.hpp"
#include "util/json_text.hpp"

#include "cunumpy_kernels/error.hpp"

#include "compilers/python_probe.hpp"
#include "compilers/tool_probe.hpp"
#include "util/file_util.hpp"

#include <unordered_map>

namespace ck {

namespace fs = std::filesystem;

CunumpyDirResolver cunumpy_dir_resolver(const Config& config, const ToolProbe& probe, bool may_start_python)
{
    auto configured = config.cunumpy_include_dir;
    std::string python = config.python;
    const ToolProbe* remembered = &probe;
    return [configured, python, remembered, may_start_python]() -> std::optional<fs::path> {
        if (configured) return configured;
        if (may_start_python) return find_cunumpy_include_dir(python, *remembered);
        return find_remembered_cunumpy_include_dir(python, *remembered);
    };
}

CompilerFacts compiler_facts(const CudaCompiler& compiler)
{
    return {compiler.toolkit_include_dirs(), compiler.environment()};
}

namespace {

// Flags name folders relative to the working folder, as nvcc reads them:
// made absolute once, when the planner is made, so that a chdir between its
// reading and a later question (the key record's) cannot move them.
CompilerOptions parse_flags(const std::vector<std::string>& flags, const std::string& where)
{
    CompilerOptions options = parse_compiler_options(flags, where);
    for (auto& dir : options.include_dirs) dir = fs::absolute(dir);
    for (auto& dir : options.system_include_dirs) dir = fs::absolute(dir);
    return options;
}

std::vector<SearchDir> labelled(const std::vector<fs::path>& dirs, const std::string& prefix)
{
    std::vector<SearchDir> out;
    for (std::size_t i = 0; i < dirs.size(); ++i)
        out.push_back({dirs[i], "<" + prefix + ":" + std::to_string(i) + ">"});
    return out;
}

// Every option the planner passes on: the environment's prepended flags, the
// configured options, the environment's appended flags.
CompilerOptions all_options(const Config& config, const CompilerEnvironment& environment)
{
    CompilerOptions options = parse_flags(environment.prepend_flags, "NVCC_PREPEND_FLAGS");
    append_compiler_options(options, parse_flags(config.options, "compiler option"));
    append_compiler_options(options, parse_flags(environment.append_flags, "NVCC_APPEND_FLAGS"));
    return options;
}

// `config` with its include folders absolute, as parse_flags makes the options'.
Config with_absolute_dirs(Config config)
{
    for (auto& dir : config.include_dirs) dir = fs::absolute(dir);
    return config;
}

}  // namespace

std::optional<std::string> host_compiler_option(const Config& config, const CompilerEnvironment& environment)
{
    std::optional<std::string> ccbin;
    const std::vector<std::string> keyed = all_options(config, environment).keyed;
    for (std::size_t i = 0; i < keyed.size(); ++i) {
        for (const std::string name : {"-ccbin", "--compiler-bindir"}) {
            if (keyed[i] == name && i + 1 < keyed.size())
                ccbin = keyed[i + 1];
            else if (keyed[i].rfind(name + "=", 0) == 0)
                ccbin = keyed[i].substr(name.size() + 1);
        }
    }
    return ccbin;
}

std::string with_host_compiler(const std::string& compiler_identity, const std::string& host_identity)
{
    return host_identity.empty() ? compiler_identity : compiler_identity + "; " + host_identity;
}

CudaPlanner::CudaPlanner(const Config& config, std::string compiler_identity, CunumpyDirResolver cunumpy_dir,
                         CompilerFacts facts)
    : config_(with_absolute_dirs(config)),
      compiler_identity_(std::move(compiler_identity)),
      facts_(std::move(facts)),
      options_(all_options(config, facts_.environment)),
      targets_(cuda_targets(config)),
      scanner_(std::move(cunumpy_dir), &files_),
      headers_(nullptr, &files_)
{
}

// The compiler's order: the kernel's folder, the package's source root, the
// configured folders, the `-I` of the options; cunumpy's folder when needed.
IncludeSearch CudaPlanner::search_for(const KernelSource& kernel) const
{
    IncludeSearch search;
    search.dirs = {{kernel.folder, "<kernel>"}, {kernel.source_root, ""}};
    for (auto& dir : labelled(config_.include_dirs, "include")) search.dirs.push_back(std::move(dir));
    for (auto& dir : labelled(options_.include_dirs, "I")) search.dirs.push_back(std::move(dir));
    search.system_dirs = labelled(options_.system_include_dirs, "isystem");
    search.toolkit_dirs = facts_.toolkit_dirs;
    return search;
}

nlohmann::json CudaPlanner::rescanned_inputs(const CudaJob& job) const
{
    std::optional<fs::path> late = scanner_.late_dir_if_known();
    IncludeScanner fresh([late] { return late; });
    IncludeScan scan = fresh.scan(*job.kernel->cuda_file, job.source, search_for(*job.kernel), options_.pre_includes);
    const auto& source_sha256 = job.inputs.at("source").at("sha256").get_ref<const std::string&>();
    return cuda_key_inputs(*job.kernel, source_sha256, scan, compiler_identity_, job.target, options_.keyed,
                           facts_.environment, job.entry);
}

PlannedKernel CudaPlanner::read_kernel(const KernelSource& kernel)
{
    PlannedKernel planned;
    if (!kernel.cuda_file) throw SourceError("kernel '" + kernel.name + "' has no CUDA source");
    // Read through the record, which keeps the readings remembered under its digest.
    std::string source =
        record_ ? record_->read(*kernel.cuda_file, &planned.source_sha256) : util::read_file(*kernel.cuda_file);
    if (planned.source_sha256.empty()) planned.source_sha256 = sha256_hex(source);
    IncludeSearch search = search_for(kernel);
    planned.scan = scanner_.scan(*kernel.cuda_file, source, search, options_.pre_includes, planned.source_sha256);
    CudaJob& base = planned.base;
    base.kernel = &kernel;
    base.entry = !record_ && declarations_
                     ? kernel_entry_of(kernel, config_, declarations_->get(kernel, config_, source, &headers_))
                     : kernel_entry(kernel, config_, source, &headers_, record_, planned.source_sha256);
    base.source = std::move(source);
    base.system_include_dirs = options_.system_include_dirs;
    base.pre_includes = planned.scan.pre_include_files;
    base.options = options_.keyed;
    for (const auto& dir : search.dirs) base.include_dirs.push_back(dir.dir);
    if (auto late = scanner_.late_dir_if_known()) base.include_dirs.push_back(*late);
    // As found: canonical paths cost a readlink per component, paid only by a
    // cold nvcc build's check (nvcc_compiler.cpp), never by a warm build.
    for (const auto& header : planned.scan.headers) base.headers[header.path] = header.name;
    return planned;
}

CudaJob CudaPlanner::job(const PlannedKernel& planned, const std::string& target) const
{
    CudaJob job = planned.base;
    job.target = target;
    job.inputs = cuda_key_inputs(*job.kernel, planned.source_sha256, planned.scan, compiler_identity_, target,
                                 options_.keyed, facts_.environment, job.entry);
    job.key = cache_key(job.inputs);
    return job;
}

std::string CudaPlanner::key_question(const KernelSource& kernel) const
{
    // A relative path names another file after a chdir: its reading and a
    // later question could disagree.
    for (const fs::path* path : {&kernel.folder, &kernel.source_root})
        if (path->is_relative()) return "";
    if (kernel.cuda_file && kernel.cuda_file->is_relative()) return "";
    // Each part as "<length>:<text>", so that no part can end early.
    std::string question;
    auto add = [&question](std::string_view part) {
        question += std::to_string(part.size());
        question += ':';
        question += part;
    };
    auto add_path = [&add](const fs::path& path) { add(path.native()); };
    auto add_all = [&add](const std::vector<std::string>& parts) {
        add(std::to_string(parts.size()));
        for (const auto& part : parts) add(part);
    };
    add(compiler_identity_);
    add(util::json_text(facts_.environment.keyed));
    add(facts_.environment.profile_sha256);
    add_all(options_.keyed);
    add_all(options_.pre_includes);
    IncludeSearch search = search_for(kernel);
    for (const auto* dirs : {&search.dirs, &search.system_dirs}) {
        add(std::to_string(dirs->size()));
        for (const auto& dir : *dirs) {
            add_path(dir.dir);
            add(dir.label);
        }
    }
    add(std::to_string(search.toolkit_dirs.size()));
    for (const auto& dir : search.toolkit_dirs) add_path(dir);
    add(std::to_string(config_.template_args.size()));
    for (const auto& [name, args] : config_.template_args) {
        add(name);
        add_all(args);
    }
    // How cunumpy's folder is found: given, or asked of this interpreter.
    if (config_.cunumpy_include_dir)
        add_path(*config_.cunumpy_include_dir);
    else
        add("python " + config_.python);
    add(kernel.name);
    add(kernel.module);
    add_path(kernel.cuda_file.value_or(fs::path()));
    add_path(kernel.folder);
    add_path(kernel.source_root);
    return question;
}

KeyWitnesses CudaPlanner::witnesses(const PlannedKernel& planned,
                                    const std::optional<util::FileStat>& source_seen) const
{
    std::unordered_map<std::string, const std::string*> digests;
    for (const auto& header : planned.scan.headers) digests.emplace(header.path.native(), &header.sha256);
    KeyWitnesses witnesses;
    for (auto& [path, seen] : files_.asked()) {
        auto digest = digests.find(path);
        witnesses.files.push_back({path, seen, digest == digests.end() ? "" : *digest->second});
    }
    const KernelSource& kernel = *planned.base.kernel;
    if (kernel.cuda_file) witnesses.files.push_back({kernel.cuda_file->string(), source_seen, planned.source_sha256});
    if (scanner_.late_dir_asked()) {
        auto late = scanner_.late_dir_if_known();
        witnesses.late_dir = late ? std::optional<std::string>(late->string()) : std::nullopt;
    }
    return witnesses;
}

std::vector<CudaJob> CudaPlanner::plan(const KernelSource& kernel)
{
    std::vector<CudaJob> jobs;
    if (!kernel.cuda_file) return jobs;
    PlannedKernel planned = read_kernel(kernel);
    for (const auto& target : targets_) jobs.push_back(job(planned, target));
    return jobs;
}

}  // namespace ck
