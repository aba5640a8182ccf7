// The large-count collectives (MPI 4.0, MPI_X_c): MPI_Count counts, MPI_Aint
// displacements in the v and w forms.
//
// The collectives room counts elements in int. Rather than widen every
// schedule, a large-count call takes the int path unchanged when its counts
// fit an int (the usual case: no cost beyond a compare). Otherwise:
//  - data movement describes the n elements of a block as one element of a
//    contiguous type of n elements (type_contiguous_c), so the int call moves
//    the same bytes with count 1 (the type map, hence the signature, is the
//    same: it matches int-count peers too). Nonblocking schedules hold the
//    type they use, so it is freed as soon as the call returns.
//  - reductions (blocking) run in pieces of at most 2^30 elements: the
//    predefined operations work element by element, so pieces of the vector
//    reduce independently. Nonblocking and persistent reductions beyond an
//    int return MPI_ERR_COUNT (a sequence of pieces cannot hide behind one
//    request here); so do v and w collectives whose counts or displacements
//    leave int range (README, Limits).
// A negative count never reaches the int path as something else: it becomes
// -1 there, which the int path reports as MPI_ERR_COUNT where it matters.
// This file must never truncate a count silently.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "coll_entry.hpp"
#include "coll_large.hpp"

using namespace mpc::mpi;
using namespace mpc::mpi::entry;
using namespace mpc::mpi::large;
namespace coll = mpc::coll;

namespace {

// Elements per piece of a reduction too large for an int count.
constexpr MPI_Count kPiece = MPI_Count{1} << 30;

// Number of blocks a v collective's arrays hold on comm (its remote group),
// or 0 when the handle is invalid (the int path then reports it).
int peers(MPI_Comm comm) {
    Comm* c = nullptr;
    if (check_comm(comm, &c)) return 0;
    return c->remote_size();
}

// True where the root's arrays of a rooted v collective are significant.
bool at_root(MPI_Comm comm, int root) {
    Comm* c = nullptr;
    if (check_comm(comm, &c)) return false;
    return c->is_inter() ? root == MPI_ROOT : c->rank == root;
}


// The byte address `elements` elements of type dt past buf (MPI_IN_PLACE
// stays itself). Integer arithmetic: buf may be MPI_BOTTOM.
const void* advance(const void* buf, MPI_Count elements, MPI_Aint extent) {
    if (buf == MPI_IN_PLACE) return buf;
    return reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(buf) +
                                         static_cast<uintptr_t>(elements * extent));
}
void* advance(void* buf, MPI_Count elements, MPI_Aint extent) {
    return const_cast<void*>(advance(static_cast<const void*>(buf), elements, extent));
}

// A reduction of count elements: the int path at once when count fits, in
// pieces when blocking, MPI_ERR_COUNT otherwise. f(offset, n) reduces
// elements [offset, offset + n).
template <class F>
int reduction(MPI_Count count, MPI_Datatype datatype, MPI_Comm comm, const Run& run, F&& f) {
    if (count < 0) return f(0, -1);
    if (count <= INT_MAX) return f(0, static_cast<int>(count));
    if (!run.blocking)
        return raise_on(comm, make_error(MPI_ERR_COUNT,
                                         "a nonblocking or persistent reduction of %lld elements: "
                                         "only the blocking forms reduce more than an int counts",
                                         count));
    Datatype* t = datatype_lookup(datatype);
    if (!t || !t->committed) return f(0, 1);  // the int path reports the type
    for (MPI_Count off = 0; off < count; off += kPiece)
        if (int e = f(off, static_cast<int>(std::min(kPiece, count - off)))) return e;
    return MPI_SUCCESS;
}

MPI_Aint extent_of(MPI_Datatype dt) {
    const Datatype* t = datatype_lookup(dt);
    return t ? t->extent : 0;
}

// ---- The operations, for the three kinds of Run -----------------------------

int bcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
            Run run) {
    Described d(count, datatype);
    if (d.error) return raise_on(comm, d.error);
    return bcast(buffer, d.count, d.type, root, comm, run);
}

