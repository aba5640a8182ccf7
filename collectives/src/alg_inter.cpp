// Collectives on intercommunicators (MPI 3.1 section 5.2.2 and the
// "intercommunicator" paragraph of each operation).
//
// On an intercommunicator a peer index names a rank of the REMOTE group, so a
// schedule built on it only moves data between the two groups (on the
// intercommunicator's own collective context and tag sequence, which both
// groups advance together). Every algorithm here is "cross-only": a rank
// talks to remote ranks only. Where the result of one group must reach all
// ranks of the same group (Allreduce, Reduce_scatter*, Barrier), the group's
// rank 0 relays it through the remote group's rank 0, the only way back.
//
//  - Bcast, Scatter(v): the root sends to every remote rank.
//  - Gather(v), Reduce: every remote rank sends to the root; Reduce combines
//    in remote rank order, b0 op (b1 op (... op b(m-1))).
//  - Allgather(v), Alltoall(v,w): every rank exchanges directly with every
//    remote rank.
//  - Allreduce, Reduce_scatter(_block): every rank sends its vector to remote
//    rank 0, which reduces them (in rank order) into the result of its own
//    group; that rank keeps it and sends it to the other group's rank 0, which
//    forwards it to the rest of its group. Reduce_scatter* then keep a block.
//  - Barrier: every rank signals remote rank 0; a group's rank 0, once every
//    remote rank arrived, tells the remote rank 0, which releases the rest of
//    its group.
// Messages between two ranks match in construction order (schedule.hpp), and
// the builders below add them at both ends in the same order.
//
// The root argument (MPI_ROOT, MPI_PROC_NULL or a remote rank) and the counts
// are checked by the MPI layer; MPI_IN_PLACE is not allowed here.
#include <algorithm>

#include "builders.hpp"

