/* strtok, hsearch and the multibyte conversion states per rank (issue 25).
 *
 * strtok: every rank cuts a line of its own (different words and delimiters
 * per rank) with a blocking MPI call between two tokens, so that the other
 * ranks of its core cut theirs meanwhile; the tokens must be those strtok_r
 * gives for the same line with a position of its own, as a process's strtok
 * would. Twice: the second line changes its delimiters midway.
 * hsearch: every rank fills a table of its own (hcreate/hsearch/hdestroy) with
 * keys some of which all ranks use; each finds its own data, and not the keys
 * only other ranks entered.
 * mbrtowc, mbrlen and mbtowc without a state of the caller's: every rank
 * converts a character of its own split over two calls, with a barrier between
 * them (the first half waits in the function's own state).
 */
#include <locale.h>
#include <search.h>
#include <wchar.h>

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
    char keys[20][16];  /* on the stack: with --shared-globals a static one would be shared */
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

static void check_multibyte(int rank) {
    /* The locale is one per process: every rank sets it before any converts. */
    int ok = setlocale(LC_CTYPE, "C.UTF-8") != NULL, all_ok = 0;
    MPI_OK(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!all_ok) {
        if (rank == 0) printf("libc_strtok: no C.UTF-8 locale: multibyte states not checked\n");
        return;
    }
    const wchar_t want = (wchar_t)(0x4e00 + rank);  /* three bytes in UTF-8 */
    char bytes[8];
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    CHECK(wcrtomb(bytes, want, &st) == 3, "wcrtomb");
    wchar_t got = 0;
    CHECK(mbrtowc(&got, bytes, 1, NULL) == (size_t)-2, "mbrtowc of a first byte");
    CHECK(mbrlen(bytes, 2, NULL) == (size_t)-2, "mbrlen of two first bytes");
    CHECK(mbtowc(NULL, NULL, 0) == 0, "mbtowc(NULL): UTF-8 has no shift states");
    CHECK(mbtowc(&got, bytes, 1) == -1, "mbtowc of a first byte");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));  /* the other ranks convert theirs */
    CHECK(mbrtowc(&got, bytes + 1, 2, NULL) == 2 && got == want,
          "mbrtowc of the rest: U+%04x, expected U+%04x", (unsigned)got, (unsigned)want);
    CHECK(mbrlen(bytes + 2, 1, NULL) == 1, "mbrlen of the last byte");
    got = 0;
    CHECK(mbtowc(&got, bytes + 1, 2) == 2 && got == want, "mbtowc of the rest: U+%04x",
          (unsigned)got);
}

int main(int argc, char** argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_strtok(rank);
    check_hsearch(rank, size);
    check_multibyte(rank);
    MPI_OK(MPI_Finalize());
    return 0;
}
