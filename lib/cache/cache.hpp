// The artifact cache: where it lives, how entries are keyed, published and
// found.
//
// Layout under the root (the directory cunumpy's PyccelCache(name) uses):
//
//   CACHEDIR.TAG                      marks the folder for backup tools (bford.info/cachedir)
//   cuda/<k0k1>/<key>/manifest.json   one entry: key inputs, artifacts, log
//   cuda/<k0k1>/<key>/<artifact>      cubins and PTX named in the manifest
//   cuda/<k0k1>/<key>.lock            held while a builder compiles the entry (build_lock.hpp)
//   cuda-last/<module>@<target>       key of the latest entry of a kernel and target
//   cuda-used/<key>                   empty; its modification time is the entry's last use (a day's precision)
//   .cunumpy-kernels-tmp/<host>.<pid>.<n>/   entries being written
//
// cunumpy's own host builds sit beside these as `<stem>-<20 hex digits>/`.
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "util/regular_files.hpp"
#include "util/sha256.hpp"

#include <nlohmann/json.hpp>

#include <ctime>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ck {

/// Where a cache lives and how it was chosen.
struct CacheLocation {
    std::filesystem::path root;       ///< the folder holding entries
    std::string name;                 ///< the PyccelCache name it belongs to
    bool fallback = false;            ///< true when the preferred root was not writable
    std::filesystem::path preferred;  ///< the root that was asked for
};

/// Where the SourceRecord of runs with `config` lives: `.records/sources`
/// in the cache folder given (`--cache-dir`), else
/// `~/.cache/cunumpy-kernels/sources.record` (one record serves every cache
/// name: it holds digests of source files, not entries). Nothing when there
/// is no home folder.
std::optional<std::filesystem::path> source_record_file(const Config& config);

/// The environment prefix cunumpy derives from a cache name: upper case, every
/// character outside [0-9A-Za-z] replaced by `_` ("my-sim" -> "MY_SIM").
std::string env_prefix_of(const std::string& cache_name);

/// The PyccelCache name whose root holds the entries of kernels under
/// `top_package`: the config's `cache-name` when set, else the top-level
/// package (cunumpy's PyccelCache defaults to the package's own name). The
/// one place of that rule, for build, status, cache and the runtime.
std::string cache_name_of(const Config& config, const std::string& top_package);

/// Resolves the root as PyccelCache(name) does: `$<PREFIX>_KERNEL_CACHE`
/// taken literally (no `~` expansion; set but empty: the working folder),
/// else `<home>/.cache/<name>/kernels` with home from `HOME`, else the
/// password database; if that cannot be created or written,
/// `<tmp>/<name>-kernels` (`$TMPDIR`, else /tmp) with `fallback` set. An
/// explicit `override_root` (--cache-dir) is used as is, without fallback.
/// With `for_writing` false the preferred root is returned even when it is not
/// writable (readers that may also write look with planned_cache_location).
/// Every path returned is absolute and lexically normal.
///
/// Throws CacheError when no home folder is found (naming HOME and the
/// password database), or when no candidate is writable and `for_writing` is
/// true, naming every folder tried and why.
CacheLocation resolve_cache_location(const std::string& cache_name,
                                     const std::optional<std::filesystem::path>& override_root, bool for_writing);

/// The root a build would write, found without creating anything (status,
/// `build --dry-run`, the runtime library): as resolve_cache_location with `for_writing`, each
/// folder checked with util::could_make_writable_dir; when no candidate
/// could be written (a build would fail), the preferred root, for what it
/// holds. Throws CacheError when no home folder is found.
CacheLocation planned_cache_location(const std::string& cache_name,
                                     const std::optional<std::filesystem::path>& override_root);

/// Why a build could not write `planned` (planned_cache_location's answer for
/// the same `override_root`), found without creating anything: what
/// resolve_cache_location with `for_writing` would throw, naming each folder
/// tried. Empty when a build can write it.
std::string unwritable_cache_problem(const CacheLocation& planned,
                                     const std::optional<std::filesystem::path>& override_root);

/// The cache key of an entry: the SHA-256 of the canonical JSON of its inputs
/// (sorted keys, no whitespace). Inputs hold everything that can change the
/// artifact and nothing else: no absolute path, no timestamp.
std::string cache_key(const nlohmann::json& inputs);

/// One artifact of an entry.
struct Artifact {
    std::string file;    ///< path inside the entry folder: a name, or `a/b/name` for host builds
    std::string target;  ///< `sm_90`, `compute_90`, ...
    std::string sha256;  ///< of the file's bytes
    std::uint64_t size = 0;
};

