// MPI_Alloc_mem and MPI_Free_mem: memory aligned for any use, registered
// with the network (when node processes talk through one) for as long as it
// lives, so that windows and rendezvous transfers on it find their
// registration cached instead of registering the pages again.
#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "mpi_api/errors.hpp"
#include "mpi_api/net.hpp"
#include "remote.hpp"
#include "rma/window.hpp"

namespace mpc::rma {
namespace {

struct Allocation {
    size_t bytes;
    void* registration;
};

std::mutex g_mutex;
std::unordered_map<void*, Allocation>& allocations() {
    static auto* m = new std::unordered_map<void*, Allocation>();  // outlives the ranks
    return *m;
}

// Cache lines for small blocks; pages from 64 KiB on (registered memory and
// large copies like them).
constexpr size_t kLargeAlloc = 64 * 1024;

}  // namespace

int alloc_mem(MPI_Aint size, const mpi::Info*, void** out) {
    if (size < 0)
        return mpi::make_error(MPI_ERR_SIZE, "negative size %ld", static_cast<long>(size));
    const size_t bytes = static_cast<size_t>(size);
    void* p = nullptr;
    // A size of 0 still gets a block of its own (a unique pointer).
    if (posix_memalign(&p, bytes >= kLargeAlloc ? 4096 : 64, bytes ? bytes : 1) != 0 || !p)
        return mpi::make_error(MPI_ERR_NO_MEM, "cannot allocate %zu bytes", bytes);
    Allocation a{bytes, nullptr};
    if (network_up() && bytes > 0) {
        uint64_t remote_addr, key;
        a.registration = mpi::network()->rma_register(p, bytes, &remote_addr, &key);
    }
    {
        std::lock_guard<std::mutex> g(g_mutex);
        allocations()[p] = a;
    }
    *out = p;
    return MPI_SUCCESS;
}

int free_mem(void* base) {
    if (!base) return MPI_SUCCESS;
    Allocation a;
    {
        std::lock_guard<std::mutex> g(g_mutex);
        auto it = allocations().find(base);
        if (it == allocations().end())
            return mpi::make_error(MPI_ERR_BASE, "%p was not returned by MPI_Alloc_mem", base);
        a = it->second;
        allocations().erase(it);
    }
    if (a.registration) mpi::network()->rma_deregister(a.registration);
    free(base);
    return MPI_SUCCESS;
}

}  // namespace mpc::rma
