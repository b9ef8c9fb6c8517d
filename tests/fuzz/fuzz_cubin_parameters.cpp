// libFuzzer target: read_cubin_parameters on any bytes returns nothing, a
// coherent layout (ordinals 0 to n-1 in order, no two parameters overlapping)
// or an ArtifactError, without crashing, hanging or leaking. The seeds are
// nvcc 13 cubins (corpus/cubin, from kernels `mixed` and `huge`).
#include "compilers/cubin_parameters.hpp"
#include "cunumpy_kernels/error.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

void check(const std::string& bytes, const std::string& entry)
{
    std::optional<std::vector<ck::CubinParameter>> found;
    try {
        found = ck::read_cubin_parameters(bytes, entry, "fuzz.cubin");
    } catch (const ck::ArtifactError&) {
        return;
    }
    if (!found) return;
    for (std::size_t i = 0; i < found->size(); ++i) {
        const auto& p = (*found)[i];
        for (std::size_t j = 0; j < i; ++j) {
            const auto& q = (*found)[j];
            bool overlap = p.offset < q.offset + q.size && q.offset < p.offset + p.size;
            if (p.ordinal == i && !overlap) continue;
            std::fprintf(stderr, "read_cubin_parameters: parameter %zu (ordinal %zu) breaks the layout\n", i,
                         p.ordinal);
            std::abort();
        }
        if (p.ordinal != i) std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string bytes(reinterpret_cast<const char*>(data), size);
    check(bytes, "mixed");
    check(bytes, "huge");
    return 0;
}
