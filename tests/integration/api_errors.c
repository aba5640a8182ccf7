/* Error classes of bad arguments across the API beyond point-to-point and
 * collectives (p2p_errors.c, coll_errors.c): datatypes, groups,
 * communicators, requests, attributes, topologies, info, pack, probe, ops,
 * error handlers and status queries. With MPI_ERRORS_RETURN every call must
 * return the class the standard names (two where it leaves the choice open),
 * with an error string, and leave the library usable: a normal allreduce
 * follows, and every rank must have made the same number of checks.
 * Collective calls get the same bad arguments on every rank, so that all
 * reject them before any communication.
 */
#include "common.h"

static int g_checks, g_failures;

/* A mismatch is reported and counted, not fatal: one run lists them all. */
#define EXPECT2(call, cls1, cls2)                                                                 \
    do {                                                                                          \
        int ex_rc_ = (call);                                                                      \
        int ex_cls_ = error_class(ex_rc_);                                                        \
        char ex_text_[MPI_MAX_ERROR_STRING] = "";                                                 \
        int ex_len_ = 0;                                                                          \
        if (ex_cls_ != (cls1) && ex_cls_ != (cls2)) {                                             \
            fprintf(stderr, "FAIL %s:%d: %s returned %d (class %d), expected %s%s%s\n", __FILE__, \
                    __LINE__, #call, ex_rc_, ex_cls_, #cls1, (cls1) == (cls2) ? "" : " or ",      \
                    (cls1) == (cls2) ? "" : #cls2);                                               \
            g_failures++;                                                                         \
        } else if (MPI_Error_string(ex_rc_, ex_text_, &ex_len_) != MPI_SUCCESS || ex_len_ <= 0 || \
                   (int)strlen(ex_text_) != ex_len_) {                                            \
            fprintf(stderr, "FAIL %s:%d: %s: no error string\n", __FILE__, __LINE__, #call);      \
            g_failures++;                                                                         \
        }                                                                                         \
        g_checks++;                                                                               \
    } while (0)
#define EXPECT(call, cls) EXPECT2(call, cls, cls)

static void datatypes(void) {
    MPI_Datatype t = MPI_DATATYPE_NULL, bad = MPI_DATATYPE_NULL, vec;
    int blocks[2] = {1, -1}, disps[2] = {0, 4}, n = 0;
    MPI_Aint adisps[2] = {0, 8}, lb, extent;
    MPI_Datatype types[2] = {MPI_INT, MPI_DATATYPE_NULL};
    EXPECT(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_contiguous(1, MPI_INT, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_vector(-1, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT2(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG, MPI_ERR_COUNT);
    EXPECT(MPI_Type_vector(2, 1, 1, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    EXPECT2(MPI_Type_indexed(2, blocks, disps, MPI_INT, &t), MPI_ERR_ARG, MPI_ERR_COUNT);
    EXPECT(MPI_Type_indexed(-2, blocks, disps, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_create_hindexed(1, blocks, adisps, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_create_struct(-1, blocks, adisps, types, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_create_struct(2, disps, adisps, types, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_create_resized(MPI_DATATYPE_NULL, 0, 8, &t), MPI_ERR_TYPE);
    int sizes[2] = {4, 4}, subsizes[2] = {5, 1}, starts[2] = {0, 0};
    EXPECT(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t),
           MPI_ERR_ARG);
    subsizes[0] = 2;
    EXPECT(MPI_Type_create_subarray(2, sizes, subsizes, starts, 12345, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_subarray(0, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t),
           MPI_ERR_ARG);
    EXPECT(MPI_Type_commit(NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_commit(&bad), MPI_ERR_TYPE);
    MPI_Datatype predefined = MPI_INT;
    EXPECT(MPI_Type_free(&predefined), MPI_ERR_TYPE);
    EXPECT(MPI_Type_free(&bad), MPI_ERR_TYPE);
    EXPECT(MPI_Type_size(MPI_DATATYPE_NULL, &n), MPI_ERR_TYPE);
    EXPECT(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_get_extent(MPI_DATATYPE_NULL, &lb, &extent), MPI_ERR_TYPE);
    EXPECT(MPI_Type_dup(MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    int ni, na, nd, combiner;
    EXPECT(MPI_Type_get_envelope(MPI_DATATYPE_NULL, &ni, &na, &nd, &combiner), MPI_ERR_TYPE);
    EXPECT(MPI_Type_set_name(MPI_DATATYPE_NULL, "x"), MPI_ERR_TYPE);
    EXPECT(MPI_Type_match_size(12345, 4, &t), MPI_ERR_ARG);
    /* A derived type must be committed before it carries data. */
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    int buf[4] = {0};
    EXPECT(MPI_Send(buf, 1, vec, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_OK(MPI_Type_free(&vec));
    MPI_Status st;
    MPI_OK(MPI_Status_set_elements(&st, MPI_INT, 2));
    EXPECT(MPI_Get_count(&st, MPI_DATATYPE_NULL, &n), MPI_ERR_TYPE);
    EXPECT(MPI_Get_elements(&st, MPI_DATATYPE_NULL, &n), MPI_ERR_TYPE);
    EXPECT(MPI_Status_set_elements(&st, MPI_DATATYPE_NULL, 1), MPI_ERR_TYPE);
}

static void groups(int size) {
    MPI_Group world, g = MPI_GROUP_NULL, null = MPI_GROUP_NULL;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int n = 0, ranks[2] = {size, 0}, out[2];
    EXPECT(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP);
    EXPECT(MPI_Group_rank(world, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Group_incl(world, 1, ranks, &g), MPI_ERR_RANK);
    EXPECT2(MPI_Group_incl(world, -1, ranks, &g), MPI_ERR_ARG, MPI_ERR_COUNT);
    ranks[0] = 0;
    if (size > 1) EXPECT2(MPI_Group_incl(world, 2, ranks, &g), MPI_ERR_RANK, MPI_ERR_ARG);
    ranks[0] = -1;
    EXPECT(MPI_Group_excl(world, 1, ranks, &g), MPI_ERR_RANK);
    int range[1][3] = {{0, size, 1}};
    EXPECT(MPI_Group_range_incl(world, 1, range, &g), MPI_ERR_RANK);
    range[0][1] = 0;
    range[0][2] = 0;
    EXPECT2(MPI_Group_range_incl(world, 1, range, &g), MPI_ERR_ARG, MPI_ERR_RANK);
    ranks[0] = size;
    EXPECT(MPI_Group_translate_ranks(world, 1, ranks, world, out), MPI_ERR_RANK);
    EXPECT(MPI_Group_union(world, MPI_GROUP_NULL, &g), MPI_ERR_GROUP);
    EXPECT(MPI_Group_free(&null), MPI_ERR_GROUP);
    MPI_OK(MPI_Group_free(&world));
}

static void comms(int size) {
    MPI_Comm nc = MPI_COMM_NULL, world = MPI_COMM_WORLD;
    int n = 0, result = 0;
    EXPECT(MPI_Comm_size(MPI_COMM_NULL, &n), MPI_ERR_COMM);
    EXPECT(MPI_Comm_rank((MPI_Comm)0x12345, &n), MPI_ERR_COMM);
    EXPECT(MPI_Comm_rank(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_free(&world), MPI_ERR_COMM);
    EXPECT(MPI_Comm_dup(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &nc), MPI_ERR_ARG);
    EXPECT(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &nc), MPI_ERR_GROUP);
    EXPECT(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &result), MPI_ERR_COMM);
    EXPECT(MPI_Comm_set_name(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &nc), MPI_ERR_ARG);
    EXPECT(MPI_Intercomm_create(MPI_COMM_WORLD, size, MPI_COMM_WORLD, 0, 1, &nc), MPI_ERR_RANK);
    EXPECT(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &nc), MPI_ERR_COMM);
    MPI_Group g;
    EXPECT(MPI_Comm_remote_group(MPI_COMM_WORLD, &g), MPI_ERR_COMM);
    EXPECT(MPI_Comm_test_inter(MPI_COMM_NULL, &n), MPI_ERR_COMM);
}

static void requests(int right) {
    MPI_Request null = MPI_REQUEST_NULL, reqs[2];
    MPI_Status st;
    int flag = 0, index = 0;
    EXPECT2(MPI_Wait(NULL, &st), MPI_ERR_ARG, MPI_ERR_REQUEST);
    MPI_Request forged = (MPI_Request)0x12345;
    EXPECT(MPI_Wait(&forged, &st), MPI_ERR_REQUEST);
    EXPECT2(MPI_Waitall(-1, reqs, MPI_STATUSES_IGNORE), MPI_ERR_COUNT, MPI_ERR_ARG);
    EXPECT2(MPI_Waitall(2, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG, MPI_ERR_REQUEST);
    EXPECT2(MPI_Testany(-1, reqs, &index, &flag, &st), MPI_ERR_COUNT, MPI_ERR_ARG);
    EXPECT(MPI_Request_free(&null), MPI_ERR_REQUEST);
    EXPECT(MPI_Start(&null), MPI_ERR_REQUEST);
    EXPECT(MPI_Cancel(&null), MPI_ERR_REQUEST);
    /* MPI_Start wants a persistent request. */
    int v = 1, w = 0;
    MPI_OK(MPI_Irecv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &reqs[0]));
    EXPECT(MPI_Start(&reqs[0]), MPI_ERR_REQUEST);
    EXPECT(MPI_Test(&reqs[0], NULL, &st), MPI_ERR_ARG);
    MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 77, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&reqs[0], &st));
    /* An active persistent request cannot be started again. */
    MPI_OK(MPI_Recv_init(&w, 1, MPI_INT, MPI_ANY_SOURCE, 78, MPI_COMM_WORLD, &reqs[1]));
    MPI_OK(MPI_Start(&reqs[1]));
    EXPECT(MPI_Start(&reqs[1]), MPI_ERR_REQUEST);
    MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 78, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&reqs[1], &st));
    MPI_OK(MPI_Request_free(&reqs[1]));
}

static void attributes(void) {
    int value = 0, flag = 0;
    void* got = NULL;
    int keyval = MPI_TAG_UB;
    EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, 999999, &got, &flag), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &value), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_delete_attr(MPI_COMM_WORLD, 999999), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_free_keyval(&keyval), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &got, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_get_attr(MPI_DATATYPE_NULL, MPI_TAG_UB, &got, &flag), MPI_ERR_TYPE);
    /* A communicator keyval is no datatype keyval. */
    int ckey;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckey, NULL));
    EXPECT(MPI_Type_set_attr(MPI_INT, ckey, &value), MPI_ERR_KEYVAL);
    MPI_OK(MPI_Comm_free_keyval(&ckey));
}

static void topologies(int size) {
    MPI_Comm cart = MPI_COMM_NULL, nc;
    int dims[2] = {size + 1, 1}, periods[2] = {0, 0}, coords[2] = {0, 0}, n = 0, r;
    EXPECT2(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &cart), MPI_ERR_ARG,
            MPI_ERR_DIMS);
    EXPECT2(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart), MPI_ERR_ARG, MPI_ERR_DIMS);
    EXPECT(MPI_Cart_coords(MPI_COMM_WORLD, 0, 1, coords), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Cartdim_get(MPI_COMM_WORLD, &n), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &n), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Topo_test(MPI_COMM_NULL, &n), MPI_ERR_COMM);
    EXPECT2(MPI_Dims_create(size, -1, dims), MPI_ERR_ARG, MPI_ERR_DIMS);
    dims[0] = size + 1;
    EXPECT2(MPI_Dims_create(size, 1, dims), MPI_ERR_ARG, MPI_ERR_DIMS);
    int index[1] = {0}, edges[1] = {0};
    EXPECT(MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &nc), MPI_ERR_ARG);
    dims[0] = size;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    EXPECT(MPI_Cart_coords(cart, size, 1, coords), MPI_ERR_RANK);
    coords[0] = size;
    EXPECT2(MPI_Cart_rank(cart, coords, &r), MPI_ERR_RANK, MPI_ERR_ARG);
    int src, dst;
    EXPECT2(MPI_Cart_shift(cart, 5, 1, &src, &dst), MPI_ERR_ARG, MPI_ERR_DIMS);
    int sendv = 0, recvv[2];
    EXPECT(MPI_Neighbor_allgather(&sendv, 1, MPI_INT, recvv, 1, MPI_INT, MPI_COMM_WORLD),
           MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Neighbor_allgather(&sendv, -1, MPI_INT, recvv, 1, MPI_INT, cart), MPI_ERR_COUNT);
    MPI_OK(MPI_Comm_free(&cart));
    int sources[1] = {size}, weights[1] = {1};
    EXPECT2(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, sources, weights, 0, sources, weights,
                                           MPI_INFO_NULL, 0, &nc),
            MPI_ERR_RANK, MPI_ERR_ARG);
}

static void infos(void) {
    MPI_Info info, null = MPI_INFO_NULL;
    char key[MPI_MAX_INFO_KEY + 8], value[MPI_MAX_INFO_VAL + 8];
    int flag = 0;
    MPI_OK(MPI_Info_create(&info));
    EXPECT2(MPI_Info_set(MPI_INFO_NULL, "k", "v"), MPI_ERR_INFO, MPI_ERR_ARG);
    EXPECT2(MPI_Info_set(info, NULL, "v"), MPI_ERR_INFO_KEY, MPI_ERR_ARG);
    memset(key, 'k', sizeof key);
    key[MPI_MAX_INFO_KEY + 4] = '\0';
    EXPECT(MPI_Info_set(info, key, "v"), MPI_ERR_INFO_KEY);
    memset(value, 'v', sizeof value);
    value[MPI_MAX_INFO_VAL + 4] = '\0';
    EXPECT(MPI_Info_set(info, "k", value), MPI_ERR_INFO_VALUE);
    EXPECT(MPI_Info_get_nthkey(info, 5, key), MPI_ERR_ARG);
    EXPECT(MPI_Info_get(info, "k", -1, value, &flag), MPI_ERR_ARG);
    EXPECT(MPI_Info_delete(info, "absent"), MPI_ERR_INFO_NOKEY);
    EXPECT(MPI_Info_free(&null), MPI_ERR_INFO);
    MPI_OK(MPI_Info_free(&info));
}

static void packing(void) {
    int in[4] = {1, 2, 3, 4}, position = 0, n = 0;
    char out[64];
    EXPECT(MPI_Pack(in, -1, MPI_INT, out, sizeof out, &position, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Pack(in, 4, MPI_INT, out, 8, &position, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    EXPECT(MPI_Pack(in, 1, MPI_INT, out, sizeof out, NULL, MPI_COMM_WORLD), MPI_ERR_ARG);
    EXPECT(MPI_Pack(in, 1, MPI_DATATYPE_NULL, out, sizeof out, &position, MPI_COMM_WORLD),
           MPI_ERR_TYPE);
    EXPECT(MPI_Pack_size(-1, MPI_INT, MPI_COMM_WORLD, &n), MPI_ERR_COUNT);
    EXPECT(MPI_Pack_size(1, MPI_INT, MPI_COMM_NULL, &n), MPI_ERR_COMM);
    position = 0;
    EXPECT(MPI_Unpack(out, 4, &position, in, 4, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
}

static void probes(int size) {
    MPI_Status st;
    MPI_Message msg = MPI_MESSAGE_NULL;
    int flag = 0, v = 0;
    EXPECT(MPI_Probe(size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    EXPECT(MPI_Iprobe(0, -2, MPI_COMM_WORLD, &flag, &st), MPI_ERR_TAG);
    EXPECT(MPI_Iprobe(0, 0, MPI_COMM_WORLD, NULL, &st), MPI_ERR_ARG);
    EXPECT(MPI_Improbe(0, 0, MPI_COMM_NULL, &flag, &msg, &st), MPI_ERR_COMM);
    EXPECT2(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST, MPI_ERR_ARG);
}

static void ops(void) {
    MPI_Op sum = MPI_SUM, null = MPI_OP_NULL;
    int a = 1, b = 2, commute = 0;
    EXPECT(MPI_Op_free(&sum), MPI_ERR_OP);
    EXPECT(MPI_Op_free(&null), MPI_ERR_OP);
    EXPECT2(MPI_Op_create(NULL, 1, &null), MPI_ERR_ARG, MPI_ERR_OP);
    EXPECT(MPI_Reduce_local(&a, &b, 1, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
    EXPECT(MPI_Reduce_local(&a, &b, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
    EXPECT(MPI_Reduce_local(&a, &b, 1, MPI_DATATYPE_NULL, MPI_SUM), MPI_ERR_TYPE);
    EXPECT(MPI_Op_commutative(MPI_OP_NULL, &commute), MPI_ERR_OP);
}

static void errhandlers(void) {
    MPI_Errhandler null = MPI_ERRHANDLER_NULL;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, cls = 0, code = 0;
    EXPECT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
    EXPECT(MPI_Errhandler_free(&null), MPI_ERR_ARG);
    EXPECT(MPI_Error_class(-5, &cls), MPI_ERR_ARG);
    EXPECT(MPI_Error_string(999999, text, &len), MPI_ERR_ARG);
    EXPECT(MPI_Add_error_code(999999, &code), MPI_ERR_ARG);
    EXPECT(MPI_Get_processor_name(NULL, &len), MPI_ERR_ARG);
    EXPECT2(MPI_Buffer_attach(text, -1), MPI_ERR_ARG, MPI_ERR_BUFFER);
}

/* Handles used after they were freed (saved copies of them), and sizes whose
 * byte count overflows. */
static void stale_and_huge(int right) {
    MPI_Datatype t, t_copy;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    t_copy = t;
    MPI_OK(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL, "MPI_Type_free did not reset the handle");
    int n = 0, buf[4] = {0};
    EXPECT(MPI_Type_size(t_copy, &n), MPI_ERR_TYPE);
    EXPECT(MPI_Send(buf, 1, t_copy, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Comm c, c_copy;
    MPI_OK(MPI_Comm_dup(MPI_COMM_SELF, &c));
    c_copy = c;
    MPI_OK(MPI_Comm_free(&c));
    CHECK(c == MPI_COMM_NULL, "MPI_Comm_free did not reset the handle");
    EXPECT(MPI_Comm_size(c_copy, &n), MPI_ERR_COMM);
    MPI_Group g, g_copy;
    MPI_OK(MPI_Comm_group(MPI_COMM_SELF, &g));
    g_copy = g;
    MPI_OK(MPI_Group_free(&g));
    EXPECT(MPI_Group_size(g_copy, &n), MPI_ERR_GROUP);
    MPI_Info info, info_copy;
    MPI_OK(MPI_Info_create(&info));
    info_copy = info;
    MPI_OK(MPI_Info_free(&info));
    EXPECT2(MPI_Info_set(info_copy, "k", "v"), MPI_ERR_INFO, MPI_ERR_ARG);
    MPI_Op op, op_copy;
    MPI_OK(MPI_Op_create((MPI_User_function*)1, 1, &op)); /* never called */
    op_copy = op;
    MPI_OK(MPI_Op_free(&op));
    EXPECT(MPI_Reduce_local(buf, buf + 1, 1, MPI_INT, op_copy), MPI_ERR_OP);
    int key, key_copy, v = 0;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    key_copy = key;
    MPI_OK(MPI_Comm_free_keyval(&key));
    EXPECT(MPI_Comm_set_attr(MPI_COMM_SELF, key_copy, &v), MPI_ERR_KEYVAL);
    /* Tags beyond MPI_TAG_UB. */
    int* ub = NULL;
    int flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag && ub && *ub >= 32767, "MPI_TAG_UB missing or too small");
    if (*ub < 2147483647)
        EXPECT(MPI_Send(buf, 1, MPI_INT, right, *ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
    /* count x extent beyond what the address space can hold. */
    MPI_Datatype huge;
    MPI_OK(MPI_Type_contiguous(1 << 30, MPI_DOUBLE, &huge));
    MPI_OK(MPI_Type_commit(&huge));
    MPI_Datatype huger = MPI_DATATYPE_NULL;
    EXPECT2(MPI_Type_contiguous(1 << 30, huge, &huger), MPI_ERR_COUNT, MPI_ERR_ARG);
    if (huger != MPI_DATATYPE_NULL) MPI_OK(MPI_Type_free(&huger));
    /* Strides and displacements whose byte offsets leave MPI_Aint. */
    const int far[2] = {0, 1 << 30};
    EXPECT(MPI_Type_vector(2, 1, 1 << 30, huge, &huger), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_indexed_block(2, 1, far, huge, &huger), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_hvector(3, 1, (MPI_Aint)1 << 62, huge, &huger), MPI_ERR_ARG);
    EXPECT2(MPI_Pack_size(1 << 30, huge, MPI_COMM_WORLD, &n), MPI_ERR_COUNT, MPI_ERR_ARG);
    MPI_Aint asize = 0;
    EXPECT2(MPI_Pack_external_size("external32", 1 << 30, huge, &asize), MPI_ERR_COUNT,
            MPI_ERR_ARG);
    EXPECT(MPI_Send(buf, 1 << 30, huge, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Recv(buf, 1 << 30, huge, right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPI_ERR_COUNT);
    EXPECT(MPI_Bcast(buf, 1 << 30, huge, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MPI_OK(MPI_Type_free(&huge));
    /* The contents of a predefined type are not available. */
    int ints[1];
    MPI_Aint addrs[1];
    MPI_Datatype types[1];
    EXPECT2(MPI_Type_get_contents(MPI_INT, 1, 1, 1, ints, addrs, types), MPI_ERR_TYPE, MPI_ERR_ARG);
}

int main(int argc, char** argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    datatypes();
    groups(size);
    comms(size);
    requests((rank + 1) % size);
    attributes();
    topologies(size);
    infos();
    packing();
    probes(size);
    ops();
    errhandlers();
    stale_and_huge((rank + 1) % size);
    CHECK(g_failures == 0, "%d of %d checks failed (listed above)", g_failures, g_checks);
    /* Still usable, and everyone checked the same. */
    int most = 0, least = 0;
    MPI_OK(MPI_Allreduce(&g_checks, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    MPI_OK(MPI_Allreduce(&g_checks, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    CHECK(most == least, "ranks made %d to %d checks", least, most);
    if (rank == 0) printf("api_errors: %d checks passed on %d ranks\n", g_checks, size);
    MPI_OK(MPI_Finalize());
    return 0;
}
