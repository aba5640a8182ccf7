// What a process owns beyond its globals, as each rank sees it (issue 6,
// point 4). check_per_rank.py checks the output; the limits are in the README.
//   thread-locals  __thread and thread_local are per rank across MPI calls that
//                  switch ranks; a thread the rank creates starts afresh; a
//                  thread_local object is destroyed once, when its rank ends
//   exit           atexit handlers, static objects and static locals of each
//                  rank run exactly once, at the rank's end, MPI finalized
//   stdio          every line of every rank arrives whole (stdout and stderr)
//   environment    per rank: what a rank sets (setenv, unsetenv) only it
//                  sees, through getenv and environ; the start-up one all see
//   errno          an MPI call that switches ranks leaves the caller's errno
//   signals        handlers are the process's: the last rank to install one
//                  wins, and raise() runs it at once in the raising rank
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

int g_rank = -1;  // this rank's: its destructors run after MPI_Finalize

[[noreturn]] void fail(int line, const char* what, long got, long want) {
    fprintf(stderr, "FAIL per_rank rank %d line %d: %s: %ld, expected %ld\n", g_rank, line, what,
            got, want);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}
#define EXPECT(what, got, want)                                                    \
    do {                                                                           \
        if ((got) != (want))                                                       \
            fail(__LINE__, what, static_cast<long>(got), static_cast<long>(want)); \
    } while (0)

// ---- Thread-locals ------------------------------------------------------------

__thread int tl_counter = 5;
int dynamic_inits = 0;  // per rank: each rank's thread_local is initialised once
int first_dynamic() {
    return ++dynamic_inits * 100;
}
thread_local int tl_dynamic = first_dynamic();

struct TlsObject {
    std::string text = std::string(64, 'x');  // on the heap: a second destruction would show
    int owner = -1;
    ~TlsObject() { printf("per_rank: rank %d thread_local destroyed (owner %d)\n", g_rank, owner); }
};
thread_local TlsObject tl_object;

void* fresh_thread(void* out) {
    *static_cast<int*>(out) = tl_counter;  // the thread's own, initial copy
    tl_counter = 77;
    return nullptr;
}

void check_thread_locals(int rank) {
    tl_counter = rank * 1000;
    tl_object.owner = rank;
    EXPECT("thread_local initialisations", tl_dynamic, 100);
    tl_dynamic += rank;
    for (int i = 0; i < 200; ++i) {
        ++tl_counter;
        MPI_Barrier(MPI_COMM_WORLD);  // other ranks of this VP run meanwhile
        EXPECT("__thread after a barrier", tl_counter, rank * 1000 + i + 1);
    }
    EXPECT("thread_local", tl_dynamic, 100 + rank);
    EXPECT("thread_local initialisations", dynamic_inits, 1);
    int seen = -1;
    pthread_t t;
    pthread_create(&t, nullptr, fresh_thread, &seen);
    pthread_join(t, nullptr);
    EXPECT("__thread in a new thread", seen, 5);
    EXPECT("__thread after a thread changed its own", tl_counter, rank * 1000 + 200);
    EXPECT("thread_local object", tl_object.owner, rank);
}

// ---- Exit: atexit handlers, static objects, static locals -------------------------

struct Announcer {
    const char* what;
    ~Announcer() { printf("per_rank: rank %d %s destroyed\n", g_rank, what); }
};
Announcer static_object{"static object"};

void at_exit_handler() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    printf("per_rank: rank %d atexit handler (finalized %d)\n", g_rank, finalized);
}

int next_ticket() {
    static int tickets = 0;
    return ++tickets;
}

const std::string& rank_name() {
    static Announcer local{"static local object"};
    static const std::string name = "rank" + std::to_string(g_rank);  // initialised once per rank
    return name;
}

#ifdef __SANITIZE_THREAD__
// ThreadSanitizer's atexit() registers the handler for no object in
// particular (so it would run when the node process ends): name ours.
extern "C" void* __dso_handle;
extern "C" int __cxa_atexit(void (*fn)(void*), void* arg, void* dso);
void at_exit_thunk(void*) {
    at_exit_handler();
}
void register_at_exit() {
    __cxa_atexit(at_exit_thunk, nullptr, &__dso_handle);
}
#else
void register_at_exit() {
    atexit(at_exit_handler);
}
#endif

void check_exit_and_statics(int rank) {
    register_at_exit();
    for (int i = 0; i < rank; ++i) next_ticket();
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT("static local", next_ticket(), rank + 1);
    EXPECT("static local object", rank_name() == "rank" + std::to_string(rank), true);
}

// ---- stdio ----------------------------------------------------------------------

// A line's payload: different for every rank and line (check_per_rank.py
// computes the same).
std::string payload(int rank, int line) {
    std::string s;
    for (int k = 0; k < 60; ++k) s += static_cast<char>('a' + (rank * 7 + line * 3 + k) % 26);
    return s;
}

