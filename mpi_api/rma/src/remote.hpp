// One-sided communication with ranks of other node processes: the origin's
// side of every operation and synchronisation message, and the handler that
// executes them on the target node (handler.cpp). Messages and RDMA
// operations to one node process keep their order (the network's queues), so
// a Flush, Unlock or Complete answered or counted at the target means that
// every operation the origin sent before it is done there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rma/window.hpp"
#include "wire.hpp"

namespace mpc::rma {

// Whether ranks live in other node processes (a network runs).
bool network_up();
// Installs the message handler on the network (once; before any window
// reaches another node process).
void install_handler();
// Payload bytes a message may carry after its header.
size_t am_capacity();
// lazy: the message may wait for the next one to node, or the next poll
// (Network::rma_send): Puts and Accumulates, which nobody waits for until a
// synchronisation sends its own message.
void send_am(int node, const AmHeader& h, const Seg* segs, const void* data, size_t data_len,
             bool lazy = false);

// Origin side; target is a rank of w in another node process, inside an
// access epoch that allows the operation (checked by the caller).
int remote_put(Win* w, const Transfer& t, Request* request);
int remote_get(Win* w, void* origin, const Transfer& t, Request* request);
int remote_accumulate(Win* w, const Transfer& t, const Op& op, const Datatype& basic, void* result,
                      int result_count, Datatype* result_type, Request* request);
int remote_compare_and_swap(Win* w, const void* origin, const void* compare, void* result,
                            const Datatype& type, int target, MPI_Aint disp);
// Lock requests and their release: lock_remote sends the request (answered
// by Grant); unlock_remote sends Unlock (answered by Ack once the target
// released it: every operation before it is then done).
void lock_remote(Win* w, int target, bool exclusive);
void unlock_remote(Win* w, int target);
// Sends Flush when puts or accumulates went to target since the last one.
void flush_remote(Win* w, int target);
void post_remote(Win* w, int origin);
void complete_remote(Win* w, int target);

// Remembers that target has remote operations to complete (Win::touched).
void touch(Win* w, int target);

}  // namespace mpc::rma

namespace mpc::rma {

// An operation awaiting answers from another node process (a Get, a
// Get_accumulate, a compare-and-swap, or an RDMA transfer): where the answers'
// data goes, how much is still due, and the request to complete.
struct RemoteOp {
    Win* win = nullptr;
    int target = 0;
    void* buf = nullptr;  // answers' data: (buf, count, type) at their offsets
    size_t count = 0;
    Datatype* type = nullptr;  // holds a reference
    std::atomic<size_t> left{0};
    Request* request = nullptr;
    uint64_t scratch = 0;  // an RDMA atomic's old value
    uint64_t id = 0;
};

// The live operation named by id in an answer, or null.
RemoteOp* find_op(uint64_t id);
// All its answers are in: completes its request, releases it, and tells the
// origin (pending, doorbell).
void finish_op(RemoteOp* op);

}  // namespace mpc::rma
