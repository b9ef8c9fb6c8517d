#include "host/host_shim.hpp"

#include <array>
#include <cctype>
#include <optional>
#include <utility>

namespace ck {

namespace {

struct TypeName {
    std::string_view python;  ///< as the stub writes it
    ElementType type;
};

// Pyccel's canonical names in stubs; Python's int, float and complex are its
// 64-bit int, double and double complex (Pyccel's C printer).
constexpr std::array<TypeName, 13> type_names = {{
    {"bool", ElementType::boolean},
    {"int8", ElementType::int8},
    {"int16", ElementType::int16},
    {"int32", ElementType::int32},
    {"int64", ElementType::int64},
    {"int", ElementType::int64},
    {"float32", ElementType::float32},
    {"float64", ElementType::float64},
    {"float", ElementType::float64},
    {"complex64", ElementType::complex64},
    {"complex128", ElementType::complex128},
    {"complex", ElementType::complex128},
    {"bool_", ElementType::boolean},
}};

std::optional<ElementType> element_type_named(std::string_view name)
{
    for (const auto& entry : type_names)
        if (entry.python == name) return entry.type;
    return std::nullopt;
}

// The C type Pyccel prints, and the name it gives its STC span of it
// (`array_<c type, spaces as _>_<rank>d`).
std::string c_type(ElementType type)
{
    switch (type) {
        case ElementType::boolean:
            return "bool";
        case ElementType::int8:
            return "int8_t";
        case ElementType::int16:
            return "int16_t";
        case ElementType::int32:
            return "int32_t";
        case ElementType::int64:
            return "int64_t";
        case ElementType::float32:
            return "float";
        case ElementType::float64:
            return "double";
        case ElementType::complex64:
            return "float complex";
        case ElementType::complex128:
            return "double complex";
        default:
            return "";
    }
}

std::string span_type(const ShimParameter& parameter)
{
    std::string name = c_type(parameter.type);
    for (char& c : name)
        if (c == ' ') c = '_';
    return "array_" + name + "_" + std::to_string(parameter.rank) + "d";
}

std::string_view trimmed(std::string_view text)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
    return text;
}

// Splits at commas outside quotes and brackets.
std::vector<std::string_view> split_parameters(std::string_view list)
{
    std::vector<std::string_view> parts;
    int depth = 0;
    char quote = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
        char c = list[i];
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '(' || c == '[') {
            ++depth;
        } else if (c == ')' || c == ']') {
            --depth;
        } else if (c == ',' && depth == 0) {
            parts.push_back(trimmed(list.substr(start, i - start)));
            start = i + 1;
        }
    }
    if (!trimmed(list.substr(start)).empty()) parts.push_back(trimmed(list.substr(start)));
    return parts;
}

std::string_view unquoted(std::string_view text)
{
    text = trimmed(text);
    if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') && text.back() == text.front())
        return text.substr(1, text.size() - 2);
    return text;
}

// `float64[:,:](order=F)` and the like; a reason when it is not one.
std::string read_type(std::string_view type, ShimParameter& parameter)
{
    std::string_view base = type.substr(0, type.find('['));
    auto element = element_type_named(base);
    if (!element) return "type '" + std::string(type) + "' is not a NumPy scalar or array type";
    parameter.type = *element;
    if (base.size() == type.size()) return "";
    std::string_view rest = type.substr(base.size());
    std::size_t close = rest.find(']');
    if (close == std::string_view::npos) return "type '" + std::string(type) + "' is not read";
    std::string_view dims = rest.substr(1, close - 1);
    parameter.rank = 0;
    for (std::string_view dim : split_parameters(dims)) {
        if (dim != ":") return "type '" + std::string(type) + "': only `:` dimensions are handled";
        ++parameter.rank;
    }
    if (parameter.rank < 1 || parameter.rank > static_cast<int>(max_array_dims))
        return "type '" + std::string(type) + "' has " + std::to_string(parameter.rank) + " dimensions";
    std::string_view order = rest.substr(close + 1);
    if (order.empty() || order == "(order=C)") return "";
    if (order == "(order=F)") {
        parameter.order = 'F';
        return "";
    }
    return "type '" + std::string(type) + "': the suffix " + std::string(order) + " is not handled";
}

// `name : 'type'` or `name : 'type' = default`.
std::string read_parameter(std::string_view text, ShimParameter& parameter)
{
    std::size_t colon = text.find(':');
    if (colon == std::string_view::npos) return "parameter '" + std::string(text) + "' has no type";
    parameter.name = std::string(trimmed(text.substr(0, colon)));
    std::string_view annotation = text.substr(colon + 1);
    std::size_t equals = annotation.rfind('=');
    if (equals != std::string_view::npos && annotation.find('\'', equals) == std::string_view::npos)
        annotation = annotation.substr(0, equals);
    std::string why = read_type(unquoted(annotation), parameter);
    return why.empty() ? "" : "parameter '" + parameter.name + "': " + why;
}

