/* The sessions model (MPI 4.0 section 11.3), from the standard's text:
 * - without MPI_Init: MPI_Session_init, the process sets (mpi://WORLD,
 *   mpi://SELF and the implementation's), their info ("mpi_size"), the
 *   session's info ("thread_level"), groups from process sets, and
 *   communicators made from them (MPI_Comm_create_from_group, agreed among
 *   the members only: two disjoint groups at once, with their own
 *   stringtags; MPI_Intercomm_create_from_groups between them) that carry
 *   point-to-point and collective traffic, across node processes too;
 * - session error handlers (create, set, get, call; errors of calls on the
 *   session go to them); a group the caller is not in is MPI_ERR_GROUP
 *   through the handler given to the constructor;
 * - two sessions at once, sessions finalized and made again; MPI_Initialized
 *   and MPI_Finalized keep their world-model meaning;
 * - then the world model beside it: MPI_Init, a finalized session's handle
 *   is MPI_ERR_SESSION, a session's WORLD communicator is congruent to
 *   MPI_COMM_WORLD, and a session still works after MPI_Finalize.
 * Argument: the number of ranks.
 */
#include "common.h"

static int size, wrank;
static int session_errors, last_session_error;

static void on_session_error(MPI_Session* s, int* code, ...) {
    (void)s;
    ++session_errors;
    last_session_error = *code;
}

static int find_pset(MPI_Session s, const char* want) {
    int n = 0;
    MPI_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 3, "only %d process sets", n);
    int found = 0;
    for (int k = 0; k < n; ++k) {
        int len = 0;
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, k, &len, NULL));
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "pset %d: length %d", k, len);
        char name[MPI_MAX_PSET_NAME_LEN];
        int got = len;
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, k, &got, name));
        CHECK(got == len && (int)strlen(name) + 1 == len, "pset %d: '%s' length %d/%d", k, name,
              got, len);
        /* Truncated to the buffer given. */
        char small[4];
        got = sizeof(small);
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, k, &got, small));
        CHECK(got == len && strlen(small) == 3 && strncmp(small, name, 3) == 0,
              "pset %d truncated: '%s' %d", k, small, got);
        found |= strcmp(name, want) == 0;
    }
    return found;
}

static int pset_size(MPI_Session s, const char* pset) {
    MPI_Info info;
    MPI_OK(MPI_Session_get_pset_info(s, pset, &info));
    char value[64];
    int flag = 0;
    MPI_OK(MPI_Info_get(info, "mpi_size", sizeof(value) - 1, value, &flag));
    MPI_OK(MPI_Info_free(&info));
    CHECK(flag, "%s: no mpi_size", pset);
    return atoi(value);
}

/* Communication over a communicator made from a group: a ring and two
 * collectives, checked. */
static void exercise(MPI_Comm comm, int salt) {
    int r, n;
    MPI_OK(MPI_Comm_rank(comm, &r));
    MPI_OK(MPI_Comm_size(comm, &n));
    int out = value(r, salt), in = -1;
    MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, salt, &in, 1, MPI_INT, (r + n - 1) % n, salt,
                        comm, MPI_STATUS_IGNORE));
    CHECK(in == value((r + n - 1) % n, salt), "ring on the new communicator: %d", in);
    int sum = 0;
    MPI_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == n * (n - 1) / 2, "allreduce: %d", sum);
    int root_value = r == 0 ? salt : -1;
    MPI_OK(MPI_Bcast(&root_value, 1, MPI_INT, 0, comm));
    CHECK(root_value == salt, "bcast: %d", root_value);
}

