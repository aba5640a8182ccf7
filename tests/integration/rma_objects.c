/* Windows as objects (MPI 3.1 sections 11.2.5 to 11.2.7, 6.7.3, 8.3, 8.2):
 *
 * - predefined attributes of every flavor: MPI_WIN_BASE, MPI_WIN_SIZE,
 *   MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR, MPI_WIN_MODEL (unified);
 * - keyvals: set, get, replace (delete callback on the old value), delete,
 *   and every remaining attribute's delete callback at MPI_Win_free; the
 *   predefined callbacks;
 * - MPI_Win_get_group, names, info (set, then get: the value is there, and
 *   the hints in force);
 * - error handlers: a user handler created for windows gets the window and
 *   the code from MPI_Win_call_errhandler and from a failing call;
 *   MPI_Win_get_errhandler; MPI_Win_c2f / f2c;
 * - MPI_Alloc_mem with an info, MPI_Free_mem, and MPI_ERR_BASE for memory
 *   that does not come from MPI_Alloc_mem.
 */
#include "common.h"

static int rank, size;
static int deletes[8], ndeletes;

static int delete_fn(MPI_Win win, int keyval, void* value, void* extra) {
    (void)win;
    (void)keyval;
    CHECK(extra == &ndeletes, "extra state %p", extra);
    deletes[ndeletes++] = (int)(intptr_t)value;
    return MPI_SUCCESS;
}

static MPI_Win handler_win;
static int handler_code, handler_calls;
static void win_handler(MPI_Win* win, int* code, ...) {
    handler_win = *win;
    handler_code = *code;
    ++handler_calls;
}

static void check_attrs(MPI_Win win, void* base, MPI_Aint bytes, int unit, int flavor) {
    void* got_base;
    MPI_Aint* got_size;
    int *got_unit, *got_flavor, *got_model, flag = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &got_base, &flag));
    CHECK(flag && got_base == base, "MPI_WIN_BASE %p, expected %p", got_base, base);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &got_size, &flag));
    CHECK(flag && *got_size == bytes, "MPI_WIN_SIZE %ld", (long)*got_size);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &got_unit, &flag));
    CHECK(flag && *got_unit == unit, "MPI_WIN_DISP_UNIT %d", *got_unit);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &got_flavor, &flag));
    CHECK(flag && *got_flavor == flavor, "MPI_WIN_CREATE_FLAVOR %d, expected %d", *got_flavor,
          flavor);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &got_model, &flag));
    CHECK(flag && *got_model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL %d", *got_model);
}

static void flavors(void) {
    double buf[10];
    MPI_Win win;
    MPI_OK(MPI_Win_create(buf, sizeof buf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, buf, sizeof buf, sizeof(double), MPI_WIN_FLAVOR_CREATE);
    MPI_OK(MPI_Win_free(&win));
    void* base;
    MPI_OK(MPI_Win_allocate(24, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    check_attrs(win, base, 24, 4, MPI_WIN_FLAVOR_ALLOCATE);
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Win_allocate(0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC);
    MPI_OK(MPI_Win_free(&win));
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_OK(MPI_Win_allocate_shared(16, 8, MPI_INFO_NULL, node, &base, &win));
    check_attrs(win, base, 16, 8, MPI_WIN_FLAVOR_SHARED);
    MPI_OK(MPI_Win_free(&win));
    MPI_Comm_free(&node);
}

static void attributes(MPI_Win win) {
    int k1, k2, k3;
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_fn, &k1, &ndeletes));
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_DUP_FN, delete_fn, &k2, &ndeletes));
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &k3, NULL));
    MPI_OK(MPI_Win_set_attr(win, k1, (void*)(intptr_t)11));
    MPI_OK(MPI_Win_set_attr(win, k2, (void*)(intptr_t)21));
    MPI_OK(MPI_Win_set_attr(win, k3, (void*)(intptr_t)31));
    MPI_OK(MPI_Win_set_attr(win, k2, (void*)(intptr_t)22)); /* deletes 21 */
    CHECK(ndeletes == 1 && deletes[0] == 21, "replacing an attribute: %d deletes", ndeletes);
    void* v;
    int flag = 0;
    MPI_OK(MPI_Win_get_attr(win, k2, &v, &flag));
    CHECK(flag && (intptr_t)v == 22, "attribute %ld", (long)(intptr_t)v);
    MPI_OK(MPI_Win_delete_attr(win, k3));
    MPI_OK(MPI_Win_get_attr(win, k3, &v, &flag));
    CHECK(!flag, "deleted attribute still there");
    MPI_OK(MPI_Win_free_keyval(&k3));
    CHECK(k3 == MPI_KEYVAL_INVALID, "keyval not reset");
    /* k1 is freed while an attribute uses it: the callback still runs. */
    MPI_OK(MPI_Win_free_keyval(&k1));
    (void)k2;
}

