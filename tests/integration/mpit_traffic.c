/* Performance variables around a known amount of traffic (MPI 3.1 section
 * 14.3.7): every rank sends ROUNDS x (8 B, 1 KiB, 128 KiB) to its right
 * neighbour and receives as much from its left one, and its counters must
 * move by exactly that.
 *
 * - Per path, on the sender: to a rank of the same node process 8 B and 1 KiB
 *   go in the inbox slot or a cell, 128 KiB by rendezvous; to another node
 *   process 8 B and 1 KiB go eager, 128 KiB by rendezvous (the default
 *   thresholds). Messages and bytes exactly; MPI_Isend's call count too.
 * - Start/stop variables count only while started: a stopped handle keeps its
 *   value through more traffic; a restarted one goes on from it.
 * - A session's reset, write and readreset change only its own handle; a
 *   second session sees the whole count. readreset of a node total (not
 *   atomic) is MPI_T_ERR_PVAR_NO_ATOMIC.
 * - Node totals: the intra-node messages of all the node process's ranks.
 * - Continuous network counters (several node processes): the work requests
 *   processed for a rank cover the messages it received; every rendezvous
 *   send got its answer.
 * - Levels: unexpected messages and posted receives, of the rank and of one
 *   communicator.
 */
#include "mpit_common.h"

#define ROUNDS 6
#define NSIZES 3
static const int kSizes[NSIZES] = {8, 1024, 131072};
#define BIG 131072

static int g_rank, g_size, g_left, g_right, g_right_local, g_left_local;
static unsigned char *g_out, *g_in;

/* One round: a message of each size to the right, from the left. */
static void round_trip(int tag) {
    MPI_Request req[2 * NSIZES];
    for (int k = 0; k < NSIZES; ++k)
        MPI_OK(MPI_Irecv(g_in + (size_t)k * BIG, kSizes[k], MPI_BYTE, g_left, tag + k,
                         MPI_COMM_WORLD, &req[k]));
    for (int k = 0; k < NSIZES; ++k)
        MPI_OK(MPI_Isend(g_out + (size_t)k * BIG, kSizes[k], MPI_BYTE, g_right, tag + k,
                         MPI_COMM_WORLD, &req[NSIZES + k]));
    MPI_OK(MPI_Waitall(2 * NSIZES, req, MPI_STATUSES_IGNORE));
}

typedef struct {
    MPI_T_pvar_handle slot, cell, rndv, eager, frag, net_rndv;
    MPI_T_pvar_handle slot_b, cell_b, rndv_b, eager_b, frag_b, net_rndv_b;
    MPI_T_pvar_handle isend_calls, isend_time, waits, wait_time, polls;
} Handles;

static void alloc_handles(MPI_T_pvar_session s, Handles* h) {
    const int C = MPI_T_PVAR_CLASS_COUNTER;
    h->slot = t_handle(s, "mpc_intra_slot_msgs", C);
    h->cell = t_handle(s, "mpc_intra_cell_msgs", C);
    h->rndv = t_handle(s, "mpc_intra_rndv_msgs", C);
    h->eager = t_handle(s, "mpc_net_eager_msgs", C);
    h->frag = t_handle(s, "mpc_net_frag_msgs", C);
    h->net_rndv = t_handle(s, "mpc_net_rndv_msgs", C);
    h->slot_b = t_handle(s, "mpc_intra_slot_bytes", C);
    h->cell_b = t_handle(s, "mpc_intra_cell_bytes", C);
    h->rndv_b = t_handle(s, "mpc_intra_rndv_bytes", C);
    h->eager_b = t_handle(s, "mpc_net_eager_bytes", C);
    h->frag_b = t_handle(s, "mpc_net_frag_bytes", C);
    h->net_rndv_b = t_handle(s, "mpc_net_rndv_bytes", C);
    h->isend_calls = t_handle(s, "mpc_calls_MPI_Isend", C);
    h->isend_time = t_handle(s, "mpc_time_MPI_Isend", MPI_T_PVAR_CLASS_TIMER);
    h->waits = t_handle(s, "mpc_waits", C);
    h->wait_time = t_handle(s, "mpc_wait_time", MPI_T_PVAR_CLASS_TIMER);
    h->polls = t_handle(s, "mpc_polls", C);
}

