#include "images.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include "elf_file.hpp"
#include "elf_loaded.hpp"
#include "libc_state.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"
#include "scheduler/scheduler.hpp"

namespace mpc::host {
namespace {

using elf::LoadedObject;
using Objects = std::vector<LoadedObject>;
using elf::loaded_objects;

// What the loader passes to initialisers, for the copies' ones run here.
int g_argc = 0;
char** g_argv = nullptr;
__attribute__((constructor)) void remember_arguments(int argc, char** argv, char**) {
    g_argc = argc;
    g_argv = argv;
}

// ---- Which libraries are the user's (the rule is in images.hpp) ------------

std::string directory_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

bool in_system_directory(const std::string& path) {
    for (const char* prefix : {"/lib/", "/lib32/", "/lib64/", "/libx32/", "/usr/", "/opt/"})
        if (path.rfind(prefix, 0) == 0) return true;
    return false;
}

bool listed_as_shared(const std::string& path) {
    const char* list = runtime::env::get("MPC_SHARED_LIBS");
    if (!list) return false;
    const std::string s(list);
    for (size_t pos = 0; pos <= s.size();) {
        size_t end = s.find(':', pos);
        if (end == std::string::npos) end = s.size();
        const std::string item = s.substr(pos, end - pos);
        if (item == "all" || (!item.empty() && path.find(item) != std::string::npos)) return true;
        pos = end + 1;
    }
    return false;
}

size_t find_needed(const Objects& objects, const std::string& name) {
    for (size_t i = 1; i < objects.size(); ++i)
        if (objects[i].answers_to(name)) return i;
    return SIZE_MAX;
}

// The user's libraries, dependencies first (the order their initialisers
// run). A library with initial-exec thread-locals stays shared (glibc has
// room for few copies of those): its path goes to *static_tls.
std::vector<size_t> user_libraries(const Objects& objects, size_t runtime,
                                   std::vector<std::string>* static_tls) {
    const LoadedObject& rt = objects[runtime];
    auto shared_by_nature = [&](size_t i) {
        const LoadedObject& o = objects[i];
        if (i == runtime || o.path.find('/') == std::string::npos || listed_as_shared(o.path))
            return true;
        const bool mpi_code = std::any_of(o.needed.begin(), o.needed.end(),
                                          [&](const std::string& n) { return rt.answers_to(n); });
        if (!mpi_code &&
            (in_system_directory(o.path) || directory_of(o.path) == directory_of(rt.path)))
            return true;
        if (o.static_tls) static_tls->push_back(o.path);
        return o.static_tls;
    };
    std::vector<char> mine(objects.size(), 0);
    std::vector<size_t> todo{0};
    while (!todo.empty()) {
        const size_t i = todo.back();
        todo.pop_back();
        for (const std::string& name : objects[i].needed) {
            const size_t j = find_needed(objects, name);
            if (j != SIZE_MAX && !mine[j] && !shared_by_nature(j)) {
                mine[j] = 1;
                todo.push_back(j);
            }
        }
    }
    // A library that a shared object needs serves that object: it stays shared.
    std::vector<char> reached(objects.size(), 0);
    for (size_t i = 1; i < objects.size(); ++i)
        if (!mine[i]) todo.push_back(i);
    while (!todo.empty()) {
        const size_t i = todo.back();
        todo.pop_back();
        for (const std::string& name : objects[i].needed) {
            const size_t j = find_needed(objects, name);
            if (j != SIZE_MAX && !reached[j]) {
                reached[j] = 1;
                todo.push_back(j);
            }
        }
    }
    std::vector<size_t> order;
    std::vector<char> seen(objects.size(), 0);
    std::function<void(size_t)> visit = [&](size_t i) {
        seen[i] = 1;
        for (const std::string& name : objects[i].needed) {
            const size_t j = find_needed(objects, name);
            if (j != SIZE_MAX && !seen[j] && mine[j] && !reached[j]) visit(j);
        }
        if (i != 0) order.push_back(i);
    };
    visit(0);
    return order;
}

// The names the user's code defines (program and user libraries), minus those
// a system library defines too: the user's definition then serves the whole
// process (a malloc), so the copies must bind to the one instance.
elf::NameSet private_names(const Objects& objects, const std::vector<size_t>& libs,
                           size_t runtime) {
    elf::NameSet names;
    const LoadedObject& program = objects[0];
    std::vector<char> copied(program.nsyms, 0);  // the program's COPY slots are not its definitions
    for (uint32_t s : program.copy_relocated)
        if (s < program.nsyms) copied[s] = 1;
    for (size_t i = 1; i < program.nsyms; ++i)
        if (!copied[i] && program.exports(i)) names.insert(program.symbol_name(i));
    for (size_t k : libs)
        for (size_t i = 1; i < objects[k].nsyms; ++i)
            if (objects[k].exports(i)) names.insert(objects[k].symbol_name(i));
    std::vector<char> user(objects.size(), 0);
    user[0] = user[runtime] = 1;
    for (size_t k : libs) user[k] = 1;
    for (auto it = names.begin(); it != names.end();) {
        bool system = false;
        for (size_t j = 1; j < objects.size() && !system; ++j)
            system = !user[j] && objects[j].defines(it->c_str());
        it = system ? names.erase(it) : std::next(it);
    }
    return names;
}

// ---- The copies ---------------------------------------------------------------

// A file descriptor closed with its owner.
class Fd {
  public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other) {
            reset();
            fd_ = std::exchange(other.fd_, -1);
        }
        return *this;
    }
    ~Fd() { reset(); }
    int get() const { return fd_; }
    void reset() {
        if (fd_ >= 0) close(fd_);
        fd_ = -1;
    }

