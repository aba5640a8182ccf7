/* MPI_T events and event sources (MPI 4.1 section 15.3.8): list the sources
 * and event types (their elements, indices, categories), register callbacks
 * on the unexpected-message event and check that messages sent before their
 * receive raise it with the right source, tag and size, read through
 * MPI_T_event_read and MPI_T_event_copy; a callback of safety level NONE gets
 * the same events later, from the rank's own MPI_T calls; a full buffer calls
 * the dropped handler with the count; freeing a registration calls its free
 * callback once and stops its callbacks; bad arguments get their MPI_T error
 * classes. Intra-node synchronous sends raise the rendezvous event. */
#include "mpit_common.h"

enum { kTagBase = 7100, kPerPeer = 6, kMaxRecords = 4096, kFlood = 1100 };

struct Record {
    int source, tag;
    unsigned long long bytes;
    long long timestamp;
    int safety;
};

/* What one registration's callback saw; the callback may run on any thread of
 * the node process (THREAD_SAFE level), so counts are atomic. */
struct Seen {
    struct Record records[kMaxRecords];
    int count;
    int bad_reads; /* reads that did not return what the standard says */
    int freed;
    long long dropped;
    int dropped_calls;
};

static struct Seen g_sync, g_deferred, g_flood, g_rndv;
static MPI_Aint g_displs[3];

static void on_event(MPI_T_event_instance inst, MPI_T_event_registration reg,
                     MPI_T_cb_safety safety, void* user) {
    (void)reg;
    struct Seen* s = (struct Seen*)user;
    struct Record r;
    int bad = 0;
    if (MPI_T_event_read(inst, 0, &r.source) != MPI_SUCCESS) ++bad;
    if (MPI_T_event_read(inst, 1, &r.tag) != MPI_SUCCESS) ++bad;
    if (MPI_T_event_read(inst, 2, &r.bytes) != MPI_SUCCESS) ++bad;
    /* The whole event, at the displacements MPI_T_event_get_info gave. */
    unsigned char all[64];
    if (MPI_T_event_copy(inst, all) != MPI_SUCCESS) ++bad;
    int src2, tag2;
    unsigned long long bytes2;
    memcpy(&src2, all + g_displs[0], sizeof src2);
    memcpy(&tag2, all + g_displs[1], sizeof tag2);
    memcpy(&bytes2, all + g_displs[2], sizeof bytes2);
    if (src2 != r.source || tag2 != r.tag || bytes2 != r.bytes) ++bad;
    MPI_Count ts = -1;
    int source = -1;
    if (MPI_T_event_get_timestamp(inst, &ts) != MPI_SUCCESS || ts < 0) ++bad;
    if (MPI_T_event_get_source(inst, &source) != MPI_SUCCESS || source != 0) ++bad;
    if (MPI_T_event_read(inst, 3, all) != MPI_T_ERR_INVALID_INDEX) ++bad;
    if (MPI_T_event_read(inst, -1, all) != MPI_T_ERR_INVALID_INDEX) ++bad;
    r.timestamp = ts;
    r.safety = safety;
    int i = __atomic_fetch_add(&s->count, 1, __ATOMIC_RELAXED);
    if (i < kMaxRecords) s->records[i] = r;
    if (bad) __atomic_fetch_add(&s->bad_reads, bad, __ATOMIC_RELAXED);
}

static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety safety, void* user) {
    (void)reg;
    (void)safety;
    __atomic_fetch_add(&((struct Seen*)user)->freed, 1, __ATOMIC_RELAXED);
}

static void on_dropped(MPI_Count count, MPI_T_event_registration reg, int source_index,
                       MPI_T_cb_safety safety, void* user) {
    (void)reg;
    (void)safety;
    struct Seen* s = (struct Seen*)user;
    if (source_index != 0) ++s->bad_reads;
    s->dropped += count;
    ++s->dropped_calls;
}

/* Records of `s` with this source and tag. */
static int matching(const struct Seen* s, int source, int tag, unsigned long long bytes) {
    int n = 0, count = __atomic_load_n(&s->count, __ATOMIC_RELAXED);
    for (int i = 0; i < count && i < kMaxRecords; ++i)
        if (s->records[i].source == source && s->records[i].tag == tag &&
            s->records[i].bytes == bytes)
            ++n;
    return n;
}

