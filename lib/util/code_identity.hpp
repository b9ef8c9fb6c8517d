// Which build of the tool's code is running, for records whose answers that
// code computed: another build may answer otherwise (the source record's
// facts, the key record's keys).
#pragma once

#include <string>

namespace ck::util {

/// The file holding this code (the tool, or the library that links it),
/// canonical, with its size and modification time: "<path>:<size>:<mtime ns>".
/// "" when it cannot be told (then no record should trust a kept answer).
/// Asked of the file system once a process: the code running is the one
/// that was loaded, whatever replaces its file later.
const std::string& code_identity();

}  // namespace ck::util
