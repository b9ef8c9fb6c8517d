// Finding a kernel's entry symbol in what nvcc wrote: nvcc, unlike NVRTC,
// does not report lowered names.
#pragma once

#include <string>
#include <vector>

namespace ck {

/// Names of the function symbols of an ELF64 file (a cubin). Empty when the
/// bytes are not ELF64.
std::vector<std::string> elf_function_symbols(const std::string& elf);

/// Names of the `.entry` functions of a PTX text.
std::vector<std::string> ptx_entries(const std::string& ptx);

/// The symbol among `symbols` that is `kernel`: the plain name (extern "C"),
/// or an Itanium-mangled `_Z<length><kernel>...` of a free function. Empty
/// when none or more than one match.
std::string pick_entry_symbol(const std::vector<std::string>& symbols, const std::string& kernel);

/// Whether `symbol` is an entry of `kernel`: its plain name, or the mangled
/// name `_Z<length><kernel>...` of the free function or of one of its
/// template instantiations (as pick_entry_symbol and pick_template_entry_symbol choose).
bool is_entry_of(const std::string& symbol, const std::string& kernel);

/// The symbol among `symbols` that is the instantiation `expression`
/// (`scale<double, 3>`) of the function template `kernel`: the mangled
/// `_Z<length><kernel>I...` whose demangled template arguments equal those
/// of `expression` (white space ignored), else the only instantiation of
/// `kernel` there is. Empty when none, or several and none equal.
std::string pick_template_entry_symbol(const std::vector<std::string>& symbols, const std::string& kernel,
                                       const std::string& expression);

/// The template arguments of a demangled name or name expression, white
/// space removed: "void scale<double, 3>(double*, int)" -> "double,3"
/// (for `kernel` "scale"). Empty when `text` has none.
std::string template_arguments_of(const std::string& text, const std::string& kernel);

}  // namespace ck