static void list_sources(void) {
    int n = -1;
    T_OK(MPI_T_source_get_num(&n));
    CHECK(n >= 1, "%d sources", n);
    for (int i = 0; i < n; ++i) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc;
        MPI_T_source_order order = MPI_T_SOURCE_UNORDERED;
        MPI_Count tps = 0, max = 0, t1 = 0, t2 = 0;
        MPI_Info info = MPI_INFO_NULL;
        T_OK(MPI_T_source_get_info(i, name, &name_len, desc, &desc_len, &order, &tps, &max, &info));
        CHECK(name_len > 1 && (int)strlen(name) == name_len - 1, "source %d name '%s'", i, name);
        CHECK(tps > 0 && max > 0, "source %d: %lld ticks/s, max %lld", i, (long long)tps,
              (long long)max);
        CHECK(info != MPI_INFO_NULL, "no info object");
        MPI_OK(MPI_Info_free(&info));
        T_OK(MPI_T_source_get_timestamp(i, &t1));
        T_OK(MPI_T_source_get_timestamp(i, &t2));
        if (order == MPI_T_SOURCE_ORDERED) CHECK(t2 >= t1, "clock went back: %lld %lld", t1, t2);
    }
    MPI_Count t;
    T_ERR(MPI_T_source_get_timestamp(n, &t), MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_source_get_timestamp(-1, &t), MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_source_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
}

/* Every event type, its elements, its index by name, and its category. */
static void list_events(int* unexpected, int* rendezvous) {
    int n = -1, ncat = -1;
    T_OK(MPI_T_event_get_num(&n));
    CHECK(n >= 3, "%d event types", n);
    T_OK(MPI_T_category_get_num(&ncat));
    int listed = 0;
    int* seen = calloc((size_t)n, sizeof(int));
    for (int c = 0; c < ncat; ++c) {
        int k = -1;
        T_OK(MPI_T_category_get_num_events(c, &k));
        int idx[64];
        CHECK(k >= 0 && k <= 64, "category %d: %d events", c, k);
        T_OK(MPI_T_category_get_events(c, k, idx));
        for (int j = 0; j < k; ++j) {
            CHECK(idx[j] >= 0 && idx[j] < n, "category %d lists event %d", c, idx[j]);
            ++seen[idx[j]];
        }
        listed += k;
    }
    CHECK(listed == n, "categories list %d events of %d", listed, n);
    *unexpected = *rendezvous = -1;
    for (int i = 0; i < n; ++i) {
        CHECK(seen[i] == 1, "event %d in %d categories", i, seen[i]);
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity = -1, bind = -1;
        int num = 0;
        MPI_T_enum e;
        /* First the count alone (no arrays), then the elements. */
        T_OK(MPI_T_event_get_info(i, NULL, NULL, NULL, NULL, NULL, &num, NULL, NULL, NULL, NULL,
                                  NULL));
        CHECK(num >= 1 && num <= 8, "event %d: %d elements", i, num);
        MPI_Datatype types[8];
        MPI_Aint displs[8];
        MPI_Info info = MPI_INFO_NULL;
        int num2 = num;
        T_OK(MPI_T_event_get_info(i, name, &name_len, &verbosity, types, displs, &num2, &e, &info,
                                  desc, &desc_len, &bind));
        CHECK(num2 == num, "event %d: %d then %d elements", i, num, num2);
        CHECK(bind == MPI_T_BIND_NO_OBJECT, "event %s bound to %d", name, bind);
        CHECK(verbosity >= MPI_T_VERBOSITY_USER_BASIC && verbosity <= MPI_T_VERBOSITY_MPIDEV_ALL,
              "verbosity %d", verbosity);
        CHECK(desc_len > 1, "event %s without a description", name);
        for (int j = 0; j < num; ++j) {
            int size = 0;
            MPI_OK(MPI_Type_size(types[j], &size));
            CHECK(displs[j] % size == 0, "%s element %d at %ld, size %d", name, j, (long)displs[j],
                  size);
            if (j) CHECK(displs[j] >= displs[j - 1] + 1, "%s: displacements not increasing", name);
        }
        MPI_OK(MPI_Info_free(&info));
        int back = -1;
        T_OK(MPI_T_event_get_index(name, &back));
        CHECK(back == i, "event %s: index %d, by name %d", name, i, back);
        if (!strcmp(name, "mpc_unexpected_message")) {
            CHECK(num == 3 && types[0] == MPI_INT && types[1] == MPI_INT &&
                      types[2] == MPI_UNSIGNED_LONG_LONG,
                  "unexpected-message elements");
            memcpy(g_displs, displs, sizeof g_displs);
            *unexpected = i;
        }
        if (!strcmp(name, "mpc_intra_rendezvous")) *rendezvous = i;
    }
    free(seen);
    CHECK(*unexpected >= 0 && *rendezvous >= 0, "events of the engine not listed");
    int i;
    T_ERR(MPI_T_event_get_index("no_such_event", &i), MPI_T_ERR_INVALID_NAME);
    T_ERR(MPI_T_event_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_category_get_num_events(ncat, &i), MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_category_get_events(-1, 0, NULL), MPI_T_ERR_INVALID_INDEX);
}

