// The bundle file: one tree's kernel catalog and the cubins and PTX of its
// CUDA kernels for a set of targets, in one file that a rank opens with one
// open and one read (`cunumpy-kernels bundle` writes it,
// KernelCatalog::from_bundle reads it).
//
// Format version 2, byte for byte:
//
//   cunumpy-kernels-bundle 2 <H> <S>\n     the magic line: ASCII, H and S below
//   <H bytes of JSON>                      the header, UTF-8, whose SHA-256 is S (64 hex digits)
//   <artifact bytes>                       every artifact's bytes, concatenated
//
// H is the header's length in decimal. The header is one JSON object:
// {"tool", "created", "paths", "targets", "compiler", "options", "python",
// "cunumpy_include_dir" (these two may be absent), "cache_root",
// "toolkit": {"root", "found_by", "compiler"},
// "data_size", "kernels": [{"name", "module", "folder", "cuda_path", "cuda",
// "parameters": [{"name", "ctype", "kind", "element", "view_ndim"}] | null,
// "signature_error", "artifacts": [{"target", "key", "entry_symbol",
// "offset", "size", "sha256", "inputs"}]}]}. An artifact's `offset` counts
// from the first byte after the header; the file ends exactly `data_size`
// bytes after the header. `key` and `inputs` are the cache entry's, so
// `status --bundle` can say which input changed; `cache_root` and `toolkit`
// say where the keys were computed, so `status --bundle` computes them there
// again or names what differs. A reader refuses another magic word or
// version, a header whose SHA-256 differs, and a file longer or shorter than
// the header says; each artifact is checked when it is loaded
// (runtime/bundle_check.hpp).
//
// Optional in version 2 (older bundles lack them; readers that predate them
// ignore them): "host_platform" in the header, and per kernel "host_library"
// (an artifact, or null) and "host_library_note" (why there is none).
//
// Version 1 is version 2 without `cache_root` and `toolkit`; it still reads
// (both empty), and `status --bundle` then needs the --cache-dir it was made
// with and cannot name its toolkit.
#pragma once

#include "runtime/kernel_signature.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ck {

inline constexpr const char* bundle_magic = "cunumpy-kernels-bundle";
inline constexpr int bundle_format_version = 2;
/// The oldest version a reader still takes (1: no cache root or toolkit).
inline constexpr int bundle_oldest_format_version = 1;

/// One cubin or PTX of a kernel, as the bundle records it.
struct BundleArtifact {
    std::string target;        ///< sm_90, compute_90, ...
    std::string key;           ///< the cache key it was built under
    std::string entry_symbol;  ///< the entry's name in the module
    std::uint64_t offset = 0;  ///< from the first byte after the header
    std::uint64_t size = 0;
    std::string sha256;     ///< of its bytes, 64 hex digits
    nlohmann::json inputs;  ///< the key's inputs (for status --bundle's reasons)
};

/// One kernel of the catalog, ported or not.
struct BundleKernel {
    std::string name;
    std::string module;                                      ///< dotted, e.g. particles.kernels.push
    std::filesystem::path folder;                            ///< where it was when bundled (messages only)
    std::filesystem::path cuda_path;                         ///< its CUDA source, or where one is expected
    bool cuda = false;                                       ///< ported: has a CUDA kernel
    std::optional<std::vector<KernelParameter>> parameters;  ///< nullopt: see signature_error
    std::string signature_error;                             ///< why the signature could not be read
    std::vector<BundleArtifact> artifacts;
    /// Its Pyccel module's host library (target "host-library", no entry
    /// symbol), built for the catalog's `host_platform`; none: see the note.
    std::optional<BundleArtifact> host_library;
    std::string host_library_note;  ///< why the bundle carries none ("" when it does, or no Pyccel module)
};

/// The CUDA toolkit the bundle's keys were computed with.
struct BundleToolkit {
    std::string root;      ///< its folder, absolute
    std::string found_by;  ///< "$CUDA_PATH", "cuda-root", "the default", ... (find_cuda_toolkit)
    std::string compiler;  ///< the compiler's identity in the keys ("nvrtc 13.0 (...)"); "" without artifacts
};

/// The header: what the bundle holds and how it was made.
struct BundleCatalog {
    std::string tool;                   ///< "cunumpy-kernels 0.1.0"
    std::string created;                ///< ISO 8601, UTC
    std::vector<std::string> paths;     ///< the trees bundled, absolute
    std::vector<std::string> targets;   ///< every target of every ported kernel
    std::string compiler;               ///< "nvrtc" or "nvcc"
    std::vector<std::string> options;   ///< the keyed compiler options
    std::string python;                 ///< the interpreter that found cunumpy's headers
    std::string cunumpy_include_dir;    ///< cunumpy's header folder when given; "" when found through `python`
    std::string cache_root;             ///< the cache the artifacts came from; "" when several, or format 1
    BundleToolkit toolkit;              ///< all empty in format 1
    std::string host_platform;          ///< the host libraries' platform ("linux-x86_64"); "" in older bundles
    std::vector<BundleKernel> kernels;  ///< sorted by module
};

/// A bundle read into memory.
struct Bundle {
    std::filesystem::path file;
    BundleCatalog catalog;
    std::string bytes;            ///< the whole file
    std::size_t data_offset = 0;  ///< where the artifact bytes start in `bytes`

    /// The bytes of `artifact` (bounds checked when the bundle was read).
    std::string_view artifact_bytes(const BundleArtifact& artifact) const;
    /// "<file>#<kernel>@<target>": how load_info and errors name an artifact.
    std::string artifact_name(const BundleKernel& kernel, const BundleArtifact& artifact) const;
};

/// Appends `bytes` to `data` and records their offset, size and SHA-256 in
/// `artifact`.
void add_artifact_bytes(BundleArtifact& artifact, std::string_view bytes, std::string& data);

/// The file's content: the magic line, the header of `catalog`, then `data`
/// (whose artifacts add_artifact_bytes recorded).
std::string encode_bundle(const BundleCatalog& catalog, std::string_view data);

/// Parses the content of `file`. Throws ArtifactError naming `file` when it
/// is not a bundle, is of a format version it does not read (older than
/// bundle_oldest_format_version or newer than bundle_format_version: it says
/// which, and to make it again with `cunumpy-kernels bundle`), its header is corrupt (checksum, JSON, a field missing
/// or mistyped), or it is truncated or longer than the header says. Artifact checksums are not checked here.
Bundle decode_bundle(std::string bytes, const std::filesystem::path& file);

/// Reads `file` with one open and one read, then decode_bundle. A read that
/// fails with ESTALE is tried again (util::StaleRetry), and a bundle that
/// fails decode_bundle while the path already names another file (it was
/// rewritten during the read) is read once more. Throws TransientReadError
/// when ESTALE outlasts the tries, ArtifactError naming the file when it
/// cannot be read otherwise, and as decode_bundle.
Bundle read_bundle(const std::filesystem::path& file);

/// This machine's platform as bundles record it for host libraries: the
/// kernel's name and machine (`uname`), lower case, e.g. "linux-x86_64".
std::string host_platform();

}  // namespace ck