// Gather, Scatter, Allgather, Alltoall: one block size per side.
using Rooted = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm,
                       Run);
using Unrooted = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm, Run);

int rooted_c(Rooted fn, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
             Run run) {
    Described s(sendcount, sendtype), r(recvcount, recvtype);
    if (s.error || r.error) return raise_on(comm, s.error ? s.error : r.error);
    return fn(sendbuf, s.count, s.type, recvbuf, r.count, r.type, root, comm, run);
}

int unrooted_c(Unrooted fn, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
               void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, Run run) {
    Described s(sendcount, sendtype), r(recvcount, recvtype);
    if (s.error || r.error) return raise_on(comm, s.error ? s.error : r.error);
    return fn(sendbuf, s.count, s.type, recvbuf, r.count, r.type, comm, run);
}

int gatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
              const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
              int root, MPI_Comm comm, Run run) {
    Described s(sendcount, sendtype);
    if (s.error) return raise_on(comm, s.error);
    IntBlocks b;
    if (at_root(comm, root)) b = int_blocks(recvcounts, displs, peers(comm));
    if (!b.fits) return too_large(comm, "MPI_Gatherv_c");
    return with_blocks(&b, nullptr, run, [&](IntBlocks* k, IntBlocks*) {
        return gatherv(sendbuf, s.count, s.type, recvbuf, k->c(), k->d(), recvtype, root, comm,
                       run);
    });
}

int scatterv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
               MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
               int root, MPI_Comm comm, Run run) {
    Described r(recvcount, recvtype);
    if (r.error) return raise_on(comm, r.error);
    IntBlocks b;
    if (at_root(comm, root)) b = int_blocks(sendcounts, displs, peers(comm));
    if (!b.fits) return too_large(comm, "MPI_Scatterv_c");
    return with_blocks(&b, nullptr, run, [&](IntBlocks* k, IntBlocks*) {
        return scatterv(sendbuf, k->c(), k->d(), sendtype, recvbuf, r.count, r.type, root, comm,
                        run);
    });
}

int allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                 MPI_Comm comm, Run run) {
    Described s(sendcount, sendtype);
    if (s.error) return raise_on(comm, s.error);
    IntBlocks b = int_blocks(recvcounts, displs, peers(comm));
    if (!b.fits) return too_large(comm, "MPI_Allgatherv_c");
    return with_blocks(&b, nullptr, run, [&](IntBlocks* k, IntBlocks*) {
        return allgatherv(sendbuf, s.count, s.type, recvbuf, k->c(), k->d(), recvtype, comm, run);
    });
}

int alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, Run run) {
    const int n = peers(comm);
    IntBlocks s, r = int_blocks(recvcounts, rdispls, n);
    if (sendbuf != MPI_IN_PLACE) s = int_blocks(sendcounts, sdispls, n);
    if (!s.fits || !r.fits) return too_large(comm, "MPI_Alltoallv_c");
    return with_blocks(&s, &r, run, [&](IntBlocks* ks, IntBlocks* kr) {
        return alltoallv(sendbuf, ks->c(), ks->d(), sendtype, recvbuf, kr->c(), kr->d(), recvtype,
                         comm, run);
    });
}

int alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, Run run) {
    const int n = peers(comm);
    IntBlocks s, r = int_blocks(recvcounts, rdispls, n);
    if (sendbuf != MPI_IN_PLACE) s = int_blocks(sendcounts, sdispls, n);
    if (!s.fits || !r.fits) return too_large(comm, "MPI_Alltoallw_c");
    return with_blocks(&s, &r, run, [&](IntBlocks* ks, IntBlocks* kr) {
        return alltoallw(sendbuf, ks->c(), ks->d(), sendtypes, recvbuf, kr->c(), kr->d(),
                         recvtypes, comm, run);
    });
}

int reduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
             int root, MPI_Comm comm, Run run) {
    const MPI_Aint ext = extent_of(datatype);
    return reduction(count, datatype, comm, run, [&](MPI_Count off, int n) {
        return reduce(advance(sendbuf, off, ext), advance(recvbuf, off, ext), n, datatype, op, root,
                      comm, run);
    });
}

