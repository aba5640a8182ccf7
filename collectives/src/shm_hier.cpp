// Hierarchical composition (shm_hier.hpp).
#include "shm_hier.hpp"

namespace mpc::coll::shm {
namespace {

Datatype* mut(const mpi::Datatype* t) {
    return const_cast<Datatype*>(t);
}
const void* send_of(const Movement& m) {
    return m.in_place ? MPI_IN_PLACE : m.send.buf;
}

}  // namespace

int hier_gather(Comm* c, View&, const Movement& m) {
    if (m.varying)
        return run_blocking(make_gatherv(send_of(m), m.send.count, mut(m.send.type),
                                         const_cast<void*>(m.recv.buf), m.recv.counts,
                                         m.recv.displs, mut(m.recv.type), m.root, c));
    return run_blocking(make_gather(send_of(m), m.send.count, mut(m.send.type),
                                    const_cast<void*>(m.recv.buf), m.recv.count, mut(m.recv.type),
                                    m.root, c));
}

int hier_scatter(Comm* c, View&, const Movement& m) {
    void* recvbuf = m.in_place ? MPI_IN_PLACE : const_cast<void*>(m.recv.buf);
    if (m.varying)
        return run_blocking(make_scatterv(m.send.buf, m.send.counts, m.send.displs,
                                          mut(m.send.type), recvbuf, m.recv.count, mut(m.recv.type),
                                          m.root, c));
    return run_blocking(make_scatter(m.send.buf, m.send.count, mut(m.send.type), recvbuf,
                                     m.recv.count, mut(m.recv.type), m.root, c));
}

int hier_allgather(Comm* c, View&, const Movement& m) {
    void* recvbuf = const_cast<void*>(m.recv.buf);
    if (m.recv.form == Blocks::V)
        return run_blocking(make_allgatherv(send_of(m), m.send.count, mut(m.send.type), recvbuf,
                                            m.recv.counts, m.recv.displs, mut(m.recv.type), c));
    return run_blocking(make_allgather(send_of(m), m.send.count, mut(m.send.type), recvbuf,
                                       m.recv.count, mut(m.recv.type), c));
}

int hier_alltoall(Comm* c, View&, const Movement& m) {
    return run_blocking(make_alltoall(send_of(m), m.send.count, mut(m.send.type),
                                      const_cast<void*>(m.recv.buf), m.recv.count, mut(m.recv.type),
                                      c));
}

int hier_reduce_scatter(Comm* c, View&, const Partial& r) {
    if (r.counts)
        return run_blocking(
            make_reduce_scatter(r.sendbuf, r.recvbuf, r.counts, mut(r.type), r.op, c));
    return run_blocking(
        make_reduce_scatter_block(r.sendbuf, r.recvbuf, r.count, mut(r.type), r.op, c));
}

int hier_scan(Comm* c, View&, const Partial& r) {
    if (r.kind == PartKind::Scan)
        return run_blocking(make_scan(r.sendbuf, r.recvbuf, r.count, mut(r.type), r.op, c));
    return run_blocking(make_exscan(r.sendbuf, r.recvbuf, r.count, mut(r.type), r.op, c));
}

}  // namespace mpc::coll::shm
