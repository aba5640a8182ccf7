/* Hardware-guided communicator splits (MPI 4.0 section 7.4.2, 4.1's
 * MPI_COMM_TYPE_RESOURCE_GUIDED) and MPI_Get_hw_resource_info, checked
 * against each other: every rank learns from MPI_Get_hw_resource_info which
 * instance of each resource it uses, all of them share that, and a split by
 * a resource type must group exactly the ranks that use the same instance.
 * - HW_GUIDED with "mpi_shared_memory" equals MPI_COMM_TYPE_SHARED; with
 *   hwloc://Package, NUMANode, Core; an unknown type, no key or
 *   MPI_INFO_NULL give MPI_COMM_NULL; the key is set on the new communicator;
 * - HW_UNGUIDED: each result a strict subset of its parent, its members
 *   sharing the instance of the type its info names; repeated down to
 *   MPI_COMM_NULL;
 * - RESOURCE_GUIDED with "mpi_pset_name" (mpi://WORLD, mpi://SELF).
 * Argument (optional): the number of packages the machine must show, for a
 * run on a described machine (HWLOC_SYNTHETIC).
 */
#include "common.h"

static int rank, size;

/* The instance of resource `type` rank uses (-1: none), from its hw info. */
static int my_instance(const char* type) {
    MPI_Info hw;
    MPI_OK(MPI_Get_hw_resource_info(&hw));
    char value[64];
    int flag = 0;
    MPI_OK(MPI_Info_get(hw, type, sizeof(value) - 1, value, &flag));
    MPI_OK(MPI_Info_free(&hw));
    return flag ? atoi(value) : -1;
}

/* Checks that newcomm (at this rank) holds exactly the ranks of parent that
 * use the same instance of `type` as this one; returns how many distinct
 * instances the parent's ranks use. */
static int check_split(MPI_Comm parent, MPI_Comm newcomm, const char* type) {
    int psize, prank;
    MPI_OK(MPI_Comm_size(parent, &psize));
    MPI_OK(MPI_Comm_rank(parent, &prank));
    const int mine = my_instance(type);
    int* all = ints((size_t)psize, 0);
    MPI_OK(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, parent));
    int distinct = 0;
    for (int r = 0; r < psize; ++r) {
        int seen = 0;
        for (int q = 0; q < r; ++q) seen |= all[q] == all[r];
        distinct += !seen && all[r] >= 0;
    }
    if (mine < 0) {
        CHECK(newcomm == MPI_COMM_NULL, "%s: no instance but a communicator", type);
        free(all);
        return distinct;
    }
    CHECK(newcomm != MPI_COMM_NULL, "%s: MPI_COMM_NULL at a rank using instance %d", type, mine);
    int expect = 0;
    for (int r = 0; r < psize; ++r) expect += all[r] == mine;
    int nsize;
    MPI_OK(MPI_Comm_size(newcomm, &nsize));
    CHECK(nsize == expect, "%s: %d ranks, %d use instance %d", type, nsize, expect, mine);
    /* Members: the parent ranks of newcomm's group use the same instance. */
    MPI_Group pg, ng;
    MPI_OK(MPI_Comm_group(parent, &pg));
    MPI_OK(MPI_Comm_group(newcomm, &ng));
    for (int r = 0; r < nsize; ++r) {
        int pr = -1;
        MPI_OK(MPI_Group_translate_ranks(ng, 1, &r, pg, &pr));
        CHECK(pr >= 0 && all[pr] == mine, "%s: member %d (parent rank %d) uses %d, not %d", type, r,
              pr, pr >= 0 ? all[pr] : -1, mine);
    }
    MPI_OK(MPI_Group_free(&pg));
    MPI_OK(MPI_Group_free(&ng));
    /* The new communicator carries the resource type. */
    MPI_Info used;
    MPI_OK(MPI_Comm_get_info(newcomm, &used));
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_OK(MPI_Info_get(used, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strcmp(value, type) == 0, "info of the %s split: '%s'", type,
          flag ? value : "(none)");
    MPI_OK(MPI_Info_free(&used));
    free(all);
    return distinct;
}

static MPI_Comm guided(MPI_Comm parent, const char* type) {
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_hw_resource_type", type));
    MPI_Comm n;
    MPI_OK(MPI_Comm_split_type(parent, MPI_COMM_TYPE_HW_GUIDED, rank, info, &n));
    MPI_OK(MPI_Info_free(&info));
    return n;
}