int all_ranks_c(Builder build, const void* sendbuf, void* recvbuf, MPI_Count count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, Run run) {
    const MPI_Aint ext = extent_of(datatype);
    return reduction(count, datatype, comm, run, [&](MPI_Count off, int n) {
        return all_ranks_reduction(build, advance(sendbuf, off, ext), advance(recvbuf, off, ext), n,
                                   datatype, op, comm, run);
    });
}

int reduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, Run run) {
    Comm* c = nullptr;
    IntBlocks b;
    if (!check_comm(comm, &c)) b = int_counts(recvcounts, c->size);
    if (!b.fits) return too_large(comm, "MPI_Reduce_scatter_c");
    return with_blocks(&b, nullptr, run, [&](IntBlocks* k, IntBlocks*) {
        return reduce_scatter(sendbuf, recvbuf, k->c(), datatype, op, comm, run);
    });
}

int reduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, Run run) {
    if (recvcount > INT_MAX) return too_large(comm, "MPI_Reduce_scatter_block_c");
    return reduce_scatter_block(sendbuf, recvbuf, recvcount < 0 ? -1 : static_cast<int>(recvcount),
                                datatype, op, comm, run);
}

}  // namespace

extern "C" {

// Blocking (B), nonblocking (I) and persistent (P) entry points of each
// operation, from one parameter list: the macros only spell the three
// prototypes the standard gives.
#define MPC_COLL_C(Name, IName, Params, Args)                                         \
    int PMPI_##Name##_c Params {                                                      \
        MPC_ENTER_ACTIVE(Name##_c);                                                   \
        return Args(kBlocking);                                                       \
    }                                                                                 \
    int PMPI_##IName##_c(MPC_STRIP Params, MPI_Request* request) {                    \
        MPC_ENTER_ACTIVE(IName##_c);                                                  \
        return Args(nonblocking(request));                                            \
    }                                                                                 \
    int PMPI_##Name##_init_c(MPC_STRIP Params, MPI_Info info, MPI_Request* request) { \
        MPC_ENTER_ACTIVE(Name##_init_c);                                              \
        return Args(persistent_run(request, info));                                   \
    }
#define MPC_STRIP(...) __VA_ARGS__

#define BCAST_ARGS(run) bcast_c(buffer, count, datatype, root, comm, run)
MPC_COLL_C(Bcast, Ibcast,
           (void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm),
           BCAST_ARGS)

#define GATHER_ARGS(run) \
    rooted_c(gather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, run)
MPC_COLL_C(Gather, Igather,
           (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
            MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
           GATHER_ARGS)

#define SCATTER_ARGS(run) \
    rooted_c(scatter, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, run)
MPC_COLL_C(Scatter, Iscatter,
           (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
            MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
           SCATTER_ARGS)

#define ALLGATHER_ARGS(run) \
    unrooted_c(allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, run)
MPC_COLL_C(Allgather, Iallgather,
           (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
            MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
           ALLGATHER_ARGS)

#define ALLTOALL_ARGS(run) \
    unrooted_c(alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, run)
MPC_COLL_C(Alltoall, Ialltoall,
           (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
            MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
           ALLTOALL_ARGS)

#define GATHERV_ARGS(run) \
    gatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, run)
MPC_COLL_C(Gatherv, Igatherv,
           (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
            const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
            MPI_Comm comm),
           GATHERV_ARGS)

#define SCATTERV_ARGS(run) \
    scatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, run)
MPC_COLL_C(Scatterv, Iscatterv,
           (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
            MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
            int root, MPI_Comm comm),
           SCATTERV_ARGS)

#define ALLGATHERV_ARGS(run) \
    allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, run)
MPC_COLL_C(Allgatherv, Iallgatherv,
           (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
            const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
            MPI_Comm comm),
           ALLGATHERV_ARGS)

#define ALLTOALLV_ARGS(run)                                                                     \
    alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, \
                comm, run)
MPC_COLL_C(Alltoallv, Ialltoallv,
           (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
            MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
            const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
           ALLTOALLV_ARGS)

#define ALLTOALLW_ARGS(run)                                                                       \
    alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, \
                comm, run)
MPC_COLL_C(Alltoallw, Ialltoallw,
           (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
            const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
           ALLTOALLW_ARGS)

#define REDUCE_ARGS(run) reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, run)
MPC_COLL_C(Reduce, Ireduce,
           (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
            int root, MPI_Comm comm),
           REDUCE_ARGS)

#define ALLREDUCE_ARGS(run) \
    all_ranks_c(coll::make_allreduce, sendbuf, recvbuf, count, datatype, op, comm, run)
MPC_COLL_C(Allreduce, Iallreduce,
           (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
            MPI_Comm comm),
           ALLREDUCE_ARGS)

#define SCAN_ARGS(run) \
    all_ranks_c(coll::make_scan, sendbuf, recvbuf, count, datatype, op, comm, run)
MPC_COLL_C(Scan, Iscan,
           (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
            MPI_Comm comm),
           SCAN_ARGS)

#define EXSCAN_ARGS(run) \
    all_ranks_c(coll::make_exscan, sendbuf, recvbuf, count, datatype, op, comm, run)
MPC_COLL_C(Exscan, Iexscan,
           (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
            MPI_Comm comm),
           EXSCAN_ARGS)

#define REDUCE_SCATTER_ARGS(run) \
    reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, run)
MPC_COLL_C(Reduce_scatter, Ireduce_scatter,
           (const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
            MPI_Op op, MPI_Comm comm),
           REDUCE_SCATTER_ARGS)

#define REDUCE_SCATTER_BLOCK_ARGS(run) \
    reduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm, run)