  private:
    int fd_;
};

// One object copied for every extra rank.
struct Copyable {
    std::string path;  // of the original
    Fd original;       // the original file, to map unmodified segments from
    elf::ElfFile file;
    elf::Initializers init;
    bool deferred = false;  // initialisers run by us (init), not by dlopen
};

struct Plan {
    Copyable program;
    std::vector<elf::CopySlot> slots;   // the program's COPY relocations, filled by us
    std::vector<Copyable> libraries;    // dependencies first
    std::vector<size_t> library_index;  // their indices in the loaded objects
    elf::NameSet names;                 // hidden in the originals while loading
    // Per extra rank: a memfd per object (program first), and the patches.
    std::vector<std::vector<Fd>> fds;
    std::vector<std::vector<std::vector<elf::Patch>>> patches;
};

bool prepare_program(Plan* plan, std::string* why) {
    Copyable& p = plan->program;
    p.path = "/proc/self/exe";
    if (!p.file.read(p.path, why)) return false;
    p.original = Fd(open(p.path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!p.file.position_independent()) {
        *why = "not position-independent (link it with mpicc, or with -fPIE -pie)";
        return false;
    }
    p.file.clear_pie_flag();
    p.file.make_unique_symbols_global();
    p.deferred = p.file.defer_initializers(&p.init);
    // The loader fills COPY slots from the defining library's own storage,
    // which is not the live variable: we fill them, before the initialisers.
    if (p.deferred) plan->slots = p.file.drop_copy_relocations([](const char*) { return false; });
    return true;
}

bool prepare_libraries(const Objects& objects, const std::vector<size_t>& libs, Plan* plan,
                       std::string* why) {
    if (!plan->program.deferred) {
        *why = "the program has no DT_INIT_ARRAY";
        return false;
    }
    for (size_t k : libs) {
        Copyable c;
        c.path = objects[k].path;
        if (!c.file.read(c.path, why)) {
            *why = c.path + ": " + *why;
            return false;
        }
        c.original = Fd(open(c.path.c_str(), O_RDONLY | O_CLOEXEC));
        c.file.make_unique_symbols_global();
        c.deferred = c.file.defer_initializers(&c.init);
        plan->libraries.push_back(std::move(c));
        plan->library_index.push_back(k);
    }
    return true;
}

void close_fds(Plan* plan) {
    plan->fds.clear();
    plan->patches.clear();
}

// The copies are loaded as /proc/self/fd/N and /dev/fd/N, the names gdb then
// reads from the loader's list and opens in its own process: were N one of
// gdb's pipes, gdb would block reading it. Numbers from here up are free in a
// debugger (its open fails and it only warns).
constexpr int kFirstImageFd = 512;

// Enough descriptors for every copy of every rank: the memfds stay open until
// every copy is loaded (glibc recognises a loaded object by its path).
void make_room_for_fds(size_t count) {
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
    const rlim_t want = static_cast<rlim_t>(count) + kFirstImageFd + 64;
    if (rl.rlim_cur >= want) return;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : std::min(want, rl.rlim_max);
    setrlimit(RLIMIT_NOFILE, &rl);
}

// The memfds of every copy, and each copy's patches: its dependencies on the
// user's libraries point at the same rank's copies.
bool plan_copies(const Objects& objects, int nlocal, Plan* plan, std::string* why) {
    const size_t per_rank = 1 + plan->libraries.size();
    make_room_for_fds(per_rank * static_cast<size_t>(nlocal - 1));
    for (int r = 1; r < nlocal; ++r) {
        std::vector<Fd> fds;
        for (size_t k = 0; k < per_rank; ++k) {
            std::string name = "fibermpi-rank-image-" + std::to_string(r);
            if (k > 0) {
                const std::string& path = plan->libraries[k - 1].path;
                name.append(1, '-').append(path, path.rfind('/') + 1);
            }
            int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
            if (fd < 0)
                runtime::fatal("cannot create a rank image: memfd_create failed (%s)",
                               strerror(errno));
            const int high = fcntl(fd, F_DUPFD_CLOEXEC, kFirstImageFd);
            if (high >= 0) {  // else (a low fd limit) the low number does
                close(fd);
                fd = high;
            }
            fds.emplace_back(fd);
        }
        std::vector<std::vector<elf::Patch>> patches(per_rank);
        for (size_t k = 0; k < per_rank; ++k) {
            const Copyable& c = k == 0 ? plan->program : plan->libraries[k - 1];
            for (const std::string& name : c.file.needed()) {
                const size_t obj = find_needed(objects, name);
                auto lib = std::find(plan->library_index.begin(), plan->library_index.end(), obj);
                if (lib == plan->library_index.end()) continue;
                const int fd =
                    fds[1 + static_cast<size_t>(lib - plan->library_index.begin())].get();
                if (!c.file.redirect_needed(name, fd, &patches[k], why)) {
                    *why = (k == 0 ? std::string("the program") : c.path) + ": " + *why;
                    close_fds(plan);
                    return false;
                }
            }
        }
        plan->fds.push_back(std::move(fds));
        plan->patches.push_back(std::move(patches));
    }
    return true;
}

bool hide_originals(const Objects& objects, size_t runtime, const Plan& plan,
                    elf::SymbolHiding* hiding, std::string* why) {
    std::vector<size_t> which = plan.library_index;
    which.push_back(0);
    which.push_back(runtime);
    for (size_t i : which) {
        if (!hiding->hide(objects[i], plan.names)) {
            *why = (i == 0 ? std::string("the program") : objects[i].path) +
                   ": no GNU hash table, or its page cannot be made writable";
            hiding->restore();
            return false;
        }
    }
    return true;
}

// Plans the copies of the user's libraries too; false (nothing planned) with
// *why when one of the steps cannot be done.
bool plan_with_libraries(const Objects& objects, size_t runtime, const std::vector<size_t>& libs,
                         int nlocal, Plan* plan, elf::SymbolHiding* hiding, std::string* why) {
    if (prepare_libraries(objects, libs, plan, why)) {
        plan->names = private_names(objects, plan->library_index, runtime);
        if (plan_copies(objects, nlocal, plan, why)) {
            if (hide_originals(objects, runtime, *plan, hiding, why)) return true;
            close_fds(plan);
        }
    }
    plan->libraries.clear();
    plan->library_index.clear();
    plan->names.clear();
    return false;
}

// ---- After loading: COPY slots, initialisers, messages ------------------------

const LoadedObject* find_path(const Objects& objects, const std::string& path) {
    for (const LoadedObject& o : objects)
        if (o.path == path) return &o;
    return nullptr;
}

// The value a rank's COPY slot starts with: the live variable of a system
// library (rank 0's slot), or the untouched definition in the rank's copy of
// the user library that defines it.
const void* slot_source(const Plan& plan, const Objects& objects,
                        const std::vector<const LoadedObject*>& libs, const elf::CopySlot& slot) {
    if (plan.names.count(slot.name))
        for (const LoadedObject* lib : libs)
            if (const Elf64_Sym* s = lib->find(slot.name.c_str()))
                return reinterpret_cast<const void*>(lib->base + s->st_value);
    return reinterpret_cast<const void*>(objects[0].base + slot.vaddr);
}

void fill_slots(const Plan& plan, const Objects& objects, const LoadedObject& copy,
                const std::vector<const LoadedObject*>& libs) {
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    for (const elf::CopySlot& slot : plan.slots) {
        const uintptr_t dst = copy.base + slot.vaddr;
        const bool relro = copy.in_relro(dst);
        const uintptr_t lo = dst & ~(page - 1);
        const size_t len = ((dst + slot.size + page - 1) & ~(page - 1)) - lo;
        if (relro) mprotect(reinterpret_cast<void*>(lo), len, PROT_READ | PROT_WRITE);
        memcpy(reinterpret_cast<void*>(dst), slot_source(plan, objects, libs, slot), slot.size);
        if (relro) mprotect(reinterpret_cast<void*>(lo), len, PROT_READ);
    }
}

// Maps the segments a copy has exactly as the original file from that file
// (all ranks then share its page cache) and frees them in the copy's memfd.
void share_unmodified_segments(const Copyable& c, const std::vector<elf::Patch>& patches,
                               uintptr_t base, int memfd) {
    if (c.original.get() < 0) return;
    for (const elf::ElfFile::Segment& seg : c.file.unmodified_segments(patches)) {
        void* fresh = mmap(nullptr, seg.length, seg.prot, MAP_PRIVATE, c.original.get(),
                           static_cast<off_t>(seg.offset));
        if (fresh == MAP_FAILED) continue;
        // mremap replaces the copy's pages in one step, or leaves them.
        void* target = reinterpret_cast<void*>(base + seg.vaddr);
        if (mremap(fresh, seg.length, seg.length, MREMAP_MAYMOVE | MREMAP_FIXED, target) ==
            MAP_FAILED) {
            munmap(fresh, seg.length);
            continue;
        }
        fallocate(memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(seg.offset),
                  static_cast<off_t>(seg.length));
    }
}

void run_initializers(const Copyable& c, uintptr_t base) {
    using Init = void (*)(int, char**, char**);
    if (!c.deferred) return;
    if (c.init.init) reinterpret_cast<Init>(base + c.init.init)(g_argc, g_argv, environ);
    auto* array = reinterpret_cast<const uintptr_t*>(base + c.init.array);
    for (size_t j = 0; j < c.init.count; ++j)
        if (array[j] != 0 && array[j] != static_cast<uintptr_t>(-1))
            reinterpret_cast<Init>(array[j])(g_argc, g_argv, environ);
}

// The copies of rank r (program, then libraries) as the loader mapped them.
std::vector<const LoadedObject*> rank_objects(const Plan& plan, const Objects& loaded, size_t r) {
    std::vector<const LoadedObject*> out;
    for (size_t k = 0; k < plan.fds[r].size(); ++k) {
        const std::string path =
            (k == 0 ? "/proc/self/fd/" : "/dev/fd/") + std::to_string(plan.fds[r][k].get());
        const LoadedObject* o = find_path(loaded, path);
        if (!o)
            runtime::fatal("rank image %zu: %s was not loaded from its copy (%s)", r + 1,
                           k == 0 ? "the program" : plan.libraries[k - 1].path.c_str(),
                           path.c_str());
        out.push_back(o);
    }
    return out;
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

void setup_tls(ImageSet* set, int nlocal) {
    MainProgram mp;
    dl_iterate_phdr(find_main_program, &mp);
    if (!mp.tls || !mp.tls->p_memsz || !mp.tls_block) return;
    const std::ptrdiff_t offset =
        static_cast<char*>(__builtin_thread_pointer()) - static_cast<char*>(mp.tls_block);
    set_program_tls(offset, mp.tls->p_memsz);  // even for one rank: its thread_local objects
    // The program's TLS block: swapped per rank whenever ranks share a VP.
    if (nlocal > 1) {
        set->tls_size = mp.tls->p_memsz;
        set->tls_offset = offset;
        set->tls_init.assign(set->tls_size, 0);
        memcpy(set->tls_init.data(), reinterpret_cast<const char*>(mp.base + mp.tls->p_vaddr),
               mp.tls->p_filesz);
    }
}

void load_copies(const Plan& plan, int nlocal, ImageSet* set) {
    for (int r = 1; r < nlocal; ++r) {
        const size_t i = static_cast<size_t>(r - 1);
        for (size_t k = 0; k < plan.fds[i].size(); ++k) {
            const Copyable& c = k == 0 ? plan.program : plan.libraries[k - 1];
            if (!c.file.write_copy(plan.fds[i][k].get(), plan.patches[i][k]))
                runtime::fatal("cannot write a rank image (%s)", strerror(errno));
        }
        const std::string path = "/proc/self/fd/" + std::to_string(plan.fds[i][0].get());
        void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            std::string libs;
            for (const Copyable& c : plan.libraries) libs += (libs.empty() ? "" : ", ") + c.path;
            runtime::fatal("cannot load rank image %d: %s%s%s%s", r, dlerror(),
                           libs.empty() ? "" : " (with copies of the user's libraries ",
                           libs.c_str(),
                           libs.empty() ? "" : "; MPC_SHARED_LIBS=all keeps them shared)");
        }
        set->handles.push_back(h);
    }
}

void finish_copies(const Plan& plan, const std::vector<void*>& owners, uintptr_t main_offset,
                   ImageSet* set) {
    const int nlocal = static_cast<int>(owners.size());
    const Objects objects = loaded_objects();
    for (int r = 1; r < nlocal; ++r) {
        const std::vector<const LoadedObject*> copies =
            rank_objects(plan, objects, static_cast<size_t>(r - 1));
        const std::vector<const LoadedObject*> libs(copies.begin() + 1, copies.end());
        const uintptr_t base = copies[0]->base;
        set->mains[static_cast<size_t>(r)] = reinterpret_cast<MainFn>(base + main_offset);
        runtime::debug("rank image %d loaded at %p (gdb: add-symbol-file PROGRAM -o %p)", r,
                       reinterpret_cast<void*>(base), reinterpret_cast<void*>(base));
        for (size_t k = 0; k < libs.size(); ++k)
            runtime::debug("rank image %d: %s loaded at %p (gdb: add-symbol-file %s -o %p)", r,
                           plan.libraries[k].path.c_str(), reinterpret_cast<void*>(libs[k]->base),
                           plan.libraries[k].path.c_str(), reinterpret_cast<void*>(libs[k]->base));
        for (const LoadedObject* o : copies)
            set->objects[static_cast<size_t>(r)].push_back(o->base);
        for (size_t k = 0; k < copies.size(); ++k)
            share_unmodified_segments(k == 0 ? plan.program : plan.libraries[k - 1],
                                      plan.patches[static_cast<size_t>(r - 1)][k], copies[k]->base,
                                      plan.fds[static_cast<size_t>(r - 1)][k].get());
        fill_slots(plan, objects, *copies[0], libs);
        bind_rank_variables(owners[static_cast<size_t>(r)], copies);
        // As rank r: what a constructor does to libc's state (srand, say) is
        // rank r's, as rank 0's constructors act on the process's.
        sched::set_thread_owner(owners[static_cast<size_t>(r)]);
        for (size_t k = 0; k < libs.size(); ++k) run_initializers(plan.libraries[k], libs[k]->base);
        run_initializers(plan.program, base);
        sched::set_thread_owner(nullptr);
    }
}

}  // namespace

