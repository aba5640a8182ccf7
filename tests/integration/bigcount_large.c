/* Large counts for real (MPI 4.0 section 2.5.8): messages, types and
 * collectives of more than 2^31 bytes or elements, on 2 ranks.
 *
 *   bigcount_large p2p   2^31+8 bytes of MPI_BYTE with MPI_Send_c/MPI_Recv_c
 *                        (and MPI_Isend_c/Irecv_c back), checked byte for
 *                        byte; MPI_Get_count_c / _elements_c give the count,
 *                        the int forms MPI_UNDEFINED; a datatype of more than
 *                        2^31 bytes (MPI_Type_size_c; MPI_Type_size is
 *                        MPI_UNDEFINED) carries the same message.
 *   bigcount_large coll  MPI_Bcast_c of 2^31+8 bytes; MPI_Allreduce_c of
 *                        2^29+16 ints (an int count, 2^31+64 bytes);
 *                        MPI_Reduce_local_c of 2^31+16 one-byte integers (a
 *                        count beyond int, reduced in pieces).
 *
 * Each part keeps under ~4.5 GiB for the whole job (both ranks share one node
 * process or run on two). Too big for AddressSanitizer's shadow memory: the
 * ASan run skips these tests (scripts/test-sanitizers.sh).
 */
#include <limits.h>

#include "common.h"

static const MPI_Count kBytes = ((MPI_Count)1 << 31) + 8;

/* Large buffers hold a pattern of period kPeriod bytes (1 MiB + 7: no power
 * of two divides it, so a piece moved to the wrong offset shows), written and
 * checked at memcpy speed. */
enum { kPeriod = (1 << 20) + 7 };

static void fill_bytes(unsigned char* buf, size_t n, uint32_t seed) {
    fill_pattern(buf, n < kPeriod ? n : kPeriod, seed);
    for (size_t at = kPeriod; at < n; at += kPeriod)
        memcpy(buf + at, buf, n - at < kPeriod ? n - at : kPeriod);
}

static void check_bytes(const unsigned char* buf, size_t n, uint32_t seed, const char* what) {
    unsigned char* ref = (unsigned char*)xmalloc(kPeriod);
    fill_pattern(ref, kPeriod, seed);
    for (size_t at = 0; at < n; at += kPeriod) {
        size_t len = n - at < kPeriod ? n - at : kPeriod;
        if (memcmp(buf + at, ref, len) == 0) continue;
        size_t i = 0;
        while (buf[at + i] == ref[i]) ++i;
        CHECK(0, "%s: byte %zu of %zu is %d, expected %d", what, at + i, n, buf[at + i], ref[i]);
    }
    free(ref);
}

/* The same for arrays of v elements of `each` bytes whose element i is
 * value(i % period): made once, then copied. */
static void fill_periodic(void* buf, size_t v, size_t each, size_t period,
                          void (*value)(void* at, size_t i)) {
    unsigned char* p = (unsigned char*)buf;
    size_t first = v < period ? v : period;
    for (size_t i = 0; i < first; ++i) value(p + i * each, i);
    for (size_t at = period; at < v; at += period)
        memcpy(p + at * each, p, (v - at < period ? v - at : period) * each);
}

