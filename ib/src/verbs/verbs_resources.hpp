// RAII for libibverbs and librdmacm objects, destroyed in the reverse order
// of the members that hold them.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <memory>

namespace mpc::ib::verbs {

struct VerbsDeleter {
    void operator()(ibv_pd* p) const { ibv_dealloc_pd(p); }
    void operator()(ibv_cq* p) const { ibv_destroy_cq(p); }
    void operator()(ibv_srq* p) const { ibv_destroy_srq(p); }
    void operator()(ibv_mr* p) const { ibv_dereg_mr(p); }
    void operator()(ibv_comp_channel* p) const { ibv_destroy_comp_channel(p); }
    void operator()(rdma_event_channel* p) const { rdma_destroy_event_channel(p); }
    // A connection's id owns its queue pair.
    void operator()(rdma_cm_id* p) const {
        if (p->qp) rdma_destroy_qp(p);
        rdma_destroy_id(p);
    }
};
template <typename T>
using VerbsPtr = std::unique_ptr<T, VerbsDeleter>;

}  // namespace mpc::ib::verbs
