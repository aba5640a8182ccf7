#include "elf_file.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "elf_hash.hpp"

namespace mpc::host::elf {
namespace {

bool read_all(const std::string& path, std::vector<char>* data) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) data->insert(data->end(), buf, buf + n);
    close(fd);
    return n == 0;
}

bool write_all(int fd, const char* p, size_t n, off_t at) {
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, at);
        if (w <= 0) return false;
        p += w;
        n -= static_cast<size_t>(w);
        at += w;
    }
    return true;
}

// Dynamic tags whose value is an offset in the string table.
bool is_string_tag(int64_t tag) {
    switch (tag) {
        case DT_NEEDED:
        case DT_SONAME:
        case DT_RPATH:
        case DT_RUNPATH:
        case DT_AUXILIARY:
        case DT_FILTER:
        case DT_CONFIG:
        case DT_DEPAUDIT:
        case DT_AUDIT:
            return true;
        default:
            return false;
    }
}

constexpr const char kFdDir[] = "/dev/fd";

}  // namespace

bool ElfFile::read(const std::string& path, std::string* why) {
    if (!read_all(path, &data_)) {
        *why = "cannot read " + path;
        return false;
    }
    if (data_.size() < sizeof(Elf64_Ehdr) || memcmp(data_.data(), ELFMAG, SELFMAG) != 0 ||
        data_[EI_CLASS] != ELFCLASS64 || data_[EI_DATA] != ELFDATA2LSB) {
        *why = "not a 64-bit ELF file";
        return false;
    }
    auto* eh = reinterpret_cast<Elf64_Ehdr*>(data_.data());
    if (eh->e_phoff + static_cast<size_t>(eh->e_phnum) * sizeof(Elf64_Phdr) > data_.size()) {
        *why = "truncated program headers";
        return false;
    }
    // The loader reads nothing past the segments: no section headers, no debug
    // information in the copies.
    auto* ph = reinterpret_cast<const Elf64_Phdr*>(data_.data() + eh->e_phoff);
    loaded_size_ = eh->e_phoff + static_cast<size_t>(eh->e_phnum) * sizeof(Elf64_Phdr);
    for (int i = 0; i < eh->e_phnum; ++i) {
        loaded_size_ = std::max<size_t>(loaded_size_, ph[i].p_offset + ph[i].p_filesz);
        if (ph[i].p_type == PT_DYNAMIC) {
            dynamic_ = ph[i].p_offset;
            dynamic_count_ = ph[i].p_filesz / sizeof(Elf64_Dyn);
        }
    }
    if (loaded_size_ > data_.size()) {
        *why = "truncated file";
        return false;
    }
    eh->e_shoff = 0;
    eh->e_shnum = 0;
    eh->e_shstrndx = 0;
    modified(size_t{0}, sizeof(Elf64_Ehdr));
    if (dynamic_count_ == 0) {
        *why = "no dynamic section";
        return false;
    }
    return parse_dynamic(why);
}

size_t ElfFile::file_offset(uint64_t vaddr) const {
    auto* eh = reinterpret_cast<const Elf64_Ehdr*>(data_.data());
    auto* ph = reinterpret_cast<const Elf64_Phdr*>(data_.data() + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; ++i)
        if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
            vaddr < ph[i].p_vaddr + ph[i].p_filesz)
            return static_cast<size_t>(vaddr - ph[i].p_vaddr + ph[i].p_offset);
    return SIZE_MAX;
}