static void p2p(int rank) {
    const size_t n = (size_t)kBytes;
    unsigned char* buf = (unsigned char*)xmalloc(n);
    MPI_Status st;
    if (rank == 0) {
        fill_bytes(buf, n, 7);
        MPI_OK(MPI_Send_c(buf, kBytes, MPI_BYTE, 1, 3, MPI_COMM_WORLD));
    } else {
        memset(buf, 0, n);
        MPI_OK(MPI_Recv_c(buf, kBytes, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &st));
        check_bytes(buf, n, 7, "MPI_Recv_c");
        MPI_Count count = 0;
        int icount = 0;
        MPI_OK(MPI_Get_count_c(&st, MPI_BYTE, &count));
        CHECK(count == kBytes, "MPI_Get_count_c gave %lld, sent %lld", (long long)count,
              (long long)kBytes);
        MPI_OK(MPI_Get_elements_c(&st, MPI_BYTE, &count));
        CHECK(count == kBytes, "MPI_Get_elements_c gave %lld", (long long)count);
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &icount));
        CHECK(icount == MPI_UNDEFINED, "MPI_Get_count of 2^31+8 bytes gave %d", icount);
        MPI_OK(MPI_Get_elements(&st, MPI_BYTE, &icount));
        CHECK(icount == MPI_UNDEFINED, "MPI_Get_elements of 2^31+8 bytes gave %d", icount);
        MPI_OK(MPI_Get_count_c(&st, MPI_SHORT, &count));
        CHECK(count == kBytes / 2, "MPI_Get_count_c (MPI_SHORT) gave %lld", (long long)count);
    }

    /* Back the other way, nonblocking, with a different pattern. */
    MPI_Request req;
    if (rank == 1) {
        fill_bytes(buf, n, 8);
        MPI_OK(MPI_Isend_c(buf, kBytes, MPI_BYTE, 0, 4, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        memset(buf, 0, n);
        MPI_OK(MPI_Irecv_c(buf, kBytes, MPI_BYTE, 1, 4, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, &st));
        check_bytes(buf, n, 8, "MPI_Irecv_c");
    }

    /* One element of a type of 2^31+8 bytes, received as bytes. */
    MPI_Datatype big;
    MPI_OK(MPI_Type_contiguous_c(kBytes, MPI_BYTE, &big));
    MPI_OK(MPI_Type_commit(&big));
    MPI_Count size = 0;
    int isize = 0;
    MPI_OK(MPI_Type_size_c(big, &size));
    CHECK(size == kBytes, "MPI_Type_size_c gave %lld", (long long)size);
    MPI_OK(MPI_Type_size(big, &isize));
    CHECK(isize == MPI_UNDEFINED, "MPI_Type_size of a 2^31+8-byte type gave %d", isize);
    MPI_Count lb = -1, extent = 0;
    MPI_OK(MPI_Type_get_extent_c(big, &lb, &extent));
    CHECK(lb == 0 && extent == kBytes, "MPI_Type_get_extent_c gave %lld, %lld", (long long)lb,
          (long long)extent);
    if (rank == 0) {
        fill_bytes(buf, n, 9);
        MPI_OK(MPI_Ssend(buf, 1, big, 1, 5, MPI_COMM_WORLD));
    } else {
        memset(buf, 0, n);
        MPI_OK(MPI_Recv_c(buf, kBytes, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st));
        check_bytes(buf, n, 9, "a 2^31+8-byte datatype");
        MPI_Count count = 0;
        int icount = 0;
        MPI_OK(MPI_Get_count_c(&st, big, &count));
        CHECK(count == 1, "MPI_Get_count_c (big type) gave %lld", (long long)count);
        MPI_OK(MPI_Get_count(&st, big, &icount));
        CHECK(icount == 1, "MPI_Get_count (big type) gave %d", icount);
    }
    MPI_OK(MPI_Type_free(&big));
    free(buf);
}

static void int_plain(void* at, size_t i) {
    *(int*)at = (int)(i % 1021);
}
static void int_plus_one(void* at, size_t i) {
    *(int*)at = (int)(i % 1021) + 1;
}
static void int_sum(void* at, size_t i) {
    *(int*)at = 2 * (int)(i % 1021) + 1;
}
static void i8_in(void* at, size_t i) {
    *(int8_t*)at = (int8_t)(i % 61);
}
static void i8_inout(void* at, size_t i) {
    *(int8_t*)at = (int8_t)(i % 7);
}
static void i8_sum(void* at, size_t i) {
    *(int8_t*)at = (int8_t)(i % 61 + i % 7);
}

/* Checks v elements against value(i % period), one period at a time. */
static void check_periodic(const void* buf, size_t v, size_t each, size_t period,
                           void (*value)(void* at, size_t i), const char* what) {
    unsigned char* ref = (unsigned char*)xmalloc(period * each);
    for (size_t i = 0; i < period; ++i) value(ref + i * each, i);
    const unsigned char* p = (const unsigned char*)buf;
    for (size_t at = 0; at < v; at += period) {
        size_t len = (v - at < period ? v - at : period) * each;
        if (memcmp(p + at * each, ref, len) == 0) continue;
        size_t i = 0;
        while (p[at * each + i] == ref[i]) ++i;
        CHECK(0, "%s: element %zu is wrong", what, at + i / each);
    }
    free(ref);
}

static void coll(int rank) {
    /* Bcast_c of more than an int counts. */
    const size_t n = (size_t)kBytes;
    unsigned char* buf = (unsigned char*)xmalloc(n);
    if (rank == 1) fill_bytes(buf, n, 11);
    else memset(buf, 0, n);
    MPI_OK(MPI_Bcast_c(buf, kBytes, MPI_BYTE, 1, MPI_COMM_WORLD));
    check_bytes(buf, n, 11, "MPI_Bcast_c");
    free(buf);

    /* Allreduce_c in place: an int count, more than 2^31 bytes. Element i is
     * j + rank (j = i mod 1021) on each rank, so the sum is 2j + 1. */
    const MPI_Count nints = ((MPI_Count)1 << 29) + 16;
    int* v = (int*)xmalloc((size_t)nints * sizeof(int));
    fill_periodic(v, (size_t)nints, sizeof(int), 1021, rank ? int_plus_one : int_plain);
    MPI_OK(MPI_Allreduce_c(MPI_IN_PLACE, v, nints, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    check_periodic(v, (size_t)nints, sizeof(int), 1021, int_sum, "MPI_Allreduce_c");
    free(v);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Reduce_local_c of more elements than an int counts (rank 0 alone; the
     * library reduces it in pieces): element i is j % 61 in inbuf and j % 7 in
     * inoutbuf, j = i mod 4093 (a prime period, so that a piece reduced at a
     * wrong offset shows). */
    if (rank == 0) {
        const MPI_Count nbytes = ((MPI_Count)1 << 31) + 16;
        int8_t* in = (int8_t*)xmalloc((size_t)nbytes);
        int8_t* inout = (int8_t*)xmalloc((size_t)nbytes);
        fill_periodic(in, (size_t)nbytes, 1, 4093, i8_in);
        fill_periodic(inout, (size_t)nbytes, 1, 4093, i8_inout);
        MPI_OK(MPI_Reduce_local_c(in, inout, nbytes, MPI_INT8_T, MPI_SUM));
        check_periodic(inout, (size_t)nbytes, 1, 4093, i8_sum, "MPI_Reduce_local_c");
        free(in);
        free(inout);
    }
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc == 2, "usage: bigcount_large p2p|coll");
    CHECK(size == 2, "runs on 2 ranks, not %d", size);
    if (strcmp(argv[1], "p2p") == 0) p2p(rank);
    else if (strcmp(argv[1], "coll") == 0) coll(rank);
    else CHECK(0, "unknown part %s", argv[1]);
    MPI_Finalize();
    return 0;
}