/// Whether `file` may name an artifact inside an entry: `name` or `a/b/name`
/// (host entries keep Pyccel's package folders), with no empty, hidden, `.`
/// or `..` component and nothing absolute.
bool is_entry_file_name(const std::string& file);

/// The manifest.json of an entry, parsed narrowly.
struct Manifest {
    std::string key;
    std::string kind;          ///< "cuda" or "host" (a Pyccel build)
    std::string module;        ///< dotted kernel module, e.g. my_sim.kernels.push
    std::string kernel;        ///< function name
    std::string entry_symbol;  ///< lowered (mangled) name of the entry in the cubin
    std::string target;        ///< `sm_90` or `compute_90`
    nlohmann::json inputs;     ///< the key's inputs, readable
    std::vector<Artifact> artifacts;
    std::string built_at;  ///< ISO 8601, UTC
    double seconds = 0;    ///< compile time
    std::string log;       ///< the compiler's log, whole
    /// Key names of the headers the compiler reported reading (nvcc builds;
    /// empty otherwise): the scanner's check, kept for inspection.
    std::vector<std::string> compiler_dependencies;
    /// "host:pid" of the process that published the entry (EntryWriter::
    /// commit sets it); empty in manifests written before it was recorded.
    std::string published_by;

    nlohmann::json to_json() const;
    /// Throws CacheError naming `where` when a field is missing or mistyped.
    static Manifest from_json(const nlohmann::json& j, const std::string& where);
    /// As above, moving the inputs out of `j` rather than copying them (a
    /// parsed manifest's largest part, copied at every first call).
    static Manifest from_json(nlohmann::json&& j, const std::string& where);
    /// The manifest in `text` with its inputs left null: what loading an
    /// entry needs, read in about half the time (the runtime's first call).
    /// Throws CacheError naming `where` as from_json does, and for text that
    /// is not JSON.
    static Manifest without_inputs(std::string_view text, const std::string& where);
};

/// A manifest as loading read it, with the stat of the file it was read from
/// (links followed, taken of the open file). The key record keeps it beside
/// a key (key_record.hpp), so that a later first call whose stat of the
/// manifest is the same takes these fields instead of parsing the JSON:
/// the manifest's text was about half of a first call's own instructions
/// (bench/RESULTS.md, issue 14). Entries are published whole and never
/// written in place, so a manifest changes only as another file.
struct ManifestReading {
    std::filesystem::path file;  ///< the manifest.json read
    util::FileStat seen;
    /// What loading asks of a manifest: key, kind, module, kernel,
    /// entry_symbol, target and artifacts; nothing else is kept.
    Manifest manifest;
};

/// Writes one entry into a private temporary folder inside the root; commit()
/// publishes it with one rename. Destroyed without commit(), it removes the
/// folder: a failed or interrupted build leaves nothing a reader could see.
class EntryWriter {
public:
    /// Creates the temporary folder. Throws CacheError when it cannot.
    EntryWriter(const std::filesystem::path& root, std::string kind, std::string key);
    ~EntryWriter();
    EntryWriter(const EntryWriter&) = delete;
    EntryWriter& operator=(const EntryWriter&) = delete;

    /// The private folder the entry is written in, for builders that write
    /// files themselves (Pyccel writes a whole build folder); they must be
    /// fsynced before commit().
    const std::filesystem::path& folder() const { return staging_; }

    /// Writes `bytes` as `name` (fsynced) and returns its artifact record.
    Artifact add_file(const std::string& name, const std::string& target, const std::string& bytes);

    /// Writes the manifest, fsyncs, renames the folder into place and fsyncs the
    /// parent. When another process published the same key first, its entry is
    /// kept and ours dropped: both builders succeed. Returns the entry folder.
    /// Throws CacheError on I/O failure, leaving no entry behind.
    std::filesystem::path commit(const Manifest& manifest);

private:
    std::filesystem::path root_;
    std::string kind_;
    std::string key_;
    std::filesystem::path staging_;
    bool committed_ = false;
};

/// Reads and finds entries of one cache root.
class EntryStore {
public:
    explicit EntryStore(std::filesystem::path root);

    const std::filesystem::path& root() const { return root_; }

    /// The folder of entry `key` of `kind` ("cuda"), whether or not it exists.
    std::filesystem::path entry_dir(const std::string& kind, const std::string& key) const;

    /// The build lock of entry `key` (build_lock.hpp): `<entry>.lock`, beside it.
    std::filesystem::path lock_file(const std::string& kind, const std::string& key) const;

