#include "util/library_surface.hpp"

namespace ck::util {

// One counter per thread: a surface is entered and left on the same thread.
int& SurfaceDepth::depth()
{
    thread_local int depth = 0;
    return depth;
}

}  // namespace ck::util
