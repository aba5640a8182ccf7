#include "mpi_api/errors.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "mpi_api/api.hpp"
#include "mpi_api/comm.hpp"
#include "mpi_api/handles.hpp"
#include "mpi_api/rank.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"

namespace mpc::mpi {
namespace {

// Detailed messages live in a ring; a code refers to its slot and is checked
// against the code stored there, so a message overwritten by a much later error
// degrades to the plain class text.
constexpr int kSlots = 4096;
// Set in every detailed code: any other number above the classes is no code
// (999999 is not a detailed code of class 999999 & 0xff).
constexpr int kDetailMark = 1 << 29;
struct Detail {
    std::atomic<int> code{0};
    char text[320];
};
Detail g_details[kSlots];
std::atomic<uint32_t> g_next_detail{0};

constexpr int kUserBase = MPI_ERR_LASTCODE + 1;
struct UserCode {
    int cls;
    std::string text;
    bool has_text = false;  // MPI_Add_error_string'd (and not removed since)
};
std::mutex g_user_mutex;
std::map<int, UserCode> g_user_codes;  // user classes and codes, by code
int g_next_user = kUserBase;

const char* class_text(int cls) {
    if (cls >= 0 && cls < gen::kNumErrorClasses) return gen::kErrorClasses[cls].text;
    return nullptr;
}
const char* class_name(int cls) {
    if (cls >= 0 && cls < gen::kNumErrorClasses) return gen::kErrorClasses[cls].name;
    return "user-defined error class";
}

HandlePool<Errhandler, HandleKind::Errhandler>& eh_pool() {
    static HandlePool<Errhandler, HandleKind::Errhandler>* p = [] {
        auto* pool = new HandlePool<Errhandler, HandleKind::Errhandler>(4);
        Errhandler* fatal = pool->at(handle_index(MPI_ERRORS_ARE_FATAL));
        fatal->kind = Errhandler::Fatal;
        fatal->builtin = true;
        Errhandler* ret = pool->at(handle_index(MPI_ERRORS_RETURN));
        ret->kind = Errhandler::Return;
        ret->builtin = true;
        Errhandler* abort = pool->at(handle_index(MPI_ERRORS_ABORT));
        abort->kind = Errhandler::Abort;
        abort->builtin = true;
        pool->mark_live(handle_index(MPI_ERRORS_ABORT));
        pool->mark_live(handle_index(MPI_ERRORS_ARE_FATAL));
        pool->mark_live(handle_index(MPI_ERRORS_RETURN));
        return pool;
    }();
    return *p;
}

}  // namespace

int make_error(int cls, const char* fmt, ...) {
    if (cls >= 256 || cls < 0) return cls;  // user classes carry no detail
    uint32_t n = g_next_detail.fetch_add(1, std::memory_order_relaxed);
    int slot = static_cast<int>(n % kSlots);
    int code = kDetailMark | cls | ((slot + 1) << 8);
    Detail& d = g_details[slot];
    d.code.store(0, std::memory_order_relaxed);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d.text, sizeof(d.text), fmt, ap);
    va_end(ap);
    d.code.store(code, std::memory_order_release);
    return code;
}

int error_class_of(int code) {
    if (code < 0) return -1;
    if (code >= kUserBase) {
        std::lock_guard<std::mutex> g(g_user_mutex);
        auto it = g_user_codes.find(code);
        return it == g_user_codes.end() ? -1 : it->second.cls;
    }
    if (code >= 256 && (!(code & kDetailMark) || ((code & ~kDetailMark) >> 8) > kSlots))
        return -1;
    int cls = code & 0xff;
    if (cls >= gen::kNumErrorClasses) return -1;
    return cls;
}

std::string error_text(int code) {
    int cls = error_class_of(code);
    if (cls < 0) return {};
    if (code >= kUserBase) {
        std::lock_guard<std::mutex> g(g_user_mutex);
        return g_user_codes[code].text;
    }
    std::string text = class_text(cls);
    int slot = ((code & ~kDetailMark) >> 8) - 1;
    if (slot >= 0 && slot < kSlots) {
        const Detail& d = g_details[slot];
        if (d.code.load(std::memory_order_acquire) == code) {
            text += ": ";
            text += d.text;
        }
    }
    return text;
}

