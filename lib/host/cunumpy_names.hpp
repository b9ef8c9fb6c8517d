// cunumpy's PyccelCache loads a build by `<stem>-<20 hex>`, a key over the
// module's own text: it cannot tell apart two modules of one text that import
// different code (a copied kernel package whose helpers were then edited).
// Both map to one name, and cunumpy loads whichever build the name holds for
// both: wrong numbers, no warning. Its lookup has no other input we could
// vary, so the collision cannot be designed away; it is caught here instead,
// within one build (both modules fail) and across builds (the name points at
// a build that is not this module's: status says so, build warns).
#pragma once

#include "host/host_planner.hpp"
#include "host/cunumpy_entry.hpp"
#include "cache/cache.hpp"

#include <string>

namespace ck {

/// Gives a `problem` to every module of `plan` that shares its cunumpy name
/// with a module of another content key, naming the other module, why
/// (cunumpy keys on the module's own text) and what to do; then to every
/// module that imports one of those. Modules of one name and one content key
/// (identical copies) are left alone: either build serves both.
void mark_cunumpy_name_collisions(HostPlan& plan);

/// The content key (host_content_key) of published host entry `key`, read
/// from its manifest and those of the entries it imports; "" when one of them
/// is missing or unreadable.
std::string entry_content_key(const EntryStore& store, const std::string& key);

/// What cunumpy's name of plan.modules[index] holds, when cunumpy would not
/// load a build equivalent to this module's entry from it.
struct CunumpyNameHolder {
    std::string problem;       ///< in words, for status and warnings; "" when cunumpy loads an equivalent build
    std::string other_module;  ///< the name points at the build of this other module (a collision across builds)
};

/// Reads where `named` (cunumpy's name of plan.modules[index], see
/// read_cunumpy_entry) leads: this module's entry, an equivalent one (an
/// identical copy's, or cunumpy's own folder of a module without imports),
/// or something else: nothing, cunumpy's own folder of a module that imports
/// others, an older build of this module, another module's build, a missing
/// entry. Starts no process; reads manifests only when the name does not
/// point at this module's entry.
CunumpyNameHolder check_cunumpy_name(const HostPlan& plan, std::size_t index, const EntryStore& store,
                                     const CunumpyEntry& named);

}  // namespace ck
