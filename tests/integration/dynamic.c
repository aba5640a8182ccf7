/* Process creation and management (MPI 4.1 chapter 11) in a job whose ranks
 * are fixed at launch:
 * - MPI_Comm_spawn and MPI_Comm_spawn_multiple fail with MPI_ERR_SPAWN
 *   (after their argument checks: a bad root is MPI_ERR_ROOT), leave
 *   MPI_COMM_NULL and fill the error codes at the root;
 * - ports: the two halves of the world meet through MPI_Open_port,
 *   MPI_Comm_accept and MPI_Comm_connect (twice on one port), and the
 *   intercommunicator works (remote size and group, an Allreduce across,
 *   Intercomm_merge); MPI_Close_port, and bad or closed ports give
 *   MPI_ERR_PORT on every member;
 * - names: rank 0 publishes its port, the upper half's root (maybe in
 *   another node process) finds it by MPI_Lookup_name; unpublished, it is
 *   MPI_ERR_NAME, and unpublishing it again MPI_ERR_SERVICE;
 * - MPI_Comm_join between ranks 0 and 1 over a TCP connection on the loopback
 *   (they may be in two node processes), and a socket whose other end is no
 *   rank of this job refused with MPI_COMM_NULL.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"

static int rank, size;

static void spawn_fails(void) {
    MPI_Comm inter = MPI_COMM_WORLD;
    int codes[3] = {0, 0, 0};
    char* args[] = {"-x", NULL};
    int rc = MPI_Comm_spawn("./worker", args, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
    CHECK(error_class(rc) == MPI_ERR_SPAWN, "MPI_Comm_spawn: class %d", error_class(rc));
    CHECK(inter == MPI_COMM_NULL, "MPI_Comm_spawn: intercomm not MPI_COMM_NULL");
    if (rank == 0)
        for (int k = 0; k < 3; ++k)
            CHECK(codes[k] == MPI_ERR_SPAWN, "MPI_Comm_spawn: errcodes[%d] = %d", k, codes[k]);
    rc = MPI_Comm_spawn("./worker", MPI_ARGV_NULL, 1, MPI_INFO_NULL, size, MPI_COMM_WORLD, &inter,
                        MPI_ERRCODES_IGNORE);
    CHECK(error_class(rc) == MPI_ERR_ROOT, "MPI_Comm_spawn with root = size: class %d",
          error_class(rc));

    char* commands[2] = {"./a", "./b"};
    int maxprocs[2] = {1, 2};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    int codes2[3] = {0, 0, 0};
    rc = MPI_Comm_spawn_multiple(2, commands, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_WORLD,
                                 &inter, codes2);
    CHECK(error_class(rc) == MPI_ERR_SPAWN, "MPI_Comm_spawn_multiple: class %d", error_class(rc));
    if (rank == 0)
        for (int k = 0; k < 3; ++k)
            CHECK(codes2[k] == MPI_ERR_SPAWN, "MPI_Comm_spawn_multiple: errcodes[%d]", k);
    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent: not MPI_COMM_NULL");
}

/* The intercommunicator `inter` joins the lower half (low) and the upper one. */
static void check_inter(MPI_Comm inter, int low, int half) {
    int flag = 0, rsize = 0;
    MPI_OK(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag, "accept/connect gave no intercommunicator");
    MPI_OK(MPI_Comm_remote_size(inter, &rsize));
    CHECK(rsize == (low ? size - half : half), "remote size %d", rsize);
    /* Every rank sends its world rank; the sum of the other group's comes back. */
    int sum = 0, want = 0;
    for (int r = low ? half : 0; r < (low ? size : half); ++r) want += r;
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, inter));
    CHECK(sum == want, "Allreduce across: %d, expected %d", sum, want);
    MPI_Comm merged;
    MPI_OK(MPI_Intercomm_merge(inter, !low, &merged));
    int mrank = -1;
    MPI_OK(MPI_Comm_rank(merged, &mrank));
    CHECK(mrank == rank, "merged rank %d, world rank %d", mrank, rank);
    MPI_OK(MPI_Comm_free(&merged));
}

