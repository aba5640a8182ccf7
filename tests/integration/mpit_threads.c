/* Several threads of each rank use the tools interface at once (MPI 3.1
 * section 14.3: every MPI_T routine is thread safe), while they communicate.
 *
 * Each rank's main thread initializes MPI_T and starts a session counting the
 * rank's intra-node messages and MPI_Send calls. Then THREADS workers per
 * rank, at the same time: initialize MPI_T (the count goes up and down
 * concurrently), make a session and handles of their own, start them, send
 * ITERS small messages to their own rank (and receive them), stop, check
 * that their handles saw at least their own messages and at most the rank's
 * (the counters are the rank's, shared by its threads), reset and free. A
 * sampler thread meanwhile reads node totals, enumerates variables and writes
 * a control variable, until the workers are done. Afterwards the main
 * thread's session has counted exactly THREADS x ITERS messages and calls.
 */
#include <pthread.h>

#include "mpit_common.h"

#define THREADS 4
#define ITERS 200

static int g_rank;
static volatile int g_workers_done = 0;
static pthread_mutex_t g_done_lock = PTHREAD_MUTEX_INITIALIZER;

static void* worker(void* arg) {
    const int tag = (int)(long)arg;
    int provided;
    T_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    MPI_T_pvar_session s;
    T_OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle slot = t_handle(s, "mpc_intra_slot_msgs", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle cell = t_handle(s, "mpc_intra_cell_msgs", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle sends = t_handle(s, "mpc_calls_MPI_Send", MPI_T_PVAR_CLASS_COUNTER);
    T_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    for (int i = 0; i < ITERS; ++i) {
        uint64_t out = (uint64_t)tag << 32 | (uint64_t)i, in = 0;
        MPI_OK(MPI_Send(&out, 1, MPI_UINT64_T, g_rank, tag, MPI_COMM_WORLD));
        MPI_OK(MPI_Recv(&in, 1, MPI_UINT64_T, g_rank, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(in == out, "thread %d got %llx, sent %llx", tag, (unsigned long long)in,
              (unsigned long long)out);
        if (i % 50 == 0) (void)t_read_ull(s, cell); /* reads while counting */
    }
    T_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    const unsigned long long msgs = t_read_ull(s, slot) + t_read_ull(s, cell);
    const unsigned long long calls = t_read_ull(s, sends);
    CHECK(msgs >= ITERS && msgs <= (unsigned long long)THREADS * ITERS,
          "thread %d: %llu messages counted, sent %d of the rank's %d", tag, msgs, ITERS,
          THREADS * ITERS);
    CHECK(calls >= ITERS && calls <= (unsigned long long)THREADS * ITERS,
          "thread %d: %llu MPI_Send calls counted", tag, calls);
    T_OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    CHECK(t_read_ull(s, cell) == 0, "reset");
    T_OK(MPI_T_pvar_handle_free(s, &cell));
    T_OK(MPI_T_pvar_session_free(&s));
    T_OK(MPI_T_finalize());
    pthread_mutex_lock(&g_done_lock);
    ++g_workers_done;
    pthread_mutex_unlock(&g_done_lock);
    return NULL;
}

static int workers_done(void) {
    pthread_mutex_lock(&g_done_lock);
    const int n = g_workers_done;
    pthread_mutex_unlock(&g_done_lock);
    return n;
}

static void* sampler(void* arg) {
    (void)arg;
    int provided;
    T_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    MPI_T_pvar_session s;
    T_OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle node = t_handle(s, "mpc_node_intra_cell_msgs", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle unexp = t_handle(s, "mpc_node_unexpected", MPI_T_PVAR_CLASS_LEVEL);
    T_OK(MPI_T_pvar_start(s, node));
    MPI_T_cvar_handle spin;
    int count;
    double value = 0;
    T_OK(MPI_T_cvar_handle_alloc(t_cvar("MPC_WAIT_SPIN"), NULL, &spin, &count));
    T_OK(MPI_T_cvar_read(spin, &value));
    unsigned long long last = 0;
    int rounds = 0;
    while (workers_done() < THREADS || rounds < 10) {
        const unsigned long long now = t_read_ull(s, node);
        CHECK(now >= last, "node total went back from %llu to %llu", last, now);
        last = now;
        (void)t_read_ull(s, unexp);
        int np = 0;
        T_OK(MPI_T_pvar_get_num(&np));
        char name[128];
        int len = sizeof(name);
        T_OK(MPI_T_pvar_get_info(rounds % np, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                 NULL, NULL, NULL));
        T_OK(MPI_T_cvar_write(spin, &value)); /* the same value: only the race is tested */
        ++rounds;
    }
    T_OK(MPI_T_cvar_handle_free(&spin));
    T_OK(MPI_T_pvar_session_free(&s));
    T_OK(MPI_T_finalize());
    return NULL;
}

int main(int argc, char** argv) {
    int provided;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
    T_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    MPI_T_pvar_session s;
    T_OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle slot = t_handle(s, "mpc_intra_slot_msgs", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle cell = t_handle(s, "mpc_intra_cell_msgs", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle sends = t_handle(s, "mpc_calls_MPI_Send", MPI_T_PVAR_CLASS_COUNTER);
    T_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));

    pthread_t threads[THREADS + 1];
    for (long t = 0; t < THREADS; ++t)
        CHECK(pthread_create(&threads[t], NULL, worker, (void*)(t + 1)) == 0, "pthread_create");
    CHECK(pthread_create(&threads[THREADS], NULL, sampler, NULL) == 0, "pthread_create");
    /* Every rank's threads run before any rank blocks its core in pthread_join. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int t = 0; t <= THREADS; ++t) pthread_join(threads[t], NULL);

    T_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    const unsigned long long msgs = t_read_ull(s, slot) + t_read_ull(s, cell);
    CHECK(msgs == (unsigned long long)THREADS * ITERS, "the rank's threads sent %d, counted %llu",
          THREADS * ITERS, msgs);
    CHECK(t_read_ull(s, sends) == (unsigned long long)THREADS * ITERS, "%llu MPI_Send calls",
          t_read_ull(s, sends));
    T_OK(MPI_T_pvar_session_free(&s));
    T_OK(MPI_T_finalize());
    int n;
    T_ERR(MPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    MPI_OK(MPI_Finalize());
    return 0;
}
