// The C shim of a host library (doc/host-libraries.md): from the stub Pyccel
// writes for a module (`__pyccel__/<stem>.pyi`, canonical types and the
// compiled symbol of every function), one C entry per function with a fixed
// ABI that the runtime calls without Python. Reading the stub and writing the
// shim are pure text functions; compiling and linking it is host_library's.
// Both of Pyccel's backends are read: the stub is the same.
#pragma once

#include "cunumpy_kernels/arguments.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ck {

/// One parameter of a function the shim can call.
struct ShimParameter {
    std::string name;
    ElementType type = ElementType::float64;  ///< the element type of an array, the type of a scalar
    int rank = 0;                             ///< 0 for a scalar, else the array's dimensions (1 to 8)
    char order = 'C';                         ///< 'C' or 'F'; checked as Pyccel's wrapper does, for rank 2 and more
};

/// A function of the module the shim gives an entry.
struct ShimFunction {
    std::string name;    ///< the Python name (the kernel's)
    std::string symbol;  ///< Pyccel's C function, from the stub's `@low_level('...')`
    std::vector<ShimParameter> parameters;
};

/// A function the shim cannot call, and why (a class instance, a type it
/// does not handle, a return value).
struct ShimSkip {
    std::string name;
    std::string reason;
};

/// What a stub offers the shim.
struct StubReading {
    std::vector<ShimFunction> functions;
    std::vector<ShimSkip> skipped;
};

/// Reads the top-level functions of a Pyccel 2.x stub: `@low_level('sym')`
/// then `def name(a : 'float64[:]', n : 'int') -> None:` on one line, as
/// Pyccel 2.1 to 2.2.3 print them. Parameters typed with NumPy's fixed-size
/// types (bool, int8 to int64, float32, float64, complex64, complex128, and
/// Python's int, float, complex meaning int64, float64, complex128) as
/// scalars or arrays of 1 to 8 dimensions are callable; anything else (a
/// class, a string, an optional or a union, a return value, a function with
/// no compiled symbol) is a ShimSkip naming the parameter and its type.
/// Methods of classes are not read. Never throws.
StubReading read_pyccel_stub(std::string_view stub);

/// Which Pyccel backend wrote the module: the shim calls the C backend's
/// `<stem>__<name>` with STC spans, and the Fortran backend's
/// `bind_c_<name>` wrappers with a base extent, upper bound and step per
/// dimension, as Pyccel's Python wrapper calls them.
enum class ShimBackend { c, fortran };

/// The C shim's source for the functions of module `stem`: with the C
/// backend it includes Pyccel's `<stem>.h`, with the Fortran backend it
/// declares the `bind_c_` subroutines itself; it defines `ck_host_abi_version`, the library's
/// description (ck_host_description, parsed by the runtime) and for each
/// function `int ck_host__<name>(void* const* args, int64_t count, char*
/// error, size_t error_size)`: it checks each array's element type, rank,
/// emptiness, layout and index range, describes the caller's memory as the
/// backend takes arrays (no copies) and calls the function; 0 on success,
/// else 1 with a message naming the argument in `error`. The Fortran
/// backend also refuses strides that are not positive or not a section of
/// one array (a copy is then needed).
std::string generate_host_shim(const std::string& stem, const StubReading& reading, ShimBackend backend);

/// The library's description text (one line per function and per skip), as
/// generate_host_shim embeds it and the runtime reads it:
/// `function <name> <symbol> <count>`, then one `parameter <name> <type> <rank> <order>`
/// line per parameter; `skipped <name> <reason>`.
std::string host_library_description(const StubReading& reading);

}  // namespace ck