bool ElfFile::parse_dynamic(std::string* why) {
    auto* dyn = reinterpret_cast<const Elf64_Dyn*>(data_.data() + dynamic_);
    size_t gnu_hash = SIZE_MAX, sysv_hash = SIZE_MAX;
    for (size_t k = 0; k < dynamic_count_ && dyn[k].d_tag != DT_NULL; ++k) {
        const uint64_t v = dyn[k].d_un.d_val;
        switch (dyn[k].d_tag) {
            case DT_STRTAB:
                strtab_ = file_offset(v);
                break;
            case DT_SYMTAB:
                symtab_ = file_offset(v);
                break;
            case DT_GNU_HASH:
                gnu_hash = file_offset(v);
                break;
            case DT_HASH:
                sysv_hash = file_offset(v);
                break;
            case DT_RELA:
                rela_ = file_offset(v);
                break;
            case DT_RELASZ:
                rela_count_ = v / sizeof(Elf64_Rela);
                break;
            case DT_RUNPATH:
                path_entry_ = static_cast<long>(k);
                break;
            case DT_RPATH:
                if (path_entry_ < 0) path_entry_ = static_cast<long>(k);
                break;
            case DT_TEXTREL:
                text_relocations_ = true;
                break;
            case DT_FLAGS:
                text_relocations_ |= (v & DF_TEXTREL) != 0;
                break;
            default:
                break;
        }
    }
    if (strtab_ == SIZE_MAX || symtab_ == SIZE_MAX) {
        *why = "no dynamic symbol table";
        return false;
    }
    if (gnu_hash != SIZE_MAX)
        nsyms_ = GnuHashTable(data_.data() + gnu_hash).symbol_count();
    else if (sysv_hash != SIZE_MAX)
        nsyms_ = sysv_symbol_count(data_.data() + sysv_hash);
    if (symtab_ + nsyms_ * sizeof(Elf64_Sym) > loaded_size_ ||
        (rela_ != SIZE_MAX && rela_ + rela_count_ * sizeof(Elf64_Rela) > loaded_size_)) {
        *why = "dynamic tables outside the file";
        return false;
    }
    for (size_t k = 0; k < dynamic_count_ && dyn[k].d_tag != DT_NULL; ++k) {
        if (dyn[k].d_tag != DT_NEEDED) continue;
        const size_t str = dyn[k].d_un.d_val;
        needed_entries_.push_back({data_.data() + strtab_ + str, str});
        needed_.push_back(needed_entries_.back().name);
    }
    collect_string_refs();
    return true;
}

// Every string table offset referred to: by the dynamic section, the symbols
// and the version tables. The linker merges strings that are suffixes of
// others, so a string may only be rewritten when nothing else points into it.
void ElfFile::collect_string_refs() {
    auto* dyn = reinterpret_cast<const Elf64_Dyn*>(data_.data() + dynamic_);
    size_t verdef = SIZE_MAX, verneed = SIZE_MAX, verdefnum = 0, verneednum = 0;
    for (size_t k = 0; k < dynamic_count_ && dyn[k].d_tag != DT_NULL; ++k) {
        if (is_string_tag(dyn[k].d_tag)) string_refs_.push_back(dyn[k].d_un.d_val);
        if (dyn[k].d_tag == DT_VERDEF) verdef = file_offset(dyn[k].d_un.d_ptr);
        if (dyn[k].d_tag == DT_VERDEFNUM) verdefnum = dyn[k].d_un.d_val;
        if (dyn[k].d_tag == DT_VERNEED) verneed = file_offset(dyn[k].d_un.d_ptr);
        if (dyn[k].d_tag == DT_VERNEEDNUM) verneednum = dyn[k].d_un.d_val;
    }
    auto* sym = reinterpret_cast<const Elf64_Sym*>(data_.data() + symtab_);
    for (size_t i = 0; i < nsyms_; ++i) string_refs_.push_back(sym[i].st_name);
    for (size_t off = verdef, n = 0; off != SIZE_MAX && n < verdefnum; ++n) {
        auto* vd = reinterpret_cast<const Elf64_Verdef*>(data_.data() + off);
        for (size_t a = off + vd->vd_aux, m = 0; m < vd->vd_cnt; ++m) {
            auto* aux = reinterpret_cast<const Elf64_Verdaux*>(data_.data() + a);
            string_refs_.push_back(aux->vda_name);
            a += aux->vda_next;
        }
        off = vd->vd_next ? off + vd->vd_next : SIZE_MAX;
    }
    for (size_t off = verneed, n = 0; off != SIZE_MAX && n < verneednum; ++n) {
        auto* vn = reinterpret_cast<const Elf64_Verneed*>(data_.data() + off);
        string_refs_.push_back(vn->vn_file);
        for (size_t a = off + vn->vn_aux, m = 0; m < vn->vn_cnt; ++m) {
            auto* aux = reinterpret_cast<const Elf64_Vernaux*>(data_.data() + a);
            string_refs_.push_back(aux->vna_name);
            a += aux->vna_next;
        }
        off = vn->vn_next ? off + vn->vn_next : SIZE_MAX;
    }
}

