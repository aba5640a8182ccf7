#include "options.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <initializer_list>

namespace mpc::launcher {
namespace {

bool parse_count(const std::string& text, int* out) {
    if (text.empty() || text[0] == '-' || text[0] == '+' || text[0] == ' ') return false;
    char* end = nullptr;
    errno = 0;
    long v = strtol(text.c_str(), &end, 10);
    if (errno || *end || v < 1 || v > (1 << 22)) return false;
    *out = static_cast<int>(v);
    return true;
}

bool one_of(const std::string& v, std::initializer_list<const char*> words) {
    for (const char* w : words)
        if (v == w) return true;
    return false;
}

// An option: its spellings, whether it takes a value ("-o V", "-o=V"), and
// what it does; apply returns an error message, empty on success.
struct OptionSpec {
    const char* names[3];  // unused slots are null
    bool takes_value;
    std::string (*apply)(Options& o, const std::string& value);
};

const OptionSpec kOptions[] = {
    {{"-h", "--help"},
     false,
     [](Options& o, const std::string&) {
         o.help = true;
         return std::string();
     }},
    {{"--version"},
     false,
     [](Options& o, const std::string&) {
         o.version = true;
         return std::string();
     }},
    {{"--stats"},
     false,
     [](Options& o, const std::string&) {
         o.stats = true;
         return std::string();
     }},
    {{"--shared-globals"},
     false,
     [](Options& o, const std::string&) {
         o.shared_globals = true;
         return std::string();
     }},
    {{"-n", "-np", "--np"},
     true,
     [](Options& o, const std::string& v) {
         return parse_count(v, &o.ranks)
                    ? std::string()
                    : "invalid number of ranks '" + v + "' (expected an integer >= 1)";
     }},
    {{"-N"},
     true,
     [](Options& o, const std::string& v) {
         return parse_count(v, &o.nodes)
                    ? std::string()
                    : "invalid number of nodes '" + v + "' (expected an integer >= 1)";
     }},
    {{"-p"},
     true,
     [](Options& o, const std::string& v) {
         return parse_count(v, &o.per_node) ? std::string()
                                            : "invalid number of node processes per node '" + v +
                                                  "' (expected an integer >= 1)";
     }},
    {{"--hosts", "-H", "--host"},
     true,
     [](Options& o, const std::string& v) {
         size_t pos = 0;
         while (pos <= v.size()) {
             size_t end = std::min(v.find(',', pos), v.size());
             std::string host = v.substr(pos, end - pos);
             if (host.empty() || host.find_first_of(" \t'\"") != std::string::npos)
                 return "invalid host list '" + v + "' (expected names separated by commas)";
             o.hosts.push_back(host);
             pos = end + 1;
         }
         return std::string();
     }},
    {{"--hostfile", "--machinefile"},
     true,
     [](Options& o, const std::string& v) {
         if (v.empty()) return std::string("invalid host file '' (expected a file name)");
         o.hostfile = v;
         return std::string();
     }},
    {{"--bind"},
     true,
     [](Options& o, const std::string& v) {
         if (!one_of(v, {"core", "none"}))
             return "invalid binding '" + v + "' (expected core or none)";
         o.bind = v;
         return std::string();
     }},
    {{"--map"},
     true,
     [](Options& o, const std::string& v) {
         if (!one_of(v, {"block", "cyclic"}))
             return "invalid rank mapping '" + v + "' (expected block or cyclic)";
         o.map = v;
         return std::string();
     }},
    {{"-c"},
     true,
     [](Options& o, const std::string& v) {
         return parse_count(v, &o.cores)
                    ? std::string()
                    : "invalid number of cores '" + v + "' (expected an integer >= 1)";
     }},
    {{"--progress"},
     true,
     [](Options& o, const std::string& v) {
         // thread-poll and thread-block name the progress thread's way of
         // waiting too, so a benchmark matrix is one option per run.
         if (one_of(v, {"thread-poll", "thread-block"})) {
             o.progress = "thread";
             o.progress_thread = v.substr(7);
             return std::string();
         }
         if (!one_of(v, {"wait", "collaborative", "thread"}))
             return "invalid progress mode '" + v +
                    "' (expected wait, collaborative, thread, thread-poll or thread-block)";
         o.progress = v;
         o.progress_thread.clear();
         return std::string();
     }},
    {{"--net"},
     true,
     [](Options& o, const std::string& v) {
         if (!one_of(v, {"auto", "tcp", "ofi", "verbs"}))
             return "invalid network '" + v + "' (expected auto, tcp, ofi or verbs)";
         o.net = v;
         return std::string();
     }},
    {{"--timeout"},
     true,
     [](Options& o, const std::string& v) {
         char* end = nullptr;
         double t = strtod(v.c_str(), &end);
         if (v.empty() || *end || !std::isfinite(t) || t <= 0)
             return "invalid timeout '" + v + "' (expected seconds > 0)";
         o.timeout = t;
         return std::string();
     }},
    {{"-x"},
     true,
     [](Options& o, const std::string& v) {
         if (v.empty() || v[0] == '=')
             return "invalid -x argument '" + v + "' (expected VAR or VAR=VALUE)";
         o.env.push_back(v);
         return std::string();
     }},
};

}  // namespace

const char* usage() {
    return "usage: mpcrun -n RANKS [-N NODES] [-p PER_NODE] [-c CORES]\n"
           "              [--hosts H1,H2,... | --hostfile FILE]\n"
           "              [--bind core|none] [--map block|cyclic]\n"
           "              [--progress=wait|collaborative|thread|thread-poll|thread-block]\n"
           "              [--net=auto|tcp|ofi|verbs] [--stats] [--shared-globals]\n"
           "              [--timeout SECONDS] [-x VAR[=VALUE]]\n"
           "              program [args...]\n"
           "  -n, -np N, -n=N   number of MPI ranks (required, >= 1)\n"
           "  -N K              nodes (default: 1 on this host alone; every host given, or\n"
           "                    every node of the Slurm allocation); -N K takes the first K\n"
           "  -p K              node processes per node (default 1)\n"
           "  -c K              cores (virtual processors) per node process\n"
           "  --hosts H1,H2     start node processes on these hosts through ssh ($MPC_SSH,\n"
           "                    default ssh); a host named twice counts as two nodes\n"
           "  --hostfile FILE   the same, one host per line (# comments)\n"
           "  --bind core|none  bind virtual processors to cores (default core)\n"
           "  --map block|cyclic  ranks over node processes: contiguous blocks (default)\n"
           "                    or dealt out one by one\n"
           "  --progress=MODE   who progresses communication (default collaborative);\n"
           "                    thread-poll / thread-block: thread, with the progress thread\n"
           "                    polling or blocking (MPC_PROGRESS_THREAD=poll|block)\n"
           "  --net=NET         network driver between node processes (default auto)\n"
           "  --stats           print per-rank and per-function statistics at the end\n"
           "  --shared-globals  load the program once for all ranks of a node process\n"
           "                    (globals shared, as in plain threads; MPC_SHARED_GLOBALS=1)\n"
           "  --timeout S       end the job after S seconds (exit status 124); the node\n"
           "                    processes first print what each rank waits for\n"
           "  -x VAR[=VALUE]    pass an environment variable to the ranks\n"
           "  -h, --help        this text\n";
}

bool parse_options(int argc, const char* const* argv, Options* out, std::string* error) {
    Options o;
    int i = 1;
    for (; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.empty() || arg[0] != '-') break;  // the program
        if (arg == "--") {
            ++i;
            break;
        }
        const OptionSpec* spec = nullptr;
        std::string name, value;
        bool inline_value = false;
        for (const OptionSpec& s : kOptions) {
            for (const char* n : s.names) {
                if (!n) break;
                const std::string candidate = n;
                if (arg == candidate || arg.rfind(candidate + "=", 0) == 0) {
                    spec = &s;
                    name = candidate;
                    inline_value = arg.size() > candidate.size();
                    if (inline_value) value = arg.substr(candidate.size() + 1);
                }
            }
        }
        if (!spec) {
            *error = "unknown option '" + arg + "'";
            return false;
        }
        if (!spec->takes_value && inline_value) {
            *error = "option " + name + " takes no value";
            return false;
        }
        if (spec->takes_value && !inline_value) {
            if (i + 1 >= argc) {
                *error = "option " + name + " needs a value";
                return false;
            }
            value = argv[++i];
        }
        std::string problem = spec->apply(o, value);
        if (!problem.empty()) {
            *error = problem;
            return false;
        }
        if (o.help || o.version) {
            *out = o;
            return true;
        }
    }
    for (; i < argc; ++i) o.program.push_back(argv[i]);
    if (o.program.empty()) {
        *error = "no program to run";
        return false;
    }
    if (o.ranks == 0) {
        *error = "the number of ranks is missing (-n N)";
        return false;
    }
    if (!o.hosts.empty() && !o.hostfile.empty()) {
        *error = "--hosts and --hostfile exclude each other";
        return false;
    }
    // With hosts or Slurm the node count is known later (JobPlan checks again).
    const long node_procs = static_cast<long>(std::max(o.nodes, 1)) * o.per_node;
    if (node_procs > o.ranks) {
        *error = "more node processes (" +
                 (o.per_node > 1 ? std::to_string(std::max(o.nodes, 1)) + " nodes x -p " +
                                       std::to_string(o.per_node)
                                 : "-N " + std::to_string(std::max(o.nodes, 1))) +
                 ") than ranks (-n " + std::to_string(o.ranks) + ")";
        return false;
    }
    *out = o;
    return true;
}

}  // namespace mpc::launcher
