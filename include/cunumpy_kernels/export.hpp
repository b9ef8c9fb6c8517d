// Symbol visibility of libcunumpy-kernels: the library is built with hidden
// visibility and exports only what include/ declares with CK_API.
#pragma once

#if defined(CK_BUILDING_LIBRARY)
#define CK_API __attribute__((visibility("default")))
#else
#define CK_API
#endif
