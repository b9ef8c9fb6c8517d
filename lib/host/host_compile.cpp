#include "host/host_compile.hpp"

#include "host/host_library.hpp"
#include "host/pyccel_compiler.hpp"
#include "host/pyccel_workspace.hpp"

#include "cunumpy_kernels/error.hpp"

namespace ck {

namespace fs = std::filesystem;

namespace {

// Pyccel finds an imported module's stub at `<output root>/<its package
// path>/__pyccel__/`; a link there to the stub of the imported module's own
// build makes it read that build's folder, whose path its wrapper holds.
void link_imported_stubs(const HostPlan& plan, std::size_t index, const fs::path& output_root,
                         const ImportedBuildFolder& imported)
{
    for (std::size_t i : plan.jobs[index].closure) {
        const HostModule& dependency = plan.modules[i];
        fs::path stub = fs::path("__pyccel__") / (module_stem(dependency) + ".pyi");
        fs::path target = imported(i) / stub;
        std::error_code error;
        if (!fs::is_regular_file(target, error))
            throw CacheError("the build of imported module " + dependency.name + " is missing: " + target.string());
        fs::path link = package_folder(output_root, dependency) / stub;
        fs::create_directories(link.parent_path(), error);
        fs::create_symlink(target, link, error);
        if (error) throw CacheError("cannot link " + link.string() + ": " + error.message());
    }
}

// The host library beside the extension, for either backend. Sets
// `build.problem` when it fails.
void link_host_library(const HostPlan& plan, std::size_t index, const HostBuildTools& tools, const fs::path& workspace,
                       const ImportedBuildFolder& imported, PyccelModuleBuild& build)
{
    const HostModule& module = plan.modules[index];
    std::string what =
        "host library of " + module.name + (module.kernel ? " (kernel '" + module.kernel->name + "')" : "");
    HostLibraryRequest request{{build.output / "__pyccel__", module_stem(module)},
                               {},
                               tools.language == "fortran" ? ShimBackend::fortran : ShimBackend::c,
                               std::nullopt,
                               plan.jobs[index].openmp,
                               build.output / host_library_file(module_stem(module)),
                               workspace / "ck-host"};
    if (request.backend == ShimBackend::c) {
        if (!tools.stc) return;
        std::string why;
        request.stc = tools.stc->get(&why);
        if (!request.stc) {
            build.problem = what + ": " + why;
            return;
        }
    }
    std::error_code error;
    fs::create_directories(request.scratch, error);
    for (std::size_t i : plan.jobs[index].closure)
        request.imported.push_back({imported(i) / "__pyccel__", module_stem(plan.modules[i])});
    HostLibraryBuild linked = build_host_library(request);
    for (const auto& skipped : linked.skipped)
        build.log += (build.log.empty() ? "" : "\n") + ("host library: not callable from C++: " + skipped);
    if (!linked.ok) {
        build.problem = what + ": " + linked.problem;
        return;
    }
    build.library = request.output;
}

}  // namespace

PyccelModuleBuild compile_host_module(const HostPlan& plan, std::size_t index, const HostBuildTools& tools,
                                      const fs::path& workspace, const fs::path& output_root, const fs::path& lives_in,
                                      const ImportedBuildFolder& imported)
{
    const HostModule& module = plan.modules[index];
    link_imported_stubs(plan, index, output_root, imported);
    fs::path sources = workspace / "src";
    for (std::size_t imported : plan.jobs[index].closure) copy_module(plan.modules[imported], sources);
    copy_module(module, sources);
    PyccelModuleBuild build;
    build.output = package_folder(output_root, module);
    build.extension = build.output / (module_stem(module) + tools.ext_suffix);
    std::error_code error;
    fs::create_directories(build.output, error);
    PyccelCompileRequest request{
        sources / module.relative, build.output, workspace, tools.language, plan.jobs[index].openmp,
        python_path_with(sources)};
    PyccelCompileOutput compiled = tools.compiler->compile(request);
    build.log = format_pyccel_log(compiled.output, {{sources.string() + "/", module.source_root.string() + "/"}},
                                  module.file.string());
    if (!compiled.ok) return build;
    if (!fs::is_regular_file(build.extension, error)) {
        build.problem = "Pyccel reported success but wrote no " + build.extension.string();
        return build;
    }
    relocate_wrapper_header(build.output, lives_in, module_stem(module));
    build.problem = import_check(tools.python, build.extension, module_stem(module), workspace);
    if (build.problem.empty()) link_host_library(plan, index, tools, workspace, imported, build);
    build.ok = build.problem.empty();
    return build;
}

}  // namespace ck