std::optional<std::string> low_level_symbol(std::string_view line)
{
    constexpr std::string_view prefix = "@low_level(";
    if (line.substr(0, prefix.size()) != prefix || line.back() != ')') return std::nullopt;
    return std::string(unquoted(line.substr(prefix.size(), line.size() - prefix.size() - 1)));
}

void read_definition(std::string_view line, const std::string& symbol, StubReading& reading)
{
    std::size_t open = line.find('(');
    std::size_t close = line.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return;
    std::string name(trimmed(line.substr(4, open - 4)));
    std::string_view result = trimmed(line.substr(close + 1));
    if (result != "-> None:" && result != ":") return reading.skipped.push_back({name, "it returns a value"});
    if (symbol.empty()) return reading.skipped.push_back({name, "the stub names no compiled symbol"});
    ShimFunction function{name, symbol, {}};
    for (std::string_view text : split_parameters(line.substr(open + 1, close - open - 1))) {
        ShimParameter parameter;
        if (std::string why = read_parameter(text, parameter); !why.empty())
            return reading.skipped.push_back({name, why});
        function.parameters.push_back(std::move(parameter));
    }
    reading.functions.push_back(std::move(function));
}

std::string c_string(const std::string& text)
{
    std::string out = "\"";
    for (char c : text) {
        if (c == '\n') {
            out += "\\n\"\n    \"";
        } else {
            if (c == '"' || c == '\\') out += '\\';
            out += c;
        }
    }
    return out + "\"";
}

// What the shims of both backends share: the ABI's array, the description's
// version, and the checks Pyccel's Python wrapper makes (pyarray_check).
constexpr const char* shim_common = R"shim(#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#define CK_EXPORT __attribute__((visibility("default")))

/* One array argument: the caller's memory, never copied. */
typedef struct ck_host_array {
    void* data;
    int64_t element_type;   /* ck::ElementType's value */
    int64_t ndim;
    const int64_t* shape;
    const int64_t* strides; /* in elements, as ck::ArrayView */
} ck_host_array;

CK_EXPORT const int64_t ck_host_abi_version = 1;

static const char* ck_type_name(int64_t type)
{
    return type >= 0 && type < (int64_t)(sizeof ck_type_names / sizeof *ck_type_names) ? ck_type_names[type]
                                                                                      : "unknown";
}

static int ck_fail(char* error, size_t size, const char* format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    if (error && size > 0) vsnprintf(error, size, format, arguments);
    va_end(arguments);
    return 1;
}

/* Checks one array as Pyccel's Python wrapper does (pyarray_check: element
 * type, rank, no empty dimension, the order of rank 2 and more). Empty
 * arrays are refused for both backends, although the Fortran wrapper takes
 * them: one ABI, one rule. */
static int ck_check(const ck_host_array* array, int64_t type, const char* type_name, int64_t rank, char order,
                    const char* name, char* error, size_t size)
{
    if (!array || !array->shape || !array->strides)
        return ck_fail(error, size, "argument %s: expected a %s array, got no view", name, type_name);
    if (array->element_type != type || array->ndim != rank)
        return ck_fail(error, size, "argument %s: expected a %lldD %s array, got a %lldD %s array", name,
                       (long long)rank, type_name, (long long)array->ndim, ck_type_name(array->element_type));
    for (int64_t i = 0; i < rank; ++i) {
        if (array->shape[i] <= 0)
            return ck_fail(error, size, "argument %s: dimension %lld has size %lld; Pyccel's arrays may not be empty",
                           name, (long long)i, (long long)array->shape[i]);
        if (i > 0 && order == 'C' && array->strides[i - 1] < array->strides[i])
            return ck_fail(error, size, "argument %s: expected C order (strides not increasing)", name);
        if (i > 0 && order == 'F' && array->strides[i - 1] > array->strides[i])
            return ck_fail(error, size, "argument %s: expected Fortran order (strides not decreasing)", name);
    }
    if (!array->data) return ck_fail(error, size, "argument %s: the array has no data", name);
    return 0;
}
)shim";

// The C backend's spans: STC is included here too, since a module without
// arrays has a header without it.
constexpr const char* shim_c_views = R"shim(
#ifndef STC_CSPAN_INDEX_TYPE
#define STC_CSPAN_INDEX_TYPE int64_t
#endif
#include <stc/cspan.h>

