// nvcc as a child process, for users whose kernels need its host-side
// preprocessing or who want the toolchain their CI already trusts.
#include "compilers/nvcc_compiler.hpp"

#include "compilers/entry_symbols.hpp"
#include "compilers/tool_probe.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/subprocess.hpp"

#include <cstdlib>
#include <unistd.h>

namespace ck {

namespace fs = std::filesystem;

namespace {

// A private folder for nvcc's output, removed on every path out.
class ScratchDir {
public:
    ScratchDir()
    {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/cunumpy-kernels-nvcc.XXXXXX";
        if (!::mkdtemp(pattern.data())) throw ToolchainError("cannot create " + pattern + ": " + util::errno_message(errno));
        path_ = pattern;
    }
    ~ScratchDir()
    {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

std::string last_nonempty_line(const std::string& text)
{
    std::string last, line;
    for (char c : text + "\n") {
        if (c != '\n') { line += c; continue; }
        if (!line.empty()) last = line;
        line.clear();
    }
    return last;
}

}  // namespace

NvccCompiler::NvccCompiler(const fs::path& cuda_root, const ToolProbe* probe) : probe_(probe)
{
    std::error_code error;
    nvcc_ = cuda_root / "bin" / "nvcc";
    if (!fs::exists(nvcc_, error)) nvcc_ = util::find_in_path("nvcc");
    if (nvcc_.empty()) throw ToolchainError("nvcc not found in " + (cuda_root / "bin").string() + " or PATH; set cuda-root or use --compiler nvrtc");
}

std::string NvccCompiler::identity() const
{
    auto ask = [this] {
        auto result = util::run_process({nvcc_.string(), "--version"});
        if (result.exit_code != 0) throw ToolchainError(nvcc_.string() + " --version failed:\n" + result.output);
        return "nvcc " + last_nonempty_line(result.output);
    };
    return probe_ ? probe_->answer(nvcc_, "nvcc-identity", ask) : ask();
}

std::optional<std::string> NvccCompiler::remembered_identity() const
{
    if (!probe_) return std::nullopt;
    std::string identity = probe_->answer(nvcc_, "nvcc-identity", [] { return std::string(); });
    return identity.empty() ? std::nullopt : std::optional<std::string>(identity);
}

CudaCompileOutput NvccCompiler::compile(const CudaCompileRequest& request) const
{
    ScratchDir scratch;
    bool cubin = artifact_extension(request.target) == "cubin";
    fs::path out = scratch.path() / (request.kernel + "." + artifact_extension(request.target));
    std::vector<std::string> argv = {nvcc_.string(), cubin ? "-cubin" : "-ptx", "-arch=" + request.target, "-o", out.string()};
    argv.insert(argv.end(), request.options.begin(), request.options.end());
    for (const auto& dir : request.include_dirs) argv.push_back("-I" + dir.string());
    // nvcc reads the file itself: hand it the exact text that was hashed.
    fs::path source = scratch.path() / request.source_file.filename();
    util::write_file_synced(source, request.source);
    argv.push_back(source.string());

    CudaCompileOutput output;
    auto result = util::run_process(argv, request.source_file.parent_path());
    std::string log = result.output;
    // Point diagnostics at the user's file, not the scratch copy.
    for (std::size_t at; (at = log.find(source.string())) != std::string::npos;)
        log.replace(at, source.string().size(), request.source_file.string());
    output.log = to_file_line_diagnostics(log);
    if (result.exit_code != 0) return output;
    output.artifact = util::read_file(out);
    auto symbols = cubin ? elf_function_symbols(output.artifact) : ptx_entries(output.artifact);
    output.entry_symbol = pick_entry_symbol(symbols, request.kernel);
    if (output.entry_symbol.empty()) {
        output.log += (output.log.empty() ? "" : "\n") + request.source_file.string() + ": no unique __global__ " +
                      request.kernel + " in nvcc's output";
        return output;
    }
    output.ok = true;
    return output;
}

}  // namespace ck
