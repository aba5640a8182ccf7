// mpi_api/info: MPI_Info objects, ordered (key, value) string pairs.
//
// Info handles are process-wide, like groups: an info object carries no
// rank's state. MPI_INFO_ENV describes the job (maxprocs, host, wdir) and
// cannot be changed or freed.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "mpi.h"

namespace mpc::mpi {

struct Info {
    std::vector<std::pair<std::string, std::string>> entries;  // in insertion order
    bool predefined = false;

    const std::string* find(const std::string& key) const;
    void set(const std::string& key, const std::string& value);
    bool erase(const std::string& key);
};

Info* info_lookup(MPI_Info handle);
MPI_Info info_create(Info contents);
void info_release(MPI_Info handle);

// Key and value rules of MPI 3.1 section 9: MPI_SUCCESS or MPI_ERR_INFO_KEY /
// MPI_ERR_INFO_VALUE with the reason.
int check_info_key(const char* key);
int check_info_value(const char* value);

}  // namespace mpc::mpi
