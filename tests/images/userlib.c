/* libuserlib: globals of every kind, a constructor, a call back into the
 * program and a PMPI wrapper (so it is MPI code too). */
#include "userlib.h"

#include <mpi.h>

int lib_counter;
int lib_initialised = 500;
__thread int lib_tls = 3;
static int file_static = 7;
static int constructions;
static int seen_by_constructor;
static int barriers;

__attribute__((constructor)) static void userlib_init(void) {
    ++constructions;
    seen_by_constructor = lib_initialised;
}

static int bump_local(void) {
    static int calls; /* static local */
    return __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
}

/* Atomic updates: with shared images, ranks on several threads run this. */
int MPI_Barrier(MPI_Comm comm) {
    __atomic_add_fetch(&barriers, 1, __ATOMIC_RELAXED);
    return PMPI_Barrier(comm);
}

void userlib_bump(int by) {
    __atomic_add_fetch(&file_static, by, __ATOMIC_RELAXED);
    lib_tls += by;
    bump_local();
    dep_bump(by);
}

void userlib_state(struct userlib_state* out) {
    out->counter = &lib_counter;
    out->initialised = &lib_initialised;
    out->counter_value = lib_counter;
    out->initialised_value = lib_initialised;
    out->file_static = file_static;
    out->static_local = bump_local() - 1;
    out->tls = lib_tls;
    out->constructions = constructions;
    out->seen_by_constructor = seen_by_constructor;
    out->hook = program_hook();
    out->dep_value = dep_value;
    out->barriers = barriers;
}
