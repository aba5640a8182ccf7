// RAII for libfabric objects: every fid is closed exactly once, in the
// reverse order of the members that hold them.
#pragma once

#include <rdma/fabric.h>

#include <memory>
#include <string>

#include "ofi_lib.hpp"

namespace mpc::ib::ofi {

struct FidCloser {
    template <typename T>
    void operator()(T* object) const {
        if (object) fi_close(&object->fid);
    }
};
template <typename T>
using FidPtr = std::unique_ptr<T, FidCloser>;

struct InfoFreer {
    void operator()(fi_info* info) const { lib::freeinfo(info); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoFreer>;

// "fi_send: Resource temporarily unavailable (-11)"
inline std::string fi_error(const char* what, long code) {
    return std::string(what) + ": " + lib::strerror(static_cast<int>(code < 0 ? -code : code)) +
           " (" + std::to_string(code) + ")";
}

}  // namespace mpc::ib::ofi
