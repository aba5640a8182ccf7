// mpcrun's command line.
#pragma once

#include <string>
#include <vector>

namespace mpc::launcher {

struct Options {
    int ranks = 0;                  // -n / -np / -n=N
    int nodes = 1;                  // -N: node processes
    int cores = 0;                  // -c: VPs per node process (0: automatic)
    std::string progress;           // --progress=wait|collaborative|thread
    std::string progress_thread;    // poll|block, from --progress=thread-poll|thread-block
    std::string net;                // --net=auto|ofi|verbs
    bool stats = false;             // --stats
    bool shared_globals = false;    // --shared-globals: one image for all ranks
    double timeout = 0;             // --timeout S (0: none)
    std::vector<std::string> env;   // -x VAR or -x VAR=VALUE
    std::vector<std::string> program;  // program and its arguments
    bool help = false;
    bool version = false;
};

// Parses argv; on error returns false with a message in *error.
bool parse_options(int argc, const char* const* argv, Options* out, std::string* error);

const char* usage();

}  // namespace mpc::launcher
