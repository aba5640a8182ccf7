// Info hints of files (MPI 3.1 section 13.2.8): the reserved keys the engine
// acts on, parsed into Hints, and reported back by MPI_File_get_info.
// Unknown keys and values that do not parse are ignored, as the standard
// asks of hints; striping_factor, striping_unit, io_node_list and nb_proc
// describe parallel file systems this engine does not drive.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "file.hpp"

namespace mpc::io {
namespace {

// A positive size: digits with an optional K/M/G suffix.
bool parse_size(const std::string& s, uint64_t* out) {
    if (s.empty()) return false;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = strtoull(s.c_str(), &end, 10);
    if (errno || end == s.c_str() || v == 0) return false;
    switch (*end) {
        case 'k':
        case 'K':
            v <<= 10;
            ++end;
            break;
        case 'm':
        case 'M':
            v <<= 20;
            ++end;
            break;
        case 'g':
        case 'G':
            v <<= 30;
            ++end;
            break;
        default:
            break;
    }
    if (*end) return false;
    *out = v;
    return true;
}

bool parse_cb(const std::string& s, Hints::Cb* out) {
    if (s == "enable" || s == "true")
        *out = Hints::Cb::Enable;
    else if (s == "disable" || s == "false")
        *out = Hints::Cb::Disable;
    else if (s == "automatic")
        *out = Hints::Cb::Automatic;
    else
        return false;
    return true;
}

const char* cb_text(Hints::Cb c) {
    switch (c) {
        case Hints::Cb::Enable:
            return "enable";
        case Hints::Cb::Disable:
            return "disable";
        default:
            return "automatic";
    }
}

}  // namespace

void apply_hints(Hints* h, const mpi::Info& info, bool at_open) {
    for (const auto& [key, value] : info.entries) {
        uint64_t n = 0;
        Hints::Cb cb;
        if (key == "cb_buffer_size" && parse_size(value, &n)) {
            h->cb_buffer_size = std::max<uint64_t>(n, 4096);
        } else if (key == "cb_block_size" && parse_size(value, &n)) {
            h->cb_block_size = n;
        } else if (key == "cb_nodes" && parse_size(value, &n)) {
            h->cb_nodes = static_cast<int>(std::min<uint64_t>(n, 1u << 30));
        } else if (key == "collective_buffering") {
            if (value == "true")
                h->cb_read = h->cb_write = Hints::Cb::Enable;
            else if (value == "false")
                h->cb_read = h->cb_write = Hints::Cb::Disable;
        } else if (key == "romio_cb_read" && parse_cb(value, &cb)) {
            h->cb_read = cb;
        } else if (key == "romio_cb_write" && parse_cb(value, &cb)) {
            h->cb_write = cb;
        } else if (key == "ind_rd_buffer_size" && parse_size(value, &n)) {
            h->ind_rd_buffer_size = n;
        } else if (key == "mpc_serialize_writes") {
            if (value == "true")
                h->serialize_writes = true;
            else if (value == "false")
                h->serialize_writes = false;
        } else if (key == "access_style") {
            h->access_style = value;
        } else if (key == "file_perm" && at_open) {
            char* end = nullptr;
            long perm = strtol(value.c_str(), &end, 0);  // 0644 is octal, as chmod reads it
            if (end != value.c_str() && !*end && perm >= 0 && perm <= 07777)
                h->file_perm = static_cast<int>(perm);
        }
    }
}

mpi::Info hints_info(const Hints& h, const std::string& filename) {
    mpi::Info info;
    info.set("cb_buffer_size", std::to_string(h.cb_buffer_size));
    info.set("cb_block_size", std::to_string(h.cb_block_size));
    if (h.cb_nodes > 0) info.set("cb_nodes", std::to_string(h.cb_nodes));
    info.set("romio_cb_read", cb_text(h.cb_read));
    info.set("romio_cb_write", cb_text(h.cb_write));
    info.set(
        "collective_buffering",
        h.cb_read == Hints::Cb::Disable && h.cb_write == Hints::Cb::Disable ? "false" : "true");
    info.set("ind_rd_buffer_size", std::to_string(h.ind_rd_buffer_size));
    if (!h.access_style.empty()) info.set("access_style", h.access_style);
    info.set("mpc_serialize_writes", h.serialize_writes ? "true" : "false");
    char perm[16];
    snprintf(perm, sizeof perm, "0%o", h.file_perm);
    info.set("file_perm", perm);
    info.set("filename", filename);
    return info;
}

}  // namespace mpc::io