int add_error_class(int* cls) {
    std::lock_guard<std::mutex> g(g_user_mutex);
    int c = g_next_user++;
    g_user_codes[c] = UserCode{c, ""};
    *cls = c;
    return MPI_SUCCESS;
}

int add_error_code(int cls, int* code) {
    if (error_class_of(cls) != cls)
        return make_error(MPI_ERR_ARG, "%d is not an error class", cls);
    std::lock_guard<std::mutex> g(g_user_mutex);
    int c = g_next_user++;
    g_user_codes[c] = UserCode{cls, ""};
    *code = c;
    return MPI_SUCCESS;
}

int add_error_string(int code, const char* text) {
    if (!text) return make_error(MPI_ERR_ARG, "the error string is NULL");
    if (strlen(text) >= MPI_MAX_ERROR_STRING)
        return make_error(MPI_ERR_ARG, "error string longer than MPI_MAX_ERROR_STRING");
    std::lock_guard<std::mutex> g(g_user_mutex);
    auto it = g_user_codes.find(code);
    if (it == g_user_codes.end())
        return make_error(MPI_ERR_ARG,
                          "%d is not a user-defined error code or class (predefined strings "
                          "cannot be changed)",
                          code);
    it->second.text = text;
    it->second.has_text = true;
    return MPI_SUCCESS;
}

namespace {

// The user-added class or code `code` (g_user_mutex held); nullptr and an
// error in *err when there is none.
UserCode* user_entry(int code, const char* what, int* err) {
    if (code >= 0 && code <= MPI_ERR_LASTCODE) {
        *err = make_error(MPI_ERR_ARG, "%d is a predefined error %s: it cannot be removed", code,
                          what);
        return nullptr;
    }
    auto it = g_user_codes.find(code);
    if (it == g_user_codes.end()) {
        *err = make_error(MPI_ERR_ARG, "%d is no error %s added by the program", code, what);
        return nullptr;
    }
    return &it->second;
}

}  // namespace

// MPI 4.1 section 9.5: only what the program added can go, codes before
// their class and strings before their code.
int remove_error_class(int cls) {
    std::lock_guard<std::mutex> g(g_user_mutex);
    int err = MPI_SUCCESS;
    UserCode* u = user_entry(cls, "class", &err);
    if (!u) return err;
    if (u->cls != cls) return make_error(MPI_ERR_ARG, "%d is an error code, not a class", cls);
    for (const auto& [code, entry] : g_user_codes)
        if (code != cls && entry.cls == cls)
            return make_error(MPI_ERR_ARG,
                              "error class %d still has error code %d: remove the codes first", cls,
                              code);
    g_user_codes.erase(cls);
    return MPI_SUCCESS;
}

int remove_error_code(int code) {
    std::lock_guard<std::mutex> g(g_user_mutex);
    int err = MPI_SUCCESS;
    UserCode* u = user_entry(code, "code", &err);
    if (!u) return err;
    if (u->cls == code)
        return make_error(MPI_ERR_ARG, "%d is an error class, not a code (MPI_Remove_error_class)",
                          code);
    if (u->has_text)
        return make_error(
            MPI_ERR_ARG, "error code %d still has its string: MPI_Remove_error_string first", code);
    g_user_codes.erase(code);
    return MPI_SUCCESS;
}

int remove_error_string(int code) {
    std::lock_guard<std::mutex> g(g_user_mutex);
    int err = MPI_SUCCESS;
    UserCode* u = user_entry(code, "code or class", &err);
    if (!u) return err;
    if (!u->has_text)
        return make_error(MPI_ERR_ARG, "error code %d has no string added to remove", code);
    u->text.clear();
    u->has_text = false;
    return MPI_SUCCESS;
}

int last_used_code() {
    std::lock_guard<std::mutex> g(g_user_mutex);
    return g_next_user - 1;
}

Errhandler* errhandler_lookup(MPI_Errhandler h) { return eh_pool().lookup(h); }

