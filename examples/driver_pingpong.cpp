// Raw driver ping-pong and streaming bandwidth between two node processes.
//
// Forks into two processes that exchange driver addresses over pipes,
// connect, and measure with busy polling: half round-trip latency of
// send/recv (sizes up to the buffer size) and of RDMA write with immediate
// (larger sizes), then one-way bandwidth of a window of RDMA writes.
// Usage: driver_pingpong [tcp|ofi|verbs|auto]   (MPC_OFI_PROVIDER picks the
// libfabric provider, tcp by default).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ib/driver.hpp"

using namespace mpc::ib;

namespace {

constexpr size_t kBufferSize = 64 * 1024;
constexpr size_t kMaxWrite = 16u << 20;
constexpr int kWindow = 16;

double now_us() {
    using namespace std::chrono;
    return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

struct Peer {
    Driver* driver;
    int other;
    MemoryRegion local;  // send source / write source and target
    uint64_t remote_addr = 0, remote_key = 0;
    Completion batch[32];

    // Polls until a receive-side completion arrives; returns it after
    // reposting its buffer. Send completions are drained on the way.
    Completion next_incoming() {
        for (unsigned spin = 0;; ++spin) {
            if (spin % 16 == 15) driver->poll_send_cq(batch, 32);
            if (driver->poll_recv_cq(batch, 1) == 1) {
                if (batch[0].type == Completion::Type::Recv) driver->repost_recv(batch[0].buffer);
                return batch[0];
            }
        }
    }
    void send(size_t len) {
        while (driver->post_send(other, local.addr, len, local.local_desc, 0) == Status::Again)
            driver->poll_send_cq(batch, 32);
    }
    void write(size_t len, bool imm) {
        while (driver->post_write(other, local.addr, len, local.local_desc, remote_addr, remote_key,
                                  imm, 1, 0) == Status::Again)
            driver->poll_send_cq(batch, 32);
    }
};

int iterations_for(size_t size) {
    if (size <= 4096) return 20000;
    if (size <= (1u << 20)) return 2000;
    return 50;
}

// Ping-pong: node 0 sends, node 1 answers with the same size. Returns the
// half round trip in microseconds (node 0 only).
double pingpong(Peer& p, int self, size_t size, bool use_write) {
    int iters = iterations_for(size), warmup = iters / 10;
    double start = 0;
    for (int i = 0; i < warmup + iters; ++i) {
        if (i == warmup) start = now_us();
        if (self == 0) {
            use_write ? p.write(size, true) : p.send(size);
            p.next_incoming();
        } else {
            p.next_incoming();
            use_write ? p.write(size, true) : p.send(size);
        }
    }
    return (now_us() - start) / iters / 2;
}

// Streaming: node 0 keeps kWindow writes in flight; each round ends with a
// write with immediate that node 1 acknowledges with an 8-byte send.
double bandwidth(Peer& p, int self, size_t size) {
    int rounds = size >= (16u << 20) ? 8 : size >= (1u << 20) ? 30 : 300;
    double start = now_us();
    for (int r = 0; r < rounds + 1; ++r) {
        if (r == 1) start = now_us();  // round 0 warms up
        if (self == 0) {
            for (int w = 0; w < kWindow; ++w) p.write(size, w == kWindow - 1);
            p.next_incoming();
        } else {
            p.next_incoming();
            p.send(8);
        }
    }
    double us = now_us() - start;
    return static_cast<double>(size) * kWindow * rounds / us;  // bytes/us = MB/s
}

int run(int self, const std::string& kind, int in_fd, int out_fd) {
    DriverConfig config;
    config.self = self;
    config.num_peers = 2;
    config.recv_buffer_size = kBufferSize;
    config.recv_buffers = 64;
    config.send_queue_depth = 64;
    std::string error;
    auto driver = open_driver(kind, config, &error);
    if (!driver) {
        std::fprintf(stderr, "node %d: %s\n", self, error.c_str());
        return 1;
    }
    // Exchange addresses, then the target region of the writes.
    std::vector<std::string> addresses(2);
    addresses[self] = driver->local_address();
    auto exchange = [&](const void* mine, void* theirs, size_t len) {
        if (write(out_fd, mine, len) != static_cast<ssize_t>(len)) return false;
        size_t got = 0;
        while (got < len) {
            ssize_t n = read(in_fd, static_cast<char*>(theirs) + got, len - got);
            if (n <= 0) return false;
            got += static_cast<size_t>(n);
        }
        return true;
    };
    char mine[256] = {}, theirs[256] = {};
    std::snprintf(mine, sizeof mine, "%s", addresses[self].c_str());
    if (!exchange(mine, theirs, sizeof mine)) return 1;
    addresses[1 - self] = theirs;
    if (driver->connect_all(addresses) != Status::Ok) return 1;

    std::vector<char> memory(kMaxWrite);
    Peer p{driver.get(), 1 - self, {}, 0, 0, {}};
    if (driver->register_memory(memory.data(), memory.size(), &p.local) != Status::Ok) return 1;
    uint64_t key_addr[2] = {p.local.remote_key, p.local.remote_base}, their[2];
    if (!exchange(key_addr, their, sizeof key_addr)) return 1;
    p.remote_key = their[0];
    p.remote_addr = their[1];

    if (self == 0) {
        std::printf("driver %s, busy polling, 2 processes\n\n", driver->name());
        std::printf("%10s  %14s  %s\n", "size", "latency (us)", "operation");
    }
    for (size_t size : {size_t(8), size_t(64), size_t(1024), size_t(8192), kBufferSize}) {
        double us = pingpong(p, self, size, false);
        if (self == 0) std::printf("%10zu  %14.2f  send/recv\n", size, us);
    }
    for (size_t size : {size_t(8), size_t(65536), size_t(1u << 20), kMaxWrite}) {
        double us = pingpong(p, self, size, true);
        if (self == 0) std::printf("%10zu  %14.2f  write with immediate\n", size, us);
    }
    if (self == 0) std::printf("\n%10s  %14s  (window of %d writes)\n", "size", "MB/s", kWindow);
    for (size_t size : {size_t(65536), size_t(1u << 20), kMaxWrite}) {
        double mbs = bandwidth(p, self, size);
        if (self == 0) std::printf("%10zu  %14.1f\n", size, mbs);
    }
    driver->deregister_memory(p.local);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string kind = argc > 1 ? argv[1] : "auto";
    int to_child[2], to_parent[2];
    if (pipe(to_child) != 0 || pipe(to_parent) != 0) return 1;
    std::fflush(stdout);
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) _exit(run(1, kind, to_child[0], to_parent[1]));
    int status = run(0, kind, to_parent[0], to_child[1]);
    int child_status = 0;
    waitpid(child, &child_status, 0);
    return status != 0 || !WIFEXITED(child_status) || WEXITSTATUS(child_status) != 0;
}
