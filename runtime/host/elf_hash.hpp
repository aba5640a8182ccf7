// Rank images: the dynamic symbol hash tables of ELF objects, read the same way
// in a file being copied (elf_file) and in an object the loader mapped
// (elf_loaded). 64-bit objects only, as the rest of rank images.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mpc::host::elf {

// The hash the dynamic loader uses with DT_GNU_HASH tables.
inline uint32_t gnu_hash(const char* name) {
    uint32_t h = 5381;
    for (auto* p = reinterpret_cast<const unsigned char*>(name); *p; ++p) h = h * 33 + *p;
    return h;
}

// A DT_GNU_HASH table: header, bloom filter, buckets, then one chain word per
// symbol from symoffset on (the symbol's hash with bit 0 marking a chain's end).
struct GnuHashTable {
    uint32_t nbuckets = 0;
    uint32_t symoffset = 0;
    const uint32_t* buckets = nullptr;
    uint32_t* chain = nullptr;  // chain[i - symoffset] belongs to symbol i

    explicit GnuHashTable(const void* table) {
        const auto* words = static_cast<const uint32_t*>(table);
        nbuckets = words[0];
        symoffset = words[1];
        const uint32_t bloom_words = words[2];
        buckets = words + 4 + 2 * static_cast<size_t>(bloom_words);  // 64-bit bloom words
        chain = const_cast<uint32_t*>(buckets + nbuckets);
    }

    // Number of entries of the dynamic symbol table (which has no size of its own).
    size_t symbol_count() const {
        uint32_t last = 0;
        for (uint32_t b = 0; b < nbuckets; ++b)
            if (buckets[b] > last) last = buckets[b];
        if (last < symoffset) return symoffset;
        while (!(chain[last - symoffset] & 1)) ++last;
        return static_cast<size_t>(last) + 1;
    }

    // Calls fn(index) for each symbol whose hash is that of name (candidates:
    // the caller compares the names).
    template <class Fn>
    void for_each_candidate(const char* name, Fn fn) const {
        if (nbuckets == 0) return;
        const uint32_t h = gnu_hash(name);
        uint32_t i = buckets[h % nbuckets];
        if (i < symoffset) return;
        for (;; ++i) {
            const uint32_t word = chain[i - symoffset];
            if ((word | 1) == (h | 1)) fn(i);
            if (word & 1) return;
        }
    }
};

// Number of entries of the dynamic symbol table from a DT_HASH table.
inline size_t sysv_symbol_count(const void* table) {
    return static_cast<const uint32_t*>(table)[1];
}

}  // namespace mpc::host::elf
