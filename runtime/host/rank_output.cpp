// The ranks' output, marked with the rank that wrote it (mpcrun --tag-output,
// -prepend-rank) or written to a file per rank (--output-filename). Ranks
// share the node process's descriptors 1 and 2, so the rank of a write is
// known only at the write itself: stdio's stdout and stderr become streams of
// ours (unbuffered, so each call arrives here from the rank making it), C++'s
// cout/cerr/clog write through them, and write(2) on descriptors 1 and 2 (as
// gfortran's runtime does) comes here through interpose.cpp. Each rank's bytes
// are gathered into whole lines, and each line goes out with its mark in one
// write. Output outside any rank (the runtime's own messages) and of programs
// a rank starts is not marked.
//
// Set by mpcrun: MPC_OUTPUT_LABEL=tag|rank, MPC_OUTPUT_DIR=DIR. Off by default,
// at the cost of one flag test per write().
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <ext/stdio_sync_filebuf.h>
#include <iostream>
#include <map>
#include <mutex>
#include <string>

#include "host.hpp"
#include "mpi_api/rank.hpp"
#include "runtime/env.hpp"

namespace mpc::host {
namespace {

enum class Mode { kOff, kTag, kRank, kFiles };

std::atomic<bool> g_active{false};
Mode g_mode = Mode::kOff;
std::string g_dir;
std::mutex g_lock;
struct Stream {
    std::string partial;  // bytes after the last newline
    int file = -1;        // kFiles: the rank's file, opened at its first byte
};
std::map<std::pair<int, int>, Stream> g_streams;  // (rank, 1 or 2)

// The real write: a system call, not the interposed symbol.
void write_fully(int fd, const char* p, size_t n) {
    while (n > 0) {
        const long w = syscall(SYS_write, fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        p += w;
        n -= static_cast<size_t>(w);
    }
}

void make_dirs(const std::string& path) {
    for (size_t at = 1; at <= path.size(); ++at)
        if (at == path.size() || path[at] == '/') mkdir(path.substr(0, at).c_str(), 0755);
}

int open_file(int rank, int fd) {
    const std::string dir = g_dir + "/1/rank." + std::to_string(rank);
    make_dirs(dir);
    return open((dir + (fd == 1 ? "/stdout" : "/stderr")).c_str(),
                O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
}

// Caller holds g_lock. text: whole lines (each ending in a newline), or the
// rest at the end.
void emit(int rank, int fd, Stream& s, const char* text, size_t len) {
    if (g_mode == Mode::kFiles) {
        if (s.file < 0) s.file = open_file(rank, fd);
        write_fully(s.file >= 0 ? s.file : fd, text, len);
        return;
    }
    char mark[48];
    if (g_mode == Mode::kTag)
        snprintf(mark, sizeof mark, "[1,%d]<%s>:", rank, fd == 1 ? "stdout" : "stderr");
    else
        snprintf(mark, sizeof mark, "[%d] ", rank);
    std::string out;
    size_t start = 0;
    while (start < len) {
        const char* nl = static_cast<const char*>(memchr(text + start, '\n', len - start));
        const size_t end = nl ? static_cast<size_t>(nl - text) + 1 : len;
        out.append(mark).append(text + start, end - start);
        start = end;
    }
    write_fully(fd, out.data(), out.size());
}

void take(int fd, const char* buf, size_t len) {
    const int rank = mpi::current_world_rank();
    if (rank < 0) {  // not a rank's: as it is
        write_fully(fd, buf, len);
        return;
    }
    std::lock_guard<std::mutex> guard(g_lock);
    Stream& s = g_streams[{rank, fd}];
    s.partial.append(buf, len);
    const size_t last = s.partial.rfind('\n');
    if (last == std::string::npos) return;
    emit(rank, fd, s, s.partial.data(), last + 1);
    s.partial.erase(0, last + 1);
}

ssize_t cookie_write(void* cookie, const char* buf, size_t size) {
    take(static_cast<int>(reinterpret_cast<intptr_t>(cookie)), buf, size);
    return static_cast<ssize_t>(size);
}

FILE* labelled_stream(int fd) {
    cookie_io_functions_t io{};
    io.write = cookie_write;
    FILE* f = fopencookie(reinterpret_cast<void*>(static_cast<intptr_t>(fd)), "w", io);
    if (f) setvbuf(f, nullptr, _IONBF, 0);  // each call arrives from its rank
    return f;
}

}  // namespace

void output_setup() {
    const char* label = runtime::env::get("MPC_OUTPUT_LABEL");
    const char* dir = runtime::env::get("MPC_OUTPUT_DIR");
    if (dir) {
        g_mode = Mode::kFiles;
        g_dir = dir;
    } else if (label && std::strcmp(label, "tag") == 0) {
        g_mode = Mode::kTag;
    } else if (label && std::strcmp(label, "rank") == 0) {
        g_mode = Mode::kRank;
    } else {
        return;
    }
    FILE* out = labelled_stream(STDOUT_FILENO);
    FILE* err = labelled_stream(STDERR_FILENO);
    if (!out || !err) return;
    fflush(stdout);
    fflush(stderr);
    stdout = out;  // rank images load later: their copies take these too
    stderr = err;
    static __gnu_cxx::stdio_sync_filebuf<char> out_buf(out), err_buf(err);
    std::cout.rdbuf(&out_buf);
    std::cerr.rdbuf(&err_buf);
    std::clog.rdbuf(&err_buf);
    g_active.store(true, std::memory_order_release);
}

bool output_intercept(int fd, const void* buf, size_t len) {
    if (!g_active.load(std::memory_order_relaxed) || (fd != STDOUT_FILENO && fd != STDERR_FILENO))
        return false;
    take(fd, static_cast<const char*>(buf), len);
    return true;
}

void output_finish() {
    if (!g_active.load(std::memory_order_acquire)) return;
    fflush(nullptr);
    std::lock_guard<std::mutex> guard(g_lock);
    for (auto& [key, s] : g_streams) {
        if (!s.partial.empty()) {
            s.partial.push_back('\n');
            emit(key.first, key.second, s, s.partial.data(), s.partial.size());
            s.partial.clear();
        }
        if (s.file >= 0) close(s.file);
        s.file = -1;
    }
}

}  // namespace mpc::host