static void sessions_only(int round) {
    int flag = 1;
    MPI_OK(MPI_Initialized(&flag));
    CHECK(!flag, "MPI_Initialized true before MPI_Init");
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE"));
    MPI_Session s, s2;
    MPI_OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    CHECK(s != s2 && s != MPI_SESSION_NULL, "two sessions share a handle");
    MPI_OK(MPI_Initialized(&flag));
    CHECK(!flag, "a session made MPI_Initialized true");

    MPI_Info used;
    MPI_OK(MPI_Session_get_info(s, &used));
    char level[64];
    MPI_OK(MPI_Info_get(used, "thread_level", sizeof(level) - 1, level, &flag));
    CHECK(flag && strcmp(level, "MPI_THREAD_MULTIPLE") == 0, "thread_level '%s'",
          flag ? level : "(none)");
    MPI_OK(MPI_Info_free(&used));

    CHECK(find_pset(s, "mpi://WORLD") && find_pset(s, "mpi://SELF"), "standard psets missing");
    CHECK(pset_size(s, "mpi://WORLD") == size, "WORLD size %d", pset_size(s, "mpi://WORLD"));
    CHECK(pset_size(s, "mpi://SELF") == 1, "SELF size %d", pset_size(s, "mpi://SELF"));

    /* The world group; my rank in it is my world rank. */
    MPI_Group world, self;
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://SELF", &self));
    int gsize, grank;
    MPI_OK(MPI_Group_size(world, &gsize));
    MPI_OK(MPI_Group_rank(world, &grank));
    CHECK(gsize == size && grank >= 0, "world group: size %d rank %d", gsize, grank);
    wrank = grank;
    MPI_OK(MPI_Group_size(self, &gsize));
    CHECK(gsize == 1, "self group size %d", gsize);

    MPI_Comm comm;
    MPI_OK(MPI_Comm_create_from_group(world, "org.fibermpi.test.world", MPI_INFO_NULL,
                                      MPI_ERRORS_RETURN, &comm));
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_get_errhandler(comm, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "the new communicator's handler is not the one given");
    exercise(comm, 10 + round);

    /* Two disjoint groups agree at the same time, each with its stringtag. */
    const int half = (size + 1) / 2;
    int range[1][3] = {{0, half - 1, 1}};
    MPI_Group low, high;
    MPI_OK(MPI_Group_range_incl(world, 1, range, &low));
    MPI_OK(MPI_Group_difference(world, low, &high));
    const int in_low = wrank < half;
    MPI_Comm part;
    MPI_OK(MPI_Comm_create_from_group(in_low ? low : high, in_low ? "low" : "high", MPI_INFO_NULL,
                                      MPI_ERRORS_RETURN, &part));
    exercise(part, 20 + round);
    int psize;
    MPI_OK(MPI_Comm_size(part, &psize));
    CHECK(psize == (in_low ? half : size - half), "part size %d", psize);
    if (size > 1) {
        MPI_Comm inter;
        MPI_OK(MPI_Intercomm_create_from_groups(in_low ? low : high, 0, in_low ? high : low, 0,
                                                "bridge", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                                &inter));
        int is_inter = 0, rsize = 0;
        MPI_OK(MPI_Comm_test_inter(inter, &is_inter));
        MPI_OK(MPI_Comm_remote_size(inter, &rsize));
        CHECK(is_inter && rsize == (in_low ? size - half : half), "intercomm: %d remote %d",
              is_inter, rsize);
        int prank;
        MPI_OK(MPI_Comm_rank(part, &prank));
        if (prank == 0) { /* the leaders swap their world ranks */
            int other = -1;
            MPI_OK(MPI_Sendrecv(&wrank, 1, MPI_INT, 0, 3, &other, 1, MPI_INT, 0, 3, inter,
                                MPI_STATUS_IGNORE));
            CHECK(other == (in_low ? half : 0), "remote leader is world rank %d", other);
        }
        int sum = 0, mine = 1;
        MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
        CHECK(sum == rsize, "intercomm allreduce: %d, remote size %d", sum, rsize);
        MPI_OK(MPI_Comm_free(&inter));
    }

    /* A group the caller is not in: MPI_ERR_GROUP through the given handler. */
    if (size > 1 && !in_low) {
        MPI_Comm none = MPI_COMM_NULL;
        int e =
            MPI_Comm_create_from_group(low, "not-mine", MPI_INFO_NULL, MPI_ERRORS_RETURN, &none);
        CHECK(error_class(e) == MPI_ERR_GROUP, "foreign group: class %d", error_class(e));
    }
    int e = MPI_Comm_create_from_group(world, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &part);
    CHECK(error_class(e) == MPI_ERR_ARG, "NULL stringtag: class %d", error_class(e));

    /* Session error handlers. */
    MPI_Errhandler seh;
    MPI_OK(MPI_Session_create_errhandler(on_session_error, &seh));
    MPI_OK(MPI_Session_set_errhandler(s2, seh));
    MPI_Errhandler got;
    MPI_OK(MPI_Session_get_errhandler(s2, &got));
    CHECK(got == seh, "Session_get_errhandler");
    session_errors = 0;
    MPI_OK(MPI_Session_call_errhandler(s2, MPI_ERR_OTHER));
    CHECK(session_errors == 1 && last_session_error == MPI_ERR_OTHER, "call_errhandler: %d",
          session_errors);
    MPI_Info pinfo;
    e = MPI_Session_get_pset_info(s2, "mpi://NOT_A_SET", &pinfo);
    CHECK(session_errors == 2 && error_class(e) == MPI_ERR_ARG && e == last_session_error,
          "unknown pset: class %d, handler calls %d", error_class(e), session_errors);
    int len = 8;
    e = MPI_Session_get_nth_pset(s2, MPI_INFO_NULL, 1000, &len, level);
    CHECK(session_errors == 3 && error_class(e) == MPI_ERR_ARG, "pset number out of range");
    e = MPI_Session_set_errhandler(s2, MPI_ERRHANDLER_NULL);
    CHECK(error_class(e) == MPI_ERR_ERRHANDLER, "null handler: class %d", error_class(e));
    MPI_OK(MPI_Errhandler_free(&seh));

    MPI_OK(MPI_Comm_free(&part));
    MPI_OK(MPI_Comm_free(&comm));
    MPI_OK(MPI_Group_free(&low));
    MPI_OK(MPI_Group_free(&high));
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Group_free(&self));
    MPI_OK(MPI_Session_finalize(&s2));
    CHECK(s2 == MPI_SESSION_NULL, "finalize left the handle");
    /* The other session goes on. */
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    MPI_OK(MPI_Comm_create_from_group(world, "org.fibermpi.test.again", MPI_INFO_NULL,
                                      MPI_ERRORS_RETURN, &comm));
    exercise(comm, 30 + round);
    MPI_OK(MPI_Comm_free(&comm));
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Session_finalize(&s));
    MPI_OK(MPI_Finalized(&flag));
    CHECK(!flag, "MPI_Finalized true after a session's end");
}

