// Rank images: a private copy of the program's code and data for every rank
// of the node process, and of the user's own shared libraries, so that every
// global, static, C++ static object and Fortran COMMON block is per rank,
// while the runtime, libc and the other system libraries are loaded once and
// shared. Must never change what rank 0 runs: it keeps the image the kernel
// and the loader mapped.
//
// How: the program is built position-independent (mpicc does). At start-up
// the runtime copies the executable (the part the loader maps) into one memfd
// per extra rank, clears the DF_1_PIE flag that makes glibc refuse to dlopen
// an executable, and dlopens each copy (RTLD_NOW | RTLD_LOCAL): the copy's
// references to the runtime and libc bind to the single instances already
// loaded, its own code and data are fresh. Each copy's main sits at the same
// offset from its load base as the original's, so the program needs no
// exported symbols.
//
// The user's shared libraries: a library the program needs (directly, or
// through another of the user's libraries) is the user's when it is MPI code
// (it needs libfibermpi itself) or when it lies outside the system
// directories (/lib*, /usr/, /opt/) and outside the runtime's own directory;
// never the runtime, never a library that a shared one (libc, the runtime,
// an LD_PRELOAD library, ...) needs too, never one whose path contains an
// entry of MPC_SHARED_LIBS (colon-separated; "all" keeps every library
// shared). Each rank gets its own memfd copy of each of them, and the
// DT_NEEDED strings of its copies are rewritten in place to "/dev/fd/N" (or
// to "N" with the RUNPATH rewritten to "/dev/fd" when the name is shorter
// than the path), so that loading rank r's program copy loads rank r's
// library copies as its dependencies. Symbol binding: a copy looks symbols up
// in the global scope first (the original program and libraries, rank 0's),
// then in its own dependency list. While the copies are loaded, the names
// the user's code defines (program and user libraries, not names a system
// library also defines: the user's malloc stays the process's one) are hidden
// from the originals' hash tables (and the runtime's: a PMPI layer of the
// user's wraps the runtime per rank), so the copies bind to each other.
// Nothing like RTLD_DEEPBIND: LD_PRELOAD interposition and sanitizers keep
// working.
//
// Copy relocations: a program that reads a library's variable directly
// (stderr, environ, std::cout, a user library's global) owns a copy of it
// that the loader fills at load time. The loader would fill a copy's from the
// libraries' own (unused) storage, so the runtime does it instead: from the
// live variable (rank 0's) for system libraries, from the rank's library copy
// for the user's; to that end the copies' initialisers (C++ constructors) are
// run by the runtime after the fill, dependencies first.
//
// Code of a PIE executable reaches its own thread-local variables at a fixed
// offset from the thread pointer, whichever copy runs it: that block is
// therefore swapped per rank at every context switch (see the scheduler's
// task_tls option), which makes __thread / thread_local variables per rank.
// The user libraries' thread-locals are per copy, hence per rank.
//
// Memory: only the pages a copy changes (dynamic tables, relocated data,
// written variables) are per rank. The copies' other read-only pages (code,
// constants) are mapped from the original files, shared by all ranks through
// the page cache, and punched out of the memfds; no debug information is
// copied.
//
// Limits: libraries the program dlopens itself at run time are loaded once
// and shared by all ranks; so is anything reached through dlsym(RTLD_DEFAULT)
// (it finds rank 0's). A system library's variables that the program reads
// directly (stdin, std::cout) are per-rank snapshots taken at start-up
// (libc_state.hpp gives each rank its own optind, optarg, opterr, optopt and
// environ, and keeps its tzname, timezone and daylight current). A user
// library with initial-exec thread-locals (static TLS) stays shared (with a
// warning): glibc has room for few copies of those. While the copies load,
// the runtime's functions that the user's code redefines (a PMPI layer) are
// hidden too: a user library's constructor must not make the runtime call them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "host.hpp"

namespace mpc::host {

struct ImageSet {
    std::vector<MainFn> mains;     // per local rank
    std::vector<void*> handles;    // dlopen handles of the program copies (ranks 1..)
    bool private_globals = false;  // false: every rank runs the original image
    size_t private_libraries = 0;  // user libraries copied per rank
    // Per local rank, the load bases of the images only that rank runs (its
    // program copy and library copies; empty when the ranks share them).
    std::vector<std::vector<uintptr_t>> objects;
    // The program's static TLS block, swapped per rank.
    size_t tls_size = 0;
    std::ptrdiff_t tls_offset = 0;
    std::vector<char> tls_init;
};

// Loads the images for the local ranks (owners: each rank's scheduler owner;
// the constructors of rank r's copies run as rank r). With shared, or when
// the program cannot be copied (not position-independent), every rank runs
// `original`.
ImageSet load_images(MainFn original, const std::vector<void*>& owners, bool shared);
// Runs the copies' destructors and unmaps them.
void unload_images(ImageSet& images);

}  // namespace mpc::host
