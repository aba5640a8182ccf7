// Rank images: a private copy of the program's code and data for every rank
// of the node process, so that every global, static, C++ static object and
// Fortran COMMON block is per rank, while the runtime, libc and the other
// shared libraries are loaded once and shared.
//
// How: the program is built position-independent (mpicc does). At start-up
// the runtime copies the executable's file into one memfd per extra rank,
// clears the DF_1_PIE flag that makes glibc refuse to dlopen an executable,
// and dlopens each copy (RTLD_LOCAL): the copy's references to the runtime and
// libc bind to the single instances already loaded, its own code and data are
// fresh, and its static constructors run once. The first rank keeps the
// image the kernel loaded. Each copy's main sits at the same offset from its
// load base as the original's, so the program needs no exported symbols.
//
// Code of a PIE executable reaches its own thread-local variables at a fixed
// offset from the thread pointer, whichever copy runs it: that block is
// therefore swapped per rank at every context switch (see the scheduler's
// task_tls_* options), which makes __thread / thread_local variables per rank.
#pragma once

#include <cstddef>
#include <vector>

#include "host.hpp"

namespace mpc::host {

struct ImageSet {
    std::vector<MainFn> mains;     // per local rank
    std::vector<void*> handles;    // dlopen handles of the copies (closed at the end)
    bool private_globals = false;  // false: every rank runs the original image
    // The program's static TLS block, swapped per rank.
    size_t tls_size = 0;
    std::ptrdiff_t tls_offset = 0;
    std::vector<char> tls_init;
};

// Loads the images for nlocal ranks. With shared, or when the program cannot
// be copied (not position-independent), every rank runs `original`.
ImageSet load_images(MainFn original, int nlocal, bool shared);
// Runs the copies' destructors and unmaps them.
void unload_images(ImageSet& images);

}  // namespace mpc::host
