/* Buffered sends and the space they take (MPI 3.1 section 3.6.1): a message
 * needs its packed size (MPI_Pack_size) plus MPI_BSEND_OVERHEAD bytes of the
 * attached buffer, so a buffer of exactly that takes one MPI_Bsend of that
 * message, of exactly twice that two, and one byte less refuses the last
 * with MPI_ERR_BUFFER. Space comes back once the messages left: the same
 * buffer serves round after round. Detach returns the buffer and its size.
 */
#include "common.h"

static int try_bsend(const char* data, int n, int dest, int tag) {
    return MPI_Bsend(data, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    static const int kSizes[] = {0, 1, 3, 17, 100, 1000, 4099, 70000};
    for (size_t k = 0; k < sizeof(kSizes) / sizeof(kSizes[0]); ++k) {
        const int n = kSizes[k];
        int packed;
        MPI_OK(MPI_Pack_size(n, MPI_CHAR, MPI_COMM_WORLD, &packed));
        char* out = malloc((size_t)n + 1);
        char* in = malloc((size_t)n + 1);
        /* Two messages' worth, at an odd address. */
        const int need = packed + MPI_BSEND_OVERHEAD;
        char* raw = malloc(2 * (size_t)need + 1);
        CHECK(out && in && raw, "out of memory");
        for (int i = 0; i < n; ++i) out[i] = (char)(rank + i);
        for (int round = 0; round < 3; ++round) {
            MPI_OK(MPI_Buffer_attach(raw + 1, need));
            MPI_OK(try_bsend(out, n, right, 1));
            MPI_OK(MPI_Recv(in, n, MPI_CHAR, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < n; ++i)
                CHECK(in[i] == (char)(left + i), "%d bytes: byte %d wrong", n, i);
            void* back = NULL;
            int back_size = -1;
            MPI_OK(MPI_Buffer_detach(&back, &back_size));
            CHECK(back == raw + 1 && back_size == need, "detach gave %p, %d", back, back_size);
        }
        /* Two messages in a buffer for two. */
        MPI_OK(MPI_Buffer_attach(raw + 1, 2 * need));
        MPI_OK(try_bsend(out, n, right, 2));
        MPI_OK(try_bsend(out, n, right, 3));
        MPI_OK(MPI_Recv(in, n, MPI_CHAR, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Recv(in, n, MPI_CHAR, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        void* back;
        int back_size;
        MPI_OK(MPI_Buffer_detach(&back, &back_size));
        /* One byte short: the message does not fit, while the buffer is
         * empty (a message to itself is not received until after the send). */
        MPI_OK(MPI_Buffer_attach(raw + 1, need - 1));
        int rc = try_bsend(out, n, rank, 4);
        CHECK(error_class(rc) == MPI_ERR_BUFFER, "%d bytes in a buffer one byte short: %d", n,
              rc);
        MPI_OK(MPI_Buffer_detach(&back, &back_size));
        free(out);
        free(in);
        free(raw);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