static void names_info_group(MPI_Win win) {
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0 && name[0] == '\0', "default name '%s'", name);
    MPI_OK(MPI_Win_set_name(win, "halo window"));
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 11 && strcmp(name, "halo window") == 0, "name '%s'", name);

    MPI_Info info, used;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "no_locks", "false"));
    MPI_OK(MPI_Info_set(info, "my_hint", "42"));
    MPI_OK(MPI_Win_set_info(win, info));
    MPI_OK(MPI_Win_get_info(win, &used));
    char value[MPI_MAX_INFO_VAL];
    int found = 0;
    MPI_OK(MPI_Info_get(used, "my_hint", MPI_MAX_INFO_VAL - 1, value, &found));
    CHECK(found && strcmp(value, "42") == 0, "hint my_hint: %s", found ? value : "(none)");
    MPI_OK(MPI_Info_get(used, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, value, &found));
    CHECK(found, "accumulate_ordering not reported");
    MPI_Info_free(&info);
    MPI_Info_free(&used);

    MPI_Group g, world;
    int cmp;
    MPI_OK(MPI_Win_get_group(win, &g));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_compare(g, world, &cmp));
    CHECK(cmp == MPI_IDENT, "window group differs from the communicator's: %d", cmp);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    CHECK(MPI_Win_f2c(MPI_Win_c2f(win)) == win, "c2f/f2c");
}

static void errhandlers(MPI_Win win) {
    MPI_Errhandler eh, got;
    MPI_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "default window error handler");
    MPI_OK(MPI_Win_create_errhandler(win_handler, &eh));
    MPI_OK(MPI_Win_set_errhandler(win, eh));
    MPI_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == eh, "handler not set");
    MPI_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(handler_calls == 1 && handler_win == win && handler_code == MPI_ERR_OTHER,
          "MPI_Win_call_errhandler: %d calls, code %d", handler_calls, handler_code);
    /* A failing call: a Put outside any epoch. */
    int x = 1;
    int rc = MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    CHECK(rc != MPI_SUCCESS && handler_calls == 2 && handler_win == win &&
              error_class(handler_code) == MPI_ERR_RMA_SYNC,
          "the handler saw %d calls, class %d", handler_calls, error_class(handler_code));
    /* A communicator's handler is not a window's. */
    MPI_Errhandler comm_eh;
    MPI_OK(MPI_Comm_create_errhandler((MPI_Comm_errhandler_function*)win_handler, &comm_eh));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    rc = MPI_Win_set_errhandler(win, comm_eh);
    CHECK(error_class(rc) == MPI_ERR_ARG, "a communicator handler on a window: %d", rc);
    MPI_Errhandler_free(&comm_eh);
    MPI_Errhandler_free(&eh);
}

static void memory(void) {
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "alloc_mem_hint", "none"));
    double* p = NULL;
    MPI_OK(MPI_Alloc_mem(1000 * sizeof(double), info, &p));
    CHECK(p && ((uintptr_t)p & 7) == 0, "Alloc_mem gave %p", (void*)p);
    for (int i = 0; i < 1000; ++i) p[i] = i;
    MPI_OK(MPI_Free_mem(p));
    void* z = NULL;
    MPI_OK(MPI_Alloc_mem(0, MPI_INFO_NULL, &z));
    MPI_OK(MPI_Free_mem(z));
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int local;
    int rc = MPI_Free_mem(&local);
    CHECK(error_class(rc) == MPI_ERR_BASE, "MPI_Free_mem of a stack address: %d", rc);
    rc = MPI_Alloc_mem(-1, MPI_INFO_NULL, &z);
    CHECK(rc != MPI_SUCCESS, "MPI_Alloc_mem of -1 bytes succeeded");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    flavors();
    int buf[4];
    MPI_Win win;
    MPI_OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    attributes(win);
    names_info_group(win);
    errhandlers(win);
    ndeletes = 0;
    MPI_OK(MPI_Win_free(&win));
    /* The two attributes left (keyvals 1 and 2): both deleted (in an order
     * the standard leaves open). */
    CHECK(ndeletes == 2 && deletes[0] + deletes[1] == 33 && deletes[0] != deletes[1],
          "MPI_Win_free ran %d delete callbacks (%d, %d)", ndeletes, deletes[0], deletes[1]);
    memory();
    MPI_Finalize();
    if (rank == 0) printf("rma_objects: %d ranks ok\n", size);
    return 0;
}
