// The job secret: random bytes, text form, hand-over through the environment.
// See runtime/auth.hpp.
#include "runtime/auth.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "runtime/log.hpp"

namespace mpc::runtime::auth {

void random_bytes(void* out, size_t len) {
    auto* p = static_cast<uint8_t*>(out);
    while (len > 0) {
        const ssize_t n = getrandom(p, len, 0);
        if (n > 0) {
            p += n;
            len -= static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        break;  // ENOSYS (a kernel before 3.17): the device below
    }
    if (len == 0) return;
    const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    while (fd >= 0 && len > 0) {
        const ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        p += n;
        len -= static_cast<size_t>(n);
    }
    if (fd >= 0) close(fd);
    if (len > 0) fatal("no source of random bytes (getrandom and /dev/urandom failed)");
}

Secret make_secret() {
    Secret s;
    random_bytes(s.bytes.data(), s.bytes.size());
    return s;
}

std::string to_hex(const void* data, size_t len) {
    static const char digits[] = "0123456789abcdef";
    const auto* bytes = static_cast<const uint8_t*>(data);
    std::string out;
    out.reserve(2 * len);
    for (size_t i = 0; i < len; ++i) {
        out.push_back(digits[bytes[i] >> 4]);
        out.push_back(digits[bytes[i] & 15]);
    }
    return out;
}

bool secret_from_hex(std::string_view text, Secret* out) {
    auto value = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    if (text.size() != 2 * kSecretBytes) return false;
    Secret s;
    for (size_t i = 0; i < kSecretBytes; ++i) {
        const int hi = value(text[2 * i]), lo = value(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        s.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    *out = s;
    return true;
}

bool take_secret_from_environment(Secret* out) {
    char* text = getenv(kSecretVariable);
    if (!text) return false;
    const bool ok = secret_from_hex(text, out);
    // The value's bytes are those /proc/PID/environ shows: overwritten, then
    // the variable goes (unsetenv alone leaves the bytes where they were).
    for (char* c = text; *c; ++c) *c = '0';
    unsetenv(kSecretVariable);
    if (!ok)
        fatal("%s is malformed (expected %zu hex digits from the launcher)", kSecretVariable,
              2 * kSecretBytes);
    return true;
}

bool equal(const void* a, const void* b, size_t n) {
    const auto* x = static_cast<const volatile uint8_t*>(a);
    const auto* y = static_cast<const volatile uint8_t*>(b);
    uint8_t diff = 0;
    for (size_t i = 0; i < n; ++i) diff |= static_cast<uint8_t>(x[i] ^ y[i]);
    return diff == 0;
}

}  // namespace mpc::runtime::auth
