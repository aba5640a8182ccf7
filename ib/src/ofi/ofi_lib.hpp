// libfabric's few exported functions, from the library loaded when the ofi
// driver first opens rather than linked: its psm and psm2 providers' libraries
// sleep about 100 ms each in their load-time constructors, and every program
// linked to libfibermpi paid that at start-up, ofi driver or not. The rest of
// libfabric's API is inline functions calling through the objects' operation
// tables, which needs no symbol.
#pragma once

#include <rdma/fabric.h>

#include <string>

namespace mpc::ib::ofi::lib {

// Loads libfabric.so.1 once; false (and why) when it or a function is missing.
// The functions below may be called only after it succeeded.
bool load(std::string* error);

int getinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
            const fi_info* hints, fi_info** info);
fi_info* dupinfo(const fi_info* info);  // dupinfo(nullptr): fi_allocinfo()
void freeinfo(fi_info* info);
int fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
const char* strerror(int errnum);

}  // namespace mpc::ib::ofi::lib
