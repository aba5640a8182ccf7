#include "runtime/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mpc::runtime {
namespace {

std::atomic<IdentityProvider> g_identity{nullptr};
std::atomic<JobKiller> g_killer{nullptr};
std::atomic<int> g_node{-1};

// Writes "mpcx: node N rank R: <level><text>\n" with one write(2), so that lines
// of concurrent ranks do not interleave.
void emit(const char* level, const char* text) {
    char buf[2048];
    size_t n = 0;
    auto add = [&](int written) {
        if (written > 0) n += static_cast<size_t>(written);
        if (n > sizeof(buf) - 2) n = sizeof(buf) - 2;
    };
    add(snprintf(buf, sizeof(buf), "mpcx"));
    int node = g_node.load(std::memory_order_relaxed);
    if (node >= 0) add(snprintf(buf + n, sizeof(buf) - n, ": node %d", node));
    if (auto id = g_identity.load(std::memory_order_acquire)) {
        int rank = id();
        if (rank >= 0) add(snprintf(buf + n, sizeof(buf) - n, " rank %d", rank));
    }
    add(snprintf(buf + n, sizeof(buf) - n, ": %s%s", level, text));
    buf[n++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, buf, n);
    (void)ignored;
}

void emit_v(const char* level, const char* fmt, va_list ap) {
    char text[1536];
    vsnprintf(text, sizeof(text), fmt, ap);
    emit(level, text);
}

[[noreturn]] void end_job(int status, const char* fmt, va_list ap) {
    char text[1536];
    vsnprintf(text, sizeof(text), fmt, ap);
    emit("", text);
    if (auto killer = g_killer.load()) killer(status, text);
    _exit(status);
}

}  // namespace

void set_identity_provider(IdentityProvider provider) { g_identity.store(provider); }
void set_node_id(int node) { g_node.store(node); }
void set_job_killer(JobKiller killer) { g_killer.store(killer); }

namespace {
std::atomic<int> g_debug{-1};  // -1: MPC_DEBUG not read yet
}  // namespace

bool debug_enabled() {
    int on = g_debug.load(std::memory_order_relaxed);
    if (on < 0) {
        const char* v = getenv("MPC_DEBUG");
        on = v && *v && strcmp(v, "0") != 0;
        g_debug.store(on, std::memory_order_relaxed);
    }
    return on;
}

void set_debug_enabled(bool on) {
    g_debug.store(on, std::memory_order_relaxed);
}

void warn(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    emit_v("warning: ", fmt, ap);
    va_end(ap);
}

void info(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    emit_v("", fmt, ap);
    va_end(ap);
}

void debug(const char* fmt, ...) {
    if (!debug_enabled()) return;
    va_list ap;
    va_start(ap, fmt);
    emit_v("debug: ", fmt, ap);
    va_end(ap);
}

void fatal(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    end_job(1, fmt, ap);
}

void fatal_status(int status, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    end_job(status == 0 ? 1 : status, fmt, ap);
}

}  // namespace mpc::runtime
