/* A user shared library with its own globals (rank images must give each rank
 * its own copy): libuserlib needs libud, the program needs both. */
#ifndef FIBERMPI_TESTS_USERLIB_H
#define FIBERMPI_TESTS_USERLIB_H

extern int lib_counter;     /* .bss, read and written by the program directly */
extern int lib_initialised; /* .data, read and written by the program directly */
extern __thread int lib_tls;
extern int dep_value; /* in libud */

/* What the library sees of its own state. */
struct userlib_state {
    int* counter;     /* &lib_counter as the library sees it */
    int* initialised; /* &lib_initialised as the library sees it */
    int counter_value;
    int initialised_value;
    int file_static;
    int static_local;
    int tls;
    int constructions;       /* times the library's constructor ran in this copy */
    int seen_by_constructor; /* lib_initialised when the constructor ran */
    int hook;                /* program_hook() called from the library */
    int dep_value;           /* libud's dep_value, read by libuserlib */
    int barriers;            /* MPI_Barrier calls through the library's PMPI wrapper */
};

/* Adds by to every variable of the library (and of libud); counts calls. */
void userlib_bump(int by);
void userlib_state(struct userlib_state* out);

/* Defined by the program, called by the library. */
int program_hook(void);

/* libud */
int dep_bump(int by);

#endif
