/* The tools information interface on bad input (MPI 3.1 sections 14.3.4 to
 * 14.3.9): every MPI_T call returns the error class the standard names, no
 * error handler is called (MPI_ERRORS_ARE_FATAL stays on MPI_COMM_WORLD and
 * the job goes on), and nothing changes.
 *
 * Classes and where they come from here: NOT_INITIALIZED (a call before
 * MPI_T_init_thread or after the last MPI_T_finalize), INVALID_INDEX
 * (indices out of range), INVALID_ITEM (enumeration items), INVALID_HANDLE
 * (null, freed, other sessions', bound to a freed communicator,
 * MPI_T_PVAR_ALL_HANDLES where one handle is needed), OUT_OF_HANDLES and
 * OUT_OF_SESSIONS (a rank's bounds), INVALID_SESSION (null, freed, another
 * rank's), CVAR_SET_NEVER (settings fixed at start), PVAR_NO_STARTSTOP
 * (continuous variables), PVAR_NO_WRITE (levels), PVAR_NO_ATOMIC (node
 * totals), INVALID_NAME (unknown names, a name in the wrong class), INVALID
 * (null arguments, values out of range). MPI_T_ERR_MEMORY, CANNOT_INIT and
 * CVAR_SET_NOT_NOW have no cause a program can produce here; every class is
 * still an error class with its own string.
 *
 * Writable control variables take effect: MPC_INTRA_EAGER lowered makes a
 * 4 KiB message go by rendezvous.
 */
#include "mpit_common.h"

static int g_rank, g_size;

static void error_classes(void) {
    const int classes[] = {
        MPI_T_ERR_MEMORY,           MPI_T_ERR_NOT_INITIALIZED, MPI_T_ERR_CANNOT_INIT,
        MPI_T_ERR_INVALID_INDEX,    MPI_T_ERR_INVALID_ITEM,    MPI_T_ERR_INVALID_HANDLE,
        MPI_T_ERR_OUT_OF_HANDLES,   MPI_T_ERR_OUT_OF_SESSIONS, MPI_T_ERR_INVALID_SESSION,
        MPI_T_ERR_CVAR_SET_NOT_NOW, MPI_T_ERR_CVAR_SET_NEVER,  MPI_T_ERR_PVAR_NO_STARTSTOP,
        MPI_T_ERR_PVAR_NO_WRITE,    MPI_T_ERR_PVAR_NO_ATOMIC,  MPI_T_ERR_INVALID_NAME,
        MPI_T_ERR_INVALID};
    const int n = (int)(sizeof(classes) / sizeof(classes[0]));
    char texts[16][MPI_MAX_ERROR_STRING];
    for (int i = 0; i < n; ++i) {
        CHECK(classes[i] > MPI_SUCCESS && classes[i] <= MPI_ERR_LASTCODE, "class %s = %d",
              t_err_name(classes[i]), classes[i]);
        CHECK(error_class(classes[i]) == classes[i], "%s is not its own class",
              t_err_name(classes[i]));
        int len = 0;
        MPI_OK(MPI_Error_string(classes[i], texts[i], &len));
        CHECK(len > 0 && len == (int)strlen(texts[i]), "%s: no text", t_err_name(classes[i]));
        for (int j = 0; j < i; ++j)
            CHECK(classes[j] != classes[i] && strcmp(texts[j], texts[i]) != 0,
                  "%s and %s share a value or a text", t_err_name(classes[j]),
                  t_err_name(classes[i]));
    }
}

static void not_initialized(void) {
    int n;
    MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL;
    MPI_T_cvar_handle c = MPI_T_CVAR_HANDLE_NULL;
    char name[16];
    int len = sizeof(name);
    T_ERR(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_cvar_get_index("MPC_VPS", &n), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_cvar_read(c, &n), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_pvar_session_create(&s), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_category_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_category_get_info(0, name, &len, NULL, NULL, NULL, NULL, NULL),
          MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_category_changed(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &n, NULL, NULL), MPI_T_ERR_NOT_INITIALIZED);
}

