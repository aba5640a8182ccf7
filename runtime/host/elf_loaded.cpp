#include "elf_loaded.hpp"

#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "elf_hash.hpp"

namespace mpc::host::elf {
namespace {

int collect(dl_phdr_info* info, size_t, void* data) {
    auto* objects = static_cast<std::vector<LoadedObject>*>(data);
    LoadedObject obj;
    obj.path = info->dlpi_name ? info->dlpi_name : "";
    obj.base = info->dlpi_addr;
    obj.phdrs = info->dlpi_phdr;
    obj.phnum = info->dlpi_phnum;
    objects->push_back(std::move(obj));
    return 0;
}

// The loader rewrites most dynamic entries to run-time addresses, but not
// those of read-only dynamic sections (the vDSO's).
uintptr_t address(const LoadedObject& obj, uint64_t ptr) {
    return ptr < obj.base ? obj.base + ptr : ptr;
}

void read_dynamic(LoadedObject& obj) {
    const Elf64_Dyn* dyn = nullptr;
    for (int i = 0; i < obj.phnum; ++i)
        if (obj.phdrs[i].p_type == PT_DYNAMIC)
            dyn = reinterpret_cast<const Elf64_Dyn*>(obj.base + obj.phdrs[i].p_vaddr);
    if (!dyn) return;
    const Elf64_Rela* rela = nullptr;
    size_t rela_count = 0, soname = SIZE_MAX;
    std::vector<size_t> needed;
    for (const Elf64_Dyn* d = dyn; d->d_tag != DT_NULL; ++d) {
        switch (d->d_tag) {
            case DT_STRTAB:
                obj.strtab = reinterpret_cast<const char*>(address(obj, d->d_un.d_ptr));
                break;
            case DT_SYMTAB:
                obj.symtab = reinterpret_cast<const Elf64_Sym*>(address(obj, d->d_un.d_ptr));
                break;
            case DT_GNU_HASH:
                obj.gnu_hash = reinterpret_cast<uint32_t*>(address(obj, d->d_un.d_ptr));
                break;
            case DT_HASH:
                obj.sysv_hash = reinterpret_cast<const void*>(address(obj, d->d_un.d_ptr));
                break;
            case DT_RELA:
                rela = reinterpret_cast<const Elf64_Rela*>(address(obj, d->d_un.d_ptr));
                break;
            case DT_RELASZ:
                rela_count = d->d_un.d_val / sizeof(Elf64_Rela);
                break;
            case DT_SONAME:
                soname = d->d_un.d_val;
                break;
            case DT_NEEDED:
                needed.push_back(d->d_un.d_val);
                break;
            case DT_FLAGS:
                obj.static_tls = (d->d_un.d_val & DF_STATIC_TLS) != 0;
                break;
            default:
                break;
        }
    }
    if (!obj.strtab || !obj.symtab) return;
    if (obj.gnu_hash)
        obj.nsyms = GnuHashTable(obj.gnu_hash).symbol_count();
    else if (obj.sysv_hash)
        obj.nsyms = sysv_symbol_count(obj.sysv_hash);
    if (soname != SIZE_MAX) obj.soname = obj.strtab + soname;
    for (size_t n : needed) obj.needed.emplace_back(obj.strtab + n);
    obj.rela = rela;
    obj.rela_count = rela_count;
    for (size_t i = 0; rela && i < rela_count; ++i)
        if (ELF64_R_TYPE(rela[i].r_info) == R_X86_64_COPY)
            obj.copy_relocated.push_back(static_cast<uint32_t>(ELF64_R_SYM(rela[i].r_info)));
}

int page_prot(const LoadedObject& obj, uintptr_t addr) {
    for (int i = 0; i < obj.phnum; ++i) {
        const Elf64_Phdr& p = obj.phdrs[i];
        if (p.p_type != PT_LOAD || addr < obj.base + p.p_vaddr ||
            addr >= obj.base + p.p_vaddr + p.p_memsz)
            continue;
        return ((p.p_flags & PF_R) ? PROT_READ : 0) | ((p.p_flags & PF_W) ? PROT_WRITE : 0) |
               ((p.p_flags & PF_X) ? PROT_EXEC : 0);
    }
    return PROT_READ;
}

}  // namespace

bool LoadedObject::in_relro(uintptr_t addr) const {
    for (int i = 0; i < phnum; ++i) {
        const Elf64_Phdr& p = phdrs[i];
        if (p.p_type == PT_GNU_RELRO && addr >= base + p.p_vaddr &&
            addr < base + p.p_vaddr + p.p_memsz)
            return true;
    }
    return false;
}

bool LoadedObject::exports(size_t i) const {
    const Elf64_Sym& s = symtab[i];
    const int type = ELF64_ST_TYPE(s.st_info), bind = ELF64_ST_BIND(s.st_info);
    const int vis = ELF64_ST_VISIBILITY(s.st_other);
    return s.st_shndx != SHN_UNDEF && s.st_name != 0 && type != STT_SECTION && type != STT_FILE &&
           (bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE) &&
           (vis == STV_DEFAULT || vis == STV_PROTECTED);
}

const Elf64_Sym* LoadedObject::find(const char* name) const {
    if (!symtab) return nullptr;
    const Elf64_Sym* found = nullptr;
    if (gnu_hash) {
        GnuHashTable(gnu_hash).for_each_candidate(name, [&](uint32_t i) {
            if (!found && exports(i) && strcmp(symbol_name(i), name) == 0) found = &symtab[i];
        });
        return found;
    }
    for (size_t i = 1; i < nsyms; ++i)  // a DT_HASH object: rare, read in full
        if (exports(i) && strcmp(symbol_name(i), name) == 0) return &symtab[i];
    return nullptr;
}

bool LoadedObject::contains(const void* address) const {
    const auto a = reinterpret_cast<uintptr_t>(address);
    for (int i = 0; i < phnum; ++i)
        if (phdrs[i].p_type == PT_LOAD && a >= base + phdrs[i].p_vaddr &&
            a < base + phdrs[i].p_vaddr + phdrs[i].p_memsz)
            return true;
    return false;
}

bool LoadedObject::answers_to(const std::string& name) const {
    if (name.empty()) return false;
    if (soname == name || path == name) return true;
    const size_t slash = path.rfind('/');
    return slash != std::string::npos && path.compare(slash + 1, std::string::npos, name) == 0;
}

std::vector<LoadedObject> loaded_objects() {
    std::vector<LoadedObject> objects;
    dl_iterate_phdr(collect, &objects);
    for (LoadedObject& obj : objects) read_dynamic(obj);
    return objects;
}

std::vector<DataReference> data_references(const LoadedObject& obj,
                                           const std::vector<const char*>& names) {
    std::vector<DataReference> refs;
    if (!obj.rela || !obj.symtab) return refs;
    for (size_t i = 0; i < obj.rela_count; ++i) {
        const Elf64_Rela& r = obj.rela[i];
        const auto type = ELF64_R_TYPE(r.r_info);
        const auto sym = ELF64_R_SYM(r.r_info);
        if ((type != R_X86_64_GLOB_DAT && type != R_X86_64_64) || sym == 0) continue;
        for (size_t n = 0; n < names.size(); ++n)
            if (strcmp(obj.symbol_name(sym), names[n]) == 0)
                refs.push_back({r.r_offset, r.r_addend, n});
    }
    return refs;
}

void point_reference(const LoadedObject& obj, const DataReference& ref, uintptr_t target) {
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    auto* slot = reinterpret_cast<uintptr_t*>(obj.base + ref.offset);
    // GOT entries lie in RELRO, read-only once the loader is done.
    const uintptr_t lo = reinterpret_cast<uintptr_t>(slot) & ~(page - 1);
    const bool relro = obj.in_relro(reinterpret_cast<uintptr_t>(slot));
    if (relro && mprotect(reinterpret_cast<void*>(lo), page, PROT_READ | PROT_WRITE) != 0) return;
    *slot = target + static_cast<uintptr_t>(ref.addend);
    if (relro) mprotect(reinterpret_cast<void*>(lo), page, PROT_READ);
}

bool SymbolHiding::hide(const LoadedObject& obj, const NameSet& names) {
    if (!obj.symtab) return true;
    if (!obj.gnu_hash) {  // fine as long as there is nothing to hide
        for (size_t i = 1; i < obj.nsyms; ++i)
            if (obj.exports(i) && names.count(obj.symbol_name(i))) return false;
        return true;
    }
    GnuHashTable table(obj.gnu_hash);
    std::vector<uint32_t*> words;
    for (size_t i = table.symoffset; i < obj.nsyms; ++i)
        if (obj.exports(i) && names.count(obj.symbol_name(i)))
            words.push_back(&table.chain[i - table.symoffset]);
    if (words.empty()) return true;
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t lo =
        reinterpret_cast<uintptr_t>(*std::min_element(words.begin(), words.end())) & ~(page - 1);
    const uintptr_t hi =
        reinterpret_cast<uintptr_t>(*std::max_element(words.begin(), words.end())) +
        sizeof(uint32_t);
    const size_t length = (hi - lo + page - 1) & ~(page - 1);
    const int prot = page_prot(obj, lo);
    if (mprotect(reinterpret_cast<void*>(lo), length, prot | PROT_WRITE) != 0) return false;
    pages_.push_back({reinterpret_cast<void*>(lo), length, prot});
    // Bit 1 of a chain word is part of the hash: the loader's compare now fails.
    for (uint32_t* w : words) *w ^= 2u;
    words_.insert(words_.end(), words.begin(), words.end());
    return true;
}

void SymbolHiding::restore() {
    for (uint32_t* w : words_) *w ^= 2u;
    for (const Pages& p : pages_) mprotect(p.start, p.length, p.prot);
    words_.clear();
    pages_.clear();
}

}  // namespace mpc::host::elf
