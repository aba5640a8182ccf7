/* Communicators: dup, split (color/key ordering, MPI_UNDEFINED), split_type,
 * create (one group, disjoint groups), create_group (only the members call,
 * overlapping groups one after another with the same tag), compare, names,
 * info hints, errors for bad arguments, and many communicators alive at once.
 * Every new communicator is used: its rank order is checked through its group
 * and an allreduce over it must give the expected sum.
 */
#include "common.h"

/* Sum of the world ranks of comm's members, computed over comm itself. */
static int world_rank_sum(MPI_Comm comm) {
    int me, sum = 0;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    MPI_OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, comm));
    return sum;
}

/* World rank of rank r of comm. */
static int world_rank_of(MPI_Comm comm, int r) {
    MPI_Group g, wg;
    int w;
    MPI_OK(MPI_Comm_group(comm, &g));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_translate_ranks(g, 1, &r, wg, &w));
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_free(&wg));
    return w;
}

static void test_split(int rank, int size) {
    /* Three colors, key reversing the order: members sorted by descending rank. */
    MPI_Comm c;
    const int color = rank % 3;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, size - rank, &c));
    int n = 0, expected_sum = 0, above = 0;
    for (int r = 0; r < size; ++r)
        if (r % 3 == color) {
            n++;
            expected_sum += r;
            if (r > rank) above++;
        }
    int crank, csize;
    MPI_OK(MPI_Comm_rank(c, &crank));
    MPI_OK(MPI_Comm_size(c, &csize));
    CHECK(csize == n, "split size %d, expected %d", csize, n);
    CHECK(crank == above, "split rank %d, expected %d", crank, above);
    for (int r = 0; r < csize; ++r) {
        int w = world_rank_of(c, r), expect = -1, k = 0;
        for (int x = size - 1; x >= 0; --x)
            if (x % 3 == color && k++ == r) expect = x;
        CHECK(w == expect, "rank %d of color %d is world rank %d, expected %d", r, color, w,
              expect);
    }
    CHECK(world_rank_sum(c) == expected_sum, "allreduce over the split communicator");
    MPI_OK(MPI_Comm_free(&c));
    CHECK(c == MPI_COMM_NULL, "Comm_free sets the handle to MPI_COMM_NULL");

    /* Equal keys: parent order. MPI_UNDEFINED: no communicator. */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : 0, 0, &c));
    if (rank % 2) {
        CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED color gives MPI_COMM_NULL");
    } else {
        MPI_OK(MPI_Comm_rank(c, &crank));
        CHECK(crank == rank / 2, "equal keys keep the parent order");
        MPI_OK(MPI_Comm_free(&c));
    }

    /* The ranks of this node process: a block of consecutive world ranks (mpcrun
     * distributes by blocks), here in reverse order of the keys; the blocks of all
     * node processes tile the world. */
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &c));
    MPI_OK(MPI_Comm_size(c, &csize));
    MPI_OK(MPI_Comm_rank(c, &crank));
    int first = rank, last = rank;
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, c));
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, &last, 1, MPI_INT, MPI_MAX, c));
    CHECK(last - first + 1 == csize && crank == last - rank, "split_type shared: %d/%d of %d-%d",
          crank, csize, first, last);
    int is_first = crank == 0, blocks = 0, covered = 0;
    MPI_OK(MPI_Allreduce(&is_first, &blocks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    int mine = is_first ? csize : 0;
    MPI_OK(MPI_Allreduce(&mine, &covered, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(covered == size && blocks >= 1, "split_type shared: %d blocks cover %d of %d ranks",
          blocks, covered, size);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "split_type MPI_UNDEFINED");
}

static void test_dup(int rank, int size) {
    MPI_Comm d, d2;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_get_errhandler(d, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "the duplicate inherits the error handler");

    /* A message on the duplicate never matches a receive on the original. */
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int on_dup = 1000 + rank, on_world = 2000 + rank, got = -1;
    MPI_Request reqs[2];
    MPI_Status st;
    MPI_OK(MPI_Isend(&on_dup, 1, MPI_INT, right, 7, d, &reqs[0]));
    MPI_OK(MPI_Isend(&on_world, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &reqs[1]));
    MPI_Status sts[2];
    MPI_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK(got == 2000 + left, "receive on the original got %d", got);
    MPI_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, &st));
    CHECK(got == 1000 + left && st.MPI_SOURCE == left, "receive on the duplicate got %d", got);
    MPI_OK(MPI_Waitall(2, reqs, sts));

    int result;
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, d, &result));
    CHECK(result == MPI_CONGRUENT, "compare(world, dup) = %d", result);
    MPI_OK(MPI_Comm_compare(d, d, &result));
    CHECK(result == MPI_IDENT, "compare(dup, dup) = %d", result);
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &d2));
    MPI_OK(MPI_Comm_compare(d2, MPI_COMM_WORLD, &result));
    CHECK(result == (size > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "compare(reversed) = %d", result);
    MPI_OK(MPI_Comm_free(&d2));
    MPI_OK(MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &result));
    CHECK(result == (size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT), "compare(self, world) = %d", result);

    /* Names are not inherited; info hints are, dup_with_info replaces them. */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world's name is %s", name);
    MPI_OK(MPI_Comm_set_name(d, "my duplicate"));
    MPI_OK(MPI_Comm_get_name(d, name, &len));
    CHECK(strcmp(name, "my duplicate") == 0 && len == 12, "name %s", name);
    MPI_Info info, used;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));
    MPI_OK(MPI_Comm_set_info(d, info));
    MPI_OK(MPI_Comm_dup(d, &d2));
    MPI_OK(MPI_Comm_get_name(d2, name, &len));
    CHECK(len == 0 && name[0] == '\0', "a duplicate has no name");
    char value[64];
    int flag;
    MPI_OK(MPI_Comm_get_info(d2, &used));
    MPI_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", 63, value, &flag));
    CHECK(flag && strcmp(value, "false") == 0, "hint copied by dup");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Comm_free(&d2));
    MPI_OK(MPI_Info_delete(info, "mpi_assert_no_any_tag"));
    MPI_OK(MPI_Info_set(info, "mpi_assert_exact_length", "true"));
    MPI_OK(MPI_Comm_dup_with_info(d, info, &d2));
    MPI_OK(MPI_Comm_get_info(d2, &used));
    MPI_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", 63, value, &flag));
    CHECK(!flag, "dup_with_info replaces the hints");
    MPI_OK(MPI_Info_get(used, "mpi_assert_exact_length", 63, value, &flag));
    CHECK(flag && strcmp(value, "true") == 0, "dup_with_info's hint");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Info_free(&info));
    CHECK(world_rank_sum(d2) == size * (size - 1) / 2, "allreduce over a duplicate");
    MPI_OK(MPI_Comm_free(&d2));
    MPI_OK(MPI_Comm_free(&d));
}

