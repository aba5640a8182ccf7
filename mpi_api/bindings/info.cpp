// Info objects. Errors are raised on MPI_COMM_WORLD. MPI 4.0 (section
// 11.4.1) lets every info call run at any time, before MPI_Init too.
#include <cstring>

#include "object_checks.hpp"

using namespace mpc::mpi;

namespace {

int check_info(MPI_Info handle, Info** out, bool modify = false) {
    Info* i = info_lookup(handle);
    if (!i) {
        if (handle == MPI_INFO_NULL) return make_error(MPI_ERR_INFO, "MPI_INFO_NULL passed");
        return make_error(MPI_ERR_INFO, "0x%x is not a valid info object", handle);
    }
    if (modify && i->predefined)
        return make_error(MPI_ERR_INFO, "MPI_INFO_ENV cannot be changed or freed");
    *out = i;
    return MPI_SUCCESS;
}

// Copies s into out (room for len characters and the terminating NUL).
void copy_out(const std::string& s, char* out, size_t len) {
    size_t n = std::min(s.size(), len);
    memcpy(out, s.data(), n);
    out[n] = '\0';
}

}  // namespace

extern "C" {

int PMPI_Info_create(MPI_Info* info) {
    MPC_ENTER(Info_create);
    if (int e = check_not_null(info, "info")) return raise(nullptr, e);
    *info = info_create(Info{});
    return MPI_SUCCESS;
}

int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
    MPC_ENTER(Info_set);
    Info* i = nullptr;
    if (int e = check_info(info, &i, true)) return raise(nullptr, e);
    if (int e = check_info_key(key)) return raise(nullptr, e);
    if (int e = check_info_value(value)) return raise(nullptr, e);
    i->set(key, value);
    return MPI_SUCCESS;
}

int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
    MPC_ENTER(Info_get);
    Info* i = nullptr;
    if (int e = check_info(info, &i)) return raise(nullptr, e);
    if (int e = check_info_key(key)) return raise(nullptr, e);
    if (valuelen < 0)
        return raise(nullptr, make_error(MPI_ERR_ARG, "negative valuelen %d", valuelen));
    if (!value || !flag) return raise(nullptr, make_error(MPI_ERR_ARG, "value or flag is NULL"));
    const std::string* v = i->find(key);
    *flag = v != nullptr;
    if (v) copy_out(*v, value, static_cast<size_t>(valuelen));
    return MPI_SUCCESS;
}

int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
    MPC_ENTER(Info_get_valuelen);
    Info* i = nullptr;
    if (int e = check_info(info, &i)) return raise(nullptr, e);
    if (int e = check_info_key(key)) return raise(nullptr, e);
    if (!valuelen || !flag)
        return raise(nullptr, make_error(MPI_ERR_ARG, "valuelen or flag is NULL"));
    const std::string* v = i->find(key);
    *flag = v != nullptr;
    if (v) *valuelen = static_cast<int>(v->size());
    return MPI_SUCCESS;
}

int PMPI_Info_delete(MPI_Info info, const char* key) {
    MPC_ENTER(Info_delete);
    Info* i = nullptr;
    if (int e = check_info(info, &i, true)) return raise(nullptr, e);
    if (int e = check_info_key(key)) return raise(nullptr, e);
    if (!i->erase(key))
        return raise(nullptr, make_error(MPI_ERR_INFO_NOKEY, "no key \"%s\" in the info", key));
    return MPI_SUCCESS;
}

int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
    MPC_ENTER(Info_get_nkeys);
    Info* i = nullptr;
    if (int e = check_info(info, &i)) return raise(nullptr, e);
    if (int e = check_not_null(nkeys, "nkeys")) return raise(nullptr, e);
    *nkeys = static_cast<int>(i->entries.size());
    return MPI_SUCCESS;
}