/* The counts of `rounds` rounds, checked path by path. */
static void check_counts(MPI_T_pvar_session s, const Handles* h, unsigned long long rounds,
                         const char* when) {
#define R(x) t_read_ull(s, h->x)
    const unsigned long long small = rounds * (8 + 1024), big = rounds * BIG;
    if (g_right_local) {
        CHECK(R(slot) + R(cell) == 2 * rounds && R(cell) >= rounds && R(rndv) == rounds,
              "%s: intra-node slot %llu cell %llu rendezvous %llu, expected %llu+%llu / %llu", when,
              R(slot), R(cell), R(rndv), rounds, rounds, rounds);
        CHECK(R(slot_b) + R(cell_b) == small && R(rndv_b) == big,
              "%s: intra-node bytes %llu + %llu / %llu, expected %llu / %llu", when, R(slot_b),
              R(cell_b), R(rndv_b), small, big);
        CHECK(R(eager) + R(frag) + R(net_rndv) + R(eager_b) + R(frag_b) + R(net_rndv_b) == 0,
              "%s: network counters moved for intra-node traffic", when);
    } else {
        CHECK(R(eager) == 2 * rounds && R(frag) == 0 && R(net_rndv) == rounds,
              "%s: network eager %llu fragments %llu rendezvous %llu, expected %llu 0 %llu", when,
              R(eager), R(frag), R(net_rndv), 2 * rounds, rounds);
        CHECK(R(eager_b) == small && R(frag_b) == 0 && R(net_rndv_b) == big,
              "%s: network bytes %llu %llu %llu", when, R(eager_b), R(frag_b), R(net_rndv_b));
        CHECK(R(slot) + R(cell) + R(rndv) + R(slot_b) + R(cell_b) + R(rndv_b) == 0,
              "%s: intra-node counters moved for network traffic", when);
    }
    CHECK(R(isend_calls) == NSIZES * rounds, "%s: %llu MPI_Isend calls, expected %llu", when,
          R(isend_calls), NSIZES * rounds);
    const double isend_time = t_read_double(s, h->isend_time);
    CHECK(rounds == 0 ? isend_time == 0 : isend_time > 0 && isend_time < 60,
          "%s: MPI_Isend time %g", when, isend_time);
    const double wait_time = t_read_double(s, h->wait_time);
    CHECK((R(waits) == 0) == (wait_time == 0) && wait_time >= 0 && wait_time < 60,
          "%s: %llu waits took %g s", when, R(waits), wait_time);
#undef R
}

/* Node totals: every rank of the node process runs ROUNDS rounds between two barriers. */
static void node_totals(MPI_Comm node) {
    MPI_T_pvar_session s;
    T_OK(MPI_T_pvar_session_create(&s));
    const int C = MPI_T_PVAR_CLASS_COUNTER;
    MPI_T_pvar_handle msgs[3] = {t_handle(s, "mpc_node_intra_slot_msgs", C),
                                 t_handle(s, "mpc_node_intra_cell_msgs", C),
                                 t_handle(s, "mpc_node_intra_rndv_msgs", C)};
    /* Whatever the ranks sent before (creating `node`) is sent before the
     * first barrier ends: a node total started then sees only the rounds. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    T_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int r = 0; r < ROUNDS; ++r) round_trip(100);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    T_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    unsigned long long total = 0;
    for (int k = 0; k < 3; ++k) total += t_read_ull(s, msgs[k]);
    /* Node totals are read and reset in two steps. */
    unsigned long long v;
    T_ERR(MPI_T_pvar_readreset(s, msgs[0], &v), MPI_T_ERR_PVAR_NO_ATOMIC);
    int local_senders = 0, one = g_right_local;
    MPI_OK(MPI_Allreduce(&one, &local_senders, 1, MPI_INT, MPI_SUM, node));
    CHECK(total == (unsigned long long)local_senders * ROUNDS * NSIZES,
          "node process: %llu intra-node messages, expected %d senders x %d", total, local_senders,
          ROUNDS * NSIZES);
    T_OK(MPI_T_pvar_session_free(&s));
}

