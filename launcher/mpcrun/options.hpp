// mpcrun's command line (also as mpiexec and mpirun: the same program).
//
// Besides its own options, mpcrun takes the spellings scripts written for
// Open MPI's mpirun and MPICH's hydra use most (-np, --host, -hosts, -f,
// --hostfile, --map-by, --bind-to, -bind-to, -x, -genv, -genvall, -ppn,
// --oversubscribe, --tag-output, -prepend-rank, --output-filename, --timeout),
// each mapped onto what it means here (launcher/doc/mpcrun.py says how, and is
// also the source of --help and the man page). Parsing never looks at the
// environment; apply_environment() adds MPIEXEC_TIMEOUT.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mpc::launcher {

// How output lines of the ranks are marked (--tag-output, -prepend-rank) or
// where they go (--output-filename).
enum class OutputLabel { kNone, kTag, kRank };

struct Options {
    int ranks = 0;                     // -n / -np / -n=N (0: from -ppn and the nodes)
    int nodes = 0;                     // -N: nodes (0: one per host, or 1 without hosts)
    int per_node = 1;                  // -p: node processes per node
    int ranks_per_node = 0;            // -ppn (hydra): ranks per node
    int cores = 0;                     // -c: VPs per node process (0: automatic)
    std::vector<std::string> hosts;    // --hosts h1,h2 (a name may repeat)
    std::string hostfile;              // --hostfile FILE
    std::string bind;                  // --bind core|none (empty: the runtime's default)
    std::string map;                   // --map block|cyclic (empty: block)
    std::string progress;              // --progress=wait|collaborative|thread
    std::string progress_thread;       // poll|block, from --progress=thread-poll|thread-block
    std::string net;                   // --net=auto|tcp|ofi|verbs
    bool stats = false;                // --stats
    bool shared_globals = false;       // --shared-globals: one image for all ranks
    double timeout = 0;                // --timeout S (0: none)
    // --memory-alloc-kinds LIST (MPI 4.1's memory allocation kinds asked for;
    // empty is a request too: no kind).
    std::optional<std::string> memory_alloc_kinds;
    std::string initial_errhandler;    // --initial-errhandler mpi_errors_{are_fatal,abort,return}
    std::vector<std::string> env;      // -x VAR or -x VAR=VALUE, -genv VAR VALUE
    bool env_all = false;              // -genvall: every variable to remote hosts too
    OutputLabel label = OutputLabel::kNone;  // --tag-output, -prepend-rank
    std::string output_dir;                  // --output-filename DIR
    std::vector<std::string> program;  // program and its arguments
    bool help = false;
    bool version = false;
    bool info = false;  // --info
};

// Parses argv; on error returns false with a message in *error. argv[0]
// names the program in messages (mpcrun, mpiexec or mpirun).
bool parse_options(int argc, const char* const* argv, Options* out, std::string* error);

// What the environment adds to the options: MPIEXEC_TIMEOUT (seconds) when
// --timeout was not given. False with *error on a malformed value.
bool apply_environment(const std::function<const char*(const char*)>& env, Options* o,
                       std::string* error);

// The usage text (--help and usage errors), generated from launcher/doc.
const char* usage();

}  // namespace mpc::launcher