int errhandler_create(MPI_Comm_errhandler_function* fn, MPI_Errhandler* out, ErrObject object) {
    int h;
    Errhandler* e = eh_pool().allocate(&h);
    e->kind = Errhandler::User;
    e->fn = fn;
    e->builtin = false;
    e->object = object;
    *out = h;
    return MPI_SUCCESS;
}

int errhandler_free(MPI_Errhandler* h) {
    Errhandler* e = eh_pool().lookup(*h);
    if (!e) return make_error(MPI_ERR_ARG, "invalid error handler");
    // A communicator may still use the handler: user handlers stay valid (their
    // slots are never reused), only the handle is invalidated for the caller.
    *h = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

namespace {

// MPI_ERRORS_ABORT (MPI 4.0 section 9.3) aborts the processes of the object's
// communicator, as MPI_Abort on it would: here that ends the job, the message
// naming the rank that raised the error.
[[noreturn]] void abort_for(RankState* me, int code, int cls) {
    runtime::fatal_status(
        cls > 0 && cls < 256 ? cls : 1, "%s: %s (%s); MPI_ERRORS_ABORT: rank %d aborts the job",
        current_fn_name(me), error_text(code).c_str(), class_name(cls), me ? me->world_rank : -1);
}

}  // namespace

namespace {

struct InitialHandler {
    const char* name;
    MPI_Errhandler handler;
};

const InitialHandler& initial() {
    // Read once: the job's setting does not change while it runs.
    static const InitialHandler h = [] {
        static constexpr InitialHandler kChoices[] = {
            {"mpi_errors_are_fatal", MPI_ERRORS_ARE_FATAL},
            {"mpi_errors_abort", MPI_ERRORS_ABORT},
            {"mpi_errors_return", MPI_ERRORS_RETURN}};
        const int i = runtime::env::get_choice(
            "MPC_INITIAL_ERRHANDLER", 0,
            {{kChoices[0].name, 0}, {kChoices[1].name, 1}, {kChoices[2].name, 2}});
        return kChoices[i];
    }();
    return h;
}

}  // namespace

MPI_Errhandler initial_errhandler() {
    return initial().handler;
}

const char* initial_errhandler_name() {
    return initial().name;
}

int raise_error(Comm* comm, int code) {
    RankState* me = current_rank();
    if (!comm && me) comm = &me->world;
    MPI_Errhandler h = comm ? comm->errhandler : initial_errhandler();
    Errhandler* eh = errhandler_lookup(h);
    if (eh && eh->kind == Errhandler::Return) return code;
    if (eh && eh->kind == Errhandler::User && eh->fn) {
        MPI_Comm handle = comm->error_object ? comm->error_object : comm->handle;
        int c = code;
        eh->fn(&handle, &c);
        return code;
    }
    int cls = error_class_of(code);
    if (eh && eh->kind == Errhandler::Abort) abort_for(me, code, cls);
    runtime::fatal_status(cls > 0 && cls < 256 ? cls : 1, "%s: %s (%s) on %s; aborting the job",
                          current_fn_name(me), error_text(code).c_str(), class_name(cls),
                          comm ? (comm->name.empty() ? "a communicator" : comm->name.c_str())
                               : "MPI_COMM_WORLD");
}

int raise_object(MPI_Errhandler h, int handle, int code, const char* what) {
    if (code == MPI_SUCCESS) return code;
    Errhandler* eh = errhandler_lookup(h);
    if (eh && eh->kind == Errhandler::Return) return code;
    if (eh && eh->kind == Errhandler::User && eh->fn) {
        int obj = handle;
        int c = code;
        eh->fn(&obj, &c);
        return code;
    }
    int cls = error_class_of(code);
    if (eh && eh->kind == Errhandler::Abort) abort_for(current_rank(), code, cls);
    runtime::fatal_status(cls > 0 && cls < 256 ? cls : 1, "%s: %s (%s) on %s; aborting the job",
                          current_fn_name(current_rank()), error_text(code).c_str(),
                          class_name(cls), what);
}

int raise_on(MPI_Comm handle, int code) {
    if (code == MPI_SUCCESS) return code;
    return raise(comm_lookup(handle), code);
}

}  // namespace mpc::mpi
