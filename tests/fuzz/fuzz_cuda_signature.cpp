// libFuzzer target: read_cuda_signature on any input must return a coherent
// result (see reader_input.hpp), without crashing, hanging or leaking.
#include "reader_input.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string problem = ck::fuzz::check_cuda(std::string_view(reinterpret_cast<const char*>(data), size));
    if (!problem.empty()) {
        std::fprintf(stderr, "read_cuda_signature: %s\n", problem.c_str());
        std::abort();
    }
    return 0;
}