/* Peers send kPerPeer messages each to rank 0, which probes them all before
 * receiving: each is queued as unexpected first. */
static void send_to_root(int rank, int size, int tag_base) {
    if (rank == 0) {
        for (int p = 1; p < size; ++p)
            for (int k = 0; k < kPerPeer; ++k) {
                int flag = 0;
                while (!flag)
                    MPI_OK(MPI_Iprobe(p, tag_base + k, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            }
        for (int p = 1; p < size; ++p)
            for (int k = 0; k < kPerPeer; ++k) {
                char buf[64];
                MPI_OK(MPI_Recv(buf, 8 * (k + 1), MPI_CHAR, p, tag_base + k, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
            }
    } else {
        char buf[64] = {0};
        for (int k = 0; k < kPerPeer; ++k)
            MPI_OK(MPI_Send(buf, 8 * (k + 1), MPI_CHAR, 0, tag_base + k, MPI_COMM_WORLD));
    }
}

int main(int argc, char** argv) {
    int provided, rank, size;
    /* Before MPI_T_init_thread: not initialized. */
    int n;
    T_ERR(MPI_T_event_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_source_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    MPI_OK(MPI_Init(&argc, &argv));
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    list_sources();
    int unexpected, rendezvous;
    list_events(&unexpected, &rendezvous);

    /* Bad arguments of the registration calls. */
    MPI_T_event_registration bad;
    T_ERR(MPI_T_event_handle_alloc(-1, NULL, MPI_INFO_NULL, &bad), MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_event_handle_alloc(unexpected, NULL, MPI_INFO_NULL, NULL), MPI_T_ERR_INVALID);
    T_ERR(MPI_T_event_read(NULL, 0, &n), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_event_copy(NULL, &n), MPI_T_ERR_INVALID_HANDLE);

    /* Registrations: one with a thread-safe callback (called where the event
     * happens), one of level NONE (buffered, delivered at MPI_T calls), and
     * one of level NONE with a dropped handler for the flood below. */
    MPI_Info hints;
    MPI_OK(MPI_Info_create(&hints));
    MPI_OK(MPI_Info_set(hints, "mpc_test_hint", "yes"));
    MPI_T_event_registration sync_reg, deferred_reg, flood_reg, rndv_reg;
    T_OK(MPI_T_event_handle_alloc(unexpected, NULL, hints, &sync_reg));
    T_OK(MPI_T_event_handle_alloc(unexpected, NULL, MPI_INFO_NULL, &deferred_reg));
    T_OK(MPI_T_event_handle_alloc(unexpected, NULL, MPI_INFO_NULL, &flood_reg));
    T_OK(MPI_T_event_handle_alloc(rendezvous, NULL, MPI_INFO_NULL, &rndv_reg));
    T_ERR(MPI_T_event_register_callback(sync_reg, (MPI_T_cb_safety)9, MPI_INFO_NULL, &g_sync,
                                        on_event),
          MPI_T_ERR_INVALID);
    T_OK(MPI_T_event_register_callback(sync_reg, MPI_T_CB_REQUIRE_THREAD_SAFE, hints, &g_sync,
                                       on_event));
    T_OK(MPI_T_event_register_callback(deferred_reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL,
                                       &g_deferred, on_event));
    T_OK(MPI_T_event_register_callback(rndv_reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL,
                                       &g_rndv, on_event));
    /* Hints come back from the handle and from the callback. */
    MPI_Info got;
    char value[16];
    int flag = 0;
    T_OK(MPI_T_event_handle_get_info(sync_reg, &got));
    MPI_OK(MPI_Info_get(got, "mpc_test_hint", sizeof value - 1, value, &flag));
    CHECK(flag && !strcmp(value, "yes"), "handle hint lost");
    MPI_OK(MPI_Info_free(&got));
    T_OK(MPI_T_event_callback_get_info(sync_reg, MPI_T_CB_REQUIRE_THREAD_SAFE, &got));
    MPI_OK(MPI_Info_get(got, "mpc_test_hint", sizeof value - 1, value, &flag));
    CHECK(flag, "callback hint lost");
    MPI_OK(MPI_Info_free(&got));
    MPI_OK(MPI_Info_set(hints, "mpc_test_hint", "no"));
    T_OK(MPI_T_event_handle_set_info(sync_reg, hints));
    T_OK(MPI_T_event_handle_get_info(sync_reg, &got));
    MPI_OK(MPI_Info_get(got, "mpc_test_hint", sizeof value - 1, value, &flag));
    CHECK(flag && !strcmp(value, "no"), "handle hint not updated");
    MPI_OK(MPI_Info_free(&got));
    T_ERR(MPI_T_event_callback_get_info(sync_reg, MPI_T_CB_REQUIRE_NONE, &got), MPI_T_ERR_INVALID);
    MPI_OK(MPI_Info_free(&hints));

    /* Unexpected messages: rank 0 sees each exactly once, with its values, in
     * the thread-safe callback at once. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    send_to_root(rank, size, kTagBase);
    if (rank == 0) {
        for (int p = 1; p < size; ++p)
            for (int k = 0; k < kPerPeer; ++k) {
                int m = matching(&g_sync, p, kTagBase + k, 8ull * (k + 1));
                CHECK(m == 1, "message %d from %d raised %d events", k, p, m);
            }
        /* Not delivered yet to the NONE callback: no MPI_T call since. */
        CHECK(matching(&g_deferred, size > 1 ? 1 : 0, kTagBase, 8) == 0,
              "deferred callback ran outside MPI_T");
    } else {
        for (int k = 0; k < kPerPeer; ++k)
            CHECK(matching(&g_sync, rank, kTagBase + k, 8ull * (k + 1)) == 0,
                  "rank %d got rank 0's event", rank);
    }
    /* Any MPI_T call delivers what was buffered, at level NONE, in order. */
    T_OK(MPI_T_event_get_num(&n));
    if (rank == 0) {
        for (int p = 1; p < size; ++p)
            for (int k = 0; k < kPerPeer; ++k) {
                int m = matching(&g_deferred, p, kTagBase + k, 8ull * (k + 1));
                CHECK(m == 1, "deferred: message %d from %d raised %d events", k, p, m);
            }
    }
    for (int i = 0; i < g_deferred.count && i < kMaxRecords; ++i) {
        CHECK(g_deferred.records[i].safety == MPI_T_CB_REQUIRE_NONE, "deferred at level %d",
              g_deferred.records[i].safety);
        if (i)
            CHECK(g_deferred.records[i].timestamp >= g_deferred.records[i - 1].timestamp,
                  "events out of order");
    }
    for (int i = 0; i < g_sync.count && i < kMaxRecords; ++i)
        CHECK(g_sync.records[i].safety >= MPI_T_CB_REQUIRE_THREAD_SAFE, "sync at level %d",
              g_sync.records[i].safety);

    /* Freeing: the free callback runs once, with its user data; the
     * registration's callbacks stop and its handle is invalid. */
    T_OK(MPI_T_event_handle_free(sync_reg, &g_sync, on_free));
    CHECK(g_sync.freed == 1, "free callback ran %d times", g_sync.freed);
    T_ERR(MPI_T_event_handle_get_info(sync_reg, &got), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_event_handle_free(sync_reg, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    T_OK(MPI_T_event_handle_free(deferred_reg, &g_deferred, on_free));
    CHECK(g_deferred.freed == 1, "free callback ran %d times", g_deferred.freed);
    const int before = g_sync.count;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    send_to_root(rank, size, kTagBase + 100);
    CHECK(g_sync.count == before, "freed registration still called back");

    /* A flood: more unexpected messages than a registration buffers; the
     * dropped handler gets the rest's count at the next MPI_T call. */
    T_OK(MPI_T_event_set_dropped_handler(flood_reg, on_dropped));
    T_OK(MPI_T_event_register_callback(flood_reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, &g_flood,
                                       on_event));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (size > 1 && rank == 1) {
        char b = 0;
        for (int k = 0; k < kFlood; ++k)
            MPI_OK(MPI_Send(&b, 1, MPI_CHAR, 0, kTagBase + 200, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(&b, 1, MPI_CHAR, 0, kTagBase + 201, MPI_COMM_WORLD));
    } else if (size > 1 && rank == 0) {
        /* The last message visible: the earlier ones (not overtaken) were
         * queued as unexpected before it. */
        MPI_OK(MPI_Probe(1, kTagBase + 201, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        /* Receive them in order; all were unexpected when they arrived unless
         * a receive was already posted, which none was. */
        for (int k = 0; k < kFlood; ++k) {
            char b;
            MPI_OK(MPI_Recv(&b, 1, MPI_CHAR, 1, kTagBase + 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        char b;
        MPI_OK(MPI_Recv(&b, 1, MPI_CHAR, 1, kTagBase + 201, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        T_OK(MPI_T_event_get_num(&n));
        int delivered = matching(&g_flood, 1, kTagBase + 200, 1);
        CHECK(g_flood.dropped_calls >= 1 || delivered == kFlood,
              "no dropped handler call (%d delivered)", delivered);
        CHECK(delivered <= 1024, "%d delivered of a 1024-event buffer", delivered);
        CHECK(delivered + g_flood.dropped >= kFlood, "%d delivered + %lld dropped < %d", delivered,
              g_flood.dropped, kFlood);
    }
    T_OK(MPI_T_event_handle_free(flood_reg, NULL, NULL));

    /* A synchronous send within a node process starts a rendezvous: the
     * sender's event names the destination, tag and size. */
    MPI_Comm node;
    int nrank, nsize;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_OK(MPI_Comm_rank(node, &nrank));
    MPI_OK(MPI_Comm_size(node, &nsize));
    if (nsize > 1 && nrank == 1) {
        long long v = 42;
        MPI_OK(MPI_Ssend(&v, 1, MPI_LONG_LONG, 0, kTagBase + 300, node));
        CHECK(matching(&g_rndv, 0, kTagBase + 300, 8) == 1, "rendezvous not raised");
    } else if (nsize > 1 && nrank == 0) {
        long long v = 0;
        MPI_OK(MPI_Recv(&v, 1, MPI_LONG_LONG, 1, kTagBase + 300, node, MPI_STATUS_IGNORE));
        CHECK(v == 42, "received %lld", v);
    }
    MPI_OK(MPI_Comm_free(&node));
    T_OK(MPI_T_event_handle_free(rndv_reg, NULL, NULL));
    CHECK(!g_sync.bad_reads && !g_deferred.bad_reads && !g_flood.bad_reads && !g_rndv.bad_reads,
          "bad reads in callbacks: %d %d %d %d", g_sync.bad_reads, g_deferred.bad_reads,
          g_flood.bad_reads, g_rndv.bad_reads);

    /* After the last MPI_T_finalize: not initialized, registrations gone. */
    MPI_T_event_registration left;
    T_OK(MPI_T_event_handle_alloc(unexpected, NULL, MPI_INFO_NULL, &left));
    T_OK(MPI_T_finalize());
    T_ERR(MPI_T_event_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_event_handle_free(left, NULL, NULL), MPI_T_ERR_NOT_INITIALIZED);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("mpit_events: %d ranks OK\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
