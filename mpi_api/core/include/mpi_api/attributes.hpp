// mpi_api/attributes: keyvals and the attributes cached on communicators and
// datatypes.
//
// A keyval is process-wide (ranks of a node process that share a library's
// static keyval variable all use the one keyval) and lives until it is freed
// and no object carries an attribute with it. Callbacks are user code: they
// are never called under a lock, and they may call MPI.
// Communicator attributes live in Comm::attributes; datatype attributes in a
// table here, keyed by handle, which the datatype code keeps right through
// type_attrs_copy (MPI_Type_dup) and type_attrs_delete_all (MPI_Type_free).
#pragma once

#include <map>

#include "mpi.h"

namespace mpc::mpi {

struct Comm;

enum class KeyvalKind { Comm, Type, Win };

int comm_keyval_create(MPI_Comm_copy_attr_function* copy_fn,
                       MPI_Comm_delete_attr_function* delete_fn, void* extra_state, int* keyval);
int type_keyval_create(MPI_Type_copy_attr_function* copy_fn,
                       MPI_Type_delete_attr_function* delete_fn, void* extra_state, int* keyval);
// Sets *keyval to MPI_KEYVAL_INVALID.
int keyval_free(KeyvalKind kind, int* keyval);

// Whether keyval is one of the predefined communicator attributes (MPI_TAG_UB...),
// whose values are ints held by the library.
bool is_predefined_keyval(int keyval);

// Set replaces an existing value after running its delete callback.
int comm_attr_set(Comm* c, int keyval, void* value);
// Predefined attributes (MPI_TAG_UB, ...) are answered on every communicator.
int comm_attr_get(Comm* c, int keyval, void** value, int* flag);
int comm_attr_delete(Comm* c, int keyval);
// MPI_Comm_dup: runs the copy callbacks of from's attributes into to.
int comm_attrs_copy(Comm* from, Comm* to);
// MPI_Comm_free, MPI_Finalize on MPI_COMM_SELF: runs every delete callback.
int comm_attrs_delete_all(Comm* c);

// Windows keep their attributes in a map of their own (keyval -> value);
// `win` is the handle the callbacks get. Windows are never duplicated, so
// their copy callbacks are never called.
int win_keyval_create(MPI_Win_copy_attr_function* copy_fn, MPI_Win_delete_attr_function* delete_fn,
                      void* extra_state, int* keyval);
int win_attr_set(std::map<int, void*>& attrs, MPI_Win win, int keyval, void* value);
int win_attr_get(const std::map<int, void*>& attrs, int keyval, void** value, int* flag);
int win_attr_delete(std::map<int, void*>& attrs, MPI_Win win, int keyval);
int win_attrs_delete_all(std::map<int, void*>& attrs, MPI_Win win);

int type_attr_set(MPI_Datatype type, int keyval, void* value);
int type_attr_get(MPI_Datatype type, int keyval, void** value, int* flag);
int type_attr_delete(MPI_Datatype type, int keyval);
int type_attrs_copy(MPI_Datatype from, MPI_Datatype to);
int type_attrs_delete_all(MPI_Datatype type);

}  // namespace mpc::mpi
