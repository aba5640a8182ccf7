/* Attribute caching: copy callbacks run by MPI_Comm_dup (custom, NULL_COPY,
 * DUP_FN), delete callbacks run by set-overwrite, delete_attr, Comm_free and
 * MPI_Finalize (on MPI_COMM_SELF), keyvals outliving their free, callbacks
 * that fail, the predefined attributes of MPI_COMM_WORLD, datatype attributes
 * through Type_dup and Type_free, and error classes. Counters live in the
 * callbacks' extra_state on each rank's stack (ranks share globals).
 */
#include <stdint.h>

#include "common.h"

typedef struct {
    int copies, deletes;
    intptr_t last_deleted;
    int fail; /* the callbacks return MPI_ERR_OTHER while set */
} Counters;

static int count_copy(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
    (void)comm;
    (void)keyval;
    Counters* c = (Counters*)extra;
    if (c->fail) return MPI_ERR_OTHER;
    c->copies++;
    *(void**)out = (void*)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void* value, void* extra) {
    (void)comm;
    (void)keyval;
    Counters* c = (Counters*)extra;
    if (c->fail) return MPI_ERR_OTHER;
    c->deletes++;
    c->last_deleted = (intptr_t)value;
    return MPI_SUCCESS;
}

static int type_copy(MPI_Datatype t, int keyval, void* extra, void* in, void* out, int* flag) {
    (void)t;
    return count_copy(MPI_COMM_NULL, keyval, extra, in, out, flag);
}

static int type_delete(MPI_Datatype t, int keyval, void* value, void* extra) {
    (void)t;
    return count_delete(MPI_COMM_NULL, keyval, value, extra);
}

static intptr_t get(MPI_Comm comm, int keyval, int* flag) {
    void* v = NULL;
    MPI_OK(MPI_Comm_get_attr(comm, keyval, &v, flag));
    return (intptr_t)v;
}

static void test_callbacks(void) {
    Counters counted = {0, 0, 0, 0}, nulled = {0, 0, 0, 0};
    int k_counted, k_null_copy, k_dup, flag;
    MPI_OK(MPI_Comm_create_keyval(count_copy, count_delete, &k_counted, &counted));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &k_null_copy, &nulled));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k_dup, NULL));

    MPI_Comm a, b;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_OK(MPI_Comm_set_attr(a, k_counted, (void*)10));
    MPI_OK(MPI_Comm_set_attr(a, k_null_copy, (void*)20));
    MPI_OK(MPI_Comm_set_attr(a, k_dup, (void*)30));
    CHECK(get(a, k_counted, &flag) == 10 && flag, "get after set");
    CHECK(get(MPI_COMM_WORLD, k_counted, &flag) == 0 && !flag, "not on the parent");

    MPI_OK(MPI_Comm_dup(a, &b));
    CHECK(counted.copies == 1, "copy callback ran %d times", counted.copies);
    CHECK(get(b, k_counted, &flag) == 11 && flag, "copied through the callback");
    get(b, k_null_copy, &flag);
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN does not copy");
    CHECK(get(b, k_dup, &flag) == 30 && flag, "MPI_COMM_DUP_FN copies the value");

    MPI_OK(MPI_Comm_set_attr(a, k_counted, (void*)15));
    CHECK(counted.deletes == 1 && counted.last_deleted == 10, "overwrite deletes the old value");
    MPI_OK(MPI_Comm_delete_attr(a, k_null_copy));
    CHECK(nulled.deletes == 1 && nulled.last_deleted == 20, "delete_attr");
    get(a, k_null_copy, &flag);
    CHECK(!flag, "deleted attribute is gone");

    MPI_OK(MPI_Comm_free(&b));
    CHECK(counted.deletes == 2 && counted.last_deleted == 11, "Comm_free deletes");

    /* A freed keyval lives on while an attribute uses it. */
    MPI_OK(MPI_Comm_free_keyval(&k_counted));
    CHECK(k_counted == MPI_KEYVAL_INVALID, "free_keyval resets the handle");
    MPI_OK(MPI_Comm_free(&a));
    CHECK(counted.deletes == 3 && counted.last_deleted == 15, "delete after free_keyval");

    /* Failing callbacks fail the call, and the attribute stays. */
    Counters failing = {0, 0, 0, 1};
    int k_fail;
    MPI_OK(MPI_Comm_create_keyval(count_copy, count_delete, &k_fail, &failing));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_OK(MPI_Comm_set_attr(a, k_fail, (void*)1));
    b = MPI_COMM_NULL;
    CHECK(error_class(MPI_Comm_dup(a, &b)) == MPI_ERR_OTHER, "failing copy callback");
    CHECK(error_class(MPI_Comm_delete_attr(a, k_fail)) == MPI_ERR_OTHER, "failing delete");
    CHECK(error_class(MPI_Comm_free(&a)) == MPI_ERR_OTHER && a != MPI_COMM_NULL,
          "Comm_free with a failing delete callback");
    get(a, k_fail, &flag);
    CHECK(flag, "the attribute survived");
    failing.fail = 0;
    MPI_OK(MPI_Comm_free(&a));
    CHECK(failing.deletes == 1, "deleted once it succeeds");
    MPI_OK(MPI_Comm_free_keyval(&k_fail));
    MPI_OK(MPI_Comm_free_keyval(&k_null_copy));
    MPI_OK(MPI_Comm_free_keyval(&k_dup));
}

