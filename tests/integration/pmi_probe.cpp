// pmi_probe: a node-process program that uses only the runtime's Bootstrap
// (no MPI: ranks cannot talk across node processes yet). mpcrun starts it;
// tests/integration/mpcrun_check.py drives the modes that must fail.
//
//   pmi_probe kvs K [marker]   exchange keys through PMI-2 and check them
//   pmi_probe exit3|segv|abort|early0|hang|wait [marker]
//                              node process 1 misbehaves, the others wait
//   pmi_probe lines N [marker] N lines per node process, written in pieces
//   pmi_probe stdin [marker]   node 0 sums its stdin, the others expect none
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "runtime/bootstrap.hpp"
#include "runtime/pmi2_wire.hpp"

using mpc::runtime::Bootstrap;

namespace {

int fail(int rank, const std::string& what) {
    fprintf(stderr, "pmi_probe node %d: FAILED: %s\n", rank, what.c_str());
    return 1;
}

// Bytes a PMI-2 value cannot carry as they are: every byte value, shifted.
std::string binary_value(int rank, int round) {
    std::string v;
    for (int i = 0; i < 200; ++i) v += static_cast<char>((i * 7 + rank * 31 + round) & 0xff);
    return v;
}

std::string hex_value(int rank) {
    std::string raw;
    for (int i = 0; i < 400; ++i) raw += static_cast<char>((i ^ (rank * 13)) & 0xff);
    return mpc::runtime::pmi2::hex_encode(raw.data(), raw.size());
}

int kvs(Bootstrap& boot, int expected_size) {
    const int me = boot.rank(), n = boot.size();
    if (n != expected_size)
        return fail(me,
                    "size " + std::to_string(n) + ", expected " + std::to_string(expected_size));
    if (me < 0 || me >= n) return fail(me, "rank out of range");
    if (const char* node = getenv("MPC_NODE_ID"); node && atoi(node) != me)
        return fail(me, std::string("MPC_NODE_ID=") + node + " differs from the PMI rank");
    std::string mapping = boot.job_attr("PMI_process_mapping");
    if (mapping.rfind("(vector,", 0) != 0)
        return fail(me, "PMI_process_mapping = '" + mapping + "'");

    for (int round = 0; round < 2; ++round) {
        const std::string suffix = std::to_string(round) + "-" + std::to_string(me);
        boot.put("bin-" + suffix, binary_value(me, round));
        if (round == 0) boot.put("hex-" + std::to_string(me), hex_value(me));
        boot.fence();
        for (int r = 0; r < n; ++r) {
            const std::string other = std::to_string(round) + "-" + std::to_string(r);
            if (boot.get("bin-" + other) != binary_value(r, round))
                return fail(me, "wrong value for bin-" + other);
            if (round == 0 && boot.get("hex-" + std::to_string(r)) != hex_value(r))
                return fail(me, "wrong value for hex-" + std::to_string(r));
        }
    }
    if (!boot.get("never-put").empty()) return fail(me, "a key never put was found");
    printf("node %d/%d: pmi ok (mapping %s)\n", me, n, mapping.c_str());
    fflush(stdout);
    boot.finalize();
    return 0;
}

[[noreturn]] void sleep_forever() {
    for (;;) pause();
}

// Node process 1 misbehaves as mode says; the others wait in a fence that
// cannot complete, so only mpcrun can end them.
int misbehave(Bootstrap& boot, const std::string& mode) {
    const int me = boot.rank();
    printf("node %d ready\n", me);
    fflush(stdout);
    if (mode == "hang" || mode == "wait") {
        if (me == 1) signal(SIGTERM, SIG_IGN);  // only SIGKILL ends it
        sleep_forever();
    }
    if (me == 1) {
        if (mode == "exit3") _exit(3);
        if (mode == "segv") {
            rlimit none{0, 0};
            setrlimit(RLIMIT_CORE, &none);
            signal(SIGSEGV, SIG_DFL);  // not a sanitizer's report: the signal itself
            raise(SIGSEGV);
        }
        if (mode == "abort") {
            boot.abort(7, "probe abort; from node 1");
            sleep_forever();  // the launcher ends the job, not this process
        }
        if (mode == "early0") {
            boot.finalize();
            return 0;
        }
    }
    boot.fence();  // the runtime ends the process if the fence fails
    return 0;
}

int lines(Bootstrap& boot, int count) {
    const int me = boot.rank();
    const std::string payload(100, static_cast<char>('a' + me % 26));
    for (int i = 0; i < count; ++i) {
        std::string head = "node=" + std::to_string(me) + " line=" + std::to_string(i) + " ";
        // Three writes per line: a launcher that forwards raw chunks would mix them.
        ssize_t ok = write(STDOUT_FILENO, head.data(), head.size());
        if (i % 7 == 0) usleep(200);
        ok += write(STDOUT_FILENO, payload.data(), 50);
        ok += write(STDOUT_FILENO, payload.data() + 50, 50);
        if (i + 1 < count) ok += write(STDOUT_FILENO, "\n", 1);  // the last line ends at EOF
        (void)ok;
    }
    boot.finalize();
    return 0;
}

int read_stdin(Bootstrap& boot) {
    const int me = boot.rank();
    unsigned long bytes = 0, sum = 0;
    char buf[4096];
    ssize_t n;
    while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0) {
        bytes += static_cast<unsigned long>(n);
        for (ssize_t i = 0; i < n; ++i) sum = sum * 31 + static_cast<unsigned char>(buf[i]);
    }
    printf("node %d stdin bytes=%lu sum=%lu\n", me, bytes, sum);
    boot.finalize();
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: pmi_probe MODE [ARG] [marker]\n");
        return 2;
    }
    const std::string mode = argv[1];
    std::unique_ptr<Bootstrap> boot = Bootstrap::create();
    if (mode == "kvs") return kvs(*boot, argc > 2 ? atoi(argv[2]) : 1);
    if (mode == "lines") return lines(*boot, argc > 2 ? atoi(argv[2]) : 100);
    if (mode == "stdin") return read_stdin(*boot);
    return misbehave(*boot, mode);
}
