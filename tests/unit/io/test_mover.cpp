// Mover: pieces to and from a real file in as few system calls as possible,
// both ways of moving them (vector calls straight from memory, a staging
// copy for small pieces), holes, pieces that do not follow each other, and
// reads that meet the end of the file.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "../../../mpi_api/io/src/mover.hpp"

namespace io = mpc::io;

namespace {

struct TempFile {
    std::string path;
    int fd = -1;
    TempFile() {
        char name[] = "/tmp/fibermpi-mover-XXXXXX";
        fd = mkstemp(name);
        REQUIRE(fd >= 0);
        path = name;
    }
    ~TempFile() {
        close(fd);
        unlink(path.c_str());
    }
    std::vector<unsigned char> contents() const {
        std::vector<unsigned char> out(static_cast<size_t>(lseek(fd, 0, SEEK_END)));
        REQUIRE(pread(fd, out.data(), out.size(), 0) == static_cast<ssize_t>(out.size()));
        return out;
    }
};

uintptr_t addr(const void* p) {
    return reinterpret_cast<uintptr_t>(p);
}

}  // namespace

TEST_CASE("pieces of any size land at their offsets, holes stay untouched") {
    for (size_t piece : {size_t{8}, size_t{100}, size_t{4096}}) {
        TempFile f;
        std::vector<unsigned char> mem(piece * 64);
        for (size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<unsigned char>(i * 7 + piece);
        {
            io::Mover m(f.fd, io::Dir::Write, 0, &f.path);
            // Pieces 0..63, every 4th one after a hole of `piece` bytes, memory
            // taken back to front so no two pieces are contiguous in memory.
            uint64_t off = 0;
            for (size_t k = 0; k < 64; ++k) {
                if (k % 4 == 3) off += piece;
                m.add(off, addr(&mem[(63 - k) * piece]), piece);
                off += piece;
            }
            REQUIRE(m.finish() == MPI_SUCCESS);
        }
        std::vector<unsigned char> file = f.contents();
        uint64_t off = 0;
        for (size_t k = 0; k < 64; ++k) {
            if (k % 4 == 3) {
                for (size_t b = 0; b < piece; ++b) REQUIRE(file[off + b] == 0);
                off += piece;
            }
            REQUIRE(memcmp(&file[off], &mem[(63 - k) * piece], piece) == 0);
            off += piece;
        }
        // Read them back into other memory, holes read through and dropped.
        std::vector<unsigned char> back(mem.size());
        io::Mover r(f.fd, io::Dir::Read, 1 << 16, &f.path);
        off = 0;
        for (size_t k = 0; k < 64; ++k) {
            if (k % 4 == 3) off += piece;
            r.add(off, addr(&back[k * piece]), piece, k * piece);
            off += piece;
        }
        REQUIRE(r.finish() == MPI_SUCCESS);
        CHECK(r.short_at() == UINT64_MAX);
        for (size_t k = 0; k < 64; ++k)
            REQUIRE(memcmp(&back[k * piece], &mem[(63 - k) * piece], piece) == 0);
    }
}

TEST_CASE("a read that meets the end of the file says where the data stopped") {
    TempFile f;
    std::vector<unsigned char> data(1000, 0xab);
    REQUIRE(pwrite(f.fd, data.data(), data.size(), 0) == 1000);
    for (size_t piece : {size_t{10}, size_t{700}}) {
        std::vector<unsigned char> back(4000, 0);
        io::Mover r(f.fd, io::Dir::Read, 0, &f.path);
        for (size_t k = 0; k * piece < 3000; ++k)
            r.add(k * piece, addr(&back[k * piece]), piece, 5000 + k * piece);
        REQUIRE(r.finish() == MPI_SUCCESS);
        CHECK(r.short_at() == 5000 + 1000);
        CHECK(back[999] == 0xab);
        CHECK(back[1000] == 0);
    }
}

TEST_CASE("a failed write says which error and which file") {
    TempFile f;
    int ro = open(f.path.c_str(), O_RDONLY);
    REQUIRE(ro >= 0);
    char c = 1;
    io::Mover m(ro, io::Dir::Write, 0, &f.path);
    m.add(0, addr(&c), 1);
    const int err = m.finish();
    CHECK(err != MPI_SUCCESS);
    close(ro);
}
