/* Helpers of the tools information interface tests (MPI_T, MPI 3.1 section
 * 14.3): MPI_T calls return an error class directly, never through an error
 * handler, so the checks compare return values. */
#ifndef FIBERMPI_TESTS_MPIT_COMMON_H
#define FIBERMPI_TESTS_MPIT_COMMON_H

#include "common.h"

static inline const char* t_err_name(int c) {
    switch (c) {
        case MPI_SUCCESS:
            return "MPI_SUCCESS";
        case MPI_T_ERR_MEMORY:
            return "MPI_T_ERR_MEMORY";
        case MPI_T_ERR_NOT_INITIALIZED:
            return "MPI_T_ERR_NOT_INITIALIZED";
        case MPI_T_ERR_CANNOT_INIT:
            return "MPI_T_ERR_CANNOT_INIT";
        case MPI_T_ERR_INVALID_INDEX:
            return "MPI_T_ERR_INVALID_INDEX";
        case MPI_T_ERR_INVALID_ITEM:
            return "MPI_T_ERR_INVALID_ITEM";
        case MPI_T_ERR_INVALID_HANDLE:
            return "MPI_T_ERR_INVALID_HANDLE";
        case MPI_T_ERR_OUT_OF_HANDLES:
            return "MPI_T_ERR_OUT_OF_HANDLES";
        case MPI_T_ERR_OUT_OF_SESSIONS:
            return "MPI_T_ERR_OUT_OF_SESSIONS";
        case MPI_T_ERR_INVALID_SESSION:
            return "MPI_T_ERR_INVALID_SESSION";
        case MPI_T_ERR_CVAR_SET_NOT_NOW:
            return "MPI_T_ERR_CVAR_SET_NOT_NOW";
        case MPI_T_ERR_CVAR_SET_NEVER:
            return "MPI_T_ERR_CVAR_SET_NEVER";
        case MPI_T_ERR_PVAR_NO_STARTSTOP:
            return "MPI_T_ERR_PVAR_NO_STARTSTOP";
        case MPI_T_ERR_PVAR_NO_WRITE:
            return "MPI_T_ERR_PVAR_NO_WRITE";
        case MPI_T_ERR_PVAR_NO_ATOMIC:
            return "MPI_T_ERR_PVAR_NO_ATOMIC";
        case MPI_T_ERR_INVALID_NAME:
            return "MPI_T_ERR_INVALID_NAME";
        case MPI_T_ERR_INVALID:
            return "MPI_T_ERR_INVALID";
        default:
            return "(not an MPI_T class)";
    }
}

/* T_OK(call): the MPI_T call must succeed. */
#define T_OK(call)                                                                \
    do {                                                                          \
        int t_ok_rc_ = (call);                                                    \
        if (t_ok_rc_ != MPI_SUCCESS)                                              \
            test_fail(__FILE__, __LINE__, "%s returned %d (%s)", #call, t_ok_rc_, \
                      t_err_name(t_ok_rc_));                                      \
    } while (0)

/* T_ERR(call, cls): the MPI_T call must return error class cls. */
#define T_ERR(call, cls)                                                                        \
    do {                                                                                        \
        int t_err_rc_ = (call);                                                                 \
        if (t_err_rc_ != (cls))                                                                 \
            test_fail(__FILE__, __LINE__, "%s returned %d (%s), expected %s", #call, t_err_rc_, \
                      t_err_name(t_err_rc_), t_err_name(cls));                                  \
    } while (0)

static inline int t_cvar(const char* name) {
    int i = -1;
    T_OK(MPI_T_cvar_get_index(name, &i));
    return i;
}

static inline int t_pvar(const char* name, int var_class) {
    int i = -1;
    T_OK(MPI_T_pvar_get_index(name, var_class, &i));
    return i;
}

/* A handle of pvar `name` (class cls) in session s, bound to nothing. */
static inline MPI_T_pvar_handle t_handle(MPI_T_pvar_session s, const char* name, int cls) {
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    int count = -1;
    T_OK(MPI_T_pvar_handle_alloc(s, t_pvar(name, cls), NULL, &h, &count));
    CHECK(count == 1, "%s has %d elements", name, count);
    return h;
}

static inline unsigned long long t_read_ull(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
    unsigned long long v = 0;
    T_OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

static inline double t_read_double(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
    double v = 0;
    T_OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

/* The value of an integer control variable. */
static inline int t_cvar_int(const char* name) {
    MPI_T_cvar_handle h;
    int count = 0, v = 0;
    T_OK(MPI_T_cvar_handle_alloc(t_cvar(name), NULL, &h, &count));
    CHECK(count == 1, "%s: count %d", name, count);
    T_OK(MPI_T_cvar_read(h, &v));
    T_OK(MPI_T_cvar_handle_free(&h));
    return v;
}

#endif /* FIBERMPI_TESTS_MPIT_COMMON_H */
