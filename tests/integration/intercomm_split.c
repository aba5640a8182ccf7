/* MPI_Comm_split, MPI_Comm_create and MPI_Comm_split_type on
 * intercommunicators (MPI 3.1 section 6.4.2), between two unequal blocks of
 * MPI_COMM_WORLD: colors with MPI_UNDEFINED on some ranks, a color on one side
 * only, keys that reverse the order, subgroups (one side empty), several
 * splits alive at once, on a duplicate and on a split's result. Each new
 * intercommunicator is checked against the expected local and remote groups
 * (world ranks), with point-to-point in both directions, MPI_Allreduce and
 * MPI_Barrier across, and freed. MPI_Comm_create_group refuses an
 * intercommunicator. Needs 2 ranks; with 1 it only checks that it starts.
 */
#include "common.h"

typedef struct {
    int n;      /* ranks in the group */
    int* world; /* world rank of each */
} Side;

static MPI_Group world_group;
static int world_rank, world_size;
static int* node_of; /* world rank -> world rank of the first rank of its node process */
static int checked;  /* intercommunicators this rank checked */

static Side side_of(MPI_Group g) {
    Side s;
    MPI_OK(MPI_Group_size(g, &s.n));
    int* ranks = (int*)xmalloc(sizeof(int) * (size_t)(s.n + 1));
    s.world = (int*)xmalloc(sizeof(int) * (size_t)(s.n + 1));
    for (int i = 0; i < s.n; ++i) ranks[i] = i;
    MPI_OK(MPI_Group_translate_ranks(g, s.n, ranks, world_group, s.world));
    free(ranks);
    return s;
}

static Side local_side(MPI_Comm c) {
    MPI_Group g;
    MPI_OK(MPI_Comm_group(c, &g));
    Side s = side_of(g);
    MPI_OK(MPI_Group_free(&g));
    return s;
}

static Side remote_side(MPI_Comm c) {
    MPI_Group g;
    MPI_OK(MPI_Comm_remote_group(c, &g));
    Side s = side_of(g);
    MPI_OK(MPI_Group_free(&g));
    return s;
}

/* A split of a parent intercommunicator: the color and key of the rank of
 * world rank w, rank i of its group in the parent. */
typedef struct {
    const char* name;
    int (*color)(int w, int i);
    int (*key)(int w, int i);
} Split;

/* The ranks of s with color c, ordered by (key, rank): their world ranks in
 * out; returns how many. */
static int expected(const Split* sp, const Side* s, int c, int* out) {
    int n = 0;
    if (c == MPI_UNDEFINED) return 0;
    for (int i = 0; i < s->n; ++i) {
        if (sp->color(s->world[i], i) != c) continue;
        /* insertion by (key, i): i grows, so equal keys keep their order */
        const int k = sp->key(s->world[i], i);
        int j = n++;
        int* ks = out + s->n; /* keys of the members so far, after the ranks */
        while (j > 0 && ks[j - 1] > k) {
            out[j] = out[j - 1];
            ks[j] = ks[j - 1];
            --j;
        }
        out[j] = s->world[i];
        ks[j] = k;
    }
    return n;
}

static int is_world(const Side* s, const int* w, int n) {
    if (s->n != n) return 0;
    for (int i = 0; i < n; ++i)
        if (s->world[i] != w[i]) return 0;
    return 1;
}

/* Point-to-point in both directions with every remote rank, an Allreduce and
 * a Barrier across. */