static void indices_and_names(void) {
    int nc, np, ncat, i;
    T_OK(MPI_T_cvar_get_num(&nc));
    T_OK(MPI_T_pvar_get_num(&np));
    T_OK(MPI_T_category_get_num(&ncat));
    char name[64];
    int len = sizeof(name), count;
    for (int bad = -1; bad <= 0; ++bad) {
        T_ERR(MPI_T_cvar_get_info(bad ? -1 : nc, name, &len, NULL, NULL, NULL, NULL, NULL, NULL,
                                  NULL),
              MPI_T_ERR_INVALID_INDEX);
        T_ERR(MPI_T_pvar_get_info(bad ? -1 : np, name, &len, NULL, NULL, NULL, NULL, NULL, NULL,
                                  NULL, NULL, NULL, NULL),
              MPI_T_ERR_INVALID_INDEX);
        T_ERR(MPI_T_category_get_info(bad ? -1 : ncat, name, &len, NULL, NULL, NULL, NULL, NULL),
              MPI_T_ERR_INVALID_INDEX);
        T_ERR(MPI_T_category_get_cvars(bad ? -1 : ncat, 1, &i), MPI_T_ERR_INVALID_INDEX);
        T_ERR(MPI_T_category_get_pvars(bad ? -1 : ncat, 1, &i), MPI_T_ERR_INVALID_INDEX);
        T_ERR(MPI_T_category_get_categories(bad ? -1 : ncat, 1, &i), MPI_T_ERR_INVALID_INDEX);
        MPI_T_cvar_handle c;
        T_ERR(MPI_T_cvar_handle_alloc(bad ? -1 : nc, NULL, &c, &count), MPI_T_ERR_INVALID_INDEX);
    }
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    T_OK(MPI_T_pvar_session_create(&s));
    T_ERR(MPI_T_pvar_handle_alloc(s, np, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    T_OK(MPI_T_pvar_session_free(&s));

    T_ERR(MPI_T_cvar_get_index("MPC_NO_SUCH_SETTING", &i), MPI_T_ERR_INVALID_NAME);
    T_ERR(MPI_T_cvar_get_index("", &i), MPI_T_ERR_INVALID_NAME);
    T_ERR(MPI_T_pvar_get_index("mpc_no_such_counter", MPI_T_PVAR_CLASS_COUNTER, &i),
          MPI_T_ERR_INVALID_NAME);
    /* A name exists per class: mpc_polls is a counter, not a level. */
    T_OK(MPI_T_pvar_get_index("mpc_polls", MPI_T_PVAR_CLASS_COUNTER, &i));
    T_ERR(MPI_T_pvar_get_index("mpc_polls", MPI_T_PVAR_CLASS_LEVEL, &i), MPI_T_ERR_INVALID_NAME);
    T_ERR(MPI_T_category_get_index("mpc_no_such_room", &i), MPI_T_ERR_INVALID_NAME);

    /* Arguments no call can work with. */
    T_ERR(MPI_T_init_thread(MPI_THREAD_SINGLE, NULL), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_cvar_get_num(NULL), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_pvar_get_num(NULL), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_category_get_num(NULL), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_category_changed(NULL), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_cvar_get_index(NULL, &i), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_cvar_get_index("MPC_VPS", NULL), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_pvar_get_index("mpc_polls", -12345, &i), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_category_get_index(NULL, &i), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_category_get_cvars(0, -1, &i), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_category_get_pvars(0, 1, NULL), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_pvar_session_create(NULL), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_cvar_handle_alloc(t_cvar("MPC_VPS"), NULL, NULL, &count), MPI_T_ERR_INVALID);
}

static void enumerations(void) {
    /* MPC_PROGRESS takes its values from an enumeration. */
    MPI_T_enum e = MPI_T_ENUM_NULL;
    MPI_Datatype type;
    T_OK(MPI_T_cvar_get_info(t_cvar("MPC_PROGRESS"), NULL, NULL, NULL, &type, &e, NULL, NULL, NULL,
                             NULL));
    CHECK(e != MPI_T_ENUM_NULL && type == MPI_INT, "MPC_PROGRESS has no enumeration");
    int num = 0, value;
    T_OK(MPI_T_enum_get_info(e, &num, NULL, NULL));
    CHECK(num == 3, "MPC_PROGRESS: %d modes", num);
    T_ERR(MPI_T_enum_get_item(e, num, &value, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
    T_ERR(MPI_T_enum_get_item(e, -1, &value, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
    T_ERR(MPI_T_enum_get_item(e, 0, NULL, NULL, NULL), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &num, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_enum_get_item(MPI_T_ENUM_NULL, 0, &value, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    /* Not an enumeration: any other pointer. */
    T_ERR(MPI_T_enum_get_info((MPI_T_enum)&num, &num, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
}

static void control_variables(void) {
    MPI_T_cvar_handle h, stale;
    int count, v = 0;
    /* Settings fixed at start can never be written. */
    T_OK(MPI_T_cvar_handle_alloc(t_cvar("MPC_NRANKS"), NULL, &h, &count));
    v = 99;
    T_ERR(MPI_T_cvar_write(h, &v), MPI_T_ERR_CVAR_SET_NEVER);
    T_OK(MPI_T_cvar_read(h, &v));
    CHECK(v == g_size, "MPC_NRANKS changed to %d", v);
    T_ERR(MPI_T_cvar_read(h, NULL), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_cvar_write(h, NULL), MPI_T_ERR_INVALID);
    stale = h;
    T_OK(MPI_T_cvar_handle_free(&h));
    T_ERR(MPI_T_cvar_read(stale, &v), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_cvar_write(stale, &v), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_cvar_handle_free(&stale), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, &v), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_cvar_handle_free(NULL), MPI_T_ERR_INVALID);
    /* Out of range values. MPC_WAIT_SPIN is the node process's setting: ranks
     * take turns, or one rank's restore would undo another's write. */
    for (int turn = 0; turn < g_size; ++turn) {
        if (turn == g_rank) {
            T_OK(MPI_T_cvar_handle_alloc(t_cvar("MPC_WAIT_SPIN"), NULL, &h, &count));
            double spin = -1, old = -1;
            T_OK(MPI_T_cvar_read(h, &old));
            T_ERR(MPI_T_cvar_write(h, &spin), MPI_T_ERR_INVALID);
            spin = 1e-6;
            T_OK(MPI_T_cvar_write(h, &spin));
            double back = 0;
            T_OK(MPI_T_cvar_read(h, &back));
            CHECK(back > 0.9e-6 && back < 1.1e-6, "MPC_WAIT_SPIN reads %g after writing 1e-6",
                  back);
            T_OK(MPI_T_cvar_write(h, &old));
            T_OK(MPI_T_cvar_handle_free(&h));
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    T_OK(MPI_T_cvar_handle_alloc(t_cvar("MPC_STATS"), NULL, &h, &count));
    v = 2;
    T_ERR(MPI_T_cvar_write(h, &v), MPI_T_ERR_INVALID);
    T_OK(MPI_T_cvar_handle_free(&h));

    /* OUT_OF_HANDLES: a rank's cvar handles are bounded. */
    enum { kMany = 20000 };
    MPI_T_cvar_handle* many = (MPI_T_cvar_handle*)xmalloc(kMany * sizeof(MPI_T_cvar_handle));
    int made = 0, rc = MPI_SUCCESS;
    const int vps = t_cvar("MPC_VPS");
    while (made < kMany &&
           (rc = MPI_T_cvar_handle_alloc(vps, NULL, &many[made], &count)) == MPI_SUCCESS)
        ++made;
    CHECK(rc == MPI_T_ERR_OUT_OF_HANDLES && made >= 1000, "after %d handles: %s", made,
          t_err_name(rc));
    for (int i = 0; i < made; ++i) T_OK(MPI_T_cvar_handle_free(&many[i]));
    T_OK(MPI_T_cvar_handle_alloc(vps, NULL, &many[0], &count)); /* room again */
    T_OK(MPI_T_cvar_handle_free(&many[0]));
    free(many);
}

/* MPC_INTRA_EAGER lowered: a 4 KiB message to a rank of the node process goes
 * by rendezvous. Every rank takes part (the setting is the node process's). */
static void eager_limit_takes_effect(void) {
    MPI_T_cvar_handle h;
    int count;
    unsigned long old = 0, low = 1024, huge = 1ul << 40;
    T_OK(MPI_T_cvar_handle_alloc(t_cvar("MPC_INTRA_EAGER"), NULL, &h, &count));
    T_OK(MPI_T_cvar_read(h, &old));
    T_ERR(MPI_T_cvar_write(h, &huge), MPI_T_ERR_INVALID);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    T_OK(MPI_T_cvar_write(h, &low)); /* every rank writes the same value */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_T_pvar_session s;
    T_OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle rndv = t_handle(s, "mpc_intra_rndv_msgs", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle cell = t_handle(s, "mpc_intra_cell_msgs", MPI_T_PVAR_CLASS_COUNTER);
    T_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    static char buf[4096];
    MPI_Request r;
    MPI_OK(MPI_Irecv(buf, 4096, MPI_BYTE, 0, 5, MPI_COMM_SELF, &r));
    MPI_OK(MPI_Send(buf, 4096, MPI_BYTE, 0, 5, MPI_COMM_SELF));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    T_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    CHECK(t_read_ull(s, rndv) == 1 && t_read_ull(s, cell) == 0,
          "4 KiB with MPC_INTRA_EAGER=1024: %llu rendezvous, %llu cells", t_read_ull(s, rndv),
          t_read_ull(s, cell));
    T_OK(MPI_T_pvar_session_free(&s));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    T_OK(MPI_T_cvar_write(h, &old));
    T_OK(MPI_T_cvar_handle_free(&h));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void sessions_and_handles(void) {
    MPI_T_pvar_session s, t, stale;
    MPI_T_pvar_handle h, level, node, other;
    unsigned long long v = 0;
    T_OK(MPI_T_pvar_session_create(&s));
    T_OK(MPI_T_pvar_session_create(&t));
    h = t_handle(s, "mpc_intra_cell_msgs", MPI_T_PVAR_CLASS_COUNTER);
    level = t_handle(s, "mpc_unexpected", MPI_T_PVAR_CLASS_LEVEL);
    node = t_handle(s, "mpc_node_intra_cell_msgs", MPI_T_PVAR_CLASS_COUNTER);
    other = t_handle(t, "mpc_intra_cell_msgs", MPI_T_PVAR_CLASS_COUNTER);
    /* A handle belongs to its session. */
    T_ERR(MPI_T_pvar_read(t, h, &v), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_pvar_start(s, other), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_pvar_handle_free(s, &other), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_pvar_read(s, MPI_T_PVAR_HANDLE_NULL, &v), MPI_T_ERR_INVALID_HANDLE);
    /* MPI_T_PVAR_ALL_HANDLES is for start, stop and reset only. */
    T_ERR(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_pvar_write(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_pvar_readreset(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    MPI_T_pvar_handle all = MPI_T_PVAR_ALL_HANDLES;
    T_ERR(MPI_T_pvar_handle_free(s, &all), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_pvar_read(s, h, NULL), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_pvar_handle_free(s, NULL), MPI_T_ERR_INVALID);
    /* Continuous variables cannot be started or stopped; levels not written. */
    T_ERR(MPI_T_pvar_start(s, level), MPI_T_ERR_PVAR_NO_STARTSTOP);
    T_ERR(MPI_T_pvar_stop(s, level), MPI_T_ERR_PVAR_NO_STARTSTOP);
    T_ERR(MPI_T_pvar_write(s, level, &v), MPI_T_ERR_PVAR_NO_WRITE);
    T_ERR(MPI_T_pvar_reset(s, level), MPI_T_ERR_PVAR_NO_WRITE);
    T_ERR(MPI_T_pvar_readreset(s, level, &v), MPI_T_ERR_PVAR_NO_WRITE);
    /* A node total is not read and reset at once. */
    T_ERR(MPI_T_pvar_readreset(s, node, &v), MPI_T_ERR_PVAR_NO_ATOMIC);
    T_OK(MPI_T_pvar_reset(s, node));
    /* Stale handles. */
    MPI_T_pvar_handle freed = h;
    T_OK(MPI_T_pvar_handle_free(s, &h));
    CHECK(h == MPI_T_PVAR_HANDLE_NULL, "handle not set to NULL");
    T_ERR(MPI_T_pvar_read(s, freed, &v), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_pvar_handle_free(s, &freed), MPI_T_ERR_INVALID_HANDLE);
    /* Sessions: null, freed (with its handles), not a session. */
    T_ERR(MPI_T_pvar_start(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_ALL_HANDLES),
          MPI_T_ERR_INVALID_SESSION);
    int count;
    T_ERR(MPI_T_pvar_handle_alloc(MPI_T_PVAR_SESSION_NULL, 0, NULL, &h, &count),
          MPI_T_ERR_INVALID_SESSION);
    stale = t;
    T_OK(MPI_T_pvar_session_free(&t));
    CHECK(t == MPI_T_PVAR_SESSION_NULL, "session not set to NULL");
    T_ERR(MPI_T_pvar_read(stale, other, &v), MPI_T_ERR_INVALID_SESSION);
    T_ERR(MPI_T_pvar_session_free(&stale), MPI_T_ERR_INVALID_SESSION);
    T_ERR(MPI_T_pvar_stop((MPI_T_pvar_session)&v, MPI_T_PVAR_ALL_HANDLES),
          MPI_T_ERR_INVALID_SESSION);
    T_ERR(MPI_T_pvar_session_free(NULL), MPI_T_ERR_INVALID);

    /* Bound to a communicator: a valid one to allocate; freed, it is gone. */
    MPI_Comm dup, null = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    const int comm_unexp = t_pvar("mpc_comm_unexpected", MPI_T_PVAR_CLASS_LEVEL);
    int bind = -1;
    T_OK(MPI_T_pvar_get_info(comm_unexp, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &bind,
                             NULL, NULL, NULL));
    CHECK(bind == MPI_T_BIND_MPI_COMM, "mpc_comm_unexpected is bound to %d", bind);
    T_ERR(MPI_T_pvar_handle_alloc(s, comm_unexp, &null, &h, &count), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_pvar_handle_alloc(s, comm_unexp, NULL, &h, &count), MPI_T_ERR_INVALID);
    T_OK(MPI_T_pvar_handle_alloc(s, comm_unexp, &dup, &h, &count));
    T_OK(MPI_T_pvar_read(s, h, &v));
    MPI_OK(MPI_Comm_free(&dup));
    T_ERR(MPI_T_pvar_read(s, h, &v), MPI_T_ERR_INVALID_HANDLE);
    T_OK(MPI_T_pvar_handle_free(s, &h));

    /* OUT_OF_SESSIONS and OUT_OF_HANDLES: a rank's bounds. */
    enum { kMany = 20000 };
    MPI_T_pvar_session* ss = (MPI_T_pvar_session*)xmalloc(kMany * sizeof(MPI_T_pvar_session));
    int made = 0, rc = MPI_SUCCESS;
    while (made < kMany && (rc = MPI_T_pvar_session_create(&ss[made])) == MPI_SUCCESS) ++made;
    CHECK(rc == MPI_T_ERR_OUT_OF_SESSIONS && made >= 16, "after %d sessions: %s", made,
          t_err_name(rc));
    for (int i = 0; i < made; ++i) T_OK(MPI_T_pvar_session_free(&ss[i]));
    free(ss);
    MPI_T_pvar_handle* hs = (MPI_T_pvar_handle*)xmalloc(kMany * sizeof(MPI_T_pvar_handle));
    const int polls = t_pvar("mpc_polls", MPI_T_PVAR_CLASS_COUNTER);
    made = 0;
    while (made < kMany &&
           (rc = MPI_T_pvar_handle_alloc(s, polls, NULL, &hs[made], &count)) == MPI_SUCCESS)
        ++made;
    CHECK(rc == MPI_T_ERR_OUT_OF_HANDLES && made >= 1000, "after %d handles: %s", made,
          t_err_name(rc));
    /* Freeing the session frees them all (and their gates). */
    T_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    T_OK(MPI_T_pvar_session_free(&s));
    free(hs);
    T_OK(MPI_T_pvar_session_create(&s));
    h = t_handle(s, "mpc_polls", MPI_T_PVAR_CLASS_COUNTER);
    T_OK(MPI_T_pvar_session_free(&s));
}

/* A session of another rank is not a session of this one. */
static void foreign_session(void) {
    if (g_size < 2) return;
    MPI_T_pvar_session mine;
    T_OK(MPI_T_pvar_session_create(&mine));
    MPI_T_pvar_session theirs = MPI_T_PVAR_SESSION_NULL;
    const int peer = g_rank ^ 1;
    if (peer < g_size) {
        MPI_OK(MPI_Sendrecv(&mine, sizeof(mine), MPI_BYTE, peer, 9, &theirs, sizeof(theirs),
                            MPI_BYTE, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        T_ERR(MPI_T_pvar_start(theirs, MPI_T_PVAR_ALL_HANDLES), MPI_T_ERR_INVALID_SESSION);
        T_ERR(MPI_T_pvar_session_free(&theirs), MPI_T_ERR_INVALID_SESSION);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    T_OK(MPI_T_pvar_session_free(&mine));
}

int main(int argc, char** argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
    error_classes();
    not_initialized();
    int provided;
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    indices_and_names();
    enumerations();
    control_variables();
    eager_limit_takes_effect();
    sessions_and_handles();
    foreign_session();
    T_OK(MPI_T_finalize());
    not_initialized();
    MPI_OK(MPI_Finalize());
    return 0;
}