void check_stdio(int rank) {
    for (int i = 0; i < 40; ++i) {
        printf("per_rank: rank %d line %d %s\n", rank, i, payload(rank, i).c_str());
        if (i % 10 == 9) MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int i = 0; i < 5; ++i) fprintf(stderr, "per_rank: rank %d stderr line %d\n", rank, i);
}

// ---- Environment ------------------------------------------------------------------

extern "C" char** environ;

// Entries of environ named PER_RANK_TEST_*, and whether the one of `rank` is there.
int test_entries(int rank, bool* own) {
    const std::string mine = "PER_RANK_TEST_" + std::to_string(rank) + "=";
    int n = 0;
    *own = false;
    for (char** e = environ; e && *e; ++e) {
        if (std::string(*e).rfind("PER_RANK_TEST_", 0) == 0) ++n;
        if (std::string(*e).rfind(mine, 0) == 0) *own = true;
    }
    return n;
}

void check_environment(int rank, int size) {
    const char* path = getenv("PATH");  // the node process's, seen by every rank
    EXPECT("PATH from the start-up environment", path != nullptr, true);
    setenv(("PER_RANK_TEST_" + std::to_string(rank)).c_str(), std::to_string(rank).c_str(), 1);
    MPI_Barrier(MPI_COMM_WORLD);  // every rank has set its own
    for (int r = 0; r < size; ++r) {
        const char* v = getenv(("PER_RANK_TEST_" + std::to_string(r)).c_str());
        EXPECT("a rank sees its own variable, and only its own", v != nullptr, r == rank);
        if (v) EXPECT("its value", atoi(v), r);
    }
    bool own = false;
    EXPECT("variables of this test in environ", test_entries(rank, &own), 1);
    EXPECT("its own among them", own, true);
    unsetenv(("PER_RANK_TEST_" + std::to_string(rank)).c_str());
    EXPECT("unset", getenv(("PER_RANK_TEST_" + std::to_string(rank)).c_str()) == nullptr, true);
    EXPECT("unset from environ", test_entries(rank, &own), 0);
    EXPECT("PATH still there", getenv("PATH") != nullptr, true);
    MPI_Barrier(MPI_COMM_WORLD);
}

// ---- errno ------------------------------------------------------------------------

void check_errno(int rank) {
    int peer_left = 0, peer_right = 0, size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < 100; ++i) {
        // Neighbours fail differently: a leak from one rank to another shows.
        const int rc = rank % 2 ? close(-1) : open("/nonexistent/per_rank", O_RDONLY);
        EXPECT("the failing call", rc, -1);
        const int want = rank % 2 ? EBADF : ENOENT;
        EXPECT("errno of the failed call", errno, want);
        if (i % 3 == 0) MPI_Barrier(MPI_COMM_WORLD);
        if (i % 3 == 1)
            MPI_Sendrecv(&rank, 1, MPI_INT, right, 0, &peer_left, 1, MPI_INT, left, 0,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (i % 3 == 2) MPI_Allreduce(&rank, &peer_right, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        EXPECT("errno after an MPI call", errno, want);
    }
}

// ---- Signals ----------------------------------------------------------------------

// This rank's copy; atomic: ranks of two VPs may run the one handler at once.
std::atomic<int> g_signals{0};
void on_usr1(int) {
    g_signals.fetch_add(1);
}

void check_signals(MPI_Comm node) {
    int local_size;
    MPI_Comm_size(node, &local_size);
    struct sigaction sa {};
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, nullptr);  // every rank installs its own copy's
    MPI_Barrier(node);
    struct sigaction now {};
    sigaction(SIGUSR1, nullptr, &now);
    const auto installed = reinterpret_cast<uint64_t>(now.sa_handler);
    uint64_t lo = 0, hi = 0;
    MPI_Allreduce(&installed, &lo, 1, MPI_UINT64_T, MPI_MIN, node);
    MPI_Allreduce(&installed, &hi, 1, MPI_UINT64_T, MPI_MAX, node);
    EXPECT("one handler per node process", lo == hi, true);
    raise(SIGUSR1);  // handled before raise returns, by the installed copy
    MPI_Barrier(node);
    const int mine = g_signals.load(), handling = mine != 0;
    int total = 0, handlers = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, node);
    MPI_Allreduce(&handling, &handlers, 1, MPI_INT, MPI_SUM, node);
    EXPECT("signals handled in this node process", total, local_size);
    EXPECT("ranks whose handler ran", handlers, 1);
    MPI_Barrier(node);
    signal(SIGUSR1, SIG_DFL);
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    check_thread_locals(g_rank);
    check_exit_and_statics(g_rank);
    check_stdio(g_rank);
    check_environment(g_rank, size);
    check_errno(g_rank);
    check_signals(node);
    MPI_Comm_free(&node);
    printf("per_rank: rank %d ok\n", g_rank);
    MPI_Finalize();
    return 0;
}