static void traffic(MPI_Comm c, const Side* rem, const char* what) {
    int me;
    MPI_OK(MPI_Comm_rank(c, &me));
    const int m = rem->n;
    int* out = (int*)xmalloc(sizeof(int) * (size_t)m);
    int* in = (int*)xmalloc(sizeof(int) * (size_t)m);
    MPI_Request* reqs = (MPI_Request*)xmalloc(sizeof(MPI_Request) * 2 * (size_t)m);
    MPI_Status* sts = (MPI_Status*)xmalloc(sizeof(MPI_Status) * 2 * (size_t)m);
    for (int r = 0; r < m; ++r) {
        out[r] = 1000 * world_rank + r;
        in[r] = -1;
        MPI_OK(MPI_Irecv(&in[r], 1, MPI_INT, r, 9, c, &reqs[r]));
        MPI_OK(MPI_Isend(&out[r], 1, MPI_INT, r, 9, c, &reqs[m + r]));
    }
    MPI_OK(MPI_Waitall(2 * m, reqs, sts));
    for (int r = 0; r < m; ++r) {
        CHECK(in[r] == 1000 * rem->world[r] + me, "%s: from remote rank %d got %d, expected %d",
              what, r, in[r], 1000 * rem->world[r] + me);
        CHECK(sts[r].MPI_SOURCE == r, "%s: status source %d, expected %d", what, sts[r].MPI_SOURCE,
              r);
    }
    /* The sum of the remote group's (world rank + 1), and its size. */
    int mine[2] = {world_rank + 1, 1}, sum[2] = {0, 0}, expect = 0;
    MPI_OK(MPI_Allreduce(mine, sum, 2, MPI_INT, MPI_SUM, c));
    for (int r = 0; r < m; ++r) expect += rem->world[r] + 1;
    CHECK(sum[0] == expect && sum[1] == m, "%s: Allreduce gave %d over %d, expected %d over %d",
          what, sum[0], sum[1], expect, m);
    MPI_OK(MPI_Barrier(c));
    free(out);
    free(in);
    free(reqs);
    free(sts);
}

/* Checks c, the result of sp on parent at this rank, and returns it. */
static MPI_Comm check_result(MPI_Comm parent, const Split* sp, MPI_Comm c) {
    const Side pl = local_side(parent), pr = remote_side(parent);
    int prank;
    MPI_OK(MPI_Comm_rank(parent, &prank));
    const int color = sp->color(world_rank, prank);
    int* wl = (int*)xmalloc(sizeof(int) * 2 * (size_t)(pl.n + 1));
    int* wr = (int*)xmalloc(sizeof(int) * 2 * (size_t)(pr.n + 1));
    const int nl = expected(sp, &pl, color, wl), nr = expected(sp, &pr, color, wr);
    if (nl == 0 || nr == 0) {
        CHECK(c == MPI_COMM_NULL, "%s: color %d (%d local, %d remote) gave a communicator",
              sp->name, color, nl, nr);
    } else {
        CHECK(c != MPI_COMM_NULL, "%s: color %d (%d local, %d remote) gave MPI_COMM_NULL", sp->name,
              color, nl, nr);
        int flag, n, r;
        MPI_OK(MPI_Comm_test_inter(c, &flag));
        CHECK(flag, "%s: not an intercommunicator", sp->name);
        MPI_OK(MPI_Comm_size(c, &n));
        MPI_OK(MPI_Comm_remote_size(c, &r));
        CHECK(n == nl && r == nr, "%s: sizes %d/%d, expected %d/%d", sp->name, n, r, nl, nr);
        MPI_OK(MPI_Comm_rank(c, &r));
        CHECK(wl[r] == world_rank, "%s: rank %d, but that is world rank %d", sp->name, r, wl[r]);
        Side l = local_side(c), rm = remote_side(c);
        CHECK(is_world(&l, wl, nl), "%s: wrong local group", sp->name);
        CHECK(is_world(&rm, wr, nr), "%s: wrong remote group (first world rank %d, expected %d)",
              sp->name, rm.world[0], wr[0]);
        traffic(c, &rm, sp->name);
        ++checked;
        free(l.world);
        free(rm.world);
    }
    free(wl);
    free(wr);
    free(pl.world);
    free(pr.world);
    return c;
}

