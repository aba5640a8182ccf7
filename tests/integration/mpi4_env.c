/* MPI 4.0/4.1 environment additions, from the standard's text:
 * - MPI_Info_get_string (4.0 section 10.2): buflen in is the buffer size
 *   (NUL included), out the size the value needs; truncation; buflen 0;
 * - MPI_Info_create_env (4.0 section 11.2.1): MPI_INFO_ENV's keys plus the
 *   command line given, callable before MPI_Init;
 * - MPI_Status_set/get_source, _tag, _error (4.1 section 3.2.5);
 * - the 4.x error classes and their strings; MPI_Remove_error_class, _code,
 *   _string (4.1 section 9.5) with their rules, errors through handlers;
 * - MPI_ERRORS_ABORT: "mpi4_env abort" raises an error on a communicator
 *   with that handler (the test expects the job to end, naming the rank).
 */
#include "common.h"

static int rank, size;

static void info_get_string(void) {
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "color", "turquoise"));
    char buf[32];
    int buflen = sizeof(buf), flag = 0;
    MPI_OK(MPI_Info_get_string(info, "color", &buflen, buf, &flag));
    CHECK(flag && strcmp(buf, "turquoise") == 0 && buflen == 10, "whole: flag %d '%s' buflen %d",
          flag, buf, buflen);
    /* Too small: truncated to buflen - 1 characters, buflen says what is needed. */
    memset(buf, 'x', sizeof(buf));
    buflen = 5;
    MPI_OK(MPI_Info_get_string(info, "color", &buflen, buf, &flag));
    CHECK(flag && strcmp(buf, "turq") == 0 && buflen == 10, "truncated: '%s' buflen %d", buf,
          buflen);
    CHECK(buf[5] == 'x', "wrote past buflen");
    /* buflen 0: only the size; value untouched (may be NULL). */
    buflen = 0;
    MPI_OK(MPI_Info_get_string(info, "color", &buflen, NULL, &flag));
    CHECK(flag && buflen == 10, "size query: flag %d buflen %d", flag, buflen);
    /* Absent key: flag false, value and buflen unchanged. */
    strcpy(buf, "keep");
    buflen = sizeof(buf);
    MPI_OK(MPI_Info_get_string(info, "shape", &buflen, buf, &flag));
    CHECK(!flag && strcmp(buf, "keep") == 0 && buflen == (int)sizeof(buf),
          "absent key: flag %d '%s' buflen %d", flag, buf, buflen);
    /* Errors, raised on MPI_COMM_WORLD (ERRORS_RETURN here). */
    int e = MPI_Info_get_string(MPI_INFO_NULL, "color", &buflen, buf, &flag);
    CHECK(error_class(e) == MPI_ERR_INFO, "INFO_NULL: class %d", error_class(e));
    e = MPI_Info_get_string(info, "color", NULL, buf, &flag);
    CHECK(error_class(e) == MPI_ERR_ARG, "NULL buflen: class %d", error_class(e));
    buflen = -1;
    e = MPI_Info_get_string(info, "color", &buflen, buf, &flag);
    CHECK(error_class(e) == MPI_ERR_ARG, "negative buflen: class %d", error_class(e));
    char longkey[MPI_MAX_INFO_KEY + 8];
    memset(longkey, 'k', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';
    buflen = sizeof(buf);
    e = MPI_Info_get_string(info, longkey, &buflen, buf, &flag);
    CHECK(error_class(e) == MPI_ERR_INFO_KEY, "long key: class %d", error_class(e));
    MPI_OK(MPI_Info_free(&info));
}

