// The parameter layout the runtime packs for a kernel, from its declaration,
// and its comparison with the layout a cubin records (cubin_parameters.hpp).
// The driver copies each argument into the parameter bank at the cubin's
// offset, taking the cubin's size: an argument of another size, or a struct
// whose fields the compiled kernel lays out otherwise, is read at the wrong
// bytes without any error. `build` and `status` compare every cubin; the
// runtime compares at load when the driver cannot say (cuFuncGetParamInfo).
#pragma once

#include "compilers/cubin_parameters.hpp"
#include "runtime/kernel_signature.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// A struct's size and alignment as C lays it out (and numpy's aligned dtype,
/// which cunumpy's CudaStruct packs with).
struct StructLayout {
    std::size_t size = 0;
    std::size_t alignment = 1;
};

/// Struct layouts by struct name.
using StructLayouts = std::map<std::string, StructLayout>;

/// The layout of fields typed as kernel parameters are (the types a
/// CudaStruct takes): each at the next offset its alignment allows, the
/// size rounded up to the largest alignment. Nothing when a field is itself
/// a struct not in `structs`.
std::optional<StructLayout> struct_layout(const std::vector<KernelParameter>& fields,
                                          const StructLayouts& structs = {});

/// A parameter as the runtime packs it: nothing known for a struct not in
/// the layouts given, nor for every parameter after one (its offset).
struct PackedParameter {
    std::optional<std::size_t> offset;
    std::optional<std::size_t> size;
};

/// Where a kernel's parameters start in constant bank 0 on `target`
/// ("sm_90", "sm_90a", "sm_120"), in bytes: 0x160 up to sm_89, 0x210 on
/// sm_90, 0x380 from sm_100 (the `c[0x0][...]` of the first parameter in the
/// SASS nvcc 13.0 writes, and the offsets every KPARAM_INFO of
/// tests/unit/cubins/aligned_params.*.cubin records). ptxas aligns a parameter's
/// address in the bank, not its offset: a struct aligned to 32 or 64 after
/// a pointer lands at offset 16 or 48 on sm_90, 32 on sm_80. All three are
/// multiples of 16, so no parameter aligned to 16 or less moves. 0 for a
/// `compute_*` target or a name it does not know.
std::size_t parameter_bank_offset(const std::string& target);

/// The layout of `parameters` as ptxas lays out a parameter list: scalars
/// aligned to their size, pointers and array views to 8, structs to theirs
/// (`structs`), each aligned at its address in the parameter bank, which
/// starts `bank_offset` bytes in (parameter_bank_offset).
std::vector<PackedParameter> packed_layout(const std::vector<KernelParameter>& parameters,
                                           const StructLayouts& structs = {}, std::size_t bank_offset = 0);

/// "" when `cubin` has the parameters of `packed`, each at its offset and of
/// its size, where known; else a message naming `kernel`, the parameter and
/// both layouts, and what to do.
std::string layout_mismatch(const std::string& kernel, const std::vector<KernelParameter>& parameters,
                            const std::vector<PackedParameter>& packed, const std::vector<CubinParameter>& cubin);

}  // namespace ck