static void test_create(int rank, int size) {
    MPI_Group world, evens, odds;
    MPI_Comm c;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int even_range[1][3] = {{0, (size - 1) / 2 * 2, 2}};
    MPI_OK(MPI_Group_range_incl(world, 1, even_range, &evens));
    MPI_OK(MPI_Group_difference(world, evens, &odds));

    /* One group: the others get MPI_COMM_NULL. */
    const int odd = rank & 1;
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &c));
    CHECK((c != MPI_COMM_NULL) == !odd, "Comm_create membership");
    int evens_sum = 0, odds_sum = 0;
    for (int r = 0; r < size; ++r) *(r & 1 ? &odds_sum : &evens_sum) += r;
    if (c != MPI_COMM_NULL) {
        int crank;
        MPI_OK(MPI_Comm_rank(c, &crank));
        CHECK(crank == rank / 2, "Comm_create rank %d", crank);
        CHECK(world_rank_sum(c) == evens_sum, "allreduce over Comm_create's result");
        MPI_OK(MPI_Comm_free(&c));
    }
    /* Disjoint groups, one per rank (MPI 2.2). */
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, rank % 2 ? odds : evens, &c));
    const int mine_sum = odd ? odds_sum : evens_sum;
    CHECK(world_rank_sum(c) == mine_sum, "disjoint Comm_create");
    MPI_OK(MPI_Comm_free(&c));

    /* create_group: only the odd ranks call. */
    if (rank % 2) {
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, odds, 5, &c));
        CHECK(world_rank_sum(c) == odds_sum, "allreduce over create_group's result");
        MPI_OK(MPI_Comm_free(&c));
    }
    /* Overlapping groups with the same tag, one after the other: all ranks in
     * reverse order, then the evens. */
    int* rev = (int*)xmalloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; ++r) rev[r] = size - 1 - r;
    MPI_Group reversed;
    MPI_OK(MPI_Group_incl(world, size, rev, &reversed));
    free(rev);
    MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, reversed, 9, &c));
    int crank;
    MPI_OK(MPI_Comm_rank(c, &crank));
    CHECK(crank == size - 1 - rank, "create_group rank %d", crank);
    CHECK(world_rank_sum(c) == size * (size - 1) / 2, "allreduce over the reversed group");
    MPI_OK(MPI_Comm_free(&c));
    if (rank % 2 == 0) {
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 9, &c));
        CHECK(world_rank_sum(c) == evens_sum, "allreduce over the evens");
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Group_free(&reversed));
    MPI_OK(MPI_Group_free(&evens));
    MPI_OK(MPI_Group_free(&odds));
    MPI_OK(MPI_Group_free(&world));
}

