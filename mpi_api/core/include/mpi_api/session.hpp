// mpi_api/session: MPI 4.0 sessions (section 11.3), the objects behind
// MPI_Session handles.
//
// A session belongs to the rank that made it; while one is open the rank may
// use MPI without MPI_Init (api.hpp's active()). It holds only its error
// handler and the info it was made with: process sets are the job's
// (pset.hpp), and communicators made from its groups stand on their own, so
// finalizing a session frees nothing a program still holds. Never blocks.
#pragma once

#include <string>

#include "mpi.h"
#include "mpi_api/info.hpp"
#include "mpi_api/rank.hpp"

namespace mpc::mpi {

struct Session {
    int handle = MPI_SESSION_NULL;
    RankState* owner = nullptr;
    MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
    int thread_level = MPI_THREAD_SINGLE;  // what the session provides
    std::shared_ptr<BsendBuffer> bsend;    // MPI_Session_attach_buffer's
    // The memory allocation kinds it supports (alloc_kinds.hpp): those its
    // info asked for, else the startup's.
    std::string alloc_kinds;
};

// A new session of rank me (counted in me->sessions).
Session* session_create(RankState* me);
// The caller's session of that handle, or nullptr (null, finalized, not a
// session, or another rank's).
Session* session_lookup(MPI_Session handle, const RankState* me);
// Ends the session: the handle becomes invalid.
void session_free(Session* s);

// Raises code through the session's handler (MPI_Session_call_errhandler,
// and every error of a call on a session). Returns code.
int raise_session(Session* s, int code);

}  // namespace mpc::mpi