/* Continuous network counters, when the left or right neighbour is remote. */
static void network_continuous(void) {
    MPI_T_pvar_session s;
    T_OK(MPI_T_pvar_session_create(&s));
    const int C = MPI_T_PVAR_CLASS_COUNTER;
    MPI_T_pvar_handle self = t_handle(s, "mpc_net_processed_self", C);
    MPI_T_pvar_handle numa = t_handle(s, "mpc_net_stolen_numa", C);
    MPI_T_pvar_handle other = t_handle(s, "mpc_net_stolen_other", C);
    MPI_T_pvar_handle sends = t_handle(s, "mpc_net_rndv_sends", C);
    MPI_T_pvar_handle ack = t_handle(s, "mpc_net_rndv_req_to_ack_time", MPI_T_PVAR_CLASS_TIMER);
    /* Continuous: they cannot be started or stopped, and count from allocation. */
    T_ERR(MPI_T_pvar_start(s, self), MPI_T_ERR_PVAR_NO_STARTSTOP);
    T_ERR(MPI_T_pvar_stop(s, self), MPI_T_ERR_PVAR_NO_STARTSTOP);
    T_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES)); /* continuous ones are skipped */
    for (int r = 0; r < ROUNDS; ++r) round_trip(200);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    const unsigned long long processed =
        t_read_ull(s, self) + t_read_ull(s, numa) + t_read_ull(s, other);
    const unsigned long long received = g_left_local ? 0 : (unsigned long long)ROUNDS * NSIZES;
    CHECK(processed >= received, "%llu network work requests processed for %llu messages",
          processed, received);
    const unsigned long long rndv = g_right_local ? 0 : ROUNDS;
    CHECK(t_read_ull(s, sends) == rndv, "%llu rendezvous sends answered, expected %llu",
          t_read_ull(s, sends), rndv);
    const double t = t_read_double(s, ack);
    CHECK(rndv ? t > 0 && t < 60 : t == 0, "REQ to ACK time %g", t);
    T_OK(MPI_T_pvar_session_free(&s));
}

/* Levels: unexpected messages and posted receives, of the rank and of a communicator. */
static void levels(void) {
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_T_pvar_session s;
    T_OK(MPI_T_pvar_session_create(&s));
    const int L = MPI_T_PVAR_CLASS_LEVEL;
    MPI_T_pvar_handle unexp = t_handle(s, "mpc_unexpected", L);
    MPI_T_pvar_handle posted = t_handle(s, "mpc_posted", L);
    MPI_T_pvar_handle comm_unexp[2], comm_posted[2];
    MPI_Comm comms[2] = {dup, MPI_COMM_WORLD};
    for (int k = 0; k < 2; ++k) {
        int count = 0;
        T_OK(MPI_T_pvar_handle_alloc(s, t_pvar("mpc_comm_unexpected", L), &comms[k], &comm_unexp[k],
                                     &count));
        T_OK(MPI_T_pvar_handle_alloc(s, t_pvar("mpc_comm_posted", L), &comms[k], &comm_posted[k],
                                     &count));
    }
    CHECK(t_read_ull(s, posted) == 0 && t_read_ull(s, comm_unexp[0]) == 0,
          "queues not empty: %llu %llu", t_read_ull(s, posted), t_read_ull(s, comm_unexp[0]));
    int payload = 7, flag = 1;
    for (int i = 0; i < 5; ++i) MPI_OK(MPI_Send(&payload, 1, MPI_INT, g_rank, 77, dup));
    MPI_OK(MPI_Iprobe(g_rank, 999, dup, &flag, MPI_STATUS_IGNORE)); /* takes the inbox in */
    CHECK(!flag, "probed a message nobody sent");
    MPI_Request req[3];
    int sink[3];
    for (int i = 0; i < 3; ++i) MPI_OK(MPI_Irecv(&sink[i], 1, MPI_INT, g_rank, 55, dup, &req[i]));
    /* Exact on the communicator only this test uses; MPI_COMM_WORLD may hold
     * collective traffic of faster ranks, and the rank's total with it. */
    CHECK(t_read_ull(s, comm_unexp[0]) == 5 && t_read_ull(s, unexp) >= 5,
          "unexpected: dup %llu, rank %llu; expected 5, at least 5", t_read_ull(s, comm_unexp[0]),
          t_read_ull(s, unexp));
    CHECK(t_read_ull(s, comm_posted[0]) == 3 && t_read_ull(s, comm_posted[1]) == 0 &&
              t_read_ull(s, posted) == 3,
          "posted: dup %llu, world %llu, rank %llu; expected 3 0 3", t_read_ull(s, comm_posted[0]),
          t_read_ull(s, comm_posted[1]), t_read_ull(s, posted));
    /* Levels are read as they are: no writing, no reset. */
    unsigned long long v = 1;
    T_ERR(MPI_T_pvar_write(s, unexp, &v), MPI_T_ERR_PVAR_NO_WRITE);
    T_ERR(MPI_T_pvar_reset(s, unexp), MPI_T_ERR_PVAR_NO_WRITE);
    T_ERR(MPI_T_pvar_readreset(s, unexp, &v), MPI_T_ERR_PVAR_NO_WRITE);
    T_OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES)); /* read-only ones are skipped */
    for (int i = 0; i < 5; ++i)
        MPI_OK(MPI_Recv(&payload, 1, MPI_INT, g_rank, 77, dup, MPI_STATUS_IGNORE));
    for (int i = 0; i < 3; ++i) {
        MPI_OK(MPI_Cancel(&req[i]));
        MPI_OK(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
    }
    CHECK(t_read_ull(s, posted) == 0 && t_read_ull(s, comm_unexp[0]) == 0 &&
              t_read_ull(s, comm_posted[0]) == 0,
          "queues not empty after receiving and cancelling");
    T_OK(MPI_T_pvar_session_free(&s));
    MPI_OK(MPI_Comm_free(&dup));
}

