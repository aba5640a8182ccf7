// Cartesian topologies, MPI_Dims_create and MPI_Topo_test.
#include "mpi_api/topology.hpp"
#include "object_checks.hpp"
#include "topo_checks.hpp"

using namespace mpc::mpi;

namespace {

// dims[0..ndims) all positive, their product (at most limit) in *n.
int check_grid(int ndims, const int* dims, const int* periods, long limit, int* n) {
    if (ndims < 0) return make_error(MPI_ERR_DIMS, "negative number of dimensions %d", ndims);
    if (ndims > 0 && (!dims || !periods)) return make_error(MPI_ERR_ARG, "dims or periods is NULL");
    long product = 1;
    for (int d = 0; d < ndims; ++d) {
        if (dims[d] <= 0)
            return make_error(MPI_ERR_DIMS, "dims[%d] is %d: dimensions must be positive", d,
                              dims[d]);
        product *= dims[d];
        if (product > limit)
            return make_error(MPI_ERR_ARG,
                              "the grid has more points than the %ld ranks of the "
                              "communicator",
                              limit);
    }
    *n = static_cast<int>(product);
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm* comm_cart) {
    (void)reorder;  // the identity mapping is kept
    MPC_ENTER_ACTIVE(Cart_create);
    Comm *c = nullptr, *n = nullptr;
    int points;
    if (int e = check_comm(comm_old, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_intra(c));
    MPC_TRY(c, check_not_null(comm_cart, "comm_cart"));
    MPC_TRY(c, check_grid(ndims, dims, periods, c->size, &points));
    MPC_TRY(c, cart_create(c, ndims, dims, periods, &n));
    *comm_cart = handle_or_null(n);
    return MPI_SUCCESS;
}

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
    MPC_ENTER_ACTIVE(Cart_coords);
    Comm* c = nullptr;
    const Topology* t = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_topology(c, MPI_CART, &t));
    if (rank < 0 || rank >= c->size)
        return raise(c, make_error(MPI_ERR_RANK, "invalid rank %d: the communicator has %d ranks",
                                   rank, c->size));
    if (maxdims < t->ndims())
        return raise(c, make_error(MPI_ERR_ARG, "maxdims %d is less than the %d dimensions",
                                   maxdims, t->ndims()));
    if (t->ndims() > 0) MPC_TRY(c, check_not_null(coords, "coords"));
    t->cart_coords(rank, coords);
    return MPI_SUCCESS;
}

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
    MPC_ENTER_ACTIVE(Cart_rank);
    Comm* c = nullptr;
    const Topology* t = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_topology(c, MPI_CART, &t));
    MPC_TRY(c, check_not_null(rank, "rank"));
    if (t->ndims() > 0) MPC_TRY(c, check_not_null(coords, "coords"));
    std::vector<int> in_grid(coords, coords + t->ndims());
    for (int d = 0; d < t->ndims(); ++d) {
        const int n = t->dims[static_cast<size_t>(d)];
        int& x = in_grid[static_cast<size_t>(d)];
        if (t->periods[static_cast<size_t>(d)])
            x = ((x % n) + n) % n;
        else if (x < 0 || x >= n)
            return raise(c, make_error(MPI_ERR_ARG,
                                       "coordinate %d of dimension %d is outside [0, %d) and the "
                                       "dimension is not periodic",
                                       x, d, n));
    }
    *rank = t->cart_rank(in_grid.data());
    return MPI_SUCCESS;
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
    MPC_ENTER_ACTIVE(Cart_shift);
    Comm* c = nullptr;
    const Topology* t = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_topology(c, MPI_CART, &t));
    if (!rank_source || !rank_dest)
        return raise(c, make_error(MPI_ERR_ARG, "rank_source or rank_dest is NULL"));
    if (direction < 0 || direction >= t->ndims())
        return raise(c, make_error(MPI_ERR_DIMS, "direction %d: the grid has %d dimensions",
                                   direction, t->ndims()));
    t->cart_shift(c->rank, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
    MPC_ENTER_ACTIVE(Cart_sub);
    Comm *c = nullptr, *n = nullptr;
    const Topology* t = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_topology(c, MPI_CART, &t));
    MPC_TRY(c, check_not_null(newcomm, "newcomm"));
    if (t->ndims() > 0) MPC_TRY(c, check_not_null(remain_dims, "remain_dims"));
    MPC_TRY(c, cart_sub(c, remain_dims, &n));
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
    MPC_ENTER_ACTIVE(Cart_get);
    Comm* c = nullptr;
    const Topology* t = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_topology(c, MPI_CART, &t));
    const int nd = t->ndims();
    if (maxdims < nd)
        return raise(
            c, make_error(MPI_ERR_ARG, "maxdims %d is less than the %d dimensions", maxdims, nd));
    if (nd > 0 && (!dims || !periods || !coords))
        return raise(c, make_error(MPI_ERR_ARG, "dims, periods or coords is NULL"));
    std::copy(t->dims.begin(), t->dims.end(), dims);
    std::copy(t->periods.begin(), t->periods.end(), periods);
    t->cart_coords(c->rank, coords);
    return MPI_SUCCESS;
}

int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
    MPC_ENTER_ACTIVE(Cartdim_get);
    Comm* c = nullptr;
    const Topology* t = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_topology(c, MPI_CART, &t));
    MPC_TRY(c, check_not_null(ndims, "ndims"));
    *ndims = t->ndims();
    return MPI_SUCCESS;
}

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
    MPC_ENTER_ACTIVE(Cart_map);
    Comm* c = nullptr;
    int points;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_intra(c));
    MPC_TRY(c, check_not_null(newrank, "newrank"));
    MPC_TRY(c, check_grid(ndims, dims, periods, c->size, &points));
    *newrank = c->rank < points ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
    MPC_ENTER_ACTIVE(Dims_create);
    if (ndims > 0 && !dims) return raise(nullptr, make_error(MPI_ERR_ARG, "dims is NULL"));
    return raise(nullptr, dims_create(nnodes, ndims, dims));
}

int PMPI_Topo_test(MPI_Comm comm, int* status) {
    MPC_ENTER_ACTIVE(Topo_test);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_not_null(status, "status"));
    *status = c->topology ? c->topology->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Cart_create)
MPC_WEAK(MPI_Cart_coords)
MPC_WEAK(MPI_Cart_rank)
MPC_WEAK(MPI_Cart_shift)
MPC_WEAK(MPI_Cart_sub)
MPC_WEAK(MPI_Cart_get)
MPC_WEAK(MPI_Cartdim_get)
MPC_WEAK(MPI_Cart_map)
MPC_WEAK(MPI_Dims_create)
MPC_WEAK(MPI_Topo_test)
