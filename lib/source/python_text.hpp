// Python source as the interpreter reads it (PEP 263, PEP 3120, universal
// newlines): a UTF-8 byte order mark is dropped, a coding declaration on the
// first or second line (`# -*- coding: latin-1 -*-`) decodes the bytes to
// UTF-8, and CRLF or CR line ends become LF. Readers lex this text, not the
// file's bytes, so that a module Python imports defines the same names here.
#pragma once

#include <string>
#include <string_view>

namespace ck::signatures {

/// The text of one Python source. Views the bytes it was made from when they
/// are already UTF-8 text with LF line ends (no copy); otherwise owns the
/// decoded text. Line numbers are those of the file.
class PythonText {
public:
    /// Reads `bytes`; they must outlive this object. Never fails: a coding
    /// the system's iconv does not know, or bytes that do not decode, leave
    /// the bytes as they are (Python would refuse the module; the readers
    /// then find what they can).
    explicit PythonText(std::string_view bytes);

    PythonText(const PythonText&) = delete;
    PythonText& operator=(const PythonText&) = delete;

    /// The text: UTF-8, LF line ends, no byte order mark.
    std::string_view text() const { return text_; }

    /// The coding a declaration named ("latin-1"), or empty for none.
    const std::string& coding() const { return coding_; }

private:
    std::string owned_;
    std::string_view text_;
    std::string coding_;
};

/// The coding a PEP 263 declaration in the first two lines of `bytes` names
/// (`coding[:=]\s*([-\w.]+)` in a comment line), or empty for none.
std::string python_coding(std::string_view bytes);

}  // namespace ck::signatures

namespace ck {

/// The text `inspect.getsource(module)` gives for a module file's bytes (it
/// reads through linecache): a UTF-8 byte order mark dropped, `\r\n` and `\r`
/// read as `\n`, and a final newline added when missing. Files in another
/// encoding than UTF-8 (a coding cookie) are taken as they are. A host
/// entry's source digest is of this text; the runtime compares a cached host
/// library's with it.
std::string python_source_text(const std::string& bytes);

}  // namespace ck