/* Fills an STC span's shape and strides, which must fit STC's index type. */
static int ck_view(const ck_host_array* array, int64_t type, const char* type_name, int64_t rank, char order,
                   const char* name, char* error, size_t size, cspan_istride* shape, cspan_istride* stride)
{
    const int64_t most = (int64_t)(((uint64_t)1 << (sizeof(cspan_istride) * 8 - 1)) - 1);
    if (ck_check(array, type, type_name, rank, order, name, error, size)) return 1;
    for (int64_t i = 0; i < rank; ++i) {
        if (array->shape[i] > most || array->strides[i] > most || array->strides[i] < -most)
            return ck_fail(error, size, "argument %s: dimension %lld exceeds Pyccel's %d-bit array index", name,
                           (long long)i, (int)(sizeof(cspan_istride) * 8));
        shape[i] = (cspan_istride)array->shape[i];
        stride[i] = (cspan_istride)array->strides[i];
    }
    return 0;
}
)shim";

// The Fortran backend's `bind_c_<function>` takes each array as its first
// element's address and, per dimension, the extent of a base array
// (C_F_Pointer), the upper bound and the step of a section of it: what
// Pyccel's Python wrapper computes in get_strides_and_shape_from_numpy_array.
// Only the fastest dimension keeps its step; the others' steps are folded
// into the base extents, so a view is callable when each slower stride is a
// whole multiple of the faster ones' base extents. Negative and zero strides
// have no such section (Pyccel's wrapper passes them anyway, with a
// negative extent): they are refused.
constexpr const char* shim_fortran_views = R"shim(
static int ck_section(const ck_host_array* array, int64_t type, const char* type_name, int64_t rank, char order,
                      const char* name, char* error, size_t size, int64_t* base, int64_t* ubound, int64_t* step)
{
    if (ck_check(array, type, type_name, rank, order, name, error, size)) return 1;
    const int64_t* n = array->shape;
    const int64_t* s = array->strides;
    int64_t inner = 1; /* the elements one step of the dimension below spans */
    for (int64_t i = 0; i < rank; ++i)
        if (s[i] < 1 || n[i] > INT64_MAX / s[i])
            return ck_fail(error, size,
                           "argument %s: stride %lld of dimension %lld; Pyccel's Fortran wrapper takes positive "
                           "strides only",
                           name, (long long)s[i], (long long)i);
    /* From the fastest dimension (the last in C order, the first in Fortran order) outwards. */
    for (int64_t k = rank - 1; k >= 0; --k) {
        int64_t d = order == 'F' ? rank - 1 - k : k;
        step[d] = k == rank - 1 ? s[d] : 1;
        ubound[d] = k == rank - 1 ? (n[d] - 1) * s[d] + 1 : n[d];
        if (k == 0) {
            base[d] = n[d] * step[d];
            break;
        }
        int64_t outer = s[order == 'F' ? d + 1 : d - 1];
        if (outer % inner != 0 || outer / inner < ubound[d])
            return ck_fail(error, size,
                           "argument %s: its strides are not a section of one array, as Pyccel's Fortran wrapper "
                           "needs; pass a copy",
                           name);
        base[d] = outer / inner;
        inner *= base[d];
    }
    return 0;
}
)shim";

std::string array_check_arguments(const ShimParameter& p, std::size_t index)
{
    return "((const ck_host_array*)args[" + std::to_string(index) + "]), " + std::to_string(static_cast<int>(p.type)) +
           ", \"" + to_string(p.type) + "\", " + std::to_string(p.rank) + ", '" +
           (p.rank > 1 ? std::string(1, p.order) : std::string("A")) + "', \"" + p.name + "\", error, error_size";
}

std::string scalar_argument(const ShimParameter& p, std::size_t index)
{
    return "*(const " + c_type(p.type) + "*)args[" + std::to_string(index) + "]";
}

// The span is named after the position, not the parameter: a Python name
// may be one of the entry's own (`count`, `error`) or a C keyword.
std::string write_c_array(std::string& out, const ShimParameter& p, std::size_t index)
{
    std::string span = "ck_span" + std::to_string(index);
    out += "    " + span_type(p) + " " + span + ";\n";
    out += "    if (ck_view(" + array_check_arguments(p, index) + ", " + span + ".shape, " + span + ".stride.d))\n";
    out += "        return 1;\n";
    out += "    " + span + ".data = (" + c_type(p.type) + "*)((const ck_host_array*)args[" + std::to_string(index) +
           "])->data;\n";
    return span;
}

// The data pointer, then the base extents, upper bounds and steps, each in
// the array's own dimension order (bind_c_<function>'s parameters).
std::string write_fortran_array(std::string& out, const ShimParameter& p, std::size_t index)
{
    std::string at = std::to_string(index);
    std::string rank = std::to_string(p.rank);
    out += "    int64_t ck_base" + at + "[" + rank + "], ck_ubound" + at + "[" + rank + "], ck_step" + at + "[" + rank +
           "];\n";
    out += "    if (ck_section(" + array_check_arguments(p, index) + ", ck_base" + at + ", ck_ubound" + at +
           ", ck_step" + at + "))\n        return 1;\n";
    std::string passed = "((const ck_host_array*)args[" + at + "])->data";
    for (const char* part : {"ck_base", "ck_ubound", "ck_step"})
        for (int d = 0; d < p.rank; ++d) passed += ", " + std::string(part) + at + "[" + std::to_string(d) + "]";
    return passed;
}

