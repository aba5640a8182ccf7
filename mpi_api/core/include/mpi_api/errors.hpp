// mpi_api/errors: error codes, classes, messages and error handlers.
//
// An error code is a class (low 8 bits) plus, above it, a mark and the index
// of a detailed message ("invalid rank 5: the communicator has 4 ranks"), so that the user's
// error handler and MPI_Error_string get the specific cause while
// MPI_Error_class still yields the standard class. Codes and classes added by
// the user (MPI_Add_error_class/code) live above MPI_ERR_LASTCODE.
#pragma once

#include <cstdint>
#include <string>

#include "mpi.h"

namespace mpc::mpi {

struct Comm;

// Creates an error code of class `cls` carrying a formatted detail message.
int make_error(int cls, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// The class of any code (predefined, detailed, or user-added); -1 if unknown.
int error_class_of(int code);
// Full text of a code ("Invalid rank: invalid rank 5 ..."); empty if unknown.
std::string error_text(int code);

// The initial error handler (MPI 4.1 section 9.3): MPC_INITIAL_ERRHANDLER
// (mpcrun --initial-errhandler) names it, MPI_ERRORS_ARE_FATAL by default.
// MPI_COMM_WORLD and MPI_COMM_SELF start with it, and it handles the errors
// raised where there is no rank. MPI_INFO_ENV reports its name under
// "mpi_initial_errhandler".
MPI_Errhandler initial_errhandler();
const char* initial_errhandler_name();

int add_error_class(int* cls);
int add_error_code(int cls, int* code);
int add_error_string(int code, const char* text);
int last_used_code();
// MPI_Remove_error_class/code/string (MPI 4.1): user-added ones only.
int remove_error_class(int cls);
int remove_error_code(int code);
int remove_error_string(int code);

// Error handlers. A user handler belongs to the kind of object it was created
// for (MPI_Comm_create_errhandler, MPI_Win_create_errhandler); the predefined
// ones fit every kind. Handles are ints alike, so one function type calls
// them all.
enum class ErrObject : uint8_t { Comm, Win, Session };
struct Errhandler {
    enum Kind { Fatal, Return, User, Abort } kind = Fatal;
    MPI_Comm_errhandler_function* fn = nullptr;
    bool builtin = false;
    ErrObject object = ErrObject::Comm;
};
Errhandler* errhandler_lookup(MPI_Errhandler h);
int errhandler_create(MPI_Comm_errhandler_function* fn, MPI_Errhandler* out,
                      ErrObject object = ErrObject::Comm);
// Raises code through handler h of an object that is not a communicator (a
// window): a user handler gets `handle`; `what` names the object when the
// handler ends the job. Returns code, as raise() does.
int raise_object(MPI_Errhandler h, int handle, int code, const char* what);
int errhandler_free(MPI_Errhandler* h);

// Raises `code` on communicator comm (nullptr: MPI_COMM_WORLD of the caller, as the
// standard says for errors not tied to an object): calls its handler, which may
// end the job. Returns code for the caller to return. MPI_SUCCESS passes through
// inline (most calls return through here); raise_error takes the rest.
int raise_error(Comm* comm, int code);
inline int raise(Comm* comm, int code) {
    return code == MPI_SUCCESS ? code : raise_error(comm, code);
}
// Same, for a communicator given by handle (falls back to MPI_COMM_WORLD when invalid).
int raise_on(MPI_Comm comm, int code);

}  // namespace mpc::mpi
