/* Per-function MPI time for the examples and benchmarks, measured the same
 * way under any MPI: a profiling layer (the MPI_ names defined here, calling
 * the PMPI_ ones) that adds up, per rank, the calls and seconds spent in each
 * communication function. Link mpi_profile.c into a program and call:
 *   prof_reset()            where the timed region starts (after set-up),
 *   prof_report(comm, app)  where it ends: rank 0 prints one line per function
 *                           and one summary line, machine-readable:
 *   PROFILE app=<app> fn=<MPI_X> calls=<mean> mean_s=<mean> max_s=<max>
 *   PROFILE app=<app> total wall_s=<max> mpi_mean_s=.. mpi_max_s=.. compute_mean_s=..
 * Compute time is wall minus MPI time, per rank. */
#ifndef EXAMPLES_MPI_PROFILE_H
#define EXAMPLES_MPI_PROFILE_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

void prof_reset(void);
void prof_report(MPI_Comm comm, const char* app);

#ifdef __cplusplus
}
#endif

#endif