static MPI_Comm check_split(MPI_Comm parent, const Split* sp) {
    int prank;
    MPI_OK(MPI_Comm_rank(parent, &prank));
    MPI_Comm c;
    MPI_OK(MPI_Comm_split(parent, sp->color(world_rank, prank), sp->key(world_rank, prank), &c));
    return check_result(parent, sp, c);
}

/* MPI_Comm_create with the local ranks of color 0 ordered by key (the
 * equivalent split: color 0 or MPI_UNDEFINED, key the rank in the group). */
static MPI_Comm check_create(MPI_Comm parent, const Split* sp) {
    const Side pl = local_side(parent);
    int* members = (int*)xmalloc(sizeof(int) * 2 * (size_t)(pl.n + 1));
    const int n = expected(sp, &pl, 0, members);
    MPI_Group lg, sub;
    MPI_OK(MPI_Comm_group(parent, &lg));
    for (int i = 0; i < n; ++i) /* world ranks -> ranks in the local group */
        MPI_OK(MPI_Group_translate_ranks(world_group, 1, &members[i], lg, &members[i]));
    MPI_OK(MPI_Group_incl(lg, n, members, &sub));
    MPI_Comm c;
    MPI_OK(MPI_Comm_create(parent, sub, &c));
    MPI_OK(MPI_Group_free(&sub));
    MPI_OK(MPI_Group_free(&lg));
    free(members);
    free(pl.world);
    return check_result(parent, sp, c);
}

static void free_comm(MPI_Comm* c) {
    if (*c != MPI_COMM_NULL) {
        MPI_OK(MPI_Comm_free(c));
        CHECK(*c == MPI_COMM_NULL, "MPI_Comm_free left the handle");
    }
}

/* The two blocks of the world: ranks [0, a) and [a, size). */
static int a_size;
static int side(int w) {
    return w >= a_size;
}

/* Two colors by parity of the rank, keys reversing the order. */
static int parity(int w, int i) {
    (void)w;
    return i % 2;
}
static int reverse(int w, int i) {
    (void)w;
    return -i;
}
/* MPI_UNDEFINED on every third world rank; color 7 on both sides, and a color
 * only on the first side (5) or only on the second (9); keys all equal. */
static int mixed(int w, int i) {
    if (w % 3 == 2) return MPI_UNDEFINED;
    if (i % 2 == 0) return 7;
    return side(w) ? 9 : 5;
}
static int zero(int w, int i) {
    (void)w, (void)i;
    return 0;
}
/* One color, keys with ties (then the old rank decides). */
static int key_mod3(int w, int i) {
    (void)i;
    return (w * 5) % 3;
}
static int undefined(int w, int i) {
    (void)w, (void)i;
    return MPI_UNDEFINED;
}
static int node(int w, int i) {
    (void)i;
    return node_of[w];
}
static int minus_world(int w, int i) {
    (void)i;
    return -w;
}
/* Subgroups for MPI_Comm_create (color 0 = member, key = position): the even
 * ranks in reverse order; all of the first side and none of the second; all
 * but the first side's rank 0. */
