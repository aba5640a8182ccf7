// Loading libfabric: see ofi_lib.hpp.
#include "ofi_lib.hpp"

#include <dlfcn.h>

#include <mutex>

namespace mpc::ib::ofi::lib {

namespace {

using GetInfo = int (*)(uint32_t, const char*, const char*, uint64_t, const fi_info*, fi_info**);
using DupInfo = fi_info* (*)(const fi_info*);
using FreeInfo = void (*)(fi_info*);
using Fabric = int (*)(fi_fabric_attr*, fid_fabric**, void*);
using StrError = const char* (*)(int);

struct Functions {
    GetInfo getinfo = nullptr;
    DupInfo dupinfo = nullptr;
    FreeInfo freeinfo = nullptr;
    Fabric fabric = nullptr;
    StrError strerror = nullptr;
};

Functions g_fn;
std::once_flag g_once;
std::string g_error;  // why loading failed, "" once loaded

// The symbol versions a link against libfabric 1.17's headers binds
// (objdump -T): the struct layouts of those headers. A library keeps old
// versions when it adds new ones. Built against newer headers, the library's
// default versions are the ones a link would bind.
template <typename F>
F find(void* handle, const char* name, const char* version) {
#if FI_MAJOR_VERSION == 1 && FI_MINOR_VERSION <= 17
    return reinterpret_cast<F>(dlvsym(handle, name, version));
#else
    (void)version;
    return reinterpret_cast<F>(dlsym(handle, name));
#endif
}

void open_library() {
    // Kept loaded for the process's life: providers keep state and threads.
    void* handle = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        g_error = std::string("cannot load libfabric.so.1: ") + (why ? why : "?");
        return;
    }
    Functions f;
    f.getinfo = find<GetInfo>(handle, "fi_getinfo", "FABRIC_1.3");
    f.dupinfo = find<DupInfo>(handle, "fi_dupinfo", "FABRIC_1.3");
    f.freeinfo = find<FreeInfo>(handle, "fi_freeinfo", "FABRIC_1.3");
    f.fabric = find<Fabric>(handle, "fi_fabric", "FABRIC_1.1");
    f.strerror = find<StrError>(handle, "fi_strerror", "FABRIC_1.0");
    if (!f.getinfo || !f.dupinfo || !f.freeinfo || !f.fabric || !f.strerror) {
        g_error = "libfabric.so.1 lacks fi_getinfo, fi_dupinfo, fi_freeinfo, fi_fabric or "
                  "fi_strerror in the versions this build expects";
        return;
    }
    g_fn = f;
}

}  // namespace

bool load(std::string* error) {
    std::call_once(g_once, open_library);
    if (!g_fn.getinfo && error) *error = g_error;
    return g_fn.getinfo != nullptr;
}

int getinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
            const fi_info* hints, fi_info** info) {
    return g_fn.getinfo(version, node, service, flags, hints, info);
}

fi_info* dupinfo(const fi_info* info) {
    return g_fn.dupinfo(info);
}

void freeinfo(fi_info* info) {
    g_fn.freeinfo(info);
}

int fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context) {
    return g_fn.fabric(attr, fabric, context);
}

const char* strerror(int errnum) {
    return g_fn.strerror ? g_fn.strerror(errnum) : "(libfabric not loaded)";
}

}  // namespace mpc::ib::ofi::lib
