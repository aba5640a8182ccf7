#include "runtime/env.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/log.hpp"

namespace mpc::runtime::env {

const char* get(const char* name) {
    const char* v = getenv(name);
    return (v && *v) ? v : nullptr;
}

long get_int(const char* name, long fallback, long min, long max) {
    const char* v = get(name);
    if (!v) return fallback;
    char* end = nullptr;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < min || x > max)
        fatal("%s=%s is not valid: expected an integer in [%ld, %ld]", name, v, min, max);
    return x;
}

bool parse_size(const char* text, size_t* out) {
    char* end = nullptr;
    errno = 0;
    unsigned long long x = strtoull(text, &end, 10);
    if (errno || end == text || text[0] == '-') return false;
    unsigned shift = 0;
    switch (*end) {
        case '\0': break;
        case 'k': case 'K': shift = 10; ++end; break;
        case 'm': case 'M': shift = 20; ++end; break;
        case 'g': case 'G': shift = 30; ++end; break;
        default: return false;
    }
    if (*end == 'i' || *end == 'B') ++end;  // accept KiB / KB spellings
    if (*end == 'B') ++end;
    if (*end) return false;
    if (shift && x > (~0ull >> shift)) return false;
    *out = static_cast<size_t>(x << shift);
    return true;
}

size_t get_size(const char* name, size_t fallback) {
    const char* v = get(name);
    if (!v) return fallback;
    size_t x;
    if (!parse_size(v, &x))
        fatal("%s=%s is not valid: expected a byte size such as 4096, 64K or 8M", name, v);
    return x;
}

bool get_bool(const char* name, bool fallback) {
    const char* v = get(name);
    if (!v) return fallback;
    for (const char* t : {"1", "yes", "true", "on", "y"})
        if (strcasecmp(v, t) == 0) return true;
    for (const char* f : {"0", "no", "false", "off", "n"})
        if (strcasecmp(v, f) == 0) return false;
    fatal("%s=%s is not valid: expected 1/0, yes/no, true/false or on/off", name, v);
}

double get_seconds(const char* name, double fallback) {
    const char* v = get(name);
    if (!v) return fallback;
    char* end = nullptr;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || *end || x < 0) fatal("%s=%s is not valid: expected seconds (>= 0)", name, v);
    return x;
}

int get_choice(const char* name, int fallback,
               std::initializer_list<std::pair<const char*, int>> choices) {
    const char* v = get(name);
    if (!v) return fallback;
    std::string accepted;
    for (auto& [word, value] : choices) {
        if (strcmp(v, word) == 0) return value;
        if (!accepted.empty()) accepted += "|";
        accepted += word;
    }
    fatal("%s=%s is not valid: expected one of %s", name, v, accepted.c_str());
}

}  // namespace mpc::runtime::env