namespace mpc::coll {
namespace {

int remote_n(const Comm* c) {
    return c->remote_size();
}

// Receives the count-element vector of every remote rank and combines them
// in remote rank order (valid for non-commutative operations): acc = b(m-1),
// then acc = b(j) op acc for j = m-2 .. 0. The other vectors go through
// kWindow scratch buffers, a receive into one waiting for the combination of
// its previous vector. Returns the working buffer holding the result and sets
// *done to the step producing it.
constexpr int kWindow = 4;
char* reduce_remote(Schedule& s, RedLayout& L, Step* done) {
    const int m = remote_n(s.comm());
    char* acc = L.alloc(L.count());
    Step prev = L.recv(acc, 0, L.count(), m - 1, {});
    std::vector<char*> slot(static_cast<size_t>(std::min(kWindow, m - 1)));
    for (char*& b : slot) b = L.alloc(L.count());
    std::vector<Step> combined(static_cast<size_t>(m), kNone);  // by remote rank
    for (int j = m - 2; j >= 0; --j) {
        char* b = slot[static_cast<size_t>(j % kWindow)];
        const Step freed =
            j + kWindow <= m - 2 ? combined[static_cast<size_t>(j + kWindow)] : kNone;
        const Step got = L.recv(b, 0, L.count(), j, {freed});
        prev = L.calc(b, acc, 0, L.count(), {got, prev});
        combined[static_cast<size_t>(j)] = prev;
    }
    *done = prev;
    return acc;
}

// The reduction, over the remote group, of count-element vectors, at every
// rank of the local group (see the file comment). Returns the working buffer
// holding it and sets *done to the step producing it.
char* all_reduce_remote(Schedule& s, RedLayout& L, const void* sendbuf, Step* done) {
    Comm* c = s.comm();
    const int n = c->size, m = remote_n(c);
    Step ready;
    char* mine = L.input(sendbuf, &ready);
    L.send(mine, 0, L.count(), 0, {ready});  // my contribution, to remote rank 0
    if (c->rank != 0) {
        // The result, relayed by remote rank 0.
        char* res = L.alloc(L.count());
        *done = L.recv(res, 0, L.count(), 0, {});
        return res;
    }
    Step reduced;
    char* res = reduce_remote(s, L, &reduced);
    // My group's result, to remote rank 0 for the rest of my group.
    if (n > 1) L.send(res, 0, L.count(), 0, {reduced});
    // The remote group's result, from remote rank 0, for the rest of it.
    if (m > 1) {
        char* relay = L.alloc(L.count());
        const Step got = L.recv(relay, 0, L.count(), 0, {});
        for (int j = 1; j < m; ++j) L.send(relay, 0, L.count(), j, {got});
    }
    *done = reduced;
    return res;
}

// A buffer for zero-byte messages.
char* no_data() {
    static char dummy;
    return &dummy;
}

}  // namespace

SchedulePtr make_inter_barrier(Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const int n = c->size, m = remote_n(c);
    Datatype* bt = byte_type();
    s->send(no_data(), 0, bt, 0);  // arrived, to remote rank 0
    if (c->rank != 0) {
        s->recv(no_data(), 0, bt, 0);  // released by remote rank 0
        return s;
    }
    std::vector<Step> arrived;
    for (int j = 0; j < m; ++j) arrived.push_back(s->recv(no_data(), 0, bt, j));
    const Step all = join_all(*s, arrived);
    // The remote group arrived: remote rank 0 releases the rest of my group.
    if (n > 1) s->send(no_data(), 0, bt, 0, {all});
    // My group arrived (told by remote rank 0): release the rest of the remote group.
    if (m > 1) {
        const Step got = s->recv(no_data(), 0, bt, 0);
        for (int j = 1; j < m; ++j) s->send(no_data(), 0, bt, j, {got});
    }
    return s;
}

SchedulePtr make_inter_bcast(void* buf, int count, Datatype* type, int root, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    if (root == MPI_ROOT) {
        for (int j = 0; j < remote_n(c); ++j) s->send(buf, count, type, j);
    } else if (root != MPI_PROC_NULL) {
        s->recv(buf, count, type, root);
    }
    return s;
}

SchedulePtr make_inter_gather(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                              int recvcount, Datatype* recvtype, int root, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    if (root == MPI_ROOT) {
        for (int j = 0; j < remote_n(c); ++j)
            s->recv(block_at(recvbuf, j, recvcount, recvtype), recvcount, recvtype, j);
    } else if (root != MPI_PROC_NULL) {
        s->send(sendbuf, sendcount, sendtype, root);
    }
    return s;
}

SchedulePtr make_inter_gatherv(const void* sendbuf, int sendcount, Datatype* sendtype,
                               void* recvbuf, const int* recvcounts, const int* displs,
                               Datatype* recvtype, int root, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    if (root == MPI_ROOT) {
        for (int j = 0; j < remote_n(c); ++j)
            s->recv(at(recvbuf, displs[j] * recvtype->extent), recvcounts[j], recvtype, j);
    } else if (root != MPI_PROC_NULL) {
        s->send(sendbuf, sendcount, sendtype, root);
    }
    return s;
}

SchedulePtr make_inter_scatter(const void* sendbuf, int sendcount, Datatype* sendtype,
                               void* recvbuf, int recvcount, Datatype* recvtype, int root,
                               Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    if (root == MPI_ROOT) {
        for (int j = 0; j < remote_n(c); ++j)
            s->send(block_at(sendbuf, j, sendcount, sendtype), sendcount, sendtype, j);
    } else if (root != MPI_PROC_NULL) {
        s->recv(recvbuf, recvcount, recvtype, root);
    }
    return s;
}

SchedulePtr make_inter_scatterv(const void* sendbuf, const int* sendcounts, const int* displs,
                                Datatype* sendtype, void* recvbuf, int recvcount,
                                Datatype* recvtype, int root, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    if (root == MPI_ROOT) {
        for (int j = 0; j < remote_n(c); ++j)
            s->send(at(sendbuf, displs[j] * sendtype->extent), sendcounts[j], sendtype, j);
    } else if (root != MPI_PROC_NULL) {
        s->recv(recvbuf, recvcount, recvtype, root);
    }
    return s;
}

SchedulePtr make_inter_allgather(const void* sendbuf, int sendcount, Datatype* sendtype,
                                 void* recvbuf, int recvcount, Datatype* recvtype, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const int m = remote_n(c);
    for (int j = 0; j < m; ++j)
        s->recv(block_at(recvbuf, j, recvcount, recvtype), recvcount, recvtype, j);
    // Starting at a different remote rank at each rank.
    for (int k = 0; k < m; ++k) s->send(sendbuf, sendcount, sendtype, (c->rank + k) % m);
    return s;
}

SchedulePtr make_inter_allgatherv(const void* sendbuf, int sendcount, Datatype* sendtype,
                                  void* recvbuf, const int* recvcounts, const int* displs,
                                  Datatype* recvtype, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const int m = remote_n(c);
    for (int j = 0; j < m; ++j)
        s->recv(at(recvbuf, displs[j] * recvtype->extent), recvcounts[j], recvtype, j);
    for (int k = 0; k < m; ++k) s->send(sendbuf, sendcount, sendtype, (c->rank + k) % m);
    return s;
}

SchedulePtr make_inter_alltoall(const void* sendbuf, int sendcount, Datatype* sendtype,
                                void* recvbuf, int recvcount, Datatype* recvtype, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const int m = remote_n(c);
    for (int j = 0; j < m; ++j)
        s->recv(block_at(recvbuf, j, recvcount, recvtype), recvcount, recvtype, j);
    for (int k = 0; k < m; ++k) {
        const int j = (c->rank + k) % m;
        s->send(block_at(sendbuf, j, sendcount, sendtype), sendcount, sendtype, j);
    }
    return s;
}

SchedulePtr make_inter_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                                 Datatype* sendtype, void* recvbuf, const int* recvcounts,
                                 const int* rdispls, Datatype* recvtype, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const int m = remote_n(c);
    for (int j = 0; j < m; ++j)
        s->recv(at(recvbuf, rdispls[j] * recvtype->extent), recvcounts[j], recvtype, j);
    for (int k = 0; k < m; ++k) {
        const int j = (c->rank + k) % m;
        s->send(at(sendbuf, sdispls[j] * sendtype->extent), sendcounts[j], sendtype, j);
    }
    return s;
}

