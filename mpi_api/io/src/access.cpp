// Data access (MPI 3.1 section 13.4): one rank's side of every read and write.
//
// An access is prepared the same way whatever its form: checks, the view it
// uses, its stream range (explicit offset, individual pointer, or shared
// pointer, each moved at initiation as the standard says) and the memory
// holding its stream (a conversion buffer when the representation is not
// native). Blocking independent access then moves the data at once on the
// caller's thread. Everything else runs as a RankOp, a Progressable whose
// body is a Resumable: nonblocking independent access moves its data in
// slices whenever its rank's operations are progressed (by the rank in
// MPI_Wait/Test, or collaboratively by any rank or idle core of the node),
// and collective access takes part in its node's NodeColl. Blocking
// collective access is the same operation waited for at once.
#include <algorithm>
#include <memory>
#include <utility>

#include "collective.hpp"
#include "datarep.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/progress_engine.hpp"
#include "shared_fp.hpp"
#include "transfer.hpp"

namespace mpc::io {
namespace {

// A nonblocking independent access moves at most this much per turn, so a
// rank polling for others is not held in one system call for long and the
// rest of the access can be moved by another rank meanwhile.
constexpr uint64_t kSlice = 8u << 20;

// A reference on the memory datatype for the life of an operation (the
// user may free the handle once a nonblocking access has started).
class TypeRef {
  public:
    TypeRef() = default;
    explicit TypeRef(Datatype* t) : t_(mpi::datatype_retain(t)) {}
    TypeRef(TypeRef&& o) noexcept : t_(std::exchange(o.t_, nullptr)) {}
    TypeRef& operator=(TypeRef&& o) noexcept {
        std::swap(t_, o.t_);
        return *this;
    }
    ~TypeRef() { mpi::datatype_release(t_); }