ImageSet load_images(MainFn original, const std::vector<void*>& owners, bool shared) {
    const int nlocal = static_cast<int>(owners.size());
    ImageSet set;
    set.mains.assign(static_cast<size_t>(nlocal), original);
    set.objects.resize(static_cast<size_t>(nlocal));
    setup_tls(&set, nlocal);
    if (shared) return set;
    const Objects objects = loaded_objects();
    if (nlocal <= 1) {
        set.objects[0].push_back(objects[0].base);  // a lone rank owns the program
        return set;
    }

    Plan plan;
    std::string why;
    if (!prepare_program(&plan, &why)) {
        runtime::warn("ranks of this node share the program's global variables: the program is %s",
                      why.c_str());
        return set;
    }
    size_t runtime_index = 0;
    for (size_t i = 1; i < objects.size(); ++i)
        if (objects[i].contains(reinterpret_cast<const void*>(&load_images))) runtime_index = i;
    std::vector<std::string> static_tls;
    const std::vector<size_t> libs =
        runtime_index ? user_libraries(objects, runtime_index, &static_tls) : std::vector<size_t>{};
    for (const std::string& path : static_tls)
        runtime::warn(
            "ranks of this node share %s: it has initial-exec thread-local variables "
            "(static TLS), which cannot be copied per rank",
            path.c_str());
    elf::SymbolHiding hiding;
    if (!libs.empty() &&
        !plan_with_libraries(objects, runtime_index, libs, nlocal, &plan, &hiding, &why))
        runtime::warn("ranks of this node share the user's shared libraries (%s, ...): %s",
                      objects[libs[0]].path.c_str(), why.c_str());
    if (plan.fds.empty() && !plan_copies(objects, nlocal, &plan, &why))
        runtime::fatal("cannot plan the rank images: %s", why.c_str());

    load_copies(plan, nlocal, &set);
    hiding.restore();
    finish_copies(plan, owners, reinterpret_cast<uintptr_t>(original) - objects[0].base, &set);
    close_fds(&plan);  // the mappings keep the memfds alive
    set.private_globals = true;
    set.private_libraries = plan.libraries.size();
    // Rank 0 runs the originals: the program, and the user's libraries when
    // the other ranks have copies of them.
    set.objects[0].push_back(objects[0].base);
    for (size_t k : plan.library_index) set.objects[0].push_back(objects[k].base);
    return set;
}

void unload_images(ImageSet& images) {
    for (void* h : images.handles) dlclose(h);
    images.handles.clear();
}

}  // namespace mpc::host
