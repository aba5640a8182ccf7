/* The pseudo-random generators per rank (issue 25): each rank draws the
 * sequence a process of its own would draw, whatever the other ranks draw on
 * their cores meanwhile, with barriers between the draws. The expected values
 * come from glibc's reentrant forms on states of the test's own, set up as a
 * fresh process's are: random_r after initstate_r(1, buffer, 128) (glibc's
 * default state), drand48_r from an all-zero drand48_data.
 *   rand before any srand (the default seed), then srand(100 + rank), rand and
 *   random interleaved (one generator); initstate to a rank's own buffer and
 *   setstate back; srandom; the drand48 family with srand48, seed48 and
 *   lcong48 (whose multiplier erand48 and nrand48 then use too).
 */
#include <stdlib.h>

#include "common.h"

#define DRAWS 24

static void barrier_every(int i, int period) {
    if (i % period == 0) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void check_rand(int rank) {
    struct random_data fresh;
    static char fresh_state[128];
    memset(&fresh, 0, sizeof(fresh));
    CHECK(initstate_r(1, fresh_state, sizeof(fresh_state), &fresh) == 0, "initstate_r");
    for (int i = 0; i < 3; ++i) {
        int32_t want;
        random_r(&fresh, &want);
        const int got = rand();
        CHECK(got == want, "rand() #%d before srand: %d, expected %d", i, got, want);
        barrier_every(i, 1);
    }
    srand(100 + (unsigned)rank);
    srandom_r(100 + (unsigned)rank, &fresh);
    for (int i = 0; i < DRAWS; ++i) {
        int32_t want;
        random_r(&fresh, &want);
        const long got = i % 3 == 2 ? random() : rand();  /* one generator */
        CHECK(got == want, "draw %d after srand(%d): %ld, expected %d", i, 100 + rank, got, want);
        barrier_every(i, 2);
    }
    /* initstate: a generator of the rank's own in its buffer, then back. */
    static char mine[32];
    struct random_data other;
    static char other_state[32];
    memset(&other, 0, sizeof(other));
    CHECK(initstate_r(7 + (unsigned)rank, other_state, sizeof(other_state), &other) == 0,
          "initstate_r");
    char* previous = initstate(7 + (unsigned)rank, mine, sizeof(mine));
    CHECK(previous != NULL, "initstate returned NULL");
    for (int i = 0; i < DRAWS; ++i) {
        int32_t want;
        random_r(&other, &want);
        const long got = random();
        CHECK(got == want, "draw %d after initstate: %ld, expected %d", i, got, want);
        barrier_every(i, 3);
    }
    CHECK(setstate(previous) == mine, "setstate did not return the buffer given to initstate");
    for (int i = 0; i < DRAWS; ++i) {  /* the first generator, where it was */
        int32_t want;
        random_r(&fresh, &want);
        const int got = rand();
        CHECK(got == want, "draw %d after setstate: %d, expected %d", i, got, want);
        barrier_every(i, 4);
    }
    srandom(5000 + (unsigned)rank);
    srandom_r(5000 + (unsigned)rank, &fresh);
    for (int i = 0; i < DRAWS; ++i) {
        int32_t want;
        random_r(&fresh, &want);
        const long got = random();
        CHECK(got == want, "draw %d after srandom: %ld, expected %d", i, got, want);
        barrier_every(i, 5);
    }
}

static void check_drand48(int rank) {
    struct drand48_data want;
    memset(&want, 0, sizeof(want));  /* a fresh process's */
    for (int i = 0; i < 4; ++i) {
        long w, g = lrand48();
        lrand48_r(&want, &w);
        CHECK(g == w, "lrand48 #%d before any seed: %ld, expected %ld", i, g, w);
        barrier_every(i, 1);
    }
    srand48(42 + rank);
    srand48_r(42 + rank, &want);
    for (int i = 0; i < DRAWS; ++i) {
        if (i % 3 == 0) {
            double w, g = drand48();
            drand48_r(&want, &w);
            CHECK(g == w, "drand48 #%d: %.17g, expected %.17g", i, g, w);
        } else if (i % 3 == 1) {
            long w, g = lrand48();
            lrand48_r(&want, &w);
            CHECK(g == w, "lrand48 #%d: %ld, expected %ld", i, g, w);
        } else {
            long w, g = mrand48();
            mrand48_r(&want, &w);
            CHECK(g == w, "mrand48 #%d: %ld, expected %ld", i, g, w);
        }
        barrier_every(i, 2);
    }
    unsigned short seed[3] = {(unsigned short)rank, 0x1234, (unsigned short)(rank * 3)};
    unsigned short old_expected[3];
    memcpy(old_expected, want.__x, sizeof(old_expected));
    const unsigned short* old = seed48(seed);
    seed48_r(seed, &want);
    CHECK(memcmp(old, old_expected, sizeof(old_expected)) == 0, "seed48's previous state");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    unsigned short param[7] = {1, 2, 3, (unsigned short)(0x5 + rank), 0xdeec, 0xe66d, 0xb};
    lcong48(param);
    lcong48_r(param, &want);
    unsigned short xs[3] = {9, 8, (unsigned short)rank}, xw[3] = {9, 8, (unsigned short)rank};
    for (int i = 0; i < DRAWS; ++i) {
        if (i % 2) {
            double w, g = erand48(xs);
            erand48_r(xw, &want, &w);
            CHECK(g == w, "erand48 #%d after lcong48: %.17g, expected %.17g", i, g, w);
        } else {
            long w, g = nrand48(xs);
            nrand48_r(xw, &want, &w);
            CHECK(g == w, "nrand48 #%d after lcong48: %ld, expected %ld", i, g, w);
        }
        barrier_every(i, 3);
    }
}

int main(int argc, char** argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    int rank;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    check_rand(rank);
    check_drand48(rank);
    MPI_OK(MPI_Finalize());
    return 0;
}
