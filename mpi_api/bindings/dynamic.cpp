// Process creation and management (MPI 4.1 chapter 11), as far as a job
// whose ranks are fixed at launch goes:
// - MPI_Comm_spawn(_multiple) check their arguments and fail with
//   MPI_ERR_SPAWN: no rank can be added to a running job.
// - Ports (MPI_Open_port, MPI_Comm_accept, MPI_Comm_connect, MPI_Close_port)
//   join two groups of ranks of this job into an intercommunicator. A port
//   name says which world rank opened it and its number there. The
//   connecting root tells the port's owner its world rank (a message on the
//   world's collective context, internal tag); then both groups run
//   MPI_Intercomm_create's protocol over the world communicator, their roots
//   as leaders, with a tag made from the port (in the internal range, above
//   what MPI_Comm_create_from_group takes; a program's own
//   MPI_Intercomm_create over MPI_COMM_WORLD with such a tag at the same
//   moment between the same ranks could meet it).
// - Names (MPI_Publish_name, MPI_Lookup_name, MPI_Unpublish_name) go to the
//   launcher's name service (process.hpp's NameService: PMI-2 name-publish
//   and friends, which mpcrun and hydra serve), for the whole job.
// - MPI_Comm_join: both ends write their world rank and the job's token
//   (World::job_token, rank.hpp) into the socket; two ranks of this job then make an
//   intercommunicator over the world communicator, as above. A process of
//   another job is refused. The socket is read only when poll says so, the
//   caller's VP running its other ranks meanwhile.
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "mpi_api/comm_ops.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/internal_coll.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/process.hpp"
#include "mpi_api/rank.hpp"
#include "object_checks.hpp"
#include "scheduler/scheduler.hpp"

using namespace mpc::mpi;

