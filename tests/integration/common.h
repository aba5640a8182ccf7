/* Helpers shared by the integration programs: checks that end the job with a
 * clear message, and data patterns that make a misplaced or stale byte visible.
 *
 * A failed check prints "FAIL rank R file:line: what" to stderr and calls
 * MPI_Abort(MPI_COMM_WORLD, 1), so that the whole job stops at once (no rank is
 * left waiting for a partner that gave up) and mpcrun exits non-zero.
 */
#ifndef FIBERMPI_TESTS_COMMON_H
#define FIBERMPI_TESTS_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int test_world_rank(void) {
    int initialized = 0, finalized = 0, rank = -1;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static inline void test_failv(const char* file, int line, const char* cond, const char* fmt,
                               va_list ap) __attribute__((noreturn));
static inline void test_failv(const char* file, int line, const char* cond, const char* fmt,
                               va_list ap) {
    char text[1024];
    vsnprintf(text, sizeof(text), fmt, ap);
    fprintf(stderr, "FAIL rank %d %s:%d: %s%s%s%s\n", test_world_rank(), file, line,
            cond ? "(" : "", cond ? cond : "", cond ? ") " : "", text);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* test_fail(__FILE__, __LINE__, fmt, ...): fails the test with the message. */
static inline void test_fail(const char* file, int line, const char* fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
static inline void test_fail(const char* file, int line, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    test_failv(file, line, NULL, fmt, ap);
}

static inline void test_check_failed(const char* file, int line, const char* cond,
                                     const char* fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));
static inline void test_check_failed(const char* file, int line, const char* cond,
                                     const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    test_failv(file, line, cond, fmt, ap);
}

/* CHECK(cond, fmt, ...): fails the test with the message when cond is false. */
#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (!(cond)) test_check_failed(__FILE__, __LINE__, #cond, __VA_ARGS__); \
    } while (0)

/* MPI_OK(call): the call must return MPI_SUCCESS. */
#define MPI_OK(call)                                                                      \
    do {                                                                                  \
        int mpi_ok_rc_ = (call);                                                          \
        if (mpi_ok_rc_ != MPI_SUCCESS) {                                                  \
            char mpi_ok_text_[MPI_MAX_ERROR_STRING] = "";                                 \
            int mpi_ok_len_ = 0;                                                          \
            MPI_Error_string(mpi_ok_rc_, mpi_ok_text_, &mpi_ok_len_);                     \
            test_fail(__FILE__, __LINE__, "%s returned %d (%s)", #call, mpi_ok_rc_,       \
                      mpi_ok_text_);                                                      \
        }                                                                                 \
    } while (0)

/* The error class of a return code (codes carry details above the class). */
static inline int error_class(int code) {
    int cls = -1;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS) return -1;
    return cls;
}

/* The pattern identified by seed, 8 bytes at a time. Different seeds (sender, message number) give different bytes at
 * almost every offset, so a message delivered to the wrong receive, or in the
 * wrong order, does not pass the check. */
static inline uint64_t pattern_word(uint32_t seed, uint64_t k) {
    uint64_t x = (k + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed + 1) * 0xBF58476D1CE4E5B9ull;
    return x ^ x >> 29;
}

static inline unsigned char pattern_byte(uint32_t seed, size_t i) {
    uint64_t w = pattern_word(seed, i >> 3);
    unsigned char b[8];
    memcpy(b, &w, 8);
    return b[i & 7];
}

static inline void fill_pattern(void* buf, size_t n, uint32_t seed) {
    unsigned char* p = (unsigned char*)buf;
    size_t words = n / 8;
    for (size_t k = 0; k < words; ++k) {
        uint64_t w = pattern_word(seed, k);
        memcpy(p + k * 8, &w, 8);
    }
    for (size_t i = words * 8; i < n; ++i) p[i] = pattern_byte(seed, i);
}

/* Index of the first byte that differs from the pattern, or n. */
static inline size_t find_mismatch(const void* buf, size_t n, uint32_t seed) {
    const unsigned char* p = (const unsigned char*)buf;
    size_t words = n / 8;
    for (size_t k = 0; k < words; ++k) {
        uint64_t w = pattern_word(seed, k), got;
        memcpy(&got, p + k * 8, 8);
        if (got != w) {
            for (size_t i = k * 8;; ++i)
                if (p[i] != pattern_byte(seed, i)) return i;
        }
    }
    for (size_t i = words * 8; i < n; ++i)
        if (p[i] != pattern_byte(seed, i)) return i;
    return n;
}

#define CHECK_PATTERN(buf, n, seed, what)                                                   \
    do {                                                                                    \
        size_t cp_n_ = (n), cp_at_ = find_mismatch((buf), cp_n_, (seed));                  \
        if (cp_at_ != cp_n_)                                                                \
            test_fail(__FILE__, __LINE__,                                             \
                      "%s: byte %zu of %zu is 0x%02x, expected 0x%02x (seed %u)", (what),  \
                      cp_at_, cp_n_, ((const unsigned char*)(buf))[cp_at_],                \
                      pattern_byte((seed), cp_at_), (unsigned)(seed));                      \
    } while (0)

/* Checks that `n` guard bytes at p still hold `value` (nothing wrote past a
 * receive buffer). */
#define CHECK_GUARD(p, n, value, what)                                                      \
    do {                                                                                    \
        const unsigned char* cg_p_ = (const unsigned char*)(p);                            \
        for (size_t cg_i_ = 0; cg_i_ < (size_t)(n); ++cg_i_)                                \
            if (cg_p_[cg_i_] != (unsigned char)(value))                                     \
                test_fail(__FILE__, __LINE__, "%s: guard byte %zu overwritten", (what),     \
                          cg_i_);                                                           \
    } while (0)

static inline void* xmalloc(size_t n) {
    void* p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* An array of n ints, all v (never a null pointer, even for n == 0). */
static inline int* ints(size_t n, int v) {
    int* p = (int*)xmalloc((n ? n : 1) * sizeof(int));
    for (size_t i = 0; i < n; ++i) p[i] = v;
    return p;
}

/* The test value of element i held by rank r, distinct across ranks. */
static inline int value(int r, long i) {
    return r * 1000003 + (int)(i % 999983);
}

#endif /* FIBERMPI_TESTS_COMMON_H */