static void with_world_model(void) {
    MPI_OK(MPI_Init(NULL, NULL));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int r;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &r));
    CHECK(r == wrank, "world rank %d, session world group rank %d", r, wrank);
    MPI_Session s, stale;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    stale = s;
    MPI_OK(MPI_Session_finalize(&s));
    int n = 0;
    int e = MPI_Session_get_num_psets(stale, MPI_INFO_NULL, &n);
    CHECK(error_class(e) == MPI_ERR_SESSION, "finalized session: class %d", error_class(e));
    e = MPI_Session_finalize(&s); /* MPI_SESSION_NULL */
    CHECK(error_class(e) == MPI_ERR_SESSION, "null session: class %d", error_class(e));
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Group world;
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    MPI_Comm comm;
    MPI_OK(
        MPI_Comm_create_from_group(world, "beside-world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm));
    int result;
    MPI_OK(MPI_Comm_compare(comm, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_CONGRUENT, "session WORLD vs MPI_COMM_WORLD: %d", result);
    exercise(comm, 40);
    MPI_OK(MPI_Comm_free(&comm));
    MPI_OK(MPI_Finalize());
    int flag = 0;
    MPI_OK(MPI_Finalized(&flag));
    CHECK(flag, "MPI_Finalized false after MPI_Finalize");
    /* The session outlives the world model. */
    MPI_OK(MPI_Comm_create_from_group(world, "after-finalize", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                      &comm));
    exercise(comm, 50);
    MPI_OK(MPI_Comm_free(&comm));
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Session_finalize(&s));
}

int main(int argc, char** argv) {
    size = argc > 1 ? atoi(argv[1]) : 1;
    for (int round = 0; round < 2; ++round) sessions_only(round);
    with_world_model();
    return 0;
}