// Pyccel's bind_c wrapper of a function: a Fortran subroutine `bind_c_<name>`
// with bind(c) and no name, so its symbol is in lower case.
std::string fortran_symbol(const ShimFunction& function)
{
    std::string symbol = "bind_c_" + function.symbol;
    for (char& c : symbol) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return symbol;
}

// Pyccel's header of the Fortran wrappers includes Python's: the shim
// declares the subroutines itself.
std::string fortran_prototype(const ShimFunction& function)
{
    std::string parameters;
    for (const auto& p : function.parameters) {
        std::string one = p.rank == 0 ? c_type(p.type) : "void*";
        for (int d = 0; d < 3 * p.rank; ++d) one += ", int64_t";
        parameters += (parameters.empty() ? "" : ", ") + one;
    }
    return "void " + fortran_symbol(function) + "(" + (parameters.empty() ? "void" : parameters) + ");\n";
}

void write_function(std::string& out, const ShimFunction& function, ShimBackend backend)
{
    out += "\nCK_EXPORT int ck_host__" + function.name +
           "(void* const* args, int64_t count, char* error, size_t error_size)\n{\n";
    std::string count = std::to_string(function.parameters.size());
    out += "    if (count != " + count + ")\n        return ck_fail(error, error_size, \"" + function.name + " takes " +
           count + " arguments, got %lld\", (long long)count);\n";
    std::string call;
    for (std::size_t i = 0; i < function.parameters.size(); ++i) {
        const ShimParameter& p = function.parameters[i];
        std::string passed = p.rank == 0                       ? scalar_argument(p, i)
                             : backend == ShimBackend::fortran ? write_fortran_array(out, p, i)
                                                               : write_c_array(out, p, i);
        call += (i ? ", " : "") + passed;
    }
    std::string symbol = backend == ShimBackend::fortran ? fortran_symbol(function) : function.symbol;
    out += "    " + symbol + "(" + call + ");\n    return 0;\n}\n";
}

}  // namespace

StubReading read_pyccel_stub(std::string_view stub)
{
    StubReading reading;
    std::string symbol;
    for (std::size_t start = 0; start < stub.size();) {
        std::size_t end = std::min(stub.find('\n', start), stub.size());
        std::string_view line = stub.substr(start, end - start);
        start = end + 1;
        if (line.empty() || line.front() == ' ' || line.front() == '\t') continue;  // bodies and methods
        line = trimmed(line);
        if (auto named = low_level_symbol(line)) {
            symbol = *named;
        } else if (line.substr(0, 4) == "def ") {
            read_definition(line, symbol, reading);
            symbol.clear();
        } else if (line.front() != '@') {
            symbol.clear();
        }
    }
    return reading;
}

std::string host_library_description(const StubReading& reading)
{
    std::string text;
    for (const auto& function : reading.functions) {
        text += "function " + function.name + " " + function.symbol + " " + std::to_string(function.parameters.size()) +
                "\n";
        for (const auto& p : function.parameters)
            text += "parameter " + p.name + " " + to_string(p.type) + " " + std::to_string(p.rank) + " " +
                    (p.rank > 1 ? std::string(1, p.order) : std::string("A")) + "\n";
    }
    for (const auto& skip : reading.skipped) text += "skipped " + skip.name + " " + skip.reason + "\n";
    return text;
}

std::string generate_host_shim(const std::string& stem, const StubReading& reading, ShimBackend backend)
{
    std::string out =
        "/* Generated by cunumpy-kernels from Pyccel's stub of " + stem + " (doc/host-libraries.md); do not edit. */\n";
    if (backend == ShimBackend::c)
        out += "#include \"" + stem + ".h\"\n";
    else
        out += "#include <complex.h>\n#include <stdbool.h>\n#include <stdint.h>\n";
    out += "\nstatic const char* const ck_type_names[] = {";
    for (int type = 0; type <= static_cast<int>(ElementType::complex128); ++type)
        out += std::string(type ? ", " : "") + "\"" + to_string(static_cast<ElementType>(type)) + "\"";
    out += "};\n";
    out += shim_common;
    out += backend == ShimBackend::c ? shim_c_views : shim_fortran_views;
    if (backend == ShimBackend::fortran) {
        out += "\n";
        for (const auto& function : reading.functions) out += fortran_prototype(function);
    }
    out += "\nCK_EXPORT const char ck_host_description[] =\n    " + c_string(host_library_description(reading)) + ";\n";
    for (const auto& function : reading.functions) write_function(out, function, backend);
    return out;
}

}  // namespace ck