    /// The manifest of entry `key`, or nothing when there is no complete entry.
    /// An entry whose manifest is unreadable or whose artifacts are missing or
    /// of the wrong size counts as absent (and is reported through `problem`).
    std::optional<Manifest> find(const std::string& kind, const std::string& key, std::string* problem = nullptr) const;
    /// find() for loading alone: the manifest without its inputs (Manifest::without_inputs).
    /// With `kept`, a reading the key record kept for `key`: its fields are
    /// taken when the manifest's stat now is the one it was read with (the
    /// artifacts' sizes are still checked), and the file is read otherwise.
    /// `read`, when given, receives the reading when the file was read and
    /// parsed and the entry is complete (none when `kept` served, or no
    /// complete entry was found).
    std::optional<Manifest> find_to_load(const std::string& kind, const std::string& key,
                                         std::string* problem = nullptr, const ManifestReading* kept = nullptr,
                                         std::optional<ManifestReading>* read = nullptr) const;

    /// Whether entry `key` is published and still holds `files`: its
    /// manifest opened by name (on NFS an open revalidates with the server,
    /// so an entry another node removed is a miss, where a stat could answer
    /// from the attribute cache), the files stat(2)ed: the warm path of
    /// `build` and `status`. Publishing is atomic, so a present manifest
    /// means a whole entry; checksums are verified by `find`'s readers (the
    /// runtime, `cache verify`), not here. Throws TransientReadError when the
    /// open keeps failing with ESTALE.
    bool has_entry(const std::string& kind, const std::string& key, const std::vector<std::string>& files) const;

    /// Records `key` as the latest entry of kernel `module` for `target`, so a
    /// later build can say which input changed. Best effort: a failure to write
    /// the record is ignored (it only serves explanations).
    void remember_latest(const std::string& kind, const std::string& module, const std::string& target,
                         const std::string& key) const;

    /// remember_latest() for a hit, unless the record already names `key`: a
    /// kernel edited and then reverted makes its older entry current again
    /// (prune keeps current entries longest), while a warm build of an
    /// unchanged tree reads one small file per hit and writes nothing.
    void remember_hit(const std::string& kind, const std::string& module, const std::string& target,
                      const std::string& key) const;

    /// Records that entry `key` served now (a hit of `build`, a load of the
    /// runtime), for `cache prune`'s least-recently-used order: the
    /// modification time of `<kind>-used/<key>`, one empty file per entry,
    /// touched at most once a day (ccache's approach), so that on most days a
    /// warm build or an MPI rank only reads it, and no file is shared by all.
    /// Best effort: a read-only cache records nothing.
    void record_use(const std::string& kind, const std::string& key) const;

    /// When entry `key` last served (record_use), or nothing when never recorded.
    std::optional<std::time_t> last_use(const std::string& kind, const std::string& key) const;

    /// The latest entry recorded for `module` and `target`, if it still exists.
    /// Best effort, for explanations and lookups that may miss: none when the
    /// record or the manifest cannot be read, also while another node
    /// replaces them (ESTALE). With `problem`, why a recorded entry is not
    /// complete (an artifact missing or truncated).
    std::optional<Manifest> latest(const std::string& kind, const std::string& module, const std::string& target,
                                   std::string* problem = nullptr) const;

    /// Every key recorded as the latest entry of some kernel and target of
    /// `kind`: the entries a build of an unchanged tree would hit. Any other
    /// entry of that kind is superseded. Unreadable records are skipped.
    std::set<std::string> latest_keys(const std::string& kind) const;

    /// Records that building `key` for `module` and `target` failed, with the
    /// compiler's log, so `status` can say "failed last time". Best effort;
    /// nothing is recorded once the process is being stopped
    /// (util::stop_requested(): a compiler killed by Ctrl-C did not fail).
    void remember_failure(const std::string& kind, const std::string& module, const std::string& target,
                          const std::string& key, const std::string& log) const;

    /// Drops the failure record of `module` and `target` (after a success).
    void forget_failure(const std::string& kind, const std::string& module, const std::string& target) const;

    /// The failure recorded for `module` and `target`: {"key", "log", "at"}.
    std::optional<nlohmann::json> failure(const std::string& kind, const std::string& module,
                                          const std::string& target) const;

    /// Every entry of `kind`, complete or not, for `cache` inspection.
    std::vector<std::filesystem::path> entry_dirs(const std::string& kind) const;

    /// Writes CACHEDIR.TAG when missing. Throws CacheError when it cannot.
    void ensure_tagged() const;

    /// Removes temporary folders left by builders that died: those of a process
    /// on this host that no longer runs, and any older than `max_age_seconds`.
    /// Returns how many were removed.
    int remove_stale_temporaries(double max_age_seconds = 24 * 3600) const;

private:
    std::filesystem::path root_;
};

}  // namespace ck