SchedulePtr make_inter_alltoallw(const void* sendbuf, const int* sendcounts,
                                 const MPI_Aint* sdispls, Datatype* const* sendtypes, void* recvbuf,
                                 const int* recvcounts, const MPI_Aint* rdispls,
                                 Datatype* const* recvtypes, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    const int m = remote_n(c);
    for (int j = 0; j < m; ++j) s->recv(at(recvbuf, rdispls[j]), recvcounts[j], recvtypes[j], j);
    for (int k = 0; k < m; ++k) {
        const int j = (c->rank + k) % m;
        s->send(at(sendbuf, sdispls[j]), sendcounts[j], sendtypes[j], j);
    }
    return s;
}

SchedulePtr make_inter_reduce(const void* sendbuf, void* recvbuf, int count, Datatype* type,
                              const Op* op, int root, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    if (root == MPI_PROC_NULL) return s;
    RedLayout L(*s, count, type, op);
    if (root == MPI_ROOT) {
        Step done;
        char* res = reduce_remote(*s, L, &done);
        L.store(res, recvbuf, {done});
        return s;
    }
    Step ready;
    char* mine = L.input(sendbuf, &ready);
    L.send(mine, 0, count, root, {ready});
    return s;
}

SchedulePtr make_inter_allreduce(const void* sendbuf, void* recvbuf, int count, Datatype* type,
                                 const Op* op, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    RedLayout L(*s, count, type, op);
    Step done;
    char* res = all_reduce_remote(*s, L, sendbuf, &done);
    L.store(res, recvbuf, {done});
    return s;
}

SchedulePtr make_inter_reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts,
                                      Datatype* type, const Op* op, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    int total = 0, first = 0;
    for (int i = 0; i < c->size; ++i) {
        if (i == c->rank) first = total;
        total += recvcounts[i];
    }
    RedLayout L(*s, total, type, op);
    Step done;
    char* res = all_reduce_remote(*s, L, sendbuf, &done);
    if (recvcounts[c->rank] > 0) L.store_range(res, first, recvcounts[c->rank], recvbuf, {done});
    return s;
}

SchedulePtr make_inter_reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                            Datatype* type, const Op* op, Comm* c) {
    auto s = std::make_unique<Schedule>(c);
    RedLayout L(*s, recvcount * c->size, type, op);
    Step done;
    char* res = all_reduce_remote(*s, L, sendbuf, &done);
    if (recvcount > 0) L.store_range(res, recvcount * c->rank, recvcount, recvbuf, {done});
    return s;
}

}  // namespace mpc::coll
