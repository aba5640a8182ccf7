#include "requests.hpp"

#include <cstring>
#include <vector>

#include "collectives/persistent.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/partitioned.hpp"
#include "mpi_api/progress.hpp"
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
// The attached buffer is carved into blocks, one per message in flight: the
// message is packed into its block and sent from there by an internal request;
// blocks are reclaimed when their request has completed.

struct BsendBuffer {
    char* base = nullptr;
    size_t size = 0;
    struct Block {
        size_t offset, length;
        Request* request;  // internal send from the block
    };
    std::vector<Block> blocks;  // sorted by offset
    runtime::SpinLock lock;

    void reclaim() {
        std::erase_if(blocks, [](const Block& b) {
            if (!b.request->is_complete()) return false;
            request_release(b.request);
            return true;
        });
    }
    // First fit; returns the offset or SIZE_MAX.
    size_t allocate(size_t length, Request* request) {
        size_t at = 0;
        size_t i = 0;
        for (; i < blocks.size(); ++i) {
            if (blocks[i].offset - at >= length) break;
            at = blocks[i].offset + blocks[i].length;
        }
        if (i == blocks.size() && size - at < length) return SIZE_MAX;
        blocks.insert(blocks.begin() + static_cast<long>(i), Block{at, length, request});
        return at;
    }
};

int bsend_start(Request* r) {
    RankState* me = r->rank;
    BsendBuffer* b = me->bsend;
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
    size_t off = b->allocate(need, inner);
    b->lock.unlock();
    if (off == SIZE_MAX) {
        request_release(inner);
        return make_error(MPI_ERR_BUFFER,
                          "the attached buffer (%zu bytes) has no room for a %zu-byte buffered "
                          "send (each needs its size plus MPI_BSEND_OVERHEAD)",
                          b->size, bytes);
    }
    char* block = b->base + off;

    pack(r->buf, static_cast<size_t>(r->count), *r->type, 0, block, bytes);
    inner->buf = block;
    inner->count = static_cast<MPI_Count>(bytes);
    inner->type = datatype_lookup(MPI_BYTE);
    inner->peer = r->peer;
    inner->tag = r->tag;
    inner->context = r->context;
    inner->active = true;
    p2p_start_send(inner);
    // The user's request is done: the data left the user's buffer.
    set_status(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
    complete(r);
    return MPI_SUCCESS;
}

int bsend_attach(RankState* me, void* buffer, MPI_Count size) {
    if (size < 0) return make_error(MPI_ERR_ARG, "negative buffer size %lld", size);
    if (!buffer && size > 0) return make_error(MPI_ERR_BUFFER, "NULL buffer");
    if (me->bsend) return make_error(MPI_ERR_BUFFER, "a buffer is already attached");
    me->bsend = new BsendBuffer();
    me->bsend->base = static_cast<char*>(buffer);
    me->bsend->size = static_cast<size_t>(size);
    return MPI_SUCCESS;
}

int bsend_detach(RankState* me, void* buffer_addr, MPI_Count* size) {
    BsendBuffer* b = me->bsend;
    if (!b) {
        *static_cast<void**>(buffer_addr) = nullptr;
        *size = 0;
        return MPI_SUCCESS;
    }
    // Detach blocks until every buffered message has been transmitted.
    for (;;) {
        b->lock.lock();
        b->reclaim();
        bool empty = b->blocks.empty();
        Request* pending = empty ? nullptr : b->blocks.front().request;
        b->lock.unlock();
        if (empty) break;
        wait_complete(pending);
    }
    *static_cast<void**>(buffer_addr) = b->base;
    *size = static_cast<MPI_Count>(b->size);
    delete b;  // no block left: nothing refers to it
    me->bsend = nullptr;
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
