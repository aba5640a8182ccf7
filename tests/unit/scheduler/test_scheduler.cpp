// Scheduler: fibers switch, block and wake; oversubscription; threads park.
#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "scheduler/scheduler.hpp"

using namespace mpc::sched;

namespace {

Options opts(int vps) {
    Options o;
    o.num_vps = vps;
    o.stack_size = 256 * 1024;
    o.bind = false;
    o.idle_spin_ns = 10000;
    return o;
}

}  // namespace

TEST_CASE("tasks run to completion on every VP", "[scheduler]") {
    static std::atomic<int> ran;
    ran = 0;
    Scheduler s(opts(2));
    for (int i = 0; i < 16; ++i) s.spawn(i % 2, [](void*) { ran++; }, nullptr, nullptr);
    s.run();
    REQUIRE(ran == 16);
}

TEST_CASE("yield interleaves the tasks of one VP", "[scheduler]") {
    static std::vector<int> trace;
    trace.clear();
    Scheduler s(opts(1));
    static int ids[2] = {0, 1};
    for (int i = 0; i < 2; ++i)
        s.spawn(0, [](void* p) {
            for (int k = 0; k < 3; ++k) {
                trace.push_back(*static_cast<int*>(p));
                yield();
            }
        }, &ids[i], nullptr);
    s.run();
    REQUIRE(trace == std::vector<int>{0, 1, 0, 1, 0, 1});
}

TEST_CASE("park blocks until another VP unparks", "[scheduler]") {
    static std::atomic<Waiter*> waiter{nullptr};
    static std::atomic<int> stage{0};
    waiter = nullptr;
    stage = 0;
    Scheduler s(opts(2));
    s.spawn(0, [](void*) {
        waiter = current_waiter();
        stage = 1;
        while (stage.load() != 2) park();
        stage = 3;
    }, nullptr, nullptr);
    s.spawn(1, [](void*) {
        while (stage.load() != 1) yield();
        stage = 2;
        waiter.load()->unpark();
    }, nullptr, nullptr);
    s.run();
    REQUIRE(stage == 3);
}

TEST_CASE("oversubscription: many tasks per VP ping-pong through park/unpark", "[scheduler]") {
    constexpr int kPairs = 32, kRounds = 200;
    struct Pair {
        std::atomic<int> turn{0};
        std::atomic<Waiter*> w[2]{};
        std::atomic<int> done{0};  // both sides count, from two VPs
    };
    static Pair pairs[kPairs];
    struct Arg { Pair* p; int side; };
    static Arg args[kPairs * 2];
    Scheduler s(opts(2));
    for (int i = 0; i < kPairs; ++i) {
        pairs[i].turn = 0;
        pairs[i].done = 0;
        for (int side = 0; side < 2; ++side) {
            args[i * 2 + side] = Arg{&pairs[i], side};
            s.spawn((i + side) % 2, [](void* p) {
                auto* a = static_cast<Arg*>(p);
                a->p->w[a->side] = current_waiter();
                for (int r = 0; r < kRounds; ++r) {
                    while (a->p->turn.load() % 2 != a->side) park();
                    a->p->turn++;
                    while (!a->p->w[1 - a->side].load()) yield();
                    a->p->w[1 - a->side].load()->unpark();
                }
                a->p->done++;
            }, &args[i * 2 + side], nullptr);
        }
    }
    s.run();
    for (auto& p : pairs) REQUIRE(p.turn == 2 * kRounds);
}

TEST_CASE("owner is inherited by what the task asks", "[scheduler]") {
    static void* seen = nullptr;
    static int token;
    Scheduler s(opts(1));
    s.spawn(0, [](void*) { seen = current_owner(); }, nullptr, &token);
    s.run();
    REQUIRE(seen == &token);
}

TEST_CASE("an OS thread parks on its futex and is unparked", "[scheduler]") {
    std::atomic<Waiter*> w{nullptr};
    std::atomic<bool> flag{false};
    std::thread t([&] {
        w = current_waiter();
        while (!flag.load()) park();
    });
    while (!w.load()) std::this_thread::yield();
    flag = true;
    w.load()->unpark();
    t.join();
    REQUIRE(flag);
}

