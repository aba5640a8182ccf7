// A node process's part of an open file: the ranks of the file's group that
// live here (its members, whose File objects it can reach, so their buffers
// and descriptors are the node's), how the group spreads over node processes,
// the shared file pointer when this node hosts it, and the collective
// accesses in flight. Created by the first member to open, freed with the last.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "file.hpp"
#include "runtime/sync.hpp"

namespace mpc::io {

// Tags of the engine's messages on a file's private communicator (on its
// collective context, where the collectives' own tags stay below 2^30).
inline constexpr int kCollTagBase = 0x50000000;  // + (sequence mod 2^23) * 8 + kind
inline constexpr int kCollTagKinds = 8;
inline constexpr uint64_t kCollSequences = 1u << 23;
inline constexpr int kSfpRequestTag = 0x5f000000;
inline constexpr int kSfpReplyTagBase = 0x60000000;  // + (request number mod 2^24)

struct NodeColl;      // collective.hpp
struct PendingWrite;  // transfer.cpp
class SfpServer;      // shared_fp.cpp

struct NodeFile {
    // Identity: the private communicator's context and its world ranks.
    uint32_t context = 0;
    std::vector<int> world_ranks;

    std::vector<int> member_ranks;  // communicator ranks living here, ascending
    std::vector<File*> files;       // their files, by member index (set as they join)
    int num_nodes = 1;
    int node_index = 0;        // nodes are numbered by their lowest communicator rank
    std::vector<int> leaders;  // node index -> its lowest communicator rank
    std::vector<int> node_of;  // communicator rank -> node index
    int max_members = 1;       // the most ranks any node has

    // The shared file pointer, in etypes of the view: node 0 hosts it
    // (communicator rank 0 answers the other nodes' requests).
    std::atomic<int64_t> shared_fp{0};
    SfpServer* server = nullptr;

    std::mutex mutex;  // colls
    std::map<uint64_t, std::shared_ptr<NodeColl>> colls;

    // Blocking independent writes handed to the node's writer (transfer.hpp,
    // write_combined): the queue, and whether a member is writing.
    runtime::SpinLock writes_lock;
    std::vector<PendingWrite*> writes;
    bool writing = false;

    int members() const { return static_cast<int>(member_ranks.size()); }
    // Node-level messages go out and come in as the node's leader (member 0).
    File* leader() const { return files[0]; }
    bool hosts_shared_fp() const { return node_index == 0; }
};

// Adds f (its comm set up) to its node's NodeFile, creating it if f is the
// first member; sets f->node and f->member.
void node_join(File* f);
// Removes f from its NodeFile (the last member frees it).
void node_leave(File* f);

}  // namespace mpc::io