namespace {

// ---- Ports -------------------------------------------------------------------------

constexpr char kPortPrefix[] = "fibermpi-port:";
// Port numbers stay below this, so that their tags (below) fit.
constexpr int kMaxPorts = 1 << 20;
// Tags of a port's messages on the world's collective context, within the
// internal range (internal_coll.hpp): the hello, and MPI_Intercomm_create's.
int hello_tag(int port) { return kInternalTagBase | (0x3f000000 + 2 * port); }
int join_tag(int port) { return 0x3f000000 + 2 * port + 1; }

// Ports open in this node process: (owner's world rank, number).
std::mutex g_ports_lock;
std::set<std::pair<int, int>> g_open_ports;
std::map<int, int> g_next_port;  // world rank -> its next port number

bool parse_port(const char* name, int* owner, int* number) {
    if (!name || strncmp(name, kPortPrefix, sizeof(kPortPrefix) - 1) != 0) return false;
    char tail = 0;
    return sscanf(name + sizeof(kPortPrefix) - 1, "%d:%d%c", owner, number, &tail) == 2 &&
           *owner >= 0 && *owner < world().size && *number >= 0 && *number < kMaxPorts;
}

bool port_open(int owner, int number) {
    std::lock_guard<std::mutex> g(g_ports_lock);
    return g_open_ports.count({owner, number}) != 0;
}

Datatype* int_type() { return datatype_lookup(MPI_INT); }

// What the root tells the others of comm before the groups meet: an error
// (the same for all), else the port's number and, for accept, the other
// root's world rank.
struct RootSays {
    int error = MPI_SUCCESS;
    int port = 0;
    int peer = 0;
};

// The checks of a call collective over comm with a root: an
// intracommunicator, somewhere to put the new communicator, a root in range.
// Returns the error as raised (through comm's handler), or MPI_SUCCESS.
int check_rooted(MPI_Comm comm, int root, const void* out, const char* out_name, Comm** c) {
    if (int e = check_comm(comm, c)) return raise(nullptr, e);
    MPC_TRY(*c, check_intra(*c));
    MPC_TRY(*c, check_not_null(out, out_name));
    if (root < 0 || root >= (*c)->size)
        return raise(*c, make_error(MPI_ERR_ROOT, "root %d: the communicator has %d ranks", root,
                                    (*c)->size));
    return MPI_SUCCESS;
}

// What MPI_Comm_spawn(_multiple) end with, on every member.
int spawn_refused(Comm* c, const char* call) {
    return raise(c, make_error(MPI_ERR_SPAWN,
                               "%s: fibermpi cannot add processes to a running job (its ranks "
                               "are fixed at launch; start them all with mpcrun -n)",
                               call));
}

// Accept (accepting) or connect: the root checks the port and finds the
// other root; then every member joins MPI_Intercomm_create's protocol.
int meet(RankState* me, const char* port_name, MPI_Info info, int root, MPI_Comm comm,
         MPI_Comm* newcomm, bool accepting) {
    Comm* c = nullptr;
    Info* i = nullptr;
    if (int e = check_rooted(comm, root, newcomm, "newcomm", &c)) return e;
    RootSays says;
    if (c->rank == root) {
        int owner = 0;
        if (int e = check_info_arg(info, &i)) {
            says.error = e;
        } else if (!parse_port(port_name, &owner, &says.port)) {
            says.error = make_error(MPI_ERR_PORT, "'%s' is not a port name of this job",
                                    port_name ? port_name : "(null)");
        } else if (accepting && (owner != me->world_rank || !port_open(owner, says.port))) {
            says.error = make_error(MPI_ERR_PORT,
                                    "port '%s' is not open on this rank (MPI_Open_port, "
                                    "here, before MPI_Comm_accept)",
                                    port_name);
        } else if (!accepting && owner == me->world_rank) {
            says.error = make_error(MPI_ERR_PORT,
                                    "port '%s' is this rank's own: a group cannot connect to "
                                    "itself",
                                    port_name);
        } else if (accepting) {
            // The first connecting root that asks, from anywhere in the job.
            coll_recv(&me->world, &says.peer, 1, int_type(), MPI_ANY_SOURCE, hello_tag(says.port));
        } else {
            says.peer = owner;
            coll_send(&me->world, &me->world_rank, 1, int_type(), owner, hello_tag(says.port));
        }
    }
    tree_bcast(Team::all(c), &says, sizeof(says), root, next_coll_tag(c));
    if (says.error != MPI_SUCCESS) return raise(c, says.error);
    Comm* n = nullptr;
    MPC_TRY(c, intercomm_create(c, root, &me->world, says.peer, join_tag(says.port), &n));
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

// ---- Join --------------------------------------------------------------------------

// What each end of MPI_Comm_join's socket writes.
struct JoinHello {
    char magic[8];
    uint64_t token;
    int32_t world_rank;
    int32_t world_size;
};
constexpr char kJoinMagic[8] = {'f', 'i', 'b', 'e', 'r', 'm', 'p', 'i'};

// Waits until fd is readable or writable (`events`), letting the other tasks
// of the caller's virtual processor run meanwhile: the rank at the other end
// may be one of them, and a blocking read would keep it from writing.
bool ready(int fd, short events) {
    for (;;) {
        pollfd p{fd, events, 0};
        const int n = poll(&p, 1, mpc::sched::others_runnable() ? 0 : 1);
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return false;
        mpc::sched::yield();
    }
}

// All of len bytes written (`out`) or read, or false (the socket closed or failed).
bool transfer(int fd, void* p, size_t len, bool out) {
    char* b = static_cast<char*>(p);
    while (len > 0) {
        if (!ready(fd, out ? POLLOUT : POLLIN)) return false;
        const ssize_t n = out ? write(fd, b, len) : read(fd, b, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        b += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

// No host set a name service (a program outside mpcrun's runtime).
int no_service(int cls) {
    return make_error(cls, "no name service: MPI_Publish_name needs the host's bootstrap");
}

}  // namespace

extern "C" {

int PMPI_Comm_spawn(const char* command, char* argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm* intercomm, int array_of_errcodes[]) {
    MPC_ENTER_ACTIVE(Comm_spawn);
    (void)argv;
    Comm* c = nullptr;
    Info* i = nullptr;
    if (int e = check_rooted(comm, root, intercomm, "intercomm", &c)) return e;
    if (c->rank == root) {
        MPC_TRY(c, check_not_null(command, "command"));
        MPC_TRY(c, check_info_arg(info, &i));
        if (maxprocs <= 0)
            return raise(c, make_error(MPI_ERR_ARG, "maxprocs %d: must be positive", maxprocs));
    }
    *intercomm = MPI_COMM_NULL;
    if (array_of_errcodes && c->rank == root)
        for (int k = 0; k < maxprocs; ++k) array_of_errcodes[k] = MPI_ERR_SPAWN;
    return spawn_refused(c, "MPI_Comm_spawn");
}

int PMPI_Comm_spawn_multiple(int count, char* array_of_commands[], char** array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm* intercomm,
                             int array_of_errcodes[]) {
    MPC_ENTER_ACTIVE(Comm_spawn_multiple);
    (void)array_of_argv;
    Comm* c = nullptr;
    if (int e = check_rooted(comm, root, intercomm, "intercomm", &c)) return e;
    int total = 0;
    if (c->rank == root) {
        if (count <= 0) return raise(c, make_error(MPI_ERR_ARG, "count %d: must be positive", count));
        MPC_TRY(c, check_not_null(array_of_commands, "array_of_commands"));
        MPC_TRY(c, check_not_null(array_of_maxprocs, "array_of_maxprocs"));
        MPC_TRY(c, check_not_null(array_of_info, "array_of_info"));
        for (int k = 0; k < count; ++k) {
            Info* i = nullptr;
            MPC_TRY(c, check_not_null(array_of_commands[k], "a command"));
            MPC_TRY(c, check_info_arg(array_of_info[k], &i));
            if (array_of_maxprocs[k] <= 0)
                return raise(c, make_error(MPI_ERR_ARG, "array_of_maxprocs[%d] = %d: must be "
                                                        "positive",
                                           k, array_of_maxprocs[k]));
            total += array_of_maxprocs[k];
        }
    }
    *intercomm = MPI_COMM_NULL;
    if (array_of_errcodes)
        for (int k = 0; k < total; ++k) array_of_errcodes[k] = MPI_ERR_SPAWN;
    return spawn_refused(c, "MPI_Comm_spawn_multiple");
}

int PMPI_Open_port(MPI_Info info, char* port_name) {
    MPC_ENTER_ACTIVE(Open_port);
    Info* i = nullptr;
    if (int e = check_info_arg(info, &i)) return raise(nullptr, e);
    if (int e = check_not_null(port_name, "port_name")) return raise(nullptr, e);
    int number;
    {
        std::lock_guard<std::mutex> g(g_ports_lock);
        number = g_next_port[me->world_rank]++;
        if (number >= kMaxPorts)
            return raise(nullptr, make_error(MPI_ERR_INTERN, "this rank opened %d ports already",
                                             kMaxPorts));
        g_open_ports.insert({me->world_rank, number});
    }
    snprintf(port_name, MPI_MAX_PORT_NAME, "%s%d:%d", kPortPrefix, me->world_rank, number);
    return MPI_SUCCESS;
}

int PMPI_Close_port(const char* port_name) {
    MPC_ENTER_ACTIVE(Close_port);
    int owner = 0, number = 0;
    if (!parse_port(port_name, &owner, &number) || owner != me->world_rank)
        return raise(nullptr, make_error(MPI_ERR_PORT, "'%s' is no port this rank opened",
                                         port_name ? port_name : "(null)"));
    std::lock_guard<std::mutex> g(g_ports_lock);
    if (g_open_ports.erase({owner, number}) == 0)
        return raise(nullptr, make_error(MPI_ERR_PORT, "port '%s' is closed already", port_name));
    return MPI_SUCCESS;
}

int PMPI_Comm_accept(const char* port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm* newcomm) {
    MPC_ENTER_ACTIVE(Comm_accept);
    return meet(me, port_name, info, root, comm, newcomm, true);
}

int PMPI_Comm_connect(const char* port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm* newcomm) {
    MPC_ENTER_ACTIVE(Comm_connect);
    return meet(me, port_name, info, root, comm, newcomm, false);
}

int PMPI_Publish_name(const char* service_name, MPI_Info info, const char* port_name) {
    MPC_ENTER_ACTIVE(Publish_name);
    Info* i = nullptr;
    if (int e = check_info_arg(info, &i)) return raise(nullptr, e);
    if (!service_name || !*service_name)
        return raise(nullptr, make_error(MPI_ERR_SERVICE, "an empty service name"));
    if (!port_name) return raise(nullptr, make_error(MPI_ERR_PORT, "port_name is NULL"));
    const NameService* names = name_service();
    if (!names) return raise(nullptr, no_service(MPI_ERR_SERVICE));
    std::string error;
    if (!names->publish(service_name, port_name, &error))
        return raise(nullptr, make_error(MPI_ERR_SERVICE, "publishing service '%s': %s",
                                         service_name, error.c_str()));
    return MPI_SUCCESS;
}

int PMPI_Unpublish_name(const char* service_name, MPI_Info info, const char* port_name) {
    MPC_ENTER_ACTIVE(Unpublish_name);
    Info* i = nullptr;
    if (int e = check_info_arg(info, &i)) return raise(nullptr, e);
    if (!service_name || !port_name)
        return raise(nullptr, make_error(MPI_ERR_SERVICE, "service_name or port_name is NULL"));
    const NameService* names = name_service();
    if (!names) return raise(nullptr, no_service(MPI_ERR_SERVICE));
    std::string error;
    if (!names->unpublish(service_name, &error))
        return raise(nullptr, make_error(MPI_ERR_SERVICE, "unpublishing service '%s': %s",
                                         service_name, error.c_str()));
    return MPI_SUCCESS;
}

int PMPI_Lookup_name(const char* service_name, MPI_Info info, char* port_name) {
    MPC_ENTER_ACTIVE(Lookup_name);
    Info* i = nullptr;
    if (int e = check_info_arg(info, &i)) return raise(nullptr, e);
    if (int e = check_not_null(port_name, "port_name")) return raise(nullptr, e);
    if (!service_name) return raise(nullptr, make_error(MPI_ERR_NAME, "service_name is NULL"));
    const NameService* names = name_service();
    if (!names) return raise(nullptr, no_service(MPI_ERR_NAME));
    std::string port, error;
    bool found = false;
    if (!names->lookup(service_name, &port, &found, &error))
        return raise(nullptr, make_error(MPI_ERR_NAME, "looking up service '%s': %s",
                                         service_name, error.c_str()));
    if (!found)
        return raise(nullptr, make_error(MPI_ERR_NAME, "service '%s' is not published",
                                         service_name));
    snprintf(port_name, MPI_MAX_PORT_NAME, "%s", port.c_str());
    return MPI_SUCCESS;
}

int PMPI_Comm_join(int fd, MPI_Comm* intercomm) {
    MPC_ENTER_ACTIVE(Comm_join);
    if (int e = check_not_null(intercomm, "intercomm")) return raise(nullptr, e);
    *intercomm = MPI_COMM_NULL;
    JoinHello mine{}, theirs{};
    errno = 0;
    memcpy(mine.magic, kJoinMagic, sizeof(kJoinMagic));
    mine.token = world().job_token;
    mine.world_rank = me->world_rank;
    mine.world_size = world().size;
    if (!transfer(fd, &mine, sizeof(mine), true) || !transfer(fd, &theirs, sizeof(theirs), false))
        return raise(nullptr, make_error(MPI_ERR_ARG, "MPI_Comm_join: socket %d: %s", fd,
                                         errno ? strerror(errno) : "closed by the other end"));
    if (memcmp(theirs.magic, kJoinMagic, sizeof(kJoinMagic)) != 0 ||
        theirs.token != mine.token || theirs.world_size != mine.world_size ||
        theirs.world_rank < 0 || theirs.world_rank >= mine.world_size ||
        theirs.world_rank == mine.world_rank)
        return raise(nullptr, make_error(MPI_ERR_OTHER,
                                         "MPI_Comm_join: the process at the other end of socket "
                                         "%d is not another rank of this job (fibermpi joins "
                                         "ranks of one job only)",
                                         fd));
    // One join at a time between two ranks: a tag of the pair.
    const int lo = std::min(mine.world_rank, theirs.world_rank);
    const int tag = 0x3e000000 + lo % (1 << 24);
    Comm* n = nullptr;
    MPC_TRY(&me->self, intercomm_create(&me->self, 0, &me->world, theirs.world_rank, tag, &n));
    *intercomm = n->handle;
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Comm_spawn)
MPC_WEAK(MPI_Comm_spawn_multiple)
MPC_WEAK(MPI_Open_port)
MPC_WEAK(MPI_Close_port)
MPC_WEAK(MPI_Comm_accept)
MPC_WEAK(MPI_Comm_connect)
MPC_WEAK(MPI_Publish_name)
MPC_WEAK(MPI_Unpublish_name)
MPC_WEAK(MPI_Lookup_name)
MPC_WEAK(MPI_Comm_join)