static void test_many(int size) {
    /* Many alive at once (context ids are not reused while in use), then
     * dup/free cycles (they are reused afterwards). */
    enum { ALIVE = 100, CYCLES = 300 };
    MPI_Comm comms[ALIVE];
    for (int i = 0; i < ALIVE; ++i)
        MPI_OK(MPI_Comm_dup(i ? comms[i - 1] : MPI_COMM_WORLD, &comms[i]));
    CHECK(world_rank_sum(comms[ALIVE - 1]) == size * (size - 1) / 2, "allreduce on the last");
    for (int i = 0; i < ALIVE; ++i) MPI_OK(MPI_Comm_free(&comms[i]));
    for (int i = 0; i < CYCLES; ++i) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_OK(MPI_Comm_free(&c));
    }
}

static void test_errors(int rank, int size) {
    MPI_Comm c = MPI_COMM_WORLD, d;
    int n, flag;
    CHECK(error_class(MPI_Comm_free(&c)) == MPI_ERR_COMM, "freeing MPI_COMM_WORLD");
    CHECK(error_class(MPI_Comm_dup(MPI_COMM_NULL, &d)) == MPI_ERR_COMM, "dup of COMM_NULL");
    CHECK(error_class(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &d)) == MPI_ERR_ARG, "color -5");
    CHECK(error_class(MPI_Comm_remote_size(MPI_COMM_WORLD, &n)) == MPI_ERR_COMM,
          "remote size of an intracommunicator");
    CHECK(error_class(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &d)) ==
              MPI_ERR_ARG,
          "unknown split type");
    MPI_OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK(!flag, "world is no intercommunicator");
    MPI_OK(MPI_Comm_get_parent(&d));
    CHECK(d == MPI_COMM_NULL, "no parent");

    /* A freed handle is invalid. */
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_Comm stale = d;
    MPI_OK(MPI_Comm_free(&d));
    CHECK(error_class(MPI_Comm_size(stale, &n)) == MPI_ERR_COMM, "freed handle");

    if (size > 1) {
        /* A subgroup's communicator cannot create from a group with outsiders. */
        MPI_Group wg;
        MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, 0, &c));
        CHECK(error_class(MPI_Comm_create(c, wg, &d)) == MPI_ERR_GROUP, "group not a subset");
        MPI_OK(MPI_Comm_free(&c));
        MPI_OK(MPI_Group_free(&wg));

        /* A handle of another rank is rejected with a message saying so. */
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        MPI_Comm theirs = MPI_COMM_NULL;
        MPI_OK(MPI_Sendrecv(&d, 1, MPI_INT, (rank + 1) % size, 3, &theirs, 1, MPI_INT,
                            (rank + size - 1) % size, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        /* (Only a rank of the same node process can tell: handles are per process.) */
        MPI_Comm node;
        int left = (rank + size - 1) % size, left_in_node = 0;
        MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
        MPI_Group world_group, node_group;
        MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
        MPI_OK(MPI_Comm_group(node, &node_group));
        MPI_OK(MPI_Group_translate_ranks(world_group, 1, &left, node_group, &left_in_node));
        MPI_OK(MPI_Group_free(&world_group));
        MPI_OK(MPI_Group_free(&node_group));
        MPI_OK(MPI_Comm_free(&node));
        if (left_in_node != MPI_UNDEFINED) {
            int rc = MPI_Comm_size(theirs, &n);
            CHECK(error_class(rc) == MPI_ERR_COMM, "another rank's communicator");
            char text[MPI_MAX_ERROR_STRING];
            MPI_OK(MPI_Error_string(rc, text, &n));
            CHECK(strstr(text, "belongs to MPI_COMM_WORLD rank") != NULL, "message: %s", text);
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Comm_free(&d));
    }
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_split(rank, size);
    test_dup(rank, size);
    test_create(rank, size);
    test_many(size);
    test_errors(rank, size);
    MPI_OK(MPI_Finalize());
    if (rank == 0) printf("comm: OK (%d ranks)\n", size);
    return 0;
}
