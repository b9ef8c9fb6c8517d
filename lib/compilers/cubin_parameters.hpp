// A kernel's parameter layout as the cubin itself records it: the
// EIATTR_KPARAM_INFO records of its `.nv.info.<entry>` section, which the
// driver reads to copy each argument into the parameter bank. Reading them
// needs no driver, so `build` and `status` check a cubin against what the
// runtime packs on machines without a GPU, and the runtime checks launches
// with drivers older than cuFuncGetParamInfo (CUDA 12.4).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// One parameter as the cubin lays it out.
struct CubinParameter {
    std::size_t ordinal = 0;  ///< its position in the declaration
    std::size_t offset = 0;   ///< bytes from the start of the parameter bank
    std::size_t size = 0;     ///< bytes it takes
};

/// The parameters of `entry_symbol` in `cubin`, by ordinal. Reads both record
/// versions ptxas writes: EIATTR_KPARAM_INFO (0x17; the size in bits 18 to
/// 31 of the last word) and EIATTR_KPARAM_INFO_V2 (0x45, CUDA 12.1 and later
/// for parameters past 4 KiB; the size in the low 16 bits of the last word),
/// checked on nvcc 13 cubins for sm_80, sm_90 and sm_90a. Nothing when the
/// cubin has no `.nv.info.<entry_symbol>` section (what is not a cubin ptxas
/// wrote: the caller decides whether that is an error). Throws
/// ArtifactError, naming `what` (the artifact), the section and the byte
/// offset, for a damaged section: a record past its end, a parameter record
/// of the wrong length, a repeated or missing ordinal, parameters that
/// overlap.
std::optional<std::vector<CubinParameter>> read_cubin_parameters(const std::string& cubin,
                                                                 const std::string& entry_symbol,
                                                                 const std::string& what);

/// "offset 8, 4 bytes": one parameter of a layout, in messages.
std::string describe_cubin_parameter(const CubinParameter& parameter);

}  // namespace ck
