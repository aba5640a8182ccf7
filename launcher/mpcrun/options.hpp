// mpcrun's command line.
#pragma once

#include <string>
#include <vector>

namespace mpc::launcher {

struct Options {
    int ranks = 0;                     // -n / -np / -n=N
    int nodes = 0;                     // -N: nodes (0: one per host, or 1 without hosts)
    int per_node = 1;                  // -p: node processes per node
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
    std::vector<std::string> env;      // -x VAR or -x VAR=VALUE
    std::vector<std::string> program;  // program and its arguments
    bool help = false;
    bool version = false;
};

// Parses argv; on error returns false with a message in *error.
bool parse_options(int argc, const char* const* argv, Options* out, std::string* error);

const char* usage();

}  // namespace mpc::launcher