int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
    MPC_ENTER(Info_get_nthkey);
    Info* i = nullptr;
    if (int e = check_info(info, &i)) return raise(nullptr, e);
    if (int e = check_not_null(key, "key")) return raise(nullptr, e);
    const int nkeys = static_cast<int>(i->entries.size());
    if (n < 0 || n >= nkeys)
        return raise(nullptr,
                     make_error(MPI_ERR_ARG, "key number %d: the info has %d keys", n, nkeys));
    copy_out(i->entries[static_cast<size_t>(n)].first, key, MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
    MPC_ENTER(Info_dup);
    Info* i = nullptr;
    if (int e = check_info(info, &i)) return raise(nullptr, e);
    if (int e = check_not_null(newinfo, "newinfo")) return raise(nullptr, e);
    *newinfo = info_create(*i);
    return MPI_SUCCESS;
}

int PMPI_Info_free(MPI_Info* info) {
    MPC_ENTER(Info_free);
    Info* i = nullptr;
    if (int e = check_not_null(info, "info")) return raise(nullptr, e);
    if (int e = check_info(*info, &i, true)) return raise(nullptr, e);
    info_release(*info);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

// MPI 4.0 section 10.2: buflen in is the size of value (its NUL included),
// out the size the whole value needs; a longer value is truncated, and
// buflen 0 asks for the size only (value untouched).
int PMPI_Info_get_string(MPI_Info info, const char* key, int* buflen, char* value, int* flag) {
    MPC_ENTER(Info_get_string);
    Info* i = nullptr;
    if (int e = check_info(info, &i)) return raise(nullptr, e);
    if (int e = check_info_key(key)) return raise(nullptr, e);
    if (!buflen || !flag) return raise(nullptr, make_error(MPI_ERR_ARG, "buflen or flag is NULL"));
    if (*buflen < 0) return raise(nullptr, make_error(MPI_ERR_ARG, "negative buflen %d", *buflen));
    if (*buflen > 0 && !value)
        return raise(nullptr, make_error(MPI_ERR_ARG, "value is NULL but buflen is %d", *buflen));
    const std::string* v = i->find(key);
    *flag = v != nullptr;
    if (!v) return MPI_SUCCESS;
    if (*buflen > 0) copy_out(*v, value, static_cast<size_t>(*buflen - 1));
    *buflen = static_cast<int>(v->size()) + 1;
    return MPI_SUCCESS;
}

// MPI 4.0 section 11.2.1: a new info with MPI_INFO_ENV's keys, for the
// command line given (none from Fortran, or argc 0). Callable before MPI_Init.
int PMPI_Info_create_env(int argc, char* argv[], MPI_Info* info) {
    MPC_ENTER(Info_create_env);
    if (int e = check_not_null(info, "info")) return raise(nullptr, e);
    if (argc < 0) return raise(nullptr, make_error(MPI_ERR_ARG, "negative argc %d", argc));
    if (argc > 0 && !argv)
        return raise(nullptr, make_error(MPI_ERR_ARG, "argv is NULL but argc is %d", argc));
    Info env = *info_lookup(MPI_INFO_ENV);
    env.predefined = false;
    if (argc > 0 && argv[0]) {
        env.set("command", argv[0]);
        std::string args;
        for (int a = 1; a < argc && argv[a]; ++a) {
            if (a > 1) args += ' ';
            args += argv[a];
        }
        if (argc > 1) env.set("argv", args);
    }
    *info = info_create(std::move(env));
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Info_get_string)
MPC_WEAK(MPI_Info_create_env)
MPC_WEAK(MPI_Info_create)
MPC_WEAK(MPI_Info_set)
MPC_WEAK(MPI_Info_get)
MPC_WEAK(MPI_Info_get_valuelen)
MPC_WEAK(MPI_Info_delete)
MPC_WEAK(MPI_Info_get_nkeys)
MPC_WEAK(MPI_Info_get_nthkey)
MPC_WEAK(MPI_Info_dup)
MPC_WEAK(MPI_Info_free)
