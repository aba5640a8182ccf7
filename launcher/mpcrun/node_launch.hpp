// mpcrun/node_launch: fork and exec of one node process.
//
// The child runs in its own process group (mpcrun signals the group, so what
// the program starts goes too), dies with mpcrun (PR_SET_PDEATHSIG), has the
// default disposition for every signal, and writes to pipes that mpcrun reads.
// Nothing here waits for or kills processes.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace mpc::launcher {

struct LaunchResult {
    pid_t pid = -1;
    int stdin_fd = -1;   // write end of the child's stdin (with_stdin), non-blocking
    int stdout_fd = -1;  // read ends of the child's stdout and stderr, non-blocking
    int stderr_fd = -1;
};

// Starts program (searched in PATH) with mpcrun's environment plus vars (a
// later entry of a name wins), keeping keep_fd open across exec. Without
// with_stdin the child reads /dev/null. pid < 0 and *error on failure.
LaunchResult launch_node(const std::vector<std::string>& program,
                         const std::vector<std::pair<std::string, std::string>>& vars, int keep_fd,
                         bool with_stdin, std::string* error);

}  // namespace mpc::launcher
