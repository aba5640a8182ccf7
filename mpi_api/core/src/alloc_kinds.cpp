// Memory allocation kinds (alloc_kinds.hpp).
#include "mpi_api/alloc_kinds.hpp"

#include <cstdlib>
#include <set>

#include "mpi_api/comm.hpp"
#include "mpi_api/session.hpp"

namespace mpc::mpi {
namespace {

std::string trim(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// "system", or "mpi" with restrictors (":alloc_mem", ":win_allocate",
// ":win_allocate_shared", each at most once).
bool supported(const std::string& kind) {
    if (kind == "system" || kind == "mpi") return true;
    if (kind.rfind("mpi:", 0) != 0) return false;
    std::set<std::string> seen;
    size_t at = 4;
    for (;;) {
        const size_t end = kind.find(':', at);
        const std::string r = kind.substr(at, end == std::string::npos ? end : end - at);
        if (r != "alloc_mem" && r != "win_allocate" && r != "win_allocate_shared") return false;
        if (!seen.insert(r).second) return false;
        if (end == std::string::npos) return true;
        at = end + 1;
    }
}

}  // namespace

std::string supported_alloc_kinds(const std::string& requested) {
    std::string out;
    std::set<std::string> kept;
    size_t at = 0;
    for (;;) {
        const size_t end = requested.find(',', at);
        const std::string k = trim(requested.substr(at, end == std::string::npos ? end : end - at));
        if (supported(k) && kept.insert(k).second) out += (out.empty() ? "" : ",") + k;
        if (end == std::string::npos) return out;
        at = end + 1;
    }
}

const std::string& world_alloc_kinds() {
    static const std::string kinds = [] {
        // getenv, not env::get: set but empty asks for no kind at all.
        const char* asked = getenv("MPC_MEMORY_ALLOC_KINDS");
        return supported_alloc_kinds(asked ? asked : "mpi,system");
    }();
    return kinds;
}

std::string alloc_kinds_of(const Comm* c) {
    if (c && c->session != MPI_SESSION_NULL)
        if (const Session* s = session_lookup(c->session, c->owner)) return s->alloc_kinds;
    return world_alloc_kinds();
}

}  // namespace mpc::mpi
