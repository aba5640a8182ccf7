/* The MPI-1 attribute calls, deprecated but still in MPI 3.1 (section 15.1):
 * MPI_Keyval_create / MPI_Keyval_free / MPI_Attr_put / MPI_Attr_get /
 * MPI_Attr_delete with the predefined callbacks MPI_NULL_COPY_FN, MPI_DUP_FN
 * and MPI_NULL_DELETE_FN and with the program's own. They are the
 * communicator attribute calls under other names: an attribute put with one
 * is read with the other, copied by MPI_Comm_dup, deleted by MPI_Comm_free,
 * and errors come back with the same classes.
 */
#include <stdint.h>

#include "common.h"

typedef struct {
    int copies, deletes;
    intptr_t last_deleted;
} Counters;

static int my_copy(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
    (void)comm;
    (void)keyval;
    ((Counters*)extra)->copies++;
    *(void**)out = (void*)((intptr_t)in * 2);
    *flag = 1;
    return MPI_SUCCESS;
}

static int my_delete(MPI_Comm comm, int keyval, void* value, void* extra) {
    (void)comm;
    (void)keyval;
    Counters* c = (Counters*)extra;
    c->deletes++;
    c->last_deleted = (intptr_t)value;
    return MPI_SUCCESS;
}

static intptr_t attr(MPI_Comm comm, int keyval, int* flag) {
    void* v = NULL;
    MPI_OK(MPI_Attr_get(comm, keyval, &v, flag));
    return (intptr_t)v;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, flag = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* Predefined attributes through MPI_Attr_get. */
    int* tag_ub = NULL;
    MPI_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    CHECK(flag && tag_ub && *tag_ub >= 32767, "MPI_TAG_UB: flag %d", flag);

    /* The three predefined callbacks, through MPI_Comm_dup. */
    Counters c = {0, 0, 0};
    int k_null, k_dup, k_mine;
    MPI_OK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k_null, NULL));
    MPI_OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &k_dup, NULL));
    MPI_OK(MPI_Keyval_create(my_copy, my_delete, &k_mine, &c));
    CHECK(k_null != MPI_KEYVAL_INVALID && k_dup != k_null && k_mine != k_dup,
          "keyvals %d %d %d", k_null, k_dup, k_mine);
    MPI_Comm comm;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_OK(MPI_Attr_put(comm, k_null, (void*)(intptr_t)(100 + rank)));
    MPI_OK(MPI_Attr_put(comm, k_dup, (void*)(intptr_t)(200 + rank)));
    MPI_OK(MPI_Attr_put(comm, k_mine, (void*)(intptr_t)(300 + rank)));
    CHECK(attr(comm, k_dup, &flag) == 200 + rank && flag, "Attr_get after Attr_put");
    /* The same attribute through the MPI-2 names. */
    void* v = NULL;
    MPI_OK(MPI_Comm_get_attr(comm, k_mine, &v, &flag));
    CHECK(flag && (intptr_t)v == 300 + rank, "Comm_get_attr of an Attr_put value");
    MPI_OK(MPI_Comm_set_attr(comm, k_null, (void*)(intptr_t)(110 + rank)));
    CHECK(attr(comm, k_null, &flag) == 110 + rank && flag, "Attr_get of a Comm_set_attr value");

    MPI_Comm copy;
    MPI_OK(MPI_Comm_dup(comm, &copy));
    attr(copy, k_null, &flag);
    CHECK(!flag, "MPI_NULL_COPY_FN copied the attribute");
    CHECK(attr(copy, k_dup, &flag) == 200 + rank && flag, "MPI_DUP_FN did not copy the value");
    CHECK(attr(copy, k_mine, &flag) == 2 * (300 + rank) && flag && c.copies == 1,
          "own copy callback: flag %d, %d copies", flag, c.copies);

    /* Replacing and deleting run the delete callback with the old value. */
    MPI_OK(MPI_Attr_put(copy, k_mine, (void*)(intptr_t)7));
    CHECK(c.deletes == 1 && c.last_deleted == 2 * (300 + rank), "replacing: %d deletes of %ld",
          c.deletes, (long)c.last_deleted);
    MPI_OK(MPI_Attr_delete(copy, k_mine));
    CHECK(c.deletes == 2 && c.last_deleted == 7, "Attr_delete: %d deletes of %ld", c.deletes,
          (long)c.last_deleted);
    attr(copy, k_mine, &flag);
    CHECK(!flag, "the attribute is still there after Attr_delete");

    /* A freed keyval lives on while an attribute uses it. */
    const int k_saved = k_mine;
    MPI_OK(MPI_Keyval_free(&k_mine));
    CHECK(k_mine == MPI_KEYVAL_INVALID, "Keyval_free left %d", k_mine);
    MPI_OK(MPI_Comm_free(&comm));
    CHECK(c.deletes == 3 && c.last_deleted == 300 + rank, "Comm_free: %d deletes", c.deletes);
    MPI_OK(MPI_Comm_free(&copy));

    /* Errors: a freed or invalid keyval, a predefined one. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Attr_put(MPI_COMM_WORLD, k_saved, NULL);
    CHECK(error_class(rc) == MPI_ERR_KEYVAL, "Attr_put with a freed keyval returned %d", rc);
    rc = MPI_Attr_get(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag);
    CHECK(error_class(rc) == MPI_ERR_KEYVAL, "Attr_get(MPI_KEYVAL_INVALID) returned %d", rc);
    rc = MPI_Attr_delete(MPI_COMM_WORLD, MPI_TAG_UB);
    CHECK(error_class(rc) == MPI_ERR_KEYVAL, "Attr_delete(MPI_TAG_UB) returned %d", rc);
    rc = MPI_Attr_put(MPI_COMM_NULL, k_dup, NULL);
    CHECK(error_class(rc) == MPI_ERR_COMM, "Attr_put(MPI_COMM_NULL) returned %d", rc);
    int bad = MPI_KEYVAL_INVALID;
    rc = MPI_Keyval_free(&bad);
    CHECK(error_class(rc) == MPI_ERR_KEYVAL, "Keyval_free(MPI_KEYVAL_INVALID) returned %d", rc);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    MPI_OK(MPI_Keyval_free(&k_null));
    MPI_OK(MPI_Keyval_free(&k_dup));
    MPI_Finalize();
    return 0;
}
