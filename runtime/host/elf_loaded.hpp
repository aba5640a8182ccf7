// Rank images, the loader side: the objects the dynamic loader mapped at
// start-up (the program, its libraries, the runtime), read through their
// dynamic sections in memory; and a way to hide some of their symbols from
// symbol lookups for a while (see images.hpp for why).
#pragma once

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace mpc::host::elf {

struct LoadedObject {
    std::string path;  // "" for the program
    uintptr_t base = 0;
    const Elf64_Phdr* phdrs = nullptr;
    int phnum = 0;
    const Elf64_Sym* symtab = nullptr;
    const char* strtab = nullptr;
    size_t nsyms = 0;
    uint32_t* gnu_hash = nullptr;  // DT_GNU_HASH, or nullptr
    const void* sysv_hash = nullptr;
    std::string soname;
    std::vector<std::string> needed;
    std::vector<uint32_t> copy_relocated;  // symbols with a COPY relocation here
    const Elf64_Rela* rela = nullptr;      // DT_RELA: data relocations
    size_t rela_count = 0;
    bool static_tls = false;               // DF_STATIC_TLS: initial-exec thread-locals

    const char* symbol_name(size_t i) const { return strtab + symtab[i].st_name; }
    // Defined here and visible to other objects' lookups.
    bool exports(size_t i) const;
    const Elf64_Sym* find(const char* name) const;  // an exported definition
    bool defines(const char* name) const { return find(name) != nullptr; }
    bool contains(const void* address) const;
    bool in_relro(uintptr_t address) const;  // read-only once the loader is done
    // The name other objects' DT_NEEDED entries use for it: soname or file name.
    bool answers_to(const std::string& name) const;
};

// Every object of the process, in the loader's order (the program first).
std::vector<LoadedObject> loaded_objects();
// A data relocation (a GOT entry, a pointer in data) against a symbol.
struct DataReference {
    uint64_t offset = 0;  // from the object's base
    int64_t addend = 0;
    size_t name = 0;      // index in the names asked for
};
// obj's data relocations against any of `names`.
std::vector<DataReference> data_references(const LoadedObject& obj,
                                           const std::vector<const char*>& names);
// Points a reference at target (plus its addend): obj's code then reaches
// target instead of the definition the loader bound.
void point_reference(const LoadedObject& obj, const DataReference& ref, uintptr_t target);

using NameSet = std::unordered_set<std::string>;

// While alive, the hidden symbols are invisible to the dynamic loader's
// lookups: their GNU hash chain words are altered (one bit) in memory, and
// put back by restore() or the destructor.
class SymbolHiding {
  public:
    SymbolHiding() = default;
    SymbolHiding(const SymbolHiding&) = delete;
    SymbolHiding& operator=(const SymbolHiding&) = delete;
    ~SymbolHiding() { restore(); }

    // Hides obj's exported definitions whose names are in names. False (and
    // nothing hidden in obj) without a GNU hash table or when its page cannot
    // be made writable.
    bool hide(const LoadedObject& obj, const NameSet& names);
    void restore();

  private:
    struct Pages {
        void* start;
        size_t length;
        int prot;  // to restore
    };
    std::vector<uint32_t*> words_;
    std::vector<Pages> pages_;
};

}  // namespace mpc::host::elf
