#include "host/host_compile.hpp"

#include "host/pyccel_compiler.hpp"
#include "host/pyccel_workspace.hpp"

namespace ck {

namespace fs = std::filesystem;

PyccelModuleBuild compile_host_module(const HostPlan& plan, std::size_t index, const HostBuildTools& tools,
                                      const fs::path& workspace, const fs::path& output_root, const fs::path& lives_in)
{
    const HostModule& module = plan.modules[index];
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
    build.ok = build.problem.empty();
    return build;
}

}  // namespace ck