MPC_COLL_C(Reduce_scatter_block, Ireduce_scatter_block,
           (const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
            MPI_Op op, MPI_Comm comm),
           REDUCE_SCATTER_BLOCK_ARGS)

#undef MPC_COLL_C
#undef MPC_STRIP

int PMPI_Reduce_local_c(const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op) {
    MPC_ENTER_ACTIVE(Reduce_local_c);
    const MPI_Aint ext = extent_of(datatype);
    return reduction(count, datatype, MPI_COMM_NULL, kBlocking, [&](MPI_Count off, int n) {
        return reduce_local(advance(inbuf, off, ext), advance(inoutbuf, off, ext), n, datatype, op);
    });
}

}  // extern "C"

#define MPC_WEAK_COLL_C(Name, IName) \
    MPC_WEAK(MPI_##Name##_c)         \
    MPC_WEAK(MPI_##IName##_c)        \
    MPC_WEAK(MPI_##Name##_init_c)
MPC_WEAK_COLL_C(Bcast, Ibcast)
MPC_WEAK_COLL_C(Gather, Igather)
MPC_WEAK_COLL_C(Scatter, Iscatter)
MPC_WEAK_COLL_C(Allgather, Iallgather)
MPC_WEAK_COLL_C(Alltoall, Ialltoall)
MPC_WEAK_COLL_C(Gatherv, Igatherv)
MPC_WEAK_COLL_C(Scatterv, Iscatterv)
MPC_WEAK_COLL_C(Allgatherv, Iallgatherv)
MPC_WEAK_COLL_C(Alltoallv, Ialltoallv)
MPC_WEAK_COLL_C(Alltoallw, Ialltoallw)
MPC_WEAK_COLL_C(Reduce, Ireduce)
MPC_WEAK_COLL_C(Allreduce, Iallreduce)
MPC_WEAK_COLL_C(Scan, Iscan)
MPC_WEAK_COLL_C(Exscan, Iexscan)
MPC_WEAK_COLL_C(Reduce_scatter, Ireduce_scatter)
MPC_WEAK_COLL_C(Reduce_scatter_block, Ireduce_scatter_block)
MPC_WEAK(MPI_Reduce_local_c)