  private:
    Datatype* t_ = nullptr;
};

struct Prepared {
    TypeRef hold;
    File* f = nullptr;
    Access a;
    ViewRef view;
    uint64_t s0 = 0, n = 0;  // stream bytes
    Memory mem;
    std::unique_ptr<char[]> conv;  // the file stream, when converted
    bool converted = false;
    uint64_t elem_stream = 0;  // stream bytes of one element (conversions)
};

int check(File* f, const Access& a) {
    if (a.dir == Dir::Read && !f->readable())
        return mpi::make_error(MPI_ERR_ACCESS, "reading '%s', opened MPI_MODE_WRONLY",
                               f->filename.c_str());
    if (a.dir == Dir::Write && !f->writable())
        return mpi::make_error(MPI_ERR_READ_ONLY, "writing '%s', opened MPI_MODE_RDONLY",
                               f->filename.c_str());
    if (f->sequential() && (a.pos == Pos::Explicit || a.pos == Pos::Individual))
        return mpi::make_error(MPI_ERR_UNSUPPORTED_OPERATION,
                               "'%s' was opened MPI_MODE_SEQUENTIAL: only shared file pointer "
                               "access is allowed",
                               f->filename.c_str());
    if (a.pos == Pos::Explicit && a.offset < 0)
        return mpi::make_error(MPI_ERR_ARG, "negative offset %lld", (long long)a.offset);
    return MPI_SUCCESS;
}

// Everything but the shared pointer's move (ordered accesses are placed by
// their node) and the data movement.
int prepare(File* f, const Access& a, Prepared* p) {
    p->f = f;
    p->a = a;
    p->hold = TypeRef(a.type);
    p->view = f->view;
    if (int e = check(f, a)) return e;
    const View& v = *p->view;
    const Datarep& rep = *v.rep;
    if (int e = stream_size(rep, a.dir, *a.type, static_cast<uint64_t>(a.count), &p->n)) return e;
    if (p->n % v.esize)
        return mpi::make_error(MPI_ERR_ARG,
                               "the access (%llu bytes in the file) is not a whole number of "
                               "etypes (%llu bytes)",
                               (unsigned long long)p->n, (unsigned long long)v.esize);
    p->converted = !rep.native_for(a.dir) && p->n;
    if (p->converted) {
        p->conv.reset(new char[p->n]);
        p->mem = Memory{reinterpret_cast<uintptr_t>(p->conv.get()), p->n,
                        mpi::datatype_lookup(MPI_BYTE)};
        stream_size(rep, a.dir, *a.type, 1, &p->elem_stream);
        if (a.dir == Dir::Write)
            if (int e = to_file(rep, a.buf, a.count, a.type, p->conv.get())) return e;
    } else {
        p->mem = Memory{reinterpret_cast<uintptr_t>(a.buf), static_cast<size_t>(a.count), a.type};
    }
    const int64_t etypes = static_cast<int64_t>(p->n / v.esize);
    switch (a.pos) {
        case Pos::Explicit:
            p->s0 = static_cast<uint64_t>(a.offset) * v.esize;
            break;
        case Pos::Individual:
            p->s0 = static_cast<uint64_t>(f->fp.fetch_add(etypes)) * v.esize;
            break;
        case Pos::Shared: {
            int64_t old = 0;
            sfp_fetch_add(f, etypes, &old);
            p->s0 = static_cast<uint64_t>(old) * v.esize;
            break;
        }
        case Pos::Ordered:
            break;
    }
    return MPI_SUCCESS;
}

// The status of a finished access that moved `moved` stream bytes; reads
// convert what arrived (whole elements).
int finish(Prepared& p, uint64_t moved, int err, MPI_Status* status) {
    uint64_t bytes = moved;
    if (p.converted && !err) {
        const uint64_t elems = p.elem_stream ? moved / p.elem_stream : 0;
        if (p.a.dir == Dir::Read && elems)
            err = from_file(*p.view->rep, p.conv.get(), p.a.buf, static_cast<int>(elems), p.a.type);
        bytes = elems * p.a.type->size;
    }
    if (err) bytes = 0;
    if (status && status != MPI_STATUS_IGNORE) {
        mpi::set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, static_cast<MPI_Count>(bytes));
        status->MPI_ERROR = err;
    }
    return err;
}

class RankOp final : public mpi::Progressable {
  public:
    Resumable body;
    Part part;  // a collective access's part, handed to the node at initiation
    bool progress() override { return body.resume(); }
};

Resumable independent_body(Prepared p, mpi::Request* req) {
    int err = MPI_SUCCESS;
    uint64_t done = 0;
    // Atomic mode locks the whole access: one turn.
    const uint64_t slice = p.f->atomic ? p.n : kSlice;
    while (done < p.n) {
        uint64_t moved = 0;
        const uint64_t len = std::min(slice, p.n - done);
        err = transfer_range(p.f, p.a.dir, *p.view, p.s0, p.mem, done, len, &moved);
        done += moved;
        if (err || moved < len) break;
        if (done < p.n) {
            // More to move now: look at us again at the next poll.
            mpi::progress_notify(p.f->owner);
            co_await std::suspend_always{};
        }
    }
    finish(p, done, err, &req->status);
}

Resumable collective_body(Prepared p, Part& part, std::shared_ptr<NodeColl> nc, mpi::Request* req) {
    MPC_AWAIT(nc->help());
    int err = part.error ? part.error : nc->error();
    uint64_t moved = part.n;
    if (p.a.dir == Dir::Read && part.n) {
        const uint64_t end =
            std::clamp(p.view->stream_before(nc->eof()), part.s0, part.s0 + part.n);
        moved = end - part.s0;
    }
    p.s0 = part.s0;
    finish(p, moved, err, &req->status);
    node_coll_done(p.f, nc->seq);
}

// Starts the operation of an access behind r (a stack or pool request).
int start(File* f, const Access& a, mpi::Request* r, RankOp* op) {
    auto p = std::make_unique<Prepared>();
    const int err = prepare(f, a, p.get());
    r->kind = mpi::Request::Kind::File;
    r->rank = f->owner;
    r->comm = f->comm;
    op->request = r;
    if (a.collective) {
        // Every member takes part, even one whose arguments failed, and its
        // node learns it at once (the others need not wait for its progress).
        auto nc = node_coll(f, f->coll_seq++, a.dir, a.pos == Pos::Ordered);
        Part& part = op->part;
        part.view = p->view;
        part.s0 = p->s0;
        part.n = err ? 0 : p->n;
        part.mem = p->mem;
        part.error = err;
        part.etypes = part.n / p->view->esize;
        nc->arrive(f->member, &part);
        op->body = collective_body(std::move(*p), part, std::move(nc), r);
    } else {
        if (err) return err;
        op->body = independent_body(std::move(*p), r);
    }
    // The data move when the rank's operations are next progressed: in its
    // MPI_Wait/Test, or by any rank or idle core of the node meanwhile
    // (collaborative mode) or the progress thread; never inside this call.
    mpi::progress_add(f->owner, op, false);
    return MPI_SUCCESS;
}

}  // namespace

