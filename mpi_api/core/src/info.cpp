// MPI_Info objects (info.hpp).
#include "mpi_api/info.hpp"

#include <unistd.h>

#include <cstring>
#include <mutex>

#include "mpi_api/errors.hpp"
#include "mpi_api/handles.hpp"
#include "mpi_api/rank.hpp"

namespace mpc::mpi {
namespace {

HandlePool<Info, HandleKind::Info>& pool() {
    // Outlives every thread (handles.hpp).
    static auto* p = new HandlePool<Info, HandleKind::Info>(2);
    return *p;
}

// MPI_INFO_ENV, filled on first use (the world exists by then).
void init_env() {
    static std::once_flag once;
    std::call_once(once, [] {
        Info* env = pool().at(handle_index(MPI_INFO_ENV));
        env->predefined = true;
        env->set("maxprocs", std::to_string(world().size));
        env->set("host", world().processor_name);
        char cwd[4096];
        if (getcwd(cwd, sizeof(cwd))) env->set("wdir", cwd);
        env->set("mpi_initial_errhandler", initial_errhandler_name());
        pool().mark_live(handle_index(MPI_INFO_ENV));
    });
}

}  // namespace

const std::string* Info::find(const std::string& key) const {
    for (const auto& [k, v] : entries)
        if (k == key) return &v;
    return nullptr;
}

void Info::set(const std::string& key, const std::string& value) {
    for (auto& [k, v] : entries)
        if (k == key) {
            v = value;
            return;
        }
    entries.emplace_back(key, value);
}

bool Info::erase(const std::string& key) {
    for (auto it = entries.begin(); it != entries.end(); ++it)
        if (it->first == key) {
            entries.erase(it);
            return true;
        }
    return false;
}

Info* info_lookup(MPI_Info handle) {
    if (handle == MPI_INFO_ENV) init_env();
    return pool().lookup(handle);
}

MPI_Info info_create(Info contents) {
    int h;
    Info* info = pool().allocate(&h);
    *info = std::move(contents);
    info->predefined = false;
    return h;
}

void info_release(MPI_Info handle) {
    Info* info = pool().lookup(handle);
    if (!info || info->predefined) return;
    *info = Info{};
    pool().release(handle);
}

int check_info_key(const char* key) {
    if (!key) return make_error(MPI_ERR_INFO_KEY, "the key is NULL");
    size_t n = strlen(key);
    if (n == 0) return make_error(MPI_ERR_INFO_KEY, "the key is empty");
    if (n > MPI_MAX_INFO_KEY)
        return make_error(MPI_ERR_INFO_KEY, "key of %zu characters (MPI_MAX_INFO_KEY is %d)", n,
                          MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

int check_info_value(const char* value) {
    if (!value) return make_error(MPI_ERR_INFO_VALUE, "the value is NULL");
    size_t n = strlen(value);
    if (n > MPI_MAX_INFO_VAL)
        return make_error(MPI_ERR_INFO_VALUE, "value of %zu characters (MPI_MAX_INFO_VAL is %d)", n,
                          MPI_MAX_INFO_VAL);
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