int main(int argc, char** argv) {
    int provided;
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
    g_right = (g_rank + 1) % g_size;
    g_left = (g_rank + g_size - 1) % g_size;
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    {
        MPI_Group world_group, node_group;
        MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
        MPI_OK(MPI_Comm_group(node, &node_group));
        int in[2] = {g_right, g_left}, out[2];
        MPI_OK(MPI_Group_translate_ranks(world_group, 2, in, node_group, out));
        g_right_local = out[0] != MPI_UNDEFINED;
        g_left_local = out[1] != MPI_UNDEFINED;
        MPI_OK(MPI_Group_free(&world_group));
        MPI_OK(MPI_Group_free(&node_group));
    }
    g_out = (unsigned char*)xmalloc(NSIZES * BIG);
    g_in = (unsigned char*)xmalloc(NSIZES * BIG);
    memset(g_out, 1, NSIZES * BIG);

    node_totals(node);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Per rank, two sessions on the same variables. */
    MPI_T_pvar_session s, t;
    Handles h, g;
    T_OK(MPI_T_pvar_session_create(&s));
    T_OK(MPI_T_pvar_session_create(&t));
    alloc_handles(s, &h);
    alloc_handles(t, &g);
    check_counts(s, &h, 0, "allocated, not started");
    T_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    T_OK(MPI_T_pvar_start(s, h.cell)); /* started already: nothing changes */
    T_OK(MPI_T_pvar_start(t, MPI_T_PVAR_ALL_HANDLES));
    for (int r = 0; r < ROUNDS; ++r) round_trip(10);
    T_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    check_counts(s, &h, ROUNDS, "after the rounds");
    /* Stopped: more traffic does not count (in s; t still runs). */
    round_trip(20);
    check_counts(s, &h, ROUNDS, "stopped");
    check_counts(t, &g, ROUNDS + 1, "second session");
    /* Restarted: goes on from the value it had. */
    T_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    round_trip(30);
    T_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    check_counts(s, &h, ROUNDS + 1, "restarted");
    /* Reset (all handles) in s: back to 0, t untouched. */
    T_OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    check_counts(s, &h, 0, "reset");
    check_counts(t, &g, ROUNDS + 2, "second session after a reset in the first");
    /* Write and readreset on a running handle. */
    T_OK(MPI_T_pvar_start(s, h.isend_calls));
    unsigned long long v = 1000;
    T_OK(MPI_T_pvar_write(s, h.isend_calls, &v));
    round_trip(40);
    CHECK(t_read_ull(s, h.isend_calls) == 1000 + NSIZES, "written 1000, then %d calls: %llu",
          NSIZES, t_read_ull(s, h.isend_calls));
    T_OK(MPI_T_pvar_readreset(s, h.isend_calls, &v));
    CHECK(v == 1000 + NSIZES && t_read_ull(s, h.isend_calls) == 0, "readreset gave %llu, then %llu",
          v, t_read_ull(s, h.isend_calls));
    round_trip(50);
    CHECK(t_read_ull(s, h.isend_calls) == NSIZES, "after readreset: %llu",
          t_read_ull(s, h.isend_calls));
    CHECK(t_read_ull(t, g.isend_calls) == NSIZES * (ROUNDS + 4ull), "second session: %llu calls",
          t_read_ull(t, g.isend_calls));
    T_OK(MPI_T_pvar_session_free(&s));
    T_OK(MPI_T_pvar_session_free(&t));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    network_continuous();
    levels();

    MPI_OK(MPI_Comm_free(&node));
    free(g_out);
    free(g_in);
    MPI_OK(MPI_Finalize());
    T_OK(MPI_T_finalize());
    return 0;
}