static void test_predefined(int size) {
    int flag, *v;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767, "MPI_TAG_UB");
    int tag_ub = *v;
    MPI_OK(MPI_Send(&flag, 0, MPI_INT, MPI_PROC_NULL, tag_ub, MPI_COMM_WORLD));
    CHECK(error_class(MPI_Send(&flag, 0, MPI_INT, MPI_PROC_NULL, tag_ub + 1, MPI_COMM_WORLD)) ==
              MPI_ERR_TAG,
          "a tag above MPI_TAG_UB");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag && *v == MPI_PROC_NULL, "MPI_HOST");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag && *v == MPI_ANY_SOURCE, "MPI_IO");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(flag && *v == 0, "MPI_WTIME_IS_GLOBAL");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    CHECK(flag && *v == size, "MPI_UNIVERSE_SIZE");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(flag && *v == 0, "MPI_APPNUM");
    int cls;
    MPI_OK(MPI_Add_error_class(&cls));
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && *v >= cls, "MPI_LASTUSEDCODE %d below a new class %d", *v, cls);

    CHECK(error_class(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL)) == MPI_ERR_KEYVAL,
          "predefined attributes are read-only");
    int k = MPI_TAG_UB;
    CHECK(error_class(MPI_Comm_free_keyval(&k)) == MPI_ERR_KEYVAL, "freeing a predefined keyval");
}

static void test_keyval_errors(void) {
    int k, tk, flag;
    void* v;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL));
    const int stale = k;
    MPI_OK(MPI_Comm_free_keyval(&k));
    CHECK(error_class(MPI_Comm_get_attr(MPI_COMM_WORLD, stale, &v, &flag)) == MPI_ERR_KEYVAL,
          "freed keyval");
    CHECK(
        error_class(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, NULL)) == MPI_ERR_KEYVAL,
        "MPI_KEYVAL_INVALID");
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
    CHECK(error_class(MPI_Comm_set_attr(MPI_COMM_WORLD, tk, NULL)) == MPI_ERR_KEYVAL,
          "a datatype keyval on a communicator");
    MPI_OK(MPI_Type_free_keyval(&tk));
    CHECK(error_class(MPI_Comm_set_attr(MPI_COMM_NULL, 0, NULL)) == MPI_ERR_COMM, "MPI_COMM_NULL");
}

static void test_type_attributes(void) {
    Counters counted = {0, 0, 0, 0};
    int k, flag;
    void* v = NULL;
    MPI_OK(MPI_Type_create_keyval(type_copy, type_delete, &k, &counted));
    MPI_Datatype vec, copy;
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_set_attr(vec, k, (void*)40));
    MPI_OK(MPI_Type_get_attr(vec, k, &v, &flag));
    CHECK(flag && (intptr_t)v == 40, "type attribute");
    MPI_OK(MPI_Type_dup(vec, &copy));
    CHECK(counted.copies == 1, "Type_dup runs the copy callback");
    MPI_OK(MPI_Type_get_attr(copy, k, &v, &flag));
    CHECK(flag && (intptr_t)v == 41, "copied type attribute");
    MPI_OK(MPI_Type_free(&vec));
    CHECK(counted.deletes == 1 && counted.last_deleted == 40, "Type_free deletes");
    /* A new type may reuse the freed handle: it must carry no attribute. */
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &vec));
    MPI_OK(MPI_Type_get_attr(vec, k, &v, &flag));
    CHECK(!flag, "a new type has no attribute");
    MPI_OK(MPI_Type_set_attr(MPI_INT, k, (void*)50));
    MPI_OK(MPI_Type_delete_attr(MPI_INT, k));
    CHECK(counted.deletes == 2 && counted.last_deleted == 50, "delete on a predefined type");
    MPI_OK(MPI_Type_free_keyval(&k));
    MPI_OK(MPI_Type_free(&copy));
    CHECK(counted.deletes == 3 && counted.last_deleted == 41, "delete after free_keyval");
    MPI_OK(MPI_Type_free(&vec));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_callbacks();
    test_predefined(size);
    test_keyval_errors();
    test_type_attributes();

    /* MPI_Finalize deletes MPI_COMM_SELF's attributes first. */
    Counters at_finalize = {0, 0, 0, 0};
    int k;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &k, &at_finalize));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k, (void*)77));
    MPI_OK(MPI_Finalize());
    if (at_finalize.deletes != 1 || at_finalize.last_deleted != 77) {
        fprintf(stderr, "FAIL rank %d: MPI_COMM_SELF's attribute not deleted by MPI_Finalize\n",
                rank);
        return 1;
    }
    if (rank == 0) printf("attrs: OK (%d ranks)\n", size);
    return 0;
}
