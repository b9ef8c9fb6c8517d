// Everything host builds of one cache root share, found once per build: the
// interpreter's facts, its Pyccel, the C (and Fortran) compiler's identity,
// the language and the OpenMP setting.
#pragma once

#include "host/host_job.hpp"
#include "host/host_key.hpp"
#include "host/pyccel_compiler.hpp"
#include "cunumpy_kernels/config.hpp"

#include <memory>
#include <optional>
#include <string>

namespace ck {

class ToolProbe;

/// Whether host modules are built with OpenMP: the config's `openmp` (the
/// key or --openmp/--no-openmp) when set; else `<PREFIX>_OPENMP` as cunumpy's
/// PyccelCache reads it at run time (off for "0", "false", "no", "off" in any
/// case; PREFIX from `cache_name`); else on.
bool host_openmp(const Config& config, const std::string& cache_name);

/// The host side of one cache root, ready to plan and run.
struct HostSetup {
    HostToolchain toolchain;
    std::unique_ptr<PyccelCompiler> compiler;
    HostBuildTools tools;
    std::string problem;  ///< why host modules cannot be built here (no interpreter, no Pyccel); empty if they can
    std::string warning;  ///< a Pyccel version outside the checked series
};

/// Finds the interpreter (`config.python`), its facts (remembered in
/// `probe`; asked with one Python process only when `may_start_processes`),
/// its Pyccel and the compiler's identity. Problems are reported in
/// `problem`, never thrown.
HostSetup prepare_host_setup(const Config& config, const std::string& cache_name, const ToolProbe& probe,
                             bool may_start_processes);

}  // namespace ck