static void info_create_env(MPI_Info before, int argc, char** argv) {
    /* Made before MPI_Init (main): the keys of MPI_INFO_ENV, and the command. */
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_OK(MPI_Info_get(before, "command", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strcmp(value, argv[0]) == 0, "command: flag %d '%s'", flag, flag ? value : "");
    MPI_OK(MPI_Info_get(before, "argv", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag == (argc > 1), "argv key present %d with argc %d", flag, argc);
    int nenv = 0;
    MPI_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &nenv));
    for (int k = 0; k < nenv; ++k) {
        char key[MPI_MAX_INFO_KEY + 1], a[MPI_MAX_INFO_VAL + 1], b[MPI_MAX_INFO_VAL + 1];
        int fa = 0, fb = 0;
        MPI_OK(MPI_Info_get_nthkey(MPI_INFO_ENV, k, key));
        MPI_OK(MPI_Info_get(MPI_INFO_ENV, key, MPI_MAX_INFO_VAL, a, &fa));
        MPI_OK(MPI_Info_get(before, key, MPI_MAX_INFO_VAL, b, &fb));
        CHECK(fa && fb && strcmp(a, b) == 0, "key %s: '%s' vs '%s'", key, a, fb ? b : "(none)");
    }
    /* Without a command line; the new info is the caller's to change. */
    MPI_Info env;
    MPI_OK(MPI_Info_create_env(0, NULL, &env));
    MPI_OK(MPI_Info_get(env, "command", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(!flag, "command without argv");
    MPI_OK(MPI_Info_get(env, "maxprocs", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && atoi(value) == size, "maxprocs %s", flag ? value : "(none)");
    MPI_OK(MPI_Info_set(env, "mine", "yes"));
    MPI_OK(MPI_Info_free(&env));
    int e = MPI_Info_create_env(0, NULL, NULL);
    CHECK(error_class(e) == MPI_ERR_ARG, "NULL info: class %d", error_class(e));
}

static void status_fields(void) {
    MPI_Status st;
    memset(&st, 0, sizeof(st));
    MPI_OK(MPI_Status_set_source(&st, 3));
    MPI_OK(MPI_Status_set_tag(&st, 77));
    MPI_OK(MPI_Status_set_error(&st, MPI_ERR_TRUNCATE));
    CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 77 && st.MPI_ERROR == MPI_ERR_TRUNCATE,
          "set: %d %d %d", st.MPI_SOURCE, st.MPI_TAG, st.MPI_ERROR);
    int src = -1, tag = -1, err = -1;
    MPI_OK(MPI_Status_get_source(&st, &src));
    MPI_OK(MPI_Status_get_tag(&st, &tag));
    MPI_OK(MPI_Status_get_error(&st, &err));
    CHECK(src == 3 && tag == 77 && err == MPI_ERR_TRUNCATE, "get: %d %d %d", src, tag, err);
    /* A received message's status read through the calls. */
    int x = rank, y = -1;
    MPI_OK(MPI_Sendrecv(&x, 1, MPI_INT, 0, 12, &y, 1, MPI_INT, 0, 12, MPI_COMM_SELF, &st));
    MPI_OK(MPI_Status_get_source(&st, &src));
    MPI_OK(MPI_Status_get_tag(&st, &tag));
    CHECK(src == 0 && tag == 12, "received: source %d tag %d", src, tag);
    /* NULL and MPI_STATUS_IGNORE are errors (MPI_ERR_ARG). */
    int e = MPI_Status_set_source(NULL, 1);
    CHECK(error_class(e) == MPI_ERR_ARG, "set_source(NULL): class %d", error_class(e));
    e = MPI_Status_set_tag(MPI_STATUS_IGNORE, 1);
    CHECK(error_class(e) == MPI_ERR_ARG, "set_tag(IGNORE): class %d", error_class(e));
    e = MPI_Status_get_error(NULL, &err);
    CHECK(error_class(e) == MPI_ERR_ARG, "get_error(NULL): class %d", error_class(e));
    e = MPI_Status_get_tag(&st, NULL);
    CHECK(error_class(e) == MPI_ERR_ARG, "get_tag(.., NULL): class %d", error_class(e));
}

static void error_classes(void) {
    /* The 4.x classes: distinct, at most MPI_ERR_LASTCODE, with strings. */
    const int classes[] = {MPI_ERR_PROC_ABORTED, MPI_ERR_VALUE_TOO_LARGE, MPI_ERR_SESSION,
                           MPI_ERR_ERRHANDLER};
    for (int i = 0; i < 4; ++i) {
        CHECK(classes[i] > MPI_SUCCESS && classes[i] <= MPI_ERR_LASTCODE, "class %d out of range",
              classes[i]);
        for (int j = 0; j < i; ++j)
            CHECK(classes[i] != classes[j], "classes %d and %d equal", i, j);
        int cls = -1, len = 0;
        char text[MPI_MAX_ERROR_STRING];
        MPI_OK(MPI_Error_class(classes[i], &cls));
        CHECK(cls == classes[i], "Error_class(%d) = %d", classes[i], cls);
        MPI_OK(MPI_Error_string(classes[i], text, &len));
        CHECK(len > 0 && (int)strlen(text) == len, "class %d: string '%s'", classes[i], text);
    }
}

static void remove_errors(void) {
    int cls, code, code2;
    MPI_OK(MPI_Add_error_class(&cls));
    MPI_OK(MPI_Add_error_code(cls, &code));
    MPI_OK(MPI_Add_error_code(cls, &code2));
    MPI_OK(MPI_Add_error_string(code, "a code of ours"));
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, c = -1;
    /* Predefined classes, codes and strings cannot be removed. */
    int e = MPI_Remove_error_class(MPI_ERR_ARG);
    CHECK(error_class(e) == MPI_ERR_ARG, "removing MPI_ERR_ARG: class %d", error_class(e));
    e = MPI_Remove_error_code(MPI_ERR_TRUNCATE);
    CHECK(error_class(e) == MPI_ERR_ARG, "removing code MPI_ERR_TRUNCATE: class %d",
          error_class(e));
    e = MPI_Remove_error_string(MPI_ERR_OTHER);
    CHECK(error_class(e) == MPI_ERR_ARG, "removing a predefined string: class %d", error_class(e));
    MPI_OK(MPI_Error_string(MPI_ERR_OTHER, text, &len));
    CHECK(len > 0, "MPI_ERR_OTHER lost its string");
    /* Order: the string before its code, the codes before their class. */
    e = MPI_Remove_error_code(code);
    CHECK(error_class(e) == MPI_ERR_ARG, "code with a string removed: class %d", error_class(e));
    e = MPI_Remove_error_class(cls);
    CHECK(error_class(e) == MPI_ERR_ARG, "class with codes removed: class %d", error_class(e));
    e = MPI_Remove_error_string(code2);
    CHECK(error_class(e) == MPI_ERR_ARG, "string never added removed: class %d", error_class(e));
    e = MPI_Remove_error_class(code2);
    CHECK(error_class(e) == MPI_ERR_ARG, "a code removed as a class: class %d", error_class(e));
    MPI_OK(MPI_Remove_error_string(code));
    MPI_OK(MPI_Error_string(code, text, &len));
    CHECK(len == 0, "string still there after removal: '%s'", text);
    MPI_OK(MPI_Error_class(code, &c));
    CHECK(c == cls, "the code's class %d, expected %d", c, cls);
    MPI_OK(MPI_Remove_error_code(code));
    MPI_OK(MPI_Remove_error_code(code2));
    e = MPI_Error_class(code, &c);
    CHECK(e != MPI_SUCCESS, "a removed code still has a class");
    e = MPI_Remove_error_code(code);
    CHECK(error_class(e) == MPI_ERR_ARG, "removing twice: class %d", error_class(e));
    MPI_OK(MPI_Remove_error_class(cls));
    e = MPI_Add_error_code(cls, &code);
    CHECK(error_class(e) == MPI_ERR_ARG, "a code added to a removed class: class %d",
          error_class(e));
    /* The error is raised through the handler: a user handler sees it. */
    e = MPI_Remove_error_class(cls);
    CHECK(error_class(e) == MPI_ERR_ARG, "removed class removed again: class %d", error_class(e));
}

static int handler_calls, handler_code;
static void count_errors(MPI_Comm* comm, int* code, ...) {
    (void)comm;
    ++handler_calls;
    handler_code = *code;
}

static void through_handler(void) {
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_create_errhandler(count_errors, &eh));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    int e = MPI_Remove_error_class(MPI_ERR_TYPE);
    CHECK(handler_calls == 1 && error_class(handler_code) == MPI_ERR_ARG && e == handler_code,
          "handler calls %d code %d", handler_calls, handler_code);
    e = MPI_Status_set_error(NULL, 0);
    CHECK(handler_calls == 2 && error_class(e) == MPI_ERR_ARG, "status handler calls %d",
          handler_calls);
    /* MPI_ERRORS_ABORT is a predefined handler like the others. */
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_ABORT));
    MPI_Errhandler got;
    MPI_OK(MPI_Comm_get_errhandler(dup, &got));
    CHECK(got == MPI_ERRORS_ABORT, "get_errhandler: not MPI_ERRORS_ABORT");
    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Errhandler_free(&eh));
}

int main(int argc, char** argv) {
    MPI_Info before;
    if (MPI_Info_create_env(argc, argv, &before) != MPI_SUCCESS) {
        fprintf(stderr, "FAIL: MPI_Info_create_env before MPI_Init\n");
        return 1;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "abort") == 0) {
        /* The last rank raises an error on a communicator with
         * MPI_ERRORS_ABORT: the job ends, the message naming the rank. */
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Comm_set_errhandler(dup, MPI_ERRORS_ABORT);
        if (rank == size - 1) {
            int x = 0;
            MPI_Send(&x, 1, MPI_INT, size + 5, 0, dup);
            printf("erroneous call returned\n");
        }
        MPI_Barrier(dup);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    info_create_env(before, argc, argv);
    MPI_OK(MPI_Info_free(&before));
    info_get_string();
    status_fields();
    error_classes();
    remove_errors();
    through_handler();
    MPI_Finalize();
    return 0;
}
