/* strtok and hsearch per rank (issue 25).
 *
 * strtok: every rank cuts a line of its own (different words and delimiters
 * per rank) with a blocking MPI call between two tokens, so that the other
 * ranks of its core cut theirs meanwhile; the tokens must be those strtok_r
 * gives for the same line with a position of its own, as a process's strtok
 * would. Twice: the second line changes its delimiters midway.
 * hsearch: every rank fills a table of its own (hcreate/hsearch/hdestroy) with
 * keys some of which all ranks use; each finds its own data, and not the keys
 * only other ranks entered.
 */
#include <search.h>

#include "common.h"

#define MAX_TOKENS 32

static void make_line(int rank, int which, char* line) {
    if (which == 0)
        sprintf(line, ",r%da;;, r%db,r%dc ;x%d,,%d;", rank, rank, rank, rank * 7, rank + 1000);
    else
        sprintf(line, "head%d:rest%d one:%d two;three,%d", rank, rank, rank, rank * 3);
}

/* Delimiters of token i of line `which`: the second line changes them. */
static const char* delimiters(int which, int i) {
    if (which == 0) return ",; ";
    return i < 2 ? ":" : " ;,:";
}

/* The expected tokens: strtok_r with a position of its own. */
static int expected_tokens(int rank, int which, char tokens[MAX_TOKENS][64]) {
    char line[256];
    make_line(rank, which, line);
    char* save = NULL;
    int n = 0;
    for (char* t = strtok_r(line, delimiters(which, 0), &save); t;
         t = strtok_r(NULL, delimiters(which, n), &save)) {
        CHECK(n < MAX_TOKENS, "too many tokens");
        snprintf(tokens[n++], 64, "%s", t);
    }
    return n;
}

static void check_strtok(int rank) {
    for (int which = 0; which < 2; ++which) {
        char want[MAX_TOKENS][64];
        const int n = expected_tokens(rank, which, want);
        char line[256];
        make_line(rank, which, line);
        int got = 0, done = 0;
        char* t = strtok(line, delimiters(which, 0));
        for (;;) {
            if (!done) {
                if (t) {
                    CHECK(got < n && strcmp(t, want[got]) == 0,
                          "line %d token %d is \"%s\", expected \"%s\"", which, got, t,
                          got < n ? want[got] : "(none)");
                    ++got;
                    t = strtok(NULL, delimiters(which, got));
                } else {
                    CHECK(got == n, "line %d: %d tokens, expected %d", which, got, n);
                    done = 1;
                }
            }
            int all_done = 0;  /* a blocking call between two tokens */
            MPI_OK(MPI_Allreduce(&done, &all_done, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
            if (all_done) break;
        }
    }
}

static void check_hsearch(int rank, int size) {
    CHECK(hcreate(64) != 0, "hcreate failed");
    static char keys[20][16];
    for (int i = 0; i < 20; ++i) {
        snprintf(keys[i], sizeof(keys[i]), "k%d", i);
        ENTRY e = {keys[i], (void*)(intptr_t)(rank * 100 + i)};
        CHECK(hsearch(e, ENTER) != NULL, "hsearch ENTER failed");
        if (i % 5 == 4) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    char only[16];
    snprintf(only, sizeof(only), "only%d", rank);
    ENTRY mine = {only, (void*)(intptr_t)rank};
    CHECK(hsearch(mine, ENTER) != NULL, "hsearch ENTER failed");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 20; ++i) {
        ENTRY q = {keys[i], NULL};
        ENTRY* found = hsearch(q, FIND);
        CHECK(found && (intptr_t)found->data == rank * 100 + i, "key %s: data %ld, expected %d",
              keys[i], found ? (long)(intptr_t)found->data : -1L, rank * 100 + i);
    }
    for (int r = 0; r < size; ++r) {
        char other[16];
        snprintf(other, sizeof(other), "only%d", r);
        ENTRY q = {other, NULL};
        ENTRY* found = hsearch(q, FIND);
        CHECK((found != NULL) == (r == rank), "key %s %s", other,
              found ? "found in this rank's table" : "missing");
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    hdestroy();
}

int main(int argc, char** argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_strtok(rank);
    check_hsearch(rank, size);
    MPI_OK(MPI_Finalize());
    return 0;
}
