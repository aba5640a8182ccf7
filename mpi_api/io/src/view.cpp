// File views (MPI 3.1 section 13.3): setting and reading them, and the map
// from a view's stream of bytes to file offsets.
#include <cstring>

#include "collectives/collectives.hpp"
#include "datarep.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/type_walk.hpp"
#include "node.hpp"
#include "shared_fp.hpp"
#include "util.hpp"

namespace mpc::io {

View::~View() {
    mpi::datatype_release(etype);
    mpi::datatype_release(filetype);
    mpi::datatype_release(file_etype);
    mpi::datatype_release(file_filetype);
}

uint64_t View::file_offset(uint64_t s) const {
    if (contiguous) return static_cast<uint64_t>(disp + true_lb) + s;
    const uint64_t k = s / tsize;
    mpi::TypeWalk w(static_cast<uintptr_t>(disp), k + 1, *file_filetype, s);
    return w.addr();
}

uint64_t View::stream_before(uint64_t off) const {
    if (contiguous) {
        const uint64_t first = static_cast<uint64_t>(disp + true_lb);
        return off > first ? off - first : 0;
    }
    // file_offset is nondecreasing in s: the first s at or past off.
    uint64_t lo = 0, hi = tsize;
    while (file_offset(hi - 1) < off) {
        lo = hi;
        hi *= 2;
    }
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (file_offset(mid) < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

namespace {

std::shared_ptr<View> make_view(MPI_Offset disp, Datatype* etype, Datatype* filetype,
                                const Datarep* rep, Datatype* fetype, Datatype* ftype) {
    auto v = std::make_shared<View>();
    v->disp = disp;
    v->etype = mpi::datatype_retain(etype);
    v->filetype = mpi::datatype_retain(filetype);
    v->file_etype = fetype;
    v->file_filetype = ftype;
    v->datarep = rep->name;
    v->rep = rep;
    v->esize = fetype->size;
    v->tsize = ftype->size;
    v->textent = ftype->extent;
    v->contiguous = ftype->contiguous;
    v->true_lb = ftype->true_lb;
    return v;
}

uint64_t hash_text(const char* s) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull;
    return h;
}

}  // namespace

ViewRef default_view() {
    static const ViewRef v = [] {
        Datatype* byte = mpi::datatype_lookup(MPI_BYTE);
        const Datarep* native = find_datarep(nullptr, "native");
        return ViewRef(make_view(0, byte, byte, native, byte, byte));
    }();
    return v;
}

int set_view(File* f, MPI_Offset disp, Datatype* etype, Datatype* filetype, const char* datarep,
             const mpi::Info* info) {
    int err = MPI_SUCCESS;
    const Datarep* rep = find_datarep(f->owner, datarep);
    Datatype *fetype = nullptr, *ftype = nullptr;
    if (!rep)
        err = mpi::make_error(MPI_ERR_UNSUPPORTED_DATAREP, "unknown data representation '%s'",
                              datarep);
    else if (disp == MPI_DISPLACEMENT_CURRENT && !f->sequential())
        err = mpi::make_error(MPI_ERR_ARG,
                              "MPI_DISPLACEMENT_CURRENT needs a file opened MPI_MODE_SEQUENTIAL");
    else if (disp != MPI_DISPLACEMENT_CURRENT && f->sequential())
        err = mpi::make_error(MPI_ERR_ARG,
                              "a file opened MPI_MODE_SEQUENTIAL takes "
                              "MPI_DISPLACEMENT_CURRENT as displacement");
    else if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT)
        err = mpi::make_error(MPI_ERR_ARG, "negative displacement %lld", (long long)disp);
    else if (!(err = file_type_of(*rep, etype, &fetype)) &&
             !(err = file_type_of(*rep, filetype, &ftype))) {
        if (fetype->size == 0)
            err = mpi::make_error(MPI_ERR_ARG, "the etype holds no data");
        else if (ftype->size == 0 || ftype->size % fetype->size)
            err = mpi::make_error(MPI_ERR_ARG,
                                  "the filetype (%zu bytes) is not made of etypes (%zu bytes)",
                                  ftype->size, fetype->size);
        else if (ftype->true_lb < 0 || ftype->extent <= 0)
            err = mpi::make_error(MPI_ERR_ARG,
                                  "the filetype has negative displacements or no positive extent");
    }
    // The group must agree on the representation and the etype's size
    // (13.3), and every rank fails if one does. Node 0 resets the shared
    // pointer before it contributes, so no rank can use it before the reset.
    const int64_t old_sfp = f->node->hosts_shared_fp() && f->comm->rank == 0 ? sfp_load(f) : 0;
    int64_t current = INT64_MAX;  // MPI_DISPLACEMENT_CURRENT: the shared pointer's byte offset
    if (f->comm->rank == 0) {
        current = static_cast<int64_t>(
            f->view->file_offset(static_cast<uint64_t>(old_sfp) * f->view->esize));
        sfp_store(f, 0);
    }
    const int64_t h = rep ? static_cast<int64_t>(hash_text(rep->name.c_str()) >> 1) : 0;
    const int64_t es = fetype ? static_cast<int64_t>(fetype->size) : 0;
    int64_t v[] = {h, -h, es, -es, current, -static_cast<int64_t>(mpi::error_class_of(err))};
    int e = allreduce_min(f, v, 6);
    if (!e && !err && -v[5] != MPI_SUCCESS)
        err = mpi::make_error(static_cast<int>(-v[5]), "MPI_File_set_view failed on another rank");
    if (!e && !err && (v[0] != -v[1] || v[2] != -v[3]))
        err = mpi::make_error(MPI_ERR_NOT_SAME,
                              "the ranks passed different data representations or etype sizes");
    if (!err) err = e;
    if (err) {
        if (f->comm->rank == 0) sfp_store(f, old_sfp);
        mpi::datatype_release(fetype);
        mpi::datatype_release(ftype);
        return err;
    }
    if (disp == MPI_DISPLACEMENT_CURRENT) disp = v[4];
    f->view = make_view(disp, etype, filetype, rep, fetype, ftype);
    f->fp.store(0);
    if (info) apply_hints(&f->hints, *info, false);
    return MPI_SUCCESS;
}

void get_view(File* f, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype,
              char* datarep) {
    const View& v = *f->view;
    *disp = v.disp;
    // New handles with the same envelope and contents, committed (13.3).
    auto copy = [](Datatype* t) { return mpi::type_contents_copy(t)->handle; };
    *etype = copy(v.etype);
    *filetype = copy(v.filetype);
    const size_t n = std::min(v.datarep.size(), static_cast<size_t>(MPI_MAX_DATAREP_STRING - 1));
    memcpy(datarep, v.datarep.data(), n);
    datarep[n] = '\0';
}

int type_extent(File* f, Datatype* type, MPI_Aint* extent) {
    const Datarep& rep = *f->view->rep;
    if (rep.kind == Datarep::Kind::Native) {
        *extent = type->extent;
        return MPI_SUCCESS;
    }
    Datatype* t = nullptr;
    if (int e = file_type_of(rep, type, &t)) return e;
    *extent = t->extent;
    if (t == type && type->combiner == MPI_COMBINER_NAMED) {
        uint64_t n = 0;
        if (int e = file_size_of(rep, *type, 1, &n)) return e;
        *extent = static_cast<MPI_Aint>(n);
    }
    mpi::datatype_release(t);
    return MPI_SUCCESS;
}

}  // namespace mpc::io
