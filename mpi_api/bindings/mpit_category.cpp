// MPI_T: categories (MPI 3.1 section 14.3.8, and their event types of MPI
// 4.1). Each room's variables and events form a category under "mpc", as the
// rooms registered them (runtime/tools.hpp).
#include <algorithm>

#include "mpit.hpp"

using namespace mpc::mpi;
using namespace mpc::mpi::tools;
namespace rt = mpc::runtime::tools;

namespace {

// The first `len` indices of one list of a category.
int get_list(RankState* me, int cat_index, int len, int indices[],
             std::vector<int> rt::Category::*list) {
    ToolsCall call(me);
    if (call.error()) return call.error();
    rt::Category c;
    if (!rt::category(cat_index, &c)) return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices)) return MPI_T_ERR_INVALID;
    const auto& from = c.*list;
    const size_t n = std::min(from.size(), static_cast<size_t>(len));
    std::copy(from.begin(), from.begin() + static_cast<long>(n), indices);
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_T_category_get_num(int* num_cat) {
    MPC_ENTER(T_category_get_num);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (!num_cat) return MPI_T_ERR_INVALID;
    *num_cat = rt::num_categories();
    return MPI_SUCCESS;
}

int PMPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len,
                             int* num_cvars, int* num_pvars, int* num_categories) {
    MPC_ENTER(T_category_get_info);
    ToolsCall call(me);
    if (call.error()) return call.error();
    rt::Category c;
    if (!rt::category(cat_index, &c)) return MPI_T_ERR_INVALID_INDEX;
    return_string(c.name, name, name_len);
    return_string(c.desc, desc, desc_len);
    if (num_cvars) *num_cvars = static_cast<int>(c.cvars.size());
    if (num_pvars) *num_pvars = static_cast<int>(c.pvars.size());
    if (num_categories) *num_categories = static_cast<int>(c.categories.size());
    return MPI_SUCCESS;
}

int PMPI_T_category_get_index(const char* name, int* cat_index) {
    MPC_ENTER(T_category_get_index);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (!name || !cat_index) return MPI_T_ERR_INVALID;
    const int i = rt::find_category(name);
    if (i < 0) return MPI_T_ERR_INVALID_NAME;
    *cat_index = i;
    return MPI_SUCCESS;
}

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
    MPC_ENTER(T_category_get_cvars);
    return get_list(me, cat_index, len, indices, &rt::Category::cvars);
}

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
    MPC_ENTER(T_category_get_pvars);
    return get_list(me, cat_index, len, indices, &rt::Category::pvars);
}

int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
    MPC_ENTER(T_category_get_categories);
    return get_list(me, cat_index, len, indices, &rt::Category::categories);
}

int PMPI_T_category_get_num_events(int cat_index, int* num_events) {
    MPC_ENTER(T_category_get_num_events);
    ToolsCall call(me);
    if (call.error()) return call.error();
    rt::Category c;
    if (!rt::category(cat_index, &c)) return MPI_T_ERR_INVALID_INDEX;
    if (!num_events) return MPI_T_ERR_INVALID;
    *num_events = static_cast<int>(c.events.size());
    return MPI_SUCCESS;
}

int PMPI_T_category_get_events(int cat_index, int len, int indices[]) {
    MPC_ENTER(T_category_get_events);
    return get_list(me, cat_index, len, indices, &rt::Category::events);
}

int PMPI_T_category_changed(int* stamp) {
    MPC_ENTER(T_category_changed);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (!stamp) return MPI_T_ERR_INVALID;
    *stamp = rt::stamp();
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_T_category_get_num)
MPC_WEAK(MPI_T_category_get_info)
MPC_WEAK(MPI_T_category_get_index)
MPC_WEAK(MPI_T_category_get_cvars)
MPC_WEAK(MPI_T_category_get_pvars)
MPC_WEAK(MPI_T_category_get_categories)
MPC_WEAK(MPI_T_category_changed)
MPC_WEAK(MPI_T_category_get_num_events)
MPC_WEAK(MPI_T_category_get_events)
