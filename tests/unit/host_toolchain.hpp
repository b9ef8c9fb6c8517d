// The toolchain facts host-build tests plan with: those of the development
// machine's Python 3.11 and Pyccel 2.2.3, against which cunumpy's own keys
// were computed (test_host_key).
#pragma once

#include "host/host_key.hpp"

namespace ck::test {

inline HostToolchain host_toolchain(const std::string& cache_root = "/home/me/.cache/sim/kernels")
{
    HostToolchain t;
    t.language = "c";
    t.openmp = true;
    t.python.version = "3.11.7 (main, May  9 2026, 07:35:25) [GCC 12.2.0]";
    t.python.platform = "Linux-6.1.0-x86_64-with-glibc2.36";
    t.python.pyccel = "2.2.3";
    t.python.numpy = "2.2.6";
    t.python.ext_suffix = ".cpython-311-x86_64-linux-gnu.so";
    t.pyccel = "pyccel 2.2.3";
    t.c_compiler = "gcc (Debian 12.2.0-14) 12.2.0";
    t.cache_root = cache_root;
    return t;
}

}  // namespace ck::test