static void ports(void) {
    const int half = size / 2, low = rank < half;
    MPI_Comm mine;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &mine));
    char port[MPI_MAX_PORT_NAME] = "";
    int go = 1;
    if (rank == 0) {
        MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
        CHECK(strlen(port) > 0 && strlen(port) < MPI_MAX_PORT_NAME, "empty port name");
        MPI_OK(MPI_Publish_name("dynamic-test", MPI_INFO_NULL, port));
        int rc = MPI_Publish_name("dynamic-test", MPI_INFO_NULL, port);
        CHECK(error_class(rc) == MPI_ERR_SERVICE, "Publish_name twice: class %d", error_class(rc));
        if (size > 1) MPI_OK(MPI_Send(&go, 1, MPI_INT, half, 0, MPI_COMM_WORLD));
    } else if (rank == half) {
        /* Published before the message left rank 0: the job sees it. */
        MPI_OK(MPI_Recv(&go, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Lookup_name("dynamic-test", MPI_INFO_NULL, port));
    }
    if (size > 1) {
        /* Twice on the same port: a port serves one connection after another. */
        for (int round = 0; round < 2; ++round) {
            MPI_Comm inter;
            if (low)
                MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, mine, &inter));
            else
                MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, mine, &inter));
            check_inter(inter, low, half);
            if (round == 0)
                MPI_OK(MPI_Comm_disconnect(&inter));
            else
                MPI_OK(MPI_Comm_free(&inter));
        }
    }
    /* Errors, on every member of the calling communicator. */
    MPI_Comm inter = MPI_COMM_WORLD;
    int rc = MPI_Comm_connect("not a port", MPI_INFO_NULL, 0, mine, &inter);
    CHECK(error_class(rc) == MPI_ERR_PORT, "connect to a bad name: class %d", error_class(rc));
    rc = MPI_Comm_accept("fibermpi-port:0:999999", MPI_INFO_NULL, 0, mine, &inter);
    CHECK(error_class(rc) == MPI_ERR_PORT, "accept on a port never opened: class %d",
          error_class(rc));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char found[MPI_MAX_PORT_NAME] = "";
        MPI_OK(MPI_Lookup_name("dynamic-test", MPI_INFO_NULL, found));
        CHECK(strcmp(found, port) == 0, "Lookup_name: '%s', published '%s'", found, port);
        MPI_OK(MPI_Unpublish_name("dynamic-test", MPI_INFO_NULL, port));
        rc = MPI_Lookup_name("dynamic-test", MPI_INFO_NULL, found);
        CHECK(error_class(rc) == MPI_ERR_NAME, "Lookup_name after unpublish: class %d",
              error_class(rc));
        rc = MPI_Unpublish_name("dynamic-test", MPI_INFO_NULL, port);
        CHECK(error_class(rc) == MPI_ERR_SERVICE, "Unpublish_name twice: class %d",
              error_class(rc));
        MPI_OK(MPI_Close_port(port));
        rc = MPI_Close_port(port);
        CHECK(error_class(rc) == MPI_ERR_PORT, "Close_port twice: class %d", error_class(rc));
    }
    MPI_OK(MPI_Comm_free(&mine));
}

static void join(void) {
    /* A socket whose other end writes something else: refused. */
    int pair[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0, "socketpair");
    char junk[64];
    memset(junk, 'x', sizeof(junk));
    CHECK(write(pair[1], junk, sizeof(junk)) == (ssize_t)sizeof(junk), "write");
    MPI_Comm inter = MPI_COMM_WORLD;
    int rc = MPI_Comm_join(pair[0], &inter);
    CHECK(rc != MPI_SUCCESS && inter == MPI_COMM_NULL, "join with a stranger: rc %d", rc);
    close(pair[0]);
    close(pair[1]);
    if (size < 2 || rank > 1) return;

    int fd = -1;
    if (rank == 0) {
        int listener = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a;
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(a);
        CHECK(bind(listener, (struct sockaddr*)&a, sizeof(a)) == 0 && listen(listener, 1) == 0 &&
                  getsockname(listener, (struct sockaddr*)&a, &len) == 0,
              "listening socket");
        int tcp_port = ntohs(a.sin_port), connected = 0;
        MPI_OK(MPI_Send(&tcp_port, 1, MPI_INT, 1, 1, MPI_COMM_WORLD));
        /* accept() only once rank 1 has connected: a blocking call outside
         * MPI holds the VP, which rank 1 may share. */
        MPI_OK(MPI_Recv(&connected, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        fd = accept(listener, NULL, NULL);
        close(listener);
    } else {
        int tcp_port = 0;
        MPI_OK(MPI_Recv(&tcp_port, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        struct sockaddr_in a;
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons((unsigned short)tcp_port);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(connect(fd, (struct sockaddr*)&a, sizeof(a)) == 0, "connect to rank 0");
        MPI_OK(MPI_Send(&tcp_port, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
    }
    CHECK(fd >= 0, "no socket");
    MPI_OK(MPI_Comm_join(fd, &inter));
    int rsize = 0, other = -1;
    MPI_OK(MPI_Comm_remote_size(inter, &rsize));
    CHECK(rsize == 1, "join: remote size %d", rsize);
    MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 2, &other, 1, MPI_INT, 0, 2, inter,
                        MPI_STATUS_IGNORE));
    CHECK(other == 1 - rank, "join: the other end is world rank %d", other);
    MPI_OK(MPI_Comm_free(&inter));
    close(fd);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    spawn_fails();
    ports();
    join();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("dynamic: OK\n");
    MPI_Finalize();
    return 0;
}
