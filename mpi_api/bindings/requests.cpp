#include "requests.hpp"

#include <cstring>
#include <memory>
#include <vector>

#include "collectives/persistent.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/partitioned.hpp"
#include "mpi_api/progress.hpp"
#include "mpi_api/progress_engine.hpp"
#include "mpi_api/session.hpp"
#include "runtime/sync.hpp"

namespace mpc::mpi {

int check_p2p(Request::Kind kind, const void* buf, MPI_Count count, MPI_Datatype datatype, int peer,
              int tag, MPI_Comm comm, Comm** comm_out, Datatype** type_out) {
    Comm* c = nullptr;
    *comm_out = nullptr;
    if (int e = check_comm(comm, &c)) return e;
    *comm_out = c;
    if (int e = check_count(count)) return e;
    if (int e = check_type(datatype, type_out)) return e;
    if (int e = check_buffer(buf, count, *type_out)) return e;
    if (kind == Request::Kind::Send) {
        if (int e = check_send_rank(c, peer)) return e;
        if (int e = check_tag(tag, false)) return e;
    } else {
        if (int e = check_recv_rank(c, peer)) return e;
        if (int e = check_tag(tag, true)) return e;
    }
    return MPI_SUCCESS;
}

int start_other(Request* r) {
    if (r->kind == Request::Kind::Collective) {
        mpc::coll::persistent_start(r);
        return MPI_SUCCESS;
    }
    return partitioned_start(r);
}

void start_null(Request* r) {
    set_status(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
    complete(r);
}

bool request_inactive(MPI_Request handle, Request* r) {
    return handle == MPI_REQUEST_NULL || (r && r->persistent && !r->active);
}

int grequest_query(Request* r, MPI_Status* status) {
    // query_fn always gets a status to fill, even for MPI_STATUS_IGNORE.
    MPI_Status s;
    set_empty_status(&s);
    const int err = r->query_fn ? r->query_fn(r->extra_state, &s) : MPI_SUCCESS;
    status_out(status, s);
    return err;
}

int finish_request(Request* r, MPI_Request* handle, MPI_Status* status) {
    if (r->kind == Request::Kind::Generalized) {
        // The user's callbacks make its status, then clean up (MPI 3.1
        // section 12.2): the first error of the two is the call's.
        int err = grequest_query(r, status);
        const int freed = grequest_free(r);
        if (err == MPI_SUCCESS) err = freed;
        request_release(r);
        *handle = MPI_REQUEST_NULL;
        return err;
    }
    int err = r->status.MPI_ERROR;
    status_out(status, r->status);
    if (r->persistent) {
        r->active = false;
    } else {
        request_release(r);
        *handle = MPI_REQUEST_NULL;
    }
    return err;
}

// ---- Buffered sends ------------------------------------------------------------
//
// A buffer is carved into blocks, one per message in flight: the message is
// packed into its block and sent from there by an internal request; blocks
// are reclaimed when their request has completed. An MPI_BUFFER_AUTOMATIC
// buffer gives each message a heap block of its own instead. MPI 4.1: a
// buffer may belong to the rank (MPI_Buffer_attach), a communicator or a
// session; the holders share it with the nonblocking flushes that watch it.

struct BsendBuffer {
    char* base = nullptr;
    size_t size = 0;
    bool automatic = false;
    uint64_t next_seq = 0;  // blocks are numbered: a flush waits for those before it
    struct Block {
        size_t offset, length;
        Request* request;  // internal send from the block
        uint64_t seq;
        std::unique_ptr<char[]> owned;  // automatic buffers: the block itself
    };
    std::vector<Block> blocks;  // sorted by offset (by seq when automatic)
    runtime::SpinLock lock;

    void reclaim() {
        std::erase_if(blocks, [](const Block& b) {
            if (!b.request->is_complete()) return false;
            request_release(b.request);
            return true;
        });
    }
    // First fit; returns the block's memory or nullptr.
    char* allocate(size_t length, Request* request) {
        if (automatic) {
            blocks.push_back(Block{0, length, request, next_seq++,
                                   std::make_unique<char[]>(std::max<size_t>(length, 1))});
            return blocks.back().owned.get();
        }
        size_t at = 0;
        size_t i = 0;
        for (; i < blocks.size(); ++i) {
            if (blocks[i].offset - at >= length) break;
            at = blocks[i].offset + blocks[i].length;
        }
        if (i == blocks.size() && size - at < length) return nullptr;
        blocks.insert(blocks.begin() + static_cast<long>(i),
                      Block{at, length, request, next_seq++, nullptr});
        return base + at;
    }
    // True while a block numbered below upto is in flight (any thread).
    bool pending_before(uint64_t upto) {
        lock.lock();
        bool pending = false;
        for (const Block& b : blocks) pending = pending || (b.seq < upto && !b.request->is_complete());
        lock.unlock();
        return pending;
    }
};

namespace {

// MPI 4.1 section 3.6: the communicator's buffer, else its session's, else
// the rank's.
BsendBuffer* buffer_for(RankState* me, const Comm* c) {
    if (c->bsend) return c->bsend.get();
    if (c->session != MPI_SESSION_NULL)
        if (Session* s = session_lookup(c->session, me); s && s->bsend) return s->bsend.get();
    return me->bsend.get();
}

}  // namespace

int bsend_start(Request* r) {
    RankState* me = r->rank;
    BsendBuffer* b = buffer_for(me, r->comm);
    const size_t bytes = static_cast<size_t>(r->count) * r->type->size;
    // What the standard tells users to provide per message (MPI 3.1 section
    // 3.6.1): the packed size plus MPI_BSEND_OVERHEAD, not a byte more (the
    // block's bookkeeping lives outside the buffer, and packed data needs no
    // alignment), so a buffer of exactly that takes the message.
    const size_t need = bytes + MPI_BSEND_OVERHEAD;
    if (!b) return make_error(MPI_ERR_BUFFER, "buffered send of %zu bytes without an attached buffer", bytes);
    Request* inner = request_allocate(Request::Kind::Send, me, r->comm);
    b->lock.lock();
    b->reclaim();
    char* block = b->allocate(need, inner);
    b->lock.unlock();
    if (!block) {
        request_release(inner);
        return make_error(MPI_ERR_BUFFER,
                          "the attached buffer (%zu bytes) has no room for a %zu-byte buffered "
                          "send (each needs its size plus MPI_BSEND_OVERHEAD)",
                          b->size, bytes);
    }

    pack(r->buf, static_cast<size_t>(r->count), *r->type, 0, block, bytes);
    inner->buf = block;
    inner->count = static_cast<MPI_Count>(bytes);
    inner->type = datatype_lookup(MPI_BYTE);
    inner->peer = r->peer;
    inner->tag = r->tag;
    inner->context = r->context;
    inner->active = true;
    inner->notify = me;  // a nonblocking flush may be waiting for it
    p2p_start_send(inner);
    // The user's request is done: the data left the user's buffer.
    set_status(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
    complete(r);
    return MPI_SUCCESS;
}

int bsend_attach(std::shared_ptr<BsendBuffer>& slot, void* buffer, MPI_Count size) {
    const bool automatic = buffer == MPI_BUFFER_AUTOMATIC;
    if (!automatic && size < 0) return make_error(MPI_ERR_ARG, "negative buffer size %lld", static_cast<long long>(size));
    if (!automatic && !buffer && size > 0) return make_error(MPI_ERR_BUFFER, "NULL buffer");
    if (slot) return make_error(MPI_ERR_BUFFER, "a buffer is already attached");
    slot = std::make_shared<BsendBuffer>();
    slot->automatic = automatic;
    if (!automatic) {
        slot->base = static_cast<char*>(buffer);
        slot->size = static_cast<size_t>(size);
    }
    return MPI_SUCCESS;
}

void bsend_flush(BsendBuffer* b) {
    if (!b) return;
    b->lock.lock();
    const uint64_t upto = b->next_seq;
    b->lock.unlock();
    for (;;) {
        b->lock.lock();
        b->reclaim();
        Request* pending = nullptr;
        for (const BsendBuffer::Block& k : b->blocks)
            if (k.seq < upto) {
                pending = k.request;
                break;
            }
        b->lock.unlock();
        if (!pending) return;
        wait_complete(pending);
    }
}

int bsend_detach(std::shared_ptr<BsendBuffer>& slot, void* buffer_addr, MPI_Count* size) {
    if (!slot) {
        *static_cast<void**>(buffer_addr) = nullptr;
        *size = 0;
        return MPI_SUCCESS;
    }
    // Detach blocks until every buffered message has been transmitted.
    bsend_flush(slot.get());
    BsendBuffer& b = *slot;
    b.lock.lock();
    b.reclaim();
    b.lock.unlock();
    *static_cast<void**>(buffer_addr) = b.automatic ? MPI_BUFFER_AUTOMATIC : b.base;
    *size = b.automatic ? 0 : static_cast<MPI_Count>(b.size);
    slot.reset();  // a nonblocking flush may still hold it (it has no block left)
    return MPI_SUCCESS;
}

namespace {

// A nonblocking flush: finished once the messages its buffer held when it
// started have left; it never releases their requests (the owner's calls do).
class Flush final : public Progressable {
public:
    std::shared_ptr<BsendBuffer> buffer;
    uint64_t upto = 0;

    bool progress() override {
        if (buffer && buffer->pending_before(upto)) return false;
        set_status(&request->status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
        buffer.reset();
        return true;
    }
};

}  // namespace

int bsend_iflush(RankState* me, Comm* c, const std::shared_ptr<BsendBuffer>& b,
                 MPI_Request* request) {
    auto op = std::make_unique<Flush>();
    op->buffer = b;
    if (b) {
        b->lock.lock();
        op->upto = b->next_seq;
        b->lock.unlock();
    }
    Request* r = request_allocate(Request::Kind::Collective, me, c);
    r->active = true;
    Flush* raw = op.release();
    r->operation = raw;  // freed with the request
    raw->request = r;
    *request = r->handle;
    progress_add(me, raw);
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
