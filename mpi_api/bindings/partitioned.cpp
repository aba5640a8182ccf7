// Partitioned communication (MPI 4.0 chapter 4): argument checks, then the
// engine (mpi_api/partitioned.hpp). MPI_Start, MPI_Wait and friends work on
// these requests as on every persistent one.
#include "mpi_api/partitioned.hpp"

#include "mpi_api/progress.hpp"
#include "object_checks.hpp"
#include "requests.hpp"

using namespace mpc::mpi;

namespace {

int check_init(const void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int peer,
               int tag, MPI_Comm comm, MPI_Info info, MPI_Request* request, bool send, Comm** c,
               Datatype** t) {
    *c = nullptr;
    if (int e = check_comm(comm, c)) return e;
    if (partitions < 0)
        return make_error(MPI_ERR_ARG, "negative number of partitions %d", partitions);
    if (int e = check_count(count)) return e;
    if (int e = check_type(datatype, t)) return e;
    MPI_Count total = 0;
    if (__builtin_mul_overflow(static_cast<MPI_Count>(partitions), count, &total))
        return make_error(MPI_ERR_COUNT, "%d partitions of %lld elements overflow", partitions,
                          count);
    if (int e = check_buffer(buf, total, *t)) return e;
    if (peer == MPI_ANY_SOURCE)
        return make_error(MPI_ERR_RANK, "MPI_ANY_SOURCE is not allowed in partitioned receives");
    if (int e = check_send_rank(*c, peer)) return e;
    if (tag == MPI_ANY_TAG)
        return make_error(MPI_ERR_TAG, "MPI_ANY_TAG is not allowed in partitioned communication");
    if (int e = check_tag(tag, false)) return e;
    Info* ignored;
    if (int e = check_info_arg(info, &ignored)) return e;
    (void)send;
    return check_not_null(request, "request");
}

// The active partitioned request of the given side behind handle.
int check_partitioned(MPI_Request handle, bool send, Request** out) {
    Request* r = handle == MPI_REQUEST_NULL ? nullptr : request_lookup(handle);
    if (!r) return make_error(MPI_ERR_REQUEST, "0x%x is not a valid request", handle);
    if (r->kind != Request::Kind::Partitioned || partitioned_is_send(r) != send)
        return make_error(MPI_ERR_REQUEST, "0x%x is not a partitioned %s request", handle,
                          send ? "send" : "receive");
    if (!r->active)
        return make_error(MPI_ERR_REQUEST, "the partitioned request is not active (not started)");
    *out = r;
    return MPI_SUCCESS;
}

int check_partition(const Request* r, int partition) {
    const int n = partitioned_partitions(r);
    if (partition < 0 || partition >= n)
        return make_error(MPI_ERR_ARG, "partition %d out of range: the request has %d", partition,
                          n);
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Psend_init(const void* buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Psend_init);
    Comm* c;
    Datatype* t;
    MPC_TRY(c, check_init(buf, partitions, count, datatype, dest, tag, comm, info, request, true,
                          &c, &t));
    *request = partitioned_send_init(me, c, buf, partitions, count, t, dest, tag)->handle;
    return MPI_SUCCESS;
}

int PMPI_Precv_init(void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                    int tag, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Precv_init);
    Comm* c;
    Datatype* t;
    MPC_TRY(c, check_init(buf, partitions, count, datatype, source, tag, comm, info, request, false,
                          &c, &t));
    *request = partitioned_recv_init(me, c, buf, partitions, count, t, source, tag)->handle;
    return MPI_SUCCESS;
}

int PMPI_Pready(int partition, MPI_Request request) {
    MPC_ENTER_ACTIVE(Pready);
    Request* r = nullptr;
    MPC_TRY(nullptr, check_partitioned(request, true, &r));
    MPC_TRY(r->comm, check_partition(r, partition));
    MPC_TRY(r->comm, partitioned_ready(r, partition));
    return MPI_SUCCESS;
}

int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request) {
    MPC_ENTER_ACTIVE(Pready_range);
    Request* r = nullptr;
    MPC_TRY(nullptr, check_partitioned(request, true, &r));
    MPC_TRY(r->comm, check_partition(r, partition_low));
    MPC_TRY(r->comm, check_partition(r, partition_high));
    if (partition_low > partition_high)
        MPC_TRY(r->comm, make_error(MPI_ERR_ARG, "partition_low %d is above partition_high %d",
                                    partition_low, partition_high));
    for (int i = partition_low; i <= partition_high; ++i) MPC_TRY(r->comm, partitioned_ready(r, i));
    return MPI_SUCCESS;
}

int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request) {
    MPC_ENTER_ACTIVE(Pready_list);
    Request* r = nullptr;
    MPC_TRY(nullptr, check_partitioned(request, true, &r));
    if (length < 0) MPC_TRY(r->comm, make_error(MPI_ERR_ARG, "negative length %d", length));
    if (length > 0) MPC_TRY(r->comm, check_not_null(array_of_partitions, "array_of_partitions"));
    for (int k = 0; k < length; ++k) MPC_TRY(r->comm, check_partition(r, array_of_partitions[k]));
    for (int k = 0; k < length; ++k) MPC_TRY(r->comm, partitioned_ready(r, array_of_partitions[k]));
    return MPI_SUCCESS;
}

int PMPI_Parrived(MPI_Request request, int partition, int* flag) {
    MPC_ENTER_ACTIVE(Parrived);
    MPC_TRY(nullptr, check_not_null(flag, "flag"));
    Request* r = request == MPI_REQUEST_NULL ? nullptr : request_lookup(request);
    // An inactive (completed) request has all of its partitions (MPI 4.1).
    if (r && r->kind == Request::Kind::Partitioned && !partitioned_is_send(r) && !r->active) {
        MPC_TRY(r->comm, check_partition(r, partition));
        *flag = 1;
        return MPI_SUCCESS;
    }
    MPC_TRY(nullptr, check_partitioned(request, false, &r));
    MPC_TRY(r->comm, check_partition(r, partition));
    if (!partitioned_arrived(r, partition)) progress_for_test();
    *flag = partitioned_arrived(r, partition);
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Psend_init)
MPC_WEAK(MPI_Precv_init)
MPC_WEAK(MPI_Pready)
MPC_WEAK(MPI_Pready_range)
MPC_WEAK(MPI_Pready_list)
MPC_WEAK(MPI_Parrived)