static int even_ranks(int w, int i) {
    (void)w;
    return i % 2 == 0 ? 0 : MPI_UNDEFINED;
}
static int first_side_only(int w, int i) {
    (void)i;
    return side(w) == 0 ? 0 : MPI_UNDEFINED;
}
static int not_first_leader(int w, int i) {
    (void)i;
    return w == 0 ? MPI_UNDEFINED : 0;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    if (world_size < 2) {
        MPI_OK(MPI_Group_free(&world_group));
        MPI_OK(MPI_Finalize());
        printf("intercomm_split: OK (1 rank, nothing to split)\n");
        return 0;
    }

    /* Unequal blocks from 3 ranks on (2 | 1, 1 | 3, 2 | 6 on 8). */
    a_size = (world_size + 3) / 4;
    MPI_Comm local, inter, dup;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, side(world_rank), world_rank, &local));
    MPI_OK(
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, side(world_rank) ? 0 : a_size, 5, &inter));
    MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));

    /* Node process of every world rank, for MPI_Comm_split_type. */
    MPI_Comm shared;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
    int first = world_rank;
    MPI_OK(MPI_Bcast(&first, 1, MPI_INT, 0, shared));
    node_of = (int*)xmalloc(sizeof(int) * (size_t)world_size);
    MPI_OK(MPI_Allgather(&first, 1, MPI_INT, node_of, 1, MPI_INT, MPI_COMM_WORLD));
    MPI_OK(MPI_Comm_free(&shared));

    const Split by_parity = {"parity, reversed", parity, reverse};
    const Split by_mixed = {"undefined and one-sided colors", mixed, zero};
    const Split one_color = {"one color, keys with ties", zero, key_mod3};
    const Split none = {"all MPI_UNDEFINED", undefined, zero};
    const Split by_node = {"split_type shared", node, minus_world};
    const Split evens = {"create: even ranks reversed", even_ranks, reverse};
    const Split one_side = {"create: second side empty", first_side_only, zero};
    const Split no_leader = {"create: without world rank 0", not_first_leader, zero};

    /* Several splits alive at once, then traffic on each again. */
    MPI_Comm c[12];
    int k = 0;
    c[k++] = check_split(inter, &by_parity);
    c[k++] = check_split(inter, &by_mixed);
    c[k++] = check_split(inter, &one_color);
    c[k++] = check_split(inter, &none);
    MPI_OK(MPI_Comm_dup(inter, &dup));
    c[k++] = check_split(dup, &by_mixed);
    c[k++] = check_split(dup, &by_parity);
    c[k++] = check_split(c[2], &by_parity); /* a split of a split */
    c[k++] = check_create(inter, &evens);
    c[k++] = check_create(dup, &one_side);
    c[k++] = check_create(inter, &no_leader);
    {
        int prank;
        MPI_OK(MPI_Comm_rank(inter, &prank));
        MPI_Comm t;
        MPI_OK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, minus_world(world_rank, prank),
                                   MPI_INFO_NULL, &t));
        c[k++] = check_result(inter, &by_node, t);
    }
    for (int i = 0; i < k; ++i)
        if (c[i] != MPI_COMM_NULL) {
            Side r = remote_side(c[i]);
            traffic(c[i], &r, "again");
            free(r.world);
        }
    for (int i = k - 1; i >= 0; --i) free_comm(&c[i]);

    /* Errors: not a subgroup of the local group, a negative color, and
     * MPI_Comm_create_group, which needs an intracommunicator. */
    MPI_Group rg, lg;
    MPI_Comm bad;
    MPI_OK(MPI_Comm_remote_group(inter, &rg));
    MPI_OK(MPI_Comm_group(inter, &lg));
    CHECK(error_class(MPI_Comm_create(inter, rg, &bad)) == MPI_ERR_GROUP,
          "create with the remote group");
    CHECK(error_class(MPI_Comm_split(inter, -2, 0, &bad)) == MPI_ERR_ARG, "negative color");
    CHECK(error_class(MPI_Comm_create_group(inter, lg, 3, &bad)) == MPI_ERR_COMM,
          "MPI_Comm_create_group on an intercommunicator");
    MPI_OK(MPI_Group_free(&rg));
    MPI_OK(MPI_Group_free(&lg));

    /* The parents still work after all that. */
    Side r = remote_side(inter);
    traffic(inter, &r, "parent");
    traffic(dup, &r, "parent dup");
    free(r.world);
    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&local));
    MPI_OK(MPI_Group_free(&world_group));
    free(node_of);
    MPI_OK(MPI_Finalize());
    if (world_rank == 0)
        printf("intercomm_split: OK (%d ranks, %d intercommunicators at rank 0)\n", world_size,
               checked);
    return 0;
}
