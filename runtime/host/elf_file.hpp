// Rank images, the file side: a program or shared library read from disk and
// turned into the bytes of one rank's copy (see images.hpp for why each change
// is needed). The common changes are made once to the bytes in memory; what
// differs per rank (which memfd a dependency is loaded from) is a small list of
// patches written over each copy. Never touches the file on disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mpc::host::elf {

// Bytes written over a copy at a file offset.
struct Patch {
    size_t offset = 0;
    std::string bytes;
};

// A COPY relocation the loader will no longer perform: the copy's variable at
// vaddr (size bytes) is filled from the live one by the caller.
struct CopySlot {
    std::string name;  // of the symbol
    uint64_t vaddr = 0;
    uint64_t size = 0;
};

// Initialisers taken away from the loader (run by the caller once the copy's
// COPY slots are filled): DT_INIT, then the DT_INIT_ARRAY entries.
struct Initializers {
    uint64_t init = 0;   // vaddr of DT_INIT, or 0
    uint64_t array = 0;  // vaddr of DT_INIT_ARRAY, or 0
    size_t count = 0;
};

class ElfFile {
  public:
    // Reads a 64-bit little-endian ELF object with a dynamic section.
    bool read(const std::string& path, std::string* why);

    bool position_independent() const;  // ET_DYN (a PIE or a shared library)
    const std::vector<std::string>& needed() const { return needed_; }

    // Common changes (every copy). Lets dlopen load a PIE executable.
    void clear_pie_flag();
    // STB_GNU_UNIQUE symbols would resolve to the first instance process-wide.
    void make_unique_symbols_global();
    // Turns the COPY relocations of symbols for which keep() is false into no-ops.
    std::vector<CopySlot> drop_copy_relocations(const std::function<bool(const char*)>& keep);
    // Hides DT_INIT and empties DT_INIT_ARRAY (destructors still run at dlclose);
    // false (nothing changed) when the object has no DT_INIT_ARRAY.
    bool defer_initializers(Initializers* out);

    // Per copy: the patches that make the dependency `name` load from
    // /dev/fd/<fd>, written over the NEEDED string (or over RUNPATH when the
    // name is too short for the path). False with *why when neither fits.
    bool redirect_needed(const std::string& name, int fd, std::vector<Patch>* out,
                         std::string* why) const;

    // Writes the copy: the part of the file the loader maps, then the patches.
    bool write_copy(int fd, const std::vector<Patch>& patches) const;

    // The pages of read-only segments that a copy (with these patches) has
    // exactly as the file does: a copy can map them from the original file
    // (one page cache for all ranks) instead of from its memfd.
    struct Segment {
        size_t offset = 0;  // in the file, page-aligned
        size_t length = 0;
        uint64_t vaddr = 0;  // page-aligned
        int prot = 0;
    };
    std::vector<Segment> unmodified_segments(const std::vector<Patch>& patches) const;

  private:
    struct NeededEntry {
        std::string name;
        size_t str = 0;  // offset in the string table
    };
    size_t file_offset(uint64_t vaddr) const;  // SIZE_MAX when not in the file
    bool parse_dynamic(std::string* why);
    bool rewritable(size_t str, size_t len) const;
    void collect_string_refs();
    void modified(size_t offset, size_t length) { modified_.push_back({offset, length}); }
    void modified(const void* p, size_t length) {
        modified(static_cast<size_t>(static_cast<const char*>(p) - data_.data()), length);
    }

    std::vector<char> data_;
    size_t loaded_size_ = 0;
    size_t dynamic_ = 0, dynamic_count_ = 0;  // file offset and entry count
    size_t strtab_ = SIZE_MAX, symtab_ = SIZE_MAX, nsyms_ = 0;
    size_t rela_ = SIZE_MAX, rela_count_ = 0;
    long path_entry_ = -1;  // index of DT_RUNPATH, else DT_RPATH, else -1
    std::vector<NeededEntry> needed_entries_;
    std::vector<std::string> needed_;
    std::vector<size_t> string_refs_;  // every string table offset something refers to
    std::vector<std::pair<size_t, size_t>> modified_;  // (offset, length) changed in data_
    bool text_relocations_ = false;
};

}  // namespace mpc::host::elf