bool ElfFile::rewritable(size_t str, size_t len) const {
    if (str > 0 && data_[strtab_ + str - 1] != '\0') return false;  // the tail of a longer string
    for (size_t ref : string_refs_)
        if (ref > str && ref <= str + len) return false;  // another string inside this one
    return true;
}

bool ElfFile::position_independent() const {
    return reinterpret_cast<const Elf64_Ehdr*>(data_.data())->e_type == ET_DYN;
}

void ElfFile::clear_pie_flag() {
    auto* dyn = reinterpret_cast<Elf64_Dyn*>(data_.data() + dynamic_);
    for (size_t k = 0; k < dynamic_count_ && dyn[k].d_tag != DT_NULL; ++k)
        if (dyn[k].d_tag == DT_FLAGS_1) {
            dyn[k].d_un.d_val &= ~static_cast<Elf64_Xword>(DF_1_PIE);
            modified(&dyn[k], sizeof(dyn[k]));
        }
}

void ElfFile::make_unique_symbols_global() {
    auto* sym = reinterpret_cast<Elf64_Sym*>(data_.data() + symtab_);
    for (size_t i = 0; i < nsyms_; ++i)
        if (ELF64_ST_BIND(sym[i].st_info) == STB_GNU_UNIQUE) {
            sym[i].st_info = ELF64_ST_INFO(STB_GLOBAL, ELF64_ST_TYPE(sym[i].st_info));
            modified(&sym[i], sizeof(sym[i]));
        }
}

std::vector<CopySlot> ElfFile::drop_copy_relocations(const std::function<bool(const char*)>& keep) {
    std::vector<CopySlot> dropped;
    if (rela_ == SIZE_MAX) return dropped;
    auto* rela = reinterpret_cast<Elf64_Rela*>(data_.data() + rela_);
    auto* sym = reinterpret_cast<const Elf64_Sym*>(data_.data() + symtab_);
    for (size_t i = 0; i < rela_count_; ++i) {
        if (ELF64_R_TYPE(rela[i].r_info) != R_X86_64_COPY) continue;
        const size_t s = ELF64_R_SYM(rela[i].r_info);
        if (s >= nsyms_) continue;
        const char* name = data_.data() + strtab_ + sym[s].st_name;
        if (keep(name)) continue;
        dropped.push_back({name, rela[i].r_offset, sym[s].st_size});
        rela[i].r_info = ELF64_R_INFO(s, R_X86_64_NONE);
        modified(&rela[i], sizeof(rela[i]));
    }
    return dropped;
}

bool ElfFile::defer_initializers(Initializers* out) {
    auto* dyn = reinterpret_cast<Elf64_Dyn*>(data_.data() + dynamic_);
    long init = -1, array_size = -1;
    *out = Initializers{};
    for (size_t k = 0; k < dynamic_count_ && dyn[k].d_tag != DT_NULL; ++k) {
        switch (dyn[k].d_tag) {
            case DT_INIT:
                init = static_cast<long>(k);
                break;
            case DT_INIT_ARRAY:
                out->array = dyn[k].d_un.d_ptr;
                break;
            case DT_INIT_ARRAYSZ:
                array_size = static_cast<long>(k);
                break;
            case DT_CHECKSUM:
                return false;  // taken: no tag left to park DT_INIT in
            default:
                break;
        }
    }
    // With DT_INIT_ARRAY present (even empty) the loader marks the copy as
    // initialised, so that dlclose runs its destructors.
    if (!out->array || array_size < 0) return false;
    out->count = dyn[array_size].d_un.d_val / sizeof(uint64_t);
    dyn[array_size].d_un.d_val = 0;
    modified(&dyn[array_size], sizeof(Elf64_Dyn));
    if (init >= 0) {
        out->init = dyn[init].d_un.d_ptr;
        dyn[init].d_tag = DT_CHECKSUM;  // a tag the loader ignores
        modified(&dyn[init], sizeof(Elf64_Dyn));
    }
    return true;
}