int access(File* f, const Access& a, MPI_Status* status) {
    if (!a.collective) {
        Prepared p;
        if (int e = prepare(f, a, &p)) return finish(p, 0, e, status);
        uint64_t moved = 0;
        const int err = a.dir == Dir::Write ? write_combined(f, *p.view, p.s0, p.mem, p.n, &moved)
                                            : transfer(f, a.dir, *p.view, p.s0, p.mem, p.n, &moved);
        return finish(p, moved, err, status);
    }
    mpi::Request r;
    RankOp op;
    if (int e = start(f, a, &r, &op)) return e;
    mpi::wait_complete(&r);
    if (status && status != MPI_STATUS_IGNORE) *status = r.status;
    return r.status.MPI_ERROR;
}

int access_start(File* f, const Access& a, MPI_Request* request) {
    mpi::Request* r = mpi::request_allocate(mpi::Request::Kind::File, f->owner, f->comm);
    r->active = true;
    auto* op = new RankOp();
    r->operation = op;  // freed with the request
    if (int e = start(f, a, r, op)) {
        mpi::request_release(r);
        return e;
    }
    *request = r->handle;
    return MPI_SUCCESS;
}

int split_begin(File* f, const Access& a) {
    if (f->split)
        return mpi::make_error(MPI_ERR_OTHER,
                               "a split collective is already active on '%s' (one at a time)",
                               f->filename.c_str());
    mpi::Request* r = mpi::request_allocate(mpi::Request::Kind::File, f->owner, f->comm);
    r->active = true;
    auto* op = new RankOp();
    r->operation = op;
    if (int e = start(f, a, r, op)) {
        mpi::request_release(r);
        return e;
    }
    f->split = r;
    f->split_dir = a.dir;
    f->split_pos = a.pos;
    f->split_explicit = a.pos == Pos::Explicit;
    f->split_buf = a.buf;
    return MPI_SUCCESS;
}

int split_end(File* f, const void* buf, Dir dir, Pos pos, bool explicit_offset,
              MPI_Status* status) {
    mpi::Request* r = f->split;
    if (!r || f->split_dir != dir || f->split_pos != pos || f->split_explicit != explicit_offset)
        return mpi::make_error(MPI_ERR_OTHER, "no matching split collective was begun on '%s'",
                               f->filename.c_str());
    if (buf != f->split_buf)
        return mpi::make_error(MPI_ERR_BUFFER,
                               "the end call names another buffer than the begin call");
    mpi::wait_complete(r);
    f->split = nullptr;
    if (status && status != MPI_STATUS_IGNORE) *status = r->status;
    const int err = r->status.MPI_ERROR;
    mpi::request_release(r);
    return err;
}

}  // namespace mpc::io
