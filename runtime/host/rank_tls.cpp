// Finds the static TLS blocks that follow a rank (rank_tls.hpp says which and why).
#include "rank_tls.hpp"

#include <link.h>

#include <cstring>
#include <thread>

#include "runtime/log.hpp"

namespace mpc::host {
namespace {

std::string base_name(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool starts_with(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

bool is_libstdcxx(const std::string& path) {
    return starts_with(base_name(path), "libstdc++.so");
}

struct Block {
    std::string path;
    uintptr_t base = 0;
    const Elf64_Phdr* tls = nullptr;
    std::ptrdiff_t offset = 0;  // thread pointer minus the block's address; 0: none here
};

// The TLS blocks of the libraries of interest, as the calling thread sees them.
struct Search {
    bool cxx = false;
    std::vector<Block> blocks;
};

int find_blocks(dl_phdr_info* info, size_t, void* data) {
    auto* search = static_cast<Search*>(data);
    const std::string path = info->dlpi_name ? info->dlpi_name : "";
    if (!is_openmp_runtime(path) && !(search->cxx && is_libstdcxx(path))) return 0;
    Block b;
    b.path = path;
    b.base = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_TLS) b.tls = &info->dlpi_phdr[i];
    if (!b.tls || b.tls->p_memsz == 0) return 0;
    if (info->dlpi_tls_data)
        b.offset = static_cast<char*>(__builtin_thread_pointer()) -
                   static_cast<char*>(info->dlpi_tls_data);
    search->blocks.push_back(b);
    return 0;
}

}  // namespace

bool is_openmp_runtime(const std::string& path) {
    const std::string name = base_name(path);
    return starts_with(name, "libgomp.so") || starts_with(name, "libomp.so") ||
           starts_with(name, "libomp5.so") || starts_with(name, "libiomp5.so");
}

std::vector<LibraryTls> rank_private_library_tls(bool cxx) {
    Search here;
    here.cxx = cxx;
    dl_iterate_phdr(find_blocks, &here);
    if (here.blocks.empty()) return {};
    // A block in static TLS lies at the same offset from every thread's
    // pointer, and exists in a thread from its start; a block in dynamic TLS
    // (a library dlopened later) is allocated per thread on first use, so a
    // new thread that touched nothing has none, or one elsewhere.
    Search fresh;
    fresh.cxx = cxx;
    std::thread([&fresh] { dl_iterate_phdr(find_blocks, &fresh); }).join();
    std::vector<LibraryTls> out;
    for (const Block& b : here.blocks) {
        bool fixed = false;
        for (const Block& f : fresh.blocks)
            fixed = fixed || (f.path == b.path && b.offset != 0 && f.offset == b.offset);
        if (!fixed) {
            runtime::warn(
                "the thread-local state of %s is not in static TLS (was it loaded with "
                "dlopen?): ranks sharing a virtual processor share it",
                b.path.c_str());
            continue;
        }
        LibraryTls lib;
        lib.path = b.path;
        lib.init.assign(b.tls->p_memsz, 0);
        memcpy(lib.init.data(), reinterpret_cast<const char*>(b.base + b.tls->p_vaddr),
               b.tls->p_filesz);
        lib.region.offset = b.offset;
        lib.region.size = b.tls->p_memsz;
        out.push_back(std::move(lib));
    }
    for (LibraryTls& lib : out) lib.region.init = lib.init.data();
    return out;
}

}  // namespace mpc::host
