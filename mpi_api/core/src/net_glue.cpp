#include <algorithm>

#include "intranode.hpp"
#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/net.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/progress.hpp"
#include "mpi_api/progress_engine.hpp"
#include "mpi_api/rank.hpp"
#include "mpi_api/request.hpp"
#include "mpi_api/tool_events.hpp"
#include "runtime/tools.hpp"

namespace mpc::mpi {
namespace {

ib::Network* g_net = nullptr;

// An unexpected message that is still (partly) in the network's hands.
struct NetIncoming : Incoming {
    ib::Unexpected* msg = nullptr;
};

ib::RecvTarget target_for(Request* r) {
    ib::RecvTarget t;
    t.contiguous =
        r->type->contiguous ? reinterpret_cast<char*>(contiguous_data(r->buf, *r->type)) : nullptr;
    t.capacity = receive_capacity(r);
    t.unpack = [](void* ctx, size_t offset, const void* data, size_t len) {
        auto* q = static_cast<Request*>(ctx);
        unpack(q->buf, static_cast<size_t>(q->count), *q->type, offset, data, len);
    };
    t.complete = [](void* ctx, const ib::MatchBits& bits, size_t bytes) {
        auto* q = static_cast<Request*>(ctx);
        finish_receive(q, bits.source, bits.tag, bytes, std::min(bytes, receive_capacity(q)));
    };
    t.ctx = r;
    return t;
}

void deliver_net(Incoming* m, Request* r) {
    auto* n = static_cast<NetIncoming*>(m);
    ib::Unexpected* msg = n->msg;
    delete n;
    g_net->deliver_unexpected(msg, target_for(r));
}

const IncomingOps kNetOps{deliver_net, "network"};

bool match(void*, int local, const ib::MatchBits& bits, size_t bytes, ib::Unexpected* msg,
           ib::RecvTarget* target) {
    RankState* dest = world().locals[static_cast<size_t>(local)];
    const Envelope e{bits.context, bits.source, bits.tag};
    MatchQueues& q = dest->match;
    q.lock.lock();
    if (Request* r = q.take_posted(e)) {
        q.lock.unlock();
        *target = target_for(r);
        return true;
    }
    auto* m = new NetIncoming();
    m->env = e;
    m->bytes = bytes;
    m->ops = &kNetOps;
    m->msg = msg;
    enqueue_unexpected(dest, m);
    q.lock.unlock();
    wake_prober(dest);
    return false;
}

void work_arrived(void*, int local) {
    RankState* dest = world().locals[static_cast<size_t>(local)];
    dest->doorbell.ring();
}

void remote_send(Request* r, int dest_world) {
    ib::SendSource src;
    src.bytes = static_cast<size_t>(r->count) * r->type->size;
    src.contiguous =
        r->type->contiguous ? reinterpret_cast<char*>(contiguous_data(r->buf, *r->type)) : nullptr;
    src.pack = [](void* ctx, size_t offset, void* out, size_t len) {
        auto* q = static_cast<Request*>(ctx);
        pack(q->buf, static_cast<size_t>(q->count), *q->type, offset, out, len);
    };
    src.complete = [](void* ctx) {
        auto* q = static_cast<Request*>(ctx);
        set_status(&q->status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
        complete(q);
    };
    src.ctx = r;
    const ib::MatchBits bits{r->context, r->comm->rank, r->tag};
    g_net->send(r->rank->world_rank, dest_world, bits, src, r->mode == SendMode::Synchronous);
}

const RemoteTransport kTransport{remote_send};

}  // namespace

ib::Upcalls network_upcalls() {
    ib::Upcalls u;
    u.match = match;
    u.work_arrived = work_arrived;
    u.thread_poll = [](void*) {
        bool did = false;
        for (RankState* r : world().locals) {
            if (intranode::drain(r, false)) {
                did = true;
                if (runtime::tools::g_transport.on()) count_steal(r);
                runtime::tools::raise(events::g_steal, r->local_index,
                                      events::Steal{r->local_index, -1});
            }
            did |= progress_rank(r);
        }
        return did;
    };
    return u;
}

void attach_network(ib::Network* net) {
    g_net = net;
    set_remote_transport(net ? &kTransport : nullptr);
}

ib::Network* network() { return g_net; }

void nudge_progress_thread() {
    if (g_net) g_net->nudge();
}

}  // namespace mpc::mpi