bool ElfFile::redirect_needed(const std::string& name, int fd, std::vector<Patch>* out,
                              std::string* why) const {
    auto entry = std::find_if(needed_entries_.begin(), needed_entries_.end(),
                              [&](const NeededEntry& e) { return e.name == name; });
    if (entry == needed_entries_.end()) {
        *why = "no dependency named " + name;
        return false;
    }
    const std::string number = std::to_string(fd);
    const std::string path = std::string(kFdDir) + "/" + number;
    if (!rewritable(entry->str, name.size())) {
        *why = "its name " + name + " shares bytes with other names";
        return false;
    }
    // A name containing '/' is opened as it is, no search.
    if (path.size() <= name.size()) {
        out->push_back({strtab_ + entry->str, path + '\0'});
        return true;
    }
    // Otherwise the bare number, found through a search path of /dev/fd.
    if (path_entry_ >= 0) {
        auto* dyn = reinterpret_cast<const Elf64_Dyn*>(data_.data() + dynamic_);
        const size_t dir = dyn[path_entry_].d_un.d_val;
        const size_t dir_len = strlen(data_.data() + strtab_ + dir);
        if (dir_len >= sizeof(kFdDir) - 1 && rewritable(dir, dir_len)) {
            out->push_back({strtab_ + dir, std::string(kFdDir) + '\0'});
            out->push_back({strtab_ + entry->str, number + '\0'});
            return true;
        }
    }
    *why = "its name " + name + " is shorter than " + path +
           " and the object has no RUNPATH to "
           "redirect";
    return false;
}

bool ElfFile::write_copy(int fd, const std::vector<Patch>& patches) const {
    if (ftruncate(fd, static_cast<off_t>(loaded_size_)) != 0) return false;
    if (!write_all(fd, data_.data(), loaded_size_, 0)) return false;
    for (const Patch& p : patches)
        if (!write_all(fd, p.bytes.data(), p.bytes.size(), static_cast<off_t>(p.offset)))
            return false;
    return true;
}

}  // namespace mpc::host::elf

namespace mpc::host::elf {

std::vector<ElfFile::Segment> ElfFile::unmodified_segments(
    const std::vector<Patch>& patches) const {
    std::vector<Segment> out;
    if (text_relocations_) return out;  // the loader writes into the code
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    // Pages of the file with a changed byte.
    std::vector<char> changed((loaded_size_ + page - 1) / page, 0);
    auto mark = [&](size_t offset, size_t length) {
        for (size_t p = offset / page; p < changed.size() && p * page < offset + length; ++p)
            changed[p] = 1;
    };
    for (const auto& m : modified_) mark(m.first, m.second);
    for (const Patch& p : patches) mark(p.offset, p.bytes.size());
    auto* eh = reinterpret_cast<const Elf64_Ehdr*>(data_.data());
    auto* ph = reinterpret_cast<const Elf64_Phdr*>(data_.data() + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; ++i) {
        if (ph[i].p_type != PT_LOAD || (ph[i].p_flags & PF_W) || ph[i].p_filesz != ph[i].p_memsz ||
            ph[i].p_offset % page != ph[i].p_vaddr % page)
            continue;
        const int prot =
            ((ph[i].p_flags & PF_R) ? PROT_READ : 0) | ((ph[i].p_flags & PF_X) ? PROT_EXEC : 0);
        // The loader maps whole pages; runs of unchanged ones can come from the file.
        const size_t first = ph[i].p_offset / page;
        const size_t last = (ph[i].p_offset + ph[i].p_filesz + page - 1) / page;  // exclusive
        for (size_t p = first; p < last;) {
            if (p >= changed.size() || changed[p]) {
                ++p;
                continue;
            }
            size_t q = p;
            while (q < last && q < changed.size() && !changed[q]) ++q;
            const uint64_t vaddr =
                (ph[i].p_vaddr & ~static_cast<uint64_t>(page - 1)) + (p - first) * page;
            out.push_back({p * page, (q - p) * page, vaddr, prot});
            p = q;
        }
    }
    return out;
}

}  // namespace mpc::host::elf