static void guided_splits(int packages) {
    /* mpi_shared_memory: the same groups as MPI_COMM_TYPE_SHARED. */
    MPI_Comm shm = guided(MPI_COMM_WORLD, "mpi_shared_memory"), shared;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
    int result;
    MPI_OK(MPI_Comm_compare(shm, shared, &result));
    CHECK(result == MPI_CONGRUENT, "mpi_shared_memory vs TYPE_SHARED: %d", result);
    check_split(MPI_COMM_WORLD, shm, "mpi_shared_memory");
    MPI_OK(MPI_Comm_free(&shm));
    MPI_OK(MPI_Comm_free(&shared));
    const char* types[] = {"hwloc://Package", "hwloc://NUMANode", "hwloc://Core"};
    for (int t = 0; t < 3; ++t) {
        MPI_Comm n = guided(MPI_COMM_WORLD, types[t]);
        const int distinct = check_split(MPI_COMM_WORLD, n, types[t]);
        if (t == 0 && packages > 0) {
            /* On the described machine every package holds a rank (cores
             * are spread over VPs) only with enough ranks. */
            CHECK(distinct <= packages, "%d packages used, the machine has %d", distinct, packages);
            if (size >= 4)
                CHECK(distinct == packages, "%d packages used, expected %d", distinct, packages);
        }
        if (n != MPI_COMM_NULL) MPI_OK(MPI_Comm_free(&n));
    }
    /* Unknown type, no key, no info: MPI_COMM_NULL everywhere. */
    MPI_Comm n = guided(MPI_COMM_WORLD, "hwloc://NoSuchThing");
    CHECK(n == MPI_COMM_NULL, "unknown hwloc type gave a communicator");
    n = guided(MPI_COMM_WORLD, "fibermpi_nonsense");
    CHECK(n == MPI_COMM_NULL, "unknown type gave a communicator");
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &n));
    CHECK(n == MPI_COMM_NULL, "MPI_INFO_NULL gave a communicator");
    MPI_Info empty;
    MPI_OK(MPI_Info_create(&empty));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, empty, &n));
    CHECK(n == MPI_COMM_NULL, "an info without the key gave a communicator");
    MPI_OK(MPI_Info_free(&empty));
}

static void unguided_splits(void) {
    MPI_Comm parent;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    for (int level = 0; level < 16; ++level) {
        MPI_Comm n;
        MPI_OK(MPI_Comm_split_type(parent, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &n));
        int psize;
        MPI_OK(MPI_Comm_size(parent, &psize));
        /* All of the parent get a communicator or none do. */
        int got = n != MPI_COMM_NULL, all_got = 0, any_got = 0;
        MPI_OK(MPI_Allreduce(&got, &all_got, 1, MPI_INT, MPI_LAND, parent));
        MPI_OK(MPI_Allreduce(&got, &any_got, 1, MPI_INT, MPI_LOR, parent));
        CHECK(all_got == any_got, "unguided level %d: some ranks got MPI_COMM_NULL", level);
        if (n == MPI_COMM_NULL) {
            MPI_OK(MPI_Comm_free(&parent));
            return;
        }
        MPI_Info used;
        MPI_OK(MPI_Comm_get_info(n, &used));
        char type[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MPI_OK(MPI_Info_get(used, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, type, &flag));
        MPI_OK(MPI_Info_free(&used));
        CHECK(flag, "unguided level %d: no mpi_hw_resource_type", level);
        int nsize;
        MPI_OK(MPI_Comm_size(n, &nsize));
        CHECK(nsize < psize, "unguided level %d (%s): %d ranks, not a strict subset of %d", level,
              type, nsize, psize);
        check_split(parent, n, type);
        MPI_OK(MPI_Comm_free(&parent));
        parent = n;
    }
    test_fail(__FILE__, __LINE__, "unguided splits never ended");
}

static void pset_splits(void) {
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_pset_name", "mpi://WORLD"));
    MPI_Comm n;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &n));
    int result;
    MPI_OK(MPI_Comm_compare(n, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_CONGRUENT, "pset mpi://WORLD: compare %d", result);
    MPI_OK(MPI_Comm_free(&n));
    MPI_OK(MPI_Info_set(info, "mpi_pset_name", "mpi://SELF"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &n));
    int nsize;
    MPI_OK(MPI_Comm_size(n, &nsize));
    CHECK(nsize == 1, "pset mpi://SELF: %d ranks", nsize);
    MPI_OK(MPI_Comm_free(&n));
    MPI_OK(MPI_Info_set(info, "mpi_pset_name", "mpi://NOWHERE"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &n));
    CHECK(n == MPI_COMM_NULL, "unknown pset gave a communicator");
    MPI_OK(MPI_Info_free(&info));
    /* A bad split_type is MPI_ERR_ARG. */
    int e = MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &n);
    CHECK(error_class(e) == MPI_ERR_ARG, "bad split_type: class %d", error_class(e));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int packages = argc > 1 ? atoi(argv[1]) : 0;
    CHECK(my_instance("mpi_shared_memory") >= 0, "no mpi_shared_memory in the hw info");
    CHECK(my_instance("hwloc://Core") >= 0, "no hwloc://Core in the hw info");
    guided_splits(packages);
    unguided_splits();
    pset_splits();
    MPI_Finalize();
    return 0;
}