TEST_CASE("exit_task ends a task without returning", "[scheduler]") {
    static int reached = 0;
    reached = 0;
    Scheduler s(opts(1));
    s.spawn(0, [](void*) {
        reached = 1;
        exit_task();
        reached = 2;  // never
    }, nullptr, nullptr);
    s.run();
    REQUIRE(reached == 1);
}

TEST_CASE("errno is per task, whatever the progress hook and other tasks do", "[scheduler]") {
    static std::atomic<int> wrong;
    wrong = 0;
    Scheduler s(opts(1));
    ProgressHooks hooks;
    hooks.poll = [](void*, int, bool) {  // a network poll would
        errno = EAGAIN;
        return false;
    };
    s.set_hooks(hooks);
    static int ids[4] = {0, 1, 2, 3};
    for (int& id : ids)
        s.spawn(0, [](void* p) {
            if (errno != 0) wrong++;  // a task starts as a new thread does
            const int mine = 1000 + *static_cast<int*>(p);
            for (int k = 0; k < 50; ++k) {
                errno = mine + k;
                yield();
                if (errno != mine + k) wrong++;
            }
        }, &id, nullptr);
    s.run();
    REQUIRE(wrong == 0);
}

namespace {
thread_local char tl_region[64];  // stands for the program's TLS block
thread_local char tl_library[24];  // and for a library's per-thread state
}

TEST_CASE("the task TLS region is private to each task", "[scheduler]") {
    static std::atomic<int> wrong;
    wrong = 0;
    static char init[sizeof(tl_region)];
    memset(init, 7, sizeof(init));
    Options o = opts(2);
    // The VP threads' regions lie at the same offset from their thread pointer.
    o.task_tls.push_back(
        {static_cast<char*>(__builtin_thread_pointer()) - tl_region, sizeof(tl_region), init});
    Scheduler s(o);
    static int ids[8];
    for (int i = 0; i < 8; ++i) {
        ids[i] = i;
        s.spawn(i % 2, [](void* p) {
            const char mine = static_cast<char>(*static_cast<int*>(p));
            if (tl_region[0] != 7 || tl_region[63] != 7) wrong++;
            for (int k = 0; k < 50; ++k) {
                memset(tl_region, mine + k, sizeof(tl_region));
                yield();
                if (tl_region[0] != mine + k || tl_region[63] != mine + k) wrong++;
            }
        }, &ids[i], nullptr);
    }
    s.run();
    REQUIRE(wrong == 0);
}

TEST_CASE("several task TLS regions are each private to each task", "[scheduler]") {
    static std::atomic<int> wrong;
    wrong = 0;
    static char init_a[sizeof(tl_region)], init_b[sizeof(tl_library)];
    memset(init_a, 7, sizeof(init_a));
    memset(init_b, 9, sizeof(init_b));
    Options o = opts(2);
    char* tp = static_cast<char*>(__builtin_thread_pointer());
    o.task_tls.push_back({tp - tl_region, sizeof(tl_region), init_a});
    o.task_tls.push_back({tp - tl_library, sizeof(tl_library), init_b});
    Scheduler s(o);
    static int ids[8];
    for (int i = 0; i < 8; ++i) {
        ids[i] = i;
        s.spawn(i % 2, [](void* p) {
            const char mine = static_cast<char>(*static_cast<int*>(p));
            if (tl_region[0] != 7 || tl_library[0] != 9 || tl_library[23] != 9) wrong++;
            for (int k = 0; k < 50; ++k) {
                memset(tl_region, mine + k, sizeof(tl_region));
                memset(tl_library, mine - k, sizeof(tl_library));
                yield();
                if (tl_region[63] != mine + k || tl_library[0] != mine - k ||
                    tl_library[23] != mine - k)
                    wrong++;
            }
        }, &ids[i], nullptr);
    }
    s.run();
    REQUIRE(wrong == 0);
}
