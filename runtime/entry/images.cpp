#include "images.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "runtime/log.hpp"

namespace mpc::host {
namespace {

std::vector<char> read_file(const char* path) {
    std::vector<char> data;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return data;
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) data.insert(data.end(), buf, buf + n);
    close(fd);
    return data;
}

// Clears DF_1_PIE in the dynamic section; false when the file is not a
// position-independent executable we can load as a library.
bool make_loadable(std::vector<char>& elf, std::string* why) {
    if (elf.size() < sizeof(Elf64_Ehdr) || memcmp(elf.data(), ELFMAG, SELFMAG) != 0 ||
        elf[EI_CLASS] != ELFCLASS64) {
        *why = "not a 64-bit ELF file";
        return false;
    }
    auto* eh = reinterpret_cast<Elf64_Ehdr*>(elf.data());
    if (eh->e_type != ET_DYN) {
        *why = "not position-independent (link it with mpicc, or with -fPIE -pie)";
        return false;
    }
    if (eh->e_phoff + static_cast<size_t>(eh->e_phnum) * sizeof(Elf64_Phdr) > elf.size()) {
        *why = "truncated program headers";
        return false;
    }
    auto* ph = reinterpret_cast<Elf64_Phdr*>(elf.data() + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; ++i) {
        if (ph[i].p_type != PT_DYNAMIC) continue;
        if (ph[i].p_offset + ph[i].p_filesz > elf.size()) break;
        auto* dyn = reinterpret_cast<Elf64_Dyn*>(elf.data() + ph[i].p_offset);
        size_t n = ph[i].p_filesz / sizeof(Elf64_Dyn);
        for (size_t k = 0; k < n && dyn[k].d_tag != DT_NULL; ++k)
            if (dyn[k].d_tag == DT_FLAGS_1) dyn[k].d_un.d_val &= ~static_cast<Elf64_Xword>(DF_1_PIE);
        return true;
    }
    *why = "no dynamic section";
    return false;
}

struct MainProgram {
    uintptr_t base = 0;
    const Elf64_Phdr* tls = nullptr;
    void* tls_block = nullptr;  // the calling thread's copy
};

int find_main_program(dl_phdr_info* info, size_t, void* data) {
    auto* mp = static_cast<MainProgram*>(data);
    mp->base = info->dlpi_addr;  // the first object is the program itself
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_TLS) mp->tls = &info->dlpi_phdr[i];
    mp->tls_block = info->dlpi_tls_data;
    return 1;
}

}  // namespace

ImageSet load_images(MainFn original, int nlocal, bool shared) {
    ImageSet set;
    set.mains.assign(static_cast<size_t>(nlocal), original);
    MainProgram mp;
    dl_iterate_phdr(find_main_program, &mp);
    // The program's TLS block: swapped per rank whenever ranks share a VP.
    if (mp.tls && mp.tls->p_memsz && mp.tls_block && nlocal > 1) {
        set.tls_size = mp.tls->p_memsz;
        set.tls_offset = static_cast<char*>(__builtin_thread_pointer()) - static_cast<char*>(mp.tls_block);
        set.tls_init.assign(set.tls_size, 0);
        memcpy(set.tls_init.data(), reinterpret_cast<const char*>(mp.base + mp.tls->p_vaddr),
               mp.tls->p_filesz);
    }
    if (shared || nlocal <= 1) return set;

    std::vector<char> elf = read_file("/proc/self/exe");
    std::string why;
    if (elf.empty() || !make_loadable(elf, &why)) {
        if (why.empty()) why = "cannot read /proc/self/exe";
        runtime::warn("ranks of this node share the program's global variables: the program is %s",
                      why.c_str());
        return set;
    }
    const uintptr_t main_offset = reinterpret_cast<uintptr_t>(original) - mp.base;
    // The memfds stay open until every copy is loaded: glibc recognises an
    // object already loaded by its path, so each copy needs a distinct one.
    std::vector<int> fds;
    for (int i = 1; i < nlocal; ++i) {
        std::string name = "fibermpi-rank-image-" + std::to_string(i);
        int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
        if (fd < 0) runtime::fatal("cannot create a rank image: memfd_create failed");
        size_t off = 0;
        while (off < elf.size()) {
            ssize_t n = write(fd, elf.data() + off, elf.size() - off);
            if (n <= 0) runtime::fatal("cannot write a rank image");
            off += static_cast<size_t>(n);
        }
        std::string path = "/proc/self/fd/" + std::to_string(fd);
        void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        fds.push_back(fd);
        if (!h) runtime::fatal("cannot load a rank image of the program: %s", dlerror());
        link_map* lm = nullptr;
        dlinfo(h, RTLD_DI_LINKMAP, &lm);
        set.mains[static_cast<size_t>(i)] = reinterpret_cast<MainFn>(lm->l_addr + main_offset);
        set.handles.push_back(h);
        runtime::debug("rank image %d loaded at %p (gdb: add-symbol-file PROGRAM -o %p)", i,
                       reinterpret_cast<void*>(lm->l_addr), reinterpret_cast<void*>(lm->l_addr));
    }
    for (int fd : fds) close(fd);  // the mappings keep the memfds alive
    set.private_globals = true;
    return set;
}

void unload_images(ImageSet& images) {
    for (void* h : images.handles) dlclose(h);
    images.handles.clear();
}

}  // namespace mpc::host
